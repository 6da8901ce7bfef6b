//! Parallel clipped sums over a batch: per-thread buffers and accumulators, summed in a fixed order.

use rayon::prelude::*;

use super::buffer::{ContributionBuffer, RecordOutcome};
use super::spec::{BlockShape, ReleaseSpec};
use crate::error::CoreError;

/// Records per chunk. Chunks are summed in index order, so the result is the same whatever the
/// number of threads (bit-for-bit reproducible from a seed).
const CHUNK: usize = 64;

/// One worker's reusable state.
#[derive(Debug)]
struct Worker {
    buffer: ContributionBuffer,
    sums: Vec<Vec<f64>>,
    clipped: u64,
    replaced: u64,
}

impl Worker {
    fn new(spec: &ReleaseSpec) -> Self {
        Self {
            buffer: ContributionBuffer::new(spec),
            sums: spec
                .blocks()
                .iter()
                .map(|b| vec![0.0; b.stored_len()])
                .collect(),
            clipped: 0,
            replaced: 0,
        }
    }

    fn clear(&mut self) {
        self.sums
            .iter_mut()
            .for_each(|s| s.iter_mut().for_each(|v| *v = 0.0));
        self.clipped = 0;
        self.replaced = 0;
    }

    fn run<R, F>(
        &mut self,
        records: &[R],
        indices: &[usize],
        spec: &ReleaseSpec,
        mut statistic: F,
        replace_invalid: bool,
    ) -> Result<(), CoreError>
    where
        F: FnMut(&R, &mut ContributionBuffer),
    {
        for &i in indices {
            statistic(&records[i], &mut self.buffer);
            match self
                .buffer
                .finish_record(spec, &mut self.sums, replace_invalid)?
            {
                RecordOutcome::Added => {}
                RecordOutcome::Clipped => self.clipped += 1,
                RecordOutcome::Replaced => self.replaced += 1,
            }
        }
        Ok(())
    }
}

/// Output entries per task of the parallel reduction. Does not affect the result.
const ENTRIES_PER_SPAN: usize = 32 * 1024;

/// Reusable memory of the general path, kept in the wall between releases: the total and the
/// per-worker sums and buffers for the block shapes of the last spec. Worker sums are all zero
/// between releases (the reduction re-zeroes them); after a failed release the scratch is
/// dropped instead of reused.
#[derive(Debug, Default)]
pub(crate) struct DenseScratch {
    shapes: Vec<BlockShape>,
    total: Option<Worker>,
    workers: Vec<Worker>,
}

impl DenseScratch {
    /// Fits the scratch to `spec` (rebuilt if the block shapes changed) with a zeroed total.
    /// Allocates nothing when the shapes are those of the last spec.
    fn prepare(&mut self, spec: &ReleaseSpec) -> &mut Worker {
        let same = self
            .shapes
            .iter()
            .copied()
            .eq(spec.blocks().iter().map(|b| b.shape()));
        if !same {
            *self = Self {
                shapes: spec.blocks().iter().map(|b| b.shape()).collect(),
                total: None,
                workers: Vec::new(),
            };
        }
        let total = self.total.get_or_insert_with(|| Worker::new(spec));
        total.clear();
        total
    }

    /// The per-block sums of the last successful [`clipped_sums`].
    pub(crate) fn sums(&self) -> &[Vec<f64>] {
        self.total.as_ref().map_or(&[], |t| &t.sums)
    }
}

/// The per-block sums of the clipped contributions of `records[indices]`, on the calling
/// thread (no rayon), left in [`DenseScratch::sums`]: the wall's cheap path for tiny batches.
/// The same record-by-record additions as [`clipped_sums`] makes for a batch of at most
/// [`CHUNK`] records, so the two agree bit for bit there.
///
/// # Privacy
/// As [`clipped_sums`].
pub(crate) fn sequential_sums<R, F>(
    records: &[R],
    indices: &[usize],
    spec: &ReleaseSpec,
    statistic: F,
    scratch: &mut DenseScratch,
    replace_invalid: bool,
) -> Result<(u64, u64), CoreError>
where
    F: FnMut(&R, &mut ContributionBuffer),
{
    let total = scratch.prepare(spec);
    total.run(records, indices, spec, statistic, replace_invalid)?;
    Ok((total.clipped, total.replaced))
}

/// Adds every part into `total`, part by part in order, and zeroes the parts; in parallel over
/// spans of the output (each entry gets `((t + p_0) + p_1) + ...`, whatever the thread count).
fn add_and_zero(total: &mut [f64], parts: Vec<&mut [f64]>) {
    let spans = total.len().div_ceil(ENTRIES_PER_SPAN);
    let mut per_span: Vec<Vec<&mut [f64]>> = (0..spans)
        .map(|_| Vec::with_capacity(parts.len()))
        .collect();
    for part in parts {
        for (span, chunk) in part.chunks_mut(ENTRIES_PER_SPAN).enumerate() {
            per_span[span].push(chunk);
        }
    }
    total
        .par_chunks_mut(ENTRIES_PER_SPAN)
        .zip(per_span.into_par_iter())
        .for_each(|(t, parts)| {
            for p in parts {
                for (t, p) in t.iter_mut().zip(p.iter_mut()) {
                    *t += *p;
                    *p = 0.0;
                }
            }
        });
}

/// The per-block sums of the clipped contributions of `records[indices]` (left in
/// [`DenseScratch::sums`]), and how many records were clipped and how many were replaced by
/// zero (malformed or non-finite, when `replace_invalid`; otherwise such a record is an error).
///
/// Records are taken in chunks of [`CHUNK`]; each chunk is summed from zero by one worker, and
/// the chunk sums are added into the total in chunk order (after each wave of as many chunks as
/// threads, in parallel over spans of the output), so the result is the same whatever the number
/// of threads. The worker sums and buffers are reused across waves and releases.
///
/// # Privacy
/// Each record's contribution is clipped block by block to the block's bound before it is added,
/// so adding or removing one record moves block `j`'s sum by at most `bound_j` in its norm, and
/// replacing one by at most `2 bound_j`. A replaced record adds exactly nothing (norm 0), so the
/// bound holds whatever the record's statistic does.
pub(crate) fn clipped_sums<R, F>(
    records: &[R],
    indices: &[usize],
    spec: &ReleaseSpec,
    statistic: &F,
    scratch: &mut DenseScratch,
    replace_invalid: bool,
) -> Result<(u64, u64), CoreError>
where
    R: Sync,
    F: Fn(&R, &mut ContributionBuffer) + Sync,
{
    let total = scratch.prepare(spec);
    if indices.len() <= CHUNK {
        total.run(records, indices, spec, statistic, replace_invalid)?;
        return Ok((total.clipped, total.replaced));
    }
    let chunks: Vec<&[usize]> = indices.chunks(CHUNK).collect();
    let threads = rayon::current_num_threads().max(1).min(chunks.len());
    let DenseScratch { total, workers, .. } = scratch;
    let total = total.as_mut().expect("prepared above");
    while workers.len() < threads {
        workers.push(Worker::new(spec));
    }
    let workers = &mut workers[..threads];
    for wave in chunks.chunks(threads) {
        workers
            .par_iter_mut()
            .zip(wave.par_iter())
            .try_for_each(|(worker, chunk)| {
                worker.run(records, chunk, spec, statistic, replace_invalid)
            })?;
        for (b, acc) in total.sums.iter_mut().enumerate() {
            let parts = workers
                .iter_mut()
                .take(wave.len())
                .map(|w| &mut w.sums[b][..])
                .collect();
            add_and_zero(acc, parts);
        }
        for worker in workers.iter_mut().take(wave.len()) {
            total.clipped += worker.clipped;
            total.replaced += worker.replaced;
            worker.clipped = 0;
            worker.replaced = 0;
        }
    }
    Ok((total.clipped, total.replaced))
}
