//! EP, ADF and SEP against closed forms and ground truth, and the configuration checks.

mod common;

use dp_core::RngPolicy;
use dp_sep::data::Dataset;
use dp_sep::ep::{EpState, run_adf, run_ep};
use dp_sep::mog::{Family, GibbsConfig, MogModel, compare, generate, gibbs_posterior};
use dp_sep::pbp::{Method, PbpConfig, run_pbp};
use dp_sep::sep::run_sep;
use dp_sep::{
    DpSepConfig, FactorWall, SamplingScheme, SepConfig, SepError, SepState, WallPlan, run_dp_sep,
};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

/// With one component the model is conjugate: ADF and EP are exact after one pass, SEP
/// converges to the exact posterior `N(sum x / s^2 / (1 + N/s^2), I / (1 + N/s^2))`.
#[test]
#[allow(clippy::needless_range_loop)]
fn conjugate_case_is_exact() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let data = generate(60, 1, 2, 0.5, &mut rng);
    let n = data.points.len();
    let prec = 1.0 + n as f64 / 0.25;
    let sum: Vec<f64> = (0..2)
        .map(|i| data.points.iter().map(|x| x[i]).sum::<f64>())
        .collect();
    let exact_mean: Vec<f64> = sum.iter().map(|s| s / 0.25 / prec).collect();
    let check = |model: &MogModel, theta: &[f64], tol: f64, cov_tol: f64, what: &str| {
        let m = &model.moments(theta).unwrap()[0];
        for i in 0..2 {
            assert!(
                (m.mean[i] - exact_mean[i]).abs() < tol,
                "{what}: {} vs {}",
                m.mean[i],
                exact_mean[i]
            );
            assert!((m.cov[(i, i)] - 1.0 / prec).abs() < cov_tol, "{what}: cov");
        }
    };
    for family in [Family::Full, Family::Diagonal] {
        let mut model = MogModel::new(1, 2, 0.5, family).unwrap();
        let prior = model.prior();
        let mut post = prior.clone();
        let mut p = prior.clone();
        run_adf(&mut model, &mut p, &mut post, &data.points, 1, &mut rng).unwrap();
        check(&model, &post, 1e-9, 1e-12, "adf");
        let mut ep = EpState::new(prior.clone(), n).unwrap();
        run_ep(&mut model, &mut ep, &data.points, 2, 1.0, &mut rng).unwrap();
        check(&model, ep.posterior(), 1e-9, 1e-12, "ep");
        let mut sep = SepState::new(prior.clone(), vec![0.0; prior.len()], n).unwrap();
        run_sep(
            &mut model,
            &mut sep,
            &data.points,
            &SepConfig::builder().build().unwrap(),
            30,
            SamplingScheme::ShuffledEpoch,
            &mut rng,
        )
        .unwrap();
        // SEP's factor is an exponential moving average (weight 1/N) of the per-point factors:
        // the precision is exact, the mean fluctuates with std about s / sqrt(2N) (~0.046 here);
        // 4 std keeps the false-alarm rate per coordinate below 1e-4.
        check(
            &model,
            &sep.posterior(),
            4.0 * 0.5 / (2.0 * n as f64).sqrt(),
            1e-9,
            "sep",
        );
    }
}

/// SEP on a small, well-separated mixture lands on the Gibbs posterior.
#[test]
fn sep_matches_gibbs_on_a_small_mixture() {
    let mut rng = ChaCha20Rng::seed_from_u64(11);
    let mut data = generate(300, 2, 2, 0.5, &mut rng);
    data.means = vec![vec![-2.0, 0.0], vec![2.0, 0.0]];
    for (x, &l) in data.points.iter_mut().zip(&data.labels) {
        x[0] += data.means[l][0];
    }
    let truth = gibbs_posterior(
        &data.points,
        &data.means,
        0.5,
        GibbsConfig::builder()
            .burn_in(200)
            .samples(2000)
            .build()
            .unwrap(),
        &mut rng,
    )
    .unwrap();
    let (mut model, mut state) = common::mog_state(300, &[-1.0, 0.0, 1.0, 0.0], Family::Full);
    run_sep(
        &mut model,
        &mut state,
        &data.points,
        &SepConfig::builder().build().unwrap(),
        20,
        SamplingScheme::ShuffledEpoch,
        &mut rng,
    )
    .unwrap();
    let acc = compare(&truth, &model.moments(&state.posterior()).unwrap()).unwrap();
    assert!(acc.f_norm < 0.05 && acc.kl_proxy < 0.5, "{acc:?}");
}

#[test]
fn pbp_learns_a_smooth_function() {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let n = 300;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n + 100 {
        let a: f64 = rand::RngExt::random_range(&mut rng, -2.0..2.0);
        let b: f64 = rand::RngExt::random_range(&mut rng, -2.0..2.0);
        x.extend([a, b]);
        y.push((a * b).sin() + 0.5 * a);
    }
    let all = Dataset::new(x, y, 2).unwrap();
    let train = all.select(&(0..n).collect::<Vec<_>>()).unwrap();
    let test = all.select(&(n..n + 100).collect::<Vec<_>>()).unwrap();
    let base = PbpConfig::builder()
        .hidden(vec![10])
        .epochs(8)
        .build()
        .unwrap();
    let sd = {
        let m = test.targets().iter().sum::<f64>() / 100.0;
        (test.targets().iter().map(|v| (v - m).powi(2)).sum::<f64>() / 100.0).sqrt()
    };
    for method in [Method::Sep, Method::Adf, Method::Ep] {
        let (out, _) = run_pbp(
            &train,
            &test,
            &PbpConfig::builder()
                .hidden(base.hidden().to_vec())
                .epochs(base.epochs())
                .method(method)
                .build()
                .unwrap(),
        )
        .unwrap();
        assert!(
            out.metrics.rmse < 0.6 * sd,
            "{method:?}: rmse {} vs sd {sd}",
            out.metrics.rmse
        );
        assert!(out.metrics.log_likelihood.is_finite());
    }
}

#[test]
fn bad_configurations_are_typed_errors() {
    let (mut model, mut state) = common::mog_state(10, &[0.0], Family::Full);
    let recs = vec![vec![0.0, 0.0]; 10];
    let mut rng = ChaCha20Rng::seed_from_u64(0);
    for gamma in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            SepConfig::builder().gamma(gamma).build(),
            Err(SepError::InvalidParameter { name: "gamma", .. })
        ));
    }
    assert!(matches!(
        SepConfig::builder().gamma(1.0).clip(-1.0).build(),
        Err(SepError::InvalidParameter { name: "clip", .. })
    ));
    // gamma <= N^2 needs N: checked by the run.
    let cfg = SepConfig::builder().gamma(1e9).build().unwrap();
    assert!(matches!(
        run_sep(
            &mut model,
            &mut state,
            &recs,
            &cfg,
            1,
            SamplingScheme::ShuffledEpoch,
            &mut rng
        ),
        Err(SepError::InvalidParameter { name: "gamma", .. })
    ));
    assert!(matches!(
        run_sep(
            &mut model,
            &mut state,
            &recs[..5],
            &SepConfig::builder().build().unwrap(),
            1,
            SamplingScheme::ShuffledEpoch,
            &mut rng
        ),
        Err(SepError::DimensionMismatch { .. })
    ));
    let seeded = RngPolicy::Seeded { seed: 1 };
    for (eps, delta, clip, steps) in [
        (0.0, 1e-5, 1.0, 10),
        (f64::NAN, 1e-5, 1.0, 10),
        (1.0, 0.0, 1.0, 10),
        (1.0, 1.5, 1.0, 10),
        (1.0, 1e-5, 0.0, 10),
        (1.0, 1e-5, 1.0, 0),
    ] {
        assert!(
            matches!(
                WallPlan::builder()
                    .population(10)
                    .dim(12)
                    .budget(eps, delta)
                    .clip(clip)
                    .steps(steps)
                    .sampling(SamplingScheme::UniformSingle)
                    .rng(seeded)
                    .build(),
                Err(SepError::InvalidParameter { .. })
            ),
            "{eps} {delta} {clip} {steps}"
        );
    }
    assert!(matches!(
        FactorWall::new(
            Vec::<Vec<f64>>::new(),
            &WallPlan::builder()
                .population(10)
                .dim(12)
                .budget(1.0, 1e-5)
                .clip(1.0)
                .steps(10)
                .sampling(SamplingScheme::UniformSingle)
                .rng(seeded)
                .build()
                .unwrap(),
        ),
        Err(SepError::Empty(_))
    ));
    // A shuffled schedule must be whole epochs.
    assert!(
        WallPlan::builder()
            .population(10)
            .dim(12)
            .budget(1.0, 1e-5)
            .clip(1.0)
            .steps(15)
            .sampling(SamplingScheme::ShuffledEpoch)
            .rng(seeded)
            .build()
            .is_err()
    );
    // A wall planned for fewer releases than the run refuses to continue.
    let mut wall = FactorWall::new(
        recs.clone(),
        &WallPlan::builder()
            .population(10)
            .dim(12)
            .budget(1.0, 1e-5)
            .clip(1.0)
            .steps(5)
            .sampling(SamplingScheme::UniformSingle)
            .rng(seeded)
            .build()
            .unwrap(),
    )
    .unwrap();
    let dp = DpSepConfig::builder().gamma(1.0).epochs(1).build().unwrap();
    assert!(matches!(
        run_dp_sep(&mut model, &mut state, &mut wall, &dp),
        Err(SepError::Wall(dp_core::CoreError::BudgetExhausted { .. }))
    ));
}

/// Shuffled epochs get no amplification: they need more noise than independent draws for the
/// same budget and steps.
#[test]
fn shuffled_epochs_are_accounted_without_amplification() {
    let wall = |sampling: SamplingScheme| {
        let plan = WallPlan::builder()
            .population(1000)
            .dim(1)
            .budget(1.0, 1e-5)
            .clip(1.0)
            .steps(10_000)
            .sampling(sampling)
            .rng(RngPolicy::Seeded { seed: 1 })
            .build()
            .unwrap();
        FactorWall::new(vec![0.0f64; 1000], &plan).unwrap()
    };
    let uniform = wall(SamplingScheme::UniformSingle);
    let shuffled = wall(SamplingScheme::ShuffledEpoch);
    assert!(
        shuffled.noise_multiplier() > 3.0 * uniform.noise_multiplier(),
        "{} vs {}",
        shuffled.noise_multiplier(),
        uniform.noise_multiplier()
    );
}

/// The Gibbs ground truth refuses input it cannot use with a typed error (it draws each mean
/// from expfam's conjugate update, which would otherwise see NaN sums).
#[test]
fn gibbs_refuses_non_finite_points_and_bad_s() {
    let config = GibbsConfig::builder()
        .burn_in(1)
        .samples(2)
        .build()
        .unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let init = vec![vec![0.0, 0.0]];
    let data = vec![vec![0.5, 1.0], vec![f64::NAN, 0.0]];
    let e = gibbs_posterior(&data, &init, 0.5, config, &mut rng).unwrap_err();
    assert!(
        matches!(
            e,
            SepError::NonFinite {
                row: 1,
                column: 0,
                ..
            }
        ),
        "{e}"
    );
    let data = vec![vec![0.5, 1.0]];
    for s in [0.0, -1.0, f64::NAN] {
        let e = gibbs_posterior(&data, &init, s, config, &mut rng).unwrap_err();
        assert!(
            matches!(e, SepError::InvalidParameter { name: "s", .. }),
            "{e}"
        );
    }
    // One point, one component, prior N(0, I): the draws' mean is near x / s^2 / (1 + 1/s^2).
    let post = gibbs_posterior(
        &data,
        &init,
        0.5,
        GibbsConfig::builder()
            .burn_in(10)
            .samples(20_000)
            .build()
            .unwrap(),
        &mut rng,
    )
    .unwrap();
    let v = 1.0 / (1.0 + 4.0);
    assert!(
        (post[0].mean[0] - 0.5 * 4.0 * v).abs() < 0.02,
        "{}",
        post[0].mean[0]
    );
    assert!(
        (post[0].cov[(1, 1)] - v).abs() < 0.01,
        "{}",
        post[0].cov[(1, 1)]
    );
}
