//! The model trait the VIPS engine drives (003 Algorithm 2; Algorithm 4 for models made
//! conjugate by augmentation).

use dp_core::{ContributionBuffer, Release, ReleaseSpec};
use rand::Rng;
use serde::Serialize;

use super::EngineError;

/// Why the E-step could not compute one record's statistic: a fixed text, never a value derived
/// from the record.
///
/// Returned by [`VipsModel::record_statistic`]; the driver hands the reason to the wall
/// ([`ContributionBuffer::reject_record`]), whose documented policy applies: in a private
/// release the record contributes zero (counted in the non-private
/// [`crate::engine::FitDiagnostics::records_replaced`]) and the release is still charged; in a
/// non-private run the fit fails with [`EngineError::Wall`]
/// (`dp_core::CoreError::InvalidContribution` naming the reason).
///
/// # Privacy
/// The reason is a `&'static str`, so an error message built from it cannot carry a value of the
/// record (an index, an entry, a length).
///
/// # Example
/// ```
/// use vips_models::engine::RecordError;
/// let e = RecordError::new("a feature vector of the wrong length");
/// assert_eq!(e.reason(), "a feature vector of the wrong length");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("record rejected by the E-step: {reason}")]
pub struct RecordError {
    reason: &'static str,
}

impl RecordError {
    /// A rejection with a fixed reason.
    pub const fn new(reason: &'static str) -> Self {
        Self { reason }
    }

    /// The fixed reason.
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

/// A conjugate-exponential model, seen by the engine as a few maps (003 Sec. 2.5, Algorithm 2).
///
/// Per iteration, [`crate::engine::fit`] calls:
///
/// 1. [`expected_natural`](VipsModel::expected_natural): the global variational parameters
///    `nu~` -> the expected natural parameters `n_bar` (read-only, shared by the E-step and the
///    M-step);
/// 2. [`record_statistic`](VipsModel::record_statistic) (E-step, behind the privacy wall, in
///    parallel): one record and `n_bar` -> the record's expected sufficient statistic
///    `<s(D_n, l_n)>_{q(l_n)}`, written through the model's typed block handles into the wall's
///    buffer (sparse entries, dense blocks or runs, in any mix across blocks); the wall clips
///    each block (or group of blocks) to its bound. A record whose statistic cannot be computed
///    is rejected with a [`RecordError`];
/// 3. [`global_target`](VipsModel::global_target) (M-step, outside the wall): the release (noised
///    sums divided by the public expected batch size), `n_bar` and the public population `N` ->
///    the target `nu + N s~` (with model-specific post-processing: LDA maps negative entries to
///    0; symmetric blocks arrive projected onto the positive-definite cone);
/// 4. [`blend`](VipsModel::blend): the damped SVI step `nu~ <- (1 - rho) nu~ + rho target`, and
///    nothing else;
/// 5. [`after_blend`](VipsModel::after_blend): quantities derived from the blended `nu~` (a
///    factorised posterior, hyperprior updates). Default: nothing.
///
/// Once per fit, before anything is released, it calls [`check_records`](VipsModel::check_records),
/// [`release_spec`](VipsModel::release_spec) (the blocks with their per-record bounds, and the
/// model's handles to them) and [`init_global`](VipsModel::init_global).
///
/// Everything after the release is post-processing of the noised statistics, so it is as
/// private as they are. Batch (full-data) VB is the same loop with Poisson rate `q = 1` and a
/// constant step `rho = 1`.
///
/// `Scratch` is created at most once per worker thread and reused across records, so an E-step
/// that writes into it need not allocate per record.
///
/// # Privacy
/// The per-record bounds of [`VipsModel::release_spec`] are enforced by the wall's clipping, so
/// the guarantee does not depend on the E-step being correct; what the model must ensure is that
/// nothing computed from a record leaves [`VipsModel::record_statistic`] except through the
/// buffer (its [`RecordError`] carries a fixed text only).
///
/// # Example
/// A model outside this crate implements the trait and is fitted by [`crate::engine::fit`]
/// without touching the engine: the crate's integration test `tests/custom_model.rs` (a
/// Gaussian mean with known variance) is the worked example. In short:
/// ```
/// use dp_core::{ContributionBuffer, Release, ReleaseSpec, VectorBlock};
/// use vips_models::engine::{EngineError, RecordError, VipsModel};
///
/// /// The mean of values in [-1, 1]: statistic (x, 1), natural parameters (h, P) of N(h/P, 1/P).
/// struct Mean;
/// impl VipsModel for Mean {
///     type Record = f64;
///     type Global = [f64; 2];
///     type Target = [f64; 2];
///     type Natural = ();
///     type Scratch = ();
///     type Blocks = VectorBlock;
///     fn name(&self) -> &str { "mean" }
///     fn release_spec(&self) -> Result<(ReleaseSpec, VectorBlock), EngineError> {
///         let mut b = ReleaseSpec::builder("mean");
///         let s = b.vector("x_and_one", 2, 2f64.sqrt())?;
///         Ok((b.build()?, s))
///     }
///     fn init_global(&self, _: &mut dyn rand::Rng) -> Result<[f64; 2], EngineError> { Ok([0.0, 1.0]) }
///     fn expected_natural(&self, _: &[f64; 2]) -> Result<(), EngineError> { Ok(()) }
///     fn new_scratch(&self) {}
///     fn record_statistic(&self, s: &VectorBlock, _: &(), x: &f64, _: &mut (),
///                         out: &mut ContributionBuffer) -> Result<(), RecordError> {
///         if !(-1.0..=1.0).contains(x) { return Err(RecordError::new("a value outside [-1, 1]")); }
///         out.dense(*s).copy_from_slice(&[*x, 1.0]);
///         Ok(())
///     }
///     fn global_target(&self, s: &VectorBlock, release: &Release, _: &(), n: f64)
///         -> Result<[f64; 2], EngineError> {
///         let v = release.vector(*s)?;
///         Ok([n * v[0], 1.0 + n * v[1]]) // prior N(0, 1)
///     }
///     fn blend(&self, g: &mut [f64; 2], t: &[f64; 2], rho: f64) {
///         for (g, t) in g.iter_mut().zip(t) { *g = (1.0 - rho) * *g + rho * t; }
///     }
/// }
/// ```
pub trait VipsModel: Sync {
    /// One private record (a document, a labelled feature vector, a binary image).
    type Record: Send + Sync;
    /// The global variational parameters `nu~`: what is blended, and returned in the fit result.
    type Global: Clone + Send + Sync + Serialize;
    /// What the M-step produces from one release (only the parts the blend needs).
    type Target: Send;
    /// The expected natural parameters `n_bar` computed from `Global` (read-only in the E-step
    /// and in the M-step).
    type Natural: Sync;
    /// Per-thread E-step buffers.
    type Scratch: Send;
    /// The model's typed handles to the blocks of its release spec (e.g. one
    /// [`dp_core::MatrixBlock`]), returned with the spec by [`VipsModel::release_spec`].
    type Blocks: Send + Sync;

    /// Short model name for traces, progress and error messages.
    fn name(&self) -> &str;

    /// Checks the records before any release (dimensions, value ranges): called by
    /// [`crate::engine::fit`] before the records enter the wall, so that a malformed record is a
    /// loading-time error for the data owner, never an error from inside a release. Default: all
    /// records accepted.
    ///
    /// # Errors
    /// [`EngineError::InvalidRecords`] naming what is wrong.
    fn check_records(&self, records: &[Self::Record]) -> Result<(), EngineError> {
        let _ = records;
        Ok(())
    }

    /// The statistic's blocks with their per-record bounds, and the handles the E-step writes
    /// through and the M-step reads with. Called once per fit.
    ///
    /// # Errors
    /// [`EngineError::Wall`] if dp-core refuses a block (bound not finite and positive, empty).
    fn release_spec(&self) -> Result<(ReleaseSpec, Self::Blocks), EngineError>;

    /// The initial global parameters (drawn from `rng`, which is *not* the noise RNG).
    ///
    /// # Errors
    /// A model-specific [`EngineError`] if the initial state cannot be built.
    fn init_global(&self, rng: &mut dyn Rng) -> Result<Self::Global, EngineError>;

    /// `n_bar` from `nu~`.
    ///
    /// # Errors
    /// A model-specific [`EngineError`] if `nu~` has no valid expectation.
    fn expected_natural(&self, global: &Self::Global) -> Result<Self::Natural, EngineError>;

    /// Fresh per-thread buffers.
    fn new_scratch(&self) -> Self::Scratch;

    /// The E-step for one record: write its expected sufficient statistic into `out` (zeroed)
    /// through `blocks`. The wall clips each block (group) to its bound.
    ///
    /// # Errors
    /// A [`RecordError`] if the statistic cannot be computed for this record; the wall's policy
    /// applies (see [`RecordError`]): the record contributes zero to a private release, and a
    /// non-private fit fails.
    fn record_statistic(
        &self,
        blocks: &Self::Blocks,
        natural: &Self::Natural,
        record: &Self::Record,
        scratch: &mut Self::Scratch,
        out: &mut ContributionBuffer,
    ) -> Result<(), RecordError>;

    /// The M-step target `nu + population * s~` from the release (read with `blocks`; already
    /// divided by the expected batch size) and the `n_bar` the E-step used.
    ///
    /// # Errors
    /// A model-specific [`EngineError`] if no target can be formed from the release.
    fn global_target(
        &self,
        blocks: &Self::Blocks,
        release: &Release,
        natural: &Self::Natural,
        population: f64,
    ) -> Result<Self::Target, EngineError>;

    /// The damped update `global <- (1 - rho) global + rho target`.
    fn blend(&self, global: &mut Self::Global, target: &Self::Target, rho: f64);

    /// Whether [`Self::blend_release`] is the cheaper M-step for this model. Default `false`:
    /// the engine forms the target, frees the release, then blends (large models hold several
    /// `d x d` matrices, so the release goes before the blend). A model whose target is an
    /// entrywise map of the release (LDA) says `true` and fuses the passes.
    fn fuses_m_step(&self) -> bool {
        false
    }

    /// The whole M-step, `global <- (1 - rho) global + rho target(release)`: exactly
    /// [`Self::global_target`] then [`Self::blend`] (the default). An override must give the
    /// same `global` bit for bit and refuse an invalid target with the same error (after which
    /// the engine stops, so a half-updated `global` is never used).
    ///
    /// # Errors
    /// As [`Self::global_target`].
    fn blend_release(
        &self,
        global: &mut Self::Global,
        blocks: &Self::Blocks,
        release: &Release,
        natural: &Self::Natural,
        population: f64,
        rho: f64,
    ) -> Result<(), EngineError> {
        let target = self.global_target(blocks, release, natural, population)?;
        self.blend(global, &target, rho);
        Ok(())
    }

    /// Updates what is derived from the blended parameters (a factorised posterior, hyperpriors).
    /// Default: nothing.
    ///
    /// # Errors
    /// A model-specific [`EngineError`]; a model that can carry on (keep the previous posterior)
    /// should count the failure in `global` instead.
    fn after_blend(&self, global: &mut Self::Global) -> Result<(), EngineError> {
        let _ = global;
        Ok(())
    }

    /// [`Self::after_blend`], and the natural parameters of the updated `global` if computing
    /// them was part of the update: the engine then uses them for the next iteration instead of
    /// calling [`Self::expected_natural`] on the same `global` (nothing changes it in between).
    /// They must equal `expected_natural(global)` exactly. Default: [`Self::after_blend`] and
    /// `None`.
    ///
    /// # Errors
    /// As [`Self::after_blend`].
    fn after_blend_natural(
        &self,
        global: &mut Self::Global,
    ) -> Result<Option<Self::Natural>, EngineError> {
        self.after_blend(global)?;
        Ok(None)
    }
}
