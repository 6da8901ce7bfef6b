//! The population size under add/remove-one: the realised record count is private, so with a
//! declared public `N` nothing the wall releases or charges depends on it; a wall can be made to
//! require the declaration.

use dp_core::{CoreError, PrivacyWall, ReleaseSpec, SamplingScheme, VectorBlock};

/// One vector block `x` of 2 entries, and its handle.
fn spec() -> (ReleaseSpec, VectorBlock) {
    let mut b = ReleaseSpec::builder("x");
    let x = b.vector("x", 2, 1.0).unwrap();
    (b.build().unwrap(), x)
}

fn poisson(records: usize) -> dp_core::WallBuilder<[f64; 2]> {
    PrivacyWall::builder(vec![[0.3, -0.4]; records])
        .sampling(SamplingScheme::poisson(0.05).unwrap())
        .epsilon_delta(2.0, 1e-5)
        .calibrate_for_releases(20)
        .seed(4)
}

/// Neighbouring walls (n and n + 1 records) with the same declared N: same normaliser,
/// calibrated noise, accountant event, per-block noise std and sensitivity, ledger notes and
/// spent epsilon. With the old default (no declared N) the normaliser differs.
#[test]
fn declared_population_makes_every_released_number_independent_of_the_count() {
    let mut a = poisson(1000).public_population_size(1200).build().unwrap();
    let mut b = poisson(1001).public_population_size(1200).build().unwrap();
    assert_eq!(a.expected_batch_size(), 0.05 * 1200.0);
    assert_eq!(a.expected_batch_size(), b.expected_batch_size());
    assert_eq!(a.noise_multiplier(), b.noise_multiplier());
    assert_eq!(a.event_per_release(), b.event_per_release());
    let (spec, x) = spec();
    let f = |r: &[f64; 2], buf: &mut dp_core::ContributionBuffer| buf.dense(x).copy_from_slice(r);
    let (ra, rb) = (a.release(&spec, f).unwrap(), b.release(&spec, f).unwrap());
    assert_eq!(ra.expected_batch_size(), rb.expected_batch_size());
    for (x, y) in ra.blocks().iter().zip(rb.blocks()) {
        assert_eq!(x.noise_std, y.noise_std);
        assert_eq!(x.sensitivity, y.sensitivity);
    }
    assert_eq!(a.ledger().to_json().unwrap(), b.ledger().to_json().unwrap());
    assert_eq!(a.spent_epsilon().unwrap(), b.spent_epsilon().unwrap());
    assert!(format!("{a:?}").contains("1200") && !format!("{a:?}").contains("1000"));
    // The realised count is still there for the data owner (private under add/remove-one).
    assert_eq!((a.population(), b.population()), (1000, 1001));
    assert_eq!(a.public_population(), Some(1200));
    // Without a declaration the count leaks into the normaliser.
    let c = poisson(1000).build().unwrap();
    let d = poisson(1001).build().unwrap();
    assert_ne!(c.expected_batch_size(), d.expected_batch_size());
}

#[test]
fn require_public_population_refuses_an_undeclared_private_poisson_wall() {
    let err = poisson(100)
        .require_public_population()
        .build()
        .unwrap_err();
    assert!(matches!(err, CoreError::Misconfigured(_)), "{err:?}");
    assert!(
        poisson(100)
            .require_public_population()
            .public_population_size(100)
            .build()
            .is_ok()
    );
    // Non-private and replace-one walls are unaffected.
    let np = PrivacyWall::builder(vec![[0.0; 2]; 10])
        .sampling(SamplingScheme::poisson(0.5).unwrap())
        .non_private()
        .require_public_population()
        .build();
    assert!(np.is_ok());
    let fixed = PrivacyWall::builder(vec![[0.0; 2]; 10])
        .sampling(SamplingScheme::fixed_size(3).unwrap())
        .epsilon_delta(1.0, 1e-5)
        .noise_multiplier(2.0)
        .require_public_population()
        .build();
    assert!(fixed.is_ok());
}

/// Under replace-one the count is public and the accountant needs the true `m / N`: a declared
/// figure that differs is a misconfiguration.
#[test]
fn replace_one_declared_population_must_match_the_count() {
    let build = |n: usize| {
        PrivacyWall::builder(vec![[0.0; 2]; 10])
            .sampling(SamplingScheme::uniform_single())
            .epsilon_delta(1.0, 1e-5)
            .noise_multiplier(2.0)
            .public_population_size(n)
            .build()
    };
    assert!(build(10).is_ok());
    assert!(matches!(build(11), Err(CoreError::Misconfigured(_))));
}

/// With a declared N, a Poisson wall may hold no records: releases are pure noise, charged.
#[test]
fn declared_population_allows_an_empty_poisson_wall() {
    let mut w = poisson(0).public_population_size(50).build().unwrap();
    let (spec, x) = spec();
    let r = w
        .release(&spec, |r: &[f64; 2], buf| buf.dense(x).copy_from_slice(r))
        .unwrap();
    assert_eq!(r.vector(x).unwrap().len(), 2);
    assert_eq!(w.ledger().len(), 1);
    assert!(poisson(0).build().is_err());
}
