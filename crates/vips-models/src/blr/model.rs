//! BLR as a [`VipsModel`]: E-step with Pólya-Gamma expectations, M-step to `N(mu, Sigma)`,
//! Gamma hyperprior update (000 Sec. 6, Algorithm 5; 003 Sec. 6).

use std::sync::Arc;

use dp_core::{ContributionBuffer, Release, ReleaseSpec, SymmetricBlock, VectorBlock};
use expfam::{
    ExponentialFamily, Gamma, GaussianNatural, MvGaussian, gamma_precision_posterior_from_gaussian,
};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use serde::Serialize;

use super::sensitivity::{S1_BOUND, S2_BOUND, expected_xi};
use super::{BlrConfig, BlrError, BlrRecord, Features, Hyperprior};
use crate::engine::{EngineError, RecordError, VipsModel};

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
/// let model = Blr::new(BlrConfig::builder(2).build()?);
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
    posterior: Arc<MvGaussian>,
    eigenvalues_raised: usize,
    failed_updates: u64,
}

/// BLR's M-step target from one release: `h = N s1~` and the likelihood precision `N s2~`
/// (what the SVI step blends), and how many eigenvalues of the released `s2` the wall's
/// projection raised.
#[derive(Clone, Debug)]
pub struct BlrTarget {
    h: DVector<f64>,
    lik_precision: DMatrix<f64>,
    eigenvalues_raised: usize,
}

/// BLR's handles to its two released blocks.
#[derive(Clone, Copy, Debug)]
pub struct BlrBlocks {
    /// `s1 = sum (y_n - 1/2) x_n`.
    pub s1: VectorBlock,
    /// `s2 = sum <xi_n> x_n x_n^T`.
    pub s2: SymmetricBlock,
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
        let post = &self.posterior;
        GlobalView {
            dim: self.h.len(),
            mean: post.mean().as_slice(),
            covariance_diagonal: post.cov().diagonal().as_slice().to_vec(),
            alpha_mean: self.alpha_mean,
            alpha: self.alpha,
            eigenvalues_raised_last_release: self.eigenvalues_raised,
        }
        .serialize(s)
    }
}

impl BlrGlobal {
    /// The current `q(m) = N(mu, Sigma)`.
    pub fn posterior(&self) -> &MvGaussian {
        &self.posterior
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

    /// The prior `p(alpha)` (`None` for a fixed precision) and its mean.
    fn alpha_prior(&self) -> Result<(Option<Gamma>, f64), EngineError> {
        match self.config.prior() {
            Hyperprior::Gamma { shape, rate } => {
                let g = Gamma::new(shape, rate).map_err(|_| EngineError::Model {
                    model: "blr",
                    reason: "the Gamma hyperprior is not a valid distribution",
                })?;
                Ok((Some(g), g.mean()))
            }
            Hyperprior::Fixed { alpha } => Ok((None, alpha)),
        }
    }
}

impl VipsModel for Blr {
    type Record = BlrRecord;
    type Global = BlrGlobal;
    type Target = BlrTarget;
    type Natural = Arc<MvGaussian>;
    type Scratch = ();
    type Blocks = BlrBlocks;

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

    fn release_spec(&self) -> Result<(ReleaseSpec, BlrBlocks), EngineError> {
        let d = self.config.dim();
        let mut b = ReleaseSpec::builder("blr");
        let s1 = b.vector("s1", d, S1_BOUND)?;
        let s2 = b.symmetric("s2", d, S2_BOUND)?;
        b.eigenvalue_floor(s2, self.config.floor())?;
        Ok((b.build()?, BlrBlocks { s1, s2 }))
    }

    fn init_global(&self, _rng: &mut dyn Rng) -> Result<BlrGlobal, EngineError> {
        let d = self.config.dim();
        let (alpha, alpha_mean) = self.alpha_prior()?;
        let h = DVector::zeros(d);
        let lik_precision = DMatrix::zeros(d, d);
        let posterior = MvGaussian::new(
            DVector::zeros(d),
            DMatrix::from_diagonal_element(d, d, 1.0 / alpha_mean),
        )
        .map_err(|_| EngineError::Model {
            model: "blr",
            reason: "the prior N(0, I / <alpha>) is not a valid Gaussian",
        })?;
        Ok(BlrGlobal {
            h,
            lik_precision,
            alpha,
            alpha_mean,
            posterior: Arc::new(posterior),
            eigenvalues_raised: 0,
            failed_updates: 0,
        })
    }

    fn expected_natural(&self, global: &BlrGlobal) -> Result<Arc<MvGaussian>, EngineError> {
        Ok(Arc::clone(&global.posterior))
    }

    fn new_scratch(&self) {}

    fn record_statistic(
        &self,
        blocks: &BlrBlocks,
        natural: &Arc<MvGaussian>,
        record: &BlrRecord,
        _scratch: &mut (),
        out: &mut ContributionBuffer,
    ) -> Result<(), RecordError> {
        let d = self.config.dim();
        let x = record.features();
        if x.min_dim() > d || matches!(x, Features::Dense(v) if v.len() != d) {
            // Unreachable through `fit` and `engine::fit`, which reject such records before any
            // release (`check_records`); the wall's policy handles it (zero in a private
            // release, an error in a non-private one).
            return Err(RecordError::new(
                "a feature vector longer than the model's dimension",
            ));
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
                out.dense(blocks.s1)
                    .iter_mut()
                    .zip(v)
                    .for_each(|(o, xv)| *o = c * xv);
                out.add_outer_product(blocks.s2, xi, v);
            }
            Features::Sparse { indices, values } => {
                for (a, (&i, &vi)) in indices.iter().zip(values).enumerate() {
                    out.push(blocks.s1, i as usize, c * vi);
                    for (&j, &vj) in indices[a..].iter().zip(&values[a..]) {
                        out.add_symmetric(blocks.s2, i as usize, j as usize, xi * vi * vj);
                    }
                }
            }
        }
        Ok(())
    }

    fn global_target(
        &self,
        blocks: &BlrBlocks,
        release: &Release,
        _natural: &Arc<MvGaussian>,
        population: f64,
    ) -> Result<BlrTarget, EngineError> {
        Ok(BlrTarget {
            h: release.vector(blocks.s1)? * population,
            lik_precision: release.symmetric(blocks.s2)? * population,
            eigenvalues_raised: release.released(blocks.s2)?.eigenvalues_raised(),
        })
    }

    fn blend(&self, global: &mut BlrGlobal, target: &BlrTarget, rho: f64) {
        global.h *= 1.0 - rho;
        global.h.axpy(rho, &target.h, 1.0);
        global
            .lik_precision
            .as_mut_slice()
            .iter_mut()
            .zip(target.lik_precision.as_slice())
            .for_each(|(g, t)| *g = (1.0 - rho) * *g + rho * t);
        global.eigenvalues_raised = target.eigenvalues_raised;
    }

    /// 000 Algorithm 5 (2): `q(m)` from the blended `nu~` with the current `<alpha>`, then
    /// `q(alpha)`. A precision that cannot be factorised keeps the previous `q(m)` and is
    /// counted ([`BlrGlobal::failed_updates`]).
    fn after_blend(&self, global: &mut BlrGlobal) -> Result<(), EngineError> {
        match Self::posterior_from(&global.h, &global.lik_precision, global.alpha_mean) {
            Ok(post) => {
                if let (Some(prior), Hyperprior::Gamma { .. }) =
                    (self.alpha_prior()?.0, self.config.prior())
                    && let Ok(q) = gamma_precision_posterior_from_gaussian(&prior, &post)
                {
                    global.alpha = Some(q);
                    global.alpha_mean = q.mean();
                }
                global.posterior = Arc::new(post);
            }
            Err(_) => global.failed_updates += 1,
        }
        Ok(())
    }
}
