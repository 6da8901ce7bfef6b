//! A wall reading its records from a `RecordSource` releases exactly what a wall holding the
//! same records in a `Vec` releases (same seeds: bit-identical), and handles a source's failures
//! as documented (an undecodable record is replaced by zero; a failed read aborts and charges).

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dp_core::{
    ContributionBuffer, CoreError, PrivacyWall, RecordSource, ReleaseSpec, SamplingScheme,
    SourceError, VectorBlock, WallBuilder,
};

/// Records `[x, y]` derived from the index; `fail` marks records that cannot be decoded and
/// `io_fail` makes every read fail.
struct Derived {
    n: usize,
    undecodable: Option<usize>,
    io_fail: bool,
    /// Reads fail once this many have been made.
    fail_after: Option<usize>,
    reads: Arc<AtomicUsize>,
}

fn record(i: usize) -> [f64; 2] {
    let x = ((i * 7919) % 1000) as f64 / 250.0 - 2.0;
    [x, (i % 3) as f64 - 1.0]
}

impl RecordSource for Derived {
    type Record = [f64; 2];
    fn len(&self) -> usize {
        self.n
    }
    fn read(&self, index: usize) -> Result<[f64; 2], SourceError> {
        let before = self.reads.fetch_add(1, Ordering::Relaxed);
        if self.io_fail || self.fail_after.is_some_and(|m| before >= m) {
            return Err(SourceError::Io {
                file: PathBuf::from("corpus.store"),
                kind: std::io::ErrorKind::UnexpectedEof,
            });
        }
        if self.undecodable == Some(index) {
            return Err(SourceError::Record {
                reason: "corrupt payload",
            });
        }
        Ok(record(index))
    }
}

fn derived(n: usize) -> Derived {
    Derived {
        n,
        undecodable: None,
        io_fail: false,
        fail_after: None,
        reads: Arc::new(AtomicUsize::new(0)),
    }
}

fn spec() -> (ReleaseSpec, VectorBlock) {
    let mut b = ReleaseSpec::builder("source test");
    let v = b.vector("xy", 2, 1.5).unwrap();
    (b.build().unwrap(), v)
}

fn statistic(v: VectorBlock) -> impl Fn(&[f64; 2], &mut ContributionBuffer) + Sync {
    move |r, buf| buf.dense(v).copy_from_slice(r)
}

fn configure<R>(b: WallBuilder<R>, scheme: SamplingScheme, n: usize) -> WallBuilder<R> {
    let b = b
        .sampling(scheme)
        .epsilon_delta(2.0, 1e-5)
        .calibrate_for_releases(20)
        .seed(11);
    match scheme {
        SamplingScheme::Poisson { .. } => b.public_population_size(n),
        _ => b,
    }
}

/// Same seeds, in memory and from the source: identical releases, ledger and diagnostics.
#[test]
fn source_releases_are_bit_identical_to_in_memory() {
    let n = 5_000;
    let (spec, v) = spec();
    for scheme in [
        SamplingScheme::poisson(0.05).unwrap(),
        SamplingScheme::fixed_size(300).unwrap(),
        SamplingScheme::uniform_single(),
    ] {
        let records: Vec<[f64; 2]> = (0..n).map(record).collect();
        let mut memory = configure(PrivacyWall::builder(records), scheme, n)
            .build()
            .unwrap();
        let mut stored = configure(PrivacyWall::from_source(derived(n)), scheme, n)
            .build()
            .unwrap();
        for _ in 0..10 {
            let a = memory.release(&spec, statistic(v)).unwrap();
            let b = stored.release(&spec, statistic(v)).unwrap();
            assert_eq!(a.vector(v).unwrap(), b.vector(v).unwrap(), "{scheme:?}");
            assert_eq!(a.diagnostics(), b.diagnostics());
        }
        let mut out_a = [0.0; 2];
        let mut out_b = [0.0; 2];
        let st = statistic(v);
        memory.release_into(&spec, &st, &mut out_a).unwrap();
        stored.release_into(&spec, &st, &mut out_b).unwrap();
        assert_eq!(out_a, out_b);
        assert_eq!(memory.ledger().entries(), stored.ledger().entries());
        assert_eq!(
            memory.spent_epsilon().unwrap(),
            stored.spent_epsilon().unwrap()
        );
    }
}

/// Only the sampled records are read: about `q N` per release, not `N`.
#[test]
fn source_reads_only_the_batch() {
    let n = 1_000_000;
    let source = derived(n);
    let reads = Arc::clone(&source.reads);
    let (spec, v) = spec();
    let mut wall = configure(
        PrivacyWall::from_source(source),
        SamplingScheme::poisson(1e-3).unwrap(),
        n,
    )
    .build()
    .unwrap();
    for _ in 0..5 {
        wall.release(&spec, statistic(v)).unwrap();
    }
    // 5 releases of Binomial(10^6, 10^-3): mean 5,000, sd 71; 5,500 is 7 sd away.
    let reads = reads.load(Ordering::Relaxed);
    assert!((4_500..5_500).contains(&reads), "{reads} records read");
}

/// An undecodable record is replaced by zero (private) and fails a non-private release.
#[test]
fn undecodable_record_is_replaced_or_fails() {
    let n = 50;
    let (spec, v) = spec();
    let source = Derived {
        undecodable: Some(7),
        ..derived(n)
    };
    // Rate 1: every record is in every batch.
    let mut wall = configure(
        PrivacyWall::from_source(source),
        SamplingScheme::poisson(1.0).unwrap(),
        n,
    )
    .build()
    .unwrap();
    let release = wall.release(&spec, statistic(v)).unwrap();
    assert_eq!(release.diagnostics().replaced_records, 1);

    let source = Derived {
        undecodable: Some(7),
        ..derived(n)
    };
    let mut wall = PrivacyWall::from_source(source)
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .build()
        .unwrap();
    let err = wall.release(&spec, statistic(v)).unwrap_err();
    assert!(
        matches!(err, CoreError::InvalidContribution { .. }),
        "{err}"
    );
}

/// A failed read aborts the release, names the file and charges the release anyway.
#[test]
fn failed_read_aborts_and_charges() {
    let n = 100;
    let (spec, v) = spec();
    let source = Derived {
        io_fail: true,
        ..derived(n)
    };
    let mut wall = configure(
        PrivacyWall::from_source(source),
        SamplingScheme::poisson(0.5).unwrap(),
        n,
    )
    .build()
    .unwrap();
    let err = wall.release(&spec, statistic(v)).unwrap_err();
    assert!(matches!(err, CoreError::Source(SourceError::Io { .. })));
    assert!(err.to_string().contains("corpus.store"), "{err}");
    assert_eq!(wall.ledger().len(), 1);
    assert!(wall.ledger().entries()[0].notes.contains_key("aborted"));
    assert!(wall.spent_epsilon().unwrap() > 0.0);
    assert_eq!(wall.releases_made(), 1);
    let mut out = [0.0; 2];
    let err = wall
        .release_into(&spec, statistic(v), &mut out)
        .unwrap_err();
    assert!(matches!(err, CoreError::Source(_)));
    assert_eq!(wall.ledger().len(), 2);
}

/// `Vec` is a source of its own records.
#[test]
fn vec_is_a_source() {
    let v = vec![1u8, 2, 3];
    assert_eq!(RecordSource::len(&v), 3);
    assert_eq!(v.read(2), Ok(3));
    assert!(matches!(v.read(3), Err(SourceError::Record { .. })));
}

/// The audit's repeated releases: when the source fails in the third of five runs, the two runs
/// already observed and the aborted one are charged (one entry of three composed releases,
/// costing what three successful runs cost) before the error returns.
#[test]
fn repeated_releases_charge_what_was_observed_when_a_read_fails() {
    let n = 10;
    let (spec, v) = spec();
    let rate_one = || SamplingScheme::poisson(1.0).unwrap();
    let source = Derived {
        fail_after: Some(25),
        ..derived(n)
    };
    let mut wall = configure(PrivacyWall::from_source(source), rate_one(), n)
        .build()
        .unwrap();
    let mut observed = 0;
    let err = wall
        .release_repeatedly("audit", &spec, 5, statistic(v), |_| observed += 1)
        .unwrap_err();
    assert!(
        matches!(err, CoreError::Source(SourceError::Io { .. })),
        "{err}"
    );
    assert_eq!(observed, 2);
    assert_eq!(wall.releases_made(), 3);
    assert_eq!(wall.ledger().len(), 1);
    assert!(wall.ledger().entries()[0].notes["releases"].starts_with("3 of 5"));
    let mut three = configure(PrivacyWall::from_source(derived(n)), rate_one(), n)
        .build()
        .unwrap();
    three
        .release_repeatedly("audit", &spec, 3, statistic(v), |_| {})
        .unwrap();
    assert_eq!(
        wall.ledger().entries()[0].event,
        three.ledger().entries()[0].event
    );
    assert_eq!(
        wall.spent_epsilon().unwrap(),
        three.spent_epsilon().unwrap()
    );
}

/// A source that remembers the most records one `read_batch` call asked for.
struct Widest {
    inner: Derived,
    widest: Arc<AtomicUsize>,
}

impl RecordSource for Widest {
    type Record = [f64; 2];
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn read(&self, index: usize) -> Result<[f64; 2], SourceError> {
        self.inner.read(index)
    }
    fn read_batch(&self, indices: &[usize], out: &mut Vec<Result<[f64; 2], SourceError>>) {
        self.widest.fetch_max(indices.len(), Ordering::Relaxed);
        out.clear();
        out.extend(indices.iter().map(|&i| self.read(i)));
    }
}

/// A batch of several thousand records is read from a source a slice at a time (never the whole
/// batch at once), and its release is still bit-identical to the in-memory wall's, at one and two
/// threads, for entry writes (order-sensitive sums) and runs alike.
#[test]
fn large_batches_are_read_in_slices_with_the_same_sums() {
    let n = 12_000;
    let mut b = ReleaseSpec::builder("sliced source test");
    let v = b.vector("xy", 2, 1.5).unwrap();
    let m = b.matrix("runs", 3, 4, 2.0).unwrap();
    let spec = b.build().unwrap();
    let stat = move |r: &[f64; 2], buf: &mut ContributionBuffer| {
        buf.push(v, 0, r[0]);
        buf.push(v, 1, r[1] / 3.0);
        let start = ((r[0] + 2.0) * 2.0) as usize % 8;
        buf.push_segment(m, start, &[r[0] / 7.0, r[1] * 0.1 + 0.3]);
    };
    for threads in [1, 2] {
        for scheme in [
            SamplingScheme::poisson(0.9).unwrap(),
            SamplingScheme::fixed_size(9_000).unwrap(),
        ] {
            common::in_pool(threads, || {
                let records: Vec<[f64; 2]> = (0..n).map(record).collect();
                let mut memory = configure(PrivacyWall::builder(records), scheme, n)
                    .build()
                    .unwrap();
                let widest = Arc::new(AtomicUsize::new(0));
                let source = Widest {
                    inner: derived(n),
                    widest: Arc::clone(&widest),
                };
                let mut stored = configure(PrivacyWall::from_source(source), scheme, n)
                    .build()
                    .unwrap();
                for _ in 0..3 {
                    let a = memory.release(&spec, stat).unwrap();
                    let b = stored.release(&spec, stat).unwrap();
                    assert_eq!(a.vector(v).unwrap(), b.vector(v).unwrap(), "{scheme:?}");
                    assert_eq!(
                        a.matrix(m).unwrap().as_slice(),
                        b.matrix(m).unwrap().as_slice()
                    );
                    assert_eq!(a.diagnostics(), b.diagnostics());
                }
                let widest = widest.load(Ordering::Relaxed);
                assert!(
                    widest > 0 && widest <= 4096,
                    "one read asked for {widest} records"
                );
            });
        }
    }
}
