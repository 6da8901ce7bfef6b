//! The affine feature / target transform of PBP: fitted on a training split (non-private runs
//! only) or built from declared public ranges (private runs), with clipping into the box.

use serde::{Deserialize, Serialize};

use super::Dataset;
use super::ranges::PublicRanges;

/// The declared box: per-feature `(lower, upper)` and the target's.
type DeclaredBox = (Vec<(f64, f64)>, (f64, f64));

/// Per-feature and target centre / scale, applied as `(v - centre) / scale` to any split.
///
/// Two constructors:
/// - [`Standardizer::fit`]: the training split's mean and (population) standard deviation, the
///   PBP protocol (Hernández-Lobato & Adams 2015, Sec. 5). A constant column gets standard
///   deviation 1, so it is centred but never divided by zero. **Not for private runs**: the
///   statistics depend on every training record.
/// - [`Standardizer::from_public_ranges`]: declared public intervals; every value is first
///   clipped into its interval (counted by [`Standardizer::transform_counted`]).
///
/// # Privacy
/// With [`Standardizer::from_public_ranges`] the transform of a record depends on that record
/// and on public numbers only, so replacing one record changes one transformed record.
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
    /// `Some` for declared ranges: the box every value is clipped into first.
    bounds: Option<DeclaredBox>,
}

/// How many records [`Standardizer::transform_counted`] clipped into the declared box (a
/// diagnostic: data-dependent and not noised).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoxClipCounts {
    /// Records with at least one feature outside its declared range.
    pub records_with_clipped_features: u64,
    /// Records whose target was outside its declared range.
    pub records_with_clipped_target: u64,
}

fn mean_std(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count() as f64;
    // Divide before summing, and scale before squaring, so finite cells near f64::MAX (1e308)
    // neither overflow the mean nor the variance.
    let mean = values.clone().map(|v| v / n).sum::<f64>();
    let scale = values
        .clone()
        .map(|v| (v - mean).abs())
        .fold(0.0_f64, f64::max);
    // Population standard deviation, as numpy's default (ddof = 0) used by PBP.
    let std = if scale > 0.0 && scale.is_finite() {
        scale
            * (values
                .map(|v| ((v - mean) / scale).powi(2) / n)
                .sum::<f64>())
            .sqrt()
    } else {
        0.0
    };
    (
        if mean.is_finite() { mean } else { 0.0 },
        if std > 0.0 && std.is_finite() {
            std
        } else {
            1.0
        },
    )
}

impl Standardizer {
    /// Fits on `train` (non-private: see the type's documentation).
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
            bounds: None,
        }
    }

    /// The fixed transform of declared public ranges: clip into `[lower, upper]`, then
    /// `(v - centre) / scale` (by default onto `[-1, 1]`).
    ///
    /// # Example
    /// ```
    /// use dp_sep::data::{Dataset, PublicRange, PublicRanges, Standardizer};
    /// let ranges = PublicRanges::uniform(1, PublicRange::new(0.0, 10.0)?, PublicRange::new(0.0, 100.0)?);
    /// let s = Standardizer::from_public_ranges(&ranges);
    /// let (z, clipped) = s.transform_counted(&Dataset::new(vec![5.0, 1e9], vec![50.0, 1e3], 1)?);
    /// assert_eq!((z.row(0)[0], z.row(1)[0], z.target(1)), (0.0, 1.0, 1.0));
    /// assert_eq!(clipped.records_with_clipped_target, 1);
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn from_public_ranges(ranges: &PublicRanges) -> Self {
        let f = ranges.features();
        let t = ranges.target();
        Self {
            mean_x: f.iter().map(|r| r.centre()).collect(),
            std_x: f.iter().map(|r| r.scale()).collect(),
            mean_y: t.centre(),
            std_y: t.scale(),
            bounds: Some((
                f.iter().map(|r| (r.lower, r.upper)).collect(),
                (t.lower, t.upper),
            )),
        }
    }

    /// Whether this transform comes from declared public ranges.
    pub fn is_public(&self) -> bool {
        self.bounds.is_some()
    }

    /// Number of features the transform expects.
    pub fn dim(&self) -> usize {
        self.mean_x.len()
    }

    /// Standardises features and target of `data` (clipping into the declared box, if any).
    pub fn transform(&self, data: &Dataset) -> Dataset {
        self.transform_counted(data).0
    }

    /// As [`Standardizer::transform`], also counting the records clipped into the box.
    pub fn transform_counted(&self, data: &Dataset) -> (Dataset, BoxClipCounts) {
        let d = data.dim();
        let mut counts = BoxClipCounts::default();
        let mut x = Vec::with_capacity(data.len() * d);
        let mut y = Vec::with_capacity(data.len());
        for i in 0..data.len() {
            let mut clipped = false;
            for (j, &v) in data.row(i).iter().enumerate() {
                let v = match &self.bounds {
                    Some((b, _)) => {
                        let c = v.clamp(b[j].0, b[j].1);
                        clipped |= c != v;
                        c
                    }
                    None => v,
                };
                x.push((v - self.mean_x[j]) / self.std_x[j]);
            }
            counts.records_with_clipped_features += u64::from(clipped);
            let mut t = data.target(i);
            if let Some((_, (lo, hi))) = &self.bounds {
                let c = t.clamp(*lo, *hi);
                counts.records_with_clipped_target += u64::from(c != t);
                t = c;
            }
            y.push((t - self.mean_y) / self.std_y);
        }
        (Dataset { x, y, d }, counts)
    }

    /// Maps a standardised target back to original units.
    pub fn target_to_original(&self, z: f64) -> f64 {
        z * self.std_y + self.mean_y
    }

    /// A prediction in original units, clamped into the declared public target range when this
    /// transform comes from declared ranges (the target of every training record was clipped
    /// into it, so no fit can justify a prediction outside it); unchanged for a fitted
    /// (non-private) transform.
    ///
    /// # Privacy
    /// Post-processing with the public range only.
    ///
    /// # Example
    /// ```
    /// use dp_sep::data::{PublicRange, PublicRanges, Standardizer};
    /// let ranges = PublicRanges::uniform(1, PublicRange::new(0.0, 1.0)?, PublicRange::new(3.0, 8.0)?);
    /// let s = Standardizer::from_public_ranges(&ranges);
    /// assert_eq!((s.clamp_prediction(1e6), s.clamp_prediction(5.5)), (8.0, 5.5));
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn clamp_prediction(&self, y: f64) -> f64 {
        match &self.bounds {
            Some((_, (lo, hi))) => y.clamp(*lo, *hi),
            None => y,
        }
    }

    /// Scale of the target (the unit change of the target).
    pub fn target_std(&self) -> f64 {
        self.std_y
    }

    /// Per-feature centres of the map `(v - centre) / scale`: the declared centres, or the
    /// training means of a fitted (non-private) transform.
    ///
    /// # Example
    /// ```
    /// use dp_sep::data::{Dataset, Standardizer};
    /// let s = Standardizer::fit(&Dataset::new(vec![1.0, 3.0], vec![10.0, 20.0], 1)?);
    /// assert_eq!((s.feature_centres(), s.feature_scales()), (&[2.0][..], &[1.0][..]));
    /// assert_eq!((s.target_centre(), s.target_std(), s.target_bounds()), (15.0, 5.0, None));
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn feature_centres(&self) -> &[f64] {
        &self.mean_x
    }

    /// Per-feature scales of the map: the declared scales, or the training standard
    /// deviations of a fitted transform.
    pub fn feature_scales(&self) -> &[f64] {
        &self.std_x
    }

    /// Centre of the target's map: the declared centre, or the training mean.
    pub fn target_centre(&self) -> f64 {
        self.mean_y
    }

    /// The declared per-feature `(lower, upper)` values are clipped into, or `None` for a
    /// fitted (non-private) transform.
    pub fn feature_bounds(&self) -> Option<&[(f64, f64)]> {
        self.bounds.as_ref().map(|(f, _)| f.as_slice())
    }

    /// The declared target `(lower, upper)`, or `None` for a fitted (non-private) transform.
    pub fn target_bounds(&self) -> Option<(f64, f64)> {
        self.bounds.as_ref().map(|(_, t)| *t)
    }
}
