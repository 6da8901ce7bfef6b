//! Fit and evaluate on rows already mapped into the declared box: the one home of what the
//! `linreg` example, the `dp-bayes fit linreg` command and `cargo xtask bench` do between
//! scaling the rows with their declared public ranges and reporting the fit.

use super::{
    Linreg, LinregConfig, LinregError, LinregGlobal, Metrics, RowMap, TargetMap, evaluate, fit,
    release_radius,
};
use crate::engine::{Fit, SviConfig};

/// The model's settings; `None` takes the default of [`RowMap::new`] / [`LinregConfig`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinregOptions {
    /// Public radius rows `(z, 1)` are divided by. `None`: released privately from the rows
    /// with a small share of the budget ([`super::release_radius`]).
    pub radius: Option<f64>,
    /// Prior precision of the weights relative to the noise (ridge), in mapped units.
    pub prior_precision: Option<f64>,
    /// Shape of the Gamma prior on the noise precision.
    pub prior_noise_shape: Option<f64>,
    /// Rate of the Gamma prior on the noise precision.
    pub prior_noise_rate: Option<f64>,
    /// kappa of the noise-scaled eigenvalue floor `kappa * s * sqrt(dim)` (private fits).
    pub floor_scale: Option<f64>,
}

impl LinregOptions {
    /// The model these options give for `d` features.
    ///
    /// # Errors
    /// [`LinregError::InvalidParameter`] for a prior or floor out of its domain.
    pub fn model(&self, d: usize) -> Result<Linreg, LinregError> {
        let mut config = LinregConfig::builder(d + 1);
        if let Some(l) = self.prior_precision {
            config = config.prior_precision(l);
        }
        let (a0, b0) = LinregConfig::builder(1).build()?.noise_prior();
        config = config.noise_prior(
            self.prior_noise_shape.unwrap_or(a0),
            self.prior_noise_rate.unwrap_or(b0),
        );
        if let Some(k) = self.floor_scale {
            config = config.floor_scale(k);
        }
        Ok(Linreg::new(config.build()?))
    }
}

/// A fit by [`fit_mapped`].
#[derive(Debug)]
pub struct MappedFit {
    /// The model (its configuration).
    pub model: Linreg,
    /// The row map (its radius declared, or released privately).
    pub rows: RowMap,
    /// Where the radius came from: `None` when declared; the noise multiplier of its release
    /// (`Some(0.0)` for a non-private fit) when released from the rows.
    pub radius_noise_multiplier: Option<f64>,
    /// The engine's fit: the publishable result and the data owner's diagnostics.
    pub fit: Fit<LinregGlobal>,
    /// Held-out metrics in original units (`None` when there are no test rows).
    pub metrics: Option<Metrics>,
    /// Training rows clamped into the box or rescaled into the unit ball (a diagnostic, not
    /// noised).
    pub rows_clamped_or_rescaled: u64,
    /// Realised number of training rows (a diagnostic, not noised).
    pub n_train: usize,
}

/// Maps the training rows `(z, t)` (features in the declared box's `[-1, 1]` units, target
/// already mapped by `target`) to records, fits with `svi` and evaluates on the test rows
/// (`test` in the same `z` units, `test_targets` in original units).
///
/// # Privacy
/// As [`fit`]: the posterior (and the metrics computed from it with public maps on held-out
/// rows) is `(epsilon, delta)`-DP under add/remove-one neighbouring when `svi` is private; the
/// row maps are public (a declared radius) or post-processing of the radius release
/// ([`release_radius`], charged to the same budget and recorded first in the fit's ledger), and
/// each record depends on its own row only.
/// [`MappedFit::rows_clamped_or_rescaled`], [`MappedFit::n_train`] and the fit's diagnostics
/// are the data owner's.
///
/// # Errors
/// [`LinregError`] for a row of the wrong width or a non-finite value, bad options, or an
/// engine error.
///
/// # Example
/// ```
/// use vips_models::engine::Privacy;
/// use vips_models::linreg::{LinregOptions, TargetMap, batch_config, fit_mapped};
/// let train: Vec<(Vec<f64>, f64)> = (0..50).map(|i| {
///     let z = i as f64 / 25.0 - 1.0;
///     (vec![z], 0.5 * z)
/// }).collect();
/// let test = [vec![0.5]];
/// let target = TargetMap::from_range(-1.0, 1.0)?;
/// let svi = batch_config(50, Privacy::NonPrivate, None)?;
/// let out = fit_mapped(
///     1,
///     train.iter().map(|(z, t)| (z.as_slice(), *t)),
///     test.iter().map(Vec::as_slice),
///     &[0.25],
///     target,
///     &LinregOptions::default(),
///     &svi,
/// )?;
/// assert!(out.metrics.unwrap().rmse < 0.1);
/// # Ok::<(), vips_models::linreg::LinregError>(())
/// ```
pub fn fit_mapped<'a>(
    d: usize,
    train: impl IntoIterator<Item = (&'a [f64], f64)>,
    test: impl IntoIterator<Item = &'a [f64]>,
    test_targets: &[f64],
    target: TargetMap,
    options: &LinregOptions,
    svi: &SviConfig,
) -> Result<MappedFit, LinregError> {
    let train: Vec<(&[f64], f64)> = train.into_iter().collect();
    let (rows, radius_noise_multiplier, svi) = match options.radius {
        Some(r) => (RowMap::new(d, Some(r))?, None, svi.clone()),
        None => {
            let released = release_radius(d, train.iter().map(|(z, _)| *z), svi)?;
            (
                RowMap::new(d, Some(released.radius))?,
                Some(released.noise_multiplier.unwrap_or(0.0)),
                released.fit_config,
            )
        }
    };
    let mut rescaled = 0u64;
    let mut records = Vec::new();
    for (z, t) in train {
        let (r, clipped) = rows.record(z, t)?;
        rescaled += u64::from(clipped);
        records.push(r);
    }
    let test_x = test
        .into_iter()
        .map(|z| rows.features(z))
        .collect::<Result<Vec<_>, _>>()?;
    let n_train = records.len();
    let model = options.model(d)?;
    let fitted = fit(&model, records, &svi)?;
    let metrics = evaluate(
        fitted.result.global.posterior(),
        &test_x,
        test_targets,
        target,
    );
    Ok(MappedFit {
        model,
        rows,
        radius_noise_multiplier,
        fit: fitted,
        metrics,
        rows_clamped_or_rescaled: rescaled,
        n_train,
    })
}
