//! Row-wise Dirichlet expectations for a `K x V` topic matrix (the LDA M-step hot path).
//!
//! Row `k` of `lambda` holds the variational Dirichlet parameters of topic `k` over a vocabulary
//! of `V` words. Online LDA (Hoffman, Blei, Bach 2010) needs, at every iteration,
//! `E[ln beta_kv] = psi(lambda_kv) - psi(sum_v lambda_kv)` (and its exponential), the
//! normalisers `ln B(lambda_k)`, and the KL terms against the symmetric prior `Dir(eta 1)` for the
//! ELBO / perplexity bound. Matrices are `nalgebra` (column-major); the functions walk memory in
//! storage order.

use crate::check;
use crate::error::Result;
use crate::special_fn::{digamma_fast, ln_gamma_pos};
use nalgebra::{DMatrix, DVector};

fn validate(lambda: &DMatrix<f64>) -> Result<()> {
    check::min_len("lambda rows", lambda.nrows(), 1)?;
    check::min_len("lambda columns", lambda.ncols(), 1)?;
    check::all_positive("lambda", lambda.as_slice())
}

/// Entries holding more than half of their row's total: `psi(x) - psi(sum)` cancels there, so they
/// are recomputed as `-(psi(x + rest) - psi(x))` with `rest` summed directly (at most one per row).
fn fix_dominant_entries(lambda: &DMatrix<f64>, sums: &[f64], out: &mut DMatrix<f64>) {
    let k = lambda.nrows();
    // Row maxima in storage order (contiguous), then the rare fix-ups by row.
    let mut maxima = vec![0.0_f64; k];
    for col in lambda.as_slice().chunks_exact(k) {
        for (m, &x) in maxima.iter_mut().zip(col) {
            *m = m.max(x);
        }
    }
    for (r, (&s, &mx)) in sums.iter().zip(&maxima).enumerate() {
        if mx > 0.5 * s {
            let row = lambda.row(r);
            let v = row
                .iter()
                .position(|&x| x == mx)
                .expect("the maximum is in the row");
            let rest: f64 = row
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != v)
                .map(|(_, &y)| y)
                .sum();
            out[(r, v)] = -crate::special_fn::digamma_increment(mx, rest);
        }
    }
}

/// Row sums `sum_v lambda_kv`, summed in storage order.
fn row_sums(lambda: &DMatrix<f64>) -> Vec<f64> {
    let k = lambda.nrows();
    let mut sums = vec![0.0; k];
    for col in lambda.as_slice().chunks_exact(k) {
        for (s, &x) in sums.iter_mut().zip(col) {
            *s += x;
        }
    }
    sums
}

/// `E[ln theta] = psi(alpha) - psi(sum alpha)` for one Dirichlet (e.g. LDA's per-document `gamma_d`).
///
/// # Errors
/// [`ExpFamError::TooShort`](crate::ExpFamError::TooShort) for no entries (one entry is the point mass
/// at `theta = 1`: `E[ln theta] = 0`, as LDA with one topic needs); NaN, infinite or
/// non-positive entries give [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite) /
/// [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain).
///
/// # Example
/// ```
/// let e = expfam::dirichlet_expectation(&[1.0, 1.0]).unwrap();
/// assert!((e[0] + 1.0).abs() < 1e-14); // psi(1) - psi(2) = -1
/// ```
pub fn dirichlet_expectation(alpha: &[f64]) -> Result<Vec<f64>> {
    let mut out = vec![0.0; alpha.len()];
    dirichlet_expectation_into(alpha, &mut out)?;
    Ok(out)
}

/// As [`dirichlet_expectation`], writing into `out` (no allocation; for LDA's per-document loop).
///
/// # Errors
/// As [`dirichlet_expectation`]; [`ExpFamError::DimensionMismatch`](crate::ExpFamError::DimensionMismatch)
/// if `out.len() != alpha.len()`.
///
/// # Example
/// ```
/// let mut out = [0.0; 2];
/// expfam::dirichlet_expectation_into(&[2.0, 2.0], &mut out).unwrap();
/// assert!((out[1] + 1.0 / 2.0 + 1.0 / 3.0).abs() < 1e-14); // psi(2) - psi(4)
/// ```
pub fn dirichlet_expectation_into(alpha: &[f64], out: &mut [f64]) -> Result<()> {
    check::min_len("alpha", alpha.len(), 1)?;
    check::same_len("out", alpha.len(), out.len())?;
    check::all_positive("alpha", alpha)?;
    let s: f64 = alpha.iter().sum();
    check::finite("sum of alpha", s)?;
    expectation_unchecked(alpha, s, out);
    Ok(())
}

/// `out[k] = psi(alpha_k) - psi(s)` with `s = sum alpha`, for validated `alpha` (positive, finite
/// sum) and `out` of the same length: the one implementation behind [`dirichlet_expectation_into`]
/// and the `Dirichlet` / `Beta` families. The entry holding more than half of `s` (at most one)
/// goes through `-(psi(alpha_k + rest) - psi(alpha_k))` with `rest` summed directly.
pub(crate) fn expectation_unchecked(alpha: &[f64], s: f64, out: &mut [f64]) {
    let p0 = digamma_fast(s);
    let mut dominant = None;
    for (k, (o, &a)) in out.iter_mut().zip(alpha).enumerate() {
        *o = digamma_fast(a) - p0;
        if a > 0.5 * s {
            dominant = Some(k);
        }
    }
    if let Some(k) = dominant {
        let rest: f64 = alpha
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, &x)| x)
            .sum();
        out[k] = -crate::special_fn::digamma_increment(alpha[k], rest);
    }
}

/// Row-wise `E[ln beta_kv] = psi(lambda_kv) - psi(sum_v lambda_kv)` for a `K x V` matrix.
///
/// # Errors
/// As [`dirichlet_expectation`], for any entry; no columns or no rows is
/// [`ExpFamError::TooShort`](crate::ExpFamError::TooShort).
///
/// # Example
/// ```
/// use nalgebra::DMatrix;
/// let lambda = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 2.0, 2.0]);
/// let e = expfam::dirichlet_expectation_rows(&lambda).unwrap();
/// assert!((e[(0, 1)] + 1.0).abs() < 1e-14);          // psi(1) - psi(2)
/// assert!((e[(1, 0)] + 1.0 / 2.0 + 1.0 / 3.0).abs() < 1e-14); // psi(2) - psi(4)
/// ```
pub fn dirichlet_expectation_rows(lambda: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let mut out = DMatrix::zeros(lambda.nrows(), lambda.ncols());
    dirichlet_expectation_rows_into(lambda, &mut out)?;
    Ok(out)
}

/// As [`dirichlet_expectation_rows`], writing into `out` (no allocation).
///
/// # Errors
/// As [`dirichlet_expectation_rows`]; [`ExpFamError::DimensionMismatch`](crate::ExpFamError::DimensionMismatch)
/// if `out` has another shape.
pub fn dirichlet_expectation_rows_into(
    lambda: &DMatrix<f64>,
    out: &mut DMatrix<f64>,
) -> Result<()> {
    validate(lambda)?;
    check::same_len("out rows", lambda.nrows(), out.nrows())?;
    check::same_len("out columns", lambda.ncols(), out.ncols())?;
    let k = lambda.nrows();
    let sums = row_sums(lambda);
    check::all_finite("row sums of lambda", &sums)?;
    let psi_sums: Vec<f64> = sums.iter().map(|&s| digamma_fast(s)).collect();
    for (src, dst) in lambda
        .as_slice()
        .chunks_exact(k)
        .zip(out.as_mut_slice().chunks_exact_mut(k))
    {
        for ((d, &x), &p) in dst.iter_mut().zip(src).zip(&psi_sums) {
            *d = digamma_fast(x) - p;
        }
    }
    fix_dominant_entries(lambda, &sums, out);
    Ok(())
}

/// Row-wise log-normalisers `ln B(lambda_k) = sum_v ln Gamma(lambda_kv) - ln Gamma(sum_v lambda_kv)`.
///
/// # Errors
/// As [`dirichlet_expectation_rows`].
///
/// # Example
/// ```
/// use nalgebra::DMatrix;
/// let lambda = DMatrix::from_row_slice(1, 2, &[1.0, 1.0]);
/// let b = expfam::dirichlet_log_normalizer_rows(&lambda).unwrap();
/// assert!(b[0].abs() < 1e-15); // B(1, 1) = 1
/// ```
pub fn dirichlet_log_normalizer_rows(lambda: &DMatrix<f64>) -> Result<DVector<f64>> {
    validate(lambda)?;
    let k = lambda.nrows();
    let mut acc = vec![0.0; k];
    for col in lambda.as_slice().chunks_exact(k) {
        for (a, &x) in acc.iter_mut().zip(col) {
            *a += ln_gamma_pos(x);
        }
    }
    let sums = row_sums(lambda);
    Ok(DVector::from_iterator(
        k,
        acc.iter().zip(&sums).map(|(a, &s)| a - ln_gamma_pos(s)),
    ))
}

/// Per-row `KL(Dir(lambda_k) || Dir(eta 1_V))` against the symmetric prior `eta > 0`.
///
/// Online LDA's bound (Hoffman et al. 2010, Eq. 3) contains `-sum_k KL(q(beta_k) || p(beta_k | eta))`;
/// this returns the `K` terms (each `>= 0`).
///
/// # Errors
/// As [`dirichlet_expectation_rows`]; `eta` must be finite and `> 0`.
///
/// # Example
/// ```
/// use nalgebra::DMatrix;
/// let lambda = DMatrix::from_row_slice(1, 3, &[0.5, 0.5, 0.5]);
/// let kl = expfam::dirichlet_kl_rows_to_symmetric(&lambda, 0.5).unwrap();
/// assert!(kl[0].abs() < 1e-13);
/// ```
pub fn dirichlet_kl_rows_to_symmetric(lambda: &DMatrix<f64>, eta: f64) -> Result<DVector<f64>> {
    check::positive("eta", eta)?;
    let e = dirichlet_expectation_rows(lambda)?;
    let ln_b = dirichlet_log_normalizer_rows(lambda)?;
    let k = lambda.nrows();
    let v = lambda.ncols() as f64;
    let ln_b_prior = v * ln_gamma_pos(eta) - ln_gamma_pos(v * eta);
    let mut lin = vec![0.0; k];
    for (lcol, ecol) in lambda
        .as_slice()
        .chunks_exact(k)
        .zip(e.as_slice().chunks_exact(k))
    {
        for ((acc, &l), &el) in lin.iter_mut().zip(lcol).zip(ecol) {
            *acc += (l - eta) * el;
        }
    }
    Ok(DVector::from_iterator(
        k,
        (0..k).map(|i| (ln_b_prior - ln_b[i] + lin[i]).max(0.0)),
    ))
}
