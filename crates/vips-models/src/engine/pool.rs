//! A pool of per-thread E-step buffers.
//!
//! dp-core's wall calls the per-record statistic as `Fn(&R, &mut ContributionBuffer) + Sync` on
//! rayon's workers. A model's E-step needs mutable scratch too; the pool lends one per call
//! (a lock per record, negligible next to an E-step) and creates at most one per concurrent
//! caller, so the hot loop does not allocate after the first release.

use std::sync::Mutex;

/// Scratch buffers lent out one per concurrent call.
pub(crate) struct ScratchPool<S> {
    free: Mutex<Vec<S>>,
}

impl<S> ScratchPool<S> {
    pub(crate) fn new() -> Self {
        Self {
            free: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` with a buffer from the pool (or a fresh one from `make`), then returns it.
    pub(crate) fn with<T>(&self, make: impl FnOnce() -> S, f: impl FnOnce(&mut S) -> T) -> T {
        let taken = self.free.lock().map(|mut v| v.pop()).unwrap_or(None);
        let mut scratch = taken.unwrap_or_else(make);
        let out = f(&mut scratch);
        if let Ok(mut v) = self.free.lock() {
            v.push(scratch);
        }
        out
    }
}
