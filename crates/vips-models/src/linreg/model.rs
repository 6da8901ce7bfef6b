//! Bayesian linear regression as a [`VipsModel`]: one release of `(X^T X, X^T y, y^T y)`, a
//! Normal-Gamma posterior computed from it (003 Sec. 6 with Analyze-Gauss).

use std::sync::Arc;

use dp_core::{ContributionBuffer, Release, ReleaseSpec, SymmetricBlock, VectorBlock};
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::Rng;
use serde::Serialize;

use super::sensitivity::{JOINT_BOUND, YY_SCALE};
use super::{LinregError, LinregRecord};
use crate::engine::{EngineError, ModelFailure, RecordError, VipsModel};

/// Eigenvalue floor the wall projects the released (normalised) `A / S` onto: a positive
/// semi-definite projection in effect; the noise-scaled floor is applied afterwards
/// ([`LinregConfig::floor_scale`]).
const WALL_FLOOR: f64 = 1e-12;

/// Checked settings of [`Linreg`]: dimension and the public prior; build with
/// [`LinregConfig::builder`].
///
/// Prior (Normal-Gamma, in the units of the mapped records): noise precision
/// `tau ~ Gamma(noise_shape, noise_rate)`, weights `w | tau ~ N(0, (tau prior_precision)^-1 I)`.
///
/// # Example
/// ```
/// use vips_models::linreg::LinregConfig;
/// let cfg = LinregConfig::builder(12).prior_precision(0.5).build()?;
/// assert_eq!(cfg.dim(), 12);
/// assert!(LinregConfig::builder(12).prior_precision(-1.0).build().is_err());
/// # Ok::<(), vips_models::linreg::LinregError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinregConfig {
    dim: usize,
    prior_precision: f64,
    noise_shape: f64,
    noise_rate: f64,
    floor_scale: f64,
    min_noise_variance: f64,
}

fn positive(name: &'static str, v: f64) -> Result<f64, LinregError> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(LinregError::invalid(name, v, "must be finite and > 0"))
    }
}

/// Unchecked linreg settings; [`LinregConfigBuilder::build`] validates them.
#[derive(Clone, Copy, Debug)]
pub struct LinregConfigBuilder {
    cfg: LinregConfig,
}

impl LinregConfig {
    /// Starts a builder for `dim` features (intercept included) with the defaults: prior
    /// precision 1, noise precision `Gamma(1, 0.01)` (a prior noise variance of the order of 1%
    /// of the squared target half range), floor scale 1, minimum noise variance `1e-4`.
    pub fn builder(dim: usize) -> LinregConfigBuilder {
        LinregConfigBuilder {
            cfg: Self {
                dim,
                prior_precision: 1.0,
                noise_shape: 1.0,
                noise_rate: 0.01,
                floor_scale: 1.0,
                min_noise_variance: 1e-4,
            },
        }
    }

    /// Dimension (features including the intercept).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The prior precision `lambda`.
    pub fn prior_precision(&self) -> f64 {
        self.prior_precision
    }

    /// `(shape, rate)` of the noise-precision prior.
    pub fn noise_prior(&self) -> (f64, f64) {
        (self.noise_shape, self.noise_rate)
    }

    /// `kappa` of the noise-scaled floor.
    pub fn floor_scale(&self) -> f64 {
        self.floor_scale
    }

    /// The lower bound on the residual variance per record.
    pub fn min_noise_variance(&self) -> f64 {
        self.min_noise_variance
    }
}

impl LinregConfigBuilder {
    /// Prior precision `lambda` of the weights relative to the noise (a ridge penalty; finite
    /// and `> 0`, default 1).
    pub fn prior_precision(mut self, lambda: f64) -> Self {
        self.cfg.prior_precision = lambda;
        self
    }

    /// Shape and rate of the Gamma prior on the noise precision (finite and `> 0`; default
    /// `(1, 0.01)`).
    pub fn noise_prior(mut self, shape: f64, rate: f64) -> Self {
        self.cfg.noise_shape = shape;
        self.cfg.noise_rate = rate;
        self
    }

    /// `kappa` of the noise-scaled eigenvalue floor: after a private release, the eigenvalues of
    /// `A` below `kappa s sqrt(dim)` are raised to it, where `s` is the noise standard deviation
    /// of one entry of `A` (a public number: the wall reports it). `0` disables it. Non-private
    /// releases have `s = 0`, so no floor. Finite and `>= 0`; default 1.
    pub fn floor_scale(mut self, kappa: f64) -> Self {
        self.cfg.floor_scale = kappa;
        self
    }

    /// Lower bound on the residual variance per record used when the noised `y^T y - m^T
    /// Lambda m` is too small (a noisy release can make it negative). Finite and `> 0`; default
    /// `1e-4`.
    pub fn min_noise_variance(mut self, v: f64) -> Self {
        self.cfg.min_noise_variance = v;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`LinregError::Empty`] for `dim = 0`; [`LinregError::InvalidParameter`] for a prior
    /// precision, noise prior or minimum noise variance that is not finite and `> 0`, or a floor
    /// scale that is not finite and `>= 0`.
    pub fn build(self) -> Result<LinregConfig, LinregError> {
        let c = self.cfg;
        if c.dim == 0 {
            return Err(LinregError::Empty("no features"));
        }
        positive("prior precision", c.prior_precision)?;
        positive("noise prior shape", c.noise_shape)?;
        positive("noise prior rate", c.noise_rate)?;
        if !(c.floor_scale >= 0.0 && c.floor_scale.is_finite()) {
            return Err(LinregError::invalid(
                "floor scale",
                c.floor_scale,
                "must be finite and >= 0",
            ));
        }
        positive("minimum noise variance", c.min_noise_variance)?;
        Ok(c)
    }
}

/// A Normal-Gamma posterior: `tau ~ Gamma(shape, rate)`, `w | tau ~ N(mean, (tau
/// precision)^-1)`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NormalGamma {
    mean: DVector<f64>,
    precision: DMatrix<f64>,
    #[serde(skip)]
    covariance: DMatrix<f64>,
    shape: f64,
    rate: f64,
}

impl NormalGamma {
    /// The conjugate posterior from the sums `A = X^T X`, `b = X^T y`, `c = y^T y` of `n`
    /// records (a public `n` for private runs) under the prior of `config`:
    /// `Lambda = A + lambda I`, `m = Lambda^-1 b`, `a = a0 + n/2`,
    /// `b' = b0 + (c - m^T Lambda m) / 2` (the residual term is floored at `n v_min / 2`).
    ///
    /// # Errors
    /// [`LinregError::DimensionMismatch`] for mismatched sizes; [`LinregError::NotPositiveDefinite`] if
    /// `A + lambda I` is not positive definite.
    ///
    /// # Example
    /// ```
    /// use nalgebra::{DMatrix, DVector};
    /// use vips_models::linreg::{LinregConfig, NormalGamma};
    /// let cfg = LinregConfig::builder(1).build()?;
    /// let post = NormalGamma::from_sums(&cfg, &DMatrix::from_element(1, 1, 9.0), &DVector::from_element(1, 18.0), 40.0, 10.0)?;
    /// assert!((post.mean()[0] - 1.8).abs() < 1e-12);
    /// # Ok::<(), vips_models::linreg::LinregError>(())
    /// ```
    pub fn from_sums(
        config: &LinregConfig,
        a: &DMatrix<f64>,
        b: &DVector<f64>,
        c: f64,
        n: f64,
    ) -> Result<Self, LinregError> {
        Self::from_sums_with_noise(config, a, b, c, n, 0.0, 0.0)
    }

    /// As [`NormalGamma::from_sums`] for released sums whose entries of `b` and `c` carry
    /// Gaussian noise of standard deviations `b_noise_std` and `c_noise_std` (public numbers).
    /// The residual `c - m^T b` is debiased for the noise in `b` (`m^T b = b^T Lambda^-1 b`
    /// grows by `b_noise_std^2 tr(Lambda^-1)` in expectation) and floored at `c_noise_std`, so
    /// that the noise cannot make the noise variance collapse. Post-processing only.
    ///
    /// # Errors
    /// As [`NormalGamma::from_sums`].
    pub fn from_sums_with_noise(
        config: &LinregConfig,
        a: &DMatrix<f64>,
        b: &DVector<f64>,
        c: f64,
        n: f64,
        b_noise_std: f64,
        c_noise_std: f64,
    ) -> Result<Self, LinregError> {
        let d = config.dim;
        if a.nrows() != d || a.ncols() != d || b.len() != d {
            return Err(LinregError::DimensionMismatch {
                what: "statistics vs model dimension",
                expected: d,
                found: b.len(),
            });
        }
        let mut precision = a.clone();
        for i in 0..d {
            precision[(i, i)] += config.prior_precision;
        }
        let chol = precision
            .clone()
            .cholesky()
            .ok_or(LinregError::NotPositiveDefinite(
                "A + lambda I is not positive definite",
            ))?;
        let mean = chol.solve(b);
        let covariance = chol.inverse();
        let residual = (c - mean.dot(b) + b_noise_std.powi(2) * covariance.trace())
            .max(n * config.min_noise_variance)
            .max(c_noise_std);
        Ok(Self {
            mean,
            precision,
            covariance,
            shape: config.noise_shape + n / 2.0,
            rate: config.noise_rate + residual / 2.0,
        })
    }

    /// Posterior mean of the weights.
    pub fn mean(&self) -> &DVector<f64> {
        &self.mean
    }

    /// `Lambda` (the weights' precision is `tau Lambda`).
    pub fn precision(&self) -> &DMatrix<f64> {
        &self.precision
    }

    /// `Lambda^-1`.
    pub fn covariance(&self) -> &DMatrix<f64> {
        &self.covariance
    }

    /// `(shape, rate)` of `q(tau)`.
    pub fn noise_precision(&self) -> (f64, f64) {
        (self.shape, self.rate)
    }

    /// The posterior predictive at `x`, a Student-t: `(location, scale^2, degrees of
    /// freedom)` with `location = m^T x`, `scale^2 = (rate / shape) (1 + x^T Lambda^-1 x)`,
    /// `dof = 2 shape`.
    pub fn predictive_t(&self, x: &[f64]) -> (f64, f64, f64) {
        let xv = DVector::from_column_slice(x);
        let loc = self.mean.dot(&xv);
        let quad = (self.covariance.clone() * &xv).dot(&xv).max(0.0);
        (loc, self.rate / self.shape * (1.0 + quad), 2.0 * self.shape)
    }

    /// Predictive mean and variance at `x` (the Student-t's variance `scale^2 dof / (dof - 2)`).
    pub fn predict(&self, x: &[f64]) -> (f64, f64) {
        let (loc, s2, dof) = self.predictive_t(x);
        let var = if dof > 2.0 {
            s2 * dof / (dof - 2.0)
        } else {
            f64::INFINITY
        };
        (loc, var)
    }
}

/// Private Bayesian linear regression on the VIPS engine.
///
/// The statistic has three blocks, released together (003 Eq. 63, bounds in
/// [`super::sensitivity`]): `A = sum x x^T` (symmetric, Frobenius bound 1, Analyze-Gauss noise,
/// projected onto the positive semi-definite cone by the wall, then raised to the noise-scaled
/// floor of [`LinregConfig::floor_scale`]), `b = sum y x` (vector, bound 1) and `c = sum y^2`
/// (scalar, bound 1). The E-step does not depend on the current parameters, so one release of
/// the full data (Poisson rate `q = 1`, one iteration) already holds everything the conjugate
/// posterior needs: more releases would only split the budget. The M-step is the Normal-Gamma
/// posterior [`NormalGamma::from_sums`] with the public population in place of the count.
///
/// # Example
/// ```
/// use vips_models::engine::Privacy;
/// use vips_models::linreg::{Linreg, LinregConfig, LinregRecord, batch_config, fit};
/// let records: Vec<LinregRecord> = (0..200)
///     .map(|i| {
///         let t = (i as f64 * 0.37).sin();
///         LinregRecord::new(vec![0.7 * t, 0.5], 0.6 * t).unwrap().0
///     })
///     .collect();
/// let model = Linreg::new(LinregConfig::builder(2).prior_precision(1e-3).build()?);
/// let fitted = fit(&model, records, &batch_config(200, Privacy::NonPrivate, None)?)?.result;
/// assert!((fitted.global.posterior().mean()[0] - 0.6 / 0.7).abs() < 1e-3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Linreg {
    config: LinregConfig,
}

/// The global parameters: the (blended) sums, the floor applied, and the posterior.
#[derive(Clone, Debug)]
pub struct LinregGlobal {
    /// The blended sums and the public noise levels and floor of the latest release.
    sums: LinregTarget,
    floor_raised: usize,
    posterior: Arc<NormalGamma>,
    failed_updates: u64,
}

/// The M-step target from one release: the sums `(A, b, c)` in sum units (what the SVI step
/// blends) and the public noise levels and floor the posterior is computed with.
#[derive(Clone, Debug)]
pub struct LinregTarget {
    a: DMatrix<f64>,
    b: DVector<f64>,
    c: f64,
    population: f64,
    floor: f64,
    xy_noise_std: f64,
    yy_noise_std: f64,
}

/// Linreg's handles to its three released blocks.
#[derive(Clone, Copy, Debug)]
pub struct LinregBlocks {
    /// `X^T X` (symmetric).
    pub xx: SymmetricBlock,
    /// `X^T y`.
    pub xy: VectorBlock,
    /// `y^T y` (one entry).
    pub yy: VectorBlock,
}

#[derive(Serialize)]
struct GlobalView<'a> {
    dim: usize,
    mean: &'a [f64],
    noise_shape: f64,
    noise_rate: f64,
    eigenvalue_floor: f64,
    eigenvalues_raised: usize,
}

impl Serialize for LinregGlobal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let post = &self.posterior;
        GlobalView {
            dim: self.sums.b.len(),
            mean: post.mean.as_slice(),
            noise_shape: post.shape,
            noise_rate: post.rate,
            eigenvalue_floor: self.sums.floor,
            eigenvalues_raised: self.floor_raised,
        }
        .serialize(s)
    }
}

impl LinregGlobal {
    /// The posterior.
    pub fn posterior(&self) -> &NormalGamma {
        &self.posterior
    }

    /// The released `A = X^T X` after the projections (sum units).
    pub fn xx(&self) -> &DMatrix<f64> {
        &self.sums.a
    }

    /// The released `b = X^T y` (sum units).
    pub fn xy(&self) -> &DVector<f64> {
        &self.sums.b
    }

    /// The released `c = y^T y` (sum units).
    pub fn yy(&self) -> f64 {
        self.sums.c
    }

    /// The noise-scaled eigenvalue floor applied to `A` (0 when non-private).
    pub fn eigenvalue_floor(&self) -> f64 {
        self.sums.floor
    }

    /// How many eigenvalues of `A` the noise-scaled floor raised.
    pub fn eigenvalues_raised(&self) -> usize {
        self.floor_raised
    }

    /// M-steps whose precision could not be factorised (the previous posterior was kept).
    pub fn failed_updates(&self) -> u64 {
        self.failed_updates
    }
}

/// Raises the eigenvalues of the symmetric `a` below `floor` to `floor`; returns how many.
fn raise_eigenvalues(a: &mut DMatrix<f64>, floor: f64) -> usize {
    if floor <= 0.0 {
        return 0;
    }
    let eig = SymmetricEigen::new(a.clone());
    let raised = eig.eigenvalues.iter().filter(|&&l| l < floor).count();
    if raised > 0 {
        let vals = eig.eigenvalues.map(|l| l.max(floor));
        *a = &eig.eigenvectors * DMatrix::from_diagonal(&vals) * eig.eigenvectors.transpose();
        *a = (&*a + a.transpose()) * 0.5;
    }
    raised
}

impl Linreg {
    /// The model with the given settings.
    pub fn new(config: LinregConfig) -> Self {
        Self { config }
    }

    /// The settings.
    pub fn config(&self) -> &LinregConfig {
        &self.config
    }

    /// Checks that every record has the model's dimension.
    ///
    /// # Errors
    /// [`LinregError::Empty`] for no records; [`LinregError::DimensionMismatch`] for a record of another
    /// length.
    pub fn check_records(&self, records: &[LinregRecord]) -> Result<(), LinregError> {
        if records.is_empty() {
            return Err(LinregError::Empty("no records"));
        }
        let d = self.config.dim;
        if let Some(r) = records.iter().find(|r| r.features().len() != d) {
            return Err(LinregError::DimensionMismatch {
                what: "record features vs model dimension",
                expected: d,
                found: r.features().len(),
            });
        }
        Ok(())
    }

    /// The posterior from the sums of `g` (`A` with its eigenvalues raised to `g.floor`);
    /// returns the floored `A` and the count of raised eigenvalues with it.
    fn posterior_of(
        &self,
        g: &LinregGlobal,
    ) -> (DMatrix<f64>, usize, Result<NormalGamma, LinregError>) {
        let s = &g.sums;
        let mut a = s.a.clone();
        let raised = raise_eigenvalues(&mut a, s.floor);
        let post = NormalGamma::from_sums_with_noise(
            &self.config,
            &a,
            &s.b,
            s.c,
            s.population,
            s.xy_noise_std,
            s.yy_noise_std,
        );
        (a, raised, post)
    }
}

impl VipsModel for Linreg {
    type Record = LinregRecord;
    type Global = LinregGlobal;
    type Target = LinregTarget;
    type Natural = ();
    type Scratch = ();
    type Blocks = LinregBlocks;

    fn name(&self) -> &str {
        "linreg"
    }

    /// Rejects records whose dimension does not match the model's (before any release).
    fn check_records(&self, records: &[LinregRecord]) -> Result<(), EngineError> {
        Linreg::check_records(self, records).map_err(|e| EngineError::InvalidRecords {
            model: "linreg".into(),
            reason: e.to_string(),
        })
    }

    fn release_spec(&self) -> Result<(ReleaseSpec, LinregBlocks), EngineError> {
        let d = self.config.dim;
        let mut b = ReleaseSpec::builder("linreg");
        let sums = b.group("linreg sums", JOINT_BOUND)?;
        let xx = b.symmetric_in(sums, "xx", d)?;
        b.eigenvalue_floor(xx, WALL_FLOOR)?;
        let xy = b.vector_in(sums, "xy", d)?;
        let yy = b.vector_in(sums, "yy_scaled", 1)?;
        Ok((b.build()?, LinregBlocks { xx, xy, yy }))
    }

    fn init_global(&self, _rng: &mut dyn Rng) -> Result<LinregGlobal, EngineError> {
        let d = self.config.dim;
        // The prior: A = 0, b = 0, c = 0, n = 0 (lambda > 0 keeps it proper).
        let prior = NormalGamma::from_sums_with_noise(
            &self.config,
            &DMatrix::zeros(d, d),
            &DVector::zeros(d),
            0.0,
            0.0,
            0.0,
            0.0,
        )
        .map_err(|e| EngineError::ModelFailed {
            model: "linreg",
            reason: "the Normal-Gamma prior is not proper",
            source: ModelFailure::Linreg(Box::new(e)),
        })?;
        Ok(LinregGlobal {
            sums: LinregTarget {
                a: DMatrix::zeros(d, d),
                b: DVector::zeros(d),
                c: 0.0,
                population: 0.0,
                floor: 0.0,
                xy_noise_std: 0.0,
                yy_noise_std: 0.0,
            },
            floor_raised: 0,
            posterior: Arc::new(prior),
            failed_updates: 0,
        })
    }

    fn expected_natural(&self, _global: &LinregGlobal) -> Result<(), EngineError> {
        Ok(())
    }

    fn new_scratch(&self) {}

    fn record_statistic(
        &self,
        blocks: &LinregBlocks,
        _natural: &(),
        record: &LinregRecord,
        _scratch: &mut (),
        out: &mut ContributionBuffer,
    ) -> Result<(), RecordError> {
        let x = record.features();
        if x.len() != self.config.dim {
            // Unreachable through `fit` (records are checked before any release).
            return Err(RecordError::new(
                "a feature vector of another length than the model's dimension",
            ));
        }
        let y = record.target();
        out.add_outer_product(blocks.xx, 1.0, x);
        out.dense(blocks.xy)
            .iter_mut()
            .zip(x)
            .for_each(|(o, xv)| *o = y * xv);
        out.push(blocks.yy, 0, YY_SCALE * y * y);
        Ok(())
    }

    fn global_target(
        &self,
        blocks: &LinregBlocks,
        release: &Release,
        _natural: &(),
        population: f64,
    ) -> Result<LinregTarget, EngineError> {
        let a = release.symmetric(blocks.xx)? * population;
        let b = release.vector(blocks.xy)? * population;
        // The third block is `s c` (`s` = YY_SCALE, public): undo the scale.
        let c = release.vector(blocks.yy)?[0] / YY_SCALE * population;
        // Noise std of one entry of A in sum units (public: bound, noise multiplier, sqrt(k)).
        let s = release.released(blocks.xx)?.noise_std * population;
        Ok(LinregTarget {
            a,
            b,
            c,
            population,
            floor: self.config.floor_scale * s * (self.config.dim as f64).sqrt(),
            xy_noise_std: release.released(blocks.xy)?.noise_std * population,
            yy_noise_std: release.released(blocks.yy)?.noise_std / YY_SCALE * population,
        })
    }

    /// Damps the sums; the public noise levels and floor are the latest release's.
    fn blend(&self, global: &mut LinregGlobal, target: &LinregTarget, rho: f64) {
        let s = &mut global.sums;
        s.a.zip_apply(&target.a, |g, t| *g = (1.0 - rho) * *g + rho * t);
        s.b.zip_apply(&target.b, |g, t| *g = (1.0 - rho) * *g + rho * t);
        s.c = (1.0 - rho) * s.c + rho * target.c;
        s.population = target.population;
        s.floor = target.floor;
        s.xy_noise_std = target.xy_noise_std;
        s.yy_noise_std = target.yy_noise_std;
    }

    /// The Normal-Gamma posterior of the blended sums, `A`'s eigenvalues raised to the noise
    /// floor first; a failure keeps the previous posterior and is counted
    /// ([`LinregGlobal::failed_updates`]).
    fn after_blend(&self, global: &mut LinregGlobal) -> Result<(), EngineError> {
        let (a, raised, post) = self.posterior_of(global);
        global.floor_raised = raised;
        match post {
            Ok(p) => {
                global.sums.a = a;
                global.posterior = Arc::new(p);
            }
            Err(_) => global.failed_updates += 1,
        }
        Ok(())
    }
}
