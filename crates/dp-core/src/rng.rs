//! The noise RNG policy: ChaCha20 from OS entropy by default, a caller's seed on purpose.

use rand::SeedableRng;
use rand::rngs::{ChaCha20Rng, SysRng};
use serde::{Deserialize, Serialize};

use crate::error::CoreError;

/// Where the privacy wall's randomness (batch sampling and noise) comes from.
///
/// # Privacy
/// [`RngPolicy::OsEntropy`] (the default) seeds ChaCha20, a cryptographically secure generator,
/// from the operating system: nobody, the caller included, can predict or replay the noise.
/// [`RngPolicy::Seeded`] makes every draw reproducible from the seed: anyone who knows the seed
/// can subtract the noise, so a seeded run gives **no** privacy against whoever holds the seed.
/// It exists for reproducible experiments and tests, and the ledger records it as such.
///
/// # Example
/// ```
/// use dp_core::RngPolicy;
/// assert_eq!(RngPolicy::default(), RngPolicy::OsEntropy);
/// assert!(RngPolicy::Seeded { seed: 7 }.describe().contains("seed 7"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum RngPolicy {
    /// ChaCha20 seeded from the operating system's entropy source (the default).
    #[default]
    OsEntropy,
    /// ChaCha20 seeded from a caller-supplied seed, on purpose (reproducible experiments).
    Seeded {
        /// The seed (recorded in the ledger).
        seed: u64,
    },
}

impl RngPolicy {
    /// A one-line description for ledger notes.
    pub fn describe(&self) -> String {
        match self {
            Self::OsEntropy => "ChaCha20 seeded from OS entropy (CSPRNG)".to_string(),
            Self::Seeded { seed } => format!(
                "ChaCha20 seeded on purpose by the caller with seed {seed} \
                 (reproducible; no privacy against whoever knows the seed)"
            ),
        }
    }

    /// Whether the noise can be replayed from a caller-known seed.
    pub fn is_seeded(&self) -> bool {
        matches!(self, Self::Seeded { .. })
    }

    /// Two ChaCha20 generators, one for batch sampling (stream 0), one for noise (stream 1):
    /// from one seed as two streams, or from OS entropy as two independent seeds. Keeping them apart means the noise of a release does not depend on how many
    /// records were sampled (and lets tests couple neighbouring datasets exactly).
    pub(crate) fn streams(&self) -> Result<(ChaCha20Rng, ChaCha20Rng), CoreError> {
        let make = || -> Result<ChaCha20Rng, CoreError> {
            match self {
                Self::OsEntropy => {
                    ChaCha20Rng::try_from_rng(&mut SysRng).map_err(CoreError::Entropy)
                }
                Self::Seeded { seed } => Ok(ChaCha20Rng::seed_from_u64(*seed)),
            }
        };
        let mut sampling = make()?;
        sampling.set_stream(0);
        let mut noise = make()?;
        noise.set_stream(1);
        Ok((sampling, noise))
    }
}
