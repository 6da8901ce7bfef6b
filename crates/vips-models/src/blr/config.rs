//! Validated settings of the BLR model.

use serde::{Deserialize, Serialize};

use super::BlrError;

/// The prior on the weights' precision `alpha` in `p(m | alpha) = N(0, alpha^-1 I)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Hyperprior {
    /// `alpha ~ Gamma(shape, rate)`, updated each M-step by 000 Eq. 39-40:
    /// `a_N = a0 + d/2`, `b_N = b0 + (mu^T mu + tr Sigma)/2`, feeding back `<alpha> = a_N / b_N`.
    Gamma {
        /// `a0 > 0`.
        shape: f64,
        /// `b0 > 0`.
        rate: f64,
    },
    /// A fixed prior precision (no hyperprior).
    Fixed {
        /// `alpha > 0`.
        alpha: f64,
    },
}

/// Checked settings of [`crate::blr::Blr`]; build with [`BlrConfig::builder`].
///
/// # Example
/// ```
/// use vips_models::blr::{BlrConfig, Hyperprior};
/// let cfg = BlrConfig::builder(30)
///     .hyperprior(Hyperprior::Gamma { shape: 1.0, rate: 1.0 })
///     .build()?;
/// assert_eq!(cfg.dim(), 30);
/// assert!(BlrConfig::builder(0).build().is_err());
/// assert!(BlrConfig::builder(3).eigenvalue_floor(0.0).build().is_err());
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlrConfig {
    dim: usize,
    hyperprior: Hyperprior,
    eigenvalue_floor: f64,
    /// `k` of the noise ridge (0: none; absent in files written before it existed).
    #[serde(default)]
    noise_ridge: f64,
}

/// Unchecked BLR settings; [`BlrConfigBuilder::build`] validates them.
#[derive(Clone, Debug)]
pub struct BlrConfigBuilder {
    cfg: BlrConfig,
}

impl BlrConfig {
    /// Starts a builder for `dim` features with the defaults: `alpha ~ Gamma(1, 1)` (prior mean
    /// 1: unit prior variance on each weight; with `d/2` added to the shape after one update the
    /// data dominate) and an eigenvalue floor of `1e-9` on the released normalised `s2`.
    pub fn builder(dim: usize) -> BlrConfigBuilder {
        BlrConfigBuilder {
            cfg: Self {
                dim,
                hyperprior: Hyperprior::Gamma {
                    shape: 1.0,
                    rate: 1.0,
                },
                eigenvalue_floor: 1e-9,
                noise_ridge: 0.0,
            },
        }
    }

    /// Number of features `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The prior on `alpha`.
    pub fn prior(&self) -> Hyperprior {
        self.hyperprior
    }

    /// The multiplier `k` of the noise ridge (see [`BlrConfigBuilder::noise_ridge`]; `0` = none).
    pub fn noise_ridge(&self) -> f64 {
        self.noise_ridge
    }

    /// The eigenvalue floor of the `s2` projection.
    pub fn floor(&self) -> f64 {
        self.eigenvalue_floor
    }
}

impl BlrConfigBuilder {
    /// The prior on `alpha` (default `Gamma(1, 1)`).
    pub fn hyperprior(mut self, h: Hyperprior) -> Self {
        self.cfg.hyperprior = h;
        self
    }

    /// A ridge `k x 2 sqrt(d) x (noise std of an entry of N s2~)` added to the diagonal of the
    /// likelihood precision of every **private** release (default `k = 0`: none, the papers'
    /// M-step). `2 sqrt(d) s` is the spectral norm a symmetric Gaussian noise matrix with entry
    /// std `s` reaches, so the ridge is a public multiple of the noise level.
    ///
    /// Why: with several private releases, noise in `s2` leaves directions whose released
    /// precision is far below the truth; the mean grows in them, the next E-step's `<xi_n>`
    /// shrink, `s2`'s signal weakens against the same noise, and the fit collapses (on
    /// breast_cancer at eps 4, noise seed 1: AUC 0.995 after one release, 0.52 after five and
    /// 0.50 after ten). `k = 0.1` keeps AUC at 0.99-0.997 over ten releases at the price of some
    /// shrinkage (accuracy 0.83-0.90 against 0.947 for one unridged release); docs/vips-models.md
    /// has the measured table. Non-private runs ignore it (their noise std is 0).
    ///
    /// # Privacy
    /// Post-processing of the release and of its public noise scale: no privacy cost.
    pub fn noise_ridge(mut self, k: f64) -> Self {
        self.cfg.noise_ridge = k;
        self
    }

    /// The floor `lambda_min >= floor` the released (normalised) `s2` is projected onto
    /// (default `1e-9`).
    pub fn eigenvalue_floor(mut self, floor: f64) -> Self {
        self.cfg.eigenvalue_floor = floor;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`BlrError::Empty`] for `dim == 0`; [`BlrError::Limit`] if the `d x d` state would not
    /// fit in memory; [`BlrError::InvalidParameter`] for a hyperprior parameter that is not
    /// finite and `> 0`, a prior precision (`shape / rate`, or `alpha`) outside `[1e-12, 1e12]`,
    /// an eigenvalue floor that is not finite and `> 0`, or a noise ridge that is not finite
    /// and `>= 0`.
    pub fn build(self) -> Result<BlrConfig, BlrError> {
        let cfg = self.cfg;
        if cfg.dim == 0 {
            return Err(BlrError::Empty("a model needs at least one feature"));
        }
        check_dim_memory(cfg.dim, "the model dimension d")?;
        check_hyperprior(cfg.hyperprior)?;
        if !(cfg.noise_ridge >= 0.0 && cfg.noise_ridge.is_finite()) {
            return Err(BlrError::invalid(
                "noise ridge (--noise-ridge)",
                cfg.noise_ridge,
                "must be finite and >= 0",
            ));
        }
        if !(cfg.eigenvalue_floor > 0.0 && cfg.eigenvalue_floor.is_finite()) {
            return Err(BlrError::invalid(
                "eigenvalue floor",
                cfg.eigenvalue_floor,
                "must be finite and > 0",
            ));
        }
        Ok(cfg)
    }
}

/// Every parameter finite and `> 0`, and a usable prior precision.
fn check_hyperprior(h: Hyperprior) -> Result<(), BlrError> {
    let check = |name, v: f64| {
        if v > 0.0 && v.is_finite() {
            Ok(())
        } else {
            Err(BlrError::invalid(name, v, "must be finite and > 0"))
        }
    };
    // The prior precision (the Gamma's mean `shape / rate`, or `alpha`) must stay a usable
    // number: 1e300 / 1e-300 overflows and the initial covariance `I / alpha` would be 0.
    let usable = |name, v: f64| {
        if (MIN_PRIOR_PRECISION..=MAX_PRIOR_PRECISION).contains(&v) {
            Ok(())
        } else {
            Err(BlrError::invalid(
                name,
                v,
                "the prior precision must be in [1e-12, 1e12]",
            ))
        }
    };
    match h {
        Hyperprior::Gamma { shape, rate } => {
            check("hyperprior shape (--a0)", shape)?;
            check("hyperprior rate (--b0)", rate)?;
            usable("prior precision mean a0 / b0", shape / rate)?;
        }
        Hyperprior::Fixed { alpha } => {
            check("prior precision", alpha)?;
            usable("prior precision", alpha)?;
        }
    }
    Ok(())
}

/// Smallest accepted prior precision (mean of the hyperprior).
const MIN_PRIOR_PRECISION: f64 = 1e-12;
/// Largest accepted prior precision (mean of the hyperprior).
const MAX_PRIOR_PRECISION: f64 = 1e12;

/// Bytes of the BLR state per `d^2`: the blended and target `h`/`P`, `q(m)`'s covariance and
/// precision, the Cholesky and eigendecomposition workspaces, and the wall's packed sums per
/// thread (an estimate, on the generous side).
const BYTES_PER_DIM_SQUARED: f64 = 8.0 * 10.0;

/// Refuses a dimension whose `d x d` state would not fit in memory, naming `what` implied it.
pub(crate) fn check_dim_memory(dim: usize, what: &str) -> Result<(), BlrError> {
    let d = dim as f64;
    crate::limits::check_memory(
        what,
        format!(
            "d x d = {} entries (d = {dim})",
            crate::limits::count(d * d)
        ),
        d * d * BYTES_PER_DIM_SQUARED,
    )?;
    Ok(())
}
