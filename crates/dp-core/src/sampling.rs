//! The sampling schemes the accountant has bounds for, and nothing else.
//!
//! | scheme | neighbouring | accountant event | sensitivity of a sum of contributions bounded by `B` |
//! |---|---|---|---|
//! | Poisson, rate `q` | add/remove-one | `PoissonSubsampledGaussian` (Mironov, Talwar & Zhang 2019) | `B` |
//! | fixed size `m` of `n`, without replacement | replace-one | `FixedSizeSubsampledGaussian` (Wang, Balle & Kasiviswanathan 2019) | `2B` |
//! | one uniform record per step (DP-SEP) | replace-one | `FixedSizeSubsampledGaussian` with `m = 1` | `2B` |
//! | shuffled epoch: one record per step, each record exactly once per epoch of `N` steps | replace-one | `Gaussian { ReplaceOne }` **per epoch** (no amplification) | `2B` |
//!
//! The shuffled epoch claims **no** amplification by subsampling: a record influences exactly
//! one release per epoch, so an epoch of `N` releases is one replace-one Gaussian mechanism on
//! that record (parallel composition over the disjoint releases), and the epochs compose. It is
//! accounted per epoch, so a wall with this scheme must use planned accounting
//! ([`crate::wall::WallBuilder::planned_run`]) over whole epochs. Batches cut from a permutation
//! and accounted as Poisson (what the papers' code did) are deliberately absent: no bound covers
//! them.

use dp_accountant::{Neighbouring, PrivacyEvent};
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// How a release draws its batch from the wall's records.
///
/// # Example
/// ```
/// use dp_core::SamplingScheme;
/// use dp_accountant::Neighbouring;
/// let s = SamplingScheme::poisson(0.01)?;
/// assert_eq!(s.neighbouring(), Neighbouring::AddRemoveOne);
/// assert_eq!(s.expected_batch_size(10_000)?, 100.0);
/// assert_eq!(SamplingScheme::uniform_single().sensitivity_factor(), 2.0);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scheme", rename_all = "snake_case")]
pub enum SamplingScheme {
    /// Each record independently with probability `rate` (add/remove-one).
    Poisson {
        /// Inclusion probability `q` in `(0, 1]`.
        rate: f64,
    },
    /// Exactly `sample_size` records drawn uniformly without replacement (replace-one).
    FixedSize {
        /// Sample (batch) size `m >= 1`, named as in the accountant's `FixedSizeSubsampledGaussian` (at most the number of records).
        sample_size: usize,
    },
    /// One record drawn uniformly and independently at every release (replace-one): DP-SEP's
    /// per-step draw, a size-1 fixed-size subsample.
    UniformSingle,
    /// One record per release, visiting every record exactly once per epoch of `N` releases in
    /// a fresh uniformly random order (replace-one). No amplification is claimed: an epoch of
    /// `N` releases is one replace-one Gaussian on each record (parallel composition), charged
    /// per epoch by planned accounting ([`crate::wall::WallBuilder::planned_run`]).
    ShuffledEpoch,
}

impl SamplingScheme {
    /// Poisson sampling with inclusion probability `rate`.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless `rate` lies in `(0, 1]`.
    pub fn poisson(rate: f64) -> Result<Self, CoreError> {
        if rate > 0.0 && rate <= 1.0 {
            Ok(Self::Poisson { rate })
        } else {
            Err(CoreError::InvalidParameter {
                name: "sampling rate",
                value: rate,
                reason: "must lie in (0, 1]",
            })
        }
    }

    /// Fixed-size sampling without replacement of `sample_size` records.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for `sample_size == 0`.
    pub fn fixed_size(sample_size: usize) -> Result<Self, CoreError> {
        if sample_size == 0 {
            return Err(CoreError::InvalidParameter {
                name: "batch size",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        Ok(Self::FixedSize { sample_size })
    }

    /// One uniformly drawn record per release.
    pub fn uniform_single() -> Self {
        Self::UniformSingle
    }

    /// The neighbouring relation the scheme's accountant bound is stated under.
    pub fn neighbouring(&self) -> Neighbouring {
        match self {
            Self::Poisson { .. } => Neighbouring::AddRemoveOne,
            Self::FixedSize { .. } | Self::UniformSingle | Self::ShuffledEpoch => {
                Neighbouring::ReplaceOne
            }
        }
    }

    /// L2 sensitivity of a sum of contributions each of norm `<= 1`, under
    /// [`Self::neighbouring`]: 1 for add/remove-one, 2 for replace-one.
    pub fn sensitivity_factor(&self) -> f64 {
        match self.neighbouring() {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        }
    }

    /// Checks the scheme fits a population of `population` records (and that its parameters
    /// are valid: the variants' fields are public, so a scheme built directly or read from JSON
    /// is checked here, by everything that samples, accounts or normalises with it).
    ///
    /// # Errors
    /// [`CoreError::Empty`] for no records; [`CoreError::InvalidParameter`] for a fixed batch
    /// larger than the population, a batch size of `0` or a Poisson rate outside `(0, 1]`.
    pub fn check_population(&self, population: usize) -> Result<(), CoreError> {
        match *self {
            Self::Poisson { rate } => {
                Self::poisson(rate)?;
            }
            Self::FixedSize { sample_size } => {
                Self::fixed_size(sample_size)?;
            }
            Self::UniformSingle | Self::ShuffledEpoch => {}
        }
        if population == 0 {
            return Err(CoreError::Empty("the wall holds no records"));
        }
        if let Self::FixedSize { sample_size } = self
            && *sample_size > population
        {
            return Err(CoreError::InvalidParameter {
                name: "batch size",
                value: *sample_size as f64,
                reason: "must not exceed the number of records",
            });
        }
        Ok(())
    }

    /// The public expected batch size: `q N` (Poisson), `m` (fixed size), `1` (single draw,
    /// shuffled epoch).
    /// Releases are normalised by this number, never by the realised batch size.
    ///
    /// # Errors
    /// As [`Self::check_population`].
    pub fn expected_batch_size(&self, population: usize) -> Result<f64, CoreError> {
        self.check_population(population)?;
        Ok(match self {
            Self::Poisson { rate } => rate * population as f64,
            Self::FixedSize { sample_size } => *sample_size as f64,
            Self::UniformSingle | Self::ShuffledEpoch => 1.0,
        })
    }

    /// The accountant event of one release with noise multiplier `noise_multiplier`
    /// (noise std / sensitivity under [`Self::neighbouring`]).
    ///
    /// For [`Self::ShuffledEpoch`] this is the event of one whole **epoch** of `population`
    /// releases (a replace-one Gaussian, no amplification), which also bounds any single release
    /// of it; its runs are charged per epoch by [`Self::run_event`].
    ///
    /// # Errors
    /// As [`Self::check_population`], and the accountant's parameter errors.
    pub fn event(
        &self,
        noise_multiplier: f64,
        population: usize,
    ) -> Result<PrivacyEvent, CoreError> {
        self.check_population(population)?;
        Ok(match self {
            Self::Poisson { rate } => {
                PrivacyEvent::poisson_subsampled_gaussian(noise_multiplier, *rate)?
            }
            Self::FixedSize { sample_size } => PrivacyEvent::fixed_size_subsampled_gaussian(
                noise_multiplier,
                *sample_size as u64,
                population as u64,
            )?,
            Self::UniformSingle => PrivacyEvent::fixed_size_subsampled_gaussian(
                noise_multiplier,
                1,
                population as u64,
            )?,
            Self::ShuffledEpoch => {
                PrivacyEvent::gaussian(noise_multiplier, Neighbouring::ReplaceOne)?
            }
        })
    }

    /// How many times [`Self::event`] a run of `releases` releases over `population` records
    /// composes: `releases` itself, or the number of epochs for [`Self::ShuffledEpoch`].
    ///
    /// # Errors
    /// As [`Self::check_population`]; [`CoreError::InvalidParameter`] for `releases == 0` or a
    /// shuffled run that is not whole epochs.
    pub fn accounted_steps(&self, population: usize, releases: u64) -> Result<u64, CoreError> {
        self.check_population(population)?;
        if releases == 0 {
            return Err(CoreError::InvalidParameter {
                name: "planned releases",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        match self {
            Self::ShuffledEpoch => {
                if !releases.is_multiple_of(population as u64) {
                    return Err(CoreError::InvalidParameter {
                        name: "planned releases",
                        value: releases as f64,
                        reason: "a shuffled-epoch run must consist of whole epochs of N releases",
                    });
                }
                Ok(releases / population as u64)
            }
            _ => Ok(releases),
        }
    }

    /// The accountant event of a whole run of `releases` releases: [`Self::event`] composed
    /// [`Self::accounted_steps`] times (one event per release, or per epoch for a shuffled
    /// epoch). This is what planned accounting charges up front.
    ///
    /// # Errors
    /// As [`Self::event`] and [`Self::accounted_steps`].
    ///
    /// # Example
    /// ```
    /// use dp_accountant::{Neighbouring, PrivacyEvent};
    /// use dp_core::SamplingScheme;
    /// // 3 epochs of 100 shuffled releases: 3 replace-one Gaussians, no amplification
    /// let run = SamplingScheme::ShuffledEpoch.run_event(2.0, 100, 300)?;
    /// let expected = PrivacyEvent::gaussian(2.0, Neighbouring::ReplaceOne)?.self_composed(3)?;
    /// assert_eq!(run, expected);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_event(
        &self,
        noise_multiplier: f64,
        population: usize,
        releases: u64,
    ) -> Result<PrivacyEvent, CoreError> {
        let steps = self.accounted_steps(population, releases)?;
        Ok(self
            .event(noise_multiplier, population)?
            .self_composed(steps)?)
    }

    /// The accountant's sampling model of one accounted step (see [`Self::accounted_steps`]).
    pub(crate) fn accountant_sampling(
        &self,
        population: usize,
    ) -> dp_accountant::calibrate::Sampling {
        use dp_accountant::calibrate::Sampling;
        match *self {
            Self::Poisson { rate } => Sampling::Poisson { rate },
            Self::FixedSize { sample_size } => Sampling::FixedSize {
                sample_size: sample_size as u64,
                population: population as u64,
            },
            Self::UniformSingle => Sampling::FixedSize {
                sample_size: 1,
                population: population as u64,
            },
            Self::ShuffledEpoch => Sampling::FullBatch {
                neighbouring: Neighbouring::ReplaceOne,
            },
        }
    }

    /// Draws a batch of indices into `out` (cleared first), in increasing order.
    ///
    /// Poisson sampling uses geometric skips: `P(gap >= k) = (1 - q)^k` exactly as independent
    /// coins, in `O(q N)` draws. Within one release, removing the *last* record leaves the
    /// inclusion of the others unchanged (the coupling the neighbouring tests use); the number
    /// of draws consumed can differ by one (when the last record is drawn), so across several
    /// releases the sampling streams of the two datasets drift apart: tests that couple
    /// neighbours over many steps use a fresh pair of equally seeded walls per step. A shuffled epoch takes the next
    /// index of `order`, refilled with a fresh uniformly random permutation of `0..population`
    /// when empty (so `order` is the sampler's state between releases).
    pub(crate) fn sample_into<R: Rng + ?Sized>(
        &self,
        population: usize,
        rng: &mut R,
        out: &mut Vec<usize>,
        order: &mut Vec<usize>,
    ) -> Result<(), CoreError> {
        self.check_population(population)?;
        out.clear();
        match *self {
            Self::Poisson { rate } if rate >= 1.0 => out.extend(0..population),
            Self::Poisson { rate } => {
                let ln_keep = (-rate).ln_1p();
                let mut next = 0usize;
                loop {
                    let u = 1.0 - rng.random::<f64>(); // in (0, 1]
                    let gap = (u.ln() / ln_keep).floor();
                    if gap >= (population - next) as f64 {
                        break;
                    }
                    next += gap as usize;
                    out.push(next);
                    next += 1;
                    if next >= population {
                        break;
                    }
                }
            }
            Self::FixedSize { sample_size } => {
                out.extend(rand::seq::index::sample(rng, population, sample_size).iter());
                out.sort_unstable();
            }
            Self::UniformSingle => out.push(rng.random_range(0..population)),
            Self::ShuffledEpoch => {
                if order.is_empty() {
                    order.extend(0..population);
                    rand::seq::SliceRandom::shuffle(order.as_mut_slice(), rng);
                }
                out.extend(order.pop());
            }
        }
        Ok(())
    }
}

/// How a step draws its batch: the one user-facing vocabulary of the workspace (DP-SEP's
/// [`Batching::OneRecord`] and Poisson batches, the VIPS engine's Poisson and fixed-size
/// batches). [`Batching::sampling_for`] turns it into the wall's [`SamplingScheme`] once the
/// public population `N` is known.
///
/// The JSON is externally tagged, snake_case: `"one_record"`,
/// `{"poisson":{"expected_batch_size":32}}`, `{"fixed_size":{"batch_size":32}}`.
///
/// # Privacy
/// | variant | wall scheme | neighbouring | sensitivity factor |
/// |---|---|---|---|
/// | [`Batching::OneRecord`] | [`SamplingScheme::UniformSingle`] | replace-one | 2 |
/// | [`Batching::Poisson`] | [`SamplingScheme::Poisson`], rate `S / N` | add/remove-one | 1 |
/// | [`Batching::FixedSize`] | [`SamplingScheme::FixedSize`], `m = S` | replace-one | 2 |
///
/// The sensitivity factor multiplies the clip bound `B` of each record's contribution to give
/// the L2 sensitivity of the batch sum. Releases are normalised by the public expected batch size
/// `S`, never by the realised one.
///
/// # Example
/// ```
/// use dp_accountant::Neighbouring;
/// use dp_core::{Batching, SamplingScheme};
/// let b = Batching::poisson(32)?;
/// assert_eq!(b.sampling_for(1280)?, SamplingScheme::poisson(32.0 / 1280.0)?);
/// assert_eq!(b.steps_per_epoch(1280)?, 40);
/// assert_eq!(b.neighbouring(), Neighbouring::AddRemoveOne);
/// assert!(Batching::poisson(0).is_err());
/// assert!(b.sampling_for(16).is_err()); // S > N
/// let f: Batching = "fixed".parse::<Batching>()?.with_batch_size(8)?;
/// assert_eq!(f, Batching::fixed_size(8)?);
/// assert_eq!((f.name(), f.sensitivity_factor()), ("fixed_size", 2.0));
/// assert_eq!(Batching::OneRecord.steps_per_epoch(1280)?, 1280);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Batching {
    /// One uniformly drawn record per step (DP-SEP's default, 002): the wall's
    /// [`SamplingScheme::UniformSingle`] (or [`SamplingScheme::ShuffledEpoch`], the other
    /// one-record scheme); `N` steps per epoch. Replace-one, sensitivity factor 2.
    #[default]
    OneRecord,
    /// Each record independently with probability `S / N`: the wall's
    /// [`SamplingScheme::Poisson`]; `ceil(N / S)` steps per epoch. Add/remove-one, sensitivity
    /// factor 1. Build with [`Batching::poisson`], which refuses `S = 0`.
    Poisson {
        /// The public expected batch size `S` (`1 <= S <= N`).
        expected_batch_size: usize,
    },
    /// Exactly `S` records uniformly without replacement: the wall's
    /// [`SamplingScheme::FixedSize`]; `ceil(N / S)` steps per epoch. Replace-one, sensitivity
    /// factor 2. Build with [`Batching::fixed_size`], which refuses `S = 0`.
    FixedSize {
        /// The batch size `S` (`1 <= S <= N`), the scheme's `sample_size`.
        batch_size: usize,
    },
}

impl Batching {
    /// Every regime's name, as [`Self::name`] gives it.
    pub const NAMES: [&'static str; 3] = ["one_record", "poisson", "fixed_size"];

    /// [`Batching::Poisson`] with expected batch size `s`.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for `s == 0` (`s > N` is refused by
    /// [`Self::sampling_for`], which knows `N`).
    pub fn poisson(s: usize) -> Result<Self, CoreError> {
        let b = Self::Poisson {
            expected_batch_size: s,
        };
        b.check()?;
        Ok(b)
    }

    /// [`Batching::FixedSize`] with batch size `s`.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for `s == 0` (`s > N` is refused by
    /// [`Self::sampling_for`]).
    pub fn fixed_size(s: usize) -> Result<Self, CoreError> {
        let b = Self::FixedSize { batch_size: s };
        b.check()?;
        Ok(b)
    }

    /// The same regime with batch size `s` (Poisson and fixed size; [`Batching::OneRecord`]
    /// accepts only `s == 1`). Parse a regime's name, then give it its size.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for `s == 0`, or `s != 1` with one record.
    pub fn with_batch_size(self, s: usize) -> Result<Self, CoreError> {
        match self {
            Self::OneRecord if s == 1 => Ok(Self::OneRecord),
            Self::OneRecord => Err(CoreError::InvalidParameter {
                name: "batch size",
                value: s as f64,
                reason: "one_record batching reads exactly one record per step",
            }),
            Self::Poisson { .. } => Self::poisson(s),
            Self::FixedSize { .. } => Self::fixed_size(s),
        }
    }

    /// Checks the size is `>= 1` (the fields are public, so a value built directly or read from
    /// JSON is checked here, by everything that uses it).
    fn check(self) -> Result<(), CoreError> {
        match self {
            Self::Poisson {
                expected_batch_size: 0,
            }
            | Self::FixedSize { batch_size: 0 } => Err(CoreError::InvalidParameter {
                name: "batch size",
                value: 0.0,
                reason: "must be >= 1",
            }),
            _ => Ok(()),
        }
    }

    /// The name in JSON, in results and on the command line: `one_record`, `poisson` or
    /// `fixed_size`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::OneRecord => "one_record",
            Self::Poisson { .. } => "poisson",
            Self::FixedSize { .. } => "fixed_size",
        }
    }

    /// The (expected) batch size `S`: `1` for [`Batching::OneRecord`].
    pub fn expected_batch_size(&self) -> usize {
        match *self {
            Self::OneRecord => 1,
            Self::Poisson {
                expected_batch_size,
            } => expected_batch_size,
            Self::FixedSize { batch_size } => batch_size,
        }
    }

    /// The neighbouring relation of the guarantee: add/remove-one for Poisson, replace-one
    /// otherwise.
    pub fn neighbouring(&self) -> Neighbouring {
        match self {
            Self::Poisson { .. } => Neighbouring::AddRemoveOne,
            Self::OneRecord | Self::FixedSize { .. } => Neighbouring::ReplaceOne,
        }
    }

    /// The L2 sensitivity of a batch sum of contributions each of norm `<= 1` under
    /// [`Self::neighbouring`]: 1 (add/remove-one) or 2 (replace-one).
    pub fn sensitivity_factor(&self) -> f64 {
        match self.neighbouring() {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        }
    }

    /// The wall's sampler over the declared population `n`: [`SamplingScheme::UniformSingle`]
    /// (one record), [`SamplingScheme::Poisson`] with rate `S / n`, or
    /// [`SamplingScheme::FixedSize`] with `sample_size = S`.
    ///
    /// # Errors
    /// [`CoreError::Empty`] for `n == 0`; [`CoreError::InvalidParameter`] for `S == 0` or
    /// `S > n`.
    pub fn sampling_for(&self, n: usize) -> Result<SamplingScheme, CoreError> {
        self.check()?;
        if n == 0 {
            return Err(CoreError::Empty("the declared population is 0"));
        }
        let s = self.expected_batch_size();
        if s > n {
            return Err(CoreError::InvalidParameter {
                name: "batch size",
                value: s as f64,
                reason: "must not exceed the declared population N",
            });
        }
        let scheme = match *self {
            Self::OneRecord => SamplingScheme::UniformSingle,
            Self::Poisson {
                expected_batch_size,
            } => SamplingScheme::poisson(expected_batch_size as f64 / n as f64)?,
            Self::FixedSize { batch_size } => SamplingScheme::fixed_size(batch_size)?,
        };
        scheme.check_population(n)?;
        Ok(scheme)
    }

    /// Steps per epoch over the declared population `n`: `n` for one record, `ceil(n / S)`
    /// otherwise (an epoch reads `n` records, in expectation for Poisson).
    ///
    /// # Errors
    /// As [`Self::sampling_for`].
    pub fn steps_per_epoch(&self, n: usize) -> Result<usize, CoreError> {
        self.sampling_for(n)?;
        Ok(n.div_ceil(self.expected_batch_size()))
    }
}

impl std::fmt::Display for Batching {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Batching {
    type Err = CoreError;

    /// A regime's name (case-insensitive, `-` or `_`): `one_record` / `one`; `poisson`;
    /// `fixed` / `fixed_size`. The size is `1` until [`Batching::with_batch_size`] sets it.
    ///
    /// # Errors
    /// [`CoreError::UnknownBatching`] for anything else.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
            "one_record" | "one" => Ok(Self::OneRecord),
            "poisson" => Ok(Self::Poisson {
                expected_batch_size: 1,
            }),
            "fixed" | "fixed_size" => Ok(Self::FixedSize { batch_size: 1 }),
            _ => Err(CoreError::UnknownBatching {
                given: s.chars().take(64).collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha20Rng;

    #[test]
    fn batching_json_names_and_schemes() {
        for (b, json) in [
            (Batching::OneRecord, r#""one_record""#),
            (
                Batching::poisson(32).unwrap(),
                r#"{"poisson":{"expected_batch_size":32}}"#,
            ),
            (
                Batching::fixed_size(8).unwrap(),
                r#"{"fixed_size":{"batch_size":8}}"#,
            ),
        ] {
            assert_eq!(serde_json::to_string(&b).unwrap(), json);
            assert_eq!(serde_json::from_str::<Batching>(json).unwrap(), b);
            assert_eq!(
                b.name().parse::<Batching>().unwrap().name(),
                b.name(),
                "names round-trip"
            );
            let scheme = b.sampling_for(64).unwrap();
            assert_eq!(scheme.neighbouring(), b.neighbouring());
            assert_eq!(scheme.sensitivity_factor(), b.sensitivity_factor());
            assert_eq!(
                scheme.expected_batch_size(64).unwrap(),
                b.expected_batch_size() as f64
            );
        }
        assert_eq!(Batching::NAMES, ["one_record", "poisson", "fixed_size"]);
        assert_eq!(
            "Fixed-Size".parse::<Batching>().unwrap(),
            Batching::FixedSize { batch_size: 1 }
        );
        assert!(matches!(
            "bernoulli".parse::<Batching>(),
            Err(CoreError::UnknownBatching { .. })
        ));
    }

    #[test]
    fn batching_refuses_bad_sizes() {
        assert!(Batching::poisson(0).is_err());
        assert!(Batching::fixed_size(0).is_err());
        for b in [
            Batching::Poisson {
                expected_batch_size: 0,
            },
            Batching::FixedSize { batch_size: 0 },
        ] {
            assert!(b.sampling_for(10).is_err());
        }
        assert!(Batching::fixed_size(11).unwrap().sampling_for(10).is_err());
        assert!(Batching::poisson(11).unwrap().sampling_for(10).is_err());
        assert!(matches!(
            Batching::OneRecord.sampling_for(0),
            Err(CoreError::Empty(_))
        ));
        assert_eq!(
            Batching::fixed_size(3)
                .unwrap()
                .steps_per_epoch(10)
                .unwrap(),
            4
        );
        assert!(Batching::OneRecord.with_batch_size(2).is_err());
    }

    #[test]
    fn schemes_built_directly_are_checked_too() {
        for bad in [
            SamplingScheme::Poisson { rate: 0.0 },
            SamplingScheme::Poisson { rate: 2.0 },
            SamplingScheme::Poisson { rate: f64::NAN },
            SamplingScheme::FixedSize { sample_size: 0 },
        ] {
            assert!(bad.check_population(10).is_err());
            assert!(bad.expected_batch_size(10).is_err());
            assert!(bad.event(1.0, 10).is_err());
        }
        let json: SamplingScheme =
            serde_json::from_str(r#"{"scheme":"fixed_size","sample_size":0}"#).unwrap();
        assert!(json.expected_batch_size(10).is_err());
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(SamplingScheme::poisson(0.0).is_err());
        assert!(SamplingScheme::poisson(1.5).is_err());
        assert!(SamplingScheme::poisson(f64::NAN).is_err());
        assert!(SamplingScheme::fixed_size(0).is_err());
        let s = SamplingScheme::fixed_size(5).unwrap();
        assert!(s.expected_batch_size(4).is_err());
        assert!(
            SamplingScheme::uniform_single()
                .expected_batch_size(0)
                .is_err()
        );
    }

    #[test]
    fn events_match_the_scheme() {
        let p = SamplingScheme::poisson(0.1)
            .unwrap()
            .event(1.0, 100)
            .unwrap();
        assert_eq!(
            p,
            PrivacyEvent::poisson_subsampled_gaussian(1.0, 0.1).unwrap()
        );
        let f = SamplingScheme::fixed_size(10)
            .unwrap()
            .event(1.0, 100)
            .unwrap();
        assert_eq!(f.neighbouring().unwrap(), Neighbouring::ReplaceOne);
        let u = SamplingScheme::uniform_single().event(2.0, 50).unwrap();
        assert_eq!(
            u,
            PrivacyEvent::fixed_size_subsampled_gaussian(2.0, 1, 50).unwrap()
        );
    }

    /// Inclusion frequencies of Poisson sampling: each of 20 records over 20_000 draws at q = 0.3
    /// has count ~ Binomial(20000, 0.3), sd ~ 64.8; a 5.5 sd band has false-alarm rate < 1e-6.
    #[test]
    fn poisson_inclusion_rate() {
        let s = SamplingScheme::poisson(0.3).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let mut counts = [0u32; 20];
        let mut out = Vec::new();
        for _ in 0..20_000 {
            s.sample_into(20, &mut rng, &mut out, &mut Vec::new())
                .unwrap();
            assert!(out.windows(2).all(|w| w[0] < w[1]));
            for &i in &out {
                counts[i] += 1;
            }
        }
        let sd = (20_000.0f64 * 0.3 * 0.7).sqrt();
        for c in counts {
            assert!((c as f64 - 6000.0).abs() < 5.5 * sd, "count {c}");
        }
    }

    /// A shuffled epoch visits every index exactly once per epoch, in a different order each
    /// epoch (two equal orders of 50 indices have probability 1/50!).
    #[test]
    fn shuffled_epoch_visits_each_record_once() {
        let mut rng = ChaCha20Rng::seed_from_u64(13);
        let (mut out, mut order) = (Vec::new(), Vec::new());
        let mut epochs = Vec::new();
        for _ in 0..2 {
            let mut epoch = Vec::new();
            for _ in 0..50 {
                SamplingScheme::ShuffledEpoch
                    .sample_into(50, &mut rng, &mut out, &mut order)
                    .unwrap();
                assert_eq!(out.len(), 1);
                epoch.push(out[0]);
            }
            let mut sorted = epoch.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..50).collect::<Vec<_>>());
            epochs.push(epoch);
        }
        assert_ne!(epochs[0], epochs[1]);
        let e = SamplingScheme::ShuffledEpoch.event(1.5, 50).unwrap();
        assert_eq!(
            e,
            PrivacyEvent::gaussian(1.5, Neighbouring::ReplaceOne).unwrap()
        );
        assert_eq!(
            SamplingScheme::ShuffledEpoch
                .accounted_steps(50, 150)
                .unwrap(),
            3
        );
        assert!(
            SamplingScheme::ShuffledEpoch
                .accounted_steps(50, 149)
                .is_err()
        );
        assert_eq!(
            SamplingScheme::uniform_single()
                .accounted_steps(50, 149)
                .unwrap(),
            149
        );
    }

    /// Fixed-size and single draws: exact sizes, distinct indices, uniform inclusion
    /// (each index count ~ Binomial(20000, m/n); 5.5 sd band).
    #[test]
    fn fixed_size_and_single_are_uniform() {
        let mut rng = ChaCha20Rng::seed_from_u64(12);
        let mut out = Vec::new();
        for (scheme, m) in [
            (SamplingScheme::fixed_size(4).unwrap(), 4usize),
            (SamplingScheme::uniform_single(), 1usize),
        ] {
            let mut counts = [0u32; 10];
            for _ in 0..20_000 {
                scheme
                    .sample_into(10, &mut rng, &mut out, &mut Vec::new())
                    .unwrap();
                assert_eq!(out.len(), m);
                assert!(out.windows(2).all(|w| w[0] < w[1]));
                for &i in &out {
                    counts[i] += 1;
                }
            }
            let p = m as f64 / 10.0;
            let sd = (20_000.0 * p * (1.0 - p)).sqrt();
            for c in counts {
                assert!((c as f64 - 20_000.0 * p).abs() < 5.5 * sd, "count {c}");
            }
        }
    }
}
