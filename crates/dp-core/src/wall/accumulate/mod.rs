//! The clipped sums of a batch, for every release path: per-record clipping by group, then
//! entry writes summed per chunk of records and runs summed record by record in batch order,
//! the result the same bit for bit at any number of threads.

use rayon::prelude::*;

mod ordered;

use super::ReleaseDiagnostics;
use super::buffer::{ContributionBuffer, EntrySums, RunStore};
use super::spec::{BlockShape, ReleaseSpec};
use crate::error::CoreError;

/// Records per chunk of a batch of at most one chunk or of at least [`RECORDS_PER_GROUP`]
/// records. A chunk's entry writes are summed from zero by one worker and the chunk sums are
/// added in chunk order, so the result is the same whatever the number of threads.
const CHUNK: usize = 64;

/// Records per chunk of a batch of more than [`CHUNK`] and fewer than [`RECORDS_PER_GROUP`]
/// records: with chunks of 64 such a batch is only a few work units (LDA's news batches of
/// about 256 documents: 4), so two threads finish unevenly and one thread's records wait
/// longer to be added in order; chunks of 16 share it evenly.
const SMALL_BATCH_CHUNK: usize = 16;

/// Records per chunk of a batch of `total` records. A function of the batch's size alone,
/// never of the number of threads, so the chunks, and every sum, are the same at any thread
/// count.
fn chunk_len(total: usize) -> usize {
    if total > CHUNK && total < RECORDS_PER_GROUP {
        SMALL_BATCH_CHUNK
    } else {
        CHUNK
    }
}

/// Most records whose runs are held at once (a multiple of [`CHUNK`]); a larger batch is
/// processed in groups of this many records, in index order. Bounds the memory of the runs;
/// does not affect the result.
const RECORDS_PER_GROUP: usize = 16 * CHUNK;

/// Output entries per task of the parallel reductions and scatters: 256 KiB of `f64`, so a
/// task's part of a sum stays in cache. Does not affect the result.
const ENTRIES_PER_SPAN: usize = 32 * 1024;

/// Entries a reduction tests for zero at once ([`add_and_zero`]); does not affect the result.
const ZERO_RUN: usize = 16;

/// From this many stored entries (all blocks of a spec together; 4 Mi entries = 32 MiB per
/// array) the workers' memory (each one's record scratch and chunk sums, about three arrays of
/// the spec's size per thread) is freed once a release's sums are final, instead of being kept
/// for the next release: at BLR's `d = 4,146` that is some 290 MB on two threads that the
/// projection and the M-step no longer share memory with. Workers start from zero either way,
/// so this does not affect the result.
const LARGE_SPEC_ENTRIES: usize = 1 << 22;

/// Specs with at most this many stored entries (all blocks together; 2^19 entries is 4 MiB per
/// array) are summed on several threads by [`ordered::add_group`]: each record added as soon as
/// it and every record before it are sealed, so a record's runs are mostly added while still in
/// cache. Larger specs (BLR's packed `d x d` statistic) run in waves of one chunk per thread
/// whose runs are added span by span after the group: their chunk sums are too large to keep
/// one per pending chunk. Does not affect the result.
const ORDERED_SPEC_ENTRIES: usize = 1 << 19;

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
            zeroed(s, self.lens[b]);
            self.used[b] = true;
        }
        s
    }
}

/// Makes `v` `len` zeros. A large array kept from the last release is zeroed span by span in
/// parallel (a serial pass over a `K x V` sum on the calling thread was the largest serial
/// part of an LDA release after the E-step); a fresh one comes zeroed from the allocator.
fn zeroed(v: &mut Vec<f64>, len: usize) {
    if v.len() == len && len > ENTRIES_PER_SPAN {
        v.par_chunks_mut(ENTRIES_PER_SPAN)
            .for_each(|span| span.fill(0.0));
    } else {
        v.clear();
        v.resize(len, 0.0);
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
    /// Zeroed chunk entry sums kept for [`ordered::add_group`]'s pending chunks.
    spare_entries: Vec<EntrySums>,
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
                spare_entries: Vec::new(),
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
            zeroed(t, len);
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

    /// Adds the chunk sums `parts` (in chunk order) into the entry totals, block by block, and
    /// zeroes them ([`add_and_zero`]).
    fn add_entry_sums(&mut self, parts: &mut [&mut EntrySums], parallel: bool) {
        for b in 0..self.shapes.len() {
            if !parts.iter().any(|p| p.touched[b]) {
                continue;
            }
            self.total(b);
            let sums = parts
                .iter_mut()
                .filter(|p| p.touched[b])
                .map(|p| {
                    p.touched[b] = false;
                    &mut p.sums[b][..]
                })
                .collect();
            add_and_zero(&mut self.totals.sums[b], sums, parallel);
        }
    }

    /// Stored entries of the spec's blocks together.
    fn entries(&self) -> usize {
        self.shapes.iter().map(|s| s.stored_len()).sum()
    }

    /// Frees the workers (and the chunks' run stores) of a large spec ([`LARGE_SPEC_ENTRIES`]);
    /// they are rebuilt, zeroed, by the next release.
    fn release_workers_if_large(&mut self) {
        if self.entries() >= LARGE_SPEC_ENTRIES {
            self.workers = Vec::new();
            self.chunk_runs = Vec::new();
        }
    }

    /// Frees the release's sums of a large spec ([`LARGE_SPEC_ENTRIES`]) once the release has
    /// read them: at BLR's `d = 4,146` the packed `s2` is 69 MB that the projection and the
    /// M-step need. The next release allocates them again, zeroed; does not affect the result.
    pub(crate) fn free_sums_if_large(&mut self) {
        if self.entries() >= LARGE_SPEC_ENTRIES {
            self.totals.sums.iter_mut().for_each(|s| *s = Vec::new());
            self.runs.sums.iter_mut().for_each(|s| *s = Vec::new());
        }
    }

    /// The per-block sums of the last successful [`clipped_sums`], in spec order, to be noised
    /// in place (they are zeroed before the next release adds to them).
    pub(crate) fn sums_mut(&mut self) -> impl Iterator<Item = &mut [f64]> {
        let Self {
            from_runs,
            totals,
            runs,
            ..
        } = self;
        from_runs
            .iter()
            .zip(totals.sums.iter_mut().zip(runs.sums.iter_mut()))
            .map(|(&r, (t, s))| if r { &mut s[..] } else { &mut t[..] })
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
///
/// A chunk's sum of a large sparse statistic is mostly zeros (64 BLR records touch some 50,000 of
/// `d(d+1)/2 = 8.6` million entries at `d = 4,146`), so runs of [`ZERO_RUN`] zero entries are
/// only read: adding `±0` leaves an entry of the total unchanged, since a total that starts at
/// `+0` and is only added to is never `-0` (round to nearest gives `+0` for an exact
/// cancellation). The totals are the same bit for bit as adding every entry.
fn add_and_zero(total: &mut [f64], parts: Vec<&mut [f64]>, parallel: bool) {
    let add = |t: &mut [f64], p: &mut [f64]| {
        for (t, p) in t.chunks_mut(ZERO_RUN).zip(p.chunks_mut(ZERO_RUN)) {
            // `±0` has no bit set but the sign: OR the other bits (branch-free, vectorised).
            if p.iter().fold(0u64, |any, v| any | (v.to_bits() << 1)) == 0 {
                continue;
            }
            for (t, p) in t.iter_mut().zip(p.iter_mut()) {
                *t += *p;
                *p = 0.0;
            }
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

/// Adds the entry sums of `workers[..wave]` (chunk order) into the totals and zeroes them.
fn reduce_entries(scratch: &mut SumScratch, wave: usize, parallel: bool) {
    let mut workers = std::mem::take(&mut scratch.workers);
    let mut parts: Vec<&mut EntrySums> = workers[..wave].iter_mut().map(|w| &mut w.sums).collect();
    scratch.add_entry_sums(&mut parts, parallel);
    scratch.workers = workers;
}

/// Records a source-backed release reads at once ([`Summation::add`] slices): a multiple of
/// [`RECORDS_PER_GROUP`] (and so of [`CHUNK`]), so the chunks and groups, and hence every sum,
/// are those of summing the whole batch at once. Bounds the memory of a release from a record
/// source to one slice of records instead of the batch (a full-batch BLR fit reads every row).
pub(crate) const SLICE_RECORDS: usize = 4 * RECORDS_PER_GROUP;

/// The clipped sums of one release, computed slice by slice: [`Summation::begin`] with the
/// batch's size, [`Summation::add`] for consecutive slices of the batch (each a multiple of
/// [`SLICE_RECORDS`] records but the last), then [`Summation::finish`] leaves the sums in
/// [`SumScratch::sums`]. The same additions in the same order as one [`clipped_sums`] over the
/// whole batch, so the same result bit for bit.
pub(crate) struct Summation<'s> {
    scratch: &'s mut SumScratch,
    counts: ReleaseDiagnostics,
    /// On the calling thread: one thread, a batch of at most one chunk, or asked for.
    sequential: bool,
    /// The batch's size, and how many of its records have been added.
    total: usize,
    added: usize,
    /// Records per chunk ([`chunk_len`] of `total`).
    chunk: usize,
}

impl<'s> Summation<'s> {
    /// Starts the sums of a batch of `total` records; `sequential` keeps them on the calling
    /// thread whatever the pool.
    pub(crate) fn begin(
        spec: &ReleaseSpec,
        scratch: &'s mut SumScratch,
        total: usize,
        sequential: bool,
    ) -> Self {
        scratch.prepare(spec);
        Self {
            scratch,
            counts: ReleaseDiagnostics::default(),
            sequential: sequential || runs_on_caller(total),
            total,
            added: 0,
            chunk: chunk_len(total),
        }
    }

    /// Adds the clipped contributions of `records[indices]`, the batch's next `indices.len()`
    /// records.
    ///
    /// # Errors
    /// As [`clipped_sums`]. A slice that does not keep the chunks of the whole batch (not a
    /// multiple of [`SLICE_RECORDS`] before the last, or more records than the batch) is
    /// [`CoreError::InvalidParameter`], a defect of the caller.
    pub(crate) fn add<R, F>(
        &mut self,
        records: &[R],
        indices: &[usize],
        spec: &ReleaseSpec,
        statistic: &F,
        replace_invalid: bool,
    ) -> Result<(), CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut ContributionBuffer) + Sync,
    {
        self.advance(indices.len())?;
        if self.sequential {
            let mut statistic = |r: &R, b: &mut ContributionBuffer| statistic(r, b);
            self.add_sequential(records, indices, spec, &mut statistic, replace_invalid)
        } else {
            self.add_parallel(records, indices, spec, statistic, replace_invalid)
        }
    }

    /// Counts the next `n` records of the batch as added, if they keep its chunks (see
    /// [`Self::add`]).
    fn advance(&mut self, n: usize) -> Result<(), CoreError> {
        let aligned = self.added.is_multiple_of(SLICE_RECORDS)
            && (self.added == 0 || self.total > CHUNK)
            && self.added + n <= self.total;
        if !aligned {
            return Err(CoreError::InvalidParameter {
                name: "release slice",
                value: n as f64,
                reason: "a release's records were added in slices that do not keep its chunks",
            });
        }
        self.added += n;
        Ok(())
    }

    /// Puts the sums in place ([`SumScratch::sums`]) and returns the diagnostics.
    pub(crate) fn finish(self) -> ReleaseDiagnostics {
        self.scratch.finish();
        self.scratch.release_workers_if_large();
        self.counts
    }

    /// [`Self::add`] on the calling thread, for a statistic that may keep state.
    fn add_sequential<R, F>(
        &mut self,
        records: &[R],
        indices: &[usize],
        spec: &ReleaseSpec,
        statistic: &mut F,
        replace_invalid: bool,
    ) -> Result<(), CoreError>
    where
        F: FnMut(&R, &mut ContributionBuffer),
    {
        let scratch = &mut *self.scratch;
        if self.total <= CHUNK {
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
                statistic,
                replace_invalid,
                Some(runs),
            );
            std::mem::swap(&mut worker.sums, totals);
            done?;
            for (used, touched) in totals_used.iter_mut().zip(totals.touched.iter_mut()) {
                *used = std::mem::take(touched);
            }
            self.counts += std::mem::take(&mut worker.counts);
        } else {
            for chunk in indices.chunks(self.chunk) {
                let worker = &mut scratch.workers[0];
                worker.run(
                    records,
                    chunk,
                    spec,
                    statistic,
                    replace_invalid,
                    Some(&mut scratch.runs),
                )?;
                self.counts += std::mem::take(&mut scratch.workers[0].counts);
                reduce_entries(scratch, 1, false);
            }
        }
        Ok(())
    }

    fn add_parallel<R, F>(
        &mut self,
        records: &[R],
        indices: &[usize],
        spec: &ReleaseSpec,
        statistic: &F,
        replace_invalid: bool,
    ) -> Result<(), CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut ContributionBuffer) + Sync,
    {
        let scratch = &mut *self.scratch;
        let threads = rayon::current_num_threads().max(1);
        for group in indices.chunks(RECORDS_PER_GROUP) {
            if scratch.entries() <= ORDERED_SPEC_ENTRIES {
                let chunks: Vec<&[usize]> = group.chunks(self.chunk).collect();
                ordered::add_group(
                    scratch,
                    records,
                    &chunks,
                    spec,
                    statistic,
                    replace_invalid,
                    &mut self.counts,
                )?;
                continue;
            }
            let chunks: Vec<&[usize]> = group.chunks(self.chunk).collect();
            let blocks = spec.len();
            while scratch.chunk_runs.len() < chunks.len() {
                scratch.chunk_runs.push(vec![RunStore::default(); blocks]);
            }
            scratch.chunk_runs[..chunks.len()]
                .iter_mut()
                .flatten()
                .for_each(RunStore::clear);
            let per_wave = threads.min(chunks.len());
            while scratch.workers.len() < per_wave {
                scratch.workers.push(Worker::new(spec));
            }
            let mut first = 0;
            while first < chunks.len() {
                let wave = per_wave.min(chunks.len() - first);
                let runs = &mut scratch.chunk_runs[first..first + wave];
                scratch.workers[..wave]
                    .par_iter_mut()
                    .zip(runs.par_iter_mut())
                    .zip(chunks[first..first + wave].par_iter())
                    .try_for_each(|((worker, runs), chunk)| {
                        std::mem::swap(&mut worker.buffer.runs, runs);
                        let mut stat = |r: &R, b: &mut ContributionBuffer| statistic(r, b);
                        let done =
                            worker.run(records, chunk, spec, &mut stat, replace_invalid, None);
                        std::mem::swap(&mut worker.buffer.runs, runs);
                        done
                    })?;
                for w in &mut scratch.workers[..wave] {
                    self.counts += std::mem::take(&mut w.counts);
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
        Ok(())
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
    let mut sum = Summation::begin(spec, scratch, indices.len(), true);
    sum.advance(indices.len())?;
    sum.add_sequential(records, indices, spec, &mut statistic, replace_invalid)?;
    Ok(sum.finish())
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
/// Records are taken in chunks ([`chunk_len`]: 64 records, 16 in a batch of 65 to 1,023), groups
/// of [`RECORDS_PER_GROUP`]. Each record is
/// clipped, its entry writes added into its chunk's sum (from zero), its runs scaled and sealed.
/// The chunk sums are added into the entry totals in chunk order, and the runs into the run
/// sums record by record in index order: on the calling thread right after each record; for a
/// small spec ([`ORDERED_SPEC_ENTRIES`]) on several threads by [`ordered::add_group`], each
/// record as soon as it and every record before it are sealed; for a large spec in waves of one
/// chunk per thread, then span by span in parallel, every record's entries in that span in index
/// order. Every entry of every sum is therefore computed by the same additions in the same order
/// whatever the number of threads (bit-for-bit reproducible from a seed). A block that got both
/// entry writes and runs is the entry total plus the run sum. [`Summation`] does the same slice
/// by slice.
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
    let mut sum = Summation::begin(spec, scratch, indices.len(), false);
    sum.add(records, indices, spec, statistic, replace_invalid)?;
    Ok(sum.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks of 64 for a batch of one chunk or of at least a group, of 16 in between; always
    /// a divisor of a group, so groups and source slices keep whole chunks.
    #[test]
    fn chunk_length_follows_the_batch_size() {
        assert_eq!(chunk_len(0), CHUNK);
        assert_eq!(chunk_len(CHUNK), CHUNK);
        assert_eq!(chunk_len(CHUNK + 1), SMALL_BATCH_CHUNK);
        assert_eq!(chunk_len(RECORDS_PER_GROUP - 1), SMALL_BATCH_CHUNK);
        assert_eq!(chunk_len(RECORDS_PER_GROUP), CHUNK);
        assert_eq!(chunk_len(10 * SLICE_RECORDS), CHUNK);
        assert!(RECORDS_PER_GROUP.is_multiple_of(SMALL_BATCH_CHUNK));
        assert!(RECORDS_PER_GROUP.is_multiple_of(CHUNK));
    }

    /// A large sparse symmetric statistic (above [`LARGE_SPEC_ENTRIES`], so the workers are
    /// freed after every release, and mostly-zero chunk sums, so [`add_and_zero`] skips zero
    /// runs): the same sums bit for bit on the calling thread and on two threads, release after
    /// release, equal to a plain record-by-record reference up to the chunk association.
    #[test]
    fn large_sparse_sums_repeat_bit_for_bit() {
        let d = 2900; // d (d + 1) / 2 = 4.2 Mi stored entries
        let mut b = ReleaseSpec::builder("large sparse");
        let s = b.symmetric("s", d, 10.0).unwrap();
        let spec = b.build().unwrap();
        assert!(spec.blocks()[0].stored_len() >= LARGE_SPEC_ENTRIES);
        let records: Vec<[usize; 3]> = (0..300)
            .map(|i| [(i * 7) % d, (i * 13 + 1) % d, (i * 31 + 5) % d])
            .collect();
        let indices: Vec<usize> = (0..records.len()).collect();
        let stat = |r: &[usize; 3], buf: &mut ContributionBuffer| {
            for (a, &i) in r.iter().enumerate() {
                for &j in &r[a..] {
                    buf.add_symmetric(s, i, j, 1e-4 * (i as f64 - j as f64 + 0.5));
                }
            }
        };
        let mut scratch = SumScratch::default();
        sequential_sums(&records, &indices, &spec, stat, &mut scratch, true).unwrap();
        let reference: Vec<f64> = scratch.sums().next().unwrap().to_vec();
        assert!(
            scratch.workers.is_empty(),
            "a large spec's workers are freed"
        );
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        for _ in 0..2 {
            pool.install(|| {
                clipped_sums(&records, &indices, &spec, &stat, &mut scratch, true).unwrap()
            });
            assert_eq!(scratch.sums().next().unwrap(), &reference[..]);
            assert!(scratch.workers.is_empty());
            sequential_sums(&records, &indices, &spec, stat, &mut scratch, true).unwrap();
            assert_eq!(scratch.sums().next().unwrap(), &reference[..]);
        }
        // Against a plain sum of every record's entries (a different association: to rounding).
        let mut plain = vec![0.0; reference.len()];
        for r in &records {
            for (a, &i) in r.iter().enumerate() {
                for &j in &r[a..] {
                    plain[super::super::spec::packed_index(i, j)] +=
                        1e-4 * (i as f64 - j as f64 + 0.5);
                }
            }
        }
        for (p, r) in plain.iter().zip(&reference) {
            assert!((p - r).abs() <= 1e-12 * (1.0 + p.abs()));
        }
    }
}
