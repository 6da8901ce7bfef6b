//! BLR as a [`VipsModel`]: E-step with Pólya-Gamma expectations, M-step to `N(mu, Sigma)`,
//! Gamma hyperprior update (000 Sec. 6, Algorithm 5; 003 Sec. 6).

use std::sync::{Arc, OnceLock};

use dp_core::{ContributionBuffer, Release, ReleaseSpec, SymmetricBlock, VectorBlock};
use expfam::{ExponentialFamily, Gamma, GaussianNatural, MvGaussian, gamma_precision_posterior};
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
    posterior: Current,
    eigenvalues_raised: usize,
    failed_updates: u64,
    /// Variance of the privacy noise on each entry of the blended `h` (public: from the
    /// releases' noise scales and the step sizes; `0` in non-private runs).
    h_noise_variance: f64,
}

/// The current `q(m)`: from `d = 64` on, until the first M-step, the prior `N(0, I / <alpha>)`
/// kept as its `1 x 1` form `N(0, variance)` (no `d x d` matrix, no `O(d^3)` factorisation),
/// its `d x d` [`MvGaussian`] built only if asked for ([`BlrGlobal::posterior`]); then the
/// M-step's posterior.
#[derive(Clone, Debug)]
enum Current {
    Prior(Arc<Prior>),
    Fitted(Arc<MvGaussian>),
}

/// The prior `N(0, variance I)`; `variance` was checked at [`VipsModel::init_global`] by building
/// the `1 x 1` prior, which succeeds exactly when the `d x d` one does (the same checks on the
/// same diagonal entry).
#[derive(Debug)]
struct Prior {
    dim: usize,
    /// The variance the prior was built from (`1 / <alpha>`).
    declared: f64,
    /// `N(0, variance)`: what the E-step is handed ([`VipsModel::expected_natural`]).
    one: Arc<MvGaussian>,
    built: OnceLock<MvGaussian>,
}

impl Prior {
    /// The prior as an [`MvGaussian`] (built once, `O(d^3)` in expfam's Cholesky).
    fn gaussian(&self) -> &MvGaussian {
        self.built.get_or_init(|| {
            let d = self.dim;
            MvGaussian::new(
                DVector::zeros(d),
                DMatrix::from_diagonal_element(d, d, self.declared),
            )
            .expect("the 1 x 1 prior with this variance was built at init_global")
        })
    }

    /// The prior variance (the `1 x 1` covariance: `(v + v) / 2 = v`, as on the `d x d`
    /// diagonal).
    fn variance(&self) -> f64 {
        self.one.cov()[(0, 0)]
    }
}

impl Current {
    fn gaussian(&self) -> &MvGaussian {
        match self {
            Current::Prior(p) => p.gaussian(),
            Current::Fitted(g) => g,
        }
    }
}

/// `x^T (variance I) x` with exactly the operations of [`Features::quadratic_form`] on the dense
/// matrix `variance I` (the same products, zeros included, summed in the same order), so the
/// E-step under the prior is bit for bit the one on the `d x d` prior covariance.
fn prior_quadratic_form(x: &Features, variance: f64) -> f64 {
    let entry = |same: bool| if same { variance } else { 0.0 };
    match x {
        Features::Dense(v) => {
            let mut total = 0.0;
            for (j, &xj) in v.iter().enumerate() {
                if xj == 0.0 {
                    continue;
                }
                let s: f64 = v.iter().enumerate().map(|(i, x)| entry(i == j) * x).sum();
                total += xj * s;
            }
            total
        }
        Features::Sparse { indices, values } => {
            let mut total = 0.0;
            for (&j, &xj) in indices.iter().zip(values) {
                let s: f64 = indices
                    .iter()
                    .zip(values)
                    .map(|(&i, &xi)| entry(i == j) * xi)
                    .sum();
                total += xj * s;
            }
            total
        }
    }
}

/// BLR's M-step target from one release: `h = N s1~` and the likelihood precision `N s2~`
/// (what the SVI step blends), and how many eigenvalues of the released `s2` the wall's
/// projection raised.
#[derive(Clone, Debug)]
pub struct BlrTarget {
    h: DVector<f64>,
    lik_precision: DMatrix<f64>,
    eigenvalues_raised: usize,
    /// Variance of the noise on each entry of this target's `h` (`(N x noise std)^2`).
    h_noise_variance: f64,
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
        let d = self.h.len();
        let prior_mean;
        let (mean, covariance_diagonal) = match &self.posterior {
            Current::Prior(p) => {
                prior_mean = vec![0.0; d];
                (&prior_mean[..], vec![p.variance(); d])
            }
            Current::Fitted(g) => (g.mean().as_slice(), g.cov().diagonal().as_slice().to_vec()),
        };
        GlobalView {
            dim: self.h.len(),
            mean,
            covariance_diagonal,
            alpha_mean: self.alpha_mean,
            alpha: self.alpha,
            eigenvalues_raised_last_release: self.eigenvalues_raised,
        }
        .serialize(s)
    }
}

impl BlrGlobal {
    /// The current `q(m) = N(mu, Sigma)`. Before the first M-step of a model of dimension 64 or
    /// more this is the prior, whose `d x d` form is built on the first call.
    pub fn posterior(&self) -> &MvGaussian {
        self.posterior.gaussian()
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

    /// `N s2~` (blended, positive semi-definite). Before the first blend (no release yet) it is
    /// zero and stored as an empty `0 x 0` matrix, so that no `d x d` buffer is held while the
    /// first release runs.
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
    /// The records of a store of labelled rows (sparse, [`crate::store::convert_libsvm`]; or
    /// dense, [`crate::store::convert_csv`]) as a record source for
    /// [`crate::engine::fit_source`]: each row is read when a batch draws it.
    ///
    /// # Errors
    /// [`BlrError::Store`] for a store of another kind, a sparse store of a dimension larger
    /// than the model's or a dense store of another dimension; [`BlrError::Empty`] for an empty
    /// store.
    ///
    /// # Privacy
    /// The rows were scaled and clipped at conversion (per-record transforms), so the records
    /// read are those the in-memory loader makes: same seeds, same releases. A row that does not
    /// decode is replaced by zero in a private release ([`Self::check_records`] is not run over
    /// a store: it would read every row). The store's count is private under add/remove-one:
    /// declare the public `N`.
    ///
    /// # Example
    /// ```
    /// use vips_models::blr::{Blr, BlrConfig, LibsvmOptions};
    /// use vips_models::engine::{fit_source, Privacy, Stop, SviConfig};
    /// use vips_models::store::{RecordStore, convert_libsvm};
    /// # let dir = std::env::temp_dir().join(format!("blr-store-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// let rows: String = (0..200).map(|i| format!("{} 1:{} 2:0.5\n", i % 2, (i % 7) as f64 / 10.0)).collect();
    /// std::fs::write(dir.join("rows.libsvm"), rows)?;
    /// convert_libsvm(dir.join("rows.libsvm"), dir.join("rows.store"), LibsvmOptions { dim: Some(2), radius: 1.0 })?;
    /// let blr = Blr::new(BlrConfig::builder(2).build()?);
    /// let source = blr.store_source(RecordStore::open(dir.join("rows.store"))?)?;
    /// let svi = SviConfig::builder()
    ///     .expected_batch_size(50.0)
    ///     .stop(Stop::Iterations { iterations: 3 })
    ///     .privacy(Privacy::Target { epsilon: 1.0, delta: 1e-5 })
    ///     .population(Some(200))
    ///     .build()?;
    /// let fitted = fit_source(&blr, source, &svi, |_, _| {})?;
    /// assert!(fitted.result.privacy.epsilon.unwrap() <= 1.0);
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn store_source(
        &self,
        store: crate::store::RecordStore,
    ) -> Result<crate::store::BlrStoreSource, BlrError> {
        use crate::store::{RecordKind, StoreError};
        let dense = match store.kind() {
            RecordKind::LabelledSparseRow => false,
            RecordKind::LabelledDenseRow => true,
            found => {
                return Err(BlrError::Store(Box::new(StoreError::WrongKind {
                    path: store.path().to_path_buf(),
                    expected: RecordKind::LabelledSparseRow,
                    found,
                })));
            }
        };
        // A sparse store fits any model at least as wide; a dense row must be exactly the
        // model's width.
        let fits = if dense {
            store.dim() == self.config.dim() as u64
        } else {
            store.dim() <= self.config.dim() as u64
        };
        if !fits {
            return Err(BlrError::Store(Box::new(StoreError::Dimension {
                path: store.path().to_path_buf(),
                found: store.dim(),
                model: self.config.dim(),
            })));
        }
        if store.is_empty() {
            return Err(BlrError::Empty("no records in the store"));
        }
        Ok(crate::store::BlrStoreSource::new(store))
    }

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
            return Err(BlrError::Empty("no records"));
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
    ///
    /// From `d = 64` on the factorisation, solve and inverse are faer's blocked routines on every
    /// thread of the rayon pool; below, expfam's (nalgebra), whose results
    /// small models keep bit for bit.
    pub fn posterior_from(
        h: &DVector<f64>,
        lik_precision: &DMatrix<f64>,
        alpha: f64,
    ) -> Result<MvGaussian, BlrError> {
        if h.len() >= FAER_MIN_DIMENSION {
            // The covariance and the inverse factor move into the Gaussian: no copy, no second
            // factorisation (two d x d buffers besides `P`).
            let (mean, cov, inverse_factor) = faer_moments(h, lik_precision, alpha)?;
            return Ok(MvGaussian::from_inverse_precision_factor(
                mean,
                cov,
                inverse_factor,
            )?);
        }
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

/// From this dimension on, the M-step's dense linear algebra is faer's (blocked, parallel).
const FAER_MIN_DIMENSION: usize = 64;

/// faer's parallelism: every thread of the current rayon pool, sequential with one thread.
fn parallelism() -> faer::Par {
    match rayon::current_num_threads() {
        0 | 1 => faer::Par::Seq,
        n => faer::Par::rayon(n),
    }
}

/// A zeroed `d x d` column-major matrix, or a typed error if it cannot be allocated.
fn try_square(d: usize) -> Result<DMatrix<f64>, BlrError> {
    let too_large =
        || BlrError::NotPositiveDefinite("the M-step's d x d workspace cannot be allocated");
    let len = d.checked_mul(d).ok_or_else(too_large)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_large())?;
    v.resize(len, 0.0);
    Ok(DMatrix::from_vec(d, d, v))
}

/// The M-step's mean, covariance and inverse precision factor `L^-1` ([`faer_moments`]).
type Moments = (DVector<f64>, DMatrix<f64>, DMatrix<f64>);

/// `(mean, cov, L^-1) = ((P + alpha I)^-1 h, (P + alpha I)^-1, L^-1)` on faer, where
/// `L L^T = P + alpha I`: blocked Cholesky in place, two triangular solves, `L^-1` by the blocked
/// triangular inverse (zero above the diagonal) and `L^-T L^-1` into the factor's own memory (two
/// `d x d` buffers besides `P`, both returned). `P` must be symmetric to `1e-10` relative (its
/// lower triangle is read); the covariance is exactly symmetric.
///
/// # Errors
/// As expfam's conversion: [`expfam::ExpFamError::DimensionMismatch`],
/// [`expfam::ExpFamError::NonFinite`], [`expfam::ExpFamError::NotSymmetric`],
/// [`expfam::ExpFamError::NotPositiveDefinite`] (as [`BlrError::Posterior`]).
fn faer_moments(
    h: &DVector<f64>,
    lik_precision: &DMatrix<f64>,
    alpha: f64,
) -> Result<Moments, BlrError> {
    use expfam::ExpFamError;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
    use faer::linalg::matmul::triangular::{BlockStructure, matmul};
    use faer::{Accum, MatMut, MatRef};
    let d = h.len();
    for found in [lik_precision.nrows(), lik_precision.ncols()] {
        if found != d {
            return Err(ExpFamError::DimensionMismatch {
                what: "likelihood precision",
                expected: d,
                found,
            }
            .into());
        }
    }
    let finite = |name: &'static str, values: &[f64]| match values.iter().find(|v| !v.is_finite()) {
        Some(&value) => Err(ExpFamError::NonFinite { name, value }),
        None => Ok(()),
    };
    finite("h", h.as_slice())?;
    finite("likelihood precision", lik_precision.as_slice())?;
    finite("prior precision", &[alpha])?;
    let p = lik_precision.as_slice();
    let scale = p.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    let mut worst = 0.0f64;
    for jb in (0..d).step_by(64) {
        for ib in (0..=jb).step_by(64) {
            for j in jb..(jb + 64).min(d) {
                for i in ib..(ib + 64).min(j) {
                    worst = worst.max((p[j * d + i] - p[i * d + j]).abs());
                }
            }
        }
    }
    if scale > 0.0 && worst / scale > 1e-10 {
        return Err(ExpFamError::NotSymmetric {
            name: "likelihood precision",
            asymmetry: worst / scale,
        }
        .into());
    }
    let not_pd = || BlrError::from(ExpFamError::NotPositiveDefinite { name: "precision" });
    let par = parallelism();
    // Lambda = P + alpha I, factored in place (lower triangle).
    let mut factor = lik_precision.clone();
    for i in 0..d {
        factor[(i, i)] += alpha;
    }
    {
        let mut mem =
            MemBuffer::try_new(cholesky_in_place_scratch::<f64>(d, par, Default::default()))
                .map_err(|_| not_pd())?;
        cholesky_in_place(
            MatMut::from_column_major_slice_mut(factor.as_mut_slice(), d, d),
            Default::default(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| not_pd())?;
    }
    // mean = L^-T L^-1 h.
    let mut mean = h.clone();
    {
        let l = MatRef::from_column_major_slice(factor.as_slice(), d, d);
        let rhs = MatMut::from_column_major_slice_mut(mean.as_mut_slice(), d, 1);
        faer::linalg::triangular_solve::solve_lower_triangular_in_place(l, rhs, par);
        let rhs = MatMut::from_column_major_slice_mut(mean.as_mut_slice(), d, 1);
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(l.transpose(), rhs, par);
    }
    // cov = L^-T L^-1, written into the factor's memory (lower triangle), then mirrored.
    let mut inverse = try_square(d)?;
    faer::linalg::triangular_inverse::invert_lower_triangular(
        MatMut::from_column_major_slice_mut(inverse.as_mut_slice(), d, d),
        MatRef::from_column_major_slice(factor.as_slice(), d, d),
        par,
    );
    let linv = MatRef::from_column_major_slice(inverse.as_slice(), d, d);
    matmul(
        MatMut::from_column_major_slice_mut(factor.as_mut_slice(), d, d),
        BlockStructure::TriangularLower,
        Accum::Replace,
        linv.transpose(),
        BlockStructure::TriangularUpper,
        linv,
        BlockStructure::TriangularLower,
        1.0,
        par,
    );
    let mut cov = factor;
    {
        let c = cov.as_mut_slice();
        for jb in (0..d).step_by(64) {
            for ib in (0..=jb).step_by(64) {
                for j in jb..(jb + 64).min(d) {
                    for i in ib..(ib + 64).min(j) {
                        c[j * d + i] = c[i * d + j];
                    }
                }
            }
        }
    }
    finite("mean", mean.as_slice())?;
    finite("covariance", cov.as_slice())?;
    Ok((mean, cov, inverse))
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
        // Zero until the first blend, kept as an empty matrix: no d x d buffer is alive while
        // the first release (and its projection) runs.
        let lik_precision = DMatrix::zeros(0, 0);
        // From d = 64 on the prior is checked as 1 x 1 (the same checks on the same diagonal
        // entry) and its d x d form is built only if asked for: the E-step needs its variance.
        let variance = 1.0 / alpha_mean;
        let checked = if d >= FAER_MIN_DIMENSION { 1 } else { d };
        let prior = MvGaussian::new(
            DVector::zeros(checked),
            DMatrix::from_diagonal_element(checked, checked, variance),
        )
        .map_err(|e| EngineError::ModelFailed {
            model: "blr",
            reason: "the prior N(0, I / <alpha>) is not a valid Gaussian",
            source: e.into(),
        })?;
        let posterior = if checked == d {
            Current::Fitted(Arc::new(prior))
        } else {
            Current::Prior(Arc::new(Prior {
                dim: d,
                declared: variance,
                one: Arc::new(prior),
                built: OnceLock::new(),
            }))
        };
        Ok(BlrGlobal {
            h,
            lik_precision,
            alpha,
            alpha_mean,
            posterior,
            eigenvalues_raised: 0,
            failed_updates: 0,
            h_noise_variance: 0.0,
        })
    }

    /// The current `q(m)`; before the first M-step of a model of dimension 64 or more, the
    /// isotropic prior `N(0, v I_d)` as its `1 x 1` form `N(0, v)`, which
    /// [`VipsModel::record_statistic`] reads as such.
    fn expected_natural(&self, global: &BlrGlobal) -> Result<Arc<MvGaussian>, EngineError> {
        Ok(match &global.posterior {
            Current::Prior(p) => Arc::clone(&p.one),
            Current::Fitted(g) => Arc::clone(g),
        })
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
        let (m, quad) = match natural.dim() {
            n if n == d => (
                x.dot(natural.mean().as_slice()),
                x.quadratic_form(natural.cov().as_slice(), d),
            ),
            // The isotropic prior N(0, v I_d) as N(0, v) (`expected_natural`): the mean is zero
            // (`m m` is `+0` whatever the sign of a zero dot product, as on the d x d prior).
            1 => (0.0, prior_quadratic_form(x, natural.cov()[(0, 0)])),
            _ => {
                return Err(RecordError::new(
                    "expected parameters of another dimension than the model's",
                ));
            }
        };
        let quad = quad.max(0.0);
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
        let s1 = release.released(blocks.s1)?;
        let s2 = release.released(blocks.s2)?;
        let mut lik_precision = release.symmetric(blocks.s2)? * population;
        let ridge = self.config.noise_ridge()
            * 2.0
            * (lik_precision.nrows() as f64).sqrt()
            * s2.noise_std
            * population;
        if ridge > 0.0 {
            for i in 0..lik_precision.nrows() {
                lik_precision[(i, i)] += ridge;
            }
        }
        Ok(BlrTarget {
            h: release.vector(blocks.s1)? * population,
            lik_precision,
            eigenvalues_raised: s2.eigenvalues_raised(),
            h_noise_variance: (s1.noise_std * population).powi(2),
        })
    }

    fn blend(&self, global: &mut BlrGlobal, target: &BlrTarget, rho: f64) {
        global.h *= 1.0 - rho;
        global.h.axpy(rho, &target.h, 1.0);
        let mix = |g: f64, t: f64| (1.0 - rho) * g + rho * t;
        if global.lik_precision.is_empty() {
            // The first blend: the same arithmetic on the zero the empty matrix stands for.
            global.lik_precision = target.lik_precision.map(|t| mix(0.0, t));
        } else {
            global
                .lik_precision
                .as_mut_slice()
                .iter_mut()
                .zip(target.lik_precision.as_slice())
                .for_each(|(g, &t)| *g = mix(*g, t));
        }
        global.eigenvalues_raised = target.eigenvalues_raised;
        // Independent noise per release: the blend's variance is the weighted sum.
        global.h_noise_variance =
            (1.0 - rho).powi(2) * global.h_noise_variance + rho.powi(2) * target.h_noise_variance;
    }

    /// 000 Algorithm 5 (2): `q(m)` from the blended `nu~` with the current `<alpha>`, then
    /// `q(alpha)`. A precision that cannot be factorised keeps the previous `q(m)` and is
    /// counted ([`BlrGlobal::failed_updates`]).
    fn after_blend(&self, global: &mut BlrGlobal) -> Result<(), EngineError> {
        match Self::posterior_from(&global.h, &global.lik_precision, global.alpha_mean) {
            Ok(post) => {
                if let (Some(prior), Hyperprior::Gamma { .. }) =
                    (self.alpha_prior()?.0, self.config.prior())
                    && let Ok(q) = gamma_precision_posterior(
                        &prior,
                        post.dim() as f64,
                        noise_aware_squared_norm(&post, global.h_noise_variance),
                    )
                {
                    global.alpha = Some(q);
                    global.alpha_mean = q.mean();
                }
                global.posterior = Current::Fitted(Arc::new(post));
            }
            Err(_) => global.failed_updates += 1,
        }
        Ok(())
    }
}

/// `E[w^T w]` for the Gamma hyperprior update (000 Eq. 40), with the privacy noise taken out
/// of the mean.
///
/// `q(w) = N(mu, Sigma)` with `mu = Sigma h` and `Sigma = (P + <alpha> I)^-1`; the blended `h`
/// carries Gaussian noise of variance `h_noise_variance` per entry, which adds
/// `h_noise_variance x tr(Sigma^2) = h_noise_variance x ||Sigma||_F^2` to `E[mu^T mu]`. Fed back
/// as is, that excess shrinks `<alpha>`, which flattens the prior and lets the noise grow the
/// mean further. The estimate here is `max(0, mu^T mu - h_noise_variance ||Sigma||_F^2) +
/// tr Sigma`, the unbiased one for the noise-free `mu^T mu` clamped at zero; it equals
/// `q.expected_squared_norm()` in non-private runs (`h_noise_variance = 0`). It removes the
/// noise of `h` only: the collapse of multi-release private runs runs mainly through `s2`'s
/// noise and the E-step, which [`BlrConfigBuilder::noise_ridge`](super::BlrConfigBuilder::noise_ridge)
/// addresses.
///
/// # Privacy
/// Post-processing: `mu` and `Sigma` come from released statistics, the noise variance from the
/// public noise scales and step sizes.
fn noise_aware_squared_norm(q: &MvGaussian, h_noise_variance: f64) -> f64 {
    if h_noise_variance <= 0.0 {
        return q.expected_squared_norm();
    }
    let mean_sq = q.mean().norm_squared();
    let noise_sq = h_noise_variance * q.cov().norm_squared();
    (mean_sq - noise_sq).max(0.0) + q.cov().trace()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The faer M-step (d >= FAER_MIN_DIMENSION) agrees with expfam's conversion to rounding,
    /// and refuses what expfam refuses.
    #[test]
    fn faer_moments_agree_with_expfam() {
        let d = FAER_MIN_DIMENSION + 9;
        // P = B B^T / d + a rank-deficient part, symmetric positive semi-definite.
        let b = DMatrix::from_fn(d, d, |i, j| ((i * 31 + j * 17) % 23) as f64 / 23.0 - 0.5);
        let p = (&b * b.transpose()) / d as f64;
        let p = (&p + p.transpose()) * 0.5;
        let h = DVector::from_fn(d, |i, _| (i as f64 * 0.37).sin());
        let (mean, cov, _) = faer_moments(&h, &p, 0.7).unwrap();
        let mut precision = p.clone();
        for i in 0..d {
            precision[(i, i)] += 0.7;
        }
        let natural = GaussianNatural::from_precision(h.clone(), precision).unwrap();
        let reference = MvGaussian::from_natural(&natural).unwrap();
        let scale = reference.cov().amax();
        assert!((&cov - reference.cov()).amax() <= 1e-10 * scale);
        assert!((&mean - reference.mean()).amax() <= 1e-10 * reference.mean().amax().max(1.0));
        assert_eq!(cov, cov.transpose());
        // The Gaussian built from the returned factor, without a second factorisation.
        let post = Blr::posterior_from(&h, &p, 0.7).unwrap();
        assert_eq!(post.cov(), &cov);
        assert!((post.ln_det_cov() - reference.ln_det_cov()).abs() <= 1e-10 * d as f64);
        let negative = DMatrix::<f64>::identity(d, d) * -5.0;
        assert!(matches!(
            Blr::posterior_from(&h, &negative, 1.0),
            Err(BlrError::Posterior(_))
        ));
        let mut asymmetric = p.clone();
        asymmetric[(0, 1)] += 1.0;
        assert!(Blr::posterior_from(&h, &asymmetric, 1.0).is_err());
        let mut nan = p;
        nan[(2, 2)] = f64::NAN;
        assert!(Blr::posterior_from(&h, &nan, 1.0).is_err());
    }

    /// The likelihood precision is held as an empty matrix until the first blend, and blending
    /// onto it gives bit for bit what blending onto an explicit `d x d` zero gives (negative
    /// zeros included).
    #[test]
    fn first_blend_onto_the_empty_precision_is_the_dense_zero_blend() {
        let d = 3;
        let model = Blr::new(BlrConfig::builder(d).build().unwrap());
        use rand::SeedableRng;
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
        let mut lazy = model.init_global(&mut rng).unwrap();
        assert_eq!(lazy.likelihood_precision().shape(), (0, 0));
        let mut dense = lazy.clone();
        dense.lik_precision = DMatrix::zeros(d, d);
        let target = BlrTarget {
            h: DVector::from_vec(vec![0.5, -1.0, 2.0]),
            lik_precision: DMatrix::from_row_slice(
                3,
                3,
                &[2.0, -0.0, 0.5, -0.0, 3.0, -0.25, 0.5, -0.25, 1.5],
            ),
            eigenvalues_raised: 1,
            h_noise_variance: 0.1,
        };
        for rho in [1.0, 0.3] {
            model.blend(&mut lazy, &target, rho);
            model.blend(&mut dense, &target, rho);
            let bits = |m: &DMatrix<f64>| m.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(lazy.likelihood_precision()),
                bits(dense.likelihood_precision())
            );
        }
    }

    /// The E-step's quadratic form under the prior is bit for bit the one on the dense
    /// `variance I`, for dense and sparse rows; the lazily built prior is the eager one.
    #[test]
    fn prior_expectation_is_the_dense_prior_bit_for_bit() {
        let d = FAER_MIN_DIMENSION + 5;
        let variance = 1.0 / 0.37;
        let dense_cov = DMatrix::from_diagonal_element(d, d, variance);
        let dense = Features::Dense((0..d).map(|i| ((i * 7) % 11) as f64 / 13.0 - 0.3).collect());
        let sparse = Features::Sparse {
            indices: vec![0, 3, 17, 40, (d - 1) as u32],
            values: vec![0.1, -0.25, 0.3, 1e-3, -0.07],
        };
        for x in [&dense, &sparse] {
            let want = x.quadratic_form(dense_cov.as_slice(), d);
            assert_eq!(prior_quadratic_form(x, variance).to_bits(), want.to_bits());
        }
        let model = Blr::new(
            BlrConfig::builder(d)
                .hyperprior(Hyperprior::Fixed { alpha: 0.37 })
                .build()
                .unwrap(),
        );
        use rand::SeedableRng;
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
        let global = model.init_global(&mut rng).unwrap();
        assert!(matches!(global.posterior, Current::Prior(_)));
        let eager = MvGaussian::new(DVector::zeros(d), dense_cov).unwrap();
        assert_eq!(global.posterior().mean(), eager.mean());
        assert_eq!(global.posterior().cov(), eager.cov());
        let view = serde_json::to_value(&global).unwrap();
        let fitted = BlrGlobal {
            posterior: Current::Fitted(Arc::new(eager)),
            ..global.clone()
        };
        assert_eq!(view, serde_json::to_value(&fitted).unwrap());
        // The E-step on the 1 x 1 prior releases the same sums as on the d x d prior.
        let records: Vec<BlrRecord> = [dense, sparse]
            .into_iter()
            .enumerate()
            .map(|(i, x)| BlrRecord::new(x, i == 0).unwrap().0)
            .collect();
        let sums = |natural: &Arc<MvGaussian>| {
            let (spec, blocks) = model.release_spec().unwrap();
            let mut wall = dp_core::PrivacyWall::builder(records.clone())
                .sampling(dp_core::SamplingScheme::poisson(1.0).unwrap())
                .non_private()
                .public_population_size(2)
                .build()
                .unwrap();
            let release = wall
                .release(&spec, |r, buf| {
                    model
                        .record_statistic(&blocks, natural, r, &mut (), buf)
                        .unwrap()
                })
                .unwrap();
            (
                release.vector(blocks.s1).unwrap().clone(),
                release.symmetric(blocks.s2).unwrap().clone(),
            )
        };
        let lazy = model.expected_natural(&global).unwrap();
        assert_eq!(lazy.dim(), 1);
        let eager = model.expected_natural(&fitted).unwrap();
        assert_eq!(eager.dim(), d);
        assert_eq!(sums(&lazy), sums(&eager));
    }
}
