//! Synthetic data of 002 Sec. 6.1: `J` means `mu_j ~ N(0, I)`, labels uniform, points
//! `x_n ~ N(mu_{h_n}, s^2 I)`.

use rand::Rng;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

/// A generated data set with its true means and labels.
#[derive(Clone, Debug, PartialEq)]
pub struct MogData {
    /// The points.
    pub points: Vec<Vec<f64>>,
    /// The true means.
    pub means: Vec<Vec<f64>>,
    /// The true labels.
    pub labels: Vec<usize>,
}

/// Draws `n` points from `j` components in `d` dimensions with component std `s`.
pub fn generate<R: Rng + ?Sized>(n: usize, j: usize, d: usize, s: f64, rng: &mut R) -> MogData {
    let means: Vec<Vec<f64>> = (0..j)
        .map(|_| (0..d).map(|_| StandardNormal.sample(rng)).collect())
        .collect();
    let mut points = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    for _ in 0..n {
        let h = rng.random_range(0..j);
        let x: Vec<f64> = means[h]
            .iter()
            .map(|m| {
                let z: f64 = StandardNormal.sample(rng);
                m + s * z
            })
            .collect();
        points.push(x);
        labels.push(h);
    }
    MogData {
        points,
        means,
        labels,
    }
}
