//! The baselines the papers compare against, for `(epsilon, delta)`-DP mechanisms:
//! linear composition, advanced composition (Dwork & Roth 2014, Thm 3.20), the optimal
//! composition of Kairouz, Oh & Viswanath (2015, Thm 3.3) for `k` identical mechanisms,
//! amplification by subsampling (000 Thm 1, after Li et al. 2012), and the per-iteration budget
//! split of 000 Table 1 (zCDP composition + amplification).

use serde::{Deserialize, Serialize};

use crate::budget::Budget;
use crate::error::{AccountantError, check_delta, check_positive, check_rate};
use crate::numeric::{LogSignedSum, ln_binom_int, log1p_exp};

/// An `(epsilon, delta)` pair (not necessarily a budget: `delta` may be 0).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpsDelta {
    /// Epsilon.
    pub epsilon: f64,
    /// Delta.
    pub delta: f64,
}

fn check_eps_delta(epsilon: f64, delta: f64) -> Result<(), AccountantError> {
    check_positive("epsilon", epsilon)?;
    if !(0.0..1.0).contains(&delta) {
        return Err(AccountantError::InvalidParameter {
            name: "delta",
            value: delta,
            reason: "must lie in [0, 1)",
        });
    }
    Ok(())
}

fn check_k(k: u64) -> Result<(), AccountantError> {
    if k == 0 {
        return Err(AccountantError::InvalidParameter {
            name: "k",
            value: 0.0,
            reason: "must be >= 1",
        });
    }
    Ok(())
}

/// Largest `k` the optimal composition (an `O(k)` sum per evaluation) accepts.
pub const MAX_OPTIMAL_K: u64 = 1 << 20;

/// `k` for the optimal composition: `1 <= k <= MAX_OPTIMAL_K` (refused, not a hang).
fn check_k_optimal(k: u64) -> Result<(), AccountantError> {
    check_k(k)?;
    if k > MAX_OPTIMAL_K {
        return Err(AccountantError::ResourceLimit {
            parameter: "k",
            value: k.to_string(),
            reason: format!(
                "the optimal composition sums k/2 terms per evaluation; at most {MAX_OPTIMAL_K}"
            ),
        });
    }
    Ok(())
}

/// Linear (basic) composition: `k` mechanisms each `(eps, delta)`-DP are `(k eps, k delta)`-DP.
///
/// # Errors
/// `epsilon` not finite and `> 0`, `delta` outside `[0, 1)`, `k == 0`.
pub fn linear_composition(epsilon: f64, delta: f64, k: u64) -> Result<EpsDelta, AccountantError> {
    check_eps_delta(epsilon, delta)?;
    check_k(k)?;
    Ok(EpsDelta {
        epsilon: k as f64 * epsilon,
        delta: (k as f64 * delta).min(1.0),
    })
}

/// Advanced composition (Dwork & Roth 2014, Thm 3.20): `k`-fold adaptive composition of
/// `(eps, delta)`-DP mechanisms is `(eps', k delta + delta_slack)`-DP with
/// `eps' = sqrt(2 k ln(1/delta_slack)) eps + k eps (e^eps - 1)`.
///
/// # Example
/// ```
/// let r = dp_accountant::baselines::advanced_composition(0.1, 1e-7, 100, 1e-5)?;
/// assert!(r.epsilon < 100.0 * 0.1);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Bad `epsilon`/`delta`, `k == 0`, `delta_slack` outside `(0, 1)`.
pub fn advanced_composition(
    epsilon: f64,
    delta: f64,
    k: u64,
    delta_slack: f64,
) -> Result<EpsDelta, AccountantError> {
    check_eps_delta(epsilon, delta)?;
    check_k(k)?;
    check_delta("delta_slack", delta_slack)?;
    let kf = k as f64;
    Ok(EpsDelta {
        epsilon: (2.0 * kf * (1.0 / delta_slack).ln()).sqrt() * epsilon
            + kf * epsilon * epsilon.exp_m1(),
        delta: (kf * delta + delta_slack).min(1.0),
    })
}

/// `delta` of the optimal `k`-fold composition at `epsilon_total` (Kairouz, Oh & Viswanath
/// 2015, Thm 3.3, in log space so that `k eps` far above 709 does not overflow):
/// `1 - (1-delta)^k (1 - sum_l C(k,l) [e^{(k-l) eps} - e^{eps_total} e^{l eps}]_+ / (1+e^eps)^k)`.
///
/// # Errors
/// Bad `epsilon`/`delta`, `k == 0`, `epsilon_total` negative or NaN;
/// [`AccountantError::ResourceLimit`] for `k >` [`MAX_OPTIMAL_K`].
pub fn optimal_composition_delta(
    epsilon: f64,
    delta: f64,
    k: u64,
    epsilon_total: f64,
) -> Result<f64, AccountantError> {
    check_eps_delta(epsilon, delta)?;
    check_k_optimal(k)?;
    if epsilon_total.is_nan() || epsilon_total < 0.0 {
        return Err(AccountantError::InvalidParameter {
            name: "epsilon_total",
            value: epsilon_total,
            reason: "must be >= 0",
        });
    }
    Ok(kov_delta(epsilon, delta, k, epsilon_total))
}

fn kov_delta(epsilon: f64, delta: f64, k: u64, eps_total: f64) -> f64 {
    let kf = k as f64;
    let ln_norm = kf * log1p_exp(epsilon);
    let mut sum = LogSignedSum::new();
    for l in 0..=k {
        let gap = (kf - 2.0 * l as f64) * epsilon - eps_total;
        if gap <= 0.0 {
            break;
        }
        // C(k,l) e^{(k-l) eps} (1 - e^{-gap}) / (1+e^eps)^k
        let t = ln_binom_int(k, l) + (kf - l as f64) * epsilon + (-(-gap).exp_m1()).ln() - ln_norm;
        sum.add(t, true);
    }
    let (ln_dg, _) = sum.value();
    let dg = ln_dg.exp().min(1.0);
    // 1 - (1-delta)^k (1-dg)
    let ln_keep = kf * (-delta).ln_1p() + (-dg).ln_1p();
    (-ln_keep.exp_m1()).clamp(0.0, 1.0)
}

/// The smallest `epsilon_total` of the optimal `k`-fold composition of `(eps, delta)`-DP
/// mechanisms at total `delta_total` (KOV 2015, Thm 3.3), found by bisection to 1e-12 relative
/// and rounded up.
///
/// # Example
/// ```
/// use dp_accountant::baselines::{advanced_composition, optimal_composition_epsilon};
/// let opt = optimal_composition_epsilon(0.1, 0.0, 100, 1e-5)?;
/// let adv = advanced_composition(0.1, 0.0, 100, 1e-5)?.epsilon;
/// assert!(opt < adv);
/// // no overflow far beyond k eps = 709
/// assert!(optimal_composition_epsilon(1.0, 0.0, 2000, 1e-5)?.is_finite());
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Bad inputs; [`AccountantError::Unreachable`] if `delta_total < 1 - (1 - delta)^k`;
/// [`AccountantError::ResourceLimit`] for `k >` [`MAX_OPTIMAL_K`].
pub fn optimal_composition_epsilon(
    epsilon: f64,
    delta: f64,
    k: u64,
    delta_total: f64,
) -> Result<f64, AccountantError> {
    check_eps_delta(epsilon, delta)?;
    check_k_optimal(k)?;
    check_delta("delta_total", delta_total)?;
    let kf = k as f64;
    if kov_delta(epsilon, delta, k, kf * epsilon) > delta_total {
        return Err(AccountantError::Unreachable(
            crate::error::Unreachable::CompositionDelta {
                delta_total,
                delta,
                k,
            },
        ));
    }
    if kov_delta(epsilon, delta, k, 0.0) <= delta_total {
        return Ok(0.0);
    }
    let (mut lo, mut hi) = (0.0, kf * epsilon);
    while hi - lo > 1e-12 * hi {
        let mid = 0.5 * (lo + hi);
        if kov_delta(epsilon, delta, k, mid) <= delta_total {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}

/// Amplification by subsampling (000 Thm 1, Li et al. 2012): an `(eps, delta)`-DP mechanism
/// on a subsample drawn with ratio `q` is `(log1p(q expm1(eps)), q delta)`-DP.
///
/// # Errors
/// Bad `epsilon`/`delta`; `q` outside `(0, 1]`.
pub fn amplify_by_subsampling(
    epsilon: f64,
    delta: f64,
    q: f64,
) -> Result<EpsDelta, AccountantError> {
    check_eps_delta(epsilon, delta)?;
    check_rate("q", q)?;
    Ok(EpsDelta {
        epsilon: (q * epsilon.exp_m1()).ln_1p(),
        delta: q * delta,
    })
}

/// The per-iteration budget of 000 Table 1.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PerIterationBudget {
    /// Total zCDP `rho` allowed by `(eps_tot, delta_tot)` (Eq. 13 with Prop. 4).
    pub rho_total: f64,
    /// Per-iteration `rho = rho_total / J`.
    pub rho_per_iteration: f64,
    /// `eps'`: the amplified per-iteration epsilon (Step 1).
    pub epsilon_prime: f64,
    /// `delta'`: the amplified per-iteration delta (an input of the split).
    pub delta_prime: f64,
    /// `eps_iter` with `eps' = log(1 + nu (e^eps_iter - 1))` (Step 2, Eq. 14).
    pub epsilon_iter: f64,
    /// `delta_iter = delta' / nu` (Eq. 14).
    pub delta_iter: f64,
}

/// The per-iteration privacy budget of 000 Table 1 for `J` iterations with sampling ratio `nu`.
///
/// Step 1 (zCDP composition, Eq. 13): `eps_tot = rho + 2 sqrt(rho ln(1/delta_tot))` gives
/// `rho_total = (sqrt(ln(1/delta_tot) + eps_tot) - sqrt(ln(1/delta_tot)))^2`; each of the `J`
/// iterations gets `rho_total / J`, and the Gaussian calibration `tau >= 2 ln(1.25/delta')
/// Delta^2 / eps'^2` (Eq. 11) has `rho = eps'^2 / (4 ln(1.25/delta'))`, so
/// `eps' = 2 sqrt(rho_total / J * ln(1.25/delta'))`.
/// Step 2 (amplification, Eq. 14): `eps_iter = ln(1 + expm1(eps')/nu)`, `delta_iter = delta'/nu`.
/// The split needs `delta'` (the paper leaves it free); the classic Gaussian calibration behind
/// Eq. 11 is only valid for `eps_iter < 1`, which the caller must check.
///
/// # Example
/// ```
/// use dp_accountant::{Budget, baselines::per_iteration_budget};
/// let b = per_iteration_budget(&Budget::new(1.0, 1e-4)?, 100, 0.01, 1e-6)?;
/// assert!(b.epsilon_iter > b.epsilon_prime);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// `iterations == 0`; `nu` outside `(0, 1]`; `delta_prime` outside `(0, nu)`.
pub fn per_iteration_budget(
    total: &Budget,
    iterations: u64,
    nu: f64,
    delta_prime: f64,
) -> Result<PerIterationBudget, AccountantError> {
    check_k(iterations)?;
    check_rate("nu", nu)?;
    check_delta("delta_prime", delta_prime)?;
    if delta_prime >= nu {
        return Err(AccountantError::InvalidParameter {
            name: "delta_prime",
            value: delta_prime,
            reason: "must be below nu (delta_iter = delta'/nu < 1)",
        });
    }
    let l = (1.0 / total.delta()).ln();
    let root = (l + total.epsilon()).sqrt() - l.sqrt();
    let rho_total = root * root;
    let rho = rho_total / iterations as f64;
    let epsilon_prime = 2.0 * (rho * (1.25 / delta_prime).ln()).sqrt();
    Ok(PerIterationBudget {
        rho_total,
        rho_per_iteration: rho,
        epsilon_prime,
        delta_prime,
        epsilon_iter: (epsilon_prime.exp_m1() / nu).ln_1p(),
        delta_iter: delta_prime / nu,
    })
}

/// `eps_iter = sqrt(2 ln(1.25/delta_iter)) / sigma`: the classic Gaussian calibration of 000
/// Eq. 11 (Dwork & Roth 2014, Thm A.1) solved for epsilon, with `sigma` the noise multiplier
/// (noise std / L2 sensitivity). The theorem behind it holds only for `eps_iter < 1`; the
/// caller decides what a larger value means ([`gaussian_epsilon`] is the exact, always valid
/// answer).
///
/// # Errors
/// `noise_multiplier` not finite and `> 0`; `delta_iter` outside `(0, 1)`.
pub fn classic_gaussian_epsilon(
    noise_multiplier: f64,
    delta_iter: f64,
) -> Result<f64, AccountantError> {
    check_positive("noise_multiplier", noise_multiplier)?;
    check_delta("delta_iter", delta_iter)?;
    Ok((2.0 * (1.25 / delta_iter).ln()).sqrt() / noise_multiplier)
}

/// The per-step zCDP `rho` that 000 Table 1 assigns to one Gaussian step with noise multiplier
/// `sigma` on a subsample of ratio `nu` at per-step `delta'`: `eps_iter` by Eq. 11 at
/// `delta_iter = delta'/nu` ([`classic_gaussian_epsilon`]), amplified by Eq. 12
/// ([`amplify_by_subsampling`]) to `eps'`, and read as the Gaussian of Eq. 13 with that
/// `(eps', delta')`: `rho = eps'^2 / (4 ln(1.25/delta'))`. The inverse of
/// [`per_iteration_budget`]: `J` steps give `rho_total = J rho`, and
/// `eps_tot = rho_total + 2 sqrt(rho_total ln(1/delta_tot))` (Prop. 4).
///
/// # Example
/// ```
/// use dp_accountant::Budget;
/// use dp_accountant::baselines::{amplified_gaussian_rho, per_iteration_budget};
/// let b = per_iteration_budget(&Budget::new(1.0, 1e-4)?, 100, 0.01, 1e-6)?;
/// let sigma = (2.0 * (1.25 / b.delta_iter).ln()).sqrt() / b.epsilon_iter; // Eq. 11
/// let rho = amplified_gaussian_rho(sigma, 0.01, 1e-6)?;
/// assert!((rho - b.rho_per_iteration).abs() <= 1e-9 * rho);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// `noise_multiplier` not finite and `> 0`; `nu` outside `(0, 1]`; `delta_prime` outside
/// `(0, nu)`.
///
/// # Privacy
/// Not a bound by itself: an amplified Gaussian is not a Gaussian mechanism, so Eq. 13's
/// reading of `(eps', delta')` as `rho` is 000's heuristic. The accountant
/// ([`crate::AccountantKind::Zcdp`]) reports the larger of its answer and the RDP bound.
pub fn amplified_gaussian_rho(
    noise_multiplier: f64,
    nu: f64,
    delta_prime: f64,
) -> Result<f64, AccountantError> {
    check_rate("nu", nu)?;
    check_delta("delta_prime", delta_prime)?;
    if delta_prime >= nu {
        return Err(AccountantError::InvalidParameter {
            name: "delta_prime",
            value: delta_prime,
            reason: "must be below nu (delta_iter = delta'/nu < 1)",
        });
    }
    let eps_iter = classic_gaussian_epsilon(noise_multiplier, delta_prime / nu)?;
    if !eps_iter.is_finite() {
        return Ok(f64::INFINITY);
    }
    let eps_prime = amplify_by_subsampling(eps_iter, 0.0, nu)?.epsilon;
    Ok(eps_prime * eps_prime / (4.0 * (1.25 / delta_prime).ln()))
}

/// Relative margin on delta in [`gaussian_epsilon`]: the exact profile is evaluated in floating
/// point (errors near `1e-12` relative), so the epsilon returned meets `delta (1 - 1e-9)`.
const PROFILE_MARGIN: f64 = 1e-9;

/// The smallest epsilon (to `1e-12` relative, rounded up) at which the Gaussian mechanism with
/// noise multiplier `sigma` is `(epsilon, delta)`-DP, by its exact privacy profile (Balle &
/// Wang 2018, Thm 8; [`crate::pld::gaussian_delta`]): valid for every epsilon, unlike 000
/// Eq. 11. `f64::INFINITY` where no finite epsilon reaches `delta`.
///
/// # Example
/// ```
/// use dp_accountant::baselines::{classic_gaussian_epsilon, gaussian_epsilon};
/// let exact = gaussian_epsilon(5.0, 1e-5)?;
/// assert!(exact < classic_gaussian_epsilon(5.0, 1e-5)?); // Eq. 11 is loose where valid
/// assert!(dp_accountant::pld::gaussian_delta(5.0, exact) <= 1e-5);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// `noise_multiplier` not finite and `> 0`; `delta` outside `(0, 1)`.
///
/// # Privacy
/// The Gaussian mechanism is `(epsilon, delta)`-DP for the returned epsilon (either relation:
/// the noise multiplier is stated under the relation of the sensitivity).
pub fn gaussian_epsilon(noise_multiplier: f64, delta: f64) -> Result<f64, AccountantError> {
    check_positive("noise_multiplier", noise_multiplier)?;
    check_delta("delta", delta)?;
    let target = delta * (1.0 - PROFILE_MARGIN);
    let ok = |eps: f64| crate::pld::gaussian_delta(noise_multiplier, eps) <= target;
    if ok(0.0) {
        return Ok(0.0);
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while !ok(hi) {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return Ok(f64::INFINITY);
        }
    }
    for _ in 0..200 {
        if hi - lo <= 1e-12 * hi {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi)
}
