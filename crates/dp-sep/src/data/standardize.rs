//! Standardisation of features and target with statistics of the training split.

use super::Dataset;

/// Per-feature and target mean / standard deviation, fitted on a training split and applied to
/// any split (PBP protocol: Hernández-Lobato & Adams 2015, Sec. 5). A constant column gets
/// standard deviation 1 (as PBP does), so it is centred but never divided by zero.
///
/// # Example
/// ```
/// use dp_sep::data::{Dataset, Standardizer};
/// let train = Dataset::new(vec![1.0, 3.0], vec![10.0, 20.0], 1)?;
/// let s = Standardizer::fit(&train);
/// let z = s.transform(&train);
/// assert!((z.row(0)[0] + 1.0).abs() < 1e-12);
/// assert!((s.target_to_original(z.target(1)) - 20.0).abs() < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Standardizer {
    mean_x: Vec<f64>,
    std_x: Vec<f64>,
    mean_y: f64,
    std_y: f64,
}

fn mean_std(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count() as f64;
    let mean = values.clone().sum::<f64>() / n;
    // Population standard deviation, as numpy's default (ddof = 0) used by PBP.
    let var = values.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let std = var.sqrt();
    (
        mean,
        if std > 0.0 && std.is_finite() {
            std
        } else {
            1.0
        },
    )
}

impl Standardizer {
    /// Fits on `train`.
    pub fn fit(train: &Dataset) -> Self {
        let d = train.dim();
        let (mut mean_x, mut std_x) = (Vec::with_capacity(d), Vec::with_capacity(d));
        for j in 0..d {
            let (m, s) = mean_std((0..train.len()).map(|i| train.row(i)[j]));
            mean_x.push(m);
            std_x.push(s);
        }
        let (mean_y, std_y) = mean_std(train.targets().iter().copied());
        Self {
            mean_x,
            std_x,
            mean_y,
            std_y,
        }
    }

    /// Standardises features and target of `data`.
    pub fn transform(&self, data: &Dataset) -> Dataset {
        let d = data.dim();
        let mut x = Vec::with_capacity(data.len() * d);
        for i in 0..data.len() {
            for (j, v) in data.row(i).iter().enumerate() {
                x.push((v - self.mean_x[j]) / self.std_x[j]);
            }
        }
        let y = data
            .targets()
            .iter()
            .map(|v| (v - self.mean_y) / self.std_y)
            .collect();
        Dataset { x, y, d }
    }

    /// Maps a standardised target back to original units.
    pub fn target_to_original(&self, z: f64) -> f64 {
        z * self.std_y + self.mean_y
    }

    /// Standard deviation of the target on the training split (the unit change of the target).
    pub fn target_std(&self) -> f64 {
        self.std_y
    }
}
