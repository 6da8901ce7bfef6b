//! Privacy-loss-distribution (PLD) accounting: tight `(epsilon, delta)` for the Gaussian, the
//! Poisson-subsampled Gaussian and the fixed-size subsampled Gaussian mechanisms, with a
//! guaranteed upper **and** lower bound.
//!
//! The mathematics, with references, is in `docs/pld.md`. In short:
//! - the PLD of one mechanism is the law of the privacy loss `L = ln(dP/dQ)(X)`, `X ~ P`, for
//!   the pair `(P, Q)` of output distributions on neighbouring datasets (Meiser & Mohammadi
//!   2018; Sommer, Meiser & Mohammadi 2019); both add/remove directions are accounted and the
//!   worse one is reported;
//! - it is discretised on a uniform grid **pessimistically** by connect-the-dots (Doroshenko et
//!   al. 2022), which gives a dominating pair, and **optimistically** by merging outputs into
//!   cells whose merged loss is a grid point (post-processing: a dominated pair; `O(h^2)` error,
//!   with the automatic spacing on a grid twice as coarse);
//! - compositions are convolutions, done by FFT (Koskela, Jälkö & Honkela 2020; Koskela et al.
//!   2021), a self-composition as one real FFT of the final length, the spectrum raised to the
//!   power `count` and one inverse FFT. Mass cut from the tails after each
//!   convolution is moved to `+inf` (pessimistic) or dropped/moved down (optimistic), and a
//!   bound on the FFT rounding error is carried along and applied in the safe direction;
//! - `delta(eps) = P[L = inf] + E[(1 - e^{eps - L})_+]`, `epsilon(delta)` its exact inverse for
//!   the discrete PLD;
//! - compositions of plain Gaussian mechanisms use the exact analytic Gaussian profile (Balle &
//!   Wang 2018) instead: `upper` and `lower` then agree to `1e-12`.
//!
//! # Memory
//! No FFT is longer than [`PldConfig::max_fft_len`] (default `2^20`): when a convolution would
//! need more, the grid spacing doubles (a connect-the-dots coarsening for the pessimistic PLD,
//! rounding down for the optimistic one, so both bounds stay valid). Peak heap use is about
//! `80 bytes * max_fft_len` (about 85 MB at the default; measured figures in
//! `docs/benchmarks.md`), whatever the event.
//!
//! # Example
//! ```
//! use dp_accountant::PrivacyEvent;
//! use dp_accountant::pld::{self, PldConfig};
//! let run = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)?.self_composed(1000)?;
//! let eps = pld::epsilon(&run, 1e-5, &PldConfig::default())?;
//! // dp_accounting's PLD gives 1.5154 for this run; RDP gives about 1.7.
//! assert!(eps.lower <= eps.upper && (eps.upper - 1.5154).abs() < 1e-3);
//! # Ok::<(), dp_accountant::AccountantError>(())
//! ```
//!
//! # Privacy
//! [`PldBounds::upper`] is an upper bound on the privacy loss of the event under its stated
//! neighbouring relation (add/remove for the Poisson-subsampled Gaussian, replace-one for the
//! fixed-size one, whose pair rests on Dong, Roth & Su 2022, Thm 4.2): every approximation
//! (discretisation, truncation, coarsening, FFT rounding) is made in the direction that can only
//! raise it. [`PldBounds::lower`] is a matching lower bound, useful to see how tight `upper` is;
//! never use it as a privacy guarantee.

mod analytic;
pub use analytic::gaussian_delta;
mod compose;
mod convolve;
mod discrete;
mod discretise;
mod loss;
mod merge;
#[cfg(test)]
mod tests_lower;

use serde::{Deserialize, Serialize};

use crate::error::{AccountantError, check_positive};
use crate::events::PrivacyEvent;
use compose::Composer;
use discrete::{Bound, DiscretePld};
use loss::{Direction, Mechanism, SubsampledGaussian};

/// Largest single-step privacy loss (in either direction, over the support the grid must
/// cover) the discretisation handles; beyond it (noise multipliers far below 1, e.g. `1/(2
/// sigma^2) > 1e5`) a grid spacing that fits the FFT would exceed `ln f64::MAX` and the
/// connect-the-dots weights overflow, so such runs are answered by the RDP accountant
/// (`docs/pld.md`, "Domain").
const MAX_STEP_LOSS: f64 = 1e5;

/// Most mechanism runs the PLD accountant composes (`2^30`, about `1.07e9`); beyond it the
/// request is refused with [`AccountantError::ResourceLimit`] before anything is allocated.
const MAX_COMPOSITIONS: u64 = 1 << 30;

/// Window length (grid points) above which an automatically spaced self-composition coarsens.
const AUTO_WINDOW_LEN: usize = 1 << 18;

/// With an automatic spacing, the optimistic (lower-bound) PLD uses a grid this many times
/// coarser than the pessimistic one: half the FFT work. The merging discretisation's error is
/// second order in `h`, so the lower bound stays close (e.g. 1.5147 vs upper 1.5156 at sigma
/// 1.1, q 0.01, 1000 steps, delta 1e-5; 1.5152 on the same grid; `docs/pld.md`, Sec. 3).
const OPTIMISTIC_COARSENING: f64 = 2.0;

/// Settings of the PLD accountant.
///
/// Valid by construction: the fields are private, [`PldConfig::new`] and the `with_*` setters
/// check them, and a deserialised configuration is checked the same way (an invalid one is a
/// deserialisation error). The JSON form is
/// `{"value_discretization_interval": null, "tail_mass_truncation": 1e-15, "max_fft_len": 1048576}`.
///
/// # Example
/// ```
/// use dp_accountant::pld::PldConfig;
/// let config = PldConfig::default()
///     .with_value_discretization_interval(Some(1e-4))?
///     .with_max_fft_len(1 << 16)?;
/// assert_eq!(config.max_fft_len(), 1 << 16);
/// assert!(PldConfig::default().with_tail_mass_truncation(0.5).is_err());
/// let bad = r#"{"value_discretization_interval": null, "tail_mass_truncation": 1e-15, "max_fft_len": 8}"#;
/// assert!(serde_json::from_str::<PldConfig>(bad).is_err());
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PldConfigData", into = "PldConfigData")]
pub struct PldConfig {
    value_discretization_interval: Option<f64>,
    tail_mass_truncation: f64,
    max_fft_len: usize,
}

/// The serialised form of [`PldConfig`] (unchecked; checked by `TryFrom`).
#[derive(Clone, Serialize, Deserialize)]
struct PldConfigData {
    value_discretization_interval: Option<f64>,
    tail_mass_truncation: f64,
    max_fft_len: usize,
}

impl TryFrom<PldConfigData> for PldConfig {
    type Error = AccountantError;

    fn try_from(d: PldConfigData) -> Result<Self, AccountantError> {
        PldConfig::new(
            d.value_discretization_interval,
            d.tail_mass_truncation,
            d.max_fft_len,
        )
    }
}

impl From<PldConfig> for PldConfigData {
    fn from(c: PldConfig) -> Self {
        Self {
            value_discretization_interval: c.value_discretization_interval,
            tail_mass_truncation: c.tail_mass_truncation,
            max_fft_len: c.max_fft_len,
        }
    }
}

impl Default for PldConfig {
    fn default() -> Self {
        Self {
            value_discretization_interval: None,
            tail_mass_truncation: 1e-15,
            max_fft_len: 1 << 20,
        }
    }
}

impl PldConfig {
    /// A checked configuration.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for an interval that is not finite and `> 0`, a
    /// tail mass outside `[0, 1e-3)`, or `max_fft_len < 1024`.
    pub fn new(
        value_discretization_interval: Option<f64>,
        tail_mass_truncation: f64,
        max_fft_len: usize,
    ) -> Result<Self, AccountantError> {
        let config = Self {
            value_discretization_interval,
            tail_mass_truncation,
            max_fft_len,
        };
        config.validate()?;
        Ok(config)
    }

    /// Grid spacing of the privacy loss; `None` chooses it from the number of compositions
    /// (see [`PldConfig::auto_interval`]). The grid only ever gets coarser than this, when the
    /// memory cap requires it.
    pub fn value_discretization_interval(&self) -> Option<f64> {
        self.value_discretization_interval
    }

    /// Mass cut from the tails after each convolution (half each side): pessimistically it is
    /// added to `delta`.
    pub fn tail_mass_truncation(&self) -> f64 {
        self.tail_mass_truncation
    }

    /// Longest FFT allowed: the memory cap (about 80 bytes per unit).
    pub fn max_fft_len(&self) -> usize {
        self.max_fft_len
    }

    /// The same configuration with another grid spacing (`None`: automatic).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for an interval that is not finite and `> 0`.
    pub fn with_value_discretization_interval(
        self,
        interval: Option<f64>,
    ) -> Result<Self, AccountantError> {
        Self::new(interval, self.tail_mass_truncation, self.max_fft_len)
    }

    /// The same configuration with another tail mass.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for a tail mass outside `[0, 1e-3)`.
    pub fn with_tail_mass_truncation(self, tail_mass: f64) -> Result<Self, AccountantError> {
        Self::new(
            self.value_discretization_interval,
            tail_mass,
            self.max_fft_len,
        )
    }

    /// The same configuration with another memory cap.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for `max_fft_len < 1024`.
    pub fn with_max_fft_len(self, max_fft_len: usize) -> Result<Self, AccountantError> {
        Self::new(
            self.value_discretization_interval,
            self.tail_mass_truncation,
            max_fft_len,
        )
    }

    /// The automatic grid spacing for `compositions` mechanism runs whose summed privacy loss
    /// has standard deviation `loss_std`: `clamp(sqrt(6.4e-4 * loss_std / compositions), 1e-9,
    /// 1e-3)`.
    ///
    /// Connect-the-dots preserves `E[e^{-L}]` and adds at most `h^2 / 4` of variance per run, so
    /// the composed loss is widened by about `T h^2 / (8 loss_std)` standard deviations' worth;
    /// at `z ~ 5` (delta around `1e-6`) this keeps the error of `upper` near `4e-4`, under the
    /// `1e-3` accuracy bar (the constant was `1.6e-4` before; quadrupling it halves every FFT
    /// and left the worst excess over dp_accounting's pessimistic value unchanged, since that
    /// comes from the window cap, not from this spacing). The grid
    /// thus follows the scale of the loss (tiny for small `q` and large `sigma`), which a fixed
    /// interval cannot (dp_accounting's fixed `1e-4` is over 100% off for `sigma = 10`,
    /// `q = 1e-4`). Measured against dp_accounting in `tests/pld_reference.rs`.
    pub fn auto_interval(compositions: u64, loss_std: f64) -> f64 {
        let h = (6.4e-4 * loss_std / compositions.max(1) as f64).sqrt();
        if h.is_finite() {
            h.clamp(1e-9, 1e-3)
        } else {
            1e-3
        }
    }

    fn validate(&self) -> Result<(), AccountantError> {
        if let Some(h) = self.value_discretization_interval {
            check_positive("value_discretization_interval", h)?;
        }
        if !(self.tail_mass_truncation >= 0.0 && self.tail_mass_truncation < 1e-3) {
            return Err(AccountantError::InvalidParameter {
                name: "tail_mass_truncation",
                value: self.tail_mass_truncation,
                reason: "must lie in [0, 1e-3)",
            });
        }
        if self.max_fft_len < 1024 {
            return Err(AccountantError::InvalidParameter {
                name: "max_fft_len",
                value: self.max_fft_len as f64,
                reason: "must be at least 1024",
            });
        }
        Ok(())
    }
}

/// A pair of bounds on one quantity (`epsilon` or `delta`): the true value lies in
/// `[lower, upper]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PldBounds {
    /// Pessimistic estimate: the value to report as the privacy guarantee.
    pub upper: f64,
    /// Optimistic estimate: the true value is at least this.
    pub lower: f64,
}

/// A composed privacy-loss distribution, ready to answer many `epsilon`/`delta` queries.
///
/// # Example
/// ```
/// use dp_accountant::PrivacyEvent;
/// use dp_accountant::pld::{PldAccountant, PldConfig};
/// let run = PrivacyEvent::poisson_subsampled_gaussian(0.8, 0.004)?.self_composed(2500)?;
/// let acc = PldAccountant::new(&run, &PldConfig::default())?;
/// let eps = acc.epsilon(1e-5)?;
/// let delta = acc.delta(eps.upper)?;
/// assert!(delta.upper <= 1e-5 * (1.0 + 1e-9));
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
#[derive(Clone, Debug)]
pub struct PldAccountant {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Only Gaussian mechanisms: one Gaussian with this noise multiplier.
    Analytic { multiplier: f64 },
    /// A run whose single-step privacy loss is too large for the grid (noise multiplier far
    /// below 1: the loss reaches [`MAX_STEP_LOSS`]): answered by the RDP accountant (an upper
    /// bound, infinite where the loss is beyond `f64`), with the trivial lower bound 0.
    RdpFallback { event: Box<PrivacyEvent> },
    /// `[remove, add]` composed PLDs for each bound.
    Numeric {
        upper: Box<[DiscretePld; 2]>,
        lower: Box<[DiscretePld; 2]>,
    },
}

impl PldAccountant {
    /// Composes the PLD of `event`.
    ///
    /// Supported: [`PrivacyEvent::Gaussian`] (either relation),
    /// [`PrivacyEvent::PoissonSubsampledGaussian`] (add/remove),
    /// [`PrivacyEvent::FixedSizeSubsampledGaussian`] (replace-one: the symmetrised pair of
    /// `docs/pld.md`, section 9 for `upper`; `lower` from the Poisson pair at the same rate, an
    /// achievable pair under replace-one), and any
    /// [`PrivacyEvent::SelfComposed`] / [`PrivacyEvent::Composed`] of those.
    ///
    /// # Errors
    /// Any validation error of the event or the config;
    /// [`AccountantError::ResourceLimit`] (naming `steps`) for more than `2^30` composed
    /// mechanism runs, refused before anything is allocated. A run whose single-step loss is
    /// beyond the grid (`> 1e5`, noise multipliers far below 1) is answered by the RDP
    /// accountant with lower bound 0 (`docs/pld.md`, section 7).
    ///
    /// # Privacy
    /// See the module documentation: `upper` bounds are valid upper bounds for the event's
    /// neighbouring relation.
    pub fn new(event: &PrivacyEvent, config: &PldConfig) -> Result<Self, AccountantError> {
        Self::build(event, config, true)
    }

    /// [`PldAccountant::new`], optionally without the analytic Gaussian shortcut (tests compare
    /// the numeric path with the exact value at `q = 1`).
    fn build(
        event: &PrivacyEvent,
        config: &PldConfig,
        analytic_shortcut: bool,
    ) -> Result<Self, AccountantError> {
        config.validate()?;
        event.validate()?;
        let mut parts: Vec<(Mechanism, u64)> = Vec::new();
        flatten(event, 1, &mut parts)?;
        let plain = |m: &Mechanism| match m {
            Mechanism::Poisson(g) if g.q == 1.0 => Some(g.sigma),
            _ => None,
        };
        if analytic_shortcut && parts.iter().all(|(m, _)| plain(m).is_some()) {
            let gaussians: Vec<(f64, u64)> = parts
                .iter()
                .filter_map(|(m, n)| plain(m).map(|s| (s, *n)))
                .collect();
            return Ok(Self {
                kind: Kind::Analytic {
                    multiplier: analytic::composed_multiplier(&gaussians),
                },
            });
        }
        let total: u64 = parts.iter().map(|(_, n)| *n).fold(0, u64::saturating_add);
        if total > MAX_COMPOSITIONS {
            return Err(AccountantError::ResourceLimit {
                parameter: "steps",
                value: total.to_string(),
                reason: format!(
                    "the PLD accountant composes at most {MAX_COMPOSITIONS} mechanism runs (its \
                     FFT window would need more than {} grid points at any useful spacing); use \
                     the RDP accountant",
                    config.max_fft_len
                ),
            });
        }
        let cut = 0.25 * config.tail_mass_truncation;
        let too_wide = parts.iter().any(|(m, _)| {
            let (lo, hi) = m.loss_range_within(Direction::Remove, cut);
            let (alo, ahi) = m.loss_range_within(Direction::Add, cut);
            !(hi <= MAX_STEP_LOSS
                && -lo <= MAX_STEP_LOSS
                && ahi <= MAX_STEP_LOSS
                && -alo <= MAX_STEP_LOSS)
        });
        if too_wide {
            return Ok(Self {
                kind: Kind::RdpFallback {
                    event: Box::new(event.clone()),
                },
            });
        }
        // per-part loss variances of both directions (one quadrature pass each), computed
        // only for an automatic spacing
        let variances: Vec<(f64, f64)> = match config.value_discretization_interval {
            Some(_) => Vec::new(),
            None => parts.iter().map(|(m, _)| m.loss_variances()).collect(),
        };
        let step = |direction: Direction| {
            config.value_discretization_interval.unwrap_or_else(|| {
                let var: f64 = parts
                    .iter()
                    .zip(&variances)
                    .map(|((_, n), v)| {
                        *n as f64
                            * match direction {
                                Direction::Remove => v.0,
                                Direction::Add => v.1,
                            }
                    })
                    .sum();
                PldConfig::auto_interval(total, var.sqrt())
            })
        };
        // With an automatic spacing, self-compositions whose window would exceed 2^18 points
        // coarsen (heavy-tailed, wide cases: small sigma, small q, many steps).
        let soft_len = match config.value_discretization_interval {
            Some(_) => config.max_fft_len,
            None => AUTO_WINDOW_LEN,
        };
        // one grid spacing per direction, shared by both bounds (the automatic choice runs a
        // quadrature of the loss variance)
        let (remove_step, add_step) = (step(Direction::Remove), step(Direction::Add));
        // With an automatic spacing the optimistic (lower) bound runs on a grid
        // `OPTIMISTIC_COARSENING` times coarser: it only shows how tight `upper` is.
        let opt_factor = match config.value_discretization_interval {
            Some(_) => 1.0,
            None => OPTIMISTIC_COARSENING,
        };
        let build = |direction: Direction, bound: Bound| {
            let factor = match bound {
                Bound::Pessimistic => 1.0,
                Bound::Optimistic => opt_factor,
            };
            Composer::new(
                factor
                    * match direction {
                        Direction::Remove => remove_step,
                        Direction::Add => add_step,
                    },
                config.max_fft_len,
                soft_len,
                config.tail_mass_truncation,
            )
            .composed(&parts, direction, bound)
        };
        Ok(Self {
            kind: Kind::Numeric {
                upper: Box::new([
                    build(Direction::Remove, Bound::Pessimistic),
                    build(Direction::Add, Bound::Pessimistic),
                ]),
                lower: Box::new([
                    build(Direction::Remove, Bound::Optimistic),
                    build(Direction::Add, Bound::Optimistic),
                ]),
            },
        })
    }

    /// Bounds on the smallest `epsilon` such that the event is `(epsilon, delta)`-DP;
    /// `upper` is `+inf` when no finite epsilon is certified.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `0 < delta < 1`.
    pub fn epsilon(&self, delta: f64) -> Result<PldBounds, AccountantError> {
        if !(delta > 0.0 && delta < 1.0) {
            return Err(AccountantError::InvalidParameter {
                name: "delta",
                value: delta,
                reason: "must lie in (0, 1)",
            });
        }
        Ok(match &self.kind {
            Kind::Analytic { multiplier } => {
                let (lower, upper) = analytic::gaussian_epsilon(*multiplier, delta);
                PldBounds { upper, lower }
            }
            Kind::RdpFallback { event } => PldBounds {
                upper: crate::rdp::convert::epsilon_valid(
                    event,
                    delta,
                    &crate::AccountantConfig::default(),
                )
                .epsilon,
                lower: 0.0,
            },
            Kind::Numeric { upper, lower } => {
                let up = upper[0].epsilon(delta).max(upper[1].epsilon(delta));
                let lo = lower[0].epsilon(delta).max(lower[1].epsilon(delta));
                PldBounds {
                    upper: up,
                    lower: lo.min(up),
                }
            }
        })
    }

    /// Bounds on the smallest `delta` such that the event is `(epsilon, delta)`-DP.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `epsilon` is finite and `> 0`.
    pub fn delta(&self, epsilon: f64) -> Result<PldBounds, AccountantError> {
        check_positive("epsilon", epsilon)?;
        Ok(match &self.kind {
            Kind::Analytic { multiplier } => {
                let upper = analytic::gaussian_delta_upper(*multiplier, epsilon);
                let lower = analytic::gaussian_delta(*multiplier, epsilon).min(upper);
                PldBounds { upper, lower }
            }
            Kind::RdpFallback { event } => PldBounds {
                upper: crate::rdp::convert::delta_valid(
                    event,
                    epsilon,
                    &crate::AccountantConfig::default(),
                )
                .delta,
                lower: 0.0,
            },
            Kind::Numeric { upper, lower } => {
                let up = upper[0].delta(epsilon).max(upper[1].delta(epsilon));
                let lo = lower[0].delta(epsilon).max(lower[1].delta(epsilon));
                PldBounds {
                    upper: up,
                    lower: lo.min(up),
                }
            }
        })
    }

    /// The grid spacing finally used (`None` for the analytic Gaussian path).
    pub fn value_discretization_interval(&self) -> Option<f64> {
        match &self.kind {
            Kind::Analytic { .. } | Kind::RdpFallback { .. } => None,
            Kind::Numeric { upper, .. } => Some(upper[0].step.max(upper[1].step)),
        }
    }

    /// `true` when the answer came from the exact analytic Gaussian profile.
    pub fn is_analytic(&self) -> bool {
        matches!(self.kind, Kind::Analytic { .. })
    }
}

/// Bounds on the smallest `epsilon` for which `event` is `(epsilon, delta)`-DP.
///
/// # Errors
/// As [`PldAccountant::new`] and [`PldAccountant::epsilon`].
///
/// # Privacy
/// Report [`PldBounds::upper`]; see the module documentation.
pub fn epsilon(
    event: &PrivacyEvent,
    delta: f64,
    config: &PldConfig,
) -> Result<PldBounds, AccountantError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(AccountantError::InvalidParameter {
            name: "delta",
            value: delta,
            reason: "must lie in (0, 1)",
        });
    }
    PldAccountant::new(event, config)?.epsilon(delta)
}

/// Bounds on the smallest `delta` for which `event` is `(epsilon, delta)`-DP.
///
/// ```
/// use dp_accountant::{Neighbouring, PrivacyEvent};
/// use dp_accountant::pld::{self, PldConfig};
/// let g = PrivacyEvent::gaussian(2.0, Neighbouring::AddRemoveOne)?;
/// let d = pld::delta(&g, 1.0, &PldConfig::default())?;
/// // Balle & Wang 2018: Phi(-2 + 1/4) - e Phi(-2 - 1/4) = 0.006829594983...
/// assert!((d.upper - 0.006_829_594_983).abs() < 1e-11);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// As [`PldAccountant::new`] and [`PldAccountant::delta`].
///
/// # Privacy
/// Report [`PldBounds::upper`]; see the module documentation.
pub fn delta(
    event: &PrivacyEvent,
    epsilon: f64,
    config: &PldConfig,
) -> Result<PldBounds, AccountantError> {
    check_positive("epsilon", epsilon)?;
    PldAccountant::new(event, config)?.delta(epsilon)
}

/// Flattens an event into `(mechanism, count)` parts, merging identical mechanisms.
fn flatten(
    event: &PrivacyEvent,
    times: u64,
    out: &mut Vec<(Mechanism, u64)>,
) -> Result<(), AccountantError> {
    let mut push = |m: Mechanism| -> Result<(), AccountantError> {
        if let Some(part) = out.iter_mut().find(|(p, _)| *p == m) {
            part.1 = part.1.checked_add(times).ok_or_else(too_many)?;
        } else {
            out.push((m, times));
        }
        Ok(())
    };
    match event {
        PrivacyEvent::Gaussian {
            noise_multiplier, ..
        } => push(Mechanism::Poisson(SubsampledGaussian {
            sigma: *noise_multiplier,
            q: 1.0,
        })),
        PrivacyEvent::PoissonSubsampledGaussian {
            noise_multiplier,
            sampling_rate,
        } => push(Mechanism::Poisson(SubsampledGaussian {
            sigma: *noise_multiplier,
            q: *sampling_rate,
        })),
        PrivacyEvent::FixedSizeSubsampledGaussian {
            noise_multiplier,
            sample_size,
            population,
        } => {
            // (validated: 1 <= m <= n). m = n draws everyone every time: the plain Gaussian,
            // whose pair is symmetric.
            let g = SubsampledGaussian {
                sigma: *noise_multiplier,
                q: *sample_size as f64 / *population as f64,
            };
            push(if sample_size == population {
                Mechanism::Poisson(g)
            } else {
                Mechanism::WithoutReplacement(g)
            })
        }
        PrivacyEvent::SelfComposed { event, count } => {
            flatten(event, times.checked_mul(*count).ok_or_else(too_many)?, out)
        }
        PrivacyEvent::Composed { events } => {
            for e in events {
                flatten(e, times, out)?;
            }
            Ok(())
        }
    }
}

fn too_many() -> AccountantError {
    AccountantError::ResourceLimit {
        parameter: "composition",
        value: "more than u64::MAX mechanisms".into(),
        reason: "the total number of composed mechanisms overflows u64".into(),
    }
}
