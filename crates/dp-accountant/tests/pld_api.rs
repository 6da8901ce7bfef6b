//! Behaviour of the public PLD API: typed errors, bound ordering, composition, memory cap.

use dp_accountant::pld::{self, PldAccountant, PldConfig};
use dp_accountant::{AccountantError, Neighbouring, PrivacyEvent};

fn psg(sigma: f64, q: f64, steps: u64) -> PrivacyEvent {
    PrivacyEvent::poisson_subsampled_gaussian(sigma, q)
        .unwrap()
        .self_composed(steps)
        .unwrap()
}

#[test]
fn bad_input_is_a_typed_error() {
    let cfg = PldConfig::default();
    let ev = psg(1.0, 0.01, 10);
    for delta in [0.0, 1.0, -1e-5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            pld::epsilon(&ev, delta, &cfg),
            Err(AccountantError::InvalidParameter { name: "delta", .. })
        ));
    }
    for eps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            pld::delta(&ev, eps, &cfg),
            Err(AccountantError::InvalidParameter {
                name: "epsilon",
                ..
            })
        ));
    }
    let corrupt = PrivacyEvent::PoissonSubsampledGaussian {
        noise_multiplier: f64::NAN,
        sampling_rate: 0.1,
    };
    assert!(pld::epsilon(&corrupt, 1e-5, &cfg).is_err());
    let corrupt_fixed = PrivacyEvent::FixedSizeSubsampledGaussian {
        noise_multiplier: 1.0,
        sample_size: 0,
        population: 100,
    };
    assert!(pld::epsilon(&corrupt_fixed, 1e-5, &cfg).is_err());
    let default = PldConfig::default;
    for (bad, name) in [
        (
            default().with_value_discretization_interval(Some(0.0)),
            "value_discretization_interval",
        ),
        (
            default().with_value_discretization_interval(Some(f64::NAN)),
            "value_discretization_interval",
        ),
        (
            default().with_tail_mass_truncation(0.5),
            "tail_mass_truncation",
        ),
        (
            default().with_tail_mass_truncation(-1e-20),
            "tail_mass_truncation",
        ),
        (default().with_max_fft_len(8), "max_fft_len"),
        (
            PldConfig::new(None, f64::NAN, 1 << 20),
            "tail_mass_truncation",
        ),
    ] {
        match bad {
            Err(AccountantError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    // a deserialised configuration is checked too, and the JSON form is the fields'
    let json = serde_json::to_string(&PldConfig::default()).unwrap();
    assert_eq!(
        json,
        r#"{"value_discretization_interval":null,"tail_mass_truncation":1e-15,"max_fft_len":1048576}"#
    );
    assert_eq!(
        serde_json::from_str::<PldConfig>(&json).unwrap(),
        PldConfig::default()
    );
    for bad in [
        r#"{"value_discretization_interval":-1.0,"tail_mass_truncation":1e-15,"max_fft_len":1048576}"#,
        r#"{"value_discretization_interval":null,"tail_mass_truncation":0.5,"max_fft_len":1048576}"#,
        r#"{"value_discretization_interval":null,"tail_mass_truncation":1e-15,"max_fft_len":8}"#,
    ] {
        let e = serde_json::from_str::<PldConfig>(bad).unwrap_err();
        assert!(e.to_string().contains("invalid parameter"), "{e}");
    }
    let overflow = psg(1.0, 0.1, u64::MAX).self_composed(2).unwrap();
    assert!(PldAccountant::new(&overflow, &cfg).is_err());
}

#[test]
fn bounds_are_ordered_and_monotone() {
    let cfg = PldConfig::default();
    let mut last = 0.0;
    for steps in [1, 4, 16, 64] {
        let acc = PldAccountant::new(&psg(1.2, 0.05, steps), &cfg).unwrap();
        let e = acc.epsilon(1e-5).unwrap();
        assert!(e.lower <= e.upper && e.upper >= last, "{steps}: {e:?}");
        last = e.upper;
        let tighter = acc.epsilon(1e-7).unwrap();
        assert!(tighter.upper >= e.upper);
        // delta(eps) inverts eps(delta) on the upper bound.
        let d = acc.delta(e.upper.max(1e-9)).unwrap();
        assert!(d.upper <= 1e-5 * (1.0 + 1e-6) && d.lower <= d.upper);
    }
}

#[test]
fn numeric_gaussian_brackets_the_analytic_value() {
    // A composition with a negligible subsampled event forces the numeric path for the
    // Gaussian part; both bounds must bracket the exact analytic value of the Gaussian alone.
    let g = PrivacyEvent::gaussian(2.0, Neighbouring::AddRemoveOne)
        .unwrap()
        .self_composed(4)
        .unwrap();
    let exact = pld::epsilon(&g, 1e-5, &PldConfig::default()).unwrap();
    assert_eq!(exact.upper, exact.lower.max(exact.upper));
    assert!((exact.upper - exact.lower).abs() < 1e-9);
    let tiny = PrivacyEvent::poisson_subsampled_gaussian(1e3, 1e-4).unwrap();
    let mixed = PrivacyEvent::compose(vec![g, tiny]).unwrap();
    let acc = PldAccountant::new(&mixed, &PldConfig::default()).unwrap();
    assert!(!acc.is_analytic());
    let e = acc.epsilon(1e-5).unwrap();
    assert!(e.upper >= exact.upper - 1e-9, "{e:?} vs {exact:?}");
    assert!(e.upper - exact.upper < 1e-3, "{e:?} vs {exact:?}");
    assert!(e.lower <= exact.upper + 1e-9);
}

#[test]
fn composition_equals_self_composition() {
    let cfg = PldConfig::default()
        .with_value_discretization_interval(Some(1e-3))
        .unwrap();
    let step = PrivacyEvent::poisson_subsampled_gaussian(1.0, 0.02).unwrap();
    let a = pld::epsilon(&step.clone().self_composed(6).unwrap(), 1e-5, &cfg).unwrap();
    let three = step.self_composed(3).unwrap();
    let b = pld::epsilon(
        &PrivacyEvent::compose(vec![three.clone(), three]).unwrap(),
        1e-5,
        &cfg,
    )
    .unwrap();
    // Identical parts are merged, so the answers are identical.
    assert_eq!(a, b);
}

#[test]
fn memory_cap_coarsens_the_grid_and_keeps_bounds_valid() {
    // Tiny noise and many steps: the loss spreads over thousands of units.
    let ev = psg(0.2, 0.5, 1000);
    let cfg = PldConfig::default().with_max_fft_len(1 << 14).unwrap();
    let acc = PldAccountant::new(&ev, &cfg).unwrap();
    let h = acc.value_discretization_interval().unwrap();
    assert!(h > 1e-3, "grid should have coarsened, got {h}");
    let e = acc.epsilon(1e-6).unwrap();
    assert!(e.upper.is_finite() && e.lower <= e.upper);
    // A finer grid (bigger cap) gives bounds inside the coarse ones.
    let fine = pld::epsilon(
        &ev,
        1e-6,
        &PldConfig::default().with_max_fft_len(1 << 17).unwrap(),
    )
    .unwrap();
    assert!(
        fine.upper <= e.upper + 1e-9 && fine.lower >= e.lower - 1e-9,
        "{fine:?} {e:?}"
    );
}
