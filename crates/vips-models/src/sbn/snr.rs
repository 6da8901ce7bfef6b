//! Signal-to-noise of the SBN's released blocks in one private iteration (a diagnostic for the
//! data owner: it reads the private data without noise and must not be published).

use rayon::prelude::*;
use serde::Serialize;

use super::{BinaryImage, Sbn, SbnNatural};

/// Signal and noise of one block of the release for a batch of `S` images.
///
/// Everything is in the released (normalised) scale `sum / S`: `signal_rms` is the root mean
/// square entry of the batch mean of the contributions, `noise_std` the standard deviation of
/// the noise on each free entry (`bound x sigma x sqrt(blocks) / S`, 003 Eq. 63), `snr` their
/// ratio. `bound_use` is the mean over records of `||contribution|| / bound`: how much of the
/// declared bound a typical record uses (`1` = worst case attained).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockSnr {
    /// Block name (`s1_z`, ..., `s7_Z`).
    pub name: String,
    /// Number of entries.
    pub len: usize,
    /// Declared per-record bound.
    pub bound: f64,
    /// Root mean square entry of the mean statistic.
    pub signal_rms: f64,
    /// Per-entry noise std of the released mean.
    pub noise_std: f64,
    /// `signal_rms / noise_std` (infinite without noise).
    pub snr: f64,
    /// Mean `||contribution|| / bound` over the records.
    pub bound_use: f64,
}

/// The [`BlockSnr`] of every block when `images` are one batch released with noise multiplier
/// `noise_multiplier` (the wall's `sigma`; `S = images.len()`).
///
/// Runs the E-step on every image with `natural` (parallel over images). Non-private: a
/// diagnostic of how the noise compares with the statistics, not a release.
///
/// # Example
/// ```
/// use rand::SeedableRng;
/// use vips_models::engine::VipsModel;
/// use vips_models::sbn::{Sbn, SbnConfig, SbnNatural, SyntheticSbn, block_snr};
/// let images = SyntheticSbn::random(16, 3, 1).sample(200, 2);
/// let model = Sbn::new(SbnConfig::builder(16, 3).build()?)?;
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let natural = SbnNatural::from_global(&model.init_global(&mut rng)?);
/// let snr = block_snr(&model, &natural, &images, 1.0);
/// assert_eq!(snr.len(), model.spec().len());
/// assert!(snr.iter().all(|b| b.noise_std > 0.0 && b.bound_use <= 1.0 + 1e-9));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn block_snr(
    model: &Sbn,
    natural: &SbnNatural,
    images: &[BinaryImage],
    noise_multiplier: f64,
) -> Vec<BlockSnr> {
    let spec = model.spec();
    let blocks = spec.blocks();
    let s = images.len().max(1) as f64;
    let zero = || {
        (
            blocks
                .iter()
                .map(|b| vec![0.0; b.stored_len().max(1)])
                .collect::<Vec<_>>(),
            vec![0.0; blocks.len()],
        )
    };
    let (sums, use_sums) = images
        .par_iter()
        .fold(
            || None,
            |acc: Option<(Vec<Vec<f64>>, Vec<f64>)>, im| {
                let (mut sums, mut uses) = acc.unwrap_or_else(|| {
                    let (_, u) = zero();
                    (Vec::new(), u)
                });
                let rec = model.record_blocks(natural, im);
                if sums.is_empty() {
                    sums = rec.iter().map(|v| vec![0.0; v.len()]).collect();
                }
                for (b, v) in rec.iter().enumerate() {
                    for (t, x) in sums[b].iter_mut().zip(v) {
                        *t += x;
                    }
                    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
                    uses[b] += norm / blocks[b].bound();
                }
                Some((sums, uses))
            },
        )
        .reduce(
            || None,
            |a, b| match (a, b) {
                (None, x) | (x, None) => x,
                (Some((mut sa, mut ua)), Some((sb, ub))) => {
                    for (x, y) in sa.iter_mut().zip(&sb) {
                        for (p, q) in x.iter_mut().zip(y) {
                            *p += q;
                        }
                    }
                    for (p, q) in ua.iter_mut().zip(&ub) {
                        *p += q;
                    }
                    Some((sa, ua))
                }
            },
        )
        .unwrap_or_else(zero);
    let rescaled = spec.rescaled_sensitivity();
    blocks
        .iter()
        .enumerate()
        .map(|(b, block)| {
            let len = sums[b].len();
            let signal_rms =
                (sums[b].iter().map(|x| x * x).sum::<f64>() / len.max(1) as f64).sqrt() / s;
            let noise_std = block.bound() * noise_multiplier * rescaled / s;
            BlockSnr {
                name: block.name().to_string(),
                len,
                bound: block.bound(),
                signal_rms,
                noise_std,
                snr: if noise_std > 0.0 {
                    signal_rms / noise_std
                } else {
                    f64::INFINITY
                },
                bound_use: use_sums[b] / s,
            }
        })
        .collect()
}
