//! The multivariate Gaussian with full covariance, in natural and moment form.

use crate::check;
use crate::error::{ExpFamError, Result};
use crate::linalg::{inverse_from_cholesky, lower_triangular_inverse};
use crate::natural::NaturalParameters;
use crate::traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};
use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use std::f64::consts::PI;

/// Natural parameters of a `d`-dimensional Gaussian: `eta1 = S^-1 m` and `eta2 = -S^-1 / 2`
/// (the sufficient statistics are `x` and `x x^T`; 000 Eq. 41-42, 002 Sec. 3).
///
/// Values of this type need not be a proper distribution: EP site factors and their
/// differences can have an indefinite precision. [`GaussianNatural::check_proper`] checks that
/// the precision `-2 eta2` is positive definite (e.g. after forming an EP cavity with
/// [`NaturalParameters::try_sub`]).
///
/// As a [`NaturalParameters`] vector it is flattened as `eta1` followed by `eta2` in column-major
/// order (all `d^2` entries), so its L2 norm is `sqrt(|eta1|^2 + |eta2|_F^2)`.
///
/// # Example
/// ```
/// use expfam::{GaussianNatural, NaturalParameters};
/// use nalgebra::{DMatrix, DVector};
/// let q = GaussianNatural::from_moments(DVector::from_vec(vec![1.0, 2.0]), DMatrix::identity(2, 2) * 0.5).unwrap();
/// assert!((q.precision() - DMatrix::identity(2, 2) * 2.0).norm() < 1e-14);
/// let f = q.scale(0.25);
/// let cavity = q.try_sub(&f).unwrap();
/// assert!(cavity.is_proper());
/// let back = cavity.try_add(&f).unwrap();
/// assert!((back.eta1() - q.eta1()).norm() < 1e-15);
/// // Removing more than the whole posterior leaves an improper cavity: a typed error.
/// assert!(q.try_sub(&q.scale(2.0)).unwrap().check_proper().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GaussianNatural {
    eta1: DVector<f64>,
    eta2: DMatrix<f64>,
}

impl GaussianNatural {
    /// From `eta1 = S^-1 m` (length `d`) and `eta2 = -S^-1/2` (`d x d`, symmetric).
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`], [`ExpFamError::NonFinite`], [`ExpFamError::NotSymmetric`]
    /// (relative asymmetry above `1e-10`; the matrix is then symmetrised exactly).
    pub fn new(eta1: DVector<f64>, eta2: DMatrix<f64>) -> Result<Self> {
        check::vector("eta1", &eta1, eta1.len())?;
        check::symmetric("eta2", &eta2, eta1.len())?;
        let eta2 = symmetrise(eta2);
        Ok(Self { eta1, eta2 })
    }

    /// From the precision-adjusted mean `h = Lambda m` and the precision `Lambda`
    /// (`eta1 = h`, `eta2 = -Lambda/2`).
    ///
    /// # Errors
    /// As [`GaussianNatural::new`].
    pub fn from_precision(h: DVector<f64>, precision: DMatrix<f64>) -> Result<Self> {
        Self::new(h, precision * -0.5)
    }

    /// Moment matching: the natural parameters of `N(mean, cov)` (002 Algorithm 3, step 6).
    ///
    /// # Errors
    /// As [`MvGaussian::new`] (e.g. [`ExpFamError::NotPositiveDefinite`] for a bad covariance).
    pub fn from_moments(mean: DVector<f64>, cov: DMatrix<f64>) -> Result<Self> {
        Ok(MvGaussian::new(mean, cov)?.natural())
    }

    /// The zero vector (a flat factor) of dimension `d`.
    pub fn zeros(d: usize) -> Self {
        Self {
            eta1: DVector::zeros(d),
            eta2: DMatrix::zeros(d, d),
        }
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.eta1.len()
    }

    /// `eta1 = S^-1 m`.
    pub fn eta1(&self) -> &DVector<f64> {
        &self.eta1
    }

    /// `eta2 = -S^-1 / 2`.
    pub fn eta2(&self) -> &DMatrix<f64> {
        &self.eta2
    }

    /// The precision `Lambda = -2 eta2`.
    pub fn precision(&self) -> DMatrix<f64> {
        &self.eta2 * -2.0
    }

    /// `Ok` if the precision `-2 eta2` is positive definite (a proper Gaussian).
    ///
    /// # Errors
    /// [`ExpFamError::NotPositiveDefinite`].
    pub fn check_proper(&self) -> Result<()> {
        Cholesky::new(self.precision())
            .map(|_| ())
            .ok_or(ExpFamError::NotPositiveDefinite { name: "precision" })
    }

    /// Whether [`GaussianNatural::check_proper`] succeeds.
    pub fn is_proper(&self) -> bool {
        self.check_proper().is_ok()
    }

    /// Moment form (`mean`, `cov`) via a Cholesky factorisation of the precision.
    ///
    /// # Errors
    /// [`ExpFamError::NotPositiveDefinite`] if the precision is not positive definite.
    pub fn to_moments(&self) -> Result<MvGaussian> {
        MvGaussian::from_natural(self)
    }
}

/// `m` must be `d x d`.
fn same_len_square(name: &'static str, m: &DMatrix<f64>, d: usize) -> Result<()> {
    check::same_len(name, d, m.nrows())?;
    check::same_len(name, d, m.ncols())
}

fn symmetrise(m: DMatrix<f64>) -> DMatrix<f64> {
    let t = m.transpose();
    (m + t) * 0.5
}

impl NaturalParameters for GaussianNatural {
    fn num_values(&self) -> usize {
        self.eta1.len() + self.eta2.len()
    }
    fn for_each_value(&self, f: &mut dyn FnMut(f64)) {
        self.eta1.iter().for_each(|&x| f(x));
        self.eta2.iter().for_each(|&x| f(x));
    }
    fn map_values(&self, f: &dyn Fn(f64) -> f64) -> Self {
        Self {
            eta1: self.eta1.map(f),
            eta2: self.eta2.map(f),
        }
    }
    fn zip_values(&self, other: &Self, f: &dyn Fn(f64, f64) -> f64) -> Result<Self> {
        check::same_len("Gaussian natural parameters", self.dim(), other.dim())?;
        Ok(Self {
            eta1: self.eta1.zip_map(&other.eta1, f),
            eta2: self.eta2.zip_map(&other.eta2, f),
        })
    }
}

/// Mean parameters of a Gaussian: `E[x] = m` and `E[x x^T] = S + m m^T` (000 Eq. 42).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GaussianMean {
    /// `E[x]`.
    pub first: DVector<f64>,
    /// `E[x x^T]`.
    pub second: DMatrix<f64>,
}

/// A square root of the covariance kept for solves, determinants and sampling.
#[derive(Debug, Clone)]
enum Root {
    /// `S = L L^T`.
    Cov(Cholesky<f64, Dyn>),
    /// `S^-1 = L L^T`, and `S^-1` itself.
    Prec(Cholesky<f64, Dyn>, DMatrix<f64>),
    /// `M = L^-1` (lower triangular, positive diagonal, zero above it) for `S^-1 = L L^T`, so
    /// `S = M^T M` ([`MvGaussian::from_inverse_precision_factor`]).
    InvPrec(DMatrix<f64>),
}

/// `M^T b` for a lower-triangular `M` (only its lower triangle is read).
fn lower_transpose_times(m: &DMatrix<f64>, b: &DVector<f64>) -> DVector<f64> {
    let d = m.nrows();
    let ms = m.as_slice();
    DVector::from_fn(d, |i, _| {
        ms[i * d + i..(i + 1) * d]
            .iter()
            .zip(&b.as_slice()[i..])
            .map(|(x, y)| x * y)
            .sum()
    })
}

/// `M^-1 M^-T b` for a lower-triangular `M` with a positive diagonal (only its lower triangle is
/// read): back substitution with `M^T`, then forward substitution with `M`.
fn solve_lower_gram(m: &DMatrix<f64>, b: &DVector<f64>) -> DVector<f64> {
    let d = m.nrows();
    let ms = m.as_slice();
    let mut y = b.clone();
    let ys = y.as_mut_slice();
    for i in (0..d).rev() {
        let below: f64 = ms[i * d + i + 1..(i + 1) * d]
            .iter()
            .zip(&ys[i + 1..])
            .map(|(x, y)| x * y)
            .sum();
        ys[i] = (ys[i] - below) / ms[i * d + i];
    }
    for j in 0..d {
        let x = ys[j] / ms[j * d + j];
        ys[j] = x;
        for (y, m) in ys[j + 1..].iter_mut().zip(&ms[j * d + j + 1..(j + 1) * d]) {
            *y -= m * x;
        }
    }
    y
}

/// Makes `m` exactly symmetric in place, `(m + m^T) / 2` entry by entry (no copy).
fn symmetrise_in_place(m: &mut DMatrix<f64>) {
    let d = m.nrows();
    for j in 0..d {
        for i in (j + 1)..d {
            let v = (m[(i, j)] + m[(j, i)]) * 0.5;
            m[(i, j)] = v;
            m[(j, i)] = v;
        }
    }
}

/// `N(m, S)` in moment form, with a Cholesky factor for solves, log-determinants and sampling.
///
/// Conversions from natural parameters factor the precision (no explicit inverse except the
/// covariance the caller asks for); conversions to natural parameters factor the covariance.
///
/// # Example
/// ```
/// use expfam::{ExponentialFamily, MvGaussian, Entropy};
/// use nalgebra::{DMatrix, DVector};
/// let g = MvGaussian::new(DVector::from_vec(vec![0.0, 1.0]), DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0])).unwrap();
/// let back = MvGaussian::from_natural(&g.natural()).unwrap();
/// assert!((back.cov() - g.cov()).norm() < 1e-12);
/// assert!(MvGaussian::new(DVector::zeros(2), DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0])).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct MvGaussian {
    mean: DVector<f64>,
    cov: DMatrix<f64>,
    root: Root,
}

impl MvGaussian {
    /// `N(mean, cov)`.
    ///
    /// # Errors
    /// [`ExpFamError::TooShort`] for `d = 0`, [`ExpFamError::DimensionMismatch`],
    /// [`ExpFamError::NonFinite`], [`ExpFamError::NotSymmetric`],
    /// [`ExpFamError::NotPositiveDefinite`] (covariance).
    pub fn new(mean: DVector<f64>, cov: DMatrix<f64>) -> Result<Self> {
        check::min_len("mean", mean.len(), 1)?;
        check::vector("mean", &mean, mean.len())?;
        check::symmetric("covariance", &cov, mean.len())?;
        let cov = symmetrise(cov);
        let chol = Cholesky::new(cov.clone())
            .ok_or(ExpFamError::NotPositiveDefinite { name: "covariance" })?;
        Ok(Self {
            mean,
            cov,
            root: Root::Cov(chol),
        })
    }

    /// `N(mean, cov)` from the covariance `S` and `M = L^-1`, the inverse of the Cholesky factor
    /// `L` of the precision `S^-1 = L L^T` (so `S = M^T M`), as a caller that has just
    /// inverted a precision holds them. Both matrices are moved in: nothing is copied and nothing
    /// is factorised again, so a `d x d` Gaussian costs two `d x d` matrices and `O(d^2)` checks
    /// ([`MvGaussian::new`] copies the covariance and factorises it in `O(d^3)`). `M` serves the
    /// solves, the log-determinant and sampling.
    ///
    /// Checked: dimensions; finiteness; the covariance symmetric to `1e-10` relative (then made
    /// exactly symmetric in place: an exactly symmetric one is unchanged); `M`'s diagonal
    /// `> 0`; and, as a cheap consistency test of `S = M^T M`, every variance `S_ii` equal to the
    /// squared norm of `M`'s column `i` to `1e-8` relative. `M`'s strict upper triangle is
    /// ignored (set to zero).
    ///
    /// # Errors
    /// [`ExpFamError::TooShort`] for `d = 0`, [`ExpFamError::DimensionMismatch`],
    /// [`ExpFamError::NonFinite`], [`ExpFamError::NotSymmetric`],
    /// [`ExpFamError::NotPositiveDefinite`] (a diagonal entry of `M` not `> 0`, or variances
    /// that are not `M^T M`'s).
    ///
    /// # Example
    /// ```
    /// use expfam::MvGaussian;
    /// use nalgebra::{DMatrix, DVector};
    /// // precision [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]]; M = L^-1
    /// let m = DMatrix::from_row_slice(2, 2, &[0.5, 0.0, -0.25, 0.5]);
    /// let cov = m.transpose() * &m;
    /// let g = MvGaussian::from_inverse_precision_factor(DVector::zeros(2), cov.clone(), m)?;
    /// let direct = MvGaussian::new(DVector::zeros(2), cov)?;
    /// assert!((g.ln_det_cov() - direct.ln_det_cov()).abs() < 1e-14);
    /// assert!((g.precision() - DMatrix::from_row_slice(2, 2, &[4.0, 2.0, 2.0, 5.0])).amax() < 1e-12);
    /// # Ok::<(), expfam::ExpFamError>(())
    /// ```
    pub fn from_inverse_precision_factor(
        mean: DVector<f64>,
        mut cov: DMatrix<f64>,
        mut inverse_factor: DMatrix<f64>,
    ) -> Result<Self> {
        check::min_len("mean", mean.len(), 1)?;
        let d = mean.len();
        check::vector("mean", &mean, d)?;
        check::symmetric("covariance", &cov, d)?;
        same_len_square("inverse precision factor", &inverse_factor, d)?;
        let not_pd = ExpFamError::NotPositiveDefinite {
            name: "inverse precision factor",
        };
        {
            let ms = inverse_factor.as_mut_slice();
            for j in 0..d {
                ms[j * d..j * d + j].fill(0.0);
                check::all_finite("inverse precision factor", &ms[j * d + j..(j + 1) * d])?;
                if ms[j * d + j] <= 0.0 {
                    return Err(not_pd);
                }
            }
        }
        symmetrise_in_place(&mut cov);
        let ms = inverse_factor.as_slice();
        for j in 0..d {
            let norm: f64 = ms[j * d + j..(j + 1) * d].iter().map(|x| x * x).sum();
            let consistent = (cov[(j, j)] - norm).abs() <= 1e-8 * norm;
            if !consistent {
                return Err(ExpFamError::NotPositiveDefinite {
                    name: "covariance (not M^T M)",
                });
            }
        }
        Ok(Self {
            mean,
            cov,
            root: Root::InvPrec(inverse_factor),
        })
    }

    /// The mean `m`.
    pub fn mean(&self) -> &DVector<f64> {
        &self.mean
    }

    /// The covariance `S`.
    pub fn cov(&self) -> &DMatrix<f64> {
        &self.cov
    }

    /// The dimension `d`.
    pub fn dim(&self) -> usize {
        self.mean.len()
    }

    /// The precision `S^-1` (stored if this value came from natural parameters, else computed
    /// from the Cholesky factor of `S`).
    pub fn precision(&self) -> DMatrix<f64> {
        match &self.root {
            Root::Prec(_, p) => p.clone(),
            Root::Cov(c) => inverse_from_cholesky(&c.l()),
            Root::InvPrec(m) => {
                // S^-1 = M^-1 M^-T = X X^T with X = M^-1 (lower triangular).
                let d = m.nrows();
                let x = DMatrix::from_vec(d, d, lower_triangular_inverse(m));
                let mut p = &x * x.transpose();
                p.fill_upper_triangle_with_lower_triangle();
                p
            }
        }
    }

    /// `S^-1 b` through the stored factor.
    pub fn solve_precision_times(&self, b: &DVector<f64>) -> DVector<f64> {
        match &self.root {
            Root::Prec(_, p) => p * b,
            Root::Cov(c) => c.solve(b),
            Root::InvPrec(m) => solve_lower_gram(m, b),
        }
    }

    /// `ln det S`.
    pub fn ln_det_cov(&self) -> f64 {
        match &self.root {
            Root::Cov(c) => 2.0 * c.l_dirty().diagonal().iter().map(|x| x.ln()).sum::<f64>(),
            Root::Prec(c, _) => -2.0 * c.l_dirty().diagonal().iter().map(|x| x.ln()).sum::<f64>(),
            Root::InvPrec(m) => 2.0 * m.diagonal().iter().map(|x| x.ln()).sum::<f64>(),
        }
    }

    /// `ln N(x | m, S)`.
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`] / [`ExpFamError::NonFinite`] for a bad `x`.
    pub fn ln_pdf(&self, x: &DVector<f64>) -> Result<f64> {
        check::vector("x", x, self.dim())?;
        let delta = x - &self.mean;
        let quad = delta.dot(&self.solve_precision_times(&delta));
        Ok(-0.5 * (quad + self.ln_det_cov() + self.dim() as f64 * (2.0 * PI).ln()))
    }

    /// `E[x^T x] = m^T m + tr S` (the statistic of BLR's precision update, 000 Eq. 40).
    pub fn expected_squared_norm(&self) -> f64 {
        self.mean.norm_squared() + self.cov.trace()
    }
}

impl ExponentialFamily for MvGaussian {
    type Natural = GaussianNatural;
    type Mean = GaussianMean;

    fn natural(&self) -> GaussianNatural {
        let precision = self.precision();
        let eta1 = self.solve_precision_times(&self.mean);
        GaussianNatural {
            eta1,
            eta2: precision * -0.5,
        }
    }

    /// Factor `Lambda = -2 eta2 = L L^T`, `m = Lambda^-1 eta1` by two triangular solves,
    /// `S = Lambda^-1` from the factor.
    fn from_natural(eta: &GaussianNatural) -> Result<Self> {
        check::min_len("eta1", eta.dim(), 1)?;
        let precision = eta.precision();
        let chol = Cholesky::new(precision.clone())
            .ok_or(ExpFamError::NotPositiveDefinite { name: "precision" })?;
        let mean = chol.solve(&eta.eta1);
        let cov = inverse_from_cholesky(&chol.l());
        check::all_finite("mean", mean.as_slice())?;
        check::all_finite("covariance", cov.as_slice())?;
        Ok(Self {
            mean,
            cov,
            root: Root::Prec(chol, precision),
        })
    }

    /// `A = m^T S^-1 m / 2 + ln det S / 2 + (d/2) ln(2 pi)`.
    fn log_partition(&self) -> f64 {
        let quad = self.mean.dot(&self.solve_precision_times(&self.mean));
        0.5 * quad + 0.5 * self.ln_det_cov() + 0.5 * self.dim() as f64 * (2.0 * PI).ln()
    }

    fn mean_parameters(&self) -> GaussianMean {
        GaussianMean {
            first: self.mean.clone(),
            second: &self.cov + &self.mean * self.mean.transpose(),
        }
    }

    /// `S = E[x x^T] - m m^T`, which must be positive definite.
    fn from_mean_parameters(mu: &GaussianMean) -> Result<Self> {
        check::vector("E[x]", &mu.first, mu.first.len())?;
        check::symmetric("E[x x^T]", &mu.second, mu.first.len())?;
        let cov = &mu.second - &mu.first * mu.first.transpose();
        Self::new(mu.first.clone(), cov)
    }
}

impl SufficientStatistics for MvGaussian {
    type Sample = DVector<f64>;
    fn sufficient_statistics(x: &DVector<f64>) -> GaussianMean {
        GaussianMean {
            first: x.clone(),
            second: x * x.transpose(),
        }
    }
}

impl Entropy for MvGaussian {
    /// `(d (1 + ln 2 pi) + ln det S) / 2`.
    fn entropy(&self) -> f64 {
        0.5 * (self.dim() as f64 * (1.0 + (2.0 * PI).ln()) + self.ln_det_cov())
    }
}

impl KlDivergence for MvGaussian {
    /// `(tr(S_q^-1 S_p) + (m_q - m_p)^T S_q^-1 (m_q - m_p) - d + ln det S_q - ln det S_p) / 2`.
    fn kl_divergence(&self, other: &Self) -> Result<f64> {
        check::same_len("other Gaussian", self.dim(), other.dim())?;
        let trace = match &other.root {
            Root::Prec(_, p) => p.component_mul(&self.cov).sum(),
            Root::Cov(c) => c.solve(&self.cov).trace(),
            Root::InvPrec(_) => other.precision().component_mul(&self.cov).sum(),
        };
        let delta = &other.mean - &self.mean;
        let quad = delta.dot(&other.solve_precision_times(&delta));
        let kl = 0.5 * (trace + quad - self.dim() as f64 + other.ln_det_cov() - self.ln_det_cov());
        Ok(kl.max(0.0))
    }
}

impl Distribution<DVector<f64>> for MvGaussian {
    /// `m + L z` (covariance factor) or `m + L^-T z` (precision factor), `z ~ N(0, I)`.
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> DVector<f64> {
        let z = DVector::from_fn(self.dim(), |_, _| -> f64 { StandardNormal.sample(rng) });
        match &self.root {
            Root::Cov(c) => &self.mean + c.l_dirty().lower_triangle() * z,
            Root::Prec(c, _) => {
                let lt = c.l_dirty().lower_triangle().transpose();
                let y = lt
                    .solve_upper_triangular(&z)
                    .expect("Cholesky factor has a positive diagonal");
                &self.mean + y
            }
            // S = M^T M: M^T z has covariance S.
            Root::InvPrec(m) => &self.mean + lower_transpose_times(m, &z),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// A Gaussian built from `M = L^-1` behaves as the one converted from the same natural
    /// parameters (precision factor `L`): the same solves, log-determinant, precision, KL and,
    /// from the same draws `z`, the same samples (`M^T z = L^-T z`).
    #[test]
    fn inverse_precision_factor_agrees_with_the_natural_conversion() {
        let d = 6;
        let a = DMatrix::from_fn(d, d, |i, j| ((i * 7 + j * 3) % 5) as f64 / 5.0 - 0.4);
        let precision = &a * a.transpose() + DMatrix::identity(d, d) * 0.8;
        let h = DVector::from_fn(d, |i, _| (i as f64 * 0.9).cos());
        let natural = GaussianNatural::from_precision(h, precision.clone()).unwrap();
        let reference = MvGaussian::from_natural(&natural).unwrap();
        let l = Cholesky::new(precision.clone()).unwrap().l();
        let m = DMatrix::from_vec(d, d, lower_triangular_inverse(&l));
        let mut cov = m.transpose() * &m;
        cov.fill_upper_triangle_with_lower_triangle();
        let g = MvGaussian::from_inverse_precision_factor(reference.mean().clone(), cov, m.clone())
            .unwrap();
        let tol = 1e-12;
        assert!((g.cov() - reference.cov()).amax() < tol);
        assert!((g.ln_det_cov() - reference.ln_det_cov()).abs() < tol);
        assert!((g.precision() - &precision).amax() < 1e-11);
        let b = DVector::from_fn(d, |i, _| i as f64 - 2.0);
        let want = reference.solve_precision_times(&b);
        assert!((g.solve_precision_times(&b) - want).amax() < 1e-11);
        assert!(g.kl_divergence(&reference).unwrap() < 1e-10);
        assert!(reference.kl_divergence(&g).unwrap() < 1e-10);
        let (mut r1, mut r2) = (
            rand::rngs::ChaCha8Rng::seed_from_u64(4),
            rand::rngs::ChaCha8Rng::seed_from_u64(4),
        );
        assert!((g.sample(&mut r1) - reference.sample(&mut r2)).amax() < tol);
        // Refused: a factor with a non-positive diagonal, variances that are not M^T M's.
        let mut bad = m.clone();
        bad[(2, 2)] = -bad[(2, 2)];
        let cov = g.cov().clone();
        assert!(
            MvGaussian::from_inverse_precision_factor(g.mean().clone(), cov.clone(), bad).is_err()
        );
        let mut scaled = cov.clone();
        scaled[(1, 1)] *= 1.01;
        assert!(MvGaussian::from_inverse_precision_factor(g.mean().clone(), scaled, m).is_err());
        let short = DMatrix::<f64>::identity(d - 1, d - 1);
        assert!(MvGaussian::from_inverse_precision_factor(g.mean().clone(), cov, short).is_err());
    }
}
