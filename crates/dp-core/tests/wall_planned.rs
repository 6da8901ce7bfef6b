//! Planned accounting, the cheap per-release path, the shuffled-epoch sampler and population
//! slots.

use dp_accountant::{Neighbouring, PrivacyEvent};
use dp_core::{CoreError, PrivacyWall, ReleaseSpec, SamplingScheme, VectorBlock};

/// One vector block `factor` of `dim` entries, and its handle.
fn spec(dim: usize, bound: f64) -> (ReleaseSpec, VectorBlock) {
    let mut b = ReleaseSpec::builder("factor");
    let f = b.vector("factor", dim, bound).unwrap();
    (b.build().unwrap(), f)
}

/// One ledger entry for the whole run, labelled; `T` releases made, release `T + 1` refused
/// without touching the ledger; the spent epsilon is the plan's, within the budget.
#[test]
fn planned_run_charges_once_and_refuses_release_t_plus_one() {
    let mut wall = PrivacyWall::builder((0..50).map(f64::from).collect::<Vec<_>>())
        .sampling(SamplingScheme::uniform_single())
        .epsilon_delta(1.0, 1e-5)
        .planned_run("DP-SEP run", 120)
        .seed(1)
        .build()
        .unwrap();
    assert_eq!(wall.planned_releases(), Some(120));
    assert_eq!(wall.ledger().len(), 1);
    assert_eq!(wall.ledger().entries()[0].label, "DP-SEP run");
    let sigma = wall.noise_multiplier().unwrap();
    let expected = PrivacyEvent::fixed_size_subsampled_gaussian(sigma, 1, 50)
        .unwrap()
        .self_composed(120)
        .unwrap();
    assert_eq!(wall.ledger().entries()[0].event, expected);
    let eps = wall.spent_epsilon().unwrap();
    assert!(eps > 0.9 && eps <= 1.0, "{eps}");
    let (s, f) = spec(1, 1.0);
    let mut out = [0.0];
    for i in 0..120 {
        assert!(wall.can_release().unwrap());
        if i % 2 == 0 {
            wall.release_into(&s, |x: &f64, b| b.dense(f)[0] = *x, &mut out)
                .unwrap();
        } else {
            wall.release(&s, |x: &f64, b| b.dense(f)[0] = *x).unwrap();
        }
    }
    assert!(!wall.can_release().unwrap());
    assert!(matches!(
        wall.release_into(&s, |_: &f64, _| {}, &mut out),
        Err(CoreError::BudgetExhausted { .. })
    ));
    assert!(matches!(
        wall.release(&s, |_: &f64, _| {}),
        Err(CoreError::BudgetExhausted { .. })
    ));
    assert_eq!(wall.releases_made(), 120);
    assert_eq!(wall.ledger().len(), 1);
    assert_eq!(wall.spent_epsilon().unwrap(), eps);
    // One log record for the run, with every clipped record (values 1..49 exceed the bound 1).
    assert_eq!(wall.release_log().len(), 1);
    assert!(wall.total_clipped_records() > 100);
}

/// A chosen noise multiplier whose planned run does not fit is refused at build.
#[test]
fn planned_run_that_does_not_fit_is_refused() {
    let e = PrivacyWall::builder(vec![0.0; 10])
        .sampling(SamplingScheme::uniform_single())
        .epsilon_delta(0.1, 1e-5)
        .noise_multiplier(0.5)
        .planned_run("too long", 10_000)
        .build()
        .unwrap_err();
    assert!(matches!(e, CoreError::BudgetExhausted { .. }), "{e}");
    let e = PrivacyWall::builder(vec![0.0; 10])
        .sampling(SamplingScheme::uniform_single())
        .epsilon_delta(1.0, 1e-5)
        .calibrate_for_releases(5)
        .planned_run("mismatch", 10)
        .build()
        .unwrap_err();
    assert!(matches!(e, CoreError::Misconfigured(_)), "{e}");
}

/// The cheap path is the same release as the general one: same draws, same values bit for bit,
/// one labelled ledger entry per release with the same notes, under per-release accounting.
#[test]
fn release_into_matches_release_bit_for_bit() {
    let build = || {
        PrivacyWall::builder((0..30).map(|i| vec![f64::from(i) * 0.1, 0.5]).collect())
            .sampling(SamplingScheme::uniform_single())
            .epsilon_delta(5.0, 1e-5)
            .calibrate_for_releases(20)
            .seed(9)
            .build()
            .unwrap()
    };
    let (mut a, mut b) = (build(), build());
    let (s, f) = spec(2, 1.0);
    let stat =
        |x: &Vec<f64>, buf: &mut dp_core::ContributionBuffer| buf.dense(f).copy_from_slice(x);
    let mut out = [0.0; 2];
    for _ in 0..20 {
        let r = a.release(&s, stat).unwrap();
        b.release_into(&s, stat, &mut out).unwrap();
        assert_eq!(r.vector(f).unwrap().as_slice(), &out[..]);
    }
    assert_eq!(a.ledger().len(), 20);
    assert_eq!(b.ledger().len(), 20);
    for (x, y) in a.ledger().entries().iter().zip(b.ledger().entries()) {
        assert_eq!(x.label, y.label);
        assert_eq!(x.notes, y.notes);
    }
    assert_eq!(a.total_diagnostics(), b.total_diagnostics());
    assert!(matches!(
        b.release_into(&s, stat, &mut out),
        Err(CoreError::BudgetExhausted { .. })
    ));
    assert!(matches!(
        b.release_into(&s, stat, &mut [0.0; 3]),
        Err(CoreError::DimensionMismatch { .. })
    ));
    let mut sb = ReleaseSpec::builder("symmetric");
    sb.symmetric("s", 2, 1.0).unwrap();
    let sym = sb.build().unwrap();
    assert!(matches!(
        b.release_into(&sym, |_: &Vec<f64>, _| {}, &mut [0.0; 3]),
        Err(CoreError::InvalidParameter { .. })
    ));
}

/// A failing record is replaced by zero on the cheap path too (counted, charged).
#[test]
fn release_into_replaces_failing_records() {
    let mut wall = PrivacyWall::builder(vec![1.0; 5])
        .sampling(SamplingScheme::uniform_single())
        .epsilon_delta(1.0, 1e-5)
        .planned_run("run", 3)
        .noise_free_for_tests()
        .seed(2)
        .build()
        .unwrap();
    let mut out = [7.0];
    let (s, f) = spec(1, 1.0);
    let d = wall
        .release_into(&s, |_: &f64, b| b.dense(f)[0] = f64::NAN, &mut out)
        .unwrap();
    assert_eq!(d.replaced_records, 1);
    assert_eq!(out, [0.0]);
    assert_eq!(wall.total_diagnostics().replaced_records, 1);
}

/// A shuffled epoch visits each record exactly once per epoch; it is charged one replace-one
/// Gaussian per epoch (no amplification) and needs a planned run of whole epochs.
#[test]
fn shuffled_epoch_visits_each_record_once_and_claims_no_amplification() {
    let n = 12;
    let mut wall = PrivacyWall::builder((0..n).collect::<Vec<usize>>())
        .sampling(SamplingScheme::ShuffledEpoch)
        .epsilon_delta(2.0, 1e-5)
        .planned_run("shuffled", 3 * n as u64)
        .noise_free_for_tests()
        .seed(5)
        .build()
        .unwrap();
    let sigma = wall.noise_multiplier().unwrap();
    let expected = PrivacyEvent::gaussian(sigma, Neighbouring::ReplaceOne)
        .unwrap()
        .self_composed(3)
        .unwrap();
    assert_eq!(wall.ledger().entries()[0].event, expected);
    assert!(wall.spent_epsilon().unwrap() <= 2.0);
    let (s, f) = spec(n, 1.0);
    let mut out = vec![0.0; n];
    for _ in 0..3 {
        let mut seen = vec![0u32; n];
        for _ in 0..n {
            wall.release_into(&s, |i: &usize, b| b.dense(f)[*i] = 1.0, &mut out)
                .unwrap();
            for (k, v) in out.iter().enumerate() {
                if *v == 1.0 {
                    seen[k] += 1;
                }
            }
        }
        assert_eq!(seen, vec![1; n]);
    }
    let without_plan = PrivacyWall::builder(vec![0.0; n])
        .sampling(SamplingScheme::ShuffledEpoch)
        .epsilon_delta(2.0, 1e-5)
        .calibrate_for_releases(24)
        .build();
    assert!(matches!(without_plan, Err(CoreError::Misconfigured(_))));
    let partial = PrivacyWall::builder(vec![0.0; n])
        .sampling(SamplingScheme::ShuffledEpoch)
        .epsilon_delta(2.0, 1e-5)
        .planned_run("partial epoch", 25)
        .build();
    assert!(matches!(partial, Err(CoreError::InvalidParameter { .. })));
}

/// Population slots: with fewer records than `N` the spare slots release zero (plus noise);
/// with more, a fixed secret subset of `N` records is used; `N` is the accountant's.
#[test]
fn population_slots_fix_the_population() {
    let build = |records: Vec<f64>, seed: u64| {
        PrivacyWall::builder(records)
            .sampling(SamplingScheme::uniform_single())
            .population_slots(10)
            .epsilon_delta(1.0, 1e-5)
            .planned_run("slots", 400)
            .noise_free_for_tests()
            .seed(seed)
            .build()
            .unwrap()
    };
    let (s, f) = spec(1, 1e9);
    let mut out = [0.0];
    // 3 records in 10 slots: about 30% of draws hit a record.
    let mut wall = build(vec![1.0, 2.0, 3.0], 3);
    let sigma = wall.noise_multiplier().unwrap();
    assert_eq!(
        wall.ledger().entries()[0].event,
        PrivacyEvent::fixed_size_subsampled_gaussian(sigma, 1, 10)
            .unwrap()
            .self_composed(400)
            .unwrap()
    );
    assert_eq!(wall.public_population(), Some(10));
    let mut hits = 0;
    for _ in 0..400 {
        wall.release_into(&s, |x: &f64, b| b.dense(f)[0] = *x, &mut out)
            .unwrap();
        assert!([0.0, 1.0, 2.0, 3.0].contains(&out[0]));
        hits += usize::from(out[0] != 0.0);
    }
    // Binomial(400, 0.3): mean 120, sd 9.2; a 6 sd band.
    assert!((65..=175).contains(&hits), "{hits}");
    // 30 records in 10 slots: exactly 10 distinct records ever released.
    let mut wall = build((1..=30).map(f64::from).collect(), 4);
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..400 {
        wall.release_into(&s, |x: &f64, b| b.dense(f)[0] = *x, &mut out)
            .unwrap();
        seen.insert(out[0] as u64);
    }
    assert_eq!(seen.len(), 10);
    assert!(!seen.contains(&0));
    let poisson = PrivacyWall::builder(vec![0.0; 5])
        .sampling(SamplingScheme::poisson(0.5).unwrap())
        .population_slots(10)
        .epsilon_delta(1.0, 1e-5)
        .calibrate_for_releases(5)
        .build();
    assert!(matches!(poisson, Err(CoreError::Misconfigured(_))));
}
