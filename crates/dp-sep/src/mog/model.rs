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

use expfam::{ExpFamError, ExponentialFamily, GaussianNatural, MvGaussian};

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

    /// Full or diagonal covariances.
    pub fn family(&self) -> Family {
        self.family
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

    /// Natural parameters of a product of Gaussians given in moment form (the conversion is
    /// `expfam`'s [`MvGaussian::natural`]; the diagonal family keeps only the diagonal of each
    /// covariance).
    ///
    /// # Errors
    /// [`SepError::InvalidNaturalParameters`] if a covariance is not symmetric positive definite
    /// or a value is not finite; [`SepError::DimensionMismatch`] for wrong sizes.
    pub fn natural_from_moments(&self, comps: &[Moments]) -> Result<Vec<f64>, SepError> {
        if comps.len() != self.j {
            return Err(SepError::DimensionMismatch {
                what: "MogModel::natural_from_moments components",
                expected: self.j,
                found: comps.len(),
            });
        }
        let mut out = vec![0.0; self.dim()];
        for (k, c) in comps.iter().enumerate() {
            if c.mean.len() != self.d || c.cov.nrows() != self.d || c.cov.ncols() != self.d {
                return Err(SepError::DimensionMismatch {
                    what: "MogModel::natural_from_moments dimension",
                    expected: self.d,
                    found: c.mean.len(),
                });
            }
            let natural = self.gaussian(c.mean.clone(), c.cov.clone())?.natural();
            self.write_block(&mut out[k * self.block()..(k + 1) * self.block()], &natural);
        }
        Ok(out)
    }

    /// `N(mean, cov)` of this model's family (the diagonal family drops the off-diagonal).
    fn gaussian(&self, mean: DVector<f64>, cov: DMatrix<f64>) -> Result<MvGaussian, SepError> {
        let cov = match self.family {
            Family::Full => cov,
            Family::Diagonal => DMatrix::from_diagonal(&cov.diagonal()),
        };
        MvGaussian::new(mean, cov).map_err(not_pd("covariance not symmetric positive definite"))
    }

    /// Writes `eta1` and `eta2` (row-major, or its diagonal) into one component's block.
    fn write_block(&self, out: &mut [f64], natural: &GaussianNatural) {
        let d = self.d;
        out[..d].copy_from_slice(natural.eta1().as_slice());
        let eta2 = natural.eta2();
        match self.family {
            Family::Full => {
                for r in 0..d {
                    for c in 0..d {
                        out[d + r * d + c] = eta2[(r, c)];
                    }
                }
            }
            Family::Diagonal => {
                for r in 0..d {
                    out[d + r] = eta2[(r, r)];
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

    /// One component's block as `expfam` natural parameters (`h`, precision symmetrised).
    fn natural_of(&self, block: &[f64]) -> Result<GaussianNatural, SepError> {
        GaussianNatural::from_precision(
            DVector::from_column_slice(&block[..self.d]),
            self.precision_of(block),
        )
        .map_err(not_pd("a component's natural parameters are not finite"))
    }

    /// Every component of `theta` as an `expfam` Gaussian ([`MvGaussian::from_natural`]).
    fn gaussians(&self, theta: &[f64]) -> Result<Vec<MvGaussian>, SepError> {
        if theta.len() != self.dim() {
            return Err(SepError::DimensionMismatch {
                what: "MogModel::moments",
                expected: self.dim(),
                found: theta.len(),
            });
        }
        (0..self.j)
            .map(|k| {
                let natural = self.natural_of(&theta[k * self.block()..(k + 1) * self.block()])?;
                MvGaussian::from_natural(&natural)
                    .map_err(not_pd("a component's precision is not PD"))
            })
            .collect()
    }

    /// Moments of every component of `theta`.
    ///
    /// # Errors
    /// [`SepError::DimensionMismatch`] for a wrong length; [`SepError::InvalidNaturalParameters`]
    /// if a precision is not positive definite or a value is not finite.
    pub fn moments(&self, theta: &[f64]) -> Result<Vec<Moments>, SepError> {
        Ok(self.gaussians(theta)?.iter().map(Moments::from).collect())
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

/// Maps an `expfam` refusal (not positive definite, not finite, not symmetric) to
/// [`SepError::InvalidNaturalParameters`] with a fixed reason (never a value).
fn not_pd(reason: &'static str) -> impl Fn(ExpFamError) -> SepError {
    move |_| SepError::InvalidNaturalParameters(reason)
}

impl From<&MvGaussian> for Moments {
    fn from(g: &MvGaussian) -> Self {
        Self {
            mean: g.mean().clone(),
            cov: g.cov().clone(),
        }
    }
}

impl Moments {
    /// This Gaussian as an `expfam` [`MvGaussian`] (which validates it).
    ///
    /// # Example
    /// ```
    /// use dp_sep::mog::Moments;
    /// use nalgebra::{DMatrix, DVector};
    /// let m = Moments { mean: DVector::zeros(2), cov: DMatrix::identity(2, 2) };
    /// assert!((m.to_gaussian()?.ln_det_cov()).abs() < 1e-15);
    /// let bad = Moments { mean: DVector::zeros(2), cov: -DMatrix::identity(2, 2) };
    /// assert!(bad.to_gaussian().is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    ///
    /// # Errors
    /// [`SepError::InvalidNaturalParameters`] if the covariance is not symmetric positive
    /// definite, a value is not finite, or the sizes disagree.
    pub fn to_gaussian(&self) -> Result<MvGaussian, SepError> {
        MvGaussian::new(self.mean.clone(), self.cov.clone()).map_err(not_pd(
            "a Gaussian's covariance is not symmetric positive definite",
        ))
    }
}

/// One component's whitening at the cavity, computed once per step: its mean, the diagonal of its
/// covariance and, for the full family, the covariance's lower Cholesky factor `A` and `A^T`.
struct ComponentMetric {
    mu: DVector<f64>,
    var: DVector<f64>,
    a: Option<(DMatrix<f64>, DMatrix<f64>)>,
}

impl MogModel {
    /// The whitening of component `g` (`N(mu, Sigma)`), or `None` if `Sigma` has no Cholesky
    /// factor (unreachable for a valid, repaired cavity).
    fn component_metric(&self, g: &MvGaussian) -> Option<ComponentMetric> {
        let a = match self.family {
            Family::Diagonal => None,
            Family::Full => {
                let a = g.cov().clone().cholesky()?.l();
                let at = a.transpose();
                Some((a, at))
            }
        };
        Some(ComponentMetric {
            mu: g.mean().clone(),
            var: g.cov().diagonal(),
            a,
        })
    }

    /// Applies the whitening map of one component (`Sigma = A A^T`) to its block `v`, or its
    /// inverse. Full family: `w_1 = A^T (dh + (dK + dK^T) mu)`, `w_2 = sqrt(2) A^T dK A`
    /// (row-major); its squared norm is the Fisher form `Var[dh^T x + x^T dK x]` for symmetric
    /// `dK`, and the map is invertible on every `dK`. Diagonal family: per coordinate
    /// `(sqrt(v) (dh + 2 m dk), sqrt(2) v dk)`.
    fn whiten_block(&self, c: &ComponentMetric, v: &mut [f64], inverse: bool) -> bool {
        let d = self.d;
        let mu = &c.mu;
        let Some((a, at)) = &c.a else {
            for i in 0..d {
                let (m, var) = (mu[i], c.var[i]);
                (v[i], v[d + i]) = if inverse {
                    crate::natural::unwhiten_gaussian_1d(m, var, var.sqrt(), v[i], v[d + i])
                } else {
                    crate::natural::whiten_gaussian_1d(m, var, var.sqrt(), v[i], v[d + i])
                };
            }
            return true;
        };
        let sqrt2 = std::f64::consts::SQRT_2;
        let (h, k) = if inverse {
            let w1 = DVector::from_column_slice(&v[..d]);
            let m = DMatrix::from_row_slice(d, d, &v[d..]) / sqrt2;
            // dK = A^-T M A^-1: solve A^T X = M, then dK^T = A^-T X^T.
            let Some(x) = at.solve_upper_triangular(&m) else {
                return false;
            };
            let Some(dkt) = at.solve_upper_triangular(&x.transpose()) else {
                return false;
            };
            let dk = dkt.transpose();
            let Some(u) = at.solve_upper_triangular(&w1) else {
                return false;
            };
            (u - (&dk + &dkt) * mu, dk)
        } else {
            let dh = DVector::from_column_slice(&v[..d]);
            let dk = DMatrix::from_row_slice(d, d, &v[d..]);
            let w1 = at * (dh + (&dk + dk.transpose()) * mu);
            (w1, at * dk * a * sqrt2)
        };
        v[..d].copy_from_slice(h.as_slice());
        for r in 0..d {
            for col in 0..d {
                v[d + r * d + col] = k[(r, col)];
            }
        }
        true
    }

    /// Applies every component's map to `v`, or zeroes `v` when they are unavailable
    /// (unreachable for a valid, repaired cavity; a zero change moves nothing).
    fn whiten_all(&self, comps: Option<&[ComponentMetric]>, v: &mut [f64], inverse: bool) {
        let bl = self.block();
        let ok = comps.is_some_and(|comps| {
            comps
                .iter()
                .enumerate()
                .all(|(k, c)| self.whiten_block(c, &mut v[k * bl..(k + 1) * bl], inverse))
        });
        if !ok {
            v.iter_mut().for_each(|x| *x = 0.0);
        }
    }
}

impl SepModel for MogModel {
    type Record = Vec<f64>;

    fn has_metric(&self) -> bool {
        true
    }

    /// Per component, the Fisher metric of its Gaussian at `at` (see `whiten_block`); the
    /// components' means, covariances and Cholesky factors are computed once here.
    fn metric<'a>(&'a self, at: &'a [f64]) -> crate::model::Metric<'a> {
        let comps: Option<Vec<ComponentMetric>> = self
            .gaussians(at)
            .ok()
            .and_then(|gs| gs.iter().map(|g| self.component_metric(g)).collect());
        let comps = std::rc::Rc::new(comps);
        let back = std::rc::Rc::clone(&comps);
        crate::model::Metric::new(
            move |v: &mut [f64]| self.whiten_all(comps.as_deref(), v, false),
            move |v: &mut [f64]| self.whiten_all(back.as_deref(), v, true),
        )
    }

    fn dim(&self) -> usize {
        self.j * self.block()
    }

    fn tilted(&self, cavity: &[f64], record: &Vec<f64>, out: &mut [f64]) -> bool {
        if record.len() != self.d || record.iter().any(|v| !v.is_finite()) {
            return false;
        }
        let Ok(comps) = self.gaussians(cavity) else {
            return false;
        };
        let x = DVector::from_column_slice(record);
        let s2 = self.noise_var;
        let eye = DMatrix::<f64>::identity(self.d, self.d);
        // Responsibilities from the predictive N(x; m_j, V_j + s^2 I).
        let mut logw = Vec::with_capacity(self.j);
        for c in &comps {
            let Ok(predictive) = MvGaussian::new(c.mean().clone(), c.cov() + &eye * s2) else {
                return false;
            };
            match predictive.ln_pdf(&x) {
                Ok(l) => logw.push(l),
                Err(_) => return false,
            }
        }
        let mx = logw.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = logw.iter().map(|l| (l - mx).exp()).sum();
        for (k, c) in comps.iter().enumerate() {
            let r = (logw[k] - mx).exp() / z;
            // One-point posterior in natural form: precision V^-1 + I/s^2, h = V^-1 m + x/s^2.
            let prec_cav = c.precision();
            let h_post = &prec_cav * c.mean() + &x / s2;
            let Ok(post) = GaussianNatural::from_precision(h_post, prec_cav + &eye / s2)
                .and_then(|n| n.to_moments())
            else {
                return false;
            };
            let (m_post, v_post) = (post.mean(), post.cov());
            let mean = m_post * r + c.mean() * (1.0 - r);
            let second = (v_post + m_post * m_post.transpose()) * r
                + (c.cov() + c.mean() * c.mean().transpose()) * (1.0 - r);
            let mut cov = second - &mean * mean.transpose();
            cov = (&cov + cov.transpose()) * 0.5;
            let Ok(matched) = self.gaussian(mean, cov) else {
                return false;
            };
            self.write_block(
                &mut out[k * self.block()..(k + 1) * self.block()],
                &matched.natural(),
            );
        }
        true
    }

    fn is_valid(&self, theta: &[f64]) -> bool {
        theta.len() == self.dim()
            && theta.iter().all(|v| v.is_finite())
            && (0..self.j).all(|k| {
                self.natural_of(&theta[k * self.block()..(k + 1) * self.block()])
                    .is_ok_and(|n| n.is_proper())
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
            let h = &fixed * mean;
            let fixed = (&fixed + fixed.transpose()) * 0.5;
            let Ok(natural) = GaussianNatural::from_precision(h, fixed) else {
                continue;
            };
            self.write_block(b, &natural);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comps(d: usize) -> Vec<Moments> {
        vec![
            Moments {
                mean: DVector::from_fn(d, |i, _| i as f64 - 0.5),
                cov: DMatrix::from_fn(d, d, |r, c| if r == c { 0.5 } else { 0.1 }),
            },
            Moments {
                mean: DVector::from_element(d, 2.0),
                cov: DMatrix::identity(d, d) * 0.25,
            },
        ]
    }

    /// The log-partition of one component's Gaussian, `-h^T Ks^-1 h / 4 - log det(-2 Ks) / 2`
    /// with `Ks` the symmetric part of the stored `K` block, summed over components; written
    /// independently of the metric.
    fn log_partition(model: &MogModel, theta: &[f64]) -> f64 {
        let (d, bl) = (model.d, model.block());
        (0..model.j)
            .map(|k| {
                let b = &theta[k * bl..(k + 1) * bl];
                let h = DVector::from_column_slice(&b[..d]);
                let ks = match model.family {
                    Family::Full => {
                        let m = DMatrix::from_row_slice(d, d, &b[d..]);
                        (&m + m.transpose()) / 2.0
                    }
                    Family::Diagonal => {
                        DMatrix::from_diagonal(&DVector::from_column_slice(&b[d..]))
                    }
                };
                let inv = ks.clone().try_inverse().unwrap();
                -(h.transpose() * inv * &h)[(0, 0)] / 4.0 - 0.5 * (ks * -2.0).determinant().ln()
            })
            .sum()
    }

    /// `||whiten(v)||^2` is the second derivative of the log-partition along a symmetric `v`
    /// (the Fisher form), by central differences, for both families; `unwhiten` inverts
    /// `whiten` on any `v` (asymmetric `K` parts included).
    #[test]
    fn whitening_is_the_fisher_metric_and_inverts() {
        for family in [Family::Full, Family::Diagonal] {
            let model = MogModel::new(2, 3, 0.5, family).unwrap();
            let at = model.natural_from_moments(&comps(3)).unwrap();
            let (d, bl) = (3, model.block());
            let mut v: Vec<f64> = (0..at.len())
                .map(|i| ((i * 7 + 3) % 5) as f64 - 2.1)
                .collect();
            if family == Family::Full {
                // A symmetric K part: the Fisher form sees only the symmetric part.
                for k in 0..2 {
                    for r in 0..d {
                        for c in 0..r {
                            v[k * bl + d + r * d + c] = v[k * bl + d + c * d + r];
                        }
                    }
                }
            }
            let quad = crate::natural::second_derivative_along(
                |theta| log_partition(&model, theta),
                &at,
                &v,
                1e-4,
            );
            let mut white = v.clone();
            model.metric(&at).whiten(&mut white);
            let norm2: f64 = white.iter().map(|x| x * x).sum();
            assert!(
                (norm2 - quad).abs() <= 1e-5 * quad.abs().max(1.0),
                "{family:?}: ||L^T v||^2 = {norm2}, v^T F v = {quad}"
            );
            let asym: Vec<f64> = (0..at.len()).map(|i| (i as f64 * 0.37).sin()).collect();
            for orig in [v, asym] {
                let mut w = orig.clone();
                let metric = model.metric(&at);
                metric.whiten(&mut w);
                metric.unwhiten(&mut w);
                for (a, b) in w.iter().zip(&orig) {
                    assert!(
                        (a - b).abs() <= 1e-10 * b.abs().max(1.0),
                        "{family:?}: {a} vs {b}"
                    );
                }
            }
        }
    }

    #[test]
    fn moments_round_trip_through_expfam() {
        let model = MogModel::new(2, 3, 0.5, Family::Full).unwrap();
        let theta = model.natural_from_moments(&comps(3)).unwrap();
        assert!(model.is_valid(&theta));
        for (got, want) in model.moments(&theta).unwrap().iter().zip(comps(3)) {
            assert!((&got.mean - &want.mean).amax() < 1e-12);
            assert!((&got.cov - &want.cov).amax() < 1e-12);
        }
        // The diagonal family keeps the diagonal only.
        let diag = MogModel::new(2, 3, 0.5, Family::Diagonal).unwrap();
        let back = diag
            .moments(&diag.natural_from_moments(&comps(3)).unwrap())
            .unwrap();
        assert_eq!(back[0].cov[(0, 1)], 0.0);
        assert!((back[0].cov[(1, 1)] - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bad_covariances_are_typed_errors() {
        let model = MogModel::new(2, 2, 0.5, Family::Full).unwrap();
        let mut c = comps(2);
        c[1].cov = -DMatrix::identity(2, 2);
        assert!(matches!(
            model.natural_from_moments(&c),
            Err(SepError::InvalidNaturalParameters(_))
        ));
        c[1].cov = DMatrix::from_row_slice(2, 2, &[1.0, 0.5, 0.0, 1.0]);
        assert!(matches!(
            model.natural_from_moments(&c),
            Err(SepError::InvalidNaturalParameters(_))
        ));
        let mut theta = model.prior();
        theta[2] = 1.0; // eta2[0][0] > 0: not a proper Gaussian
        assert!(!model.is_valid(&theta));
        assert!(model.moments(&theta).is_err());
    }

    #[test]
    fn one_component_tilted_is_the_conjugate_update() {
        // J = 1, d = 1: r = 1, so the tilted distribution is the exact posterior
        // N(m', v') with v' = 1 / (1/v + 1/s^2), m' = v' (m/v + x/s^2).
        let model = MogModel::new(1, 1, 0.5, Family::Full).unwrap();
        let cavity = model
            .natural_from_moments(&[Moments {
                mean: DVector::from_element(1, 0.3),
                cov: DMatrix::from_element(1, 1, 2.0),
            }])
            .unwrap();
        let mut out = vec![0.0; model.dim()];
        assert!(model.tilted(&cavity, &vec![1.0], &mut out));
        let v = 1.0 / (0.5 + 4.0);
        let m = v * (0.3 / 2.0 + 1.0 / 0.25);
        assert!((out[1] + 0.5 / v).abs() < 1e-12);
        assert!((out[0] - m / v).abs() < 1e-12);
        assert!(!model.tilted(&cavity, &vec![f64::NAN], &mut out));
    }
}
