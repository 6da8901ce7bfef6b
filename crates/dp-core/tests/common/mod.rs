//! Helpers shared by the privacy-wall tests.

/// Runs `f` inside a fresh rayon pool of exactly `threads` threads, so a test can compare the
/// same release at different thread counts.
pub fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon thread pool")
        .install(f)
}
