//! Helpers shared by the tests: fresh directories, the L2 distance of two releases, BLR's
//! noise-free batch release through a store (the end-to-end neighbouring pattern: input on disk
//! -> convert -> store -> wall), LDA's per-record statistic as the driver writes it, and a
//! UCI-layout folder. Each test file includes it with `mod common;`.
#![allow(dead_code)] // each test file uses a part

use std::path::{Path, PathBuf};

use dp_core::{ContributionBuffer, PrivacyWall, SamplingScheme};
use vips_models::blr::{self, Blr, BlrConfig};
use vips_models::engine::{Privacy, VipsModel, fit_source};
use vips_models::lda::corpus::{Document, ResamplingKey};
use vips_models::lda::{ExpectedTopics, Lda, LdaBlocks, Topics};
use vips_models::store::RecordStore;

/// A UCI-layout folder (dp-sep's `SplitFolder`) in `dir`: `rows` in `data.txt` (the last
/// column the target, the others features), split 0 training on rows `0..train` and testing on
/// the rest.
pub fn write_uci_folder<const W: usize>(dir: &Path, rows: &[[f64; W]], train: usize) {
    let data: String = rows
        .iter()
        .map(|r| r.map(|v| format!("{v:e}")).join(" ") + "\n")
        .collect();
    std::fs::write(dir.join("data.txt"), data).unwrap();
    let features: String = (0..W - 1).map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.join("index_features.txt"), features).unwrap();
    std::fs::write(dir.join("index_target.txt"), format!("{}\n", W - 1)).unwrap();
    std::fs::write(dir.join("n_splits.txt"), "1\n").unwrap();
    let idx = |r: std::ops::Range<usize>| r.map(|i| format!("{i}\n")).collect::<String>();
    std::fs::write(dir.join("index_train_0.txt"), idx(0..train)).unwrap();
    std::fs::write(dir.join("index_test_0.txt"), idx(train..rows.len())).unwrap();
}

/// LDA's per-record statistic as the engine's driver hands it to the wall: the E-step with a
/// fresh scratch, a record it rejects replaced by zero.
pub fn lda_statistic<'a>(
    lda: &'a Lda,
    blocks: &'a LdaBlocks,
    natural: &'a ExpectedTopics,
) -> impl Fn(&Document, &mut ContributionBuffer) + Sync + 'a {
    move |doc, buf| {
        let mut scratch = lda.new_scratch();
        if lda
            .record_statistic(blocks, natural, doc, &mut scratch, buf)
            .is_err()
        {
            buf.reject_record("rejected");
        }
    }
}

/// A fresh temporary directory `PREFIX-NAME-*` for one test, removed when the guard is dropped
/// (at the end of the test, passing or failing).
pub fn dir(prefix: &str, name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("{prefix}-{name}-"))
        .tempdir()
        .unwrap()
}

/// A path `name` inside a fresh temporary directory (not created: the test writes it, or
/// expects it to be absent); the directory and all in it are removed when the guard is dropped.
/// Dereferences to the path.
#[derive(Debug)]
pub struct TempPath {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl TempPath {
    /// A path `name` in a fresh directory `PREFIX-*`.
    pub fn new(prefix: &str, name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{prefix}-"))
            .tempdir()
            .unwrap();
        Self {
            path: dir.path().join(name),
            _dir: dir,
        }
    }

    /// A file `name` with `bytes`, in a fresh directory `PREFIX-*`.
    pub fn file(prefix: &str, name: &str, bytes: &[u8]) -> Self {
        let t = Self::new(prefix, name);
        std::fs::write(&t.path, bytes).unwrap();
        t
    }
}

impl std::ops::Deref for TempPath {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempPath {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// The L2 distance of two vectors.
pub fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// BLR's public population in the neighbouring tests.
pub const BLR_PUBLIC_N: usize = 500;

/// `(h, P)` after one non-private batch step (rate 1, rho 1, population [`BLR_PUBLIC_N`])
/// over the BLR store at `store` of model dimension `dim`: the release without noise.
pub fn blr_store_release(store: &Path, dim: usize) -> (Vec<f64>, Vec<f64>) {
    let blr = Blr::new(BlrConfig::builder(dim).build().unwrap());
    let svi = blr::batch_config(BLR_PUBLIC_N, 1, Privacy::NonPrivate, Some(1)).unwrap();
    let source = blr.store_source(RecordStore::open(store).unwrap()).unwrap();
    let g = fit_source(&blr, source, &svi, |_, _| {})
        .unwrap()
        .result
        .global;
    (
        g.h().as_slice().to_vec(),
        g.likelihood_precision().as_slice().to_vec(),
    )
}

/// Asserts BLR's declared bounds between two releases `(h, P)`: `h` moves by at most 1/2,
/// `P` by 1/4, and something moves (the test can fail).
pub fn assert_blr_bounds(label: &str, a: &(Vec<f64>, Vec<f64>), b: &(Vec<f64>, Vec<f64>)) {
    let (dh, dp) = (dist(&a.0, &b.0), dist(&a.1, &b.1));
    let tol = 1.0 + 1e-9;
    assert!(dh <= 0.5 * tol, "{label}: h moved {dh} > 1/2");
    assert!(dp <= 0.25 * tol, "{label}: P moved {dp} > 1/4");
    assert!(dh > 0.0 || dp > 0.0, "{label}: nothing moved");
}

/// The released topic-word block (noise-free or noised) of `releases` walls' first releases
/// through the store path, with fixed topics: each wall reads the store at `path`.
pub fn store_releases(
    lda: &Lda,
    path: &Path,
    topics: &Topics,
    rate: f64,
    private: bool,
    releases: usize,
) -> (Vec<Vec<f64>>, f64) {
    let (spec, blocks) = lda.release_spec().unwrap();
    let natural = lda.expected_natural(topics).unwrap();
    let mut out = Vec::new();
    let mut sensitivity = 0.0;
    // One release per wall, each from its own seed: the geometric gaps of the Poisson sampler
    // couple neighbours within one release only (a neighbour's extra record may take one more
    // draw from the sampling stream, which shifts the later releases' batches).
    for seed in 0..releases as u64 {
        let source = lda
            .store_source(
                RecordStore::open(path).unwrap(),
                ResamplingKey::public_seed(4),
            )
            .unwrap();
        let builder = PrivacyWall::from_source(source)
            .sampling(SamplingScheme::poisson(rate).unwrap())
            .public_population_size(100)
            .seed(seed);
        let builder = if private {
            builder.epsilon_delta(10.0, 1e-5).noise_multiplier(2.0)
        } else {
            builder.non_private()
        };
        let mut wall = builder.build().unwrap();
        let r = wall
            .release(&spec, lda_statistic(lda, &blocks, &natural))
            .unwrap();
        let block = r.released(blocks.topics).unwrap();
        sensitivity = block.sensitivity;
        out.push(block.value.as_slice().to_vec());
    }
    (out, sensitivity)
}
