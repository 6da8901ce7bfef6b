//! Compatibility shim for the former segment path: [`PrivacyWall::release_segments`] and
//! [`SegmentBuffer`], now thin wrappers over [`PrivacyWall::release`] and the run writes of
//! [`ContributionBuffer::segment`] (one pipeline).
// compat: removed once vips-models and dp-sep use handles

use super::spec::BlockShape;
use super::{ContributionBuffer, PrivacyWall, Release, ReleaseSpec};
use crate::error::CoreError;

/// Run writes into the single block of a segment release: a view of the record's
/// [`ContributionBuffer`] (see [`ContributionBuffer::segment`] for the rules).
#[doc(hidden)]
#[derive(Debug)]
pub struct SegmentBuffer<'a> {
    buf: &'a mut ContributionBuffer,
}

impl SegmentBuffer<'_> {
    /// Length of the block the runs index into.
    pub fn block_len(&self) -> usize {
        self.buf.block_len(0)
    }

    /// Appends a run of `len` entries starting at `start` and returns it, zeroed, to be filled
    /// (as [`ContributionBuffer::segment`] on the spec's only block).
    pub fn segment(&mut self, start: usize, len: usize) -> &mut [f64] {
        self.buf.segment_at(0, start, len)
    }

    /// Appends a run with the given values (see [`Self::segment`]).
    pub fn push_segment(&mut self, start: usize, values: &[f64]) {
        self.segment(start, values.len()).copy_from_slice(values);
    }
}

impl<R> PrivacyWall<R> {
    /// [`Self::release`] for a spec with one vector or matrix block written as runs.
    ///
    /// # Errors
    /// [`CoreError::Misconfigured`] unless the spec has exactly one vector or matrix block;
    /// otherwise as [`Self::release`].
    #[doc(hidden)]
    pub fn release_segments<F>(
        &mut self,
        spec: &ReleaseSpec,
        statistic: F,
    ) -> Result<Release, CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut SegmentBuffer<'_>) + Sync,
    {
        let [block] = spec.blocks() else {
            return Err(CoreError::Misconfigured(
                "a segment release needs exactly one block",
            ));
        };
        if matches!(block.shape(), BlockShape::Symmetric { .. }) {
            return Err(CoreError::Misconfigured(
                "a segment release needs a vector or matrix block",
            ));
        }
        self.release(spec, |record: &R, buf: &mut ContributionBuffer| {
            statistic(record, &mut SegmentBuffer { buf })
        })
    }
}
