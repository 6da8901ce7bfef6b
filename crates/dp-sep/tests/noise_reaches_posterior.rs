//! The privacy noise is written back: the DP-SEP posterior equals the non-private (clipped) SEP
//! posterior plus exactly `(gamma / N)` times the wall's noise, and it keeps the noise in later
//! steps (the authors' PBP code computed the noised parameters and discarded them).

mod common;

use dp_core::RngPolicy;
use dp_sep::dpsep::dp_sep_step;
use dp_sep::mog::Family;
use dp_sep::sep::sep_step;
use dp_sep::{DpSepConfig, FactorWall, SepConfig, StepCounts, WallPlan};

fn wall(
    records: Vec<Vec<f64>>,
    dim: usize,
    clip: f64,
    seed: u64,
    steps: u64,
) -> FactorWall<Vec<f64>> {
    let population = records.len();
    FactorWall::new(
        records,
        &WallPlan::builder()
            .population(population)
            .dim(dim)
            .budget(1.0, 1e-5)
            .clip(clip)
            .steps(steps)
            .sampling(dp_sep::SamplingScheme::UniformSingle)
            .rng(RngPolicy::Seeded { seed })
            .build()
            .unwrap(),
    )
    .unwrap()
}

#[test]
fn noised_posterior_is_the_private_posterior() {
    let n = 50;
    // Identical records, so the drawn index does not matter.
    let records = vec![vec![0.4, -0.7]; n];
    let (model, state) = common::mog_state(n, &[0.5, -0.3, 1.0, 0.2], Family::Full);
    let (gamma, clip) = (10.0, 100.0); // C large: nothing is clipped, the algebra is exact
    let config = DpSepConfig::builder()
        .gamma(gamma)
        .epochs(1)
        .build()
        .unwrap();
    let mut private = state.clone();
    let mut w = wall(records.clone(), 12, clip, 9, 1);
    dp_sep_step(
        &model,
        &mut private,
        &mut w,
        &config,
        &mut StepCounts::default(),
    )
    .unwrap();

    let mut plain = state.clone();
    let sep = SepConfig::builder()
        .gamma(gamma)
        .clip(clip)
        .build()
        .unwrap();
    sep_step(
        &model,
        &mut plain,
        &records[0],
        &sep,
        &mut StepCounts::default(),
    );

    // The same wall seed with a zero statistic yields the noise alone.
    let mut noise_wall = wall(records, 12, clip, 9, 1);
    let noise = noise_wall.release(|_: &Vec<f64>, _| {}).unwrap().0.to_vec();

    let (p, q) = (private.posterior(), plain.posterior());
    let mut max_err = 0.0f64;
    let mut norm = 0.0;
    for k in 0..p.len() {
        let expected = gamma / n as f64 * noise[k];
        max_err = max_err.max((p[k] - q[k] - expected).abs());
        norm += (p[k] - q[k]) * (p[k] - q[k]);
    }
    assert!(
        max_err < 1e-9,
        "posterior != non-private + (gamma/N) noise: {max_err}"
    );
    // The noise is not negligible: std sigma * 2C * gamma / N per coordinate.
    let per_coord = w.noise_multiplier() * 2.0 * clip * gamma / n as f64;
    assert!(
        norm.sqrt() > 0.1 * per_coord,
        "noise did not reach the posterior"
    );
}

#[test]
fn noise_persists_and_depends_on_the_noise_seed() {
    let n = 40;
    let records: Vec<Vec<f64>> = (0..n).map(|i| vec![(i % 5) as f64 * 0.3, -0.4]).collect();
    let config = DpSepConfig::builder().gamma(2.0).epochs(2).build().unwrap();
    let run = |seed: u64| {
        let (mut model, mut state) = common::mog_state(n, &[0.5, -0.3, 1.0, 0.2], Family::Diagonal);
        let mut w = wall(records.clone(), 8, 1.0, seed, (config.epochs() * n) as u64);
        dp_sep::run_dp_sep(&mut model, &mut state, &mut w, &config).unwrap();
        state.posterior()
    };
    let (a, b, a2) = (run(1), run(2), run(1));
    assert_eq!(a, a2, "a seeded run must be reproducible");
    let diff: f64 = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    assert!(
        diff > 1e-6,
        "different noise must give different posteriors"
    );
}

/// The wall adds noise of std `2 C sigma`: the sample variance of 200 x 20 pure-noise
/// coordinates is within a 99.9% chi-square band, for both samplers.
#[test]
fn the_wall_adds_noise_of_std_two_c_sigma() {
    let (clip, steps, dim) = (0.7, 200u64, 20);
    for sampling in [
        dp_sep::SamplingScheme::UniformSingle,
        dp_sep::SamplingScheme::ShuffledEpoch,
    ] {
        let mut w = FactorWall::new(
            vec![vec![0.0]; 40],
            &WallPlan::builder()
                .population(40)
                .dim(dim)
                .budget(1.0, 1e-5)
                .clip(clip)
                .steps(steps)
                .sampling(sampling)
                .rng(RngPolicy::Seeded { seed: 3 })
                .build()
                .unwrap(),
        )
        .unwrap();
        let sigma = w.noise_multiplier();
        let mut ss = 0.0;
        let mut count = 0.0;
        for _ in 0..steps {
            for v in w.release(|_: &Vec<f64>, _| {}).unwrap().0 {
                ss += v * v;
                count += 1.0;
            }
        }
        let ratio = ss / count / (2.0 * clip * sigma).powi(2);
        // 4000 dof: chi2/dof lies in [0.93, 1.07] with probability > 99.9%.
        assert!((0.93..1.07).contains(&ratio), "variance ratio {ratio}");
        assert!(w.epsilon_spent().unwrap() <= 1.0 + 1e-9);
        // A planned wall refuses release T + 1, typed.
        assert!(matches!(
            w.release(|_: &Vec<f64>, _| {}),
            Err(dp_sep::SepError::Wall(
                dp_core::CoreError::BudgetExhausted { .. }
            ))
        ));
    }
}

/// The whole DP-SEP run goes through `dp_core::PrivacyWall`: one labelled ledger entry for the
/// planned run, every release made, the run's epsilon within the budget.
#[test]
fn full_run_through_the_core_wall() {
    let n = 20;
    let records: Vec<Vec<f64>> = (0..n).map(|i| vec![(i % 4) as f64 * 0.5, 0.1]).collect();
    let (mut model, mut state) = common::mog_state(n, &[0.5, -0.3, 1.0, 0.2], Family::Diagonal);
    let before = state.posterior();
    let config = DpSepConfig::builder().gamma(1.0).epochs(2).build().unwrap();
    let mut w = FactorWall::new(
        records,
        &WallPlan::builder()
            .population(n)
            .dim(before.len())
            .budget(2.0, 1e-5)
            .clip(1.0)
            .steps((config.epochs() * n) as u64)
            .sampling(dp_sep::SamplingScheme::UniformSingle)
            .rng(RngPolicy::Seeded { seed: 4 })
            .build()
            .unwrap(),
    )
    .unwrap();
    let (report, _) = dp_sep::run_dp_sep(&mut model, &mut state, &mut w, &config).unwrap();
    assert_eq!(report.releases, 40);
    assert!(report.epsilon <= 2.0 + 1e-9, "{}", report.epsilon);
    let ledger = w.core().ledger();
    assert_eq!(ledger.len(), 1);
    assert!(
        ledger.entries()[0]
            .label
            .starts_with("DP-SEP run: 40 releases")
    );
    assert_ne!(state.posterior(), before);
}

/// PBP through `run_pbp` with privacy: the report carries sigma, the per-step noise on
/// `theta_new` and an accounted epsilon within the budget.
#[test]
fn pbp_private_run_reports_its_accounting() {
    use dp_sep::data::Dataset;
    use dp_sep::pbp::{PbpConfig, PbpPrivacy, run_pbp};
    let x: Vec<f64> = (0..120).map(|i| ((i * 7) % 13) as f64 / 13.0).collect();
    let y: Vec<f64> = (0..60).map(|i| x[2 * i] - x[2 * i + 1]).collect();
    let data = Dataset::new(x, y, 2).unwrap();
    let train = data.select(&(0..50).collect::<Vec<_>>()).unwrap();
    let test = data.select(&(50..60).collect::<Vec<_>>()).unwrap();
    let privacy = PbpPrivacy::builder()
        .budget(1.0, 1e-5)
        .rng(RngPolicy::Seeded { seed: 8 })
        .population(50)
        .build()
        .unwrap();
    // Declared public ranges (features in [0, 1], target in [-1, 1] by construction).
    let scaling = dp_sep::pbp::Scaling::Declared(dp_sep::data::PublicRanges::uniform(
        2,
        dp_sep::data::PublicRange::new(0.0, 1.0).unwrap(),
        dp_sep::data::PublicRange::new(-1.0, 1.0).unwrap(),
    ));
    let builder = PbpConfig::builder()
        .hidden(vec![4])
        .epochs(2)
        .gamma(1.0)
        .sampling(dp_sep::SamplingScheme::UniformSingle)
        .privacy(privacy)
        .scaling(scaling);
    let config = builder.clone().clip(1.0).build().unwrap();
    let (out, _) = run_pbp(&train, &test, &config).unwrap();
    let p = out.privacy.unwrap();
    assert_eq!(p.releases, 100);
    assert!(p.epsilon <= 1.0 + 1e-9);
    assert!((p.theta_noise_std - p.noise_multiplier * 2.0 * 1.0 * 1.0 / 50.0).abs() < 1e-12);
    assert!(out.metrics.rmse.is_finite());
    // Privacy without a clip norm is refused.
    assert!(matches!(
        builder.build(),
        Err(dp_sep::SepError::InvalidParameter { name: "clip", .. })
    ));
}
