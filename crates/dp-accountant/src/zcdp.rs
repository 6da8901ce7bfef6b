//! Zero-concentrated DP (Bun & Steinke 2016): the Gaussian mechanism's `rho`, composition, and
//! conversions to `(epsilon, delta)`.
//!
//! `rho`-zCDP means RDP `rho * a` at every order `a > 1`.

use crate::answer::EpsilonReport;
use crate::conversion::Conversion;
use crate::error::{AccountantError, check_delta, check_positive};
use crate::optimize;

/// `rho` must be `> 0` and not NaN; `+inf` (a noise multiplier so small that `1/(2 sigma^2)`
/// overflows) is allowed and gives `epsilon = +inf`, `delta = 1`.
fn check_rho(rho: f64) -> Result<f64, AccountantError> {
    if rho > 0.0 {
        Ok(rho)
    } else {
        Err(AccountantError::InvalidParameter {
            name: "rho",
            value: rho,
            reason: "must be > 0 (+inf allowed)",
        })
    }
}

/// `rho = 1 / (2 sigma^2)` of the Gaussian mechanism with noise multiplier `sigma`
/// (Bun & Steinke 2016, Prop. 1.6; 000 Lemma 2).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] unless `noise_multiplier` is finite and `> 0`.
///
/// # Privacy
/// Exact for the Gaussian mechanism (no subsampling) under the relation of the sensitivity.
pub fn zcdp_gaussian(noise_multiplier: f64) -> Result<f64, AccountantError> {
    check_positive("noise_multiplier", noise_multiplier)?;
    Ok(1.0 / (2.0 * noise_multiplier * noise_multiplier))
}

/// Composition: `rho` values add (Bun & Steinke 2016, Lemma 1.7; 000 Lemma 3).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for a negative or NaN `rho` (`+inf`, the `rho` of a
/// noise multiplier whose `1/(2 sigma^2)` overflows, composes to `+inf`).
pub fn zcdp_compose(rhos: &[f64]) -> Result<f64, AccountantError> {
    let mut total = 0.0;
    for &r in rhos {
        if r.is_nan() || r < 0.0 {
            return Err(AccountantError::InvalidParameter {
                name: "rho",
                value: r,
                reason: "must be >= 0 (+inf allowed: an unbounded loss)",
            });
        }
        total += r;
    }
    Ok(total)
}

/// `epsilon = rho + 2 sqrt(rho ln(1/delta))` (Bun & Steinke 2016, Prop. 1.3; 000 Prop. 4).
///
/// # Example
/// ```
/// use dp_accountant::zcdp::{zcdp_epsilon_bun_steinke, zcdp_epsilon_cks};
/// let bs = zcdp_epsilon_bun_steinke(0.1, 1e-5)?;
/// let cks = zcdp_epsilon_cks(0.1, 1e-5)?.epsilon;
/// assert!(cks < bs);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// `rho` not finite and `> 0`; `delta` outside `(0, 1)`.
///
/// # Privacy
/// A `rho`-zCDP mechanism is `(epsilon, delta)`-DP for the returned epsilon.
pub fn zcdp_epsilon_bun_steinke(rho: f64, delta: f64) -> Result<f64, AccountantError> {
    check_rho(rho)?;
    check_delta("delta", delta)?;
    if rho == f64::INFINITY {
        return Ok(f64::INFINITY);
    }
    Ok(rho + 2.0 * (rho * -delta.ln()).sqrt())
}

/// `delta = exp(-(epsilon - rho)^2 / (4 rho))` for `epsilon > rho` (inverse of
/// [`zcdp_epsilon_bun_steinke`]); 1 otherwise.
///
/// # Errors
/// `rho` or `epsilon` not finite and `> 0`.
pub fn zcdp_delta_bun_steinke(rho: f64, epsilon: f64) -> Result<f64, AccountantError> {
    check_rho(rho)?;
    check_positive("epsilon", epsilon)?;
    if rho == f64::INFINITY {
        return Ok(1.0);
    }
    if epsilon <= rho {
        return Ok(1.0);
    }
    Ok((-(epsilon - rho).powi(2) / (4.0 * rho)).exp())
}

/// The tight conversion of Canonne, Kamath & Steinke (2020, Cor. 13):
/// `epsilon = inf_a [rho a + ln(1 - 1/a) - (ln delta + ln a)/(a - 1)]`, over all real orders.
///
/// # Errors
/// `rho` not finite and `> 0`; `delta` outside `(0, 1)`.
///
/// # Privacy
/// A `rho`-zCDP mechanism is `(epsilon, delta)`-DP for the returned epsilon.
pub fn zcdp_epsilon_cks(rho: f64, delta: f64) -> Result<EpsilonReport, AccountantError> {
    check_rho(rho)?;
    check_delta("delta", delta)?;
    if rho == f64::INFINITY {
        return Ok(EpsilonReport {
            epsilon: f64::INFINITY,
            delta,
            order: f64::NAN,
            rdp: f64::INFINITY,
            method: "zcdp/cks".to_string(),
            epsilon_lower: None,
        });
    }
    let rdp = |a: f64| rho * a;
    let opt = optimize::epsilon_continuous(&rdp, delta.ln(), Conversion::Improved);
    Ok(EpsilonReport {
        epsilon: opt.value,
        delta,
        order: opt.order,
        rdp: rho * opt.order,
        method: "zcdp/cks".to_string(),
        epsilon_lower: None,
    })
}

/// `delta` at `epsilon` by CKS 2020 Cor. 13:
/// `delta = inf_a exp((a-1)(a rho - epsilon)) (1 - 1/a)^a / (a - 1)`.
///
/// # Errors
/// `rho` or `epsilon` not finite and `> 0`.
pub fn zcdp_delta_cks(rho: f64, epsilon: f64) -> Result<f64, AccountantError> {
    check_rho(rho)?;
    check_positive("epsilon", epsilon)?;
    if rho == f64::INFINITY {
        return Ok(1.0);
    }
    let rdp = |a: f64| rho * a;
    let opt = optimize::ln_delta_continuous(&rdp, epsilon, Conversion::Improved);
    Ok(opt.value.exp().min(1.0))
}
