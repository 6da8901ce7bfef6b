//! Baselines, zCDP and the moments accountant: closed forms, the papers' numbers, no overflow.

use dp_accountant::baselines::*;
use dp_accountant::moments::{LambdaGrid, moments_accountant_epsilon, paper_lambda_cap};
use dp_accountant::zcdp::*;
use dp_accountant::{AccountantConfig, Budget, PrivacyEvent, epsilon_for_event};

#[test]
fn moments_accountant_reproduces_003() {
    // 003 (VIPS, Table 1 / Sec. 4): sigma = 1.24, q = 0.05 (S = 20000 of N), 20 iterations,
    // delta = 1e-4: eps = 2.44 with lambda up to floor(sigma^2 ln(1/(q sigma))) = 4.
    assert_eq!(paper_lambda_cap(1.24, 0.05).unwrap(), 4);
    let r = moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, LambdaGrid::PaperCap).unwrap();
    assert!((r.epsilon - 2.4411).abs() < 5e-5, "{}", r.epsilon);
    assert_eq!(r.lambda, 4);
    // The modern accounting of the same run: continuous orders, improved conversion.
    let run = PrivacyEvent::poisson_subsampled_gaussian(1.24, 0.05)
        .unwrap()
        .self_composed(20)
        .unwrap();
    let modern = epsilon_for_event(&run, 1e-4, &AccountantConfig::default()).unwrap();
    assert!((modern.epsilon - 1.2132).abs() < 1e-3, "{}", modern.epsilon);
    // Uncapping lambda alone already helps.
    let uncapped = moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, LambdaGrid::UpTo(64)).unwrap();
    assert!(uncapped.epsilon < r.epsilon && uncapped.epsilon > modern.epsilon);
}

#[test]
fn linear_and_advanced_composition() {
    let l = linear_composition(0.1, 1e-6, 50).unwrap();
    assert!((l.epsilon - 5.0).abs() < 1e-12 && (l.delta - 5e-5).abs() < 1e-18);
    let a = advanced_composition(0.1, 1e-6, 50, 1e-5).unwrap();
    let expect = (2.0 * 50.0 * (1e5f64).ln()).sqrt() * 0.1 + 50.0 * 0.1 * 0.1f64.exp_m1();
    assert!((a.epsilon - expect).abs() < 1e-12);
    assert!((a.delta - (50.0 * 1e-6 + 1e-5)).abs() < 1e-18);
    assert!(advanced_composition(0.1, 1e-6, 0, 1e-5).is_err());
    assert!(advanced_composition(0.0, 1e-6, 5, 1e-5).is_err());
}

#[test]
fn optimal_composition_is_between_and_does_not_overflow() {
    for (eps, k) in [(0.1, 10u64), (0.5, 100), (1.0, 30)] {
        let opt = optimal_composition_epsilon(eps, 0.0, k, 1e-5).unwrap();
        let adv = advanced_composition(eps, 0.0, k, 1e-5).unwrap().epsilon;
        let lin = k as f64 * eps;
        assert!(opt <= adv.min(lin) + 1e-9, "{opt} {adv} {lin}");
        // consistency: the delta at the returned epsilon is within the target
        assert!(optimal_composition_delta(eps, 0.0, k, opt).unwrap() <= 1e-5 * (1.0 + 1e-9));
    }
    // k * eps = 2000 >> 709 (where dp_accounting overflows)
    let big = optimal_composition_epsilon(2.0, 0.0, 1000, 1e-6).unwrap();
    assert!(big.is_finite() && big < 2000.0);
    // one (0.7, 0)-DP mechanism at delta_total 1e-9: just below 0.7
    let one = optimal_composition_epsilon(0.7, 0.0, 1, 1e-9).unwrap();
    assert!(one <= 0.7 && one > 0.7 - 1e-8, "{one}");
    assert!(optimal_composition_epsilon(0.1, 0.01, 10, 1e-5).is_err());
}

#[test]
fn amplification_matches_000_theorem_1() {
    let r = amplify_by_subsampling(1.0, 1e-6, 0.01).unwrap();
    assert!((r.epsilon - (1.0 + 0.01 * (1f64.exp() - 1.0)).ln()).abs() < 1e-15);
    assert!((r.delta - 1e-8).abs() < 1e-22);
    let tiny = amplify_by_subsampling(1e-12, 0.0, 1e-9).unwrap();
    assert!(tiny.epsilon > 0.0 && (tiny.epsilon - 1e-21).abs() < 1e-30);
    assert!(amplify_by_subsampling(1.0, 0.0, 0.0).is_err());
}

#[test]
fn per_iteration_budget_inverts_table_1() {
    let total = Budget::new(1.0, 1e-4).unwrap();
    let (j, nu, dp) = (200u64, 0.005, 1e-7);
    let b = per_iteration_budget(&total, j, nu, dp).unwrap();
    // Step 1 back: eps_tot = rho + 2 sqrt(rho ln(1/delta_tot)) with rho = J eps'^2/(4 ln(1.25/delta'))
    let rho = j as f64 * b.epsilon_prime.powi(2) / (4.0 * (1.25 / dp).ln());
    assert!((zcdp_epsilon_bun_steinke(rho, 1e-4).unwrap() - 1.0).abs() < 1e-12);
    // Step 2 back: amplification of (eps_iter, delta_iter) gives (eps', delta')
    let amp = amplify_by_subsampling(b.epsilon_iter, b.delta_iter, nu).unwrap();
    assert!((amp.epsilon - b.epsilon_prime).abs() < 1e-12 && (amp.delta - dp).abs() < 1e-20);
    assert!(per_iteration_budget(&total, 0, nu, dp).is_err());
    assert!(per_iteration_budget(&total, j, nu, 0.5).is_err());
}

#[test]
fn zcdp_conversions() {
    assert_eq!(zcdp_gaussian(2.0).unwrap(), 0.125);
    assert_eq!(zcdp_compose(&[0.1, 0.2]).unwrap(), 0.1 + 0.2);
    for (rho, delta) in [(0.01, 1e-5), (0.1, 1e-5), (1.0, 1e-8), (10.0, 1e-3)] {
        let bs = zcdp_epsilon_bun_steinke(rho, delta).unwrap();
        let cks = zcdp_epsilon_cks(rho, delta).unwrap();
        assert!(cks.epsilon <= bs && cks.epsilon > 0.0);
        let d = zcdp_delta_cks(rho, cks.epsilon).unwrap();
        assert!(d <= delta * (1.0 + 1e-6), "{d} vs {delta}");
        assert!((zcdp_delta_bun_steinke(rho, bs).unwrap() - delta).abs() < 1e-9 * delta);
        // zCDP of a Gaussian agrees with the RDP route
        let sigma = (1.0 / (2.0 * rho)).sqrt();
        let g = PrivacyEvent::gaussian(sigma, dp_accountant::Neighbouring::AddRemoveOne).unwrap();
        let via_rdp = epsilon_for_event(&g, delta, &AccountantConfig::default()).unwrap();
        assert!((via_rdp.epsilon - cks.epsilon).abs() < 1e-9 * cks.epsilon);
    }
    assert!(zcdp_epsilon_cks(0.0, 1e-5).is_err());
    assert!(zcdp_epsilon_bun_steinke(0.1, 1.0).is_err());
    assert!(zcdp_compose(&[f64::NAN]).is_err());
}

/// Issue 17: a huge `k` is refused with a typed error instead of an `O(k)` loop per bisection
/// step (10^12 would run for hours).
#[test]
fn optimal_composition_refuses_huge_k() {
    use dp_accountant::AccountantError;
    use dp_accountant::baselines::{optimal_composition_delta, optimal_composition_epsilon};
    let e = optimal_composition_epsilon(0.1, 0.0, 1_000_000_000_000, 1e-5).unwrap_err();
    assert!(
        matches!(e, AccountantError::ResourceLimit { parameter: "k", .. }),
        "{e}"
    );
    let e = optimal_composition_delta(0.1, 0.0, 1_000_000_000_000, 1.0).unwrap_err();
    assert!(matches!(e, AccountantError::ResourceLimit { .. }), "{e}");
}
