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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha20Rng;

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
