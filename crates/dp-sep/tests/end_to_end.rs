//! End-to-end neighbouring tests (issue 16): from the public entry point a user calls (files on
//! disk -> loading -> preprocessing -> the DP-SEP step's release), two neighbouring data sets
//! under replace-one, the noise switched off through the wall's test seam
//! (`FactorWall::noise_free`) with every other source of randomness equal. Each release must move by
//! at most its declared sensitivity `2 gamma C / N` when the changed record is drawn, and not at
//! all when it is not (the subsampling amplification relies on exactly that).

mod common;
use common::TempDirPath;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use dp_core::RngPolicy;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::dpsep::dp_sep_step;
use dp_sep::natural::l2_norm;
use dp_sep::pbp::{Labelled, PbpConfig, PbpPrivacy, Prepared, Scaling, prepare};
use dp_sep::{
    Clipping, DpSepConfig, FactorWall, SamplingScheme, SepModel, SepState, StepCounts, WallPlan,
};

const N: usize = 40;
const N_TRAIN: usize = 32;

fn temp_dir(tag: &str) -> TempDirPath {
    TempDirPath::new(&format!("dp_sep_e2e_{tag}"))
}

/// A UCI-layout folder: 3 features in `[0, 10]`, target in `[0, 100]`, one split (first 32 rows
/// train). `edit` may change the raw rows before they are written.
fn write_uci(tag: &str, edit: impl Fn(&mut Vec<[f64; 4]>)) -> TempDirPath {
    let mut rows: Vec<[f64; 4]> = (0..N)
        .map(|i| {
            let t = i as f64;
            let x = [
                (t * 0.37) % 10.0,
                (t * 1.91) % 10.0,
                (t * 2.53 + 1.0) % 10.0,
            ];
            [
                x[0],
                x[1],
                x[2],
                20.0 + 3.0 * x[0] - 2.0 * x[1] + x[2] * x[2] * 0.5,
            ]
        })
        .collect();
    edit(&mut rows);
    let dir = temp_dir(tag);
    let text: String = rows
        .iter()
        .map(|r| format!("{} {} {} {}\n", r[0], r[1], r[2], r[3]))
        .collect();
    fs::write(dir.join("data.txt"), text).unwrap();
    fs::write(dir.join("index_features.txt"), "0\n1\n2\n").unwrap();
    fs::write(dir.join("index_target.txt"), "3\n").unwrap();
    fs::write(dir.join("n_splits.txt"), "1\n").unwrap();
    fs::write(dir.join("n_hidden.txt"), "4\n").unwrap();
    fs::write(dir.join("n_epochs.txt"), "2\n").unwrap();
    let train: String = (0..N_TRAIN).map(|i| format!("{i}\n")).collect();
    let test: String = (N_TRAIN..N).map(|i| format!("{i}\n")).collect();
    fs::write(dir.join("index_train_0.txt"), train).unwrap();
    fs::write(dir.join("index_test_0.txt"), test).unwrap();
    dir
}

/// The ranges file a data owner would commit for the folder of [`write_uci`] (documented bounds,
/// not the data's).
fn write_ranges(dir: &Path) -> PathBuf {
    let path = dir.join("ranges.json");
    fs::write(
        &path,
        r#"{"provenance": "test fixture: the generator's documented bounds",
            "columns": ["a", "b", "c", "y"],
            "ranges": {"a": {"lower": 0, "upper": 10}, "b": {"lower": 0, "upper": 10},
                       "c": {"lower": 0, "upper": 10}, "y": {"lower": 0, "upper": 100}}}"#,
    )
    .unwrap();
    path
}

/// Loading and preprocessing through `run_pbp`'s public preprocessing entry point for a private
/// run: the model, the public initial state and the training records the wall protects.
fn pbp_prepared(dir: &Path) -> Prepared {
    let data = SplitFolder::load(dir).unwrap();
    let (train, _test) = data.split(0).unwrap();
    let ranges = data.public_ranges(write_ranges(dir)).unwrap();
    let config = PbpConfig::builder()
        .hidden(vec![4])
        .scaling(Scaling::Declared(ranges))
        .clip(1.0)
        .privacy(
            PbpPrivacy::builder()
                .budget(1.0, 1e-5)
                .rng(RngPolicy::Seeded { seed: 1 })
                .population(N_TRAIN)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    prepare(&train, &config).unwrap()
}

fn diff(a: &[f64], b: &[f64]) -> f64 {
    l2_norm(&a.iter().zip(b).map(|(p, q)| p - q).collect::<Vec<_>>())
}

/// Runs `steps` coupled DP-SEP steps on `a` and `b` (same sampling seed, no noise), continuing
/// from `a`'s state, and checks every step's release. `changed` is the record that differs.
/// Returns how many steps drew it and the largest move such a step made.
#[allow(clippy::too_many_arguments)]
fn coupled_steps<M: SepModel + Sync>(
    model: &M,
    state: SepState,
    a: Vec<M::Record>,
    b: Vec<M::Record>,
    changed: usize,
    config: &DpSepConfig,
    clip: f64,
    sampling: SamplingScheme,
    steps: u64,
    seed: u64,
) -> (u64, f64)
where
    M::Record: Clone + std::fmt::Debug + Send,
{
    let n = state.n();
    let bound = 2.0 * config.gamma_for(n) * clip / n as f64;
    // Compared by its printed form, so that a NaN record is recognised too.
    let marker = format!("{:?}", b[changed]);
    let plan = WallPlan::builder()
        .population(n)
        .dim(model.dim())
        .budget(1.0, 1e-5)
        .clip(clip)
        .steps(steps)
        .sampling(sampling)
        .rng(RngPolicy::Seeded { seed })
        .build()
        .unwrap();
    let mut wall_a = FactorWall::noise_free(a, &plan).unwrap();
    let mut wall_b = FactorWall::noise_free(b.clone(), &plan).unwrap();
    // Same seed and records as `wall_b`: draws the same record at every step, and tells us which.
    let mut probe = FactorWall::noise_free(b, &plan).unwrap();
    let mut state = state;
    let (mut drawn_changed, mut largest) = (0, 0.0f64);
    for step in 0..steps {
        let hit = AtomicBool::new(false);
        probe
            .release(|r: &M::Record, _| {
                if format!("{r:?}") == marker {
                    hit.store(true, Ordering::Relaxed);
                }
            })
            .unwrap();
        let mut sa = state.clone();
        let mut sb = state.clone();
        let mut counts = StepCounts::default();
        dp_sep_step(model, &mut sa, &mut wall_a, config, &mut counts).unwrap();
        dp_sep_step(model, &mut sb, &mut wall_b, config, &mut counts).unwrap();
        let moved = diff(&sa.posterior(), &sb.posterior());
        if hit.load(Ordering::Relaxed) {
            drawn_changed += 1;
            largest = largest.max(moved);
            assert!(
                moved <= bound * (1.0 + 1e-9),
                "step {step}: the changed record moved the release by {moved} > 2 gamma C / N = {bound}"
            );
        } else {
            assert!(
                moved == 0.0,
                "step {step}: a step that did not draw the changed record moved the release by {moved} \
                 (= {:.3} x the declared sensitivity 2 gamma C / N = {bound}; it must be 0)",
                moved / bound
            );
        }
        state = sa;
    }
    (drawn_changed, largest)
}

fn pbp_neighbours(tag: &str, edit: impl Fn(&mut Vec<[f64; 4]>)) {
    let pa = pbp_prepared(&write_uci(&format!("{tag}_a"), |_| {}));
    let pb = pbp_prepared(&write_uci(&format!("{tag}_b"), edit));
    assert_eq!(pa.records.len(), N_TRAIN);
    // The public initial state does not depend on the data.
    assert_eq!(pa.state, pb.state);
    let (model, state) = (pa.model, pa.state);
    let (a, b): (Vec<Labelled>, Vec<Labelled>) = (pa.records, pb.records);
    let config = DpSepConfig::builder().gamma(5.0).epochs(1).build().unwrap();
    // 200 steps with q = 1/32: record 5 is drawn at least once except with probability
    // (31/32)^200 < 0.2%; the seed is fixed, so the test is deterministic.
    let (drawn, largest) = coupled_steps(
        &model,
        state,
        a,
        b,
        5,
        &config,
        1.0,
        SamplingScheme::UniformSingle,
        200,
        11,
    );
    assert!(drawn > 0, "the changed record was never drawn");
    assert!(largest > 0.0, "the changed record never changed a release");
}

#[test]
fn pbp_one_target_replaced_by_1e3_moves_each_release_within_its_sensitivity() {
    pbp_neighbours("pbp_target", |rows| rows[5][3] = 1e3);
}

#[test]
fn pbp_one_feature_row_replaced_by_huge_values_moves_each_release_within_its_sensitivity() {
    pbp_neighbours("pbp_features", |rows| {
        rows[5][..3].copy_from_slice(&[1e12, -1e9, 1e15])
    });
}

#[test]
fn pbp_private_run_without_declared_ranges_is_refused() {
    let dir = write_uci("pbp_refused", |_| {});
    let data = SplitFolder::load(&dir).unwrap();
    let (train, _test) = data.split(0).unwrap();
    let config = PbpConfig::builder()
        .clip(1.0)
        .privacy(
            PbpPrivacy::builder()
                .budget(1.0, 1e-5)
                .rng(RngPolicy::Seeded { seed: 1 })
                .population(N_TRAIN)
                .build()
                .unwrap(),
        )
        .build()
        .unwrap();
    let err = prepare(&train, &config).unwrap_err();
    assert!(
        matches!(err, dp_sep::SepError::MissingPublicInput { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("--ranges"), "{err}");
}

#[test]
fn ranges_file_missing_a_column_names_it() {
    let dir = write_uci("pbp_missing_range", |_| {});
    let data = SplitFolder::load(&dir).unwrap();
    let path = dir.join("short.json");
    fs::write(
        &path,
        r#"{"columns": ["a", "b", "c", "y"], "ranges": {"a": {"lower": 0, "upper": 1},
            "b": {"lower": 0, "upper": 1}, "y": {"lower": 0, "upper": 1}}}"#,
    )
    .unwrap();
    let err = data.public_ranges(&path).unwrap_err().to_string();
    assert!(err.contains("\"c\"") && err.contains("short.json"), "{err}");
}

/// Issue 16 item 4: the accountant, the sampler and the output depend on the declared population
/// only. Walls over 3, 10 and 25 records declared as N = 10 calibrate the same noise and report
/// the same epsilon and population; with fewer records than declared some draws hit an empty
/// slot and release exactly zero (noise off); with more, only N of them are ever drawn.
#[test]
fn declared_population_alone_sets_sampling_and_accounting() {
    let plan = WallPlan::builder()
        .population(10)
        .dim(1)
        .budget(1.0, 1e-5)
        .clip(100.0)
        .steps(400)
        .sampling(SamplingScheme::UniformSingle)
        .rng(RngPolicy::Seeded { seed: 5 })
        .build()
        .unwrap();
    let walls: Vec<FactorWall<f64>> = [3usize, 10, 25]
        .iter()
        .map(|&n| FactorWall::new((1..=n).map(|i| i as f64).collect(), &plan).unwrap())
        .collect();
    for w in &walls {
        assert_eq!(w.population(), 10);
        assert_eq!(w.noise_multiplier(), walls[0].noise_multiplier());
        assert_eq!(
            w.epsilon_spent().unwrap(),
            walls[0].epsilon_spent().unwrap()
        );
    }
    for (n, seen_max) in [(3usize, 3), (25, 10)] {
        let mut w = FactorWall::noise_free((1..=n).map(|i| i as f64).collect(), &plan).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        let mut zeros = 0;
        let factor = w.factor();
        for _ in 0..plan.steps() {
            let v = w
                .release(|x: &f64, buf| buf.dense(factor)[0] = *x)
                .unwrap()
                .0[0];
            if v == 0.0 {
                zeros += 1;
            } else {
                seen.insert(v as u64);
            }
        }
        assert_eq!(seen.len(), seen_max, "records drawn with {n} records");
        if n < 10 {
            // P(a slot is empty) = 7/10 per step; 400 steps give about 280 zeros.
            assert!(zeros > 200, "{zeros}");
        } else {
            assert_eq!(zeros, 0);
        }
    }
}

/// MoG from the public entry point (the synthetic generator the `mog` example uses, its
/// configured size `N` public) through coupled noise-free DP-SEP steps: one point replaced by
/// an adversarial one moves each release by at most `2 gamma C / N`, and only when drawn.
fn mog_neighbours(adversarial: Vec<f64>) {
    mog_neighbours_sampled(adversarial, SamplingScheme::UniformSingle, 300);
}

/// The MoG runs' public start: `n` points from the synthetic generator (seed 2; two components
/// in two dimensions), the model, and the SEP state with a public initial factor separating the
/// components (as the example's `N(u_j, I)` start).
fn mog_start(n: usize) -> (dp_sep::mog::MogData, dp_sep::mog::MogModel, SepState) {
    use dp_sep::mog::{Family, MogModel, generate};
    let data = generate(
        n,
        2,
        2,
        0.5,
        &mut <rand::rngs::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(2),
    );
    let model = MogModel::new(2, 2, 0.5, Family::Full).unwrap();
    let prior = model.prior();
    let mut factor = vec![0.0; prior.len()];
    factor[0] = -1.0 / n as f64;
    factor[prior.len() / 2] = 1.0 / n as f64;
    let state = SepState::new(prior, factor, n).unwrap();
    (data, model, state)
}

fn mog_neighbours_sampled(adversarial: Vec<f64>, sampling: SamplingScheme, steps: u64) -> u64 {
    let n = 60;
    let (data, model, state) = mog_start(n);
    let mut other = data.points.clone();
    other[7] = adversarial;
    let config = DpSepConfig::builder().gamma(3.0).epochs(1).build().unwrap();
    // Independent draws, 300 steps with q = 1/60: record 7 is drawn at least once except
    // with probability (59/60)^300 < 0.7%; fixed seed, so deterministic.
    let (drawn, largest) = coupled_steps(
        &model,
        state,
        data.points,
        other,
        7,
        &config,
        0.5,
        sampling,
        steps,
        4,
    );
    assert!(
        drawn > 0 && largest > 0.0,
        "drawn {drawn}, largest {largest}"
    );
    drawn
}

/// The shuffled epoch through the same wall: over two epochs the changed record is drawn
/// exactly once per epoch, each time moving the release by at most `2 gamma C / N`.
#[test]
fn mog_shuffled_epochs_draw_the_changed_record_once_per_epoch() {
    let drawn = mog_neighbours_sampled(vec![1e9, -1e12], SamplingScheme::ShuffledEpoch, 120);
    assert_eq!(drawn, 2);
}

/// Fixed-size batches (replace-one, issue 18): `S = 10` of the `N = 60` slots per step, drawn
/// without replacement by the same wall. A batch's release is its clipped sum over the public `S`
/// (sensitivity `2C / S`) entering the posterior with weight `S gamma / N`, so the bound on the
/// posterior is again `2 gamma C / N`, and a step whose batch misses the changed record must not
/// move at all. With `q = 1/6` per step, 60 steps draw record 7 about 10 times (fixed seed).
#[test]
fn mog_fixed_size_batches_move_each_release_within_its_sensitivity() {
    let sampling = SamplingScheme::fixed_size(10).unwrap();
    let drawn = mog_neighbours_sampled(vec![1e9, -1e12], sampling, 60);
    assert!((3..=30).contains(&drawn), "{drawn}");
}

#[test]
fn mog_one_point_replaced_by_a_far_outlier_moves_each_release_within_its_sensitivity() {
    mog_neighbours(vec![1e9, -1e12]);
}

/// A malformed record (NaN) contributes zero inside the release: still bounded, still released.
#[test]
fn mog_one_point_replaced_by_nan_moves_each_release_within_its_sensitivity() {
    mog_neighbours(vec![f64::NAN, 0.0]);
}

// ---- DP-SEP with Poisson batches (issue 19): add/remove-one ----

/// Runs `steps` coupled noise-free DP-SEP steps with a Poisson batch of expected size `s` on `a`
/// and on `b` = `a` plus one record appended last, continuing from `a`'s state. At every step the
/// wall's release (the batch's clipped sum divided by the public `S`), recomputed through twin
/// walls with the same seed and statistic, must move by at most `C / S`, and the posterior by at
/// most `S gamma / N x C / S = gamma C / N`, when the added record is in the batch, and not at all
/// otherwise. Returns how many steps drew it and the largest normalised release move.
///
/// The coupling: the Poisson sampler draws the same batch of `a`'s records from the same seed
/// whether or not a last record is appended, **for one release**; after a release that drew
/// `a`'s last record the two streams can drift apart (the longer population consumes one more
/// uniform). So every step uses fresh walls seeded `seed + step` (the sampling distribution and
/// the sensitivity are per release; nothing here depends on sharing a stream across steps).
#[allow(clippy::too_many_arguments)]
fn coupled_batch_steps<M: SepModel + Sync>(
    model: &M,
    state: SepState,
    a: Vec<M::Record>,
    added: M::Record,
    s: usize,
    config: &DpSepConfig,
    clip: f64,
    steps: u64,
    seed: u64,
) -> (u64, f64)
where
    M::Record: Clone + std::fmt::Debug + Send,
{
    let n = state.n();
    let release_bound = clip / s as f64;
    let posterior_bound = config.gamma_for(n) * clip / n as f64;
    let marker = format!("{added:?}");
    let mut b = a.clone();
    b.push(added);
    let plan = |step: u64| {
        WallPlan::builder()
            .population(n)
            .dim(model.dim())
            .budget(1.0, 1e-5)
            .clip(clip)
            .steps(1)
            .sampling(
                dp_sep::Batching::poisson(s)
                    .unwrap()
                    .sampling_for(n)
                    .unwrap(),
            )
            .rng(RngPolicy::Seeded { seed: seed + step })
            .build()
            .unwrap()
    };
    let mut state = state;
    let (mut drawn, mut largest) = (0, 0.0f64);
    for step in 0..steps {
        let plan = plan(step);
        let mut wall_a = FactorWall::noise_free(a.clone(), &plan).unwrap();
        let mut wall_b = FactorWall::noise_free(b.clone(), &plan).unwrap();
        // Twins with the same seed: the released average itself, with DP-SEP's statistic.
        let mut twin_a = FactorWall::noise_free(a.clone(), &plan).unwrap();
        let mut twin_b = FactorWall::noise_free(b.clone(), &plan).unwrap();
        let mut probe = FactorWall::noise_free(b.clone(), &plan).unwrap();
        assert_eq!(wall_a.expected_batch_size(), s as f64);
        let hit = AtomicBool::new(false);
        probe
            .release(|r: &M::Record, _| {
                if format!("{r:?}") == marker {
                    hit.store(true, Ordering::Relaxed);
                }
            })
            .unwrap();
        // DP-SEP's statistic on the public cavity of the current state (as in `dp_sep_step`):
        // the intermediate factor (value clipping) or its innovation against the current
        // shared factor (innovation clipping).
        let mut cavity = state.cavity();
        if !model.is_valid(&cavity) {
            model.repair(&mut cavity);
        }
        let whitened = config.clipping() == Clipping::Whitened;
        let origin: Vec<f64> = match config.clipping() {
            Clipping::Value => cavity.clone(),
            Clipping::Innovation | Clipping::Whitened => cavity
                .iter()
                .zip(state.factor())
                .map(|(c, f)| c + f)
                .collect(),
        };
        let metric = model.metric(&cavity);
        let mut released = Vec::new();
        for twin in [&mut twin_a, &mut twin_b] {
            let factor = twin.factor();
            let (m, _) = twin
                .release(|r: &M::Record, buf| {
                    let out = buf.dense(factor);
                    if model.tilted(&cavity, r, out) {
                        out.iter_mut().zip(&origin).for_each(|(t, o)| *t -= o);
                        if whitened {
                            metric.whiten(out);
                            out.iter_mut().for_each(|v| *v *= n as f64);
                        }
                    } else {
                        buf.reject_record("no tilted moments");
                    }
                })
                .unwrap();
            released.push(m.to_vec());
        }
        let release_moved = diff(&released[0], &released[1]);
        let mut sa = state.clone();
        let mut sb = state.clone();
        let mut counts = StepCounts::default();
        dp_sep_step(model, &mut sa, &mut wall_a, config, &mut counts).unwrap();
        dp_sep_step(model, &mut sb, &mut wall_b, config, &mut counts).unwrap();
        // Whitened clipping bounds the move in the cavity's metric: the posterior moves by
        // (S gamma / N) L^-T dm / N with ||dm|| <= C / S, so N ||L^T d theta|| <= gamma C / N
        // (docs/dp-sep.md, "Whitened clipping").
        let moved = if whitened {
            let mut d: Vec<f64> = sa
                .posterior()
                .iter()
                .zip(sb.posterior())
                .map(|(x, y)| x - y)
                .collect();
            metric.whiten(&mut d);
            d.iter().map(|v| v * v).sum::<f64>().sqrt() * n as f64
        } else {
            diff(&sa.posterior(), &sb.posterior())
        };
        if hit.load(Ordering::Relaxed) {
            drawn += 1;
            largest = largest.max(release_moved);
            assert!(
                release_moved <= release_bound * (1.0 + 1e-9),
                "step {step}: the added record moved the release by {release_moved} > C / S = {release_bound}"
            );
            assert!(
                moved <= posterior_bound * (1.0 + 1e-9),
                "step {step}: the added record moved the posterior by {moved} > gamma C / N = {posterior_bound}"
            );
        } else {
            assert!(
                release_moved == 0.0 && moved == 0.0,
                "step {step}: a batch without the added record moved the release by \
                 {release_moved} and the posterior by {moved} (both must be 0)"
            );
        }
        state = sa;
    }
    (drawn, largest)
}

/// PBP from files on disk: the training split of `a` plus one adversarial row (appended as the
/// last training record) moves each batch release by at most `C / S`.
fn pbp_batch_neighbours(tag: &str, extra: [f64; 4], clipping: Clipping) {
    let pa = pbp_prepared(&write_uci(&format!("{tag}_a"), |_| {}));
    // The same folder with one more row whose index is the last of the training split.
    let dir_b = write_uci(&format!("{tag}_b"), |rows| rows.push(extra));
    let train: String = (0..N_TRAIN)
        .chain(std::iter::once(N))
        .map(|i| format!("{i}\n"))
        .collect();
    fs::write(dir_b.join("index_train_0.txt"), train).unwrap();
    let pb = pbp_prepared(&dir_b);
    assert_eq!(pb.records.len(), N_TRAIN + 1);
    assert_eq!(
        pa.state, pb.state,
        "the public initial state is data-independent"
    );
    let added = pb.records[N_TRAIN].clone();
    assert_eq!(&pb.records[..N_TRAIN], &pa.records[..]);
    let config = DpSepConfig::builder()
        .gamma(5.0)
        .batching(dp_sep::Batching::poisson(4).unwrap())
        .clipping(clipping)
        .build()
        .unwrap();
    // q = 4/32: the added record is in some batch of 80 except with probability
    // (7/8)^80 < 3e-5; fixed seed, deterministic.
    let (drawn, largest) = coupled_batch_steps(
        &pa.model, pa.state, pa.records, added, 4, &config, 1.0, 80, 13,
    );
    assert!(drawn > 0, "the added record was never in a batch");
    assert!(largest > 0.0, "the added record never changed a release");
}

#[test]
fn pbp_batch_plus_one_huge_target_moves_each_release_within_c_over_s() {
    pbp_batch_neighbours("pbp_batch_target", [5.0, 5.0, 5.0, 1e3], Clipping::Value);
}

#[test]
fn pbp_batch_whitened_plus_one_huge_target_moves_each_release_within_c_over_s() {
    pbp_batch_neighbours(
        "pbp_batch_whitened_target",
        [5.0, 5.0, 5.0, 1e3],
        Clipping::Whitened,
    );
}

#[test]
fn pbp_batch_whitened_plus_one_huge_feature_row_moves_each_release_within_c_over_s() {
    pbp_batch_neighbours(
        "pbp_batch_whitened_features",
        [1e12, -1e9, 1e15, 50.0],
        Clipping::Whitened,
    );
}

#[test]
fn pbp_batch_plus_one_huge_feature_row_moves_each_release_within_c_over_s() {
    pbp_batch_neighbours(
        "pbp_batch_features",
        [1e12, -1e9, 1e15, 50.0],
        Clipping::Value,
    );
}

/// MoG through the synthetic generator: one outlier or a malformed point added. `moves`: whether
/// the added point's factor is finite (it then moves some release by a positive amount within
/// `C / S`); a point whose factor is non-finite or rejected is replaced by zero inside the wall,
/// so under add/remove-one adding it changes no release at all.
fn mog_batch_neighbours(added: Vec<f64>, moves: bool) {
    mog_batch_neighbours_clipped(added, moves, Clipping::Value);
}

fn mog_batch_neighbours_clipped(added: Vec<f64>, moves: bool, clipping: Clipping) {
    let n = 60;
    let (data, model, state) = mog_start(n);
    let config = DpSepConfig::builder()
        .gamma(3.0)
        .batching(dp_sep::Batching::poisson(6).unwrap())
        .clipping(clipping)
        .build()
        .unwrap();
    // q = 1/10 over 100 steps: never drawn with probability 0.9^100 < 3e-5; fixed seed.
    let (drawn, largest) =
        coupled_batch_steps(&model, state, data.points, added, 6, &config, 0.5, 100, 4);
    assert!(drawn > 0, "the added point was never in a batch");
    assert_eq!(largest > 0.0, moves, "largest move {largest}");
}

#[test]
fn mog_batch_plus_one_outlier_moves_each_release_within_c_over_s() {
    mog_batch_neighbours(vec![40.0, -30.0], true);
}

/// A far outlier (non-finite responsibilities) and a NaN point are replaced by zero: adding
/// either moves nothing.
#[test]
fn mog_batch_plus_one_far_outlier_or_nan_point_moves_nothing() {
    mog_batch_neighbours(vec![1e9, -1e12], false);
    mog_batch_neighbours(vec![f64::NAN, 0.0], false);
}

// ---- Innovation clipping (issue 19): the wall clips theta_fn - theta_f ----
//
// The statistic is each record's intermediate factor minus the current shared factor (public:
// post-processing of earlier releases), clipped to `C`; the factor moves by the released average
// and is not clipped. The bounds are the value-clipped ones: `C / S` on a Poisson batch's release
// (add/remove-one), `2 gamma C / N` on the posterior for one record or a fixed-size batch
// (replace-one), and exactly zero when the changed record is not drawn. The states the steps
// start from are innovation runs (factors outside the ball of radius `C` included).

#[test]
fn pbp_batch_innovation_plus_one_huge_target_moves_each_release_within_c_over_s() {
    pbp_batch_neighbours(
        "pbp_innov_target",
        [5.0, 5.0, 5.0, 1e3],
        Clipping::Innovation,
    );
}

#[test]
fn pbp_batch_innovation_plus_one_huge_feature_row_moves_each_release_within_c_over_s() {
    pbp_batch_neighbours(
        "pbp_innov_features",
        [1e12, -1e9, 1e15, 50.0],
        Clipping::Innovation,
    );
}

#[test]
fn mog_batch_innovation_plus_one_outlier_moves_each_release_within_c_over_s() {
    mog_batch_neighbours_clipped(vec![40.0, -30.0], true, Clipping::Innovation);
}

/// A point whose factor is non-finite (a far outlier, NaN) is replaced by zero inside the wall:
/// a zero innovation, so adding it changes no release at all.
#[test]
fn mog_batch_innovation_plus_one_far_outlier_or_nan_point_moves_nothing() {
    mog_batch_neighbours_clipped(vec![1e9, -1e12], false, Clipping::Innovation);
    mog_batch_neighbours_clipped(vec![f64::NAN, 0.0], false, Clipping::Innovation);
}

/// Whitened clipping on the mixture (full covariances): an added outlier moves each release by at
/// most `C / S` in the cavity's metric and the posterior by at most `gamma C / N` there; a point
/// whose whitened innovation is non-finite is replaced by zero and moves nothing.
#[test]
fn mog_batch_whitened_plus_one_outlier_moves_each_release_within_c_over_s() {
    mog_batch_neighbours_clipped(vec![40.0, -30.0], true, Clipping::Whitened);
    mog_batch_neighbours_clipped(vec![f64::NAN, 0.0], false, Clipping::Whitened);
}

/// Replace-one with innovation clipping: one record per step and a fixed-size batch of `S = 10`
/// of `N = 60` slots; record 7 replaced by a far outlier moves the posterior by at most
/// `2 gamma C / N` when drawn and by nothing otherwise.
#[test]
fn mog_innovation_replace_one_moves_each_release_within_2_gamma_c_over_n() {
    for (sampling, steps) in [
        (SamplingScheme::UniformSingle, 300),
        (SamplingScheme::fixed_size(10).unwrap(), 60),
    ] {
        let n = 60;
        let (data, model, state) = mog_start(n);
        let mut other = data.points.clone();
        other[7] = vec![1e3, -2e3];
        let config = DpSepConfig::builder()
            .gamma(3.0)
            .clipping(Clipping::Innovation)
            .build()
            .unwrap();
        let (drawn, largest) = coupled_steps(
            &model,
            state,
            data.points,
            other,
            7,
            &config,
            0.5,
            sampling,
            steps,
            4,
        );
        assert!(
            drawn > 0 && largest > 0.0,
            "{sampling:?}: drawn {drawn}, largest {largest}"
        );
    }
}
