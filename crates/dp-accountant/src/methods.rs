//! The papers' accountants for any event, as options of the front door
//! ([`AccountantKind::Moments`], [`AccountantKind::Zcdp`], [`AccountantKind::Advanced`],
//! [`AccountantKind::Linear`]; `docs/accountant.md`, section 11). The formulas live in
//! [`crate::moments`], [`crate::baselines`] and [`crate::zcdp`]; this module only splits an
//! event into its elementary steps, splits delta between them, and composes.

use crate::answer::{
    ADVANCED_METHOD, AccountantConfig, AccountantKind, DeltaReport, EpsilonReport, LINEAR_METHOD,
    MOMENTS_METHOD, ZCDP_METHOD,
};
use crate::baselines::{
    advanced_composition, amplified_gaussian_rho, amplify_by_subsampling, gaussian_epsilon,
    linear_composition,
};
use crate::error::AccountantError;
use crate::events::PrivacyEvent;
use crate::moments::{MAX_LAMBDA, moments_epsilon_for_event};
use crate::rdp::convert::epsilon_valid;
use crate::zcdp::{zcdp_compose, zcdp_epsilon_bun_steinke};

/// One elementary Gaussian step: noise multiplier and sampling ratio (`q` for Poisson, `m/n`
/// for a fixed-size sample, 1 for the full batch), repeated `count` times.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Step {
    sigma: f64,
    gamma: f64,
    count: f64,
}

/// The elementary steps of a validated event, identical ones merged, with their counts.
///
/// Amplification by subsampling (000 Thm 1) holds for Poisson sampling under add/remove-one and
/// for sampling without replacement under replace-one (Balle, Barthe & Gaboardi 2018, Thms 8
/// and 9) — the relation each event is stated under.
fn steps(event: &PrivacyEvent) -> Vec<Step> {
    fn walk(event: &PrivacyEvent, times: f64, out: &mut Vec<Step>) {
        let (sigma, gamma) = match event {
            PrivacyEvent::Gaussian {
                noise_multiplier, ..
            } => (*noise_multiplier, 1.0),
            PrivacyEvent::PoissonSubsampledGaussian {
                noise_multiplier,
                sampling_rate,
            } => (*noise_multiplier, *sampling_rate),
            PrivacyEvent::FixedSizeSubsampledGaussian {
                noise_multiplier,
                sample_size,
                population,
            } => (
                *noise_multiplier,
                // rounded up: a larger ratio only loosens the bound
                next_up(*sample_size as f64 / *population as f64).min(1.0),
            ),
            PrivacyEvent::SelfComposed { event, count } => {
                return walk(event, times * *count as f64, out);
            }
            PrivacyEvent::Composed { events } => {
                for e in events {
                    walk(e, times, out);
                }
                return;
            }
        };
        match out
            .iter_mut()
            .find(|s| s.sigma == sigma && s.gamma == gamma)
        {
            Some(s) => s.count += times,
            None => out.push(Step {
                sigma,
                gamma,
                count: times,
            }),
        }
    }
    let mut out = Vec::new();
    walk(event, 1.0, &mut out);
    out
}

fn next_up(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        x
    }
}

/// The fractions of delta given to the composition's slack (advanced) or to the zCDP
/// conversion (zCDP); the rest is shared equally by the steps. Every split gives a valid bound;
/// the smallest over this fixed grid is reported (a fixed grid keeps epsilon monotone in the
/// noise multiplier, which calibration relies on).
fn splits() -> impl Iterator<Item = f64> {
    (1..64)
        .map(|i| f64::from(i) / 64.0)
        .chain((7..=20).map(|k| 1.0 - 0.5_f64.powi(k)))
}

/// Beyond this many elementary steps the compositions (which take a `u64` count) are not
/// attempted and the answer is infinity (a valid bound; far beyond any real run).
const MAX_STEPS: f64 = 9.2e18;

/// The amplified per-step `(eps', delta')` of `step` when each step may use `delta_step`:
/// the exact Gaussian profile at `delta_iter = min(delta_step / gamma, 1/2)`, amplified.
fn amplified(step: Step, delta_step: f64) -> Result<(f64, f64), AccountantError> {
    let delta_iter = (delta_step / step.gamma).min(0.5);
    if delta_iter.is_nan() || delta_iter <= 0.0 {
        return Ok((f64::INFINITY, 0.0));
    }
    // an epsilon of 0 (enormous noise) is raised to the smallest positive: still valid
    let eps_iter = gaussian_epsilon(step.sigma, delta_iter)?.max(f64::MIN_POSITIVE);
    if !eps_iter.is_finite() {
        return Ok((f64::INFINITY, 0.0));
    }
    let a = amplify_by_subsampling(eps_iter, delta_iter, step.gamma)?;
    Ok((a.epsilon.max(f64::MIN_POSITIVE), a.delta))
}

/// `delta / n`, shaved by `1e-12` relative so that `n` shares never sum above `delta`.
fn share(delta: f64, n: f64) -> f64 {
    delta / n * (1.0 - 1e-12)
}

fn linear(steps: &[Step], delta: f64) -> Result<f64, AccountantError> {
    let n: f64 = steps.iter().map(|s| s.count).sum();
    let delta_step = share(delta, n);
    let mut total = 0.0;
    for &s in steps {
        let (eps, d) = amplified(s, delta_step)?;
        if !eps.is_finite() {
            return Ok(f64::INFINITY);
        }
        total += linear_composition(eps, d, s.count as u64)?.epsilon;
    }
    Ok(total)
}

fn advanced(steps: &[Step], delta: f64) -> Result<f64, AccountantError> {
    let n: f64 = steps.iter().map(|s| s.count).sum();
    let mut best = f64::INFINITY;
    for f in splits() {
        let delta_step = share((1.0 - f) * delta, n);
        // different steps: each is also (max eps', max delta')-DP
        let (mut eps, mut d) = (0.0_f64, 0.0_f64);
        for &s in steps {
            let (e, dd) = amplified(s, delta_step)?;
            eps = eps.max(e);
            d = d.max(dd);
        }
        let slack = f * delta;
        // a slack that underflows (delta near the smallest subnormal) certifies nothing
        if !eps.is_finite() || slack <= 0.0 {
            continue;
        }
        let r = advanced_composition(eps, d, n as u64, slack)?;
        best = best.min(r.epsilon);
    }
    Ok(best)
}

fn zcdp_000(steps: &[Step], delta: f64) -> Result<f64, AccountantError> {
    let n: f64 = steps.iter().map(|s| s.count).sum();
    let mut best = f64::INFINITY;
    for f in splits() {
        let delta_step = share((1.0 - f) * delta, n);
        let mut rhos = Vec::with_capacity(steps.len());
        for &s in steps {
            let delta_prime = delta_step.min(0.5 * s.gamma);
            if delta_prime.is_nan() || delta_prime <= 0.0 {
                rhos.push(f64::INFINITY);
                continue;
            }
            rhos.push(s.count * amplified_gaussian_rho(s.sigma, s.gamma, delta_prime)?);
        }
        let rho = zcdp_compose(&rhos)?;
        let slack = f * delta;
        if rho.is_nan() || slack <= 0.0 {
            continue;
        }
        let eps = if rho > 0.0 {
            zcdp_epsilon_bun_steinke(rho, slack)?
        } else {
            0.0
        };
        best = best.min(eps);
    }
    Ok(best)
}

/// `epsilon` of a validated event at a valid `delta` by one of the papers' accountants.
pub(crate) fn epsilon(
    event: &PrivacyEvent,
    delta: f64,
    config: &AccountantConfig,
) -> Result<EpsilonReport, AccountantError> {
    let report = |epsilon: f64, method: &str| EpsilonReport {
        // never NaN: a NaN (never expected) is the trivial bound
        epsilon: if epsilon.is_nan() {
            f64::INFINITY
        } else {
            epsilon
        },
        delta,
        order: f64::NAN,
        rdp: f64::NAN,
        method: method.to_string(),
        epsilon_lower: None,
    };
    let steps = steps(event);
    let n: f64 = steps.iter().map(|s| s.count).sum();
    match config.accountant() {
        AccountantKind::Rdp | AccountantKind::Pld => Err(AccountantError::Unsupported(
            "not one of the papers' accountants",
        )),
        AccountantKind::Moments => {
            let m = moments_epsilon_for_event(event, delta, MAX_LAMBDA)?;
            let order = m.lambda as f64 + 1.0;
            Ok(EpsilonReport {
                order,
                rdp: crate::rdp::rdp_valid(event, order),
                ..report(m.epsilon, MOMENTS_METHOD)
            })
        }
        _ if n > MAX_STEPS => Ok(report(f64::INFINITY, &config.method())),
        AccountantKind::Linear => Ok(report(linear(&steps, delta)?, LINEAR_METHOD)),
        AccountantKind::Advanced => Ok(report(advanced(&steps, delta)?, ADVANCED_METHOD)),
        AccountantKind::Zcdp => {
            let paper = zcdp_000(&steps, delta)?;
            let rdp_config = config.clone().with_accountant(AccountantKind::Rdp);
            let rdp = epsilon_valid(event, delta, &rdp_config).epsilon;
            Ok(report(paper.max(rdp), ZCDP_METHOD))
        }
    }
}

/// `delta` of a validated event at a valid `epsilon` by one of the papers' accountants: the
/// smallest delta (to `1e-9` relative in `ln delta`, rounded up) whose epsilon is at most the
/// given one; 1 if none below 1 is. For zCDP, whose epsilon is the larger of 000's figure and
/// RDP's, the larger of the two deltas (the same answer, without re-optimising RDP orders at
/// every trial delta).
pub(crate) fn delta(
    event: &PrivacyEvent,
    epsilon: f64,
    config: &AccountantConfig,
) -> Result<DeltaReport, AccountantError> {
    let steps = steps(event);
    let n: f64 = steps.iter().map(|s| s.count).sum();
    let own = |d: f64| -> Result<f64, AccountantError> {
        match config.accountant() {
            AccountantKind::Zcdp if n <= MAX_STEPS => zcdp_000(&steps, d),
            AccountantKind::Zcdp => Ok(f64::INFINITY),
            _ => Ok(self::epsilon(event, d, config)?.epsilon),
        }
    };
    let mut delta = smallest_delta(|d| Ok(own(d)? <= epsilon))?;
    if config.accountant() == AccountantKind::Zcdp {
        let rdp_config = config.clone().with_accountant(AccountantKind::Rdp);
        delta = delta.max(crate::rdp::convert::delta_valid(event, epsilon, &rdp_config).delta);
    }
    Ok(DeltaReport {
        delta,
        epsilon,
        order: f64::NAN,
        method: config.method(),
        delta_lower: None,
    })
}

/// The smallest delta in `[f64::MIN_POSITIVE, 1 - 1e-9]` (to `1e-9` relative in `ln delta`, the
/// upper end of the bracket) at which `fits`, given that `fits` is monotone; 1 if none does.
fn smallest_delta(
    fits: impl Fn(f64) -> Result<bool, AccountantError>,
) -> Result<f64, AccountantError> {
    let (mut lo, mut hi) = (f64::MIN_POSITIVE.ln(), (1.0 - 1e-9_f64).ln());
    if !fits(hi.exp())? {
        return Ok(1.0);
    }
    if fits(lo.exp())? {
        return Ok(lo.exp());
    }
    for _ in 0..100 {
        if hi - lo <= 1e-9 * hi.abs() {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if fits(mid.exp())? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi.exp())
}
