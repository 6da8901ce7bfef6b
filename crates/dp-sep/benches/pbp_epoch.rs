//! One PBP training epoch (SEP, gamma = N, shuffled order) on Wine (1439 x 11, 50 hidden units) and
//! Protein (41157 x 9, 100 hidden units), standard split 0. Skips a data set whose folder under
//! the data directory's `uci/` is absent.
//!
//! The data directory is `$DP_BAYES_DATA_DIR` when that variable is set (set but empty means
//! "embedded data only", which is how `cargo xtask bench --quick` runs it: nothing is benchmarked
//! here then), otherwise `../shared/data` next to the workspace.

use std::path::PathBuf;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use dp_sep::data::Standardizer;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::pbp::{PbpModel, records};
use dp_sep::sep::run_sep;
use dp_sep::{SamplingScheme, SepConfig};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

/// The real-data directory, or `None` when the caller asked for embedded data only.
fn data_dir() -> Option<PathBuf> {
    match std::env::var_os("DP_BAYES_DATA_DIR") {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data")),
    }
}

fn bench_epoch(c: &mut Criterion) {
    let Some(data) = data_dir() else {
        eprintln!(
            "skipping the PBP epoch benches: DP_BAYES_DATA_DIR is empty (embedded data only)"
        );
        return;
    };
    let root = data.join("uci");
    for (name, hidden) in [
        ("wine-quality-red", 50),
        ("protein-tertiary-structure", 100),
    ] {
        let dir = root.join(name);
        if !dir.exists() {
            eprintln!("skipping {name}: {} is absent", dir.display());
            continue;
        }
        let data = SplitFolder::load(&dir).expect("load");
        let (train, _) = data.split(0).expect("split");
        let recs = records(&Standardizer::fit(&train).transform(&train));
        let model = PbpModel::new(train.dim(), &[hidden]);
        let mut rng = ChaCha20Rng::seed_from_u64(0);
        let state = model.initial_state(recs.len(), &mut rng).expect("state");
        let config = SepConfig::builder().build().unwrap();
        let mut group = c.benchmark_group("pbp_sep_epoch");
        group.sample_size(10);
        group.bench_function(name, |b| {
            b.iter_batched(
                || (model.clone(), state.clone(), ChaCha20Rng::seed_from_u64(1)),
                |(mut m, mut s, mut r)| {
                    run_sep(
                        &mut m,
                        &mut s,
                        &recs,
                        &config,
                        1,
                        SamplingScheme::ShuffledEpoch,
                        &mut r,
                    )
                    .expect("epoch")
                },
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, bench_epoch);
criterion_main!(benches);
