//! Published feature ranges of the UCI Breast Cancer Wisconsin (Diagnostic) data (WDBC).
//!
//! The minimum and maximum of each of the 30 features as printed in the data set's published
//! description ("Summary Statistics" of scikit-learn's `load_breast_cancer().DESCR`, from the UCI
//! documentation), in the column order of `breast_cancer.csv`.
//!
//! # Privacy
//! These ranges were computed by the data set's curators over all 569 rows and published with it.
//! The examples and tests treat them as public domain knowledge fixed before any fit (they are not
//! fitted by this crate to the training rows). For a private deployment take the ranges from
//! domain knowledge instead (physiological limits, instrument ranges).

/// `(column name, published min, published max)` for the 30 WDBC features.
pub const WDBC_PUBLISHED_RANGES: [(&str, f64, f64); 30] = [
    ("mean_radius", 6.981, 28.11),
    ("mean_texture", 9.71, 39.28),
    ("mean_perimeter", 43.79, 188.5),
    ("mean_area", 143.5, 2501.0),
    ("mean_smoothness", 0.053, 0.163),
    ("mean_compactness", 0.019, 0.345),
    ("mean_concavity", 0.0, 0.427),
    ("mean_concave_points", 0.0, 0.201),
    ("mean_symmetry", 0.106, 0.304),
    ("mean_fractal_dimension", 0.05, 0.097),
    ("radius_error", 0.112, 2.873),
    ("texture_error", 0.36, 4.885),
    ("perimeter_error", 0.757, 21.98),
    ("area_error", 6.802, 542.2),
    ("smoothness_error", 0.002, 0.031),
    ("compactness_error", 0.002, 0.135),
    ("concavity_error", 0.0, 0.396),
    ("concave_points_error", 0.0, 0.053),
    ("symmetry_error", 0.008, 0.079),
    ("fractal_dimension_error", 0.001, 0.03),
    ("worst_radius", 7.93, 36.04),
    ("worst_texture", 12.02, 49.54),
    ("worst_perimeter", 50.41, 251.2),
    ("worst_area", 185.2, 4254.0),
    ("worst_smoothness", 0.071, 0.223),
    ("worst_compactness", 0.027, 1.058),
    ("worst_concavity", 0.0, 1.252),
    ("worst_concave_points", 0.0, 0.291),
    ("worst_symmetry", 0.156, 0.664),
    ("worst_fractal_dimension", 0.055, 0.208),
];

/// The public WDBC map: each feature onto `[-1, 1]` by its published range, an intercept, and
/// division by `sqrt(31)` (rows inside the published box are not clipped).
///
/// # Example
/// ```
/// let map = vips_models::blr::wdbc_feature_map();
/// assert_eq!(map.output_dim(), 31);
/// ```
pub fn wdbc_feature_map() -> super::FeatureMap {
    let lower: Vec<f64> = WDBC_PUBLISHED_RANGES.iter().map(|r| r.1).collect();
    let upper: Vec<f64> = WDBC_PUBLISHED_RANGES.iter().map(|r| r.2).collect();
    super::FeatureMap::from_ranges(&lower, &upper, true).expect("the published ranges are valid")
}

/// Whether a CSV header (feature columns, label removed) is the WDBC header.
pub fn is_wdbc_header(feature_names: &[String]) -> bool {
    feature_names.len() == 30
        && feature_names
            .iter()
            .zip(WDBC_PUBLISHED_RANGES.iter())
            .all(|(a, b)| a == b.0)
}
