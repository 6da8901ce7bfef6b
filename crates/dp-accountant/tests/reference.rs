//! Comparisons with committed reference values (tests/data/*.json, written by
//! tests/data/make_reference.py from mpmath and dp_accounting 0.6.0).

use dp_accountant::rdp::{rdp_fixed_size_subsampled_gaussian, rdp_poisson_subsampled_gaussian};
use dp_accountant::{AccountantConfig, Conversion, Orders, PrivacyEvent, epsilon_for_event};
use serde_json::Value;

fn rows(json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).expect("reference JSON parses");
    v["rows"].as_array().expect("rows").clone()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("field {k}"))
}

/// Integer orders: 1e-12 relative to the exact mpmath binomial sum. Fractional orders: within
/// 1e-10 relative and never below the mpmath quadrature.
#[test]
fn per_step_rdp_matches_mpmath() {
    let data = rows(include_str!("data/rdp_reference.json"));
    assert!(data.len() >= 700);
    let mut worst_int: f64 = 0.0;
    let mut worst_frac: f64 = 0.0;
    for r in &data {
        let (s, q, a, exact) = (f(r, "sigma"), f(r, "q"), f(r, "order"), f(r, "rdp"));
        let got = rdp_poisson_subsampled_gaussian(s, q, a).unwrap();
        let rel = (got - exact) / exact;
        if a.fract() == 0.0 {
            assert!(
                rel.abs() <= 1e-12,
                "sigma={s} q={q} a={a}: {got:e} vs {exact:e} ({rel:e})"
            );
            worst_int = worst_int.max(rel.abs());
        } else {
            assert!(
                rel.abs() <= 1e-10,
                "sigma={s} q={q} a={a}: {got:e} vs {exact:e} ({rel:e})"
            );
            // "never below": allow only the last-bit rounding of the f64 reference itself
            assert!(
                got >= exact * (1.0 - 4.0 * f64::EPSILON),
                "below: sigma={s} q={q} a={a}: {got:e} < {exact:e}"
            );
            worst_frac = worst_frac.max(rel.abs());
        }
    }
    println!("worst relative error: integer {worst_int:e}, fractional {worst_frac:e}");
}

/// End to end on dp_accounting's default orders: never above its RdpAccountant, and equal to
/// 1e-9 wherever its per-step series is right at its optimal order.
#[test]
fn epsilon_matches_dp_accounting() {
    let data = rows(include_str!("data/eps_reference.json"));
    let config = AccountantConfig::new(Orders::DpAccountingDefault, Conversion::Improved).unwrap();
    let mut compared = 0;
    for r in &data {
        let (s, q, delta) = (f(r, "sigma"), f(r, "q"), f(r, "delta"));
        let steps = r["steps"].as_u64().unwrap();
        let theirs = f(r, "epsilon");
        let event = PrivacyEvent::poisson_subsampled_gaussian(s, q)
            .unwrap()
            .self_composed(steps)
            .unwrap();
        let ours = epsilon_for_event(&event, delta, &config).unwrap();
        assert!(
            ours.epsilon <= theirs * (1.0 + 1e-9) + 1e-12,
            "above dp_accounting: sigma={s} q={q} T={steps} delta={delta}: {} > {theirs}",
            ours.epsilon
        );
        let (rdp_theirs, rdp_exact) = (
            f(r, "per_step_rdp_dp_accounting"),
            f(r, "per_step_rdp_exact"),
        );
        let series_right = ((rdp_theirs - rdp_exact) / rdp_exact).abs() <= 1e-10;
        if series_right && ours.order == f(r, "order") {
            let rel = ((ours.epsilon - theirs) / theirs).abs();
            assert!(
                rel <= 1e-9,
                "sigma={s} q={q} T={steps} delta={delta}: {} vs {theirs}",
                ours.epsilon
            );
            compared += 1;
        }
    }
    assert!(
        compared >= data.len() / 2,
        "only {compared} of {} compared",
        data.len()
    );
}

/// Fixed-size sampling without replacement: same Thm 27 bound as dp_accounting, never below it
/// by more than rounding, never far above it.
#[test]
fn fixed_size_matches_dp_accounting() {
    let data = rows(include_str!("data/wor_reference.json"));
    for r in &data {
        let (s, a, theirs) = (f(r, "sigma"), f(r, "order"), f(r, "rdp"));
        let (m, n) = (
            r["sample_size"].as_u64().unwrap(),
            r["population"].as_u64().unwrap(),
        );
        let ours = rdp_fixed_size_subsampled_gaussian(s, m, n, a).unwrap();
        let rel = (ours - theirs) / theirs;
        assert!(
            rel >= -1e-9,
            "below dp_accounting: sigma={s} m={m} n={n} a={a}: {ours:e} vs {theirs:e}"
        );
        assert!(
            rel <= 1e-6,
            "far above dp_accounting: sigma={s} m={m} n={n} a={a}: {ours:e} vs {theirs:e}"
        );
    }
}

/// dp_accounting 0.6, `rdp_privacy_accountant_test.test_epsilon_delta_consistency`: one step of
/// the Poisson-subsampled Gaussian at q = 0.01, noise multiplier 100, orders 2..49, delta 1e-3:
/// dp_accounting answers epsilon 0 (the total-variation shortcut `delta^2 + expm1(-rdp) > 0`);
/// before the shortcut this crate said 0.0422. Its `get_delta(0)` is then at most delta. The same
/// with dp_accounting's default orders at delta = 2e-4 (this crate said 5.8e-4 before).
#[test]
fn total_variation_shortcut_matches_dp_accounting() {
    use dp_accountant::{Conversion, Orders, delta_for_event};
    let event = PrivacyEvent::poisson_subsampled_gaussian(100.0, 0.01).unwrap();
    let orders = Orders::custom((2..50).map(f64::from).collect()).unwrap();
    let config = AccountantConfig::new(orders, Conversion::Improved).unwrap();
    let r = epsilon_for_event(&event, 1e-3, &config).unwrap();
    assert_eq!(r.epsilon, 0.0, "{r:?}");
    // and the continuous search finds it too
    let r = epsilon_for_event(&event, 1e-3, &AccountantConfig::default()).unwrap();
    assert_eq!(r.epsilon, 0.0, "{r:?}");
    let config = AccountantConfig::new(Orders::DpAccountingDefault, Conversion::Improved).unwrap();
    let r = epsilon_for_event(&event, 2e-4, &config).unwrap();
    assert_eq!(r.epsilon, 0.0, "{r:?}");
    // consistency: delta at a tiny epsilon is at most the delta asked for
    let d = delta_for_event(&event, 1e-300, &config).unwrap();
    assert!(d.delta <= 2e-4, "{d:?}");
    // not where the condition fails: delta 1e-5 < sqrt(1 - exp(-rdp))
    let r = epsilon_for_event(&event, 1e-5, &config).unwrap();
    assert!(r.epsilon > 0.0, "{r:?}");
}
