//! BLR as a [`VipsModel`]: E-step with Pólya-Gamma expectations, M-step to `N(mu, Sigma)`,
//! Gamma hyperprior update (000 Sec. 6, Algorithm 5; 003 Sec. 6).

use std::sync::Arc;

use dp_core::{BlockSpec, ContributionBuffer, Release, ReleaseSpec};
use expfam::{
    ExponentialFamily, Gamma, GaussianNatural, MvGaussian, gamma_precision_posterior_from_gaussian,
};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use serde::Serialize;

use super::sensitivity::{S1_BOUND, S2_BOUND, expected_xi};
use super::{BlrConfig, BlrError, BlrRecord, Features, Hyperprior};
use crate::engine::{EngineError, VipsModel};

/// Private Bayesian logistic regression with Pólya-Gamma augmentation.
///
/// The statistic has two blocks, released together every iteration (003 Eq. 63):
/// `s1 = sum (y_n - 1/2) x_n` (vector, bound 1/2) and `s2 = sum <xi_n> x_n x_n^T` (symmetric,
/// Frobenius bound 1/4, Analyze-Gauss noise, projected onto `lambda_min >= floor`). See
/// [`crate::blr::sensitivity`] for the derivation.
///
/// M-step (000 Eq. 38-41): `Lambda = N s2~ + <alpha> I`, `h = N s1~`, `q(m) = N(Lambda^-1 h,
/// Lambda^-1)`; then `q(alpha)` by Eq. 40. SVI blends `(h, N s2~)` with step `rho_t`.
///
/// # Example
/// ```
/// use vips_models::blr::{Blr, BlrConfig, BlrRecord, Features, fit};
/// use vips_models::engine::{Privacy, StepSize, Stop, SviConfig};
/// let records: Vec<BlrRecord> = (0..200)
///     .map(|i| {
///         let t = (i as f64 * 0.37).sin();
///         BlrRecord::new(Features::Dense(vec![0.7 * t, 0.3]), t > 0.0).unwrap().0
///     })
///     .collect();
/// let model = Blr::new(BlrConfig::new(2)?);
/// let svi = SviConfig::builder()
///     .expected_batch_size(200.0)
///     .step(StepSize::Constant { rho: 1.0 })
///     .stop(Stop::Iterations { iterations: 10 })
///     .privacy(Privacy::NonPrivate)
///     .build()?;
/// let fitted = fit(&model, records, &svi)?.result;
/// assert!(fitted.global.posterior().mean()[0] > 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Blr {
    config: BlrConfig,
}

/// The global variational parameters: the (blended) likelihood parts `h = N s1~` and
/// `P = N s2~`, `q(alpha)`, and the current `q(m)`.
#[derive(Clone, Debug)]
pub struct BlrGlobal {
    h: DVector<f64>,
    lik_precision: DMatrix<f64>,
    alpha: Option<Gamma>,
    alpha_mean: f64,
    posterior: Option<Arc<MvGaussian>>,
    eigenvalues_raised: usize,
    failed_updates: u64,
}

#[derive(Serialize)]
struct GlobalView<'a> {
    dim: usize,
    mean: &'a [f64],
    covariance_diagonal: Vec<f64>,
    alpha_mean: f64,
    alpha: Option<Gamma>,
    eigenvalues_raised_last_release: usize,
}

impl Serialize for BlrGlobal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let post = self.posterior.as_deref();
        GlobalView {
            dim: self.h.len(),
            mean: post.map_or(&[][..], |p| p.mean().as_slice()),
            covariance_diagonal: post
                .map_or(Vec::new(), |p| p.cov().diagonal().as_slice().to_vec()),
            alpha_mean: self.alpha_mean,
            alpha: self.alpha,
            eigenvalues_raised_last_release: self.eigenvalues_raised,
        }
        .serialize(s)
    }
}

impl BlrGlobal {
    /// The current `q(m) = N(mu, Sigma)`.
    ///
    /// # Panics
    /// Never for a global produced by [`Blr`]'s `init_global` or `blend`; an M-step *target*
    /// (internal to the engine) has no posterior.
    pub fn posterior(&self) -> &MvGaussian {
        self.posterior
            .as_deref()
            .expect("a fitted BlrGlobal always carries q(m)")
    }

    /// `q(alpha)` (`None` for a fixed prior precision).
    pub fn alpha(&self) -> Option<Gamma> {
        self.alpha
    }

    /// The prior precision `<alpha>` used by the next M-step.
    pub fn alpha_mean(&self) -> f64 {
        self.alpha_mean
    }

    /// `h = N s1~` (blended).
    pub fn h(&self) -> &DVector<f64> {
        &self.h
    }

    /// `N s2~` (blended, positive semi-definite).
    pub fn likelihood_precision(&self) -> &DMatrix<f64> {
        &self.lik_precision
    }

    /// Eigenvalues of the last released `s2` that the projection raised to the floor.
    pub fn eigenvalues_raised(&self) -> usize {
        self.eigenvalues_raised
    }

    /// M-steps whose precision could not be factorised (the previous `q(m)` was kept).
    pub fn failed_updates(&self) -> u64 {
        self.failed_updates
    }
}

impl Blr {
    /// The model with the given settings.
    pub fn new(config: BlrConfig) -> Self {
        Self { config }
    }

    /// The settings.
    pub fn config(&self) -> &BlrConfig {
        &self.config
    }

    /// Checks that every record fits the model's dimension.
    ///
    /// # Errors
    /// [`BlrError::Empty`] for no records; [`BlrError::DimensionMismatch`] naming the first bad record.
    pub fn check_records(&self, records: &[BlrRecord]) -> Result<(), BlrError> {
        if records.is_empty() {
            return Err(BlrError::Empty("no records".into()));
        }
        let d = self.config.dim();
        for r in records {
            let ok = match r.features() {
                Features::Dense(v) => v.len() == d,
                f @ Features::Sparse { .. } => f.min_dim() <= d,
            };
            if !ok {
                return Err(BlrError::DimensionMismatch {
                    what: "record features vs model dimension",
                    expected: d,
                    found: r.features().min_dim(),
                });
            }
        }
        Ok(())
    }

    /// `q(m)` from `h` and `P` with prior precision `alpha`: `N((P + alpha I)^-1 h, (P + alpha
    /// I)^-1)` (000 Eq. 41).
    ///
    /// # Errors
    /// [`BlrError::Posterior`] if `P + alpha I` is not positive definite.
    pub fn posterior_from(
        h: &DVector<f64>,
        lik_precision: &DMatrix<f64>,
        alpha: f64,
    ) -> Result<MvGaussian, BlrError> {
        let mut precision = lik_precision.clone();
        for i in 0..precision.nrows() {
            precision[(i, i)] += alpha;
        }
        let natural = GaussianNatural::from_precision(h.clone(), precision)?;
        Ok(MvGaussian::from_natural(&natural)?)
    }

    fn alpha_prior(&self) -> (Option<Gamma>, f64) {
        match self.config.prior() {
            Hyperprior::Gamma { shape, rate } => {
                let g = Gamma::new(shape, rate).expect("validated by BlrConfig");
                (Some(g), g.mean())
            }
            Hyperprior::Fixed { alpha } => (None, alpha),
        }
    }
}

impl VipsModel for Blr {
    type Record = BlrRecord;
    type Global = BlrGlobal;
    type Natural = Arc<MvGaussian>;
    type Scratch = ();

    /// Rejects records whose dimension does not match the model's (before any release).
    fn check_records(&self, records: &[BlrRecord]) -> Result<(), EngineError> {
        Blr::check_records(self, records).map_err(|e| EngineError::InvalidRecords {
            model: "blr".into(),
            reason: e.to_string(),
        })
    }

    fn name(&self) -> &str {
        "blr"
    }

    fn release_spec(&self) -> Result<ReleaseSpec, EngineError> {
        let d = self.config.dim();
        Ok(ReleaseSpec::new(vec![
            BlockSpec::vector("s1", d, S1_BOUND)?,
            BlockSpec::symmetric("s2", d, S2_BOUND)?.with_eigenvalue_floor(self.config.floor())?,
        ])?)
    }

    fn init_global(&self, _rng: &mut dyn Rng) -> BlrGlobal {
        let d = self.config.dim();
        let (alpha, alpha_mean) = self.alpha_prior();
        let h = DVector::zeros(d);
        let lik_precision = DMatrix::zeros(d, d);
        let posterior = MvGaussian::new(
            DVector::zeros(d),
            DMatrix::from_diagonal_element(d, d, 1.0 / alpha_mean),
        )
        .expect("a positive multiple of the identity is a valid covariance");
        BlrGlobal {
            h,
            lik_precision,
            alpha,
            alpha_mean,
            posterior: Some(Arc::new(posterior)),
            eigenvalues_raised: 0,
            failed_updates: 0,
        }
    }

    fn expected_natural(&self, global: &BlrGlobal) -> Arc<MvGaussian> {
        global
            .posterior
            .clone()
            .expect("a fitted BlrGlobal always carries q(m)")
    }

    fn new_scratch(&self) {}

    fn record_statistic(
        &self,
        natural: &Arc<MvGaussian>,
        record: &BlrRecord,
        _scratch: &mut (),
        out: &mut ContributionBuffer,
    ) {
        let d = self.config.dim();
        let x = record.features();
        if x.min_dim() > d || matches!(x, Features::Dense(v) if v.len() != d) {
            // Unreachable through `fit` and `engine::fit`, which reject such records before any
            // release (`check_records`). Defensively the record contributes zero: no error from
            // inside a release, which would reveal that a sampled record triggered it.
            return;
        }
        let mean = natural.mean().as_slice();
        let cov = natural.cov().as_slice();
        let m = x.dot(mean);
        let quad = x.quadratic_form(cov, d).max(0.0);
        // 000 Eq. 36: q(xi_n) = PG(1, sqrt(x^T <m m^T> x)).
        let xi = expected_xi((m * m + quad).sqrt());
        let c = record.centred_label();
        match x {
            Features::Dense(v) => {
                out.dense(0)
                    .iter_mut()
                    .zip(v)
                    .for_each(|(o, xv)| *o = c * xv);
                out.add_outer_product(1, xi, v);
            }
            Features::Sparse { indices, values } => {
                for (a, (&i, &vi)) in indices.iter().zip(values).enumerate() {
                    out.push(0, i as usize, c * vi);
                    for (&j, &vj) in indices[a..].iter().zip(&values[a..]) {
                        out.add_symmetric(1, i as usize, j as usize, xi * vi * vj);
                    }
                }
            }
        }
    }

    fn global_target(&self, release: &Release, population: f64) -> BlrGlobal {
        let blocks = release.blocks();
        let s1 = blocks[0].as_vector().expect("block 0 is the vector s1");
        let s2 = blocks[1].as_matrix().expect("block 1 is the symmetric s2");
        let (alpha, alpha_mean) = self.alpha_prior();
        BlrGlobal {
            h: s1 * population,
            lik_precision: s2 * population,
            alpha,
            alpha_mean,
            posterior: None,
            eigenvalues_raised: blocks[1].eigenvalues_raised(),
            failed_updates: 0,
        }
    }

    fn blend(&self, global: &mut BlrGlobal, target: &BlrGlobal, rho: f64) {
        global.h *= 1.0 - rho;
        global.h.axpy(rho, &target.h, 1.0);
        global
            .lik_precision
            .as_mut_slice()
            .iter_mut()
            .zip(target.lik_precision.as_slice())
            .for_each(|(g, t)| *g = (1.0 - rho) * *g + rho * t);
        global.eigenvalues_raised = target.eigenvalues_raised;
        // 000 Algorithm 5 (2): q(m) from the blended nu~ with the current <alpha>, then q(alpha).
        match Self::posterior_from(&global.h, &global.lik_precision, global.alpha_mean) {
            Ok(post) => {
                if let (Some(prior), Hyperprior::Gamma { .. }) =
                    (self.alpha_prior().0, self.config.prior())
                    && let Ok(q) = gamma_precision_posterior_from_gaussian(&prior, &post)
                {
                    global.alpha = Some(q);
                    global.alpha_mean = q.mean();
                }
                global.posterior = Some(Arc::new(post));
            }
            Err(_) => global.failed_updates += 1,
        }
    }
}
