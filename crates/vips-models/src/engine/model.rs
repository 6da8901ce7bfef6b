//! The model trait the VIPS engine drives (003 Algorithm 2; Algorithm 4 for models made
//! conjugate by augmentation).

use dp_core::wall::segments::SegmentBuffer;
use dp_core::{ContributionBuffer, Release, ReleaseSpec};
use rand::Rng;
use serde::Serialize;

use super::EngineError;

/// A conjugate-exponential model, seen by the engine as five maps (003 Sec. 2.5, Algorithm 2):
///
/// 1. [`release_spec`](VipsModel::release_spec): the blocks of the expected sufficient statistic,
///    each with its per-record L2 (Frobenius) bound and shape (vector, matrix, or symmetric with
///    Analyze-Gauss and an eigenvalue floor). Blocks with different bounds go out in one release
///    by rescale-noise-rescale (003 Eq. 63).
/// 2. [`expected_natural`](VipsModel::expected_natural): the global variational parameters
///    `nu~` -> the expected natural parameters `n_bar` the E-step needs;
/// 3. [`record_statistic`](VipsModel::record_statistic) (E-step, behind the privacy wall): one
///    record and `n_bar` -> the record's expected sufficient statistic
///    `<s(D_n, l_n)>_{q(l_n)}`, written sparsely or densely into the wall's buffer; the wall clips
///    each block to its bound;
/// 4. [`global_target`](VipsModel::global_target) (M-step, outside the wall): the release
///    (noised sums divided by the public expected batch size) -> `nu + N s~`, with any
///    model-specific post-processing (LDA maps negative entries to 0; symmetric blocks arrive
///    projected onto the positive-definite cone);
/// 5. [`blend`](VipsModel::blend): the SVI step `nu~ <- (1 - rho) nu~ + rho nu_target`.
///
/// Everything after the release is post-processing of the noised statistics, so it is as
/// private as they are. Batch (full-data) VB is the same loop with Poisson rate `q = 1` and a
/// constant step `rho = 1`.
///
/// `Scratch` is created at most once per worker thread and reused across records, so an E-step
/// that writes into it need not allocate per record.
pub trait VipsModel: Sync {
    /// One private record (a document, a labelled feature vector, a binary image).
    type Record: Send + Sync;
    /// The global variational parameters `nu~` (serialised into the fit result).
    type Global: Clone + Send + Sync + Serialize;
    /// The expected natural parameters `n_bar` computed from `Global` (read-only in the E-step).
    type Natural: Sync;
    /// Per-thread E-step buffers.
    type Scratch: Send;

    /// Short model name for traces and ledger labels.
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

    /// The statistic's blocks with their per-record bounds.
    ///
    /// # Errors
    /// [`EngineError::Wall`] if dp-core refuses a block (bound not finite and positive, empty).
    fn release_spec(&self) -> Result<ReleaseSpec, EngineError>;

    /// The initial global parameters (drawn from `rng`, which is *not* the noise RNG).
    fn init_global(&self, rng: &mut dyn Rng) -> Self::Global;

    /// `n_bar` from `nu~`.
    fn expected_natural(&self, global: &Self::Global) -> Self::Natural;

    /// Fresh per-thread buffers.
    fn new_scratch(&self) -> Self::Scratch;

    /// The E-step for one record: write its expected sufficient statistic into `out` (zeroed;
    /// block indices as in [`VipsModel::release_spec`]). The wall clips each block to its bound.
    fn record_statistic(
        &self,
        natural: &Self::Natural,
        record: &Self::Record,
        scratch: &mut Self::Scratch,
        out: &mut ContributionBuffer,
    );

    /// Whether the model writes its statistic as disjoint runs through
    /// [`VipsModel::record_segments`] (dp-core's segment release) instead of
    /// [`VipsModel::record_statistic`]. Only for a spec with one vector or matrix block.
    /// Default `false`: the general path.
    fn writes_segments(&self) -> bool {
        false
    }

    /// The E-step for one record, written as disjoint runs of the single block in increasing
    /// order (used when [`VipsModel::writes_segments`] is `true`; the wall clips the runs jointly
    /// to the block's bound). The default writes nothing and is never called by the driver for
    /// models that keep the default [`VipsModel::writes_segments`].
    fn record_segments(
        &self,
        natural: &Self::Natural,
        record: &Self::Record,
        scratch: &mut Self::Scratch,
        out: &mut SegmentBuffer,
    ) {
        let _ = (natural, record, scratch, out);
    }

    /// The M-step target `nu + population * s~` from the release (`release.blocks()[b]` is
    /// block `b`, already divided by the expected batch size).
    fn global_target(&self, release: &Release, population: f64) -> Self::Global;

    /// The damped update `global <- (1 - rho) global + rho target`.
    fn blend(&self, global: &mut Self::Global, target: &Self::Global, rho: f64);
}
