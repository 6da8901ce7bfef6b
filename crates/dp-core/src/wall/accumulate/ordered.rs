//! A small spec's clipped sums on several threads, committed in record order as the records are
//! sealed: the same additions in the same order as the calling thread makes them
//! ([`super::Summation::add_sequential`]), so the same sums bit for bit at any thread count.
//!
//! Workers take chunks of records in turn. Each record, once clipped, is handed over
//! (its sealed runs; with the last record of a chunk, the chunk's entry sum), and whichever
//! thread finds the next record in order ready adds it: its runs into the run sums, and after
//! the last record of a chunk the chunk's entry sum into the entry totals. The thread working
//! on the earliest unfinished chunk therefore adds each of its records right after sealing it,
//! while the record's runs are still in its cache; the other threads' records wait until their
//! turn (at most a group of records). Before this, runs were kept for a whole group and added
//! in a second pass (still done for large specs, [`super::Summation`]): at LDA's `K x V` the
//! runs of a group are hundreds of megabytes, and reading them back from memory cost some 17 %
//! of a synthetic fit on one thread that the calling thread's path does not pay.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use rayon::prelude::*;

use super::{SumScratch, Worker};
use crate::error::CoreError;
use crate::wall::ReleaseDiagnostics;
use crate::wall::buffer::{ContributionBuffer, EntrySums, RunStore};
use crate::wall::spec::ReleaseSpec;

/// What the workers hand over, and the spare stores they take in exchange.
struct Handoff {
    /// Sealed runs of each record of the group (one store per block), by position, with the
    /// worker that sealed them.
    runs: Vec<Option<(usize, Vec<RunStore>)>>,
    /// Entry sum of each chunk of the group (handed over with the chunk's last record).
    entries: Vec<Option<EntrySums>>,
    /// Emptied run stores, by the worker that last wrote them: a store goes back to its
    /// writer, whose cache holds its lines (handing it to the other thread made every write
    /// of the next record's runs fetch lines from the other core).
    spare_runs: Vec<Vec<Vec<RunStore>>>,
    spare_entries: Vec<EntrySums>,
}

/// The adding side: the release's sums. The position of the next record to add is the shared
/// `next`, written only while this is locked.
struct Committer<'s> {
    scratch: &'s mut SumScratch,
    /// Records per chunk.
    chunk: usize,
}

/// Locks `m`; a poisoned lock (a statistic panicked on another thread) is taken over, since the
/// panic propagates from the parallel loop and the sums are dropped with the scratch.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Committer<'_> {
    /// Adds every record that is ready, in order, from `next` on.
    fn drain(&mut self, handoff: &Mutex<Handoff>, len: usize, next: &AtomicUsize) {
        let mut pos = next.load(Ordering::Acquire);
        while pos < len {
            let chunk = pos / self.chunk;
            let last_of_chunk = pos + 1 == ((chunk + 1) * self.chunk).min(len);
            let (writer, mut stores, entries) = {
                let mut h = lock(handoff);
                let Some((writer, stores)) = h.runs[pos].take() else {
                    break;
                };
                let entries = if last_of_chunk {
                    h.entries[chunk].take()
                } else {
                    None
                };
                (writer, stores, entries)
            };
            for (b, store) in stores.iter_mut().enumerate() {
                if store.has_sealed() {
                    store.add_sealed(0, self.scratch.runs.block(b));
                    store.clear();
                }
            }
            let spare_entries = entries.map(|mut e| {
                self.scratch.add_entry_sums(&mut [&mut e], false);
                e
            });
            let mut h = lock(handoff);
            h.spare_runs[writer].push(stores);
            h.spare_entries.extend(spare_entries);
            drop(h);
            pos += 1;
            next.store(pos, Ordering::Release);
        }
    }
}

/// Adds whatever is ready if no other thread is adding; looks once more after letting go, for a
/// record handed over while the lock was held.
fn commit_ready(
    committer: &Mutex<Committer<'_>>,
    handoff: &Mutex<Handoff>,
    len: usize,
    next: &AtomicUsize,
) {
    loop {
        let mut c = match committer.try_lock() {
            Ok(c) => c,
            Err(TryLockError::WouldBlock) => return,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
        };
        c.drain(handoff, len, next);
        drop(c);
        let n = next.load(Ordering::Acquire);
        if n >= len || lock(handoff).runs[n].is_none() {
            return;
        }
    }
}

/// The clipped sums of one group of records (at most a few thousand, as `chunks`: consecutive
/// chunks, all of the first one's length but the last) on the current rayon pool, added into
/// `scratch`'s sums in record order; the workers' counts into `counts`.
///
/// # Errors
/// As [`super::clipped_sums`]: a malformed contribution in a release that does not replace
/// invalid records (the other workers stop at their next record).
pub(super) fn add_group<R, F>(
    scratch: &mut SumScratch,
    records: &[R],
    chunks: &[&[usize]],
    spec: &ReleaseSpec,
    statistic: &F,
    replace_invalid: bool,
    counts: &mut ReleaseDiagnostics,
) -> Result<(), CoreError>
where
    R: Sync,
    F: Fn(&R, &mut ContributionBuffer) + Sync,
{
    let len = chunks.iter().map(|c| c.len()).sum();
    let chunk = chunks.first().map_or(1, |c| c.len().max(1));
    let threads = rayon::current_num_threads().max(1).min(chunks.len());
    let blocks = spec.len();
    let mut workers = std::mem::take(&mut scratch.workers);
    while workers.len() < threads {
        workers.push(Worker::new(spec));
    }
    for w in &mut workers {
        w.buffer.runs.iter_mut().for_each(RunStore::clear);
    }
    let pool: Vec<Mutex<Worker>> = workers.into_iter().map(Mutex::new).collect();
    let mut spare_runs: Vec<Vec<Vec<RunStore>>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, stores) in std::mem::take(&mut scratch.chunk_runs)
        .into_iter()
        .enumerate()
    {
        spare_runs[i % threads].push(stores);
    }
    let handoff = Mutex::new(Handoff {
        runs: (0..len).map(|_| None).collect(),
        entries: (0..chunks.len()).map(|_| None).collect(),
        spare_runs,
        spare_entries: std::mem::take(&mut scratch.spare_entries),
    });
    let committer = Mutex::new(Committer { scratch, chunk });
    let next = AtomicUsize::new(0);
    let next_chunk = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);

    let work = |id: usize, worker: &mut Worker| -> Result<(), CoreError> {
        loop {
            let c = next_chunk.fetch_add(1, Ordering::Relaxed);
            if c >= chunks.len() {
                return Ok(());
            }
            let members = chunks[c];
            for (k, &i) in members.iter().enumerate() {
                if failed.load(Ordering::Relaxed) {
                    return Ok(());
                }
                statistic(&records[i], &mut worker.buffer);
                let outcome =
                    match worker
                        .buffer
                        .finish_record(spec, &mut worker.sums, replace_invalid)
                    {
                        Ok(o) => o,
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    };
                worker.counts.count(outcome);
                {
                    let mut h = lock(&handoff);
                    let fresh = h.spare_runs[id]
                        .pop()
                        .unwrap_or_else(|| vec![RunStore::default(); blocks]);
                    let sealed = std::mem::replace(&mut worker.buffer.runs, fresh);
                    if k + 1 == members.len() {
                        let fresh = h
                            .spare_entries
                            .pop()
                            .unwrap_or_else(|| EntrySums::new(spec));
                        h.entries[c] = Some(std::mem::replace(&mut worker.sums, fresh));
                    }
                    h.runs[c * chunk + k] = Some((id, sealed));
                }
                commit_ready(&committer, &handoff, len, &next);
            }
        }
    };
    // Worker `id` keeps its state (buffer, chunk sums) release after release.
    let done: Result<(), CoreError> = (0..threads)
        .into_par_iter()
        .try_for_each(|id| work(id, &mut lock(&pool[id])));
    done?;
    let mut c = committer
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    c.drain(&handoff, len, &next);
    let added = next.load(Ordering::Acquire);
    if added != len {
        return Err(CoreError::InvalidParameter {
            name: "ordered sums",
            value: added as f64,
            reason: "a record of the batch was not added (a defect of the wall)",
        });
    }
    let scratch = c.scratch;
    let mut workers: Vec<Worker> = pool
        .into_iter()
        .map(|w| {
            w.into_inner()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        })
        .collect();
    for w in &mut workers {
        *counts += std::mem::take(&mut w.counts);
    }
    scratch.workers = workers;
    let h = handoff
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    scratch.chunk_runs = h.spare_runs.into_iter().flatten().collect();
    scratch.spare_entries = h.spare_entries;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{SumScratch, clipped_sums, sequential_sums};
    use crate::wall::buffer::ContributionBuffer;
    use crate::wall::spec::ReleaseSpec;

    /// Records of uneven cost (so that workers seal them out of order and hand over backlogs),
    /// writing runs into one block and entries into another, some clipped: the ordered sums at
    /// 2, 3 and 4 threads equal the calling thread's bit for bit, release after release, and
    /// so do the diagnostics; for a batch of chunks of 64 (2,300 records) and one of chunks of
    /// 16 (300 records).
    #[test]
    fn uneven_records_sum_in_order_at_any_thread_count() {
        for n in [2_300, 300] {
            uneven_records_at_any_thread_count(n);
        }
    }

    fn uneven_records_at_any_thread_count(n: u64) {
        let mut b = ReleaseSpec::builder("ordered");
        let runs = b.vector("runs", 5_000, 0.5).unwrap();
        let entries = b.vector("entries", 300, 0.5).unwrap();
        let spec = b.build().unwrap();
        let records: Vec<u64> = (0..n).collect();
        let indices: Vec<usize> = (0..records.len()).rev().collect();
        let stat = |r: &u64, buf: &mut ContributionBuffer| {
            let r = *r as usize;
            // Uneven work: a few records cost far more than the others.
            let spin = if r.is_multiple_of(97) { 20_000 } else { 50 };
            let mut x = 0.0f64;
            for k in 0..spin {
                x += ((k + r) as f64).sin();
            }
            let start = (r * 37) % 4_900;
            let seg = buf.segment(runs, start, 60);
            for (k, v) in seg.iter_mut().enumerate() {
                *v = 0.1 * ((r + k) as f64).cos() + 1e-9 * x;
            }
            buf.push(entries, r % 300, 0.3 + (r as f64).sin());
            buf.push(entries, (r * 7) % 300, -0.2);
        };
        let mut scratch = SumScratch::default();
        let reference =
            sequential_sums(&records, &indices, &spec, stat, &mut scratch, true).unwrap();
        assert!(reference.clipped_records > 0);
        let expected: Vec<Vec<f64>> = scratch.sums().map(<[f64]>::to_vec).collect();
        for threads in [2, 3, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for _ in 0..2 {
                let got = pool.install(|| {
                    clipped_sums(&records, &indices, &spec, &stat, &mut scratch, true).unwrap()
                });
                assert_eq!(got, reference, "{threads} threads: diagnostics");
                for (g, e) in scratch.sums().zip(&expected) {
                    assert_eq!(g, &e[..], "{threads} threads: sums");
                }
            }
        }
    }
}
