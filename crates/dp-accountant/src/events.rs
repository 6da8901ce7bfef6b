//! Privacy events: descriptions of what a mechanism did, precise enough to account for.
//!
//! An event is pure data (no RNG, no linear algebra). Mechanisms in `dp-core` produce them; the
//! accountant turns them into RDP curves, zCDP parameters or privacy-loss distributions.
//!
//! # Neighbouring relations
//! Every event is stated under one [`Neighbouring`] relation, and the noise multiplier is always
//! `noise std / L2 sensitivity` **under that relation**:
//! - the Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019) is analysed for add/remove-one;
//! - the fixed-size subsampled Gaussian without replacement (Wang, Balle & Kasiviswanathan 2019,
//!   Thm 27) is analysed for replace-one;
//! - a plain Gaussian can be stated under either.
//!
//! Composing events of different relations is an error ([`AccountantError::MixedNeighbouring`]):
//! a sensitivity computed for one relation is wrong for the other (replace-one is up to 2x).

use serde::{Deserialize, Serialize};

use crate::error::{AccountantError, check_positive, check_rate};

/// Which pairs of datasets count as neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Neighbouring {
    /// `D' = D ∪ {x}` or `D' = D \ {x}`: one record added or removed (unbounded DP).
    AddRemoveOne,
    /// `D'` equals `D` with one record replaced by another (bounded DP; sizes equal and public).
    ReplaceOne,
}

impl Neighbouring {
    /// The stable name, as in JSON: `add_remove_one` or `replace_one`.
    ///
    /// # Example
    /// ```
    /// use dp_accountant::Neighbouring;
    /// assert_eq!(Neighbouring::ReplaceOne.name(), "replace_one");
    /// assert_eq!(
    ///     serde_json::to_value(Neighbouring::AddRemoveOne).unwrap(),
    ///     Neighbouring::AddRemoveOne.name()
    /// );
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Self::AddRemoveOne => "add_remove_one",
            Self::ReplaceOne => "replace_one",
        }
    }
}

/// One accountable privacy event.
///
/// Construct with the checked constructors ([`PrivacyEvent::gaussian`],
/// [`PrivacyEvent::poisson_subsampled_gaussian`], ...); a deserialised event is checked with
/// [`PrivacyEvent::validate`] before it is accounted.
///
/// # Example
/// ```
/// use dp_accountant::{Neighbouring, PrivacyEvent};
/// let step = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)?;
/// let run = step.self_composed(1000)?;
/// assert_eq!(run.neighbouring()?, Neighbouring::AddRemoveOne);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PrivacyEvent {
    /// The Gaussian mechanism on the full dataset: noise std = `noise_multiplier` x L2 sensitivity.
    Gaussian {
        /// Noise standard deviation divided by the L2 sensitivity (under `neighbouring`).
        noise_multiplier: f64,
        /// The relation the sensitivity was computed under.
        neighbouring: Neighbouring,
    },
    /// Gaussian mechanism on a Poisson subsample (each record independently with probability
    /// `sampling_rate`); add/remove-one neighbours.
    PoissonSubsampledGaussian {
        /// Noise standard deviation divided by the add/remove L2 sensitivity.
        noise_multiplier: f64,
        /// Inclusion probability `q` in `(0, 1]`.
        sampling_rate: f64,
    },
    /// Gaussian mechanism on a uniformly random subset of exactly `sample_size` of the
    /// `population` records, drawn without replacement; replace-one neighbours.
    FixedSizeSubsampledGaussian {
        /// Noise standard deviation divided by the replace-one L2 sensitivity.
        noise_multiplier: f64,
        /// Batch size `m` (public), `1 <= m <= n`.
        sample_size: u64,
        /// Dataset size `n` (public under replace-one).
        population: u64,
    },
    /// `count` independent repetitions of `event` (adaptive composition).
    SelfComposed {
        /// The repeated event.
        event: Box<PrivacyEvent>,
        /// Number of repetitions (`>= 1`).
        count: u64,
    },
    /// Adaptive composition of different events, all under the same relation.
    Composed {
        /// The events, in order.
        events: Vec<PrivacyEvent>,
    },
}

impl PrivacyEvent {
    /// A Gaussian mechanism with noise multiplier `noise_multiplier` under `neighbouring`.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `noise_multiplier` is finite and `> 0`.
    pub fn gaussian(
        noise_multiplier: f64,
        neighbouring: Neighbouring,
    ) -> Result<Self, AccountantError> {
        check_positive("noise_multiplier", noise_multiplier)?;
        Ok(Self::Gaussian {
            noise_multiplier,
            neighbouring,
        })
    }

    /// A Poisson-subsampled Gaussian mechanism (add/remove-one).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `noise_multiplier > 0` is finite and
    /// `sampling_rate` lies in `(0, 1]`.
    pub fn poisson_subsampled_gaussian(
        noise_multiplier: f64,
        sampling_rate: f64,
    ) -> Result<Self, AccountantError> {
        check_positive("noise_multiplier", noise_multiplier)?;
        check_rate("sampling_rate", sampling_rate)?;
        Ok(Self::PoissonSubsampledGaussian {
            noise_multiplier,
            sampling_rate,
        })
    }

    /// A fixed-size (without replacement) subsampled Gaussian mechanism (replace-one).
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] for a bad noise multiplier;
    /// [`AccountantError::InvalidSampleSize`] unless `1 <= sample_size <= population`.
    pub fn fixed_size_subsampled_gaussian(
        noise_multiplier: f64,
        sample_size: u64,
        population: u64,
    ) -> Result<Self, AccountantError> {
        check_positive("noise_multiplier", noise_multiplier)?;
        if sample_size == 0 || sample_size > population {
            return Err(AccountantError::InvalidSampleSize {
                sample_size,
                population,
            });
        }
        Ok(Self::FixedSizeSubsampledGaussian {
            noise_multiplier,
            sample_size,
            population,
        })
    }

    /// This event repeated `count` times.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] if `count == 0`.
    pub fn self_composed(self, count: u64) -> Result<Self, AccountantError> {
        if count == 0 {
            return Err(AccountantError::InvalidParameter {
                name: "count",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        Ok(Self::SelfComposed {
            event: Box::new(self),
            count,
        })
    }

    /// The adaptive composition of `events`.
    ///
    /// # Errors
    /// [`AccountantError::Empty`] for no events; [`AccountantError::MixedNeighbouring`] if the
    /// events are stated under different relations; any validation error of a member.
    pub fn compose(events: Vec<PrivacyEvent>) -> Result<Self, AccountantError> {
        let composed = Self::Composed { events };
        composed.neighbouring()?;
        Ok(composed)
    }

    /// The neighbouring relation this event is stated under (validating it on the way).
    ///
    /// # Errors
    /// Any parameter error, an empty composition, or mixed relations inside a composition.
    pub fn neighbouring(&self) -> Result<Neighbouring, AccountantError> {
        match self {
            Self::Gaussian {
                noise_multiplier,
                neighbouring,
            } => {
                check_positive("noise_multiplier", *noise_multiplier)?;
                Ok(*neighbouring)
            }
            Self::PoissonSubsampledGaussian {
                noise_multiplier,
                sampling_rate,
            } => {
                Self::poisson_subsampled_gaussian(*noise_multiplier, *sampling_rate)?;
                Ok(Neighbouring::AddRemoveOne)
            }
            Self::FixedSizeSubsampledGaussian {
                noise_multiplier,
                sample_size,
                population,
            } => {
                Self::fixed_size_subsampled_gaussian(*noise_multiplier, *sample_size, *population)?;
                Ok(Neighbouring::ReplaceOne)
            }
            Self::SelfComposed { event, count } => {
                if *count == 0 {
                    return Err(AccountantError::InvalidParameter {
                        name: "count",
                        value: 0.0,
                        reason: "must be >= 1",
                    });
                }
                event.neighbouring()
            }
            Self::Composed { events } => {
                let mut iter = events.iter();
                let first = iter
                    .next()
                    .ok_or(AccountantError::Empty(
                        "a composition needs at least one event",
                    ))?
                    .neighbouring()?;
                for event in iter {
                    let next = event.neighbouring()?;
                    if next != first {
                        return Err(AccountantError::MixedNeighbouring {
                            first,
                            second: next,
                        });
                    }
                }
                Ok(first)
            }
        }
    }

    /// Checks every parameter of the event (use after deserialising).
    ///
    /// # Errors
    /// As [`PrivacyEvent::neighbouring`].
    pub fn validate(&self) -> Result<(), AccountantError> {
        self.neighbouring().map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_reject_bad_input() {
        assert!(PrivacyEvent::gaussian(0.0, Neighbouring::AddRemoveOne).is_err());
        assert!(PrivacyEvent::gaussian(f64::NAN, Neighbouring::AddRemoveOne).is_err());
        assert!(PrivacyEvent::poisson_subsampled_gaussian(1.0, 0.0).is_err());
        assert!(PrivacyEvent::poisson_subsampled_gaussian(1.0, 1.5).is_err());
        assert!(PrivacyEvent::poisson_subsampled_gaussian(1.0, f64::NAN).is_err());
        assert!(PrivacyEvent::fixed_size_subsampled_gaussian(1.0, 7, 6).is_err());
        assert!(PrivacyEvent::fixed_size_subsampled_gaussian(1.0, 0, 6).is_err());
        assert!(PrivacyEvent::compose(vec![]).is_err());
    }

    #[test]
    fn mixed_relations_are_refused() {
        let a = PrivacyEvent::poisson_subsampled_gaussian(1.0, 0.1).unwrap();
        let b = PrivacyEvent::fixed_size_subsampled_gaussian(1.0, 10, 100).unwrap();
        assert!(matches!(
            PrivacyEvent::compose(vec![a, b]),
            Err(AccountantError::MixedNeighbouring { .. })
        ));
    }

    #[test]
    fn serde_round_trip_and_validation() {
        let e = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)
            .unwrap()
            .self_composed(1000)
            .unwrap();
        let json = serde_json::to_string(&e).unwrap();
        let back: PrivacyEvent = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
        let corrupt: PrivacyEvent = serde_json::from_str(
            r#"{"type":"poisson_subsampled_gaussian","noise_multiplier":-1.0,"sampling_rate":0.5}"#,
        )
        .unwrap();
        assert!(corrupt.validate().is_err());
    }
}
