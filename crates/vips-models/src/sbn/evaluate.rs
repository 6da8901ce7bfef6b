//! Evaluation: pixel-wise reconstruction accuracy (000 Sec. 7.1), the per-pixel-mean baseline,
//! and the held-out variational lower bound.

use rayon::prelude::*;

use super::{BinaryImage, Sbn, SbnNatural};
use expfam::sigmoid;

/// Pixel-wise reconstruction accuracy (000 Sec. 7.1): each test image's `q(z_n)` from the E-step,
/// reconstruction probabilities `sigma(<W> <z_n> + <c>)`, thresholded at 1/2, compared with the
/// image; the fraction of pixels that agree (one minus the mean squared distance of the paper).
pub fn pixel_accuracy(model: &Sbn, natural: &SbnNatural, images: &[BinaryImage]) -> f64 {
    let (j_dim, k_dim) = (natural.visible, natural.hidden);
    let correct: usize = images
        .par_iter()
        .map(|im| {
            let local = model.local_posterior(natural, im);
            (0..j_dim)
                .filter(|&j| {
                    let psi = natural.mu_c[j]
                        + (0..k_dim)
                            .map(|k| natural.mu_w[j * k_dim + k] * local.p[k])
                            .sum::<f64>();
                    u8::from(sigmoid(psi) > 0.5) == im.pixels[j]
                })
                .count()
        })
        .sum();
    correct as f64 / (images.len() * j_dim).max(1) as f64
}

/// The trivial baseline: predict each pixel as 1 iff its mean over `train` exceeds 1/2; the
/// fraction of `test` pixels predicted correctly.
pub fn baseline_pixel_accuracy(train: &[BinaryImage], test: &[BinaryImage]) -> f64 {
    let Some(first) = train.first() else {
        return f64::NAN;
    };
    let j_dim = first.pixels.len();
    let mut counts = vec![0usize; j_dim];
    for im in train {
        for (c, &v) in counts.iter_mut().zip(&im.pixels) {
            *c += usize::from(v);
        }
    }
    let predict: Vec<u8> = counts
        .iter()
        .map(|&c| u8::from(2 * c > train.len()))
        .collect();
    let correct: usize = test
        .iter()
        .map(|im| {
            im.pixels
                .iter()
                .zip(&predict)
                .filter(|(a, b)| a == b)
                .count()
        })
        .sum();
    correct as f64 / (test.len() * j_dim).max(1) as f64
}

/// Average held-out variational lower bound per image: for each image, the E-step's `q(z_n)`
/// and the Pólya-Gamma / Jaakkola-Jordan bound on `E_q(theta)[log p(y_n, z_n | theta)] + H(q(z_n))`
/// with the full posterior covariances of `W` (000 Eq. 50-51 at the optimal `q(xi)`), a lower
/// bound on `E_q(theta)[log p(y_n | theta)]`. Non-private evaluation on held-out data.
pub fn heldout_lower_bound(model: &Sbn, natural: &SbnNatural, images: &[BinaryImage]) -> f64 {
    let total: f64 = images
        .par_iter()
        .map(|im| {
            model
                .local_posterior(natural, im)
                .lower_bound(natural, &im.pixels)
        })
        .sum();
    total / images.len().max(1) as f64
}
