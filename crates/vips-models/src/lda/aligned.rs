//! A zeroed `f32` buffer that starts on a cache line, for the E-step's `exp(E[log beta])` rows.
//!
//! The E-step reads each word's row (`stride` = `K` rounded up to 8 lanes, 32 bytes per 8-lane
//! vector) with unaligned SIMD loads. From a buffer that starts 16 bytes past a 32-byte boundary
//! (where `malloc` puts a large block: a page plus its 16-byte header) every other load spans two
//! cache lines. Measured on this project's 2-core VM (docs/benchmarks.md, "Thread scaling",
//! session 17): such fits spent 13-16 % more CPU in the E-step, and since the buffer is
//! reallocated every iteration, a 2-thread fit fell into the slow or the fast layout by chance
//! (allocator state), which made its speed-up bimodal.

/// `len` zeros whose first entry sits on a 64-byte boundary; the values are those of a plain
/// `Vec<f32>` (only the address differs).
#[derive(Debug)]
pub(crate) struct CacheAlignedF32 {
    buf: Vec<f32>,
    start: usize,
    len: usize,
}

/// Bytes of the alignment (one cache line on x86-64 and most ARM cores).
const LINE: usize = 64;
/// `f32` lanes of padding that always leave room to reach the next boundary.
const PAD: usize = LINE / size_of::<f32>() - 1;

impl CacheAlignedF32 {
    /// `len` zeros from a 64-byte boundary.
    pub(crate) fn zeroed(len: usize) -> Self {
        let buf = vec![0.0f32; len + PAD];
        // A `Vec<f32>` is 4-byte aligned, so the boundary is at most `PAD` lanes ahead.
        let start = (LINE - buf.as_ptr().addr() % LINE) % LINE / size_of::<f32>();
        Self { buf, start, len }
    }

    pub(crate) fn as_slice(&self) -> &[f32] {
        &self.buf[self.start..self.start + self.len]
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [f32] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

impl Clone for CacheAlignedF32 {
    /// A copy in its own aligned buffer (a plain clone of the `Vec` could start elsewhere).
    fn clone(&self) -> Self {
        let mut copy = Self::zeroed(self.len);
        copy.as_mut_slice().copy_from_slice(self.as_slice());
        copy
    }
}

#[cfg(test)]
mod tests {
    use super::CacheAlignedF32;

    #[test]
    fn starts_on_a_cache_line_and_keeps_its_values() {
        for len in [0, 1, 7, 56, 1_000, 300_000] {
            let mut a = CacheAlignedF32::zeroed(len);
            assert_eq!(a.as_slice().len(), len);
            assert_eq!(a.as_slice().as_ptr().addr() % 64, 0, "len {len}");
            assert!(a.as_slice().iter().all(|&x| x == 0.0));
            for (i, x) in a.as_mut_slice().iter_mut().enumerate() {
                *x = i as f32;
            }
            let b = a.clone();
            assert_eq!(b.as_slice(), a.as_slice());
            assert_eq!(b.as_slice().as_ptr().addr() % 64, 0, "clone, len {len}");
        }
    }
}
