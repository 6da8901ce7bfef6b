//! Where DP-SEP touches the records: a release of one record's clipped intermediate factor plus
//! Gaussian noise, behind a type that owns the records, the noise RNG and the ledger.
//!
//! Two implementations of [`FactorRelease`]:
//! - [`SepWall`] (default): a planned run. The whole schedule (`T` steps of the sampler) is
//!   accounted **once, before any data is touched**: the noise multiplier is calibrated by
//!   `dp-accountant` for `T` steps and the composed event is recorded within the budget; the wall
//!   then refuses release `T + 1`. Per release it draws the record with its own sampler, clips the
//!   statistic with `dp_core::clip_l2`, and adds noise with `dp_core::GaussianMechanism`.
//! - [`CoreWall`]: `dp_core::PrivacyWall` with `SamplingScheme::UniformSingle`, one ledger entry
//!   per release. Identical mechanism, but its per-release budget check recomputes the
//!   composition (about 4 ms per release on the reference machine), which is too slow for the
//!   `10^5 - 10^6` steps of the experiments; it is used in tests to show the two agree.
//!
//! # Privacy
//! The population size `N` is declared by the caller ([`WallPlan::population`]), never taken
//! from the records (see [`SepWall::new`] for fewer or more records than declared).
//! Under **replace-one** neighbours: each release is the Gaussian mechanism on one record's
//! statistic clipped to L2 norm `C` (sensitivity `2C`), noise std `sigma * 2C`.
//! With [`Sampling::IndependentUniform`] each release is a size-1 fixed-size subsample,
//! accounted as `FixedSizeSubsampledGaussian { m: 1, n: N }` (Wang, Balle & Kasiviswanathan
//! 2019) composed `T` times. With [`Sampling::ShuffledEpoch`] each epoch uses every record
//! exactly once; it is accounted **without amplification** as one replace-one Gaussian per epoch
//! (a record influences exactly one release per epoch), composed over the epochs.

use dp_accountant::calibrate::{Sampling as AccSampling, calibrate_noise_multiplier};
use dp_accountant::{Accountant, AccountantConfig, Budget, LedgerEntry, Neighbouring};
use dp_core::{
    BlockSpec, GaussianMechanism, PrivacyWall, ReleaseSpec, RngPolicy, SamplingScheme, clip_l2,
};
use rand::rngs::{ChaCha20Rng, SysRng};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

use crate::error::SepError;
use crate::sampling::Sampling;

fn core_err(e: dp_core::CoreError) -> SepError {
    SepError::Privacy(e.to_string())
}

/// A per-step private release of a clipped statistic of one record.
pub trait FactorRelease<R> {
    /// Draws one record (with the sampler the accountant assumes), evaluates `statistic` on it,
    /// clips the result to L2 norm `C`, adds `N(0, (2 C sigma)^2 I)` and returns it.
    ///
    /// # Errors
    /// [`SepError::Privacy`] when the planned budget is used up, or for a statistic of the wrong
    /// length.
    fn release(
        &mut self,
        statistic: &(dyn Fn(&R) -> Vec<f64> + Sync),
    ) -> Result<Vec<f64>, SepError>;

    /// The noise multiplier `sigma` (noise std / replace-one sensitivity `2C`).
    fn noise_multiplier(&self) -> f64;

    /// Epsilon of the accounted run at the budget's delta.
    ///
    /// # Errors
    /// Accountant errors (e.g. nothing recorded yet).
    fn epsilon_spent(&self) -> Result<f64, SepError>;

    /// Releases made so far.
    fn releases(&self) -> u64;

    /// The population size `N` the accountant assumed (declared, public).
    fn population(&self) -> usize;

    /// Records whose statistic was clipped (a diagnostic; not covered by the guarantee).
    fn clipped(&self) -> u64;

    /// The ledger as JSON, for audit.
    ///
    /// # Errors
    /// Serialisation errors.
    fn ledger_json(&self) -> Result<String, SepError>;
}

/// The public plan of a [`SepWall`]: everything it needs besides the records. All of it is
/// declared by the caller, none of it is computed from the records.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WallPlan {
    /// Declared public population size `N`: the accountant's `q = 1/N` (and the epoch length of a
    /// shuffled schedule). Never the realised number of records (see [`SepWall`]).
    pub population: usize,
    /// Length of the released statistic (the model's natural-parameter length).
    pub dim: usize,
    /// Budget epsilon.
    pub epsilon: f64,
    /// Budget delta.
    pub delta: f64,
    /// Clip norm `C`.
    pub clip: f64,
    /// Planned releases `T`.
    pub steps: u64,
    /// The sampler.
    pub sampling: Sampling,
    /// Noise and sampling RNG.
    pub rng: RngPolicy,
}

/// Number of records, checked.
fn check_records<R>(records: &[R]) -> Result<usize, SepError> {
    if records.is_empty() {
        Err(SepError::EmptyData("the wall needs at least one record"))
    } else {
        Ok(records.len())
    }
}

fn check_plan<R>(records: &[R], plan: &WallPlan) -> Result<(), SepError> {
    check_records(records)?;
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
    // The wall keeps one slot index per member of the declared population.
    crate::limits::check_bytes(
        &format!("population N = {}", plan.population),
        "the wall's population slots",
        (plan.population as u128).saturating_mul(std::mem::size_of::<usize>() as u128),
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
fn check_epsilon(epsilon: f64) -> Result<(), SepError> {
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

/// The record index of each of `population` slots (see [`SepWall::new`]).
fn fill_slots(records: usize, population: usize, rng: &mut ChaCha20Rng) -> Vec<Option<usize>> {
    if records <= population {
        (0..population)
            .map(|i| (i < records).then_some(i))
            .collect()
    } else {
        rand::seq::index::sample(rng, records, population)
            .into_iter()
            .map(Some)
            .collect()
    }
}

fn rng_streams(policy: RngPolicy) -> Result<(ChaCha20Rng, ChaCha20Rng), SepError> {
    let make = || -> Result<ChaCha20Rng, SepError> {
        match policy {
            RngPolicy::OsEntropy => ChaCha20Rng::try_from_rng(&mut SysRng)
                .map_err(|e| SepError::Privacy(format!("OS entropy unavailable: {e}"))),
            RngPolicy::Seeded { seed } => Ok(ChaCha20Rng::seed_from_u64(seed)),
        }
    };
    let mut sampling = make()?;
    sampling.set_stream(0);
    let mut noise = make()?;
    noise.set_stream(1);
    Ok((sampling, noise))
}

/// The planned DP-SEP wall (see the [module documentation](self)).
///
/// # Example
/// ```
/// use dp_core::RngPolicy;
/// use dp_sep::Sampling;
/// use dp_sep::wall::{FactorRelease, SepWall};
/// use dp_sep::wall::WallPlan;
/// let records: Vec<f64> = (0..100).map(|i| i as f64).collect();
/// let plan = WallPlan { population: 100, dim: 2, epsilon: 1.0, delta: 1e-5, clip: 1.0, steps: 200,
///                       sampling: Sampling::IndependentUniform, rng: RngPolicy::Seeded { seed: 1 } };
/// let mut wall = SepWall::new(records, &plan)?;
/// let noised = wall.release(&|x: &f64| vec![*x, 0.0])?; // clipped to norm 1, then noised
/// assert_eq!(noised.len(), 2);
/// assert!(wall.epsilon_spent()? <= 1.0);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Debug)]
pub struct SepWall<R> {
    records: Vec<R>,
    /// Record index of each of the `N` slots (`None`: an empty slot, contributing zero).
    slots: Vec<Option<usize>>,
    dim: usize,
    substituted: u64,
    sampling: Sampling,
    clip: f64,
    /// `None` only for [`SepWall::noise_free`] (whose epsilon is infinite).
    mechanism: Option<GaussianMechanism>,
    sigma: f64,
    budget: Budget,
    ledger: Accountant,
    planned: u64,
    done: u64,
    clipped: u64,
    order: Vec<usize>,
    sampling_rng: ChaCha20Rng,
    noise_rng: ChaCha20Rng,
}

impl<R> SepWall<R> {
    /// A wall over `records` for `plan.steps` releases of statistics of length `plan.dim`
    /// clipped to `plan.clip`, within `(plan.epsilon, plan.delta)`, for the declared population
    /// `plan.population`. With [`Sampling::ShuffledEpoch`], `steps` must be a multiple of it.
    ///
    /// # Privacy
    /// Only the declared `N = plan.population` enters the accountant, the sampler and the output.
    /// The records fill `N` slots: with fewer records the remaining slots are empty (a draw of one
    /// releases the zero vector plus noise, as a record contributing nothing); with more, a
    /// secret uniformly random subset of `N` records (chosen once from the sampling stream) fills
    /// them and the rest are never used. Either way each release draws one slot uniformly from
    /// `N`, so the accountant's event holds for every realised count.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for `epsilon` below [`crate::limits::MIN_EPSILON`] or not
    /// finite, `delta` outside `(0, 1)`, `clip <= 0`,
    /// `steps == 0`, `population == 0`, `dim == 0`, or a shuffled schedule that is not whole
    /// epochs; [`SepError::EmptyData`] for no records; [`SepError::TooLarge`] for a population or
    /// statistic above the limits of [`crate::limits`]; accountant errors (e.g. an unreachable
    /// budget).
    pub fn new(records: Vec<R>, plan: &WallPlan) -> Result<Self, SepError> {
        let WallPlan {
            population: n,
            dim,
            epsilon,
            delta,
            clip,
            steps,
            sampling,
            rng,
        } = *plan;
        check_plan(&records, plan)?;
        check_epsilon(epsilon)?;
        let budget = Budget::new(epsilon, delta)?;
        let (acc_sampling, accounted_steps) = match sampling {
            Sampling::IndependentUniform => (
                AccSampling::FixedSize {
                    sample_size: 1,
                    population: n as u64,
                },
                steps,
            ),
            Sampling::ShuffledEpoch => {
                if !steps.is_multiple_of(n as u64) {
                    return Err(SepError::InvalidParameter {
                        name: "steps",
                        value: steps as f64,
                        reason: "a shuffled schedule must consist of whole epochs",
                    });
                }
                (
                    AccSampling::FullBatch {
                        neighbouring: Neighbouring::ReplaceOne,
                    },
                    steps / n as u64,
                )
            }
        };
        let config = AccountantConfig::default();
        let calibration =
            calibrate_noise_multiplier(acc_sampling, accounted_steps, &budget, &config)?;
        let sigma = calibration.noise_multiplier;
        let mut ledger = Accountant::with_config(config)?;
        let mut notes = std::collections::BTreeMap::new();
        notes.insert(
            "mechanism".into(),
            format!("DP-SEP (002 Alg. 3): Gaussian on one record's factor clipped to C = {clip}; replace-one sensitivity 2C"),
        );
        notes.insert("sampling".into(), format!("{sampling:?}"));
        notes.insert("planned_releases".into(), steps.to_string());
        notes.insert("declared_population".into(), n.to_string());
        notes.insert("rng".into(), rng.describe());
        ledger.record_entry_within(
            LedgerEntry {
                label: format!("DP-SEP run: {steps} releases"),
                event: acc_sampling.run_event(sigma, accounted_steps)?,
                notes,
            },
            &budget,
        )?;
        let mechanism =
            GaussianMechanism::from_noise_multiplier(sigma, 2.0 * clip).map_err(core_err)?;
        let (mut sampling_rng, noise_rng) = rng_streams(rng)?;
        let slots = fill_slots(records.len(), n, &mut sampling_rng);
        Ok(Self {
            records,
            slots,
            dim,
            substituted: 0,
            sampling,
            clip,
            mechanism: Some(mechanism),
            sigma,
            budget,
            ledger,
            planned: steps,
            done: 0,
            clipped: 0,
            order: Vec::new(),
            sampling_rng,
            noise_rng,
        })
    }

    /// The same wall **without noise**: the same sampler (from `plan.rng`), the same
    /// clipping and the same release path, but no Gaussian noise and no ledger entry. This is the
    /// seam the end-to-end neighbouring tests use to compare the noise-free released values of
    /// two neighbouring data sets with all other randomness equal.
    ///
    /// # Privacy
    /// None: [`FactorRelease::epsilon_spent`] reports `f64::INFINITY` and
    /// [`FactorRelease::noise_multiplier`] reports 0.
    ///
    /// # Errors
    /// As [`SepWall::new`] for the plan and the records.
    #[doc(hidden)]
    pub fn noise_free(records: Vec<R>, plan: &WallPlan) -> Result<Self, SepError> {
        check_plan(&records, plan)?;
        let (mut sampling_rng, noise_rng) = rng_streams(plan.rng)?;
        let slots = fill_slots(records.len(), plan.population, &mut sampling_rng);
        Ok(Self {
            records,
            slots,
            dim: plan.dim,
            substituted: 0,
            sampling: plan.sampling,
            clip: plan.clip,
            mechanism: None,
            sigma: 0.0,
            budget: Budget::new(1.0, 0.5)?,
            ledger: Accountant::with_config(AccountantConfig::default())?,
            planned: plan.steps,
            done: 0,
            clipped: 0,
            order: Vec::new(),
            sampling_rng,
            noise_rng,
        })
    }

    /// Statistics replaced by zero because they were non-finite or of the wrong length (a
    /// diagnostic; not covered by the guarantee).
    pub fn substituted(&self) -> u64 {
        self.substituted
    }

    /// The planned number of releases.
    pub fn planned(&self) -> u64 {
        self.planned
    }

    fn draw(&mut self) -> Option<usize> {
        let n = self.slots.len();
        let slot = match self.sampling {
            Sampling::IndependentUniform => self.sampling_rng.random_range(0..n),
            Sampling::ShuffledEpoch => {
                if self.order.is_empty() {
                    self.order = (0..n).collect();
                    self.order.shuffle(&mut self.sampling_rng);
                }
                self.order.pop().unwrap_or(0)
            }
        };
        self.slots[slot]
    }
}

impl<R: Sync> FactorRelease<R> for SepWall<R> {
    fn release(
        &mut self,
        statistic: &(dyn Fn(&R) -> Vec<f64> + Sync),
    ) -> Result<Vec<f64>, SepError> {
        if self.done >= self.planned {
            return Err(SepError::Privacy(format!(
                "budget ({}, {}) used up by the {} planned releases",
                self.budget.epsilon(),
                self.budget.delta(),
                self.planned
            )));
        }
        let mut value = match self.draw() {
            Some(i) => statistic(&self.records[i]),
            None => vec![0.0; self.dim],
        };
        if value.len() != self.dim || value.iter().any(|v| !v.is_finite()) {
            // A fixed substitute keeps the sensitivity claim whatever the statistic did; the
            // release goes ahead (and was accounted) as for any other record.
            value = vec![0.0; self.dim];
            self.substituted += 1;
        }
        if clip_l2(&mut value, self.clip)
            .map_err(core_err)?
            .was_clipped()
        {
            self.clipped += 1;
        }
        if let Some(mechanism) = &self.mechanism {
            mechanism
                .add_noise(&mut value, &mut self.noise_rng)
                .map_err(core_err)?;
        }
        self.done += 1;
        Ok(value)
    }

    fn noise_multiplier(&self) -> f64 {
        self.sigma
    }

    fn epsilon_spent(&self) -> Result<f64, SepError> {
        if self.mechanism.is_none() {
            return Ok(f64::INFINITY);
        }
        Ok(self.ledger.epsilon(self.budget.delta())?)
    }

    fn releases(&self) -> u64 {
        self.done
    }

    fn population(&self) -> usize {
        self.slots.len()
    }

    fn clipped(&self) -> u64 {
        self.clipped
    }

    fn ledger_json(&self) -> Result<String, SepError> {
        Ok(self.ledger.to_json()?)
    }
}

/// `dp_core::PrivacyWall` as a [`FactorRelease`] (uniform single draws only; one ledger entry
/// per release). Tests only: its population is the realised number of records (issue 18 moves
/// dp-sep onto dp-core's wall with a declared population).
#[derive(Debug)]
pub struct CoreWall<R> {
    wall: PrivacyWall<R>,
    spec: ReleaseSpec,
    population: usize,
}

impl<R> CoreWall<R> {
    /// A `dp_core` wall around `records` for statistics of length `dim` clipped to `clip`,
    /// calibrated for `steps` releases within `(epsilon, delta)`.
    ///
    /// # Errors
    /// `dp_core`'s configuration and calibration errors as [`SepError::Privacy`].
    pub fn new(
        records: Vec<R>,
        dim: usize,
        epsilon: f64,
        delta: f64,
        clip: f64,
        steps: u64,
        rng: RngPolicy,
    ) -> Result<Self, SepError> {
        let population = check_records(&records)?;
        check_epsilon(epsilon)?;
        let wall = PrivacyWall::builder(records)
            .sampling(SamplingScheme::uniform_single())
            .epsilon_delta(epsilon, delta)
            .calibrate_for_releases(steps)
            .rng(rng)
            .build()
            .map_err(core_err)?;
        let spec = ReleaseSpec::new(vec![
            BlockSpec::vector("factor", dim, clip).map_err(core_err)?,
        ])
        .map_err(core_err)?;
        Ok(Self {
            wall,
            spec,
            population,
        })
    }
}

impl<R: Sync> FactorRelease<R> for CoreWall<R> {
    fn release(
        &mut self,
        statistic: &(dyn Fn(&R) -> Vec<f64> + Sync),
    ) -> Result<Vec<f64>, SepError> {
        let len = self.spec.blocks()[0].stored_len();
        let release = self
            .wall
            .release(&self.spec, |r: &R, buf| {
                let v = statistic(r);
                if v.len() == len && v.iter().all(|x| x.is_finite()) {
                    buf.dense(0).copy_from_slice(&v);
                }
            })
            .map_err(core_err)?;
        Ok(release.blocks()[0].value.as_slice().to_vec())
    }

    fn noise_multiplier(&self) -> f64 {
        self.wall.noise_multiplier().unwrap_or(f64::INFINITY)
    }

    fn epsilon_spent(&self) -> Result<f64, SepError> {
        self.wall.spent_epsilon().map_err(core_err)
    }

    fn releases(&self) -> u64 {
        self.wall.releases_made()
    }

    fn population(&self) -> usize {
        self.population
    }

    fn clipped(&self) -> u64 {
        self.wall.total_clipped_records()
    }

    fn ledger_json(&self) -> Result<String, SepError> {
        Ok(self.wall.ledger().to_json()?)
    }
}
