//! Which record each step visits, and what the accountant may assume about it.

use rand::Rng;
use rand::RngExt;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

/// How (DP-)SEP chooses the record of each step.
///
/// # Privacy
/// - [`Sampling::IndependentUniform`]: every step draws its record independently and uniformly
///   from the `N` records. One step is a fixed-size subsample of size 1 under replace-one
///   neighbours, the accountant's `FixedSizeSubsampledGaussian { sample_size: 1, population: N }`
///   (Wang, Balle & Kasiviswanathan 2019), and amplification by subsampling applies.
/// - [`Sampling::ShuffledEpoch`]: each epoch visits every record exactly once in a fresh random
///   order. This gets **no** amplification: each epoch is accounted as one Gaussian mechanism per
///   record (`Gaussian { neighbouring: ReplaceOne }` composed once per epoch), which is what the
///   authors' code did in practice while claiming `q = 1/N` amplification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// Independent uniform draw per step (a size-1 subsample).
    IndependentUniform,
    /// A random permutation per epoch (no amplification).
    ShuffledEpoch,
}

/// The record indices of one epoch of `n` steps.
pub(crate) fn epoch_indices<R: Rng + ?Sized>(
    sampling: Sampling,
    n: usize,
    rng: &mut R,
) -> Vec<usize> {
    match sampling {
        Sampling::IndependentUniform => (0..n).map(|_| rng.random_range(0..n)).collect(),
        Sampling::ShuffledEpoch => {
            let mut idx: Vec<usize> = (0..n).collect();
            idx.shuffle(rng);
            idx
        }
    }
}
