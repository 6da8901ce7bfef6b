//! Parallel clipped sums over a batch: per-thread buffers and accumulators, summed in a fixed order.

use rayon::prelude::*;

use super::buffer::ContributionBuffer;
use super::spec::ReleaseSpec;
use crate::error::CoreError;

/// Records per chunk. Chunks are summed in index order, so the result is the same whatever the
/// number of threads (bit-for-bit reproducible from a seed).
const CHUNK: usize = 64;

/// One worker's reusable state.
struct Worker {
    buffer: ContributionBuffer,
    sums: Vec<Vec<f64>>,
    clipped: u64,
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
        }
    }

    fn clear(&mut self) {
        self.sums
            .iter_mut()
            .for_each(|s| s.iter_mut().for_each(|v| *v = 0.0));
        self.clipped = 0;
    }

    fn run<R, F>(
        &mut self,
        records: &[R],
        indices: &[usize],
        spec: &ReleaseSpec,
        statistic: &F,
    ) -> Result<(), CoreError>
    where
        F: Fn(&R, &mut ContributionBuffer),
    {
        for &i in indices {
            statistic(&records[i], &mut self.buffer);
            if self.buffer.finish_record(spec, &mut self.sums)? {
                self.clipped += 1;
            }
        }
        Ok(())
    }
}

/// The per-block sums of the clipped contributions of `records[indices]`, and how many records
/// were clipped.
///
/// # Privacy
/// Each record's contribution is clipped block by block to the block's bound before it is added,
/// so adding or removing one record moves block `j`'s sum by at most `bound_j` in its norm, and
/// replacing one by at most `2 bound_j`.
pub(crate) fn clipped_sums<R, F>(
    records: &[R],
    indices: &[usize],
    spec: &ReleaseSpec,
    statistic: &F,
) -> Result<(Vec<Vec<f64>>, u64), CoreError>
where
    R: Sync,
    F: Fn(&R, &mut ContributionBuffer) + Sync,
{
    let mut total = Worker::new(spec);
    if indices.len() <= CHUNK {
        total.run(records, indices, spec, statistic)?;
        return Ok((total.sums, total.clipped));
    }
    let chunks: Vec<&[usize]> = indices.chunks(CHUNK).collect();
    let threads = rayon::current_num_threads().max(1).min(chunks.len());
    let mut workers: Vec<Worker> = (0..threads).map(|_| Worker::new(spec)).collect();
    for wave in chunks.chunks(threads) {
        workers
            .par_iter_mut()
            .zip(wave.par_iter())
            .try_for_each(|(worker, chunk)| {
                worker.clear();
                worker.run(records, chunk, spec, statistic)
            })?;
        for worker in workers.iter().take(wave.len()) {
            for (acc, part) in total.sums.iter_mut().zip(&worker.sums) {
                acc.iter_mut().zip(part).for_each(|(a, p)| *a += p);
            }
            total.clipped += worker.clipped;
        }
    }
    Ok((total.sums, total.clipped))
}
