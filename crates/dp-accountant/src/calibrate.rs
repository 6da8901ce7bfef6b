//! Calibration: the smallest noise multiplier reaching a target `(epsilon, delta)` for given
//! sampling and number of steps, and the largest number of steps for a given noise multiplier.
//!
//! Both are monotone searches around [`epsilon_for_event`](crate::epsilon_for_event): `epsilon`
//! is non-increasing in the noise multiplier and non-decreasing in the number of steps, because
//! every RDP curve is (and so is every other accountant's answer: the PLD's, and the moments,
//! zCDP, advanced and linear ones, whose delta splits run over a fixed grid). Calibration uses the
//! configured accountant ([`crate::AccountantKind`]) throughout, so the returned multiplier is the
//! smallest that accountant certifies. The search for `sigma` runs in `t = ln sigma` with a safeguarded
//! false-position (Illinois) iteration that keeps a bracket `[lo, hi]` with
//! `epsilon(hi) <= target < epsilon(lo)` and stops when `hi / lo - 1 <= tolerance`. The returned
//! value is always the `hi` end, whose epsilon has been evaluated and is at most the target:
//! the answer errs on the private side by at most the tolerance.

use serde::{Deserialize, Serialize};

use crate::accounting::epsilon_checked;
use crate::answer::AccountantConfig;
use crate::budget::Budget;
use crate::error::{AccountantError, check_positive};
use crate::events::{Neighbouring, PrivacyEvent};

/// Default relative tolerance on the calibrated noise multiplier.
pub const DEFAULT_SIGMA_TOLERANCE: f64 = 1e-9;

/// Smallest and largest noise multipliers the calibration will consider.
const SIGMA_RANGE: (f64, f64) = (1e-4, 1e7);

/// How each step samples the data.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Sampling {
    /// Every step uses the whole dataset (plain Gaussian mechanism).
    FullBatch {
        /// The relation the sensitivity is stated under.
        neighbouring: Neighbouring,
    },
    /// Poisson sampling with inclusion probability `rate` (add/remove-one).
    Poisson {
        /// Sampling rate `q` in `(0, 1]`.
        rate: f64,
    },
    /// A uniformly random batch of exactly `sample_size` of `population` (replace-one).
    FixedSize {
        /// Batch size `m`.
        sample_size: u64,
        /// Dataset size `n`.
        population: u64,
    },
}

impl Sampling {
    /// The per-step event for a noise multiplier.
    ///
    /// # Errors
    /// The event constructors' errors.
    pub fn step_event(&self, noise_multiplier: f64) -> Result<PrivacyEvent, AccountantError> {
        match *self {
            Self::FullBatch { neighbouring } => {
                PrivacyEvent::gaussian(noise_multiplier, neighbouring)
            }
            Self::Poisson { rate } => {
                PrivacyEvent::poisson_subsampled_gaussian(noise_multiplier, rate)
            }
            Self::FixedSize {
                sample_size,
                population,
            } => PrivacyEvent::fixed_size_subsampled_gaussian(
                noise_multiplier,
                sample_size,
                population,
            ),
        }
    }

    /// The whole run: `steps` repetitions of the step.
    ///
    /// # Errors
    /// The event constructors' errors; `steps == 0`.
    pub fn run_event(
        &self,
        noise_multiplier: f64,
        steps: u64,
    ) -> Result<PrivacyEvent, AccountantError> {
        self.step_event(noise_multiplier)?.self_composed(steps)
    }
}

/// The result of a calibration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The calibrated noise multiplier (noise std / L2 sensitivity).
    pub noise_multiplier: f64,
    /// The epsilon it achieves at the budget's delta (`<= budget.epsilon()`).
    pub epsilon: f64,
    /// The order at which that epsilon is attained.
    pub order: f64,
    /// Number of steps accounted.
    pub steps: u64,
    /// Relative tolerance reached by the search (the requested one, or the bracket width if the
    /// iteration cap stopped it first): `noise_multiplier * (1 - tolerance)` may not suffice.
    pub tolerance: f64,
    /// The conversion method.
    pub method: String,
    /// PLD only: a lower bound on the exact epsilon at `noise_multiplier`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon_lower: Option<f64>,
}

/// The smallest noise multiplier (within [`DEFAULT_SIGMA_TOLERANCE`], `1e-9` relative, on the
/// safe side) for which `steps` steps of `sampling` stay within `budget`. Every search
/// terminates (iteration cap, bounded bracket); an unreachable target is a typed error.
///
/// # Example
/// ```
/// use dp_accountant::{AccountantConfig, Budget};
/// use dp_accountant::calibrate::{Sampling, calibrate_noise_multiplier};
/// let budget = Budget::new(1.0, 1e-5)?;
/// let c = calibrate_noise_multiplier(Sampling::Poisson { rate: 0.01 }, 1000, &budget,
///                                    &AccountantConfig::default())?;
/// assert!(c.epsilon <= 1.0 && c.noise_multiplier > 1.0);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Invalid sampling parameters, `steps == 0`, or [`AccountantError::Unreachable`] if no noise
/// multiplier up to `1e7` suffices (e.g. `epsilon = 1e-300` at `delta = 1e-12`: refused after
/// one evaluation at `1e7`, not a long walk).
///
/// # Privacy
/// `steps` steps of `sampling` with the returned noise multiplier are
/// `(budget.epsilon, budget.delta)`-DP under the sampling's neighbouring relation.
pub fn calibrate_noise_multiplier(
    sampling: Sampling,
    steps: u64,
    budget: &Budget,
    config: &AccountantConfig,
) -> Result<Calibration, AccountantError> {
    calibrate_noise_multiplier_with_tolerance(
        sampling,
        steps,
        budget,
        config,
        DEFAULT_SIGMA_TOLERANCE,
    )
}

/// As [`calibrate_noise_multiplier`] with a chosen relative tolerance in `[1e-12, 0.5]`.
///
/// # Errors
/// As [`calibrate_noise_multiplier`]; a tolerance outside `[1e-12, 0.5]`.
pub fn calibrate_noise_multiplier_with_tolerance(
    sampling: Sampling,
    steps: u64,
    budget: &Budget,
    config: &AccountantConfig,
    tolerance: f64,
) -> Result<Calibration, AccountantError> {
    if !(1e-12..=0.5).contains(&tolerance) {
        return Err(AccountantError::InvalidParameter {
            name: "tolerance",
            value: tolerance,
            reason: "must lie in [1e-12, 0.5]",
        });
    }
    config.orders().validate()?;
    sampling.run_event(1.0, steps)?; // validates sampling and steps
    let target = budget.epsilon();
    let delta = budget.delta();
    let eps_at = |t: f64| -> f64 {
        // valid by construction: sigma = e^t is finite and positive
        match sampling.run_event(t.exp(), steps) {
            Ok(e) => epsilon_checked(&e, delta, config).map_or(f64::INFINITY, |r| r.epsilon),
            Err(_) => f64::INFINITY,
        }
    };
    // Bracket: f(t) = ln eps(t) - ln target, decreasing in t.
    // (eps = 0, e.g. by the total-variation shortcut, gives -inf: the safeguarded iteration
    // then bisects)
    // The side of the bracket is decided by `eps <= target` itself, not by the sign of the log
    // difference: near the target `ln eps - ln target` can round to 0 for an eps one ulp above
    // it, which would accept a multiplier that misses the target.
    let f = |t: f64| {
        let eps = eps_at(t);
        let v = eps.ln() - target.ln();
        match (eps <= target, v <= 0.0) {
            (false, true) => f64::MIN_POSITIVE,
            (true, false) => 0.0,
            _ => v,
        }
    };
    let (t_min, t_max) = (SIGMA_RANGE.0.ln(), SIGMA_RANGE.1.ln());
    let unreachable = || {
        AccountantError::Unreachable(crate::error::Unreachable::NoiseMultiplier {
            max_noise_multiplier: SIGMA_RANGE.1,
            epsilon: target,
            delta,
            steps,
        })
    };
    let mut lo = 0.0_f64;
    let mut f_lo = f(lo);
    let mut hi;
    let mut f_hi;
    if f_lo > 0.0 {
        hi = lo;
        let mut checked_max = false;
        loop {
            hi += std::f64::consts::LN_2;
            // Before walking into large multipliers (ever costlier evaluations: the best orders
            // grow), one evaluation at the largest: a target that even it misses (e.g.
            // epsilon = 1e-300) is refused at once.
            if hi > LARGE_SIGMA.ln() && !checked_max {
                checked_max = true;
                if f(t_max) > 0.0 {
                    return Err(unreachable());
                }
            }
            f_hi = f(hi);
            if f_hi <= 0.0 {
                break;
            }
            lo = hi;
            f_lo = f_hi;
            if hi > t_max {
                return Err(unreachable());
            }
        }
    } else {
        hi = lo;
        f_hi = f_lo;
        loop {
            lo -= std::f64::consts::LN_2;
            if lo < t_min {
                // Even the smallest multiplier considered is within budget.
                return finish(hi, steps, tolerance, sampling, delta, config);
            }
            f_lo = f(lo);
            if f_lo > 0.0 {
                break;
            }
            hi = lo;
            f_hi = f_lo;
        }
    }
    // Illinois false position in t = ln sigma.
    let tol_t = tolerance.ln_1p();
    let mut side = 0i8;
    // Illinois converges superlinearly (a few dozen evaluations at 1e-9); the cap only
    // guarantees termination, and `hi` meets the target whenever the loop stops.
    let mut iterations = 0;
    while hi - lo > tol_t && iterations < MAX_ITERATIONS {
        iterations += 1;
        let mut t = if f_hi.is_finite() && f_lo.is_finite() {
            hi - f_hi * (hi - lo) / (f_hi - f_lo)
        } else {
            0.5 * (lo + hi)
        };
        // keep the trial strictly inside, and close the bracket when it is almost done
        let min_step = 0.25 * tol_t;
        t = t.clamp(lo + min_step, hi - min_step);
        let ft = f(t);
        if ft <= 0.0 {
            hi = t;
            f_hi = ft;
            if side == -1 {
                f_lo *= 0.5;
            }
            side = -1;
        } else {
            lo = t;
            f_lo = ft;
            if side == 1 {
                f_hi *= 0.5;
            }
            side = 1;
        }
    }
    // the tolerance actually reached (the bracket, if the iteration cap stopped the loop first)
    let reached = tolerance.max((hi - lo).exp_m1());
    finish(hi, steps, reached, sampling, delta, config)
}

/// Beyond this multiplier the upward bracket walk first checks that the largest one suffices.
const LARGE_SIGMA: f64 = 64.0;

/// Most false-position steps of one calibration (each halves the bracket at worst after the
/// Illinois modification; 200 is far beyond what `1e-12` needs).
const MAX_ITERATIONS: usize = 200;

fn finish(
    t: f64,
    steps: u64,
    tolerance: f64,
    sampling: Sampling,
    delta: f64,
    config: &AccountantConfig,
) -> Result<Calibration, AccountantError> {
    let sigma = t.exp();
    let report = epsilon_checked(&sampling.run_event(sigma, steps)?, delta, config)?;
    Ok(Calibration {
        noise_multiplier: sigma,
        epsilon: report.epsilon,
        order: report.order,
        steps,
        tolerance,
        method: report.method,
        epsilon_lower: report.epsilon_lower,
    })
}

/// The result of [`max_steps`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepsReport {
    /// The largest number of steps within budget (0 if even one step exceeds it).
    pub steps: u64,
    /// The epsilon spent by that many steps (0 for 0 steps).
    pub epsilon: f64,
    /// The conversion method.
    pub method: String,
}

/// The largest number of steps of `sampling` with `noise_multiplier` that stays within
/// `budget` (searched up to `2^40`).
///
/// # Example
/// ```
/// use dp_accountant::{AccountantConfig, Budget};
/// use dp_accountant::calibrate::{Sampling, max_steps};
/// let r = max_steps(Sampling::Poisson { rate: 0.01 }, 1.1, &Budget::new(2.0, 1e-5)?,
///                   &AccountantConfig::default())?;
/// assert!(r.steps > 1000 && r.epsilon <= 2.0);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Invalid sampling parameters or noise multiplier.
///
/// # Privacy
/// Running the returned number of steps is `(budget.epsilon, budget.delta)`-DP.
pub fn max_steps(
    sampling: Sampling,
    noise_multiplier: f64,
    budget: &Budget,
    config: &AccountantConfig,
) -> Result<StepsReport, AccountantError> {
    check_positive("noise_multiplier", noise_multiplier)?;
    config.orders().validate()?;
    let step = sampling.step_event(noise_multiplier)?;
    let eps = |n: u64| -> f64 {
        let run = PrivacyEvent::SelfComposed {
            event: Box::new(step.clone()),
            count: n,
        };
        epsilon_checked(&run, budget.delta(), config).map_or(f64::INFINITY, |r| r.epsilon)
    };
    let method = config.method();
    let e1 = eps(1);
    if e1 > budget.epsilon() {
        return Ok(StepsReport {
            steps: 0,
            epsilon: 0.0,
            method,
        });
    }
    let (mut good, mut good_eps) = (1u64, e1);
    let mut bad = None;
    while good < (1u64 << 40) {
        let trial = good * 2;
        let e = eps(trial);
        if e <= budget.epsilon() {
            good = trial;
            good_eps = e;
        } else {
            bad = Some(trial);
            break;
        }
    }
    if let Some(mut bad) = bad {
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            let e = eps(mid);
            if e <= budget.epsilon() {
                good = mid;
                good_eps = e;
            } else {
                bad = mid;
            }
        }
    }
    Ok(StepsReport {
        steps: good,
        epsilon: good_eps,
        method,
    })
}
