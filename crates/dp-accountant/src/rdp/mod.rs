//! Rényi-DP curves of the privacy events (Mironov 2017): per-step RDP at an order, curves over
//! order lists, and composition.
//!
//! All functions return an **upper bound** on the Rényi divergence of the worst pair of
//! neighbouring datasets under the event's relation; where a value is computed by a truncated
//! series, the truncation is bounded rigorously and the bound is added (see the submodules).
//!
//! | event | formula | reference |
//! |---|---|---|
//! | Gaussian | `a / (2 sigma^2)` | Mironov 2017, Prop. 7 |
//! | Poisson-subsampled, integer `a` | `log1p(sum_{k>=2} C(a,k) q^k (1-q)^(a-k) expm1((k^2-k)/(2 sigma^2)))/(a-1)` | Mironov, Talwar & Zhang 2019, Sec. 3.2 |
//! | Poisson-subsampled, fractional `a <= 256` | two erfc series, tails enclosed by CVZ acceleration | MTZ 2019, Sec. 3.3 |
//! | Poisson-subsampled, fractional `a > 256` | chord of the convex `(a-1) RDP(a)` between `floor(a)`, `ceil(a)` | convexity of the log-MGF |
//! | `q = 1` | exactly `a / (2 sigma^2)` | |
//! | fixed-size without replacement | Thm 27 / Thm 9, Cor. 10 | Wang, Balle & Kasiviswanathan 2019 |
//! | `k`-fold composition | `k * RDP(a)` | Mironov 2017, Prop. 1 |

pub(crate) mod convert;
mod poisson_frac;
mod poisson_int;
mod sample_wor;

use crate::error::{AccountantError, check_order, check_positive, check_rate};
use crate::events::PrivacyEvent;

/// Fractional orders above this use the convexity chord between neighbouring integers.
const MAX_SERIES_FRACTIONAL_ORDER: f64 = 256.0;

/// RDP of the Gaussian mechanism at `order`: `order / (2 sigma^2)` (Mironov 2017, Prop. 7).
///
/// # Example
/// ```
/// let r = dp_accountant::rdp::rdp_gaussian(2.0, 4.0)?;
/// assert_eq!(r, 0.5);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for `noise_multiplier` not finite and positive, or
/// `order` not finite and `> 1`.
///
/// # Privacy
/// Exact for the Gaussian mechanism with noise std `noise_multiplier` times the L2 sensitivity
/// under the stated neighbouring relation.
pub fn rdp_gaussian(noise_multiplier: f64, order: f64) -> Result<f64, AccountantError> {
    check_positive("noise_multiplier", noise_multiplier)?;
    check_order(order)?;
    Ok(gaussian(noise_multiplier, order))
}

/// RDP of the Poisson-subsampled Gaussian mechanism (add/remove-one) at `order`.
///
/// Integer orders by the cancellation-free binomial expansion, fractional orders by the
/// two-series erfc form with a rigorous truncation bound (MTZ 2019, Sec. 3.2-3.3), `q = 1`
/// exactly `order / (2 sigma^2)`.
///
/// # Example
/// ```
/// use dp_accountant::rdp::rdp_poisson_subsampled_gaussian;
/// let r = rdp_poisson_subsampled_gaussian(1.1, 0.01, 8.0)?;
/// assert!(r > 0.0 && r < 8.0 / (2.0 * 1.1 * 1.1));
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for a bad noise multiplier, a rate outside `(0, 1]`,
/// or an order that is not finite and `> 1`.
///
/// # Privacy
/// An upper bound (never below the exact value, up to the rounding margin that is added) for
/// Poisson sampling with inclusion probability `sampling_rate` under add/remove-one neighbours.
pub fn rdp_poisson_subsampled_gaussian(
    noise_multiplier: f64,
    sampling_rate: f64,
    order: f64,
) -> Result<f64, AccountantError> {
    check_positive("noise_multiplier", noise_multiplier)?;
    check_rate("sampling_rate", sampling_rate)?;
    check_order(order)?;
    Ok(poisson(noise_multiplier, sampling_rate, order))
}

/// RDP bound of the fixed-size (without replacement) subsampled Gaussian mechanism, replace-one
/// neighbours (Wang, Balle & Kasiviswanathan 2019, Thm 27; Cor. 10 for fractional orders).
///
/// # Example
/// ```
/// use dp_accountant::rdp::rdp_fixed_size_subsampled_gaussian;
/// let r = rdp_fixed_size_subsampled_gaussian(0.8, 6, 60_000, 4.0)?;
/// assert!(r > 0.0 && r < 4.0 / (2.0 * 0.8 * 0.8));
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for a bad noise multiplier or order;
/// [`AccountantError::InvalidSampleSize`] unless `1 <= sample_size <= population`.
///
/// # Privacy
/// An upper bound on the RDP of one step that draws exactly `sample_size` of the `population`
/// records uniformly without replacement, under replace-one neighbours, with the noise
/// multiplier relative to the replace-one L2 sensitivity.
pub fn rdp_fixed_size_subsampled_gaussian(
    noise_multiplier: f64,
    sample_size: u64,
    population: u64,
    order: f64,
) -> Result<f64, AccountantError> {
    PrivacyEvent::fixed_size_subsampled_gaussian(noise_multiplier, sample_size, population)?;
    check_order(order)?;
    Ok(fixed_size(noise_multiplier, sample_size, population, order))
}

/// RDP of any event at `order` (compositions add order by order).
///
/// # Example
/// ```
/// use dp_accountant::{PrivacyEvent, rdp::rdp_event};
/// let step = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)?;
/// let one = rdp_event(&step, 16.0)?;
/// let run = rdp_event(&step.clone().self_composed(1000)?, 16.0)?;
/// assert!((run - 1000.0 * one).abs() <= 1e-12 * run);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Any validation error of the event (including mixed neighbouring relations) or a bad order.
///
/// # Privacy
/// An upper bound on the RDP of the event under its neighbouring relation.
pub fn rdp_event(event: &PrivacyEvent, order: f64) -> Result<f64, AccountantError> {
    event.validate()?;
    check_order(order)?;
    Ok(rdp_valid(event, order))
}

/// The RDP curve of an event over `orders`.
///
/// # Errors
/// As [`rdp_event`], for the event and for every order.
///
/// # Privacy
/// As [`rdp_event`], order by order.
pub fn rdp_curve(event: &PrivacyEvent, orders: &[f64]) -> Result<Vec<f64>, AccountantError> {
    event.validate()?;
    for &a in orders {
        check_order(a)?;
    }
    Ok(curve_valid(event, orders))
}

/// Composition of RDP curves computed on the same orders: their sum, order by order
/// (Mironov 2017, Prop. 1).
///
/// # Errors
/// [`AccountantError::InvalidParameter`] if the curves have different lengths or hold a
/// negative or NaN value; [`AccountantError::Empty`] for no curves.
///
/// # Privacy
/// Valid for adaptive composition of mechanisms under the same neighbouring relation.
pub fn compose_rdp(curves: &[&[f64]]) -> Result<Vec<f64>, AccountantError> {
    let first = curves
        .first()
        .ok_or(AccountantError::Empty("no RDP curves to compose"))?;
    let mut out = vec![0.0; first.len()];
    for c in curves {
        if c.len() != out.len() {
            return Err(AccountantError::InvalidParameter {
                name: "curves",
                value: c.len() as f64,
                reason: "all curves must be computed on the same orders",
            });
        }
        for (o, &v) in out.iter_mut().zip(c.iter()) {
            if v.is_nan() || v < 0.0 {
                return Err(AccountantError::InvalidParameter {
                    name: "rdp",
                    value: v,
                    reason: "RDP values must be >= 0 (and not NaN)",
                });
            }
            *o += v;
        }
    }
    Ok(out)
}

/// RDP of a validated event at a validated order.
pub(crate) fn rdp_valid(event: &PrivacyEvent, order: f64) -> f64 {
    match event {
        PrivacyEvent::Gaussian {
            noise_multiplier, ..
        } => gaussian(*noise_multiplier, order),
        PrivacyEvent::PoissonSubsampledGaussian {
            noise_multiplier,
            sampling_rate,
        } => poisson(*noise_multiplier, *sampling_rate, order),
        PrivacyEvent::FixedSizeSubsampledGaussian {
            noise_multiplier,
            sample_size,
            population,
        } => fixed_size(*noise_multiplier, *sample_size, *population, order),
        PrivacyEvent::SelfComposed { event, count } => *count as f64 * rdp_valid(event, order),
        PrivacyEvent::Composed { events } => events.iter().map(|e| rdp_valid(e, order)).sum(),
    }
}

fn gaussian(sigma: f64, order: f64) -> f64 {
    order / (2.0 * sigma * sigma)
}

/// Work shared by the orders of one Poisson-subsampled `(q, sigma)` (results never depend on
/// what the cache holds: every entry is the value an empty cache would compute).
struct PoissonCache {
    frac: poisson_frac::FracCache,
    int: poisson_int::IntCache,
}

impl PoissonCache {
    fn new() -> Self {
        Self {
            frac: poisson_frac::FracCache::new(),
            int: poisson_int::IntCache::new(),
        }
    }
}

/// `ln A_a` of the Poisson-subsampled Gaussian, `0 < q < 1`, any order `a >= 1`; `cache`
/// belongs to this `(sigma, q)`.
fn poisson_ln_a(sigma: f64, q: f64, order: f64, cache: &mut PoissonCache) -> f64 {
    if order == 1.0 {
        return 0.0;
    }
    if order.fract() == 0.0 {
        return poisson_int::ln_a(q, sigma, order as u64, &mut cache.int);
    }
    if order <= MAX_SERIES_FRACTIONAL_ORDER {
        return poisson_frac::ln_a_upper_cached(q, sigma, order, &mut cache.frac);
    }
    // Convexity of a -> ln A_a (a log-moment-generating function): the chord lies above.
    let lo = order.floor();
    let t = order - lo;
    (1.0 - t) * poisson_int::ln_a(q, sigma, lo as u64, &mut cache.int)
        + t * poisson_int::ln_a(q, sigma, lo as u64 + 1, &mut cache.int)
}

fn poisson(sigma: f64, q: f64, order: f64) -> f64 {
    poisson_cached(sigma, q, order, &mut PoissonCache::new())
}

fn poisson_cached(sigma: f64, q: f64, order: f64, cache: &mut PoissonCache) -> f64 {
    if q == 1.0 {
        return gaussian(sigma, order);
    }
    // Subsampling never costs more than the full-batch Gaussian: the Rényi divergence is jointly
    // quasi-convex (van Erven & Harremoës 2014, Thm 13), so in both directions the divergence
    // between N(0, s^2) and (1-q) N(0, s^2) + q N(1, s^2) is at most a / (2 s^2). The cap keeps
    // the curve monotone in `q` where a safe-side approximation (the chord between integer orders
    // above order 256) would otherwise overshoot the exact `q = 1` value.
    let bound = if order.fract() == 0.0 {
        poisson_int::rdp(q, sigma, order as u64, &mut cache.int)
    } else {
        poisson_ln_a(sigma, q, order, cache) / (order - 1.0)
    };
    let full = gaussian(sigma, order);
    // Never low: the series must not fall below the closed-form floor (they do where
    // `1/sigma^2` over- or underflows, or the terms leave the range of `f64`); where they do,
    // the full-batch Gaussian (an upper bound, infinite when `a/(2 sigma^2)` overflows) answers.
    if bound >= poisson_floor(sigma, q, order) {
        bound.min(full)
    } else {
        full
    }
}

/// A closed-form lower bound on the Poisson-subsampled Gaussian's RDP at any real `order > 1`,
/// `0 < q < 1`: the likelihood ratio is at least `q exp((2x - 1)/(2 sigma^2))`, whose
/// `a`-th moment under `N(0, sigma^2)` is `q^a exp((a^2 - a)/(2 sigma^2))`, so
/// `RDP(a) >= a ln q / (a - 1) + a / (2 sigma^2)` (shaded down by `1e-12` relative for
/// rounding; at least 0). A series value below it is wrong.
fn poisson_floor(sigma: f64, q: f64, order: f64) -> f64 {
    let floor = order * q.ln() / (order - 1.0) + gaussian(sigma, order);
    if floor > 0.0 {
        floor * (1.0 - 1e-12)
    } else {
        0.0
    }
}

/// Evaluates the RDP of one validated event at many single orders (the continuous order
/// search), keeping one [`PoissonCache`] per Poisson-subsampled component between calls. Every
/// value is bit-identical to [`rdp_valid`] (same arithmetic, caches only remember values).
pub(crate) struct RdpEvaluator<'e> {
    event: &'e PrivacyEvent,
    caches: Vec<PoissonCache>,
}

impl<'e> RdpEvaluator<'e> {
    /// An evaluator for a validated event.
    pub(crate) fn new(event: &'e PrivacyEvent) -> Self {
        Self {
            event,
            caches: Vec::new(),
        }
    }

    /// RDP of the event at a validated order.
    pub(crate) fn eval(&mut self, order: f64) -> f64 {
        let mut next = 0;
        eval_cached(self.event, order, &mut self.caches, &mut next)
    }
}

/// [`rdp_valid`] with the Poisson components' caches taken in traversal order.
fn eval_cached(
    event: &PrivacyEvent,
    order: f64,
    caches: &mut Vec<PoissonCache>,
    next: &mut usize,
) -> f64 {
    match event {
        PrivacyEvent::PoissonSubsampledGaussian {
            noise_multiplier,
            sampling_rate,
        } => {
            if caches.len() <= *next {
                caches.push(PoissonCache::new());
            }
            let cache = &mut caches[*next];
            *next += 1;
            poisson_cached(*noise_multiplier, *sampling_rate, order, cache)
        }
        PrivacyEvent::SelfComposed { event, count } => {
            *count as f64 * eval_cached(event, order, caches, next)
        }
        PrivacyEvent::Composed { events } => events
            .iter()
            .map(|e| eval_cached(e, order, caches, next))
            .sum(),
        _ => rdp_valid(event, order),
    }
}

/// The RDP curve of a validated event over validated orders: the same values as
/// [`rdp_valid`] order by order, with the work shared across the orders of one Poisson event.
pub(crate) fn curve_valid(event: &PrivacyEvent, orders: &[f64]) -> Vec<f64> {
    match event {
        PrivacyEvent::PoissonSubsampledGaussian {
            noise_multiplier,
            sampling_rate,
        } => {
            let mut cache = PoissonCache::new();
            orders
                .iter()
                .map(|&a| poisson_cached(*noise_multiplier, *sampling_rate, a, &mut cache))
                .collect()
        }
        PrivacyEvent::SelfComposed { event, count } => curve_valid(event, orders)
            .into_iter()
            .map(|v| *count as f64 * v)
            .collect(),
        PrivacyEvent::Composed { events } => {
            let mut out = vec![-0.0; orders.len()];
            for e in events {
                for (o, v) in out.iter_mut().zip(curve_valid(e, orders)) {
                    *o += v;
                }
            }
            out
        }
        _ => orders.iter().map(|&a| rdp_valid(event, a)).collect(),
    }
}

fn fixed_size(sigma: f64, m: u64, n: u64, order: f64) -> f64 {
    if m == n {
        return gaussian(sigma, order);
    }
    let r = sample_wor::ln_a(m as f64 / n as f64, sigma, order) / (order - 1.0);
    // never NaN: a failed evaluation answers with the full-batch Gaussian (an upper bound)
    if r >= 0.0 { r } else { gaussian(sigma, order) }
}

#[cfg(test)]
mod tests;
