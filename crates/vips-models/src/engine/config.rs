//! Validated settings of the SVI driver.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dp_accountant::{AccountantConfig, AccountantError, AccountantKind, LedgerEntry, PrivacyEvent};
use dp_core::{Batching, SamplingScheme};
use serde::{Deserialize, Serialize};

use super::{EngineError, StepSize};
use crate::limits::MAX_ITERATIONS;

/// A flag that stops a running [`crate::engine::fit`] before its next iteration (it then returns
/// [`EngineError::Interrupted`]). Clones share the flag; set it from a signal handler.
///
/// # Example
/// ```
/// use vips_models::engine::CancelToken;
/// let token = CancelToken::new();
/// let handle = token.clone();
/// handle.cancel();
/// assert!(token.is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the flag.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether the flag is set.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

impl PartialEq for CancelToken {
    /// Two tokens are equal when they share the flag.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The regime half of the configuration's JSON (`sampling`: `poisson`, omitted, or
/// `fixed_size`); the size is `expected_batch_size`. Not user-facing: the vocabulary is
/// [`Batching`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Regime {
    #[default]
    Poisson,
    FixedSize,
    /// Refused by [`SviConfigBuilder::build`]; kept so the refusal is explicit, not a fallback.
    OneRecord,
}

impl Regime {
    pub(crate) fn is_poisson(&self) -> bool {
        *self == Self::Poisson
    }
}

/// A fixed-size batch is a whole number of records `>= 1`.
fn check_whole_batch(batch: f64) -> Result<(), EngineError> {
    if batch >= 1.0 && batch.fract() == 0.0 && batch <= usize::MAX as f64 {
        Ok(())
    } else {
        Err(EngineError::invalid(
            "expected_batch_size",
            batch,
            "fixed-size sampling draws a whole number (>= 1) of records",
        ))
    }
}

/// Serialises a [`Batching`] as its name (`poisson`, `fixed_size`): the `sampling` field of
/// [`crate::engine::FitResult`], as before issue 18.
pub(crate) fn batching_name<S: serde::Serializer>(b: &Batching, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(b.name())
}

/// Whether `b` is a Poisson batch (the default; the result's JSON omits it then).
pub(crate) fn is_poisson(b: &Batching) -> bool {
    matches!(b, Batching::Poisson { .. })
}

/// When the driver stops.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "stop", rename_all = "snake_case")]
pub enum Stop {
    /// After exactly this many iterations (releases).
    Iterations {
        /// Number of iterations `J >= 1`.
        iterations: u64,
    },
    /// After `ceil(passes / q)` iterations: `passes` expected passes over the data.
    Passes {
        /// Expected passes `> 0`.
        passes: f64,
    },
    /// Until the next release would take the spent budget past the total (needs a noise
    /// multiplier; at most `max_iterations`).
    Budget {
        /// Hard cap on iterations.
        max_iterations: u64,
    },
}

/// How much noise, and the budget.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "privacy", rename_all = "snake_case")]
pub enum Privacy {
    /// No noise (`eps = infinity`): the same code path, sampler and clipping, with zero noise.
    NonPrivate,
    /// Calibrate the noise multiplier so that the whole run (a fixed number of iterations) spends
    /// at most `(epsilon, delta)`.
    Target {
        /// Total epsilon `> 0`.
        epsilon: f64,
        /// Total delta in `(0, 1)`.
        delta: f64,
    },
    /// A given noise multiplier; the run stops (or a release is refused) at the budget.
    NoiseMultiplier {
        /// Noise std / sensitivity, `> 0`.
        noise_multiplier: f64,
        /// Total epsilon `> 0`.
        epsilon: f64,
        /// Total delta in `(0, 1)`.
        delta: f64,
    },
}

/// Settings of [`crate::engine::fit`]; build with [`SviConfig::builder`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SviConfig {
    pub(crate) step: StepSize,
    pub(crate) expected_batch_size: f64,
    pub(crate) stop: Stop,
    pub(crate) privacy: Privacy,
    pub(crate) noise_seed: Option<u64>,
    pub(crate) init_seed: u64,
    pub(crate) progress: bool,
    pub(crate) population: Option<usize>,
    pub(crate) iteration_limit: u64,
    /// The accountant that calibrates and accounts (absent in the JSON = RDP, the default).
    #[serde(default, skip_serializing_if = "AccountantKind::is_rdp")]
    pub(crate) accountant: AccountantKind,
    /// The sampling regime (absent in the JSON = Poisson, the default); the size is
    /// `expected_batch_size`.
    #[serde(default, skip_serializing_if = "Regime::is_poisson")]
    pub(crate) sampling: Regime,
    /// Ledger entries of earlier releases of the same records (absent in the JSON = none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) preceded_by: Vec<LedgerEntry>,
    #[serde(skip)]
    pub(crate) progress_bar: bool,
    #[serde(skip)]
    pub(crate) cancel: CancelToken,
}

/// Unchecked [`SviConfig`].
#[derive(Clone, Debug)]
pub struct SviConfigBuilder {
    cfg: SviConfig,
}

impl SviConfig {
    /// A builder with: Robbins-Monro `tau0 = 1024`, `kappa = 0.7`; expected batch 256; one pass;
    /// non-private; noise from the OS-seeded CSPRNG; init seed 0; no progress output; no declared
    /// population (required for private runs, see [`SviConfigBuilder::population`]).
    ///
    /// # Example
    /// ```
    /// use vips_models::engine::{Privacy, Stop, SviConfig};
    /// let cfg = SviConfig::builder()
    ///     .expected_batch_size(256.0)
    ///     .stop(Stop::Passes { passes: 1.0 })
    ///     .privacy(Privacy::Target { epsilon: 1.0, delta: 1e-5 })
    ///     .population(Some(3441))
    ///     .build()?;
    /// assert_eq!(cfg.sampling_rate(3441)?, 256.0 / 3441.0);
    /// assert_eq!(cfg.population(), Some(3441));
    /// # Ok::<(), vips_models::engine::EngineError>(())
    /// ```
    pub fn builder() -> SviConfigBuilder {
        SviConfigBuilder {
            cfg: SviConfig {
                step: StepSize::RobbinsMonro {
                    tau0: 1024.0,
                    kappa: 0.7,
                },
                expected_batch_size: 256.0,
                stop: Stop::Passes { passes: 1.0 },
                privacy: Privacy::NonPrivate,
                noise_seed: None,
                init_seed: 0,
                progress: false,
                population: None,
                iteration_limit: MAX_ITERATIONS,
                accountant: AccountantKind::Rdp,
                sampling: Regime::Poisson,
                preceded_by: Vec::new(),
                progress_bar: false,
                cancel: CancelToken::new(),
            },
        }
    }

    /// The accountant that calibrates the noise and accounts the run
    /// ([`SviConfigBuilder::accountant`]; default RDP).
    pub fn accountant(&self) -> AccountantKind {
        self.accountant
    }

    /// How each iteration draws its batch ([`SviConfigBuilder::batching`]; default a Poisson
    /// batch of expected size 256). A Poisson expected batch size set with
    /// [`SviConfigBuilder::expected_batch_size`] that is not a whole number is rounded here
    /// ([`Self::expected_batch_size`] and the run use the exact value).
    pub fn batching(&self) -> Batching {
        let s = self.expected_batch_size;
        match self.sampling {
            Regime::Poisson => Batching::Poisson {
                expected_batch_size: s.round() as usize,
            },
            Regime::FixedSize => Batching::FixedSize {
                batch_size: s as usize,
            },
            Regime::OneRecord => Batching::OneRecord,
        }
    }

    /// dp-core's scheme of the wall over `population` (`N`) records: Poisson with rate
    /// `q = S / N`, or fixed size with `m = S`.
    ///
    /// # Errors
    /// [`EngineError::Empty`] for `N = 0`; [`EngineError::InvalidParameter`]
    /// (`expected_batch_size`) for `S > N`, or, under a fixed-size batch, an `S` that is not a
    /// whole number `>= 1`; (`batching`) for [`Batching::OneRecord`]; [`EngineError::Wall`] for a
    /// rate dp-core refuses.
    pub fn sampling_scheme(&self, population: usize) -> Result<SamplingScheme, EngineError> {
        let batch = self.expected_batch_size;
        if population == 0 {
            return Err(EngineError::Empty("no records"));
        }
        if batch > population as f64 {
            return Err(EngineError::invalid(
                "expected_batch_size",
                batch,
                "exceeds the number of records",
            ));
        }
        match self.sampling {
            Regime::Poisson => Ok(SamplingScheme::poisson(batch / population as f64)?),
            Regime::FixedSize => {
                check_whole_batch(batch)?;
                Ok(SamplingScheme::fixed_size(batch as usize)?)
            }
            Regime::OneRecord => Err(one_record_refused()),
        }
    }

    /// The step-size schedule.
    pub fn step(&self) -> StepSize {
        self.step
    }
    /// The stopping rule.
    pub fn stop(&self) -> Stop {
        self.stop
    }
    /// The privacy setting.
    pub fn privacy(&self) -> Privacy {
        self.privacy
    }
    /// Expected batch size `S = q N`.
    pub fn expected_batch_size(&self) -> f64 {
        self.expected_batch_size
    }
    /// The declared public population size `N`, if any.
    pub fn population(&self) -> Option<usize> {
        self.population
    }

    /// The population size the run uses in `q = S / N` and in the M-step `nu + N s~`: the
    /// declared public figure; for a non-private run without one, `records` (the realised count,
    /// which is then not protected, as nothing is); under [`Batching::FixedSize`] without
    /// one, `records` too (public under replace-one: a neighbour has the same count).
    ///
    /// # Errors
    /// [`EngineError::PopulationNotDeclared`] for a private Poisson run without a declared
    /// population.
    pub fn public_population(&self, records: usize) -> Result<usize, EngineError> {
        match (self.population, self.privacy, self.sampling) {
            (Some(n), _, _) => Ok(n),
            (None, Privacy::NonPrivate, _) | (None, _, Regime::FixedSize) => Ok(records),
            (None, _, _) => Err(EngineError::PopulationNotDeclared),
        }
    }

    /// The inclusion probability `q = S / N` of each record for `population` records (the
    /// Poisson rate; under fixed-size sampling, `m / N` with `m = S`).
    ///
    /// # Errors
    /// [`EngineError::Empty`] for no records; [`EngineError::InvalidParameter`] if `S > N`.
    pub fn sampling_rate(&self, population: usize) -> Result<f64, EngineError> {
        if population == 0 {
            return Err(EngineError::Empty("no records"));
        }
        let q = self.expected_batch_size / population as f64;
        if q > 1.0 {
            return Err(EngineError::invalid(
                "expected_batch_size",
                self.expected_batch_size,
                "exceeds the number of records",
            ));
        }
        Ok(q)
    }

    /// Number of iterations for `population` records (`None` for [`Stop::Budget`]).
    ///
    /// # Errors
    /// As [`SviConfig::sampling_rate`]; [`EngineError::TooManyIterations`] above
    /// [`crate::limits::MAX_ITERATIONS`] unless [`SviConfigBuilder::allow_long_run`] was given.
    pub fn iterations(&self, population: usize) -> Result<Option<u64>, EngineError> {
        let q = self.sampling_rate(population)?;
        let planned = match self.stop {
            Stop::Iterations { iterations } => Some(iterations as f64),
            Stop::Passes { passes } => Some((passes / q).ceil().max(1.0)),
            Stop::Budget { max_iterations } => {
                self.check_iterations(max_iterations as f64)?;
                None
            }
        };
        match planned {
            Some(n) => {
                self.check_iterations(n)?;
                Ok(Some(n as u64))
            }
            None => Ok(None),
        }
    }

    fn check_iterations(&self, n: f64) -> Result<(), EngineError> {
        if n > self.iteration_limit as f64 {
            Err(EngineError::TooManyIterations {
                iterations: n,
                limit: self.iteration_limit,
            })
        } else {
            Ok(())
        }
    }

    /// The flag that cancels a run of this configuration.
    pub fn cancel_token(&self) -> &CancelToken {
        &self.cancel
    }
}

impl SviConfigBuilder {
    /// The step-size schedule.
    pub fn step(mut self, step: StepSize) -> Self {
        self.cfg.step = step;
        self
    }
    /// A Poisson batch of expected size `S`, a real number `> 0` (the rate is `q = S / N`): the
    /// same as [`Self::batching`] with [`Batching::Poisson`] for a whole `S`. Kept because the
    /// expected size of a Poisson batch need not be a whole number.
    pub fn expected_batch_size(mut self, s: f64) -> Self {
        self.cfg.expected_batch_size = s;
        self.cfg.sampling = Regime::Poisson;
        self
    }
    /// The stopping rule.
    pub fn stop(mut self, stop: Stop) -> Self {
        self.cfg.stop = stop;
        self
    }
    /// The privacy setting.
    pub fn privacy(mut self, privacy: Privacy) -> Self {
        self.cfg.privacy = privacy;
        self
    }
    /// How each iteration draws its batch, and its size (dp-core's one vocabulary):
    /// [`Batching::Poisson`] (the default, `S = 256`; add/remove-one, `q = S / N`) or
    /// [`Batching::FixedSize`] (exactly `S` records without replacement; replace-one, paper
    /// 001). Each has its own sensitivity and accountant event (see [`Batching`]); a non-private
    /// run samples the same way, with no noise. [`Batching::OneRecord`] (DP-SEP's one record per
    /// step) is refused by [`Self::build`]: a one-record batch here is
    /// `Batching::fixed_size(1)`, whose sampler and accounting are the same.
    ///
    /// # Example
    /// ```
    /// use vips_models::engine::{Batching, Privacy, Stop, SviConfig};
    /// let cfg = SviConfig::builder()
    ///     .batching(Batching::fixed_size(100)?)
    ///     .stop(Stop::Iterations { iterations: 50 })
    ///     .privacy(Privacy::Target { epsilon: 1.0, delta: 1e-5 })
    ///     .population(Some(10_000))
    ///     .build()?;
    /// assert_eq!(cfg.batching(), Batching::fixed_size(100)?);
    /// assert_eq!(cfg.expected_batch_size(), 100.0);
    /// assert!(SviConfig::builder().batching(Batching::OneRecord).build().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Privacy
    /// [`Batching::Poisson`]: add/remove-one neighbouring, sensitivity factor 1 (noise std
    /// `sigma * B` on a sum of contributions of norm `<= B`), one Poisson-subsampled Gaussian
    /// event per iteration. Under [`Batching::FixedSize`] the guarantee is stated under
    /// **replace-one** neighbouring over the `N` public slots of dp-core's
    /// [`dp_core::WallBuilder::population_slots`] (`N` the declared population, or the record
    /// count, public under replace-one): every release is clipped per record, summed, noised with
    /// std `sigma * 2 B` (sensitivity factor 2), divided by the exact `S`, and charged one
    /// fixed-size subsampled Gaussian event (`m = S` of `N`); a [`Privacy::Target`] run
    /// calibrates `sigma` against that event. The accountant must cover the event (all of
    /// today's do; PLD through its fixed-size pair, `docs/pld.md` section 9):
    /// [`SviConfigBuilder::build`] refuses one that does not with
    /// [`EngineError::SamplingUnsupported`].
    pub fn batching(mut self, batching: Batching) -> Self {
        self.cfg.expected_batch_size = batching.expected_batch_size() as f64;
        self.cfg.sampling = match batching {
            Batching::FixedSize { .. } => Regime::FixedSize,
            Batching::OneRecord => Regime::OneRecord,
            _ => Regime::Poisson,
        };
        self
    }
    /// The accountant that calibrates the noise multiplier of a [`Privacy::Target`] run and
    /// accounts every release (the wall's ledger, and its JSON, record which): RDP (the
    /// default), PLD (the tightest: the least noise for the same target), the moments accountant
    /// of 003, 000's zCDP with amplification, advanced or linear composition
    /// (`docs/accountant.md`, section 11). Without privacy it has no effect.
    ///
    /// # Example
    /// ```
    /// use dp_accountant::AccountantKind;
    /// use vips_models::engine::{Privacy, Stop, SviConfig};
    /// let cfg = SviConfig::builder()
    ///     .stop(Stop::Iterations { iterations: 100 })
    ///     .privacy(Privacy::Target { epsilon: 1.0, delta: 1e-5 })
    ///     .population(Some(10_000))
    ///     .accountant(AccountantKind::Pld)
    ///     .build()?;
    /// assert_eq!(cfg.accountant(), AccountantKind::Pld);
    /// # Ok::<(), vips_models::engine::EngineError>(())
    /// ```
    ///
    /// # Privacy
    /// Each accountant's calibration returns the smallest noise multiplier whose epsilon, by
    /// that accountant, is within the target; every accountant is a valid upper bound, so the
    /// guarantee is the target whichever is chosen (they differ in how much noise it costs).
    pub fn accountant(mut self, accountant: AccountantKind) -> Self {
        self.cfg.accountant = accountant;
        self
    }
    /// Seed the wall's sampling and noise RNG on purpose (reproducible; recorded as such). The
    /// default is ChaCha20 seeded from the OS.
    pub fn noise_seed(mut self, seed: Option<u64>) -> Self {
        self.cfg.noise_seed = seed;
        self
    }
    /// Seed of the initial global parameters (public randomness).
    pub fn init_seed(mut self, seed: u64) -> Self {
        self.cfg.init_seed = seed;
        self
    }
    /// The public population size `N` used in the Poisson rate `q = S / N` and in the M-step
    /// `nu + N s~` (required for private runs; a non-private run without it uses the number of
    /// records).
    ///
    /// # Privacy
    /// Under add/remove-one neighbouring the number of records is itself private, so the run
    /// never computes `q` or the M-step from it: `N` must be a public figure (a census, a
    /// published corpus size, a generator's configured size), not the count of the private data.
    /// It need not equal the count; the guarantee holds for any declared value (a value far from
    /// the count only biases the fit). A private estimate (a noised count charged to the budget)
    /// is not provided.
    pub fn population(mut self, n: Option<usize>) -> Self {
        self.cfg.population = n;
        self
    }
    /// Print one progress line per iteration to stderr (with the clip count: a non-private
    /// diagnostic for the data owner).
    pub fn progress(mut self, on: bool) -> Self {
        self.cfg.progress = on;
        self
    }

    /// Allow more iterations than [`crate::limits::MAX_ITERATIONS`] (10^7). Without it a run
    /// planning more is refused with [`EngineError::TooManyIterations`] before it starts.
    pub fn allow_long_run(mut self, on: bool) -> Self {
        self.cfg.iteration_limit = if on { u64::MAX } else { MAX_ITERATIONS };
        self
    }
    /// Show an `indicatif` progress bar on stderr when it is a terminal (none when piped).
    pub fn progress_bar(mut self, on: bool) -> Self {
        self.cfg.progress_bar = on;
        self
    }
    /// Ledger entries of releases made from the same records **before** this fit (for example a
    /// private estimate of a setting of the fit); the fit's wall starts its ledger with them
    /// ([`dp_core::WallBuilder::preceded_by`]). Requires [`Privacy::NoiseMultiplier`] (the caller
    /// split the budget).
    ///
    /// # Privacy
    /// The fit's budget then bounds the earlier releases and the fit's together, and the fit's
    /// ledger and reported epsilon cover both.
    pub fn preceded_by(mut self, entries: Vec<LedgerEntry>) -> Self {
        self.cfg.preceded_by = entries;
        self
    }
    /// A flag that stops the run before its next iteration ([`EngineError::Interrupted`]).
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cfg.cancel = token;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`EngineError::InvalidParameter`] (`batching`) for [`Batching::OneRecord`];
    /// [`EngineError::SamplingUnsupported`] for a private fixed-size run whose accountant cannot
    /// account the fixed-size event;
    /// [`EngineError::InvalidParameter`] for a bad schedule, a batch size that is not finite and
    /// `> 0` (or, under fixed-size sampling, not a whole number), zero iterations or passes, epsilon `<= 0`, delta outside `(0, 1)`, a noise multiplier
    /// `<= 0`, [`Stop::Budget`] without a noise multiplier, earlier releases
    /// ([`SviConfigBuilder::preceded_by`]) without a noise multiplier, or a declared population
    /// of zero or below the expected batch size.
    pub fn build(self) -> Result<SviConfig, EngineError> {
        let c = self.cfg;
        c.step.check()?;
        if !c.preceded_by.is_empty() && !matches!(c.privacy, Privacy::NoiseMultiplier { .. }) {
            return Err(EngineError::invalid(
                "preceded_by",
                c.preceded_by.len() as f64,
                "earlier releases need an explicit noise multiplier (Privacy::NoiseMultiplier)",
            ));
        }
        if let Some(n) = c.population {
            c.sampling_rate(n).map_err(|_| {
                EngineError::invalid(
                    "population",
                    n as f64,
                    "must be >= 1 and >= the expected batch size",
                )
            })?;
        }
        if !(c.expected_batch_size > 0.0 && c.expected_batch_size.is_finite()) {
            return Err(EngineError::invalid(
                "expected_batch_size",
                c.expected_batch_size,
                "must be finite and > 0",
            ));
        }
        match c.stop {
            Stop::Iterations { iterations: 0 } | Stop::Budget { max_iterations: 0 } => {
                return Err(EngineError::invalid("iterations", 0.0, "must be >= 1"));
            }
            Stop::Iterations { iterations: n } | Stop::Budget { max_iterations: n } => {
                c.check_iterations(n as f64)?;
            }
            Stop::Passes { passes } if !(passes > 0.0 && passes.is_finite()) => {
                return Err(EngineError::invalid(
                    "passes",
                    passes,
                    "must be finite and > 0",
                ));
            }
            _ => {}
        }
        let check_budget = |epsilon: f64, delta: f64| {
            if !(epsilon > 0.0 && epsilon.is_finite()) {
                return Err(EngineError::invalid(
                    "epsilon",
                    epsilon,
                    "must be finite and > 0",
                ));
            }
            if !(delta > 0.0 && delta < 1.0) {
                return Err(EngineError::invalid("delta", delta, "must be in (0, 1)"));
            }
            Ok(())
        };
        match c.privacy {
            Privacy::NonPrivate => {
                if matches!(c.stop, Stop::Budget { .. }) {
                    return Err(EngineError::invalid(
                        "stop",
                        f64::INFINITY,
                        "stopping by budget needs a private run with a noise multiplier",
                    ));
                }
            }
            Privacy::Target { epsilon, delta } => {
                check_budget(epsilon, delta)?;
                if matches!(c.stop, Stop::Budget { .. }) {
                    return Err(EngineError::invalid(
                        "stop",
                        epsilon,
                        "a calibrated target needs a fixed number of iterations; use a noise multiplier to stop by budget",
                    ));
                }
            }
            Privacy::NoiseMultiplier {
                noise_multiplier,
                epsilon,
                delta,
            } => {
                check_budget(epsilon, delta)?;
                if !(noise_multiplier > 0.0 && noise_multiplier.is_finite()) {
                    return Err(EngineError::invalid(
                        "noise_multiplier",
                        noise_multiplier,
                        "must be finite and > 0",
                    ));
                }
            }
        }
        if c.sampling == Regime::OneRecord {
            return Err(one_record_refused());
        }
        if c.sampling == Regime::FixedSize {
            check_whole_batch(c.expected_batch_size)?;
            if let Privacy::Target { delta, .. } | Privacy::NoiseMultiplier { delta, .. } =
                c.privacy
            {
                check_accountant_covers(c.accountant, c.batching(), delta)?;
            }
        }
        if let Some(n) = c.population {
            c.iterations(n)?;
        }
        Ok(c)
    }
}

/// Refuses an accountant that cannot account `sampling`'s event, by asking it for the epsilon
/// of one such event (no accountant is named here: whichever refuses is reported).
fn check_accountant_covers(
    accountant: AccountantKind,
    sampling: Batching,
    delta: f64,
) -> Result<(), EngineError> {
    let probe = match sampling {
        Batching::Poisson { .. } => PrivacyEvent::poisson_subsampled_gaussian(1.0, 0.5)?,
        _ => PrivacyEvent::fixed_size_subsampled_gaussian(1.0, 1, 2)?,
    };
    let config = AccountantConfig::default().with_accountant(accountant);
    match dp_accountant::epsilon_for_event(&probe, delta, &config) {
        Ok(_) => Ok(()),
        Err(AccountantError::Unsupported(_)) => Err(EngineError::SamplingUnsupported {
            accountant,
            sampling,
        }),
        Err(e) => Err(e.into()),
    }
}

/// The engine's refusal of [`Batching::OneRecord`].
fn one_record_refused() -> EngineError {
    EngineError::invalid(
        "batching",
        1.0,
        "one_record is DP-SEP's batching; the engine's one-record batch is Batching::fixed_size(1)",
    )
}
