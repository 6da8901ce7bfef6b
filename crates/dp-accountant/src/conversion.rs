//! RDP to `(epsilon, delta)` at one order: the improved bound of Canonne, Kamath & Steinke
//! (2020, Prop. 12) = Balle et al. (2020, Thm 21), and the classic bound of Mironov (2017,
//! Prop. 3).

use serde::{Deserialize, Serialize};

use crate::error::{AccountantError, check_delta, check_order, check_positive};

/// How an RDP value at one order is turned into `(epsilon, delta)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Conversion {
    /// `eps = rdp + ln(1 - 1/a) - (ln delta + ln a)/(a - 1)` (CKS 2020 Prop. 12; Balle et al.
    /// 2020 Thm 21), and `eps = 0` where the total-variation bound already gives `delta`
    /// (`delta >= sqrt(1 - exp(-rdp))`, as dp_accounting 0.6 does). For `delta` given `eps`,
    /// also the KL/total-variation bound `delta <= sqrt(1 - exp(-rdp))` is used where smaller.
    #[default]
    Improved,
    /// `eps = rdp + ln(1/delta)/(a - 1)` (Mironov 2017, Prop. 3), the moments accountant's.
    Classic,
}

impl Conversion {
    /// Stable name used in reports and JSON (`"improved"`, `"classic"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Improved => "improved",
            Self::Classic => "classic",
        }
    }
}

/// `epsilon` at `delta` from an RDP value at one order (clamped at 0).
///
/// # Example
/// ```
/// use dp_accountant::{Conversion, conversion::epsilon_from_rdp};
/// let classic = epsilon_from_rdp(10.0, 0.5, 1e-5, Conversion::Classic)?;
/// let improved = epsilon_from_rdp(10.0, 0.5, 1e-5, Conversion::Improved)?;
/// assert!(improved < classic);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for an order not finite and `> 1`, an RDP value that
/// is negative or NaN, or `delta` outside `(0, 1)`.
///
/// # Privacy
/// A mechanism with RDP `rdp` at `order` is `(epsilon, delta)`-DP for the returned `epsilon`
/// (under the same neighbouring relation).
pub fn epsilon_from_rdp(
    order: f64,
    rdp: f64,
    delta: f64,
    conversion: Conversion,
) -> Result<f64, AccountantError> {
    check_order(order)?;
    check_rdp(rdp)?;
    check_delta("delta", delta)?;
    Ok(epsilon_unchecked(order, rdp, delta.ln(), conversion))
}

/// `delta` at `epsilon` from an RDP value at one order (clamped to `[0, 1]`).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for a bad order or RDP value, or `epsilon` not finite
/// and `> 0`.
///
/// # Privacy
/// A mechanism with RDP `rdp` at `order` is `(epsilon, delta)`-DP for the returned `delta`.
pub fn delta_from_rdp(
    order: f64,
    rdp: f64,
    epsilon: f64,
    conversion: Conversion,
) -> Result<f64, AccountantError> {
    check_order(order)?;
    check_rdp(rdp)?;
    check_positive("epsilon", epsilon)?;
    Ok(ln_delta_unchecked(order, rdp, epsilon, conversion)
        .exp()
        .min(1.0))
}

/// The smallest `epsilon` at `delta` over a precomputed RDP curve: `(epsilon, order)`.
///
/// # Example
/// ```
/// use dp_accountant::{Conversion, conversion::epsilon_from_rdp_curve};
/// let (eps, order) = epsilon_from_rdp_curve(&[2.0, 8.0, 32.0], &[0.01, 0.05, 0.4], 1e-5,
///                                           Conversion::Improved)?;
/// assert_eq!(order, 32.0);
/// assert!(eps > 0.0);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for mismatched lengths, a bad order or RDP value, or
/// `delta` outside `(0, 1)`; [`AccountantError::Empty`] for an empty curve.
///
/// # Privacy
/// As [`epsilon_from_rdp`], at the best order of the curve.
pub fn epsilon_from_rdp_curve(
    orders: &[f64],
    rdp: &[f64],
    delta: f64,
    conversion: Conversion,
) -> Result<(f64, f64), AccountantError> {
    check_curve(orders, rdp)?;
    check_delta("delta", delta)?;
    Ok(best_epsilon_on_grid(orders, rdp, delta.ln(), conversion))
}

/// The smallest `epsilon` over a validated curve, `(epsilon, order)`, first best order on ties:
/// the same answer as evaluating [`epsilon_unchecked`] at every order, but the two logarithms of
/// the improved conversion are only taken where a cheap lower bound does not already rule the
/// order out. With `ln(1 - 1/a) >= -1/(a-1)` and `ln a <= (a-1)/sqrt(a)` (both for `a > 1`),
/// `eps(a) >= rdp - (1 + ln delta)/(a-1) - 1/sqrt(a)`; a relative margin of 1e-9 covers rounding.
pub(crate) fn best_epsilon_on_grid(
    orders: &[f64],
    rdp: &[f64],
    ln_delta: f64,
    conversion: Conversion,
) -> (f64, f64) {
    let mut best = (f64::INFINITY, orders[0]);
    if conversion == Conversion::Classic {
        for (&a, &r) in orders.iter().zip(rdp) {
            let e = epsilon_unchecked(a, r, ln_delta, conversion);
            if e < best.0 {
                best = (e, a);
            }
        }
        return best;
    }
    // The total-variation shortcut needs rdp < delta^2 / (1 - delta^2) (as 1 - e^-r >= r/(1+r)).
    let d2 = (2.0 * ln_delta).exp();
    let tv_rdp_max = d2 / (1.0 - d2) * (1.0 + 1e-9);
    let lower = |a: f64, r: f64| {
        if r < tv_rdp_max {
            return 0.0;
        }
        let inv = 1.0 / (a - 1.0);
        let margin = 1e-9 * (r.abs() + (ln_delta.abs() + 1.0) * inv + 1.0);
        (r - (1.0 + ln_delta) * inv - 1.0 / a.sqrt() - margin).max(0.0)
    };
    // Start from the order with the smallest lower bound (usually the best or near it).
    let mut stack = [0.0; 256];
    let mut heap = Vec::new();
    let bounds: &mut [f64] = if orders.len() <= stack.len() {
        &mut stack[..orders.len()]
    } else {
        heap.resize(orders.len(), 0.0);
        &mut heap
    };
    let mut start = 0;
    let mut start_bound = f64::INFINITY;
    for (i, ((&a, &r), b)) in orders.iter().zip(rdp).zip(bounds.iter_mut()).enumerate() {
        *b = lower(a, r);
        if *b < start_bound {
            start_bound = *b;
            start = i;
        }
    }
    let mut best_index = start;
    best = (
        epsilon_unchecked(orders[start], rdp[start], ln_delta, conversion),
        orders[start],
    );
    for (i, ((&a, &r), &b)) in orders.iter().zip(rdp).zip(bounds.iter()).enumerate() {
        if i == start || b > best.0 {
            continue;
        }
        let e = epsilon_unchecked(a, r, ln_delta, conversion);
        if e < best.0 || (e == best.0 && i < best_index) {
            best = (e, a);
            best_index = i;
        }
    }
    best
}

/// The smallest `delta` at `epsilon` over a precomputed RDP curve: `(delta, order)`.
///
/// # Errors
/// As [`epsilon_from_rdp_curve`], with `epsilon` not finite and `> 0`.
///
/// # Privacy
/// As [`delta_from_rdp`], at the best order of the curve.
pub fn delta_from_rdp_curve(
    orders: &[f64],
    rdp: &[f64],
    epsilon: f64,
    conversion: Conversion,
) -> Result<(f64, f64), AccountantError> {
    check_curve(orders, rdp)?;
    check_positive("epsilon", epsilon)?;
    let mut best = (f64::INFINITY, orders[0]);
    for (&a, &r) in orders.iter().zip(rdp) {
        let l = ln_delta_unchecked(a, r, epsilon, conversion);
        if l < best.0 {
            best = (l, a);
        }
    }
    Ok((best.0.exp().min(1.0), best.1))
}

fn check_curve(orders: &[f64], rdp: &[f64]) -> Result<(), AccountantError> {
    if orders.is_empty() {
        return Err(AccountantError::Empty(
            "an RDP curve needs at least one order",
        ));
    }
    if orders.len() != rdp.len() {
        return Err(AccountantError::InvalidParameter {
            name: "rdp",
            value: rdp.len() as f64,
            reason: "needs one value per order",
        });
    }
    for (&a, &r) in orders.iter().zip(rdp) {
        check_order(a)?;
        check_rdp(r)?;
    }
    Ok(())
}

pub(crate) fn check_rdp(rdp: f64) -> Result<f64, AccountantError> {
    if rdp >= 0.0 {
        Ok(rdp)
    } else {
        Err(AccountantError::InvalidParameter {
            name: "rdp",
            value: rdp,
            reason: "an RDP value must be >= 0 (and not NaN)",
        })
    }
}

/// `epsilon` for validated input, `ln_delta = ln(delta)`.
pub(crate) fn epsilon_unchecked(
    order: f64,
    rdp: f64,
    ln_delta: f64,
    conversion: Conversion,
) -> f64 {
    let eps = match conversion {
        Conversion::Classic => rdp - ln_delta / (order - 1.0),
        Conversion::Improved => {
            if total_variation_covers(rdp, ln_delta) {
                return 0.0;
            }
            rdp + (-1.0 / order).ln_1p() - (ln_delta + order.ln()) / (order - 1.0)
        }
    };
    eps.max(0.0)
}

/// The total-variation shortcut: whether `delta >= sqrt(1 - exp(-rdp))`, in which case
/// `(0, delta)`-DP holds. `delta(0)` is the total variation distance, which is at most
/// `sqrt(1 - exp(-KL))` (Bretagnolle & Huber 1979), and `KL <= D_a` for every order `a >= 1`.
/// dp_accounting 0.6 tests `delta^2 + expm1(-rdp) > 0`; here both sides carry a 4-ulp margin
/// so that rounding can only make the shortcut rarer.
pub(crate) fn total_variation_covers(rdp: f64, ln_delta: f64) -> bool {
    // fast reject: the condition implies rdp < delta^2 / (1 - delta^2) < 1 for delta < 0.7
    if rdp >= 1.0 && ln_delta < -0.4 {
        return false;
    }
    let delta = ln_delta.exp();
    let margin = 4.0 * f64::EPSILON;
    delta * delta * (1.0 - margin) > -(-rdp).exp_m1() * (1.0 + margin)
}

/// `ln delta` for validated input.
pub(crate) fn ln_delta_unchecked(
    order: f64,
    rdp: f64,
    epsilon: f64,
    conversion: Conversion,
) -> f64 {
    match conversion {
        Conversion::Classic => ((order - 1.0) * (rdp - epsilon)).min(0.0),
        Conversion::Improved => {
            let rdp_bound = (order - 1.0) * (rdp - epsilon + (-1.0 / order).ln_1p()) - order.ln();
            // delta(eps) <= delta(0) = TV <= sqrt(1 - exp(-KL)) and KL <= D_a for a >= 1.
            let kl_bound = if rdp == 0.0 {
                f64::NEG_INFINITY
            } else {
                0.5 * (-(-rdp).exp()).ln_1p()
            };
            rdp_bound.min(kl_bound).min(0.0)
        }
    }
}
