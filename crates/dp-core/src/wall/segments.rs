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

use super::buffer::RecordOutcome;
use super::spec::{BlockShape, ReleaseSpec};
use super::{PrivacyWall, Release, ReleaseDiagnostics, ReleasedBlock, draw_noise, shape_value};
use crate::clip::clip_scale;
use crate::error::CoreError;

/// Records per task of the first (per-record, parallel) pass. Does not affect the result.
const RECORDS_PER_TASK: usize = 16;

/// Output entries per task of the second (scatter, parallel) pass: 256 KiB of `f64`, so a task's
/// part of the sum stays in cache while every record's runs are added into it. Does not affect
/// the result.
const ENTRIES_PER_SPAN: usize = 32 * 1024;

/// Most records whose runs are held at once; a larger batch is processed in groups of this many
/// records, in index order. Bounds the memory of the first pass; does not affect the result.
const RECORDS_PER_GROUP: usize = 1024;

/// Where a per-record statistic writes its contribution to a segment release: disjoint runs of
/// the release's single block, in increasing order of position.
///
/// Invalid writes (a run outside the block, a run starting before the previous one ended, a
/// non-finite value) do not panic. In a private release the record is replaced by zero (its
/// runs are dropped), counted in the release's non-private [`super::ReleaseDiagnostics`], and
/// the release goes ahead and is charged; in a non-private release they fail it with
/// [`CoreError::InvalidContribution`] (nothing released). Neither carries a value derived from
/// the record.
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
    /// Start of every run held (the sealed records' runs first, then the current record's).
    starts: Vec<usize>,
    /// Offset in `values` of every run held; a run ends where the next one begins.
    offsets: Vec<usize>,
    values: Vec<f64>,
    /// Index in `starts` of the current record's first run.
    record_first_run: usize,
    /// Offset in `values` of the current record's first value.
    record_first_value: usize,
    /// For each sealed record: one past the index of its last run.
    sealed_run_ends: Vec<usize>,
    next_free: usize,
    /// The current record's first invalid write (a fixed text, never a record-derived value).
    error: Option<&'static str>,
}

impl SegmentBuffer {
    /// An empty buffer for a block of `block_len` entries.
    pub fn new(block_len: usize) -> Self {
        Self {
            block_len,
            starts: Vec::new(),
            offsets: Vec::new(),
            values: Vec::new(),
            record_first_run: 0,
            record_first_value: 0,
            sealed_run_ends: Vec::new(),
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
        self.starts.len() - self.record_first_run
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
                    self.error =
                        Some("a run outside the block, or starting before the previous run ended");
                }
            }
        }
        let offset = self.values.len();
        self.starts.push(start);
        self.offsets.push(offset);
        self.values.resize(offset + len, 0.0);
        &mut self.values[offset..]
    }

    /// Appends a run with the given values (see [`Self::segment`]).
    pub fn push_segment(&mut self, start: usize, values: &[f64]) {
        self.segment(start, values.len()).copy_from_slice(values);
    }

    /// The current record's values (all its runs, in order).
    fn record_values(&self) -> &[f64] {
        &self.values[self.record_first_value..]
    }

    /// The L2 (Frobenius) norm of the current record: one pass over the written values, with a
    /// rescaled second pass only if the sum of squares overflows. `None` if a value is not
    /// finite.
    pub fn norm(&self) -> Option<f64> {
        let values = self.record_values();
        let mut squares = [0.0f64; 4];
        let chunks = values.chunks_exact(4);
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
        if values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let max = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scaled: f64 = values.iter().map(|v| (v / max) * (v / max)).sum();
        Some(max * scaled.sqrt())
    }

    /// Clips the current record to `bound` in place (its values multiplied by the clip scale,
    /// exactly the products the sum will add) and keeps it, sealed, for [`Self::add_sealed`];
    /// the next write starts a new record. Returns whether the record was clipped.
    ///
    /// # Privacy
    /// After the call the record's runs have joint L2 norm at most `bound` (the scale of
    /// [`clip_scale`], which shrinks by a margin below `bound / norm`).
    fn seal(&mut self, bound: f64) -> Result<bool, &'static str> {
        if let Some(reason) = self.error.take() {
            return Err(reason);
        }
        let norm = self.norm().ok_or("a non-finite value written")?;
        let scale = clip_scale(norm, bound);
        let first = self.record_first_value;
        if scale < 1.0 {
            self.values[first..].iter_mut().for_each(|v| *v *= scale);
        }
        self.sealed_run_ends.push(self.starts.len());
        self.record_first_run = self.starts.len();
        self.record_first_value = self.values.len();
        self.next_free = 0;
        Ok(scale < 1.0)
    }

    /// Seals the current record ([`Self::seal`]); a malformed or non-finite one is dropped
    /// instead (replaced by zero) when `replace_invalid`, else it is an error.
    fn seal_or_replace(
        &mut self,
        bound: f64,
        replace_invalid: bool,
    ) -> Result<RecordOutcome, &'static str> {
        match self.seal(bound) {
            Ok(true) => Ok(RecordOutcome::Clipped),
            Ok(false) => Ok(RecordOutcome::Added),
            Err(_) if replace_invalid => {
                self.drop_current();
                Ok(RecordOutcome::Replaced)
            }
            Err(reason) => Err(reason),
        }
    }

    /// Drops the current (unsealed) record's runs; the sealed records are kept.
    fn drop_current(&mut self) {
        self.starts.truncate(self.record_first_run);
        self.offsets.truncate(self.record_first_run);
        self.values.truncate(self.record_first_value);
        self.next_free = 0;
        self.error = None;
    }

    /// Forgets every record (sealed or not), keeping the capacity, for a block of `block_len`.
    fn reset(&mut self, block_len: usize) {
        self.block_len = block_len;
        self.starts.clear();
        self.offsets.clear();
        self.values.clear();
        self.record_first_run = 0;
        self.record_first_value = 0;
        self.sealed_run_ends.clear();
        self.next_free = 0;
        self.error = None;
    }

    /// Adds the sealed records' entries that fall in `lo..lo + out.len()` of the block into
    /// `out`, record by record in the order they were sealed (each record's runs are sorted and
    /// disjoint, so a binary search finds the first run that reaches into the span).
    fn add_sealed(&self, lo: usize, out: &mut [f64]) {
        let hi = lo + out.len();
        let mut first_run = 0;
        for &run_end in &self.sealed_run_ends {
            let starts = &self.starts[first_run..run_end];
            // Runs starting before `lo`; the last of them may still reach into the span.
            let mut r = starts.partition_point(|&s| s < lo).saturating_sub(1);
            while r < starts.len() && starts[r] < hi {
                let i = first_run + r;
                let offset = self.offsets[i];
                let end = self
                    .offsets
                    .get(i + 1)
                    .copied()
                    .unwrap_or(self.values.len());
                let (start, len) = (starts[r], end - offset);
                // The overlap of `start..start + len` with `lo..hi`.
                let from = start.max(lo);
                let to = (start + len).min(hi);
                if from < to {
                    let src = &self.values[offset + (from - start)..offset + (to - start)];
                    for (o, &v) in out[from - lo..to - lo].iter_mut().zip(src) {
                        *o += v;
                    }
                }
                r += 1;
            }
            first_run = run_end;
        }
    }
}

/// Reusable memory of the segment path, kept in the wall between releases: one
/// [`SegmentBuffer`] per first-pass task (holding that task's clipped records), the dense sum,
/// and the noise draws.
#[derive(Debug, Default)]
pub(super) struct SegmentScratch {
    tasks: Vec<SegmentBuffer>,
    pub(super) sum: Vec<f64>,
    pub(super) noise: Vec<f64>,
}

/// The clipped sum over `records[indices]` into `sum`, and the numbers of clipped records and of
/// records replaced by zero (malformed or non-finite, when `replace_invalid`; otherwise such a
/// record is an error).
///
/// With more than one thread, two parallel passes per group of records: (1) each task evaluates
/// the statistic on its records, clips each record in place and keeps its runs (in `tasks`);
/// (2) the block is cut into spans and each span task adds, for every record in index order, the
/// record's entries in that span. Each entry of the sum is therefore `((0 + c_1) + c_2) + ...`
/// over the records of the batch in index order, whatever the number of threads (bit-for-bit
/// reproducible from a seed, and equal to a plain sequential loop, which is what a one-thread
/// pool runs); nothing is reduced across workers and only touched entries are added.
///
/// # Privacy
/// Each record's runs are scaled so that their joint L2 norm is at most `bound` before they are
/// added, and the runs of one record are disjoint, so adding or removing one record moves the sum
/// by at most `bound` in L2 norm. A replaced record's runs are dropped before anything of it is
/// added.
#[allow(clippy::too_many_arguments)]
fn clipped_segment_sum<R, F>(
    records: &[R],
    indices: &[usize],
    block_len: usize,
    bound: f64,
    statistic: &F,
    tasks: &mut Vec<SegmentBuffer>,
    sum: &mut Vec<f64>,
    replace_invalid: bool,
) -> Result<ReleaseDiagnostics, &'static str>
where
    R: Sync,
    F: Fn(&R, &mut SegmentBuffer) + Sync,
{
    // Zeroed by the span tasks of the first group (in parallel, each its own span), or here if
    // the batch is empty or the pool has one thread; stale values are never read.
    sum.resize(block_len, 0.0);
    let mut counts = ReleaseDiagnostics::default();
    if indices.is_empty() || rayon::current_num_threads() <= 1 {
        // One thread: each record is added right after it is clipped, while its runs are in
        // cache; the same additions in the same (record) order as the two passes below.
        sum.fill(0.0);
        if tasks.is_empty() {
            tasks.push(SegmentBuffer::new(block_len));
        }
        let buffer = &mut tasks[0];
        for &i in indices {
            buffer.reset(block_len);
            statistic(&records[i], buffer);
            counts.count(buffer.seal_or_replace(bound, replace_invalid)?);
            buffer.add_sealed(0, sum);
        }
        return Ok(counts);
    }
    for (g, group) in indices.chunks(RECORDS_PER_GROUP).enumerate() {
        let task_indices: Vec<&[usize]> = group.chunks(RECORDS_PER_TASK).collect();
        if tasks.len() < task_indices.len() {
            tasks.resize_with(task_indices.len(), || SegmentBuffer::new(block_len));
        }
        let tasks = &mut tasks[..task_indices.len()];
        let first_pass = |(buffer, task): (&mut SegmentBuffer, &&[usize])| {
            buffer.reset(block_len);
            let mut counts = ReleaseDiagnostics::default();
            for &i in *task {
                statistic(&records[i], buffer);
                counts.count(buffer.seal_or_replace(bound, replace_invalid)?);
            }
            Ok::<ReleaseDiagnostics, &'static str>(counts)
        };
        counts += if task_indices.len() == 1 {
            first_pass((&mut tasks[0], &task_indices[0]))?
        } else {
            tasks
                .par_iter_mut()
                .zip(task_indices.par_iter())
                .map(first_pass)
                .try_reduce(ReleaseDiagnostics::default, |mut a, b| {
                    a += b;
                    Ok(a)
                })?
        };
        let tasks = &*tasks;
        let scatter = |(span, out): (usize, &mut [f64])| {
            if g == 0 {
                out.fill(0.0);
            }
            for buffer in tasks {
                buffer.add_sealed(span * ENTRIES_PER_SPAN, out);
            }
        };
        if block_len <= ENTRIES_PER_SPAN {
            scatter((0, &mut sum[..]));
        } else {
            sum.par_chunks_mut(ENTRIES_PER_SPAN)
                .enumerate()
                .for_each(scatter);
        }
    }
    Ok(counts)
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
    /// under replace-one) and gets the same noise as the general path. In a private release a
    /// record that writes a run outside the block, runs out of order or overlapping, or a
    /// non-finite value is **replaced by zero** (its runs are dropped before anything of it is
    /// added), counted in the non-private [`Release::diagnostics`], and the release goes ahead
    /// and is charged.
    ///
    /// # Errors
    /// [`CoreError::Misconfigured`] unless the spec has exactly one vector or matrix block;
    /// [`CoreError::BudgetExhausted`] if the release would exceed the budget. **Non-private
    /// mode only**: [`CoreError::InvalidContribution`] for a run outside the block, out of
    /// order, or a non-finite value (the message names the block and the kind of fault, never
    /// a position, a value or a record). On every error nothing is released and the ledger is
    /// unchanged (the noise draws of a failed release, made while the records were summed, are
    /// discarded: a seeded wall's later releases then differ from those of a wall that never
    /// failed).
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
        self.check_budget(self.event_per_release(), 1)?;
        self.sample_batch()?;
        let replace = self.replaces_invalid();
        let factor = self.scheme.sensitivity_factor();
        let sigma = self.noise_multiplier();
        let rescaled = spec.rescaled_sensitivity() * factor;
        let expected = self.normaliser;
        let sum_std = sigma.map_or(0.0, |s| block.bound() * s * rescaled);
        let drawn = self.drawn_std(sum_std);
        // The noise does not depend on the data: it is drawn (serially, from the one noise
        // stream, so the same draws at every thread count) while the other threads evaluate and
        // sum the records.
        let mut scratch = std::mem::take(&mut self.segment_scratch);
        let SegmentScratch { tasks, sum, noise } = &mut scratch;
        let (records, batch, noise_rng) = (&self.records, &self.batch, &mut self.noise_rng);
        let block_len = block.stored_len();
        let ((), summed) = rayon::join(
            || draw_noise(noise_rng, noise, block_len, drawn),
            || {
                clipped_segment_sum(
                    records,
                    batch,
                    block_len,
                    block.bound(),
                    &statistic,
                    tasks,
                    sum,
                    replace,
                )
            },
        );
        self.batch.clear();
        let diagnostics = match summed {
            Ok(diagnostics) => diagnostics,
            Err(reason) => {
                self.segment_scratch = scratch;
                return Err(CoreError::InvalidContribution {
                    block: block.name().to_string(),
                    reason: reason.to_string(),
                });
            }
        };
        let value = shape_value(block, &scratch.sum, &scratch.noise, drawn, expected);
        self.segment_scratch = scratch;
        let blocks = vec![ReleasedBlock {
            name: block.name().to_string(),
            value,
            bound: block.bound(),
            noise_std: sum_std / expected,
            sensitivity: factor * block.bound() / expected,
            projection: None,
        }];
        let mut notes = self.notes(spec, sigma, rescaled);
        notes.insert(
            "contribution".into(),
            "disjoint runs per record (segment release), clipped jointly in L2 norm".into(),
        );
        let label = format!("release {}", self.releases);
        let event = self.event_per_release().cloned();
        self.finish_release(label, notes, event, blocks, diagnostics, sigma, 1)
    }
}
