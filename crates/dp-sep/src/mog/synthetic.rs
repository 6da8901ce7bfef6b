//! Synthetic data of 002 Sec. 6.1: `J` means `mu_j ~ N(0, I)`, labels uniform, points
//! `x_n ~ N(mu_{h_n}, s^2 I)`.

use rand::Rng;
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};

use crate::error::SepError;

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

/// Draws `n` points from `j` components in `d` dimensions with component std `s`. With `j == 0`
/// there is nothing to draw from: no points (use [`try_generate`] for checked input).
pub fn generate<R: Rng + ?Sized>(n: usize, j: usize, d: usize, s: f64, rng: &mut R) -> MogData {
    if j == 0 {
        return MogData {
            points: Vec::new(),
            means: Vec::new(),
            labels: Vec::new(),
        };
    }
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

/// [`generate`] with its input checked first: sizes against [`crate::limits::MAX_DATA_BYTES`]
/// before anything is allocated, and no empty dimension.
///
/// # Errors
/// [`SepError::InvalidParameter`] for `n`, `j` or `d` equal to 0 or `s` not finite and
/// positive; [`SepError::TooLarge`] for `n x d` (or `j x d`) values above the limit.
///
/// # Example
/// ```
/// use rand::SeedableRng;
/// let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(0);
/// let data = dp_sep::mog::try_generate(10, 2, 3, 0.5, &mut rng)?;
/// assert_eq!(data.points.len(), 10);
/// assert!(dp_sep::mog::try_generate(0, 2, 3, 0.5, &mut rng).is_err());
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn try_generate<R: Rng + ?Sized>(
    n: usize,
    j: usize,
    d: usize,
    s: f64,
    rng: &mut R,
) -> Result<MogData, SepError> {
    for (name, v) in [("n", n), ("components", j), ("dimension", d)] {
        if v == 0 {
            return Err(SepError::InvalidParameter {
                name,
                value: 0.0,
                reason: "must be >= 1",
            });
        }
    }
    crate::error::check_positive("s", s)?;
    let values = (n as u128 + j as u128).saturating_mul(d as u128 + 1);
    crate::limits::check_bytes(
        &format!("{n} points in dimension {d}"),
        "the generated data",
        crate::limits::f64_bytes(values),
        crate::limits::MAX_DATA_BYTES,
    )?;
    Ok(generate(n, j, d, s, rng))
}
