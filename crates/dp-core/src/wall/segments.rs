//! Segment releases: a fast path of the wall for a single large block to which each record
//! contributes a few disjoint runs of entries (LDA's per-document `V x K` statistic: one run of
//! `K` topic weights per distinct word of the document, 003 Sec. 4).
//!
//! The general path ([`PrivacyWall::release`] with [`super::ContributionBuffer::push`]) pays, per
//! entry, a bounds check, a "touched" mark, two passes for the scaled norm and a scattered drain.
//! Here a record writes whole runs ([`SegmentBuffer::segment`]) into one compact array; the
//! Frobenius norm is one pass over that array; clipping scales the runs as they are added into a
//! per-worker dense sum (contiguous adds); the noise is added once per release, as in
//! [`PrivacyWall::release`], whose sampling, budget check, noise, normalisation, ledger event
//! and notes this path shares.

use rayon::prelude::*;

use super::spec::{BlockShape, ReleaseSpec};
use super::{PrivacyWall, Release, ReleasedBlock};
use crate::clip::clip_scale;
use crate::error::CoreError;

/// Records per chunk; chunks are summed in index order, so the result does not depend on the
/// number of threads (as in the general path).
const CHUNK: usize = 64;

/// Where a per-record statistic writes its contribution to a segment release: disjoint runs of
/// the release's single block, in increasing order of position.
///
/// Invalid writes (a run outside the block, a run starting before the previous one ended, a
/// non-finite value) do not panic: they make the whole release fail with
/// [`CoreError::InvalidContribution`] before anything is released.
///
/// # Example
/// ```
/// use dp_core::wall::segments::SegmentBuffer;
/// let mut buf = SegmentBuffer::new(1000);
/// buf.push_segment(10, &[0.6, 0.8]);
/// buf.segment(500, 3).copy_from_slice(&[1.0, 0.0, 0.0]);
/// assert_eq!(buf.num_segments(), 2);
/// assert!((buf.norm().unwrap() - 2f64.sqrt()).abs() < 1e-15);
/// ```
#[derive(Debug, Clone)]
pub struct SegmentBuffer {
    block_len: usize,
    starts: Vec<usize>,
    lens: Vec<usize>,
    values: Vec<f64>,
    next_free: usize,
    error: Option<String>,
}

impl SegmentBuffer {
    /// An empty buffer for a block of `block_len` entries.
    pub fn new(block_len: usize) -> Self {
        Self {
            block_len,
            starts: Vec::new(),
            lens: Vec::new(),
            values: Vec::new(),
            next_free: 0,
            error: None,
        }
    }

    /// Length of the block the runs index into.
    pub fn block_len(&self) -> usize {
        self.block_len
    }

    /// Number of runs written for the current record.
    pub fn num_segments(&self) -> usize {
        self.starts.len()
    }

    /// Appends a run of `len` entries starting at `start` and returns it, zeroed, to be filled.
    ///
    /// Runs must not overlap and must come in increasing order (`start` at or after the end of
    /// the previous run) and lie inside the block; otherwise the release fails (the returned
    /// slice is still valid scratch, so the caller need not check).
    pub fn segment(&mut self, start: usize, len: usize) -> &mut [f64] {
        let end = start.checked_add(len);
        match end {
            Some(end) if start >= self.next_free && end <= self.block_len => {
                self.next_free = end;
            }
            _ => {
                if self.error.is_none() {
                    self.error = Some(format!(
                        "run {start}..{start}+{len} is outside the block of {} entries or starts \
                         before the previous run ended (at {})",
                        self.block_len, self.next_free
                    ));
                }
            }
        }
        let offset = self.values.len();
        self.starts.push(start);
        self.lens.push(len);
        self.values.resize(offset + len, 0.0);
        &mut self.values[offset..]
    }

    /// Appends a run with the given values (see [`Self::segment`]).
    pub fn push_segment(&mut self, start: usize, values: &[f64]) {
        self.segment(start, values.len()).copy_from_slice(values);
    }

    /// The L2 (Frobenius) norm of the current record: one pass over the written values, with a
    /// rescaled second pass only if the sum of squares overflows. `None` if a value is not
    /// finite.
    pub fn norm(&self) -> Option<f64> {
        let mut squares = [0.0f64; 4];
        let chunks = self.values.chunks_exact(4);
        let tail: f64 = chunks.remainder().iter().map(|v| v * v).sum();
        for c in chunks {
            for i in 0..4 {
                squares[i] += c[i] * c[i];
            }
        }
        let sum = (squares[0] + squares[1]) + (squares[2] + squares[3]) + tail;
        if sum.is_finite() {
            return Some(sum.sqrt());
        }
        if self.values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let max = self.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scaled: f64 = self.values.iter().map(|v| (v / max) * (v / max)).sum();
        Some(max * scaled.sqrt())
    }

    /// Clips the current record to `bound`, adds it into `sum` (a dense block) and clears the
    /// buffer. Returns whether the record was clipped.
    fn finish_into(&mut self, bound: f64, sum: &mut [f64]) -> Result<bool, String> {
        let result = match (self.error.take(), self.norm()) {
            (Some(reason), _) => Err(reason),
            (None, None) => Err("non-finite value written".to_string()),
            (None, Some(norm)) => {
                let scale = clip_scale(norm, bound);
                let mut offset = 0;
                for (&start, &len) in self.starts.iter().zip(&self.lens) {
                    let src = &self.values[offset..offset + len];
                    for (s, &v) in sum[start..start + len].iter_mut().zip(src) {
                        *s += scale * v;
                    }
                    offset += len;
                }
                Ok(scale < 1.0)
            }
        };
        self.clear();
        result
    }

    fn clear(&mut self) {
        self.starts.clear();
        self.lens.clear();
        self.values.clear();
        self.next_free = 0;
        self.error = None;
    }
}

/// One worker's reusable state.
struct Worker {
    buffer: SegmentBuffer,
    sum: Vec<f64>,
    clipped: u64,
}

impl Worker {
    fn run<R, F>(
        &mut self,
        records: &[R],
        indices: &[usize],
        bound: f64,
        statistic: &F,
    ) -> Result<(), String>
    where
        F: Fn(&R, &mut SegmentBuffer),
    {
        for &i in indices {
            statistic(&records[i], &mut self.buffer);
            if self.buffer.finish_into(bound, &mut self.sum)? {
                self.clipped += 1;
            }
        }
        Ok(())
    }
}

/// The clipped sum over `records[indices]` and the number of clipped records.
///
/// # Privacy
/// Each record's runs are scaled so that their joint L2 norm is at most `bound` before they are
/// added, and the runs of one record are disjoint, so adding or removing one record moves the sum
/// by at most `bound` in L2 norm.
fn clipped_segment_sum<R, F>(
    records: &[R],
    indices: &[usize],
    block_len: usize,
    bound: f64,
    statistic: &F,
) -> Result<(Vec<f64>, u64), String>
where
    R: Sync,
    F: Fn(&R, &mut SegmentBuffer) + Sync,
{
    let new_worker = || Worker {
        buffer: SegmentBuffer::new(block_len),
        sum: vec![0.0; block_len],
        clipped: 0,
    };
    let mut total = new_worker();
    if indices.len() <= CHUNK {
        total.run(records, indices, bound, statistic)?;
        return Ok((total.sum, total.clipped));
    }
    let chunks: Vec<&[usize]> = indices.chunks(CHUNK).collect();
    let threads = rayon::current_num_threads().max(1).min(chunks.len());
    let mut workers: Vec<Worker> = (0..threads).map(|_| new_worker()).collect();
    for wave in chunks.chunks(threads) {
        workers
            .par_iter_mut()
            .zip(wave.par_iter())
            .try_for_each(|(worker, chunk)| worker.run(records, chunk, bound, statistic))?;
        for worker in workers.iter_mut().take(wave.len()) {
            // Add and re-zero in one pass (no separate clearing pass).
            for (t, w) in total.sum.iter_mut().zip(worker.sum.iter_mut()) {
                *t += *w;
                *w = 0.0;
            }
            total.clipped += worker.clipped;
            worker.clipped = 0;
        }
    }
    Ok((total.sum, total.clipped))
}

impl<R> PrivacyWall<R> {
    /// [`Self::release`] for a spec with **one** vector or matrix block to which each record
    /// writes disjoint runs through a [`SegmentBuffer`]: the same sampling, budget check,
    /// per-record clipping to the block's bound, Gaussian noise, normalisation by the public
    /// expected batch size, ledger event and notes, with a cheaper per-record path.
    ///
    /// # Privacy
    /// As [`Self::release`]: the record's runs are clipped jointly (Frobenius norm over all runs)
    /// to the block's bound, so the clipped sum has add/remove sensitivity `bound` (`2 bound`
    /// under replace-one) and gets the same noise as the general path.
    ///
    /// # Errors
    /// [`CoreError::Misconfigured`] unless the spec has exactly one vector or matrix block;
    /// [`CoreError::BudgetExhausted`] if the release would exceed the budget;
    /// [`CoreError::InvalidContribution`] for a run outside the block, out of order, or a
    /// non-finite value. On every error nothing is released and the ledger is unchanged.
    ///
    /// # Example
    /// ```
    /// use dp_core::{BlockSpec, PrivacyWall, ReleaseSpec, SamplingScheme};
    /// // each record: a word id; contribution: a unit run of 2 entries at 2 * id
    /// let records: Vec<usize> = (0..500).map(|i| i % 7).collect();
    /// let mut wall = PrivacyWall::builder(records)
    ///     .sampling(SamplingScheme::poisson(0.2)?)
    ///     .epsilon_delta(1.0, 1e-5)
    ///     .calibrate_for_releases(5)
    ///     .build()?;
    /// let spec = ReleaseSpec::new(vec![BlockSpec::vector("counts", 14, 1.0)?])?;
    /// let release = wall.release_segments(&spec, |&w: &usize, buf| {
    ///     buf.push_segment(2 * w, &[0.6, 0.8]);
    /// })?;
    /// assert_eq!(release.blocks()[0].value.as_slice().len(), 14);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release_segments<F>(
        &mut self,
        spec: &ReleaseSpec,
        statistic: F,
    ) -> Result<Release, CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut SegmentBuffer) + Sync,
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
        self.check_budget()?;
        let n = self.records.len();
        self.scheme
            .sample_into(n, &mut self.sampling_rng, &mut self.batch)?;
        let summed = clipped_segment_sum(
            &self.records,
            &self.batch,
            block.stored_len(),
            block.bound(),
            &statistic,
        );
        self.batch.clear();
        let (mut sum, clipped) = summed.map_err(|reason| CoreError::InvalidContribution {
            block: block.name().to_string(),
            reason,
        })?;

        let factor = self.scheme.sensitivity_factor();
        let sigma = self.noise_multiplier();
        let rescaled = spec.rescaled_sensitivity() * factor;
        let expected = self.normaliser;
        let sum_std = sigma.map_or(0.0, |s| block.bound() * s * rescaled);
        let value = self.noised_value(block, &mut sum, sum_std, expected);
        let blocks = vec![ReleasedBlock {
            name: block.name().to_string(),
            value,
            bound: block.bound(),
            noise_std: sum_std / expected,
            sensitivity: factor * block.bound() / expected,
            projection: None,
        }];
        let mut notes = self.notes(spec, sigma, rescaled, &blocks);
        notes.insert(
            "contribution".into(),
            "disjoint runs per record (segment release), clipped jointly in L2 norm".into(),
        );
        let label = format!("release {}", self.releases);
        self.finish_release(label, notes, blocks, clipped, sigma)
    }
}
