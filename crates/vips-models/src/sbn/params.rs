//! The SBN's global parameters ([`SbnGlobal`]) and their expected natural parameters
//! ([`SbnNatural`]): the types both the E-step ([`super::LocalPosterior`]) and the model
//! ([`super::Sbn`]) use, in their own module so that neither depends on the other.

use expfam::{ExponentialFamily, GaussianNatural, MvGaussian};
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::Serialize;

use super::tpbn::Tpbn;
use crate::blr::expected_xi as pg1_mean;

/// The global variational parameters: natural parameters of `q(w_j) = N(mu_j, Sigma_j)`
/// (precision `Sigma_j^-1` and shift `Sigma_j^-1 mu_j`), of `q(b)` and `q(c)` (diagonal),
/// and the TPBN hyper-posteriors (000 Appendix C).
#[derive(Clone, Debug, Serialize)]
pub struct SbnGlobal {
    /// `Sigma_j^-1`, one `K x K` matrix per visible unit.
    pub w_precision: Vec<DMatrix<f64>>,
    /// `Sigma_j^-1 mu_j` as the rows of a `J x K` matrix.
    pub w_shift: DMatrix<f64>,
    /// Precisions of `q(b_k)`.
    pub b_precision: DVector<f64>,
    /// `precision x mean` of `q(b_k)`.
    pub b_shift: DVector<f64>,
    /// Precisions of `q(c_j)`.
    pub c_precision: DVector<f64>,
    /// `precision x mean` of `q(c_j)`.
    pub c_shift: DVector<f64>,
    /// TPBN shrinkage hyper-posteriors.
    pub tpbn: Tpbn,
}

/// Posterior moments of the parameters: the expected natural parameters the E-step needs.
#[derive(Clone, Debug, PartialEq)]
pub struct SbnNatural {
    /// `J`.
    pub visible: usize,
    /// `K`.
    pub hidden: usize,
    /// `<W>` row-major (`j * K + k`).
    pub mu_w: Vec<f64>,
    /// `<W>` transposed (`k * J + j`).
    pub mu_wt: Vec<f64>,
    /// `<W_jk^2>` row-major.
    pub w2: Vec<f64>,
    /// `<W_jk^2>` transposed.
    pub w2t: Vec<f64>,
    /// Full posterior covariance `Sigma_j` of each row.
    pub cov: Vec<DMatrix<f64>>,
    /// `<b>`.
    pub mu_b: Vec<f64>,
    /// `<b^2>`.
    pub b2: Vec<f64>,
    /// `<xi1_k> = E[PG(1, sqrt(<b_k^2>))]` (000 Eq. 54).
    pub xi1: Vec<f64>,
    /// `<c>`.
    pub mu_c: Vec<f64>,
    /// `<c^2>`.
    pub c2: Vec<f64>,
    /// Prior precisions `<1/zeta_jk>` of `W` from the TPBN posterior (row-major).
    pub w_prior_precision: Vec<f64>,
}

impl SbnNatural {
    /// The moments of `global` (one Cholesky factorisation per visible unit, the units in
    /// parallel on rayon; each unit's arithmetic is its own, so the result does not depend on
    /// the thread count).
    pub fn from_global(global: &SbnGlobal) -> Self {
        let j_dim = global.w_precision.len();
        let k_dim = global.b_shift.len();
        let mut mu_w = vec![0.0; j_dim * k_dim];
        let mut w2 = vec![0.0; j_dim * k_dim];
        let moments: Vec<(DVector<f64>, DMatrix<f64>)> = global
            .w_precision
            .par_iter()
            .enumerate()
            .map(|(j, precision)| gaussian_moments(precision, &global.w_shift.row(j).transpose()))
            .collect();
        let mut cov = Vec::with_capacity(j_dim);
        for (j, (mean, sigma)) in moments.into_iter().enumerate() {
            for k in 0..k_dim {
                mu_w[j * k_dim + k] = mean[k];
                w2[j * k_dim + k] = mean[k] * mean[k] + sigma[(k, k)];
            }
            cov.push(sigma);
        }
        let transpose = |m: &[f64]| {
            let mut t = vec![0.0; j_dim * k_dim];
            for j in 0..j_dim {
                for k in 0..k_dim {
                    t[k * j_dim + j] = m[j * k_dim + k];
                }
            }
            t
        };
        let diag = |prec: &DVector<f64>, shift: &DVector<f64>| {
            let mean: Vec<f64> = shift.iter().zip(prec.iter()).map(|(h, l)| h / l).collect();
            let second: Vec<f64> = mean
                .iter()
                .zip(prec.iter())
                .map(|(m, l)| m * m + 1.0 / l)
                .collect();
            (mean, second)
        };
        let (mu_b, b2) = diag(&global.b_precision, &global.b_shift);
        let (mu_c, c2) = diag(&global.c_precision, &global.c_shift);
        let xi1 = b2.iter().map(|&s| pg1_mean(s.sqrt())).collect();
        Self {
            visible: j_dim,
            hidden: k_dim,
            mu_wt: transpose(&mu_w),
            w2t: transpose(&w2),
            mu_w,
            w2,
            cov,
            mu_b,
            b2,
            xi1,
            mu_c,
            c2,
            w_prior_precision: global.tpbn.zeta_inv.clone(),
        }
    }
}

/// Mean and covariance of a Gaussian from precision and shift, by expfam's natural-to-moment
/// conversion ([`MvGaussian`] from [`GaussianNatural`]: one Cholesky factorisation); a precision
/// that is not numerically positive definite gets a growing diagonal jitter (post-processing only).
fn gaussian_moments(
    precision: &DMatrix<f64>,
    shift: &DVector<f64>,
) -> (DVector<f64>, DMatrix<f64>) {
    let n = precision.nrows();
    let mut jitter = 0.0;
    for _ in 0..20 {
        let mut p = precision.clone();
        for i in 0..n {
            p[(i, i)] += jitter;
        }
        let moments = GaussianNatural::from_precision(shift.clone(), p)
            .and_then(|natural| MvGaussian::from_natural(&natural));
        if let Ok(q) = moments {
            return (q.mean().clone(), q.cov().clone());
        }
        jitter = if jitter == 0.0 { 1e-8 } else { jitter * 10.0 };
    }
    (DVector::zeros(n), DMatrix::identity(n, n))
}
