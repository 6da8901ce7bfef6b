//! Mixture of Gaussians with known isotropic variance and equal weights; the approximate
//! posterior over the `J` means is a product of Gaussians, full or diagonal (002 Sec. 6.1;
//! Li et al. 2015, Sec. 5.1).
//!
//! Model: `mu_j ~ N(m0, I)`, `p(x | mu) = sum_j (1/J) N(x; mu_j, s^2 I)`.
//! Natural-parameter layout per component `j` (blocks of `d + d^2` for the full family, `2d` for
//! the diagonal one): `h_j = Lambda_j m_j`, then `-Lambda_j / 2` (row-major `d x d`, or its
//! diagonal).
//!
//! Tilted moments for a record `x` with cavity `N(m_j, V_j)`: with
//! `w_j ∝ N(x; m_j, V_j + s^2 I)` normalised to `r_j`, and the one-point posterior
//! `V'_j = (V_j^-1 + I/s^2)^-1`, `m'_j = V'_j (V_j^-1 m_j + x / s^2)`, the tilted marginal of `mu_j`
//! is `r_j N(m'_j, V'_j) + (1 - r_j) N(m_j, V_j)`; its mean and covariance are matched.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::error::{SepError, check_positive};
use crate::model::SepModel;

/// Full or diagonal covariance for each component's Gaussian.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Full covariance (`d + d^2` natural parameters per component).
    Full,
    /// Diagonal covariance (`2d` natural parameters per component).
    Diagonal,
}

/// A Gaussian in moment form.
#[derive(Clone, Debug, PartialEq)]
pub struct Moments {
    /// Mean.
    pub mean: DVector<f64>,
    /// Covariance.
    pub cov: DMatrix<f64>,
}

/// The mixture-of-Gaussians model.
///
/// # Example
/// ```
/// use dp_sep::mog::{Family, MogModel};
/// let model = MogModel::new(4, 2, 0.5, Family::Full)?;
/// assert_eq!(dp_sep::SepModel::dim(&model), 4 * (2 + 4));
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MogModel {
    j: usize,
    d: usize,
    noise_var: f64,
    family: Family,
    prior_mean: Vec<f64>,
    min_precision: f64,
}

impl MogModel {
    /// `j` components in `d` dimensions, component std `s`, prior `N(0, I)` on each mean.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for `j == 0`, `d == 0` or `s` not finite and positive;
    /// [`SepError::TooLarge`] if the parameters would exceed [`crate::limits::MAX_MODEL_BYTES`].
    pub fn new(j: usize, d: usize, s: f64, family: Family) -> Result<Self, SepError> {
        if j == 0 || d == 0 {
            return Err(SepError::InvalidParameter {
                name: "components / dimension",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        check_positive("s", s)?;
        // Natural parameters j (d + d^2) (full) or 2 j d (diagonal), kept in several copies by
        // the engine, plus d x d work matrices per component: refuse before allocating.
        let per = match family {
            Family::Full => (d as u128).saturating_mul(d as u128 + 1),
            Family::Diagonal => 2 * d as u128,
        };
        crate::limits::check_bytes(
            &format!("{j} components in dimension {d}"),
            "the natural parameters",
            crate::limits::f64_bytes((j as u128).saturating_mul(per))
                .saturating_mul(u128::from(crate::limits::PARAMETER_COPIES)),
            crate::limits::MAX_MODEL_BYTES,
        )?;
        Ok(Self {
            j,
            d,
            noise_var: s * s,
            family,
            prior_mean: vec![0.0; d],
            min_precision: 1.0,
        })
    }

    /// Number of components.
    pub fn components(&self) -> usize {
        self.j
    }

    /// Dimension.
    pub fn dimension(&self) -> usize {
        self.d
    }

    /// Component variance `s^2`.
    pub fn noise_var(&self) -> f64 {
        self.noise_var
    }

    fn block(&self) -> usize {
        match self.family {
            Family::Full => self.d + self.d * self.d,
            Family::Diagonal => 2 * self.d,
        }
    }

    /// Natural parameters of a product of Gaussians given in moment form.
    ///
    /// # Errors
    /// [`SepError::InvalidNaturalParameters`] if a covariance is not positive definite;
    /// [`SepError::DimensionMismatch`] for wrong sizes.
    pub fn natural_from_moments(&self, comps: &[Moments]) -> Result<Vec<f64>, SepError> {
        if comps.len() != self.j {
            return Err(SepError::DimensionMismatch {
                context: "MogModel::natural_from_moments components",
                expected: self.j,
                got: comps.len(),
            });
        }
        let mut out = vec![0.0; self.dim()];
        for (k, c) in comps.iter().enumerate() {
            if c.mean.len() != self.d || c.cov.nrows() != self.d || c.cov.ncols() != self.d {
                return Err(SepError::DimensionMismatch {
                    context: "MogModel::natural_from_moments dimension",
                    expected: self.d,
                    got: c.mean.len(),
                });
            }
            let cov = match self.family {
                Family::Full => c.cov.clone(),
                Family::Diagonal => DMatrix::from_diagonal(&c.cov.diagonal()),
            };
            let prec = cov
                .cholesky()
                .ok_or(SepError::InvalidNaturalParameters("covariance not PD"))?
                .inverse();
            self.write_block(
                &mut out[k * self.block()..(k + 1) * self.block()],
                &prec,
                &c.mean,
            );
        }
        Ok(out)
    }

    fn write_block(&self, out: &mut [f64], prec: &DMatrix<f64>, mean: &DVector<f64>) {
        let d = self.d;
        let h = prec * mean;
        out[..d].copy_from_slice(h.as_slice());
        match self.family {
            Family::Full => {
                for r in 0..d {
                    for c in 0..d {
                        out[d + r * d + c] = -0.5 * 0.5 * (prec[(r, c)] + prec[(c, r)]);
                    }
                }
            }
            Family::Diagonal => {
                for r in 0..d {
                    out[d + r] = -0.5 * prec[(r, r)];
                }
            }
        }
    }

    fn precision_of(&self, block: &[f64]) -> DMatrix<f64> {
        let d = self.d;
        match self.family {
            Family::Full => {
                DMatrix::from_fn(d, d, |r, c| -(block[d + r * d + c] + block[d + c * d + r]))
            }
            Family::Diagonal => {
                DMatrix::from_fn(d, d, |r, c| if r == c { -2.0 * block[d + r] } else { 0.0 })
            }
        }
    }

    /// Moments of every component of `theta`.
    ///
    /// # Errors
    /// [`SepError::InvalidNaturalParameters`] if a precision is not positive definite.
    pub fn moments(&self, theta: &[f64]) -> Result<Vec<Moments>, SepError> {
        if theta.len() != self.dim() {
            return Err(SepError::DimensionMismatch {
                context: "MogModel::moments",
                expected: self.dim(),
                got: theta.len(),
            });
        }
        (0..self.j)
            .map(|k| {
                let b = &theta[k * self.block()..(k + 1) * self.block()];
                let prec = self.precision_of(b);
                let chol = prec.cholesky().ok_or(SepError::InvalidNaturalParameters(
                    "a component's precision is not PD",
                ))?;
                let h = DVector::from_column_slice(&b[..self.d]);
                let mean = chol.solve(&h);
                Ok(Moments {
                    mean,
                    cov: chol.inverse(),
                })
            })
            .collect()
    }

    /// The prior `N(m0, I)` on every mean, in natural parameters.
    pub fn prior(&self) -> Vec<f64> {
        let comps: Vec<Moments> = (0..self.j)
            .map(|_| Moments {
                mean: DVector::from_column_slice(&self.prior_mean),
                cov: DMatrix::identity(self.d, self.d),
            })
            .collect();
        self.natural_from_moments(&comps)
            .expect("the identity is positive definite")
    }
}

fn log_gauss_isotropic_plus(x: &DVector<f64>, m: &DVector<f64>, cov: &DMatrix<f64>) -> Option<f64> {
    let chol = cov.clone().cholesky()?;
    let r = x - m;
    let z = chol.solve(&r);
    let logdet: f64 = 2.0 * chol.l().diagonal().iter().map(|v| v.ln()).sum::<f64>();
    let d = x.len() as f64;
    Some(-0.5 * (d * (2.0 * std::f64::consts::PI).ln() + logdet + r.dot(&z)))
}

impl SepModel for MogModel {
    type Record = Vec<f64>;

    fn dim(&self) -> usize {
        self.j * self.block()
    }

    fn tilted(&self, cavity: &[f64], record: &Vec<f64>, out: &mut [f64]) -> bool {
        if record.len() != self.d || record.iter().any(|v| !v.is_finite()) {
            return false;
        }
        let Ok(comps) = self.moments(cavity) else {
            return false;
        };
        let x = DVector::from_column_slice(record);
        let s2 = self.noise_var;
        let eye = DMatrix::<f64>::identity(self.d, self.d);
        let mut logw = Vec::with_capacity(self.j);
        for c in &comps {
            match log_gauss_isotropic_plus(&x, &c.mean, &(&c.cov + &eye * s2)) {
                Some(l) => logw.push(l),
                None => return false,
            }
        }
        let mx = logw.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = logw.iter().map(|l| (l - mx).exp()).sum();
        for (k, c) in comps.iter().enumerate() {
            let r = (logw[k] - mx).exp() / z;
            let Some(prec_cav) = c.cov.clone().cholesky().map(|ch| ch.inverse()) else {
                return false;
            };
            let prec_post = &prec_cav + &eye / s2;
            let Some(chol_post) = prec_post.cholesky() else {
                return false;
            };
            let v_post = chol_post.inverse();
            let m_post = &v_post * (&prec_cav * &c.mean + &x / s2);
            let mean = &m_post * r + &c.mean * (1.0 - r);
            let second = (&v_post + &m_post * m_post.transpose()) * r
                + (&c.cov + &c.mean * c.mean.transpose()) * (1.0 - r);
            let mut cov = second - &mean * mean.transpose();
            cov = (&cov + cov.transpose()) * 0.5;
            if self.family == Family::Diagonal {
                cov = DMatrix::from_diagonal(&cov.diagonal());
            }
            let Some(prec) = cov.cholesky().map(|ch| ch.inverse()) else {
                return false;
            };
            self.write_block(
                &mut out[k * self.block()..(k + 1) * self.block()],
                &prec,
                &mean,
            );
        }
        true
    }

    fn is_valid(&self, theta: &[f64]) -> bool {
        theta.len() == self.dim()
            && theta.iter().all(|v| v.is_finite())
            && (0..self.j).all(|k| {
                self.precision_of(&theta[k * self.block()..(k + 1) * self.block()])
                    .cholesky()
                    .is_some()
            })
    }

    fn repair(&self, theta: &mut [f64]) {
        for v in theta.iter_mut() {
            if !v.is_finite() {
                *v = 0.0;
            }
        }
        let bl = self.block();
        for k in 0..self.j {
            let b = &mut theta[k * bl..(k + 1) * bl];
            let prec = self.precision_of(b);
            let eig = prec.symmetric_eigen();
            let floored = eig.eigenvalues.map(|l| l.max(self.min_precision));
            let fixed =
                &eig.eigenvectors * DMatrix::from_diagonal(&floored) * eig.eigenvectors.transpose();
            // Keep the mean direction h as released; only the precision is projected.
            let h = DVector::from_column_slice(&b[..self.d]);
            let mean = fixed.clone().cholesky().map(|c| c.solve(&h)).unwrap_or(h);
            self.write_block(b, &fixed, &mean);
        }
    }
}
