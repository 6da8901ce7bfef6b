//! Analytic Gaussian calibration against committed reference values
//! (tests/data/analytic_gaussian_reference.py: dp-accounting 0.6.0 and 60-digit mpmath).

use dp_core::{analytic_gaussian_delta, analytic_gaussian_std, classic_gaussian_std};
use serde_json::Value;

fn reference() -> Value {
    let text = include_str!("data/analytic_gaussian_reference.json");
    serde_json::from_str(text).expect("reference JSON parses")
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("missing {key}"))
}

/// The returned std achieves at most the target delta, within 1e-9 relative of it, and is the
/// exact smallest std (mpmath) to 1e-9 relative, never smaller.
#[test]
fn std_hits_the_target_delta_from_below() {
    let data = reference();
    let cases = data["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 72);
    for c in cases {
        let (eps, delta, d) = (f(c, "epsilon"), f(c, "delta"), f(c, "sensitivity"));
        let s = analytic_gaussian_std(eps, delta, d).unwrap();
        let achieved = analytic_gaussian_delta(eps, s, d).unwrap();
        assert!(
            achieved <= delta,
            "eps {eps} delta {delta}: achieved {achieved}"
        );
        assert!(
            achieved >= delta * (1.0 - 1e-9),
            "eps {eps} delta {delta}: achieved {achieved} too far below"
        );
        let exact = f(c, "sigma_exact");
        assert!(
            ((s - exact) / exact).abs() < 1e-9,
            "eps {eps} delta {delta}: {s} vs exact {exact}"
        );
        assert!(s >= exact * (1.0 - 1e-12), "below the exact smallest std");
        // never noisier than dp-accounting's binary search (which stops at a finite tolerance)
        let dpa = f(c, "sigma_dp_accounting");
        assert!(
            s <= dpa * (1.0 + 1e-12),
            "eps {eps} delta {delta}: {s} > dp-accounting {dpa}"
        );
        assert!((s - dpa) / dpa < 1e-6);
    }
}

/// The delta formula itself agrees with mpmath (and dp-accounting) at dp-accounting's std.
#[test]
fn delta_matches_references() {
    let data = reference();
    for c in data["cases"].as_array().unwrap() {
        let (eps, d) = (f(c, "epsilon"), f(c, "sensitivity"));
        let s = f(c, "sigma_dp_accounting");
        let got = analytic_gaussian_delta(eps, s, d).unwrap();
        let exact = f(c, "delta_mpmath_at_sigma");
        assert!(
            ((got - exact) / exact).abs() < 1e-11,
            "eps {eps} s {s}: {got} vs mpmath {exact}"
        );
        let dpa = f(c, "delta_dp_accounting_at_sigma");
        assert!(((got - dpa) / dpa).abs() < 1e-9, "vs dp-accounting {dpa}");
    }
}

#[test]
fn classic_refuses_epsilon_at_or_above_one() {
    for eps in [1.0, 1.5, 10.0, f64::INFINITY] {
        assert!(classic_gaussian_std(eps, 1e-5, 1.0).is_err());
    }
    let err = classic_gaussian_std(1.0, 1e-5, 1.0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("0 < eps < 1"), "{err}");
    // where valid, the classic std is a valid (over-)calibration: its delta is below target
    let s = classic_gaussian_std(0.5, 1e-5, 1.0).unwrap();
    assert!(analytic_gaussian_delta(0.5, s, 1.0).unwrap() <= 1e-5);
}
