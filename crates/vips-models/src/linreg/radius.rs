//! The radius rows `(z, 1)` are divided by, chosen from a small private release.
//!
//! The statistics' signal grows as `1 / R^2` (`X^T X`) and `1 / R` (`X^T y`) while their noise
//! does not depend on `R`, so `R` should be as small as the rows allow. Rows outside the unit
//! ball after the division are scaled together with their target (a weight, see
//! [`super::LinregRecord::new`]), which keeps the linear model exact, so a radius near the
//! rows' root-mean-square norm costs little. That norm depends on where the data sit inside
//! their declared box, which the declared ranges do not say (the earlier default
//! `sqrt(1 + d/3)` assumed rows spread uniformly over the box).
//!
//! So unless the caller declares a radius, a fit first releases the mean of `||z||^2 / d`
//! (each row clamped into the box, so each record's value lies in `[0, 1]`: add/remove
//! sensitivity 1) through a privacy wall with a share [`RADIUS_BUDGET_SHARE`] of the budget and
//! takes `R = sqrt(1 + d m)` (`m` the released mean, clamped to `[MIN_MEAN_SQUARE, 1]`: the
//! root-mean-square norm of `(z, 1)`). The fit that follows starts its ledger with this release
//! ([`crate::engine::SviConfigBuilder::preceded_by`]), so the budget covers both.
//!
//! **The split.** Two Gaussian releases of noise multipliers `s1`, `s2` compose like one of
//! multiplier `(s1^-2 + s2^-2)^-1/2` (exactly under PLD and RDP), so with `s` the multiplier
//! one release of the whole budget would get, `s1 = s / sqrt(f)` and `s2 = s / sqrt(1 - f)`
//! (`f` the share): the main release's noise grows by `1 / sqrt(1 - f)` (2.6% at `f = 5%`).
//! The pair is then checked with the fit's accountant and both multipliers are scaled up
//! (bisection, capped) until it certifies the budget, so an accountant that composes less
//! tightly (advanced, linear) still gets a valid split.

use dp_accountant::{Accountant, AccountantConfig, Budget};
use dp_core::{PrivacyWall, ReleaseSpec, RngPolicy, SamplingScheme, calibrate_noise_multiplier};

use super::LinregError;
use crate::engine::config::Regime;
use crate::engine::{EngineError, Privacy, SviConfig};

/// The share of the budget (in the Gaussian composition's `1 / sigma^2`) spent on the radius.
pub const RADIUS_BUDGET_SHARE: f64 = 0.05;

/// The smallest released mean of `||z||^2 / d` the radius uses (a noisy release can be tiny or
/// negative).
pub const MIN_MEAN_SQUARE: f64 = 0.01;

/// Tag mixed into a caller's noise seed for the radius release, so that its noise is not the
/// main release's first draw.
const RADIUS_SEED_TAG: u64 = 0x7261_6469_7573_0001;

/// Bisection steps of the split search (a factor within `2^-40` of the smallest that fits).
const SPLIT_SEARCH_STEPS: usize = 40;

/// The largest factor the split search tries on top of the exact Gaussian split.
const SPLIT_SEARCH_MAX_FACTOR: f64 = 16.0;

/// How a fit chooses its radius: released from the rows (the default) or declared.
///
/// Parses from `released` or a finite number `> 0` (the flag `--radius` of the `linreg`
/// example and of `dp-bayes fit linreg`).
///
/// # Example
/// ```
/// use vips_models::linreg::RadiusChoice;
/// assert_eq!("released".parse::<RadiusChoice>()?, RadiusChoice::Released);
/// assert_eq!("1.5".parse::<RadiusChoice>()?.declared(), Some(1.5));
/// assert!("0".parse::<RadiusChoice>().is_err() && "big".parse::<RadiusChoice>().is_err());
/// # Ok::<(), vips_models::linreg::LinregError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RadiusChoice {
    /// Released from the rows with a share of the budget ([`release_radius`]).
    Released,
    /// A declared public radius.
    Declared(f64),
}

impl RadiusChoice {
    /// The declared radius, `None` when released ([`super::LinregOptions::radius`]).
    pub fn declared(self) -> Option<f64> {
        match self {
            Self::Released => None,
            Self::Declared(r) => Some(r),
        }
    }
}

impl std::str::FromStr for RadiusChoice {
    type Err = LinregError;

    fn from_str(s: &str) -> Result<Self, LinregError> {
        if s.trim() == "released" {
            return Ok(Self::Released);
        }
        let v: f64 = s.trim().parse().map_err(|_| {
            LinregError::invalid("radius", f64::NAN, "must be `released` or a number")
        })?;
        if v > 0.0 && v.is_finite() {
            Ok(Self::Declared(v))
        } else {
            Err(LinregError::invalid(
                "radius",
                v,
                "must be `released` or finite and > 0",
            ))
        }
    }
}

/// The radius for a mean `m` of `||z||^2 / d`: `sqrt(1 + d m)`, `m` clamped to
/// `[MIN_MEAN_SQUARE, 1]`.
///
/// # Example
/// ```
/// use vips_models::linreg::radius_for_mean_square;
/// assert_eq!(radius_for_mean_square(3, 1.0 / 3.0), 2.0_f64.sqrt());
/// assert_eq!(radius_for_mean_square(3, -5.0), (1.0 + 3.0 * 0.01_f64).sqrt());
/// ```
pub fn radius_for_mean_square(d: usize, m: f64) -> f64 {
    let m = if m.is_nan() { MIN_MEAN_SQUARE } else { m };
    (1.0 + d as f64 * m.clamp(MIN_MEAN_SQUARE, 1.0)).sqrt()
}

/// A row's contribution to the radius release: `||clamp(z)||^2 / d` in `[0, 1]`.
///
/// # Errors
/// [`LinregError::DimensionMismatch`] for a row of the wrong length; [`LinregError::NonFinite`].
pub fn mean_square_of_row(d: usize, z: &[f64]) -> Result<f64, LinregError> {
    if z.len() != d || d == 0 {
        return Err(LinregError::DimensionMismatch {
            what: "row vs declared features",
            expected: d,
            found: z.len(),
        });
    }
    if z.iter().any(|v| !v.is_finite()) {
        return Err(LinregError::NonFinite("row features"));
    }
    Ok(z.iter().map(|v| v.clamp(-1.0, 1.0).powi(2)).sum::<f64>() / d as f64)
}

/// The released radius and the settings of the fit that follows it.
#[derive(Clone, Debug)]
pub struct RadiusRelease {
    /// `sqrt(1 + d m)` from the released (clamped) mean.
    pub radius: f64,
    /// The released mean of `||z||^2 / d` (noised when private; before the clamp).
    pub mean_square: f64,
    /// The noise multiplier of the radius release (`None` when non-private).
    pub noise_multiplier: Option<f64>,
    /// The fit's settings: for a private fit an explicit noise multiplier (the rest of the
    /// budget) and a ledger that starts with the radius release.
    pub fit_config: SviConfig,
}

/// Releases the mean of `||z||^2 / d` over `rows` (features in the declared box's units) with a
/// share [`RADIUS_BUDGET_SHARE`] of `svi`'s budget, and returns the radius and the settings of
/// the fit that spends the rest. Non-private `svi`: the exact mean (the same path, no noise).
///
/// # Privacy
/// Each record contributes `||clamp(z)||^2 / d` in `[0, 1]` (its own row only): add/remove
/// sensitivity 1, enforced by the wall's clipping. The release is a Gaussian mechanism with
/// multiplier `s / sqrt(f)` over the declared public population, accounted by `svi`'s
/// accountant; the returned configuration's ledger starts with it. Under
/// [`Privacy::Target`] both multipliers are chosen so that the two releases together certify
/// `svi`'s `(epsilon, delta)` (checked here and again by the fit's wall); under
/// [`Privacy::NoiseMultiplier`] the fit keeps the given multiplier `s2`, the radius release
/// gets `s2 sqrt((1 - f) / f)`, and the fit's wall refuses its release
/// ([`dp_core::CoreError::BudgetExhausted`]) if the two exceed the budget. The radius is
/// post-processing of the release. A `noise_seed` seeds this release too (a derived seed):
/// reproducible, no privacy against whoever holds it.
///
/// # Errors
/// [`LinregError::Empty`] for no rows; a row's errors ([`mean_square_of_row`]);
/// [`LinregError::InvalidParameter`] (`batching`) for a private fixed-size configuration;
/// [`LinregError::Engine`] when the wall or the accountant refuses (a budget too small to
/// split, an undeclared population in a private fit).
///
/// # Example
/// ```
/// use vips_models::engine::Privacy;
/// use vips_models::linreg::{batch_config, release_radius};
/// let rows: Vec<Vec<f64>> = (0..2000).map(|i| vec![0.5 * ((i % 3) as f64 - 1.0); 4]).collect();
/// let target = Privacy::Target { epsilon: 1.0, delta: 1e-5 };
/// let r = release_radius(4, rows.iter().map(Vec::as_slice), &batch_config(2000, target, Some(1))?)?;
/// // Exact: sqrt(1 + 4 * 1/6) = 1.29; the release is noisy.
/// assert!((r.radius - 1.29).abs() < 0.1);
/// assert!(matches!(r.fit_config.privacy(), Privacy::NoiseMultiplier { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn release_radius<'a>(
    d: usize,
    rows: impl IntoIterator<Item = &'a [f64]>,
    svi: &SviConfig,
) -> Result<RadiusRelease, LinregError> {
    let values = rows
        .into_iter()
        .map(|z| mean_square_of_row(d, z))
        .collect::<Result<Vec<f64>, _>>()?;
    if values.is_empty() {
        return Err(LinregError::Empty("no training rows"));
    }
    let private = !matches!(svi.privacy(), Privacy::NonPrivate);
    if private && !matches!(svi.sampling, Regime::Poisson) {
        return Err(LinregError::invalid(
            "batching",
            svi.expected_batch_size(),
            "a private radius release is add/remove-one (Poisson): declare the radius to fit \
             under replace-one",
        ));
    }
    let population = svi.public_population(values.len())?;
    let scheme = SamplingScheme::poisson(1.0).map_err(EngineError::from)?;
    let config = AccountantConfig::default().with_accountant(svi.accountant());
    let split = match svi.privacy() {
        Privacy::NonPrivate => None,
        Privacy::Target { epsilon, delta } => {
            let budget = Budget::new(epsilon, delta).map_err(EngineError::from)?;
            let whole = calibrate_noise_multiplier(&budget, &scheme, population, 1, &config)
                .map_err(EngineError::from)?;
            Some((
                split_budget(whole, &budget, &scheme, population, &config)?,
                budget,
            ))
        }
        Privacy::NoiseMultiplier {
            noise_multiplier,
            epsilon,
            delta,
        } => {
            let budget = Budget::new(epsilon, delta).map_err(EngineError::from)?;
            let share = RADIUS_BUDGET_SHARE;
            let radius_sigma = noise_multiplier * ((1.0 - share) / share).sqrt();
            Some(((radius_sigma, noise_multiplier), budget))
        }
    };
    let builder = PrivacyWall::builder(values)
        .sampling(scheme)
        .public_population_size(population)
        .accountant_config(config)
        .rng(match svi.noise_seed {
            Some(seed) => RngPolicy::Seeded {
                seed: seed ^ RADIUS_SEED_TAG,
            },
            None => RngPolicy::OsEntropy,
        });
    let builder = match split {
        None => builder.non_private(),
        Some(((radius_sigma, _), budget)) => builder
            .require_public_population()
            .budget(budget)
            .noise_multiplier(radius_sigma),
    };
    let mut wall = builder.build().map_err(EngineError::from)?;
    let mut spec = ReleaseSpec::builder("linreg radius");
    let block = spec
        .vector("mean of ||z||^2 / d", 1, 1.0)
        .map_err(EngineError::from)?;
    let spec = spec.build().map_err(EngineError::from)?;
    let release = wall
        .release(&spec, |t: &f64, buf| buf.push(block, 0, *t))
        .map_err(EngineError::from)?;
    let mean_square = release.vector(block).map_err(EngineError::from)?[0];
    let mut fit_config = svi.clone();
    if let Some(((_, fit_sigma), budget)) = split {
        fit_config.privacy = Privacy::NoiseMultiplier {
            noise_multiplier: fit_sigma,
            epsilon: budget.epsilon(),
            delta: budget.delta(),
        };
        fit_config.preceded_by = wall.ledger().entries().to_vec();
    }
    Ok(RadiusRelease {
        radius: radius_for_mean_square(d, mean_square),
        mean_square,
        noise_multiplier: split.map(|((s, _), _)| s),
        fit_config,
    })
}

/// `(radius multiplier, fit multiplier)` from the multiplier `whole` of one release of the
/// whole budget: the exact Gaussian split scaled up by the smallest factor in
/// `[1, SPLIT_SEARCH_MAX_FACTOR]` (bisection) with which the accountant certifies the pair.
fn split_budget(
    whole: f64,
    budget: &Budget,
    scheme: &SamplingScheme,
    population: usize,
    config: &AccountantConfig,
) -> Result<(f64, f64), LinregError> {
    let share = RADIUS_BUDGET_SHARE;
    let pair = |k: f64| (k * whole / share.sqrt(), k * whole / (1.0 - share).sqrt());
    let fits = |k: f64| -> Result<bool, LinregError> {
        let (a, b) = pair(k);
        let mut ledger = Accountant::with_config(config.clone()).map_err(EngineError::from)?;
        for (label, sigma) in [("radius", a), ("fit", b)] {
            let event = scheme.event(sigma, population).map_err(EngineError::from)?;
            ledger.record(label, event).map_err(EngineError::from)?;
        }
        Ok(ledger.epsilon(budget.delta()).map_err(EngineError::from)? <= budget.epsilon())
    };
    if fits(1.0)? {
        return Ok(pair(1.0));
    }
    if !fits(SPLIT_SEARCH_MAX_FACTOR)? {
        return Err(LinregError::invalid(
            "epsilon",
            budget.epsilon(),
            "the accountant cannot split this budget between the radius and the fit",
        ));
    }
    let (mut lo, mut hi) = (1.0, SPLIT_SEARCH_MAX_FACTOR);
    for _ in 0..SPLIT_SEARCH_STEPS {
        let mid = 0.5 * (lo + hi);
        if fits(mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(pair(hi))
}
