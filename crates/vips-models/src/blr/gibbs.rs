//! A Pólya-Gamma Gibbs sampler for Bayesian logistic regression (Polson, Scott & Windle 2013),
//! the reference the variational posterior is tested against. Not private: it reads the records
//! directly; use it on public or synthetic data.
//!
//! With `p(m) = N(0, alpha^-1 I)` and `kappa_n = y_n - 1/2`:
//! `omega_n | m ~ PG(1, x_n^T m)`, `m | omega ~ N(V X^T kappa, V)`,
//! `V = (X^T diag(omega) X + alpha I)^-1`.

use nalgebra::{DMatrix, DVector};
use polya_gamma::PolyaGamma;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use super::{BlrError, BlrRecord};

/// Posterior summaries from a Gibbs run.
#[derive(Clone, Debug)]
pub struct GibbsSummary {
    /// Posterior mean of the weights (average over kept draws).
    pub mean: DVector<f64>,
    /// Posterior standard deviation of each weight.
    pub sd: DVector<f64>,
    /// Number of draws kept.
    pub draws: usize,
}

/// Runs `burn_in + draws` Gibbs sweeps with a fixed prior precision `alpha` and summarises the
/// kept draws.
///
/// # Errors
/// [`BlrError::Empty`] for no records or no draws; [`BlrError::InvalidParameter`] for
/// `alpha <= 0`; [`BlrError::NotPositiveDefinite`] if a conditional precision cannot be
/// factorised; [`BlrError::PolyaGamma`] if the sampler refuses a tilt.
///
/// # Example
/// ```
/// use rand::SeedableRng;
/// use vips_models::blr::{BlrRecord, Features, gibbs::gibbs};
/// let recs: Vec<BlrRecord> = (0..50)
///     .map(|i| BlrRecord::new(Features::Dense(vec![0.9 * (i as f64 * 0.7).sin()]), i % 3 != 0).unwrap().0)
///     .collect();
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(1);
/// let s = gibbs(&recs, 1, 1.0, 50, 200, &mut rng)?;
/// assert_eq!(s.draws, 200);
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
pub fn gibbs<R: Rng + ?Sized>(
    records: &[BlrRecord],
    dim: usize,
    alpha: f64,
    burn_in: usize,
    draws: usize,
    rng: &mut R,
) -> Result<GibbsSummary, BlrError> {
    if records.is_empty() || draws == 0 || dim == 0 {
        return Err(BlrError::Empty(
            "Gibbs needs records, a dimension and draws",
        ));
    }
    if !(alpha > 0.0 && alpha.is_finite()) {
        return Err(BlrError::invalid("alpha", alpha, "must be finite and > 0"));
    }
    let xs: Vec<Vec<f64>> = records.iter().map(|r| r.features().to_dense(dim)).collect();
    let mut xk = DVector::zeros(dim);
    for (x, r) in xs.iter().zip(records) {
        for (a, v) in xk.iter_mut().zip(x) {
            *a += r.centred_label() * v;
        }
    }
    let mut m = DVector::<f64>::zeros(dim);
    let mut sum = DVector::<f64>::zeros(dim);
    let mut sum_sq = DVector::<f64>::zeros(dim);
    for sweep in 0..burn_in + draws {
        let mut precision = DMatrix::from_diagonal_element(dim, dim, alpha);
        for x in &xs {
            let psi: f64 = x.iter().zip(m.iter()).map(|(a, b)| a * b).sum();
            let omega = PolyaGamma::new(1.0, psi)?.sample(rng);
            for j in 0..dim {
                let wj = omega * x[j];
                for i in 0..dim {
                    precision[(i, j)] += wj * x[i];
                }
            }
        }
        let chol = precision.cholesky().ok_or(BlrError::NotPositiveDefinite(
            "Gibbs precision not positive definite",
        ))?;
        let mean = chol.solve(&xk);
        // m = mean + L^-T z with z ~ N(0, I): covariance (L L^T)^-1.
        let z = DVector::from_fn(dim, |_, _| StandardNormal.sample(rng));
        let noise = chol
            .l()
            .transpose()
            .solve_upper_triangular(&z)
            .ok_or(BlrError::NotPositiveDefinite("singular Cholesky factor"))?;
        m = mean + noise;
        if sweep >= burn_in {
            sum += &m;
            sum_sq += m.component_mul(&m);
        }
    }
    let n = draws as f64;
    let mean = sum / n;
    let sd = (sum_sq / n - mean.component_mul(&mean)).map(|v| v.max(0.0).sqrt());
    Ok(GibbsSummary { mean, sd, draws })
}
