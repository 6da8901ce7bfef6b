//! Dirichlet expectations for LDA: `E[ln theta_d]` of one document's Dirichlet and the KL terms of
//! a `K x V` topic matrix against the symmetric prior.
//!
//! Row `k` of `lambda` holds the variational Dirichlet parameters of topic `k` over a vocabulary
//! of `V` words. Online LDA's ELBO / perplexity bound (Hoffman, Blei, Bach 2010) needs
//! `KL(Dir(lambda_k) || Dir(eta 1))`, built here from the row-wise
//! `E[ln beta_kv] = psi(lambda_kv) - psi(sum_v lambda_kv)` and normalisers `ln B(lambda_k)`
//! (crate-private: LDA's E-step computes its `exp(E[ln beta])` matrix itself in f32 SIMD).
//! Matrices are `nalgebra` (column-major); the functions walk memory in storage order.

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

/// `E[ln theta] = psi(alpha) - psi(sum alpha)` for one Dirichlet (e.g. LDA's per-document
/// `gamma_d`), written into `out` (no allocation; for LDA's per-document loop). The entry holding
/// more than half of the sum keeps full relative precision. (`Dirichlet::expected_log` is the
/// allocating form on a validated family.)
///
/// # Errors
/// [`ExpFamError::TooShort`](crate::ExpFamError::TooShort) for no entries (one entry is the point mass
/// at `theta = 1`: `E[ln theta] = 0`, as LDA with one topic needs); NaN, infinite or
/// non-positive entries give [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite) /
/// [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain);
/// [`ExpFamError::DimensionMismatch`](crate::ExpFamError::DimensionMismatch) if
/// `out.len() != alpha.len()`.
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

/// Row-wise `E[ln beta_kv] = psi(lambda_kv) - psi(sum_v lambda_kv)` for a validated `K x V`
/// matrix with finite row sums.
fn expectation_rows(lambda: &DMatrix<f64>, sums: &[f64]) -> DMatrix<f64> {
    let k = lambda.nrows();
    let mut out = DMatrix::zeros(k, lambda.ncols());
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
    fix_dominant_entries(lambda, sums, &mut out);
    out
}

/// Row-wise log-normalisers `ln B(lambda_k) = sum_v ln Gamma(lambda_kv) - ln Gamma(sum_v lambda_kv)`
/// for a validated matrix and its row sums.
fn log_normalizer_rows(lambda: &DMatrix<f64>, sums: &[f64]) -> Vec<f64> {
    let k = lambda.nrows();
    let mut acc = vec![0.0; k];
    for col in lambda.as_slice().chunks_exact(k) {
        for (a, &x) in acc.iter_mut().zip(col) {
            *a += ln_gamma_pos(x);
        }
    }
    acc.iter()
        .zip(sums)
        .map(|(a, &s)| a - ln_gamma_pos(s))
        .collect()
}

/// Per-row `KL(Dir(lambda_k) || Dir(eta 1_V))` against the symmetric prior `eta > 0`.
///
/// Online LDA's bound (Hoffman et al. 2010, Eq. 3) contains `-sum_k KL(q(beta_k) || p(beta_k | eta))`;
/// this returns the `K` terms (each `>= 0`).
///
/// # Errors
/// [`ExpFamError::TooShort`](crate::ExpFamError::TooShort) for no rows or no columns;
/// [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite) /
/// [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain) for an entry that is not finite
/// and `> 0` or a row sum that overflows; `eta` must be finite and `> 0`.
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
    validate(lambda)?;
    let sums = row_sums(lambda);
    check::all_finite("row sums of lambda", &sums)?;
    let e = expectation_rows(lambda, &sums);
    let ln_b = log_normalizer_rows(lambda, &sums);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dirichlet, ExponentialFamily};

    fn lambda(k: usize, v: usize) -> DMatrix<f64> {
        DMatrix::from_fn(k, v, |i, j| {
            0.01 + ((i * 7919 + j * 104_729) % 1000) as f64 / 37.0
        })
    }

    #[test]
    fn rows_match_single_dirichlet() {
        let l = lambda(7, 300);
        let sums = row_sums(&l);
        let e = expectation_rows(&l, &sums);
        let ln_b = log_normalizer_rows(&l, &sums);
        for k in 0..7 {
            let d = Dirichlet::new(l.row(k).iter().cloned().collect::<Vec<_>>()).unwrap();
            let want = d.expected_log();
            for v in 0..300 {
                assert!((e[(k, v)] - want[v]).abs() <= 1e-14 * (1.0 + want[v].abs()));
            }
            assert!((ln_b[k] - d.log_partition()).abs() <= 1e-11 * (1.0 + ln_b[k].abs()));
        }
    }

    #[test]
    fn dominant_entries_keep_full_relative_precision() {
        // psi(1.5) - psi(1.5 + 1e-8) ~ -9.348e-9 (mpmath); the plain difference loses 7 digits.
        let want = -9.348_021_964_006_962e-9;
        let l = DMatrix::from_row_slice(1, 2, &[1.5, 1e-8]);
        let e = expectation_rows(&l, &row_sums(&l));
        assert!(((e[(0, 0)] - want) / want).abs() < 1e-12, "{}", e[(0, 0)]);
        let mut out = [0.0; 2];
        dirichlet_expectation_into(&[1.5, 1e-8], &mut out).unwrap();
        assert!(((out[0] - want) / want).abs() < 1e-12, "{}", out[0]);
    }
}
