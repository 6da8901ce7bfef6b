//! "Never low": every answer of every accountant, conversion, calibration and ledger replay is
//! checked against a closed-form **lower** bound on the true privacy loss, over the whole valid
//! domain (noise multiplier down to the smallest positive `f64`, sampling rate down to `1e-12`,
//! up to `1e12` steps, delta down to `1e-300`).
//!
//! The two lower bounds (derived in `docs/accountant.md`, "Never low"):
//!
//! * **Exact Gaussian** (`q = 1`): `T` Gaussian steps with noise multiplier `sigma` are exactly
//!   one Gaussian with `mu = sqrt(T) / sigma`, whose tight profile is
//!   `delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)` (Balle & Wang 2018, Thm 8).
//! * **Sampled at least once**: with per-step inclusion probability `p1` (`q`, or `m/n`) the
//!   record is in at least one batch with probability `p = 1 - (1 - p1)^T`. The test
//!   "some output exceeds 1/2" has probability at least `p Phi(1/(2 sigma))` on the dataset
//!   with the record and at most `T Phi(-1/(2 sigma))` without it, so
//!   `delta(eps) >= p Phi(1/(2 sigma)) - e^eps min(1, T Phi(-1/(2 sigma)))`.
//!
//! An answer `eps_hat` at `delta` is sound only if `lower_delta(eps_hat) <= delta`; an answer
//! `delta_hat` at `eps` only if `delta_hat >= lower_delta(eps)`. Both bounds are evaluated with
//! outward rounding (every factor shaded by 1e-12 relative), so they are rigorous.

use dp_accountant::calibrate::{Sampling, calibrate_noise_multiplier};
use dp_accountant::conversion::{delta_from_rdp, epsilon_from_rdp};
use dp_accountant::moments::{LambdaGrid, moments_accountant_epsilon};
use dp_accountant::rdp::rdp_event;
use dp_accountant::zcdp::{
    zcdp_compose, zcdp_epsilon_bun_steinke, zcdp_epsilon_cks, zcdp_gaussian,
};
use dp_accountant::{
    Accountant, AccountantConfig, AccountantError, AccountantKind, Budget, Conversion,
    Neighbouring, Orders, delta_for_event, epsilon_for_event,
};
use proptest::prelude::*;
use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// Relative slack for the comparison itself (the bounds are already rounded outwards).
const SLACK: f64 = 1e-9;

/// A lower bound on `Phi(x)`, the standard normal CDF.
fn phi_lower(x: f64) -> f64 {
    if x.is_nan() {
        return 0.0;
    }
    (0.5 * libm::erfc(-x * FRAC_1_SQRT_2) * (1.0 - 1e-12)).min(1.0)
}

/// An upper bound on `ln Phi(x)`.
fn ln_phi_upper(x: f64) -> f64 {
    if x > -5.0 {
        (0.5 * libm::erfc(-x * FRAC_1_SQRT_2)).ln() + 1e-12
    } else {
        // Mills ratio: Phi(x) <= phi(x) / |x| for x < 0
        -0.5 * x * x - (-x).ln() - 0.5 * (2.0 * PI).ln() + 1e-12
    }
}

/// `e^eps * exp(ln_factor)` (0 when the factor is 0, whatever `eps`).
fn scaled(eps: f64, ln_factor: f64) -> f64 {
    if ln_factor == f64::NEG_INFINITY {
        0.0
    } else {
        ((eps + ln_factor) * (1.0 + 1e-15f64.copysign(eps + ln_factor))).exp() * (1.0 + 1e-12)
    }
}

/// Lower bound on the tight `delta(eps)` of `T` full-batch Gaussian steps.
fn gaussian_delta_lower(sigma: f64, steps: f64, eps: f64) -> f64 {
    let mu = steps.sqrt() / sigma * (1.0 - 1e-15);
    if mu == 0.0 {
        return 0.0;
    }
    let a = if mu.is_infinite() {
        1.0
    } else {
        phi_lower(0.5 * mu - eps / mu)
    };
    let ln_b = if mu.is_infinite() {
        f64::NEG_INFINITY
    } else {
        ln_phi_upper(-0.5 * mu - eps / mu)
    };
    a - scaled(eps, ln_b)
}

/// Lower bound on `delta(eps)` of `T` steps that each include the record with probability `p1`
/// ("sampled at least once").
fn sampled_delta_lower(sigma: f64, p1: f64, steps: f64, eps: f64) -> f64 {
    let p = -(steps * (-p1).ln_1p()).exp_m1() * (1.0 - 1e-12);
    let x = 0.5 / sigma;
    let detect = if x.is_infinite() { 1.0 } else { phi_lower(x) };
    let ln_false = if x.is_infinite() {
        f64::NEG_INFINITY
    } else {
        (steps.ln() + ln_phi_upper(-x)).min(0.0)
    };
    p * detect - scaled(eps, ln_false)
}

/// One step's sampling, as the test sees it.
#[derive(Clone, Copy, Debug)]
enum Step {
    Full(Neighbouring),
    Poisson(f64),
    Fixed(u64, u64),
}

impl Step {
    fn inclusion(self) -> f64 {
        match self {
            Step::Full(_) => 1.0,
            Step::Poisson(q) => q,
            Step::Fixed(m, n) => m as f64 / n as f64,
        }
    }
    fn sampling(self) -> Sampling {
        match self {
            Step::Full(neighbouring) => Sampling::FullBatch { neighbouring },
            Step::Poisson(rate) => Sampling::Poisson { rate },
            Step::Fixed(sample_size, population) => Sampling::FixedSize {
                sample_size,
                population,
            },
        }
    }
}

/// The best closed-form lower bound on `delta(eps)` for `steps` steps of `step` at `sigma`.
fn delta_lower(step: Step, sigma: f64, steps: u64, eps: f64) -> f64 {
    let t = steps as f64;
    let p1 = step.inclusion();
    let mut lb = sampled_delta_lower(sigma, p1, t, eps);
    if p1 == 1.0 {
        lb = lb.max(gaussian_delta_lower(sigma, t, eps));
    }
    lb.max(0.0)
}

/// Fails unless `eps_hat` is an upper bound on the true epsilon at `delta`.
fn check_epsilon(
    what: &str,
    step: Step,
    sigma: f64,
    steps: u64,
    delta: f64,
    eps_hat: f64,
) -> Result<(), TestCaseError> {
    prop_assert!(
        !eps_hat.is_nan() && eps_hat >= 0.0,
        "{what}: epsilon {eps_hat}"
    );
    if eps_hat.is_infinite() {
        return Ok(());
    }
    let lb = delta_lower(step, sigma, steps, eps_hat);
    prop_assert!(
        lb <= delta * (1.0 + SLACK),
        "{what}: epsilon {eps_hat} at delta {delta:e} is low: the true delta there is at least {lb:e} \
         ({step:?}, sigma {sigma:e}, {steps} steps)"
    );
    Ok(())
}

/// Fails unless `delta_hat` is an upper bound on the true delta at `eps`.
fn check_delta(
    what: &str,
    step: Step,
    sigma: f64,
    steps: u64,
    eps: f64,
    delta_hat: f64,
) -> Result<(), TestCaseError> {
    prop_assert!(
        (0.0..=1.0).contains(&delta_hat),
        "{what}: delta {delta_hat}"
    );
    let lb = delta_lower(step, sigma, steps, eps);
    prop_assert!(
        delta_hat >= lb * (1.0 - SLACK),
        "{what}: delta {delta_hat:e} at epsilon {eps} is low: the true delta is at least {lb:e} \
         ({step:?}, sigma {sigma:e}, {steps} steps)"
    );
    Ok(())
}

fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo.log2()..=hi.log2()).prop_map(|e| e.exp2().max(f64::from_bits(1)))
}

/// Noise multiplier over `[5e-324, 1e6]`, log-uniform, with the extremes and the region where
/// `1/sigma^2` over- and underflows weighted in.
fn sigma() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => log_uniform(f64::from_bits(1), 1e6),
        1 => log_uniform(1e-160, 1e-150),
        1 => log_uniform(1e-6, 1e-2),
        1 => Just(f64::from_bits(1)),
    ]
}

fn steps() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => log_uniform(1.0, 1e12).prop_map(|t| t.round().clamp(1.0, 1e12) as u64),
        1 => Just(1u64),
        1 => Just(1000u64),
    ]
}

fn delta() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => log_uniform(1e-300, 0.999),
        1 => log_uniform(1e-12, 1e-3),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => log_uniform(1e-12, 1.0).prop_map(|q| Step::Poisson(q.min(1.0))),
        1 => Just(Step::Poisson(1.0)),
        1 => prop_oneof![Just(Neighbouring::AddRemoveOne), Just(Neighbouring::ReplaceOne)].prop_map(Step::Full),
        1 => (1u64..1000, 1u64..1_000_000).prop_map(|(m, extra)| Step::Fixed(m, m + extra - 1)),
    ]
}

fn epsilon_query() -> impl Strategy<Value = f64> {
    prop_oneof![log_uniform(1e-6, 1e3), log_uniform(1e-300, 1e300)]
}

fn rdp_configs() -> Vec<AccountantConfig> {
    let mut out = Vec::new();
    for orders in [Orders::Continuous, Orders::DpAccountingDefault] {
        for conversion in [Conversion::Improved, Conversion::Classic] {
            out.push(AccountantConfig::new(orders.clone(), conversion).unwrap());
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    /// RDP epsilon and delta (every orders/conversion choice), the single-order conversions and
    /// a ledger replay.
    #[test]
    fn rdp_answers_are_never_low(
        st in step(), s in sigma(), t in steps(), d in delta(), e in epsilon_query(),
        a in prop_oneof![log_uniform(1.0 + 1e-9, 1e6), (2u32..300).prop_map(f64::from)],
    ) {
        let event = st.sampling().run_event(s, t).unwrap();
        for config in rdp_configs() {
            let r = epsilon_for_event(&event, d, &config).unwrap();
            check_epsilon(&config.method(), st, s, t, d, r.epsilon)?;
            let r = delta_for_event(&event, e, &config).unwrap();
            check_delta(&config.method(), st, s, t, e, r.delta)?;
        }
        let rdp = rdp_event(&event, a).unwrap();
        prop_assert!(!rdp.is_nan() && rdp >= 0.0);
        for conversion in [Conversion::Improved, Conversion::Classic] {
            let eps = epsilon_from_rdp(a, rdp, d, conversion).unwrap();
            check_epsilon("epsilon_from_rdp", st, s, t, d, eps)?;
            let del = delta_from_rdp(a, rdp, e, conversion).unwrap();
            check_delta("delta_from_rdp", st, s, t, e, del)?;
        }
        let mut ledger = Accountant::new();
        ledger.record("run", event).unwrap();
        let direct = ledger.epsilon(d).unwrap();
        check_epsilon("ledger", st, s, t, d, direct)?;
        let replayed = Accountant::from_json(&ledger.to_json().unwrap()).unwrap().epsilon(d).unwrap();
        prop_assert_eq!(direct.to_bits(), replayed.to_bits());
    }

    /// zCDP of full-batch Gaussians and the moments accountant.
    #[test]
    fn zcdp_and_moments_are_never_low(s in sigma(), q in log_uniform(1e-12, 1.0), t in steps(), d in delta()) {
        let full = Step::Full(Neighbouring::AddRemoveOne);
        let rho = zcdp_compose(&[zcdp_gaussian(s).unwrap()]).unwrap() * t as f64;
        check_epsilon("zcdp cks", full, s, t, d, zcdp_epsilon_cks(rho, d).unwrap().epsilon)?;
        check_epsilon("zcdp bun-steinke", full, s, t, d, zcdp_epsilon_bun_steinke(rho, d).unwrap())?;
        let q = q.min(1.0);
        let m = moments_accountant_epsilon(s, q, t, d, LambdaGrid::PaperCap).unwrap();
        check_epsilon("moments", Step::Poisson(q), s, t, d, m.epsilon)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Calibration returns a noise multiplier that meets the target, or a typed error.
    #[test]
    fn calibration_meets_its_target(
        st in step(), t in steps(), d in delta(),
        target in prop_oneof![4 => log_uniform(1e-2, 1e3), 1 => log_uniform(1e-300, 1e-2)],
    ) {
        let budget = Budget::new(target, d).unwrap();
        match calibrate_noise_multiplier(st.sampling(), t, &budget, &AccountantConfig::default()) {
            Ok(c) => {
                prop_assert!(c.epsilon <= target);
                check_epsilon("calibrate", st, c.noise_multiplier, t, d, target)?;
            }
            Err(AccountantError::Unreachable(_)) => {}
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]

    /// The PLD accountant (Poisson, full batches and fixed-size batches): a sound answer, or a
    /// typed error for a run it cannot hold in memory.
    #[test]
    fn pld_answers_are_never_low(
        st in prop_oneof![
            3 => log_uniform(1e-6, 1.0).prop_map(|q| Step::Poisson(q.min(1.0))),
            1 => Just(Step::Full(Neighbouring::AddRemoveOne)),
            2 => (1u64..1000, 1u64..1_000_000).prop_map(|(m, extra)| Step::Fixed(m, m + extra - 1)),
        ],
        s in sigma(), t in steps(), d in delta(), e in epsilon_query(),
    ) {
        let event = st.sampling().run_event(s, t).unwrap();
        let config = AccountantConfig::default().with_accountant(AccountantKind::Pld);
        match epsilon_for_event(&event, d, &config) {
            Ok(r) => check_epsilon("pld epsilon", st, s, t, d, r.epsilon)?,
            Err(AccountantError::ResourceLimit { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
        match delta_for_event(&event, e, &config) {
            Ok(r) => check_delta("pld delta", st, s, t, e, r.delta)?,
            Err(AccountantError::ResourceLimit { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}

/// The cases of issue 16, pinned.
#[test]
fn issue_16_cases_are_sound() {
    let poisson = Step::Poisson(0.01);
    for s in [1e-300, 1e-155, 1e-100, 2e-5] {
        let event = poisson.sampling().run_event(s, 1000).unwrap();
        for config in rdp_configs() {
            let r = epsilon_for_event(&event, 1e-5, &config).unwrap();
            check_epsilon("rdp", poisson, s, 1000, 1e-5, r.epsilon).unwrap();
            let r = delta_for_event(&event, 1.0, &config).unwrap();
            check_delta("rdp", poisson, s, 1000, 1.0, r.delta).unwrap();
        }
        let pld = AccountantConfig::default().with_accountant(AccountantKind::Pld);
        let r = epsilon_for_event(&event, 1e-5, &pld).unwrap();
        check_epsilon("pld", poisson, s, 1000, 1e-5, r.epsilon).unwrap();
        let r = delta_for_event(&event, 1.0, &pld).unwrap();
        check_delta("pld", poisson, s, 1000, 1.0, r.delta).unwrap();
    }
}
