//! The moments accountant as the VIPS paper uses it (003 Sec. 2.3.1 and 3.2, after Abadi et al.
//! 2016): log moments of the privacy loss on an integer grid of `lambda`, composed by addition
//! (003 Eq. 3) and converted by `delta = min_lambda exp(alpha(lambda) - lambda eps)` (003 Eq. 4).
//!
//! For the Poisson-subsampled Gaussian, `alpha(lambda) = ln A_{lambda+1} = lambda RDP(lambda+1)`
//! (the paper's `E2`; Mironov, Talwar & Zhang 2019 show `E1 <= E2`), so the moments accountant
//! is the classic RDP conversion restricted to integer orders `2..=lambda_max + 1`.

use serde::{Deserialize, Serialize};

use crate::error::{AccountantError, check_delta, check_positive, check_rate};
use crate::rdp::rdp_poisson_subsampled_gaussian;

/// Which `lambda` values the moments accountant uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "max", rename_all = "snake_case")]
pub enum LambdaGrid {
    /// `1..=floor(sigma^2 ln(1/(q sigma)))`, the range of Abadi et al.'s Thm 1 condition used by
    /// 003 (at least 1).
    PaperCap,
    /// `1..=max`.
    UpTo(u64),
}

/// The moments-accountant answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MomentsReport {
    /// The spent epsilon at `delta`.
    pub epsilon: f64,
    /// The delta.
    pub delta: f64,
    /// The minimising `lambda` (RDP order `lambda + 1`).
    pub lambda: u64,
    /// The largest `lambda` considered.
    pub lambda_max: u64,
}

/// Per-step log moment `alpha(lambda) = ln E[(mu/mu0)^(lambda+1)]` of the Poisson-subsampled
/// Gaussian (003 Eq. 2, Sec. 3.2).
///
/// # Errors
/// Bad `noise_multiplier` or `sampling_rate`; `lambda == 0`.
pub fn log_moment(
    noise_multiplier: f64,
    sampling_rate: f64,
    lambda: u64,
) -> Result<f64, AccountantError> {
    if lambda == 0 {
        return Err(AccountantError::InvalidParameter {
            name: "lambda",
            value: 0.0,
            reason: "must be >= 1",
        });
    }
    let a = lambda as f64 + 1.0;
    Ok(lambda as f64 * rdp_poisson_subsampled_gaussian(noise_multiplier, sampling_rate, a)?)
}

/// Largest `lambda` the moments accountant evaluates: an explicit [`LambdaGrid::UpTo`] above it
/// is refused, and the paper's cap is clamped to it (orders beyond it only matter for noise
/// multipliers above about 30; a smaller grid only loosens the bound, never invalidates it).
pub const MAX_LAMBDA: u64 = 1024;

/// `floor(sigma^2 ln(1/(q sigma)))`, at least 1 and at most [`MAX_LAMBDA`]: the `lambda` range
/// 003 uses.
///
/// # Errors
/// Bad `noise_multiplier` or `sampling_rate`.
pub fn paper_lambda_cap(noise_multiplier: f64, sampling_rate: f64) -> Result<u64, AccountantError> {
    check_positive("noise_multiplier", noise_multiplier)?;
    check_rate("sampling_rate", sampling_rate)?;
    let cap = noise_multiplier.powi(2) * (1.0 / (sampling_rate * noise_multiplier)).ln();
    Ok(if cap >= 1.0 {
        (cap.floor() as u64).min(MAX_LAMBDA)
    } else {
        1
    })
}

/// The moments accountant's epsilon for `steps` Poisson-subsampled Gaussian steps:
/// `eps = min_lambda (steps alpha(lambda) + ln(1/delta)) / lambda` (003 Eq. 4).
///
/// # Example
/// ```
/// use dp_accountant::moments::{LambdaGrid, moments_accountant_epsilon};
/// // 003: sigma = 1.24, q = 0.05, T = 20, delta = 1e-4 gives eps = 2.4411.
/// let r = moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, LambdaGrid::PaperCap)?;
/// assert_eq!(r.lambda_max, 4);
/// assert!((r.epsilon - 2.4411).abs() < 5e-5);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Bad parameters; `steps == 0`; `LambdaGrid::UpTo(0)`; [`AccountantError::ResourceLimit`] for
/// `LambdaGrid::UpTo(n)` with `n > MAX_LAMBDA`.
///
/// # Privacy
/// Valid `(epsilon, delta)`-DP under add/remove-one for Poisson sampling.
pub fn moments_accountant_epsilon(
    noise_multiplier: f64,
    sampling_rate: f64,
    steps: u64,
    delta: f64,
    grid: LambdaGrid,
) -> Result<MomentsReport, AccountantError> {
    check_delta("delta", delta)?;
    if steps == 0 {
        return Err(AccountantError::InvalidParameter {
            name: "steps",
            value: 0.0,
            reason: "must be >= 1",
        });
    }
    let lambda_max = match grid {
        LambdaGrid::PaperCap => paper_lambda_cap(noise_multiplier, sampling_rate)?,
        LambdaGrid::UpTo(n) if n > MAX_LAMBDA => {
            return Err(AccountantError::ResourceLimit {
                parameter: "lambda_max",
                value: n.to_string(),
                reason: format!("the moments accountant's grid is capped at {MAX_LAMBDA}"),
            });
        }
        LambdaGrid::UpTo(n) => n,
    };
    let (epsilon, lambda) = minimise_over_lambda(lambda_max, steps as f64, delta, |lambda| {
        log_moment(noise_multiplier, sampling_rate, lambda)
    })?;
    Ok(MomentsReport {
        epsilon,
        delta,
        lambda,
        lambda_max,
    })
}

/// `min_lambda (steps alpha(lambda) + ln(1/delta)) / lambda` over `1..=lambda_max` (003 Eq. 4),
/// `alpha` the per-step log moment; returns the minimum and its `lambda`. The one home of the
/// moments accountant's conversion.
fn minimise_over_lambda(
    lambda_max: u64,
    steps: f64,
    delta: f64,
    moment: impl Fn(u64) -> Result<f64, AccountantError>,
) -> Result<(f64, u64), AccountantError> {
    let mut best: Option<(f64, u64)> = None;
    for lambda in 1..=lambda_max {
        let moment = moment(lambda)?;
        // eps(lambda) >= steps * RDP(lambda + 1), non-decreasing in lambda: nothing further
        // can beat the best (the search only decides how tight; every value is a valid bound)
        if best.is_some_and(|(b, _)| steps * (moment / lambda as f64) >= b) {
            break;
        }
        let alpha = steps * moment;
        let eps = (alpha - delta.ln()) / lambda as f64;
        if best.is_none_or(|(b, _)| eps < b) {
            best = Some((eps, lambda));
        }
    }
    best.ok_or(AccountantError::Empty("the lambda grid is empty"))
}

/// The moments accountant (003 Eq. 3-4) for any event: the log moment of the whole event is
/// `alpha(lambda) = lambda RDP(lambda + 1)` (its RDP curve, composition included), and
/// `eps = min_lambda (alpha(lambda) + ln(1/delta)) / lambda` over `lambda = 1..=lambda_max`.
/// For `T` Poisson-subsampled Gaussian steps this is [`moments_accountant_epsilon`] with
/// [`LambdaGrid::UpTo`]`(lambda_max)`. The answer of
/// [`AccountantKind::Moments`](crate::AccountantKind::Moments) with `lambda_max = MAX_LAMBDA`.
///
/// # Example
/// ```
/// use dp_accountant::PrivacyEvent;
/// use dp_accountant::moments::{LambdaGrid, moments_accountant_epsilon, moments_epsilon_for_event};
/// let run = PrivacyEvent::poisson_subsampled_gaussian(1.24, 0.05)?.self_composed(20)?;
/// let any = moments_epsilon_for_event(&run, 1e-4, 64)?;
/// let poisson = moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, LambdaGrid::UpTo(64))?;
/// assert!((any.epsilon - poisson.epsilon).abs() <= 1e-12 * poisson.epsilon);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Validation errors of the event; `delta` outside `(0, 1)`; `lambda_max == 0`;
/// [`AccountantError::ResourceLimit`] for `lambda_max > MAX_LAMBDA`.
///
/// # Privacy
/// The event is `(epsilon, delta)`-DP under its neighbouring relation (the RDP curve is an
/// upper bound at every order; `f64::INFINITY` where it is unbounded).
pub fn moments_epsilon_for_event(
    event: &crate::PrivacyEvent,
    delta: f64,
    lambda_max: u64,
) -> Result<MomentsReport, AccountantError> {
    event.validate()?;
    check_delta("delta", delta)?;
    if lambda_max > MAX_LAMBDA {
        return Err(AccountantError::ResourceLimit {
            parameter: "lambda_max",
            value: lambda_max.to_string(),
            reason: format!("the moments accountant's grid is capped at {MAX_LAMBDA}"),
        });
    }
    let (epsilon, lambda) = minimise_over_lambda(lambda_max, 1.0, delta, |lambda| {
        let rdp = crate::rdp::rdp_valid(event, lambda as f64 + 1.0);
        // lambda * inf = inf; a NaN (never expected) is the trivial bound
        Ok(if rdp.is_nan() {
            f64::INFINITY
        } else {
            lambda as f64 * rdp
        })
    })?;
    Ok(MomentsReport {
        epsilon: if epsilon.is_nan() {
            f64::INFINITY
        } else {
            epsilon
        },
        delta,
        lambda,
        lambda_max,
    })
}
