//! DP-SEP with Poisson batches (issue 19) and fixed-size batches (issue 18): the accounting charges exactly one
//! `PoissonSubsampledGaussian` event with `q = S / N` per step actually run, the run takes
//! `epochs x ceil(N / S)` steps, and bad settings are typed errors. (The end-to-end
//! neighbouring tests are in `tests/end_to_end.rs`.)

use dp_accountant::PrivacyEvent;
use dp_core::RngPolicy;
use dp_sep::mog::{Family, MogModel, generate};
use dp_sep::{
    Batching, Clipping, DpSepConfig, FactorWall, SamplingScheme, SepError, SepModel, SepState,
    WallPlan, run_dp_sep,
};
use rand::SeedableRng;

const N: usize = 100;

fn setup() -> (MogModel, SepState, Vec<Vec<f64>>) {
    let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(3);
    let data = generate(N, 2, 2, 0.5, &mut rng);
    let model = MogModel::new(2, 2, 0.5, Family::Diagonal).unwrap();
    let prior = model.prior();
    let mut factor = vec![0.0; prior.len()];
    factor[0] = -1.0 / N as f64;
    factor[4] = 1.0 / N as f64;
    let state = SepState::new(prior, factor, N).unwrap();
    (model, state, data.points)
}

fn plan(batching: Batching, epochs: usize, steps_override: Option<u64>) -> WallPlan {
    WallPlan::builder()
        .population(N)
        .dim(8)
        .budget(1.0, 1e-5)
        .clip(1.0)
        .steps(steps_override.unwrap_or(dp_sep::planned_steps(batching, epochs, N, false).unwrap()))
        .sampling(batching.sampling_for(N).unwrap())
        .rng(RngPolicy::Seeded { seed: 9 })
        .build()
        .unwrap()
}

#[test]
fn ledger_holds_one_poisson_event_with_q_s_over_n_per_step_run() {
    let (mut model, mut state, points) = setup();
    let batching = Batching::poisson(16).unwrap();
    // ceil(100 / 16) = 7 steps per epoch, 3 epochs.
    let epochs = 3;
    let t = 21;
    assert_eq!(
        dp_sep::planned_steps(batching, epochs, N, false).unwrap(),
        t
    );
    let plan = plan(batching, epochs, None);
    let mut wall = FactorWall::new(points, &plan).unwrap();
    assert_eq!(
        wall.core().ledger().len(),
        0,
        "nothing charged before a step"
    );
    let config = DpSepConfig::builder()
        .gamma(1.0)
        .epochs(epochs)
        .batching(batching)
        .build()
        .unwrap();
    let (report, _) = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap();
    let entries = wall.core().ledger().entries();
    assert_eq!(entries.len() as u64, t);
    assert_eq!(report.releases, t);
    let sigma = wall.noise_multiplier();
    for e in entries {
        match e.event {
            PrivacyEvent::PoissonSubsampledGaussian {
                noise_multiplier,
                sampling_rate,
            } => {
                assert_eq!(sampling_rate, 16.0 / N as f64);
                assert_eq!(noise_multiplier, sigma);
            }
            ref other => panic!("unexpected event {other:?}"),
        }
    }
    // The calibration used all T steps: the run spends at most the budget.
    assert!(report.epsilon <= 1.0 + 1e-9, "{}", report.epsilon);
    assert!(report.epsilon > 0.5, "{}", report.epsilon);
    assert_eq!(report.expected_batch_size, 16.0);
    // Add/remove-one: noise std on theta_new sigma gamma C / N.
    assert!((report.theta_noise_std - sigma * 1.0 * 1.0 / N as f64).abs() < 1e-15);
    // Step T + 1 would exceed the budget: refused and typed.
    let mut counts = dp_sep::StepCounts::default();
    let e = dp_sep::dpsep::dp_sep_step(&model, &mut state, &mut wall, &config, &mut counts)
        .unwrap_err();
    assert!(
        matches!(
            e,
            SepError::Wall(dp_core::CoreError::BudgetExhausted { .. })
        ),
        "{e}"
    );
    assert_eq!(wall.core().ledger().len() as u64, t);
}

/// A fixed-size batch of `S` (replace-one): the run is charged up front as one planned entry of
/// `T = epochs x ceil(N / S)` fixed-size subsampled Gaussians (`m = S` of `N`), and the noise
/// std on `theta_new` carries the replace-one factor 2.
#[test]
fn fixed_size_batches_are_planned_replace_one_events() {
    let (mut model, mut state, points) = setup();
    let batching = Batching::fixed_size(16).unwrap();
    let epochs = 2;
    let t = 14;
    assert_eq!(
        dp_sep::planned_steps(batching, epochs, N, false).unwrap(),
        t
    );
    let plan = plan(batching, epochs, None);
    assert_eq!(plan.sampling(), SamplingScheme::fixed_size(16).unwrap());
    let mut wall = FactorWall::new(points, &plan).unwrap();
    assert_eq!(wall.core().ledger().len(), 1, "one planned entry");
    let sigma = wall.noise_multiplier();
    let planned = PrivacyEvent::fixed_size_subsampled_gaussian(sigma, 16, N as u64)
        .unwrap()
        .self_composed(t)
        .unwrap();
    assert_eq!(wall.core().ledger().entries()[0].event, planned);
    let config = DpSepConfig::builder()
        .gamma(1.0)
        .epochs(epochs)
        .batching(batching)
        .build()
        .unwrap();
    let (report, _) = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap();
    assert_eq!(report.releases, t);
    assert_eq!(report.expected_batch_size, 16.0);
    assert!(report.epsilon <= 1.0 + 1e-9, "{}", report.epsilon);
    // Replace-one: noise std on theta_new sigma 2 gamma C / N.
    assert!((report.theta_noise_std - sigma * 2.0 / N as f64).abs() < 1e-15);
    assert!(model.is_valid(&state.posterior()));
}

#[test]
fn one_record_path_is_unchanged_and_planned() {
    let (mut model, mut state, points) = setup();
    let plan = plan(Batching::OneRecord, 1, None);
    assert_eq!(plan.sampling(), SamplingScheme::UniformSingle);
    let mut wall = FactorWall::new(points, &plan).unwrap();
    let config = DpSepConfig::builder().gamma(1.0).build().unwrap();
    let (report, _) = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap();
    assert_eq!(report.releases, N as u64);
    assert_eq!(wall.core().ledger().len(), 1, "one planned entry");
    assert_eq!(report.expected_batch_size, 1.0);
}

#[test]
fn bad_batch_sizes_are_typed_errors() {
    assert!(matches!(
        Batching::poisson(0),
        Err(dp_core::CoreError::InvalidParameter { .. })
    ));
    let zero = Batching::Poisson {
        expected_batch_size: 0,
    };
    assert!(matches!(
        DpSepConfig::builder().batching(zero).build(),
        Err(SepError::InvalidParameter {
            name: "expected_batch_size",
            ..
        })
    ));
    assert!(zero.sampling_for(N).is_err());
    let too_big = Batching::poisson(N + 1).unwrap();
    assert!(too_big.sampling_for(N).is_err());
    assert!(too_big.steps_per_epoch(N).is_err());
    for e in [
        dp_sep::sampling_for(too_big, N).unwrap_err(),
        dp_sep::planned_steps(too_big, 1, N, false).unwrap_err(),
    ] {
        assert!(
            matches!(
                e,
                SepError::InvalidParameter {
                    name: "expected_batch_size",
                    ..
                }
            ),
            "{e}"
        );
    }
    // S = N is allowed (q = 1).
    assert_eq!(
        Batching::poisson(N).unwrap().sampling_for(N).unwrap(),
        SamplingScheme::poisson(1.0).unwrap()
    );
    // The run refuses S > N with its declared population.
    let (mut model, mut state, points) = setup();
    let wall_plan = plan(Batching::poisson(10).unwrap(), 1, None);
    let mut wall = FactorWall::new(points.clone(), &wall_plan).unwrap();
    let config = DpSepConfig::builder().batching(too_big).build().unwrap();
    let e = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "expected_batch_size",
                ..
            }
        ),
        "{e}"
    );
    // S gamma > N^2 is refused (the damping S gamma / N^2 must not exceed 1).
    let config = DpSepConfig::builder()
        .gamma(N as f64 * N as f64 / 5.0)
        .batching(Batching::poisson(10).unwrap())
        .build()
        .unwrap();
    let e = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap_err();
    assert!(
        matches!(e, SepError::InvalidParameter { name: "gamma", .. }),
        "{e}"
    );
    assert_eq!(wall.core().ledger().len(), 0, "refused before any release");
}

/// A model without a metric: the mixture, with `has_metric` (and the whitening) left at the
/// trait's defaults.
struct NoMetric(MogModel);

impl SepModel for NoMetric {
    type Record = Vec<f64>;
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn tilted(&self, cavity: &[f64], record: &Vec<f64>, out: &mut [f64]) -> bool {
        self.0.tilted(cavity, record, out)
    }
    fn is_valid(&self, theta: &[f64]) -> bool {
        self.0.is_valid(theta)
    }
    fn repair(&self, theta: &mut [f64]) {
        self.0.repair(theta)
    }
}

/// Whitened clipping needs the model's metric: a model without one is refused before any
/// release (no silent fallback to plain innovation clipping).
#[test]
fn whitened_clipping_without_a_metric_is_refused_before_any_release() {
    let (model, mut state, points) = setup();
    let mut model = NoMetric(model);
    let batching = Batching::poisson(10).unwrap();
    let wall_plan = plan(batching, 1, None);
    let mut wall = FactorWall::new(points, &wall_plan).unwrap();
    let config = DpSepConfig::builder()
        .batching(batching)
        .clipping(Clipping::Whitened)
        .build()
        .unwrap();
    let e = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "clipping",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(wall.core().ledger().len(), 0, "refused before any release");
    assert_eq!("whitened".parse::<Clipping>().unwrap(), Clipping::Whitened);
    assert_eq!(Clipping::Whitened.name(), "whitened");
}

#[test]
fn a_wall_whose_sampler_does_not_match_the_batching_is_refused() {
    let (mut model, mut state, points) = setup();
    let cases = [
        // A one-record wall for a batched config.
        (Batching::OneRecord, Batching::poisson(10).unwrap()),
        // A Poisson wall for the one-record config.
        (Batching::poisson(10).unwrap(), Batching::OneRecord),
        // A Poisson wall of another rate.
        (
            Batching::poisson(20).unwrap(),
            Batching::poisson(10).unwrap(),
        ),
        // A fixed-size wall for a Poisson config of the same size, and of another size.
        (
            Batching::fixed_size(10).unwrap(),
            Batching::poisson(10).unwrap(),
        ),
        (
            Batching::fixed_size(20).unwrap(),
            Batching::fixed_size(10).unwrap(),
        ),
    ];
    for (walled, configured) in cases {
        let mut wall = FactorWall::new(points.clone(), &plan(walled, 1, Some(1000))).unwrap();
        let config = DpSepConfig::builder().batching(configured).build().unwrap();
        let e = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap_err();
        assert!(
            matches!(
                e,
                SepError::InvalidParameter {
                    name: "batching",
                    ..
                }
            ),
            "{walled:?} vs {configured:?}: {e}"
        );
        assert_eq!(wall.releases(), 0);
    }
}

#[test]
fn pbp_config_refuses_batches_without_privacy_or_above_the_population() {
    use dp_sep::pbp::{PbpConfig, PbpPrivacy};
    let b = Batching::poisson(8).unwrap();
    let e = PbpConfig::builder().batching(b).build().unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "batching",
                ..
            }
        ),
        "{e}"
    );
    let privacy = |population| {
        PbpPrivacy::builder()
            .budget(1.0, 1e-5)
            .population(population)
            .rng(RngPolicy::Seeded { seed: 1 })
            .build()
            .unwrap()
    };
    let e = PbpConfig::builder()
        .clip(1.0)
        .privacy(privacy(7))
        .batching(b)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "expected_batch_size",
                ..
            }
        ),
        "{e}"
    );
    let ok = PbpConfig::builder()
        .clip(1.0)
        .privacy(privacy(8))
        .batching(b)
        .build()
        .unwrap();
    assert_eq!(ok.batching(), b);
}

/// Innovation clipping is DP-SEP's: a non-private `PbpConfig` refuses it, a private one keeps
/// it; an unknown clipping name is a typed error.
#[test]
fn innovation_clipping_is_refused_without_privacy_and_unknown_names_are_typed() {
    use dp_sep::Clipping;
    use dp_sep::pbp::{PbpConfig, PbpPrivacy};
    let e = PbpConfig::builder()
        .clipping(Clipping::Innovation)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "clipping",
                ..
            }
        ),
        "{e}"
    );
    let privacy = PbpPrivacy::builder()
        .budget(1.0, 1e-5)
        .population(8)
        .build()
        .unwrap();
    let ok = PbpConfig::builder()
        .clip(1.0)
        .privacy(privacy)
        .batching(Batching::poisson(4).unwrap())
        .clipping(Clipping::Innovation)
        .build()
        .unwrap();
    assert_eq!(ok.clipping(), Clipping::Innovation);
    assert!(matches!(
        "gradient".parse::<Clipping>(),
        Err(SepError::InvalidParameter {
            name: "clipping",
            ..
        })
    ));
    assert_eq!("value".parse::<Clipping>().unwrap(), Clipping::Value);
}

/// The minibatch run still learns: with noise scale near zero (a huge epsilon) on well-separated
/// clusters, the posterior means land near the generating means. Fixed seeds, deterministic.
#[test]
fn batched_run_with_tiny_noise_finds_the_clusters() {
    let (mut model, mut state, points) = setup();
    let batching = Batching::poisson(10).unwrap();
    let wall_plan = WallPlan::builder()
        .population(N)
        .dim(8)
        .budget(1e6, 1e-5)
        .clip(1.0)
        .steps(dp_sep::planned_steps(batching, 20, N, false).unwrap())
        .sampling(batching.sampling_for(N).unwrap())
        .rng(RngPolicy::Seeded { seed: 2 })
        .build()
        .unwrap();
    let mut wall = FactorWall::new(points, &wall_plan).unwrap();
    let config = DpSepConfig::builder()
        .epochs(20)
        .batching(batching)
        .build()
        .unwrap();
    run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap();
    let post = state.posterior();
    assert!(model.is_valid(&post));
}

#[test]
fn pbp_privacy_builder_refuses_bad_or_missing_settings() {
    use dp_sep::pbp::PbpPrivacy;
    let name = |b: dp_sep::pbp::PbpPrivacyBuilder| match b.build().unwrap_err() {
        SepError::InvalidParameter { name, .. } => name,
        e => panic!("unexpected {e}"),
    };
    assert_eq!(name(PbpPrivacy::builder().population(10)), "epsilon");
    assert_eq!(name(PbpPrivacy::builder().budget(1.0, 1e-5)), "population");
    assert_eq!(
        name(PbpPrivacy::builder().budget(1.0, 1e-5).population(0)),
        "population"
    );
    assert_eq!(
        name(PbpPrivacy::builder().budget(1.0, 0.0).population(10)),
        "delta"
    );
    assert_eq!(
        name(PbpPrivacy::builder().budget(f64::NAN, 1e-5).population(10)),
        "epsilon"
    );
    assert_eq!(
        name(PbpPrivacy::builder().budget(1e-9, 1e-5).population(10)),
        "epsilon"
    );
    let ok = PbpPrivacy::builder()
        .budget(2.0, 1e-6)
        .population(10)
        .build()
        .unwrap();
    assert_eq!((ok.epsilon(), ok.delta(), ok.population()), (2.0, 1e-6, 10));
    assert_eq!(ok.noise_rng(), RngPolicy::OsEntropy);
}

/// Iterate averaging is DP-SEP's post-processing: a non-private `PbpConfig` refuses it, a
/// private one keeps it, and a tail fraction outside `(0, 1]` is a typed error.
#[test]
fn averaging_is_refused_without_privacy_and_bad_fractions_are_typed() {
    use dp_sep::Averaging;
    use dp_sep::pbp::{PbpConfig, PbpPrivacy};
    let e = PbpConfig::builder()
        .averaging(Averaging::tail(0.5).unwrap())
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "average_tail",
                ..
            }
        ),
        "{e}"
    );
    let privacy = PbpPrivacy::builder()
        .budget(1.0, 1e-5)
        .population(8)
        .build()
        .unwrap();
    let private = || {
        PbpConfig::builder()
            .clip(1.0)
            .privacy(privacy)
            .batching(Batching::poisson(4).unwrap())
    };
    let ok = private()
        .averaging(Averaging::tail(0.5).unwrap())
        .build()
        .unwrap();
    assert_eq!(ok.averaging(), Averaging::Tail { fraction: 0.5 });
    let e = private()
        .averaging(Averaging::Tail { fraction: 2.0 })
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "average_tail",
                ..
            }
        ),
        "{e}"
    );
}
