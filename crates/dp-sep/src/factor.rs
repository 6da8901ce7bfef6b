//! DP-SEP's release on `dp_core`'s privacy wall: one record's intermediate factor (or the sum of
//! a Poisson batch's), clipped to `C` and noised by [`dp_core::PrivacyWall`].
//!
//! A [`FactorWall`] is a [`dp_core::PrivacyWall`] built from a public [`WallPlan`] plus the one
//! release spec DP-SEP uses, built with [`dp_core::ReleaseSpec::builder`]: one vector block
//! `"factor"` of the model's natural-parameter length with bound `C = plan.clip`, whose typed
//! handle is [`FactorWall::factor`]. A statistic writes one record's factor through it
//! (`buf.dense(factor)`) into dp-core's [`ContributionBuffer`], or rejects the record
//! ([`ContributionBuffer::reject_record`]). Everything private happens in the wall: the sampler
//! ([`dp_core::SamplingScheme::UniformSingle`], [`dp_core::SamplingScheme::ShuffledEpoch`] or
//! [`dp_core::SamplingScheme::Poisson`]), the declared population, the clipping, the sum over the
//! batch, the replacement of a rejected or non-finite statistic by zero, the noise, the division
//! by the public expected batch size, and the accounting. This module only forwards; it has no
//! sampler, RNG, clip or noise of its own. The clip `C` exists once, in the plan: the DP-SEP step
//! reads it from the wall.
//!
//! # Privacy
//! *One record per step* (`UniformSingle`, `ShuffledEpoch`), under **replace-one** neighbours of
//! the `N = plan.population` slots ([`dp_core::WallBuilder::population_slots`]): each release is
//! the Gaussian mechanism on one record's statistic clipped to L2 norm `C` (sensitivity `2C`),
//! noise std `sigma * 2C`. [`SamplingScheme::UniformSingle`] is a size-1 fixed-size subsample,
//! accounted as `FixedSizeSubsampledGaussian { m: 1, n: N }` (Wang, Balle & Kasiviswanathan
//! 2019) composed `T` times; [`SamplingScheme::ShuffledEpoch`] uses every slot exactly once per epoch
//! and is accounted **without amplification** as one replace-one Gaussian per epoch, composed
//! over the epochs. Accounting is planned ([`dp_core::WallBuilder::planned_run`]): one ledger
//! entry charged before any record is touched.
//!
//! *A fixed-size batch per step* ([`SamplingScheme::FixedSize`] with `m = S`, from
//! [`crate::Batching::FixedSize`]), under **replace-one** neighbours of the `N` slots: `S` slots
//! drawn uniformly without replacement, the sum of their clipped statistics has sensitivity
//! `2C`, noise std `sigma * 2C`, divided by `S`; planned accounting as above, charged as `T`
//! `FixedSizeSubsampledGaussian { m: S, n: N }` events.
//!
//! *A Poisson batch per step* ([`SamplingScheme::Poisson`] with rate `q = S / N`, `N` declared
//! with [`dp_core::WallBuilder::public_population_size`] and required by
//! [`dp_core::WallBuilder::require_public_population`]), under **add/remove-one** neighbours: each
//! record is in the batch independently with probability `q`; the sum of the batch's clipped
//! statistics has sensitivity `C`, gets noise std `sigma * C`, and is divided by the public
//! `S = qN` (never the realised batch size), so the released average moves by at most `C / S`.
//! Accounting is per release: each release is checked against the budget and recorded as one
//! `PoissonSubsampledGaussian { q }` ledger entry (Mironov, Talwar & Zhang 2019), the noise
//! calibrated for the planned `T` releases.
//!
//! See [`dp_core::PrivacyWall`] for what is not covered (the diagnostics, a seeded RNG,
//! floating-point noise).

use dp_accountant::{AccountantConfig, AccountantError, AccountantKind};
use dp_core::wall::ReleaseDiagnostics;
use dp_core::{
    ContributionBuffer, PrivacyWall, ReleaseSpec, RngPolicy, SamplingScheme, VectorBlock,
};

use crate::error::SepError;

/// The public plan of a [`FactorWall`]: everything it needs besides the records; build with
/// [`WallPlan::builder`]. All of it is declared by the caller, none of it is computed from the
/// records.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WallPlan {
    population: usize,
    dim: usize,
    epsilon: f64,
    delta: f64,
    clip: f64,
    steps: u64,
    sampling: SamplingScheme,
    rng: RngPolicy,
    accountant: AccountantKind,
}

/// Unchecked [`WallPlan`]. The population, the statistic length, the budget, the clip norm and
/// the number of releases have no default and must be given.
#[derive(Clone, Copy, Debug)]
pub struct WallPlanBuilder {
    population: Option<usize>,
    dim: Option<usize>,
    budget: Option<(f64, f64)>,
    clip: Option<f64>,
    steps: Option<u64>,
    sampling: SamplingScheme,
    rng: RngPolicy,
    accountant: AccountantKind,
}

impl WallPlan {
    /// A builder with [`SamplingScheme::UniformSingle`], noise from [`RngPolicy::OsEntropy`]
    /// and the RDP accountant; everything else must be given.
    ///
    /// # Example
    /// ```
    /// use dp_sep::{SamplingScheme, WallPlan};
    /// let plan = WallPlan::builder()
    ///     .population(1000)
    ///     .dim(8)
    ///     .budget(1.0, 1e-5)
    ///     .clip(1.0)
    ///     .steps(2000)
    ///     .sampling(SamplingScheme::ShuffledEpoch)
    ///     .build()?;
    /// assert_eq!(plan.steps(), 2000);
    /// // A shuffled schedule must be whole epochs of N = 1000 releases.
    /// assert!(WallPlan::builder().population(1000).dim(8).budget(1.0, 1e-5).clip(1.0)
    ///     .steps(1500).sampling(SamplingScheme::ShuffledEpoch).build().is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn builder() -> WallPlanBuilder {
        WallPlanBuilder {
            population: None,
            dim: None,
            budget: None,
            clip: None,
            steps: None,
            sampling: SamplingScheme::UniformSingle,
            rng: RngPolicy::OsEntropy,
            accountant: AccountantKind::Rdp,
        }
    }

    /// Declared public population size `N`: the accountant's `q = 1/N` (and the epoch length of
    /// a shuffled schedule). Never the realised number of records (see [`FactorWall::new`]).
    pub fn population(&self) -> usize {
        self.population
    }
    /// Length of the released statistic (the model's natural-parameter length).
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Budget epsilon.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }
    /// Budget delta.
    pub fn delta(&self) -> f64 {
        self.delta
    }
    /// Clip norm `C`: the wall's per-record bound and DP-SEP's factor clip (one number).
    pub fn clip(&self) -> f64 {
        self.clip
    }
    /// Planned releases `T`.
    pub fn steps(&self) -> u64 {
        self.steps
    }
    /// The sampler: [`SamplingScheme::UniformSingle`], [`SamplingScheme::ShuffledEpoch`],
    /// [`SamplingScheme::FixedSize`] or [`SamplingScheme::Poisson`] (the accountant's event is the scheme's, so the two cannot
    /// disagree).
    pub fn sampling(&self) -> SamplingScheme {
        self.sampling
    }
    /// Noise and sampling RNG.
    pub fn rng(&self) -> RngPolicy {
        self.rng
    }
    /// The accountant that calibrates the noise and accounts the run
    /// ([`WallPlanBuilder::accountant`]; default RDP).
    pub fn accountant(&self) -> AccountantKind {
        self.accountant
    }
}

impl WallPlanBuilder {
    /// Declared public population size `N` (required).
    ///
    /// # Privacy
    /// A public figure (a generator's configured size, a published split size), never the
    /// count of the private records.
    pub fn population(mut self, n: usize) -> Self {
        self.population = Some(n);
        self
    }
    /// Length of the released statistic (required).
    pub fn dim(mut self, dim: usize) -> Self {
        self.dim = Some(dim);
        self
    }
    /// The whole run's budget `(epsilon, delta)` (required).
    pub fn budget(mut self, epsilon: f64, delta: f64) -> Self {
        self.budget = Some((epsilon, delta));
        self
    }
    /// Clip norm `C` (required).
    pub fn clip(mut self, clip: f64) -> Self {
        self.clip = Some(clip);
        self
    }
    /// Planned releases `T` (required).
    pub fn steps(mut self, steps: u64) -> Self {
        self.steps = Some(steps);
        self
    }
    /// The sampler (default [`SamplingScheme::UniformSingle`]).
    pub fn sampling(mut self, sampling: SamplingScheme) -> Self {
        self.sampling = sampling;
        self
    }
    /// Noise and sampling RNG (default [`RngPolicy::OsEntropy`]; a seed only for reproducible
    /// experiments).
    pub fn rng(mut self, rng: RngPolicy) -> Self {
        self.rng = rng;
        self
    }
    /// The accountant that calibrates the noise multiplier and accounts every release (the
    /// wall's ledger, and its JSON, record which; `dp-accountant replay` answers under it): RDP
    /// (the default), PLD (the tightest: the least noise for the same budget; Poisson batches
    /// and shuffled epochs only), 003's moments accountant, 000's zCDP with amplification,
    /// advanced or linear composition (`docs/accountant.md`, section 11). The calibration is
    /// dp-core's ([`dp_core::calibrate_noise_multiplier`]), the same as the VIPS engine's.
    ///
    /// # Example
    /// ```
    /// use dp_accountant::AccountantKind;
    /// use dp_sep::{SamplingScheme, WallPlan};
    /// let plan = |kind, sampling| {
    ///     WallPlan::builder().population(1000).dim(4).budget(1.0, 1e-5).clip(1.0)
    ///         .steps(200).sampling(sampling).accountant(kind).build()
    /// };
    /// let pld = plan(AccountantKind::Pld, SamplingScheme::poisson(0.05)?)?;
    /// assert_eq!(pld.accountant(), AccountantKind::Pld);
    /// // One record drawn per step (a fixed-size subsample, replace-one): PLD accounts it too
    /// // (docs/pld.md, section 9).
    /// let single = plan(AccountantKind::Pld, SamplingScheme::uniform_single())?;
    /// assert_eq!(single.accountant(), AccountantKind::Pld);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Privacy
    /// Each accountant's calibration returns the smallest noise multiplier (rounded up) whose
    /// epsilon by that accountant is within the budget, and every accountant is a valid upper
    /// bound, so the guarantee is the budget whichever is chosen; they differ in the noise it
    /// costs. An accountant that cannot express the sampler's event is refused
    /// ([`SepError::AccountantUnsupported`]), never replaced.
    pub fn accountant(mut self, accountant: AccountantKind) -> Self {
        self.accountant = accountant;
        self
    }

    /// Validates the plan (everything but the records; [`FactorWall::new`] checks those and the
    /// budget's reachability).
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for a missing setting, a zero population, statistic
    /// length or number of steps, `clip` not finite and `> 0`, epsilon below
    /// [`crate::limits::MIN_EPSILON`] or not finite, delta outside `(0, 1)`, or a shuffled
    /// schedule that is not whole epochs (every [`SamplingScheme`] is accepted: each is one of
    /// [`crate::Batching::sampling_for`]'s or a shuffled epoch);
    /// [`SepError::TooLarge`] for a population or statistic above the limits of
    /// [`crate::limits`]; [`SepError::AccountantUnsupported`] for an accountant that cannot
    /// account the sampler's event (none of today's: PLD covers the fixed-size event too).
    pub fn build(self) -> Result<WallPlan, SepError> {
        let missing = |name| SepError::InvalidParameter {
            name,
            value: f64::NAN,
            reason: "must be given (WallPlan::builder has no default for it)",
        };
        let (epsilon, delta) = self.budget.ok_or(missing("epsilon"))?;
        let plan = WallPlan {
            population: self.population.ok_or(missing("population"))?,
            dim: self.dim.ok_or(missing("dim"))?,
            epsilon,
            delta,
            clip: self.clip.ok_or(missing("clip"))?,
            steps: self.steps.ok_or(missing("steps"))?,
            sampling: self.sampling,
            rng: self.rng,
            accountant: self.accountant,
        };
        check_epsilon(plan.epsilon)?;
        if !(plan.delta > 0.0 && plan.delta < 1.0) {
            return Err(SepError::InvalidParameter {
                name: "delta",
                value: plan.delta,
                reason: "must be in (0, 1)",
            });
        }
        check_plan(&plan)?;
        check_accountant_covers(plan.accountant, plan.sampling, plan.population, plan.delta)?;
        Ok(plan)
    }
}

/// Refuses an accountant that cannot account `sampling` over `population` at `delta`, by
/// asking it for the epsilon of one such release (no accountant is named here: whichever
/// refuses is reported).
pub(crate) fn check_accountant_covers(
    accountant: AccountantKind,
    sampling: SamplingScheme,
    population: usize,
    delta: f64,
) -> Result<(), SepError> {
    let probe = sampling.event(1.0, population)?;
    let config = AccountantConfig::default().with_accountant(accountant);
    match dp_accountant::epsilon_for_event(&probe, delta, &config) {
        Ok(_) => Ok(()),
        Err(AccountantError::Unsupported(_)) => Err(SepError::AccountantUnsupported {
            accountant,
            scheme: sampling,
        }),
        Err(e) => Err(dp_core::CoreError::from(e).into()),
    }
}

fn check_plan(plan: &WallPlan) -> Result<(), SepError> {
    crate::error::check_positive("clip", plan.clip)?;
    for (name, v) in [
        ("steps", plan.steps),
        ("population", plan.population as u64),
        ("dim", plan.dim as u64),
    ] {
        if v == 0 {
            return Err(SepError::InvalidParameter {
                name,
                value: 0.0,
                reason: "must be >= 1",
            });
        }
    }
    if plan.sampling == SamplingScheme::ShuffledEpoch
        && !plan.steps.is_multiple_of(plan.population as u64)
    {
        return Err(SepError::InvalidParameter {
            name: "steps",
            value: plan.steps as f64,
            reason: "a shuffled schedule must consist of whole epochs",
        });
    }
    // The wall keeps one slot index per member of the declared population.
    crate::limits::check_bytes(
        &format!("population N = {}", plan.population),
        "the wall's population slots",
        (plan.population as u128).saturating_mul(std::mem::size_of::<Option<usize>>() as u128),
        crate::limits::MAX_DATA_BYTES,
    )?;
    crate::limits::check_bytes(
        &format!("statistic length {}", plan.dim),
        "the released statistic",
        crate::limits::f64_bytes(plan.dim as u128)
            .saturating_mul(u128::from(crate::limits::PARAMETER_COPIES)),
        crate::limits::MAX_MODEL_BYTES,
    )?;
    Ok(())
}

/// Refuses a budget below [`crate::limits::MIN_EPSILON`] (and anything not finite and `> 0`).
pub(crate) fn check_epsilon(epsilon: f64) -> Result<(), SepError> {
    crate::error::check_positive("epsilon", epsilon)?;
    if epsilon < crate::limits::MIN_EPSILON {
        return Err(SepError::InvalidParameter {
            name: "epsilon",
            value: epsilon,
            reason: "below the smallest budget a private run accepts (1e-4, dp_sep::limits::MIN_EPSILON): the noise would drown every release",
        });
    }
    Ok(())
}

/// DP-SEP's planned run on a [`dp_core::PrivacyWall`] (see the [module documentation](self)).
///
/// # Example
/// ```
/// use dp_core::RngPolicy;
/// use dp_sep::{FactorWall, SamplingScheme, WallPlan};
/// let records: Vec<f64> = (0..100).map(|i| i as f64).collect();
/// let plan = WallPlan::builder()
///     .population(100)
///     .dim(2)
///     .budget(1.0, 1e-5)
///     .clip(1.0)
///     .steps(200)
///     .sampling(SamplingScheme::uniform_single())
///     .rng(RngPolicy::Seeded { seed: 1 })
///     .build()?;
/// let mut wall = FactorWall::new(records, &plan)?;
/// // The statistic writes one record's factor through the wall's typed handle into a zeroed
/// // block (or rejects the record); the wall clips it to norm 1 and adds noise.
/// let factor = wall.factor();
/// let (noised, _diagnostics) = wall.release(|x: &f64, buf| {
///     if *x >= 0.0 {
///         buf.dense(factor)[0] = *x;
///     } else {
///         buf.reject_record("a negative record has no factor"); // contributes zero
///     }
/// })?;
/// assert_eq!(noised.len(), 2);
/// assert!(wall.epsilon_spent()? <= 1.0);
/// assert_eq!(wall.core().ledger().len(), 1); // the whole run, charged up front
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Debug)]
pub struct FactorWall<R> {
    wall: PrivacyWall<R>,
    spec: ReleaseSpec,
    factor: VectorBlock,
    clip: f64,
    population: usize,
    out: Vec<f64>,
}

impl<R> FactorWall<R> {
    /// A wall over `records` for `plan.steps` releases of statistics of length `plan.dim`
    /// clipped to `plan.clip`, within `(plan.epsilon, plan.delta)`, for the declared population
    /// `plan.population`. The noise multiplier is calibrated for the plan; with one record per
    /// step the whole run is charged to the ledger here, before any record is touched, with a
    /// Poisson sampler each release is charged when made.
    ///
    /// # Privacy
    /// Only the declared `N = plan.population` enters the accountant, the sampler and the
    /// output. The records fill `N` slots ([`dp_core::WallBuilder::population_slots`]): with
    /// fewer records the spare slots are empty (a draw of one releases the zero vector plus
    /// noise); with more, a secret uniformly random subset of `N` records fills them. Either way
    /// each release draws from the `N` slots, so the accountant's event holds for every
    /// realised count. With a Poisson sampler there are no slots: each record is drawn
    /// independently with the public rate `q = S / N`, and `N` enters only the normaliser `qN`
    /// and the event, so again the realised count shapes nothing released.
    ///
    /// # Errors
    /// [`SepError::Empty`] for no records; [`SepError::Wall`] for the wall's errors (an
    /// unreachable budget). The plan itself was checked by [`WallPlanBuilder::build`].
    pub fn new(records: Vec<R>, plan: &WallPlan) -> Result<Self, SepError> {
        Self::build(records, plan, false)
    }

    /// The same wall **without noise**: the same sampler (from `plan.rng`), the same slots,
    /// clipping, replacement of failing statistics and release path, but the noise drawn is
    /// zero ([`dp_core::WallBuilder`]'s test seam). The seam the end-to-end neighbouring tests
    /// use to compare the noise-free released values of two neighbouring data sets with all
    /// other randomness equal.
    ///
    /// # Privacy
    /// None: the ledger and [`Self::epsilon_spent`] describe the plan, not what was released.
    ///
    /// # Errors
    /// As [`Self::new`].
    #[doc(hidden)]
    pub fn noise_free(records: Vec<R>, plan: &WallPlan) -> Result<Self, SepError> {
        Self::build(records, plan, true)
    }

    fn build(records: Vec<R>, plan: &WallPlan, noise_free: bool) -> Result<Self, SepError> {
        if records.is_empty() {
            return Err(SepError::Empty("the wall needs at least one record"));
        }
        let builder = PrivacyWall::builder(records)
            .accountant_config(AccountantConfig::default().with_accountant(plan.accountant))
            .sampling(plan.sampling)
            .epsilon_delta(plan.epsilon, plan.delta)
            .rng(plan.rng);
        let mut builder = match plan.sampling {
            // Add/remove-one: the declared N sets the rate's normaliser qN and the event; each
            // release is charged on its own (the steps actually run).
            SamplingScheme::Poisson { .. } => builder
                .public_population_size(plan.population)
                .require_public_population()
                .calibrate_for_releases(plan.steps),
            _ => builder.population_slots(plan.population).planned_run(
                format!(
                    "DP-SEP run: {} releases of {} clipped to C = {}",
                    plan.steps,
                    match plan.sampling {
                        SamplingScheme::FixedSize { .. } => "a fixed-size batch's summed factors",
                        _ => "one record's factor",
                    },
                    plan.clip
                ),
                plan.steps,
            ),
        };
        if noise_free {
            builder = builder.noise_free_for_tests();
        }
        let wall = builder.build()?;
        let mut spec = ReleaseSpec::builder("dp-sep factor");
        let factor = spec.vector("factor", plan.dim, plan.clip)?;
        let spec = spec.build()?;
        Ok(Self {
            wall,
            spec,
            factor,
            clip: plan.clip,
            population: plan.population,
            out: vec![0.0; plan.dim],
        })
    }

    /// One release: draws a slot (or a Poisson batch), lets `statistic` write each drawn
    /// record's factor through the handle [`Self::factor`] into the wall's
    /// [`ContributionBuffer`] (`buf.dense(factor)` is a zeroed slice of length `dim`; an empty
    /// slot writes nothing), clips each to `C`, sums, adds `N(0, (f C sigma)^2 I)` (`f` =
    /// [`Self::relation_factor`]), divides by the public [`Self::expected_batch_size`] and
    /// returns it with the release's diagnostics (not private).
    ///
    /// # Privacy
    /// A record the statistic rejects ([`ContributionBuffer::reject_record`], with a fixed
    /// reason) or whose statistic has a non-finite entry is replaced by zero by the wall
    /// (counted in the diagnostics' `replaced_records`); the release is made and charged as any
    /// other. Rejecting a record changes the release only as removing it would, which the noise
    /// covers.
    ///
    /// # Errors
    /// [`SepError::Wall`] with [`dp_core::CoreError::BudgetExhausted`] after the planned
    /// releases (one record per step) or when one more would exceed the budget (Poisson).
    pub fn release<F>(&mut self, statistic: F) -> Result<(&[f64], ReleaseDiagnostics), SepError>
    where
        F: FnMut(&R, &mut ContributionBuffer),
    {
        let diagnostics = self
            .wall
            .release_into(&self.spec, statistic, &mut self.out)?;
        Ok((&self.out, diagnostics))
    }

    /// The typed handle of the released factor block (`"factor"`, length [`Self::dim`], bound
    /// [`Self::clip`]): the statistic of [`Self::release`] writes through it.
    pub fn factor(&self) -> VectorBlock {
        self.factor
    }

    /// The wall's sampler (public).
    pub fn sampling(&self) -> SamplingScheme {
        self.wall.sampling()
    }

    /// The public expected batch size `S` the release is divided by: `1` for one record per
    /// step, `qN` (`N` declared) for a Poisson batch.
    pub fn expected_batch_size(&self) -> f64 {
        self.wall.expected_batch_size()
    }

    /// `2` under replace-one (one record per step, a fixed-size batch), `1` under
    /// add/remove-one (Poisson): the sensitivity of the un-normalised release is
    /// `relation_factor() x C`.
    pub fn relation_factor(&self) -> f64 {
        self.wall.sampling().sensitivity_factor()
    }

    /// The clip norm `C` (the wall's bound; DP-SEP clips its refreshed factor to it too).
    pub fn clip(&self) -> f64 {
        self.clip
    }

    /// The length of the released statistic.
    pub fn dim(&self) -> usize {
        self.out.len()
    }

    /// The noise multiplier `sigma` (noise std / sensitivity of the sum: `2C` replace-one,
    /// `C` add/remove-one).
    pub fn noise_multiplier(&self) -> f64 {
        self.wall.noise_multiplier().unwrap_or(0.0)
    }

    /// Epsilon spent at the budget's delta: the planned run's (charged up front) for one record
    /// per step, the releases made so far for a Poisson batch.
    ///
    /// # Errors
    /// [`SepError::Wall`] if the accountant fails.
    pub fn epsilon_spent(&self) -> Result<f64, SepError> {
        Ok(self.wall.spent_epsilon()?)
    }

    /// Releases made so far.
    pub fn releases(&self) -> u64 {
        self.wall.releases_made()
    }

    /// The declared population size `N` the accountant assumed (public).
    pub fn population(&self) -> usize {
        self.population
    }

    /// The accountant that calibrated the noise and accounts the releases (the ledger's).
    pub fn accountant(&self) -> AccountantKind {
        self.wall.ledger().config().accountant()
    }

    /// Clipped and replaced statistics over all releases: **not private** (the data owner's
    /// diagnostics).
    pub fn diagnostics(&self) -> ReleaseDiagnostics {
        self.wall.total_diagnostics()
    }

    /// The underlying wall (ledger, release log, budget).
    pub fn core(&self) -> &PrivacyWall<R> {
        &self.wall
    }
}
