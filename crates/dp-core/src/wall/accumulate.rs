//! The clipped sums of a batch, for every release path: per-record clipping by group, then
//! entry writes summed per chunk of records and runs summed span by span in record order, the
//! result the same bit for bit at any number of threads.

use rayon::prelude::*;

use super::ReleaseDiagnostics;
use super::buffer::{ContributionBuffer, EntrySums, RunStore};
use super::spec::{BlockShape, ReleaseSpec};
use crate::error::CoreError;

/// Records per chunk. A chunk's entry writes are summed from zero by one worker and the chunk
/// sums are added in chunk order, so the result is the same whatever the number of threads.
const CHUNK: usize = 64;

/// Most records whose runs are held at once (a multiple of [`CHUNK`]); a larger batch is
/// processed in groups of this many records, in index order. Bounds the memory of the runs;
/// does not affect the result.
const RECORDS_PER_GROUP: usize = 16 * CHUNK;

/// Output entries per task of the parallel reductions and scatters: 256 KiB of `f64`, so a
/// task's part of a sum stays in cache. Does not affect the result.
const ENTRIES_PER_SPAN: usize = 32 * 1024;

/// One worker's reusable state: its buffer and the entry sums of its current chunk.
#[derive(Debug)]
struct Worker {
    buffer: ContributionBuffer,
    sums: EntrySums,
    counts: ReleaseDiagnostics,
}

impl Worker {
    fn new(spec: &ReleaseSpec) -> Self {
        Self {
            buffer: ContributionBuffer::new(spec),
            sums: EntrySums::new(spec),
            counts: ReleaseDiagnostics::default(),
        }
    }

    /// Evaluates, clips and keeps `records[indices]` in order: entry writes into `self.sums`,
    /// runs sealed into the buffer's run stores; with `immediate`, each record's runs are added
    /// into those sums right after the record is sealed (and dropped from the stores).
    fn run<R, F>(
        &mut self,
        records: &[R],
        indices: &[usize],
        spec: &ReleaseSpec,
        statistic: &mut F,
        replace_invalid: bool,
        mut immediate: Option<&mut RunSums>,
    ) -> Result<(), CoreError>
    where
        F: FnMut(&R, &mut ContributionBuffer),
    {
        for &i in indices {
            statistic(&records[i], &mut self.buffer);
            let outcome = self
                .buffer
                .finish_record(spec, &mut self.sums, replace_invalid)?;
            self.counts.count(outcome);
            if let Some(runs) = immediate.as_deref_mut() {
                for (b, store) in self.buffer.runs.iter_mut().enumerate() {
                    if store.has_sealed() {
                        store.add_sealed(0, runs.block(b));
                        store.clear();
                    }
                }
            }
        }
        Ok(())
    }
}

/// Per-block sums of runs, zeroed on first use in a release.
#[derive(Debug, Default)]
struct RunSums {
    lens: Vec<usize>,
    sums: Vec<Vec<f64>>,
    used: Vec<bool>,
}

impl RunSums {
    fn block(&mut self, b: usize) -> &mut [f64] {
        let s = &mut self.sums[b];
        if !self.used[b] {
            s.clear();
            s.resize(self.lens[b], 0.0);
            self.used[b] = true;
        }
        s
    }
}

/// Reusable memory of the clipped sums, kept in the wall between releases: workers (one per
/// thread), the run stores of each chunk of a group, the release's entry and run sums. Rebuilt
/// when the spec changes; dropped after a failed release.
#[derive(Debug, Default)]
pub(crate) struct SumScratch {
    spec_id: u64,
    shapes: Vec<BlockShape>,
    workers: Vec<Worker>,
    chunk_runs: Vec<Vec<RunStore>>,
    /// Entry sums of the release (chunk sums added in chunk order).
    totals: EntrySums,
    /// Whether block `b`'s total was added to in this release.
    totals_used: Vec<bool>,
    runs: RunSums,
    /// Which array holds block `b`'s final sum: `false` the entry total, `true` the run sum.
    from_runs: Vec<bool>,
}

impl SumScratch {
    /// Fits the scratch to `spec` (rebuilt if it is another spec) with nothing summed yet.
    fn prepare(&mut self, spec: &ReleaseSpec) {
        let same_shapes = self
            .shapes
            .iter()
            .copied()
            .eq(spec.blocks().iter().map(|b| b.shape()));
        if same_shapes && self.spec_id != spec.id() {
            // Another spec of the same shapes (e.g. rebuilt every iteration): keep the memory,
            // accept the new spec's handles.
            self.spec_id = spec.id();
            self.workers
                .iter_mut()
                .for_each(|w| w.buffer.rebind(spec.id()));
        }
        if !same_shapes {
            *self = Self {
                spec_id: spec.id(),
                shapes: spec.blocks().iter().map(|b| b.shape()).collect(),
                workers: Vec::new(),
                chunk_runs: Vec::new(),
                totals: EntrySums::new(spec),
                totals_used: vec![false; spec.len()],
                runs: RunSums {
                    lens: spec.blocks().iter().map(|b| b.stored_len()).collect(),
                    sums: vec![Vec::new(); spec.len()],
                    used: vec![false; spec.len()],
                },
                from_runs: vec![false; spec.len()],
            };
        }
        self.totals_used.iter_mut().for_each(|u| *u = false);
        self.totals.touched.iter_mut().for_each(|u| *u = false);
        self.runs.used.iter_mut().for_each(|u| *u = false);
        if self.workers.is_empty() {
            self.workers.push(Worker::new(spec));
        }
    }

    /// Block `b`'s entry total, zeroed on first use in the release.
    fn total(&mut self, b: usize) -> &mut [f64] {
        let len = self.shapes[b].stored_len();
        let t = &mut self.totals.sums[b];
        if !self.totals_used[b] {
            t.clear();
            t.resize(len, 0.0);
            self.totals_used[b] = true;
        }
        t
    }

    /// Puts every block's final sum in place: the entry total, the run sum, or (both used) the
    /// run sum plus the entry total, entry by entry.
    fn finish(&mut self) {
        for b in 0..self.shapes.len() {
            let runs = self.runs.used[b];
            if runs && self.totals_used[b] {
                let t = &self.totals.sums[b];
                let r = &mut self.runs.sums[b];
                r.par_chunks_mut(ENTRIES_PER_SPAN)
                    .zip(t.par_chunks(ENTRIES_PER_SPAN))
                    .for_each(|(r, t)| {
                        for (r, t) in r.iter_mut().zip(t) {
                            *r += *t;
                        }
                    });
            } else if !runs {
                self.total(b);
            }
            self.from_runs[b] = runs;
        }
    }

    /// The per-block sums of the last successful [`clipped_sums`], in spec order.
    pub(crate) fn sums(&self) -> impl Iterator<Item = &[f64]> {
        self.from_runs.iter().enumerate().map(|(b, &r)| {
            if r {
                &self.runs.sums[b][..]
            } else {
                &self.totals.sums[b][..]
            }
        })
    }
}

/// Adds every part into `total`, part by part in order, and zeroes the parts; in parallel over
/// spans of the output when `parallel` (each entry gets `((t + p_0) + p_1) + ...`, whatever the
/// thread count).
fn add_and_zero(total: &mut [f64], parts: Vec<&mut [f64]>, parallel: bool) {
    let add = |t: &mut [f64], p: &mut [f64]| {
        for (t, p) in t.iter_mut().zip(p.iter_mut()) {
            *t += *p;
            *p = 0.0;
        }
    };
    if !parallel || total.len() <= ENTRIES_PER_SPAN {
        for p in parts {
            add(total, p);
        }
        return;
    }
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
                add(t, p);
            }
        });
}

/// Adds the entry sums of `workers` (chunk order) into the totals and zeroes them.
fn reduce_entries(scratch_totals: &mut SumScratch, wave: usize, parallel: bool) {
    for b in 0..scratch_totals.shapes.len() {
        if !scratch_totals.workers[..wave]
            .iter()
            .any(|w| w.sums.touched[b])
        {
            continue;
        }
        scratch_totals.total(b);
        let SumScratch {
            workers, totals, ..
        } = scratch_totals;
        let parts = workers[..wave]
            .iter_mut()
            .filter(|w| w.sums.touched[b])
            .map(|w| {
                w.sums.touched[b] = false;
                &mut w.sums.sums[b][..]
            })
            .collect();
        add_and_zero(&mut totals.sums[b], parts, parallel);
    }
}

/// The clipped sums of `records[indices]` on the calling thread (no rayon), left in
/// [`SumScratch::sums`], and the diagnostics: the same additions in the same order as
/// [`clipped_sums`] makes at any thread count, so the two agree bit for bit.
///
/// # Privacy
/// As [`clipped_sums`].
pub(crate) fn sequential_sums<R, F>(
    records: &[R],
    indices: &[usize],
    spec: &ReleaseSpec,
    mut statistic: F,
    scratch: &mut SumScratch,
    replace_invalid: bool,
) -> Result<ReleaseDiagnostics, CoreError>
where
    F: FnMut(&R, &mut ContributionBuffer),
{
    scratch.prepare(spec);
    let mut counts = ReleaseDiagnostics::default();
    if indices.len() <= CHUNK {
        // One chunk: summed straight into the totals (`0 + chunk sum` is the chunk sum).
        let SumScratch {
            workers,
            totals,
            runs,
            totals_used,
            ..
        } = scratch;
        // Totals of the last release start again from zero.
        totals
            .sums
            .iter_mut()
            .filter(|t| !t.is_empty())
            .for_each(|t| t.fill(0.0));
        let worker = &mut workers[0];
        std::mem::swap(&mut worker.sums, totals);
        let done = worker.run(
            records,
            indices,
            spec,
            &mut statistic,
            replace_invalid,
            Some(runs),
        );
        std::mem::swap(&mut worker.sums, totals);
        done?;
        for (used, touched) in totals_used.iter_mut().zip(totals.touched.iter_mut()) {
            *used = std::mem::take(touched);
        }
        counts += std::mem::take(&mut worker.counts);
    } else {
        for chunk in indices.chunks(CHUNK) {
            let worker = &mut scratch.workers[0];
            worker.run(
                records,
                chunk,
                spec,
                &mut statistic,
                replace_invalid,
                Some(&mut scratch.runs),
            )?;
            counts += std::mem::take(&mut scratch.workers[0].counts);
            reduce_entries(scratch, 1, false);
        }
    }
    scratch.finish();
    Ok(counts)
}

/// Whether [`clipped_sums`] of a batch of `records` runs on the calling thread (one thread, or
/// one chunk).
pub(crate) fn runs_on_caller(records: usize) -> bool {
    rayon::current_num_threads() <= 1 || records <= CHUNK
}

/// The clipped sums of `records[indices]` (left in [`SumScratch::sums`]) and the diagnostics
/// (records clipped, and replaced by zero: malformed or non-finite, when `replace_invalid`;
/// otherwise such a record is an error).
///
/// Records are taken in chunks of [`CHUNK`], groups of [`RECORDS_PER_GROUP`]. Per group, waves
/// of as many chunks as threads are evaluated in parallel, one worker per chunk: each record is
/// clipped, its entry writes added into the worker's chunk sum (from zero), its runs scaled
/// and kept in the chunk's run stores; after each wave the chunk sums are added into the
/// entry totals in chunk order. Then each block with runs is cut into spans and each span task
/// adds, for every record in index order, the record's entries in that span. Every entry of
/// every sum is therefore computed by the same additions in the same order whatever the number
/// of threads (bit-for-bit reproducible from a seed); with one thread, runs are added right
/// after each record (the same order, better cache use). A block that got both entry writes
/// and runs is the entry total plus the run sum.
///
/// # Privacy
/// Each record's contribution is clipped group by group before anything of it is added, so
/// adding or removing one record moves group `g`'s concatenated sums by at most `B_g` in L2
/// norm (replacing one by at most `2 B_g`). A replaced record adds exactly nothing.
pub(crate) fn clipped_sums<R, F>(
    records: &[R],
    indices: &[usize],
    spec: &ReleaseSpec,
    statistic: &F,
    scratch: &mut SumScratch,
    replace_invalid: bool,
) -> Result<ReleaseDiagnostics, CoreError>
where
    R: Sync,
    F: Fn(&R, &mut ContributionBuffer) + Sync,
{
    let threads = rayon::current_num_threads().max(1);
    if runs_on_caller(indices.len()) {
        return sequential_sums(records, indices, spec, statistic, scratch, replace_invalid);
    }
    scratch.prepare(spec);
    let mut counts = ReleaseDiagnostics::default();
    for group in indices.chunks(RECORDS_PER_GROUP) {
        let chunks: Vec<&[usize]> = group.chunks(CHUNK).collect();
        let blocks = spec.len();
        while scratch.chunk_runs.len() < chunks.len() {
            scratch.chunk_runs.push(vec![RunStore::default(); blocks]);
        }
        scratch.chunk_runs[..chunks.len()]
            .iter_mut()
            .flatten()
            .for_each(RunStore::clear);
        let threads = threads.min(chunks.len());
        while scratch.workers.len() < threads {
            scratch.workers.push(Worker::new(spec));
        }
        let mut first = 0;
        while first < chunks.len() {
            let wave = threads.min(chunks.len() - first);
            let runs = &mut scratch.chunk_runs[first..first + wave];
            scratch.workers[..wave]
                .par_iter_mut()
                .zip(runs.par_iter_mut())
                .zip(chunks[first..first + wave].par_iter())
                .try_for_each(|((worker, runs), chunk)| {
                    std::mem::swap(&mut worker.buffer.runs, runs);
                    let mut stat = |r: &R, b: &mut ContributionBuffer| statistic(r, b);
                    let done = worker.run(records, chunk, spec, &mut stat, replace_invalid, None);
                    std::mem::swap(&mut worker.buffer.runs, runs);
                    done
                })?;
            for w in &mut scratch.workers[..wave] {
                counts += std::mem::take(&mut w.counts);
            }
            reduce_entries(scratch, wave, true);
            first += wave;
        }
        let stores = &scratch.chunk_runs[..chunks.len()];
        for b in 0..blocks {
            if !stores.iter().any(|s| s[b].has_sealed()) {
                continue;
            }
            let sum = scratch.runs.block(b);
            let scatter = |(span, out): (usize, &mut [f64])| {
                for store in stores {
                    store[b].add_sealed(span * ENTRIES_PER_SPAN, out);
                }
            };
            if sum.len() <= ENTRIES_PER_SPAN {
                scatter((0, sum));
            } else {
                sum.par_chunks_mut(ENTRIES_PER_SPAN)
                    .enumerate()
                    .for_each(scatter);
            }
        }
    }
    scratch.finish();
    Ok(counts)
}
