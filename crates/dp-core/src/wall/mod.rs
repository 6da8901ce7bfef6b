//! The privacy wall: the only way information about the records gets out.
//!
//! Two releases live here: [`PrivacyWall::release`] (noised sums of per-record statistics,
//! below) and [`partition::select_partitions`] (which keys occur in the records, by Gaussian
//! thresholding with a contribution bound enforced here).
//!
//! A [`PrivacyWall`] owns the sensitive records, a total [`Budget`], an accountant ledger, the
//! sampling scheme and the noise RNG. Its one release operation
//! ([`PrivacyWall::release`]):
//! 1. checks that one more release fits the budget (else [`CoreError::BudgetExhausted`], nothing
//!    released, ledger unchanged);
//! 2. draws a batch with the wall's [`SamplingScheme`] (the sampler the accountant assumes);
//! 3. evaluates the caller's per-record statistic on each sampled record, in parallel, into a
//!    reusable [`ContributionBuffer`] addressed by the typed handles of the [`ReleaseSpec`]
//!    (sparse, dense and run writes alike), clips each **group** of each record to the group's
//!    declared bound and sums (see below for the order of the additions);
//! 4. adds Gaussian noise by rescale-noise-rescale (003 Eq. 63), described below. One noise
//!    multiplier, one accountant event per release. Symmetric blocks get Analyze-Gauss noise
//!    (upper triangle incl. diagonal, mirrored);
//! 5. divides by the **public expected** batch size (`qN`, `m` or `1`), projects symmetric
//!    blocks with a floor onto the positive-definite cone, records the event with notes (the
//!    ledger entry labelled `"<spec name> #<release number>"` unless the caller chose a label),
//!    and returns the [`Release`].
//!
//! # Groups, weights and the noise (the one statement of the formula)
//! A spec's blocks are partitioned into `G` **groups** ([`ReleaseSpecBuilder::group`]; an
//! ungrouped block is a group of one). Group `g` has a joint per-record bound `B_g`: the L2
//! norm of the concatenation of a record's contributions to the group's blocks (a symmetric
//! block counted as in its Frobenius norm, off-diagonal stored entries twice) is clipped to
//! `B_g`, by one scale for the whole group. Group `g` also has a **noise weight** `a_g > 0`
//! (default `1`; [`ReleaseSpecBuilder::weight`]). Rescale-noise-rescale divides group `g` by
//! `B_g / a_g`: the rescaled record has norm `<= a_g` on group `g`, so the concatenation over
//! all groups has add/remove sensitivity
//!
//! `Delta = sqrt(sum_g a_g^2)` (`sqrt(G)` with default weights;
//! [`ReleaseSpec::rescaled_sensitivity`]),
//!
//! and `f Delta` under the scheme's relation (`f = 1` add/remove-one, `f = 2` replace-one). It
//! gets iid noise of std `sigma f Delta` and is scaled back, so every free entry of the **sum**
//! of a block of group `g` gets noise of std
//!
//! `B_g / a_g x sigma x f x sqrt(sum_g a_g^2)`,
//!
//! divided by the expected batch size in the release ([`ReleasedBlock::noise_std`]). With `k`
//! ungrouped blocks of weight 1 this is `B_j sigma f sqrt(k)`, the noise of the wall before
//! groups existed, drawn bit for bit as then. `K` blocks whose per-record contributions share
//! one joint bound `B` (a mixture model's `K` covariance statistics: a record's
//! responsibilities sum to one) grouped with bound `B` count once, not `K` times, in the
//! sensitivity: up to `sqrt(K)` less noise than `K` separate bounds `B`. A weight trades noise
//! between groups at a fixed privacy cost (the event depends on `sigma` only).
//!
//! # Order of the additions
//! Entry writes (sparse and dense) are summed per chunk of 64 records from zero and the chunk
//! sums added in chunk order; runs ([`ContributionBuffer::segment`]) are added record by record
//! in batch order (on several threads: each record as soon as it and every record before it
//! are clipped; for a large spec, span by span of the block after a group of records). Both
//! orders are fixed by the batch alone, so a seeded release is bit-identical at any rayon
//! thread count.

mod accumulate;
mod buffer;
mod calibrate;
mod noise_ahead;
pub mod partition;
mod planned;
mod release;
mod source;
mod spec;

use std::collections::BTreeMap;
use std::sync::Arc;

use dp_accountant::{Accountant, AccountantConfig, Budget, LedgerEntry, PrivacyEvent};
use nalgebra::{DMatrix, DVector};
use rand::rngs::ChaCha20Rng;
use serde::{Deserialize, Serialize};

pub use buffer::ContributionBuffer;
pub use calibrate::calibrate_noise_multiplier;
pub use release::{BlockValue, Release, ReleaseDiagnostics, ReleasedBlock};
pub use source::{RecordSource, SourceError};
pub use spec::{
    BlockGroup, BlockHandle, BlockShape, BlockSpec, EntryHandle, GroupSpec, MatrixBlock,
    MatrixHandle, ReleaseSpec, ReleaseSpecBuilder, RunHandle, SymmetricBlock, SymmetricHandle,
    VectorBlock, WeightTarget,
};

use crate::analyze_gauss::{project_to_positive_definite, unpack_symmetric};
use crate::error::CoreError;
use crate::gaussian::{NoiseSource, spans_of};
use crate::rng::RngPolicy;
use crate::sampling::SamplingScheme;
use noise_ahead::NoiseAhead;
use source::{Records, SourcedBatch};

/// Most specs whose notes the wall keeps for sharing (see [`ReleaseRecord::notes`]).
const NOTES_TABLE_LEN: usize = 64;

/// How the wall chooses its noise multiplier.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSetting {
    /// A noise multiplier chosen by the caller (noise std / sensitivity of the rescaled
    /// concatenation under the scheme's relation).
    NoiseMultiplier(f64),
    /// Calibrate through the accountant so that this many releases fit the budget
    /// ([`calibrate_noise_multiplier`]).
    CalibrateForReleases(u64),
}

/// A record of one release kept by the wall (private and non-private alike).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleaseRecord {
    /// Zero-based release number.
    pub index: u64,
    /// Whether noise was added.
    pub private: bool,
    /// The ledger notes of the release (mechanism, sampling, sensitivities, noise, RNG policy),
    /// shared by every release of the same spec (stored once, not per release).
    #[serde(with = "shared_notes")]
    pub notes: Arc<BTreeMap<String, String>>,
    /// Records clipped in this release (a non-private diagnostic, see [`ReleaseDiagnostics`]).
    pub clipped_records: u64,
    /// Records replaced by zero in this release (malformed or non-finite statistic; a
    /// non-private diagnostic, see [`ReleaseDiagnostics`]).
    #[serde(default)]
    pub replaced_records: u64,
}

/// Serialises shared notes as a plain map.
mod shared_notes {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn serialize<S: Serializer>(
        notes: &Arc<BTreeMap<String, String>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        notes.as_ref().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Arc<BTreeMap<String, String>>, D::Error> {
        BTreeMap::deserialize(d).map(Arc::new)
    }
}

/// Builder of a [`PrivacyWall`]; see [`PrivacyWall::builder`].
///
/// Its `Debug` output shows the settings and the number of records, never the records.
pub struct WallBuilder<R> {
    records: Records<R>,
    scheme: Option<SamplingScheme>,
    budget: Option<Budget>,
    non_private: bool,
    noise: Option<NoiseSetting>,
    rng: RngPolicy,
    public_population: Option<usize>,
    require_public_population: bool,
    noise_scale: f64,
    config: AccountantConfig,
    invalid: Option<CoreError>,
    plan: Option<(String, u64)>,
    slots: Option<usize>,
    preceded_by: Vec<LedgerEntry>,
}

impl<R> WallBuilder<R> {
    /// The sampling scheme every release uses (required).
    pub fn sampling(mut self, scheme: SamplingScheme) -> Self {
        self.scheme = Some(scheme);
        self
    }

    /// The total budget (required unless [`Self::non_private`]).
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The total budget as numbers; `epsilon = f64::INFINITY` selects non-private mode (the same
    /// code path without noise; see [`Self::non_private`]).
    pub fn epsilon_delta(mut self, epsilon: f64, delta: f64) -> Self {
        if epsilon == f64::INFINITY {
            self.non_private = true;
        } else {
            match Budget::new(epsilon, delta) {
                Ok(b) => self.budget = Some(b),
                Err(e) => self.invalid = Some(e.into()),
            }
        }
        self
    }

    /// Non-private mode (`epsilon = infinity`): releases go through the same sampling, clipping,
    /// clip counting and normalisation, without noise; each is logged as non-private in
    /// [`PrivacyWall::release_log`] and nothing is charged to the ledger. For baselines only.
    pub fn non_private(mut self) -> Self {
        self.non_private = true;
        self
    }

    /// A caller-chosen noise multiplier.
    pub fn noise_multiplier(mut self, sigma: f64) -> Self {
        self.noise = Some(NoiseSetting::NoiseMultiplier(sigma));
        self
    }

    /// Calibrate the noise multiplier so that `planned_releases` releases fit the budget.
    pub fn calibrate_for_releases(mut self, planned_releases: u64) -> Self {
        self.noise = Some(NoiseSetting::CalibrateForReleases(planned_releases));
        self
    }

    /// The RNG policy (default: ChaCha20 from OS entropy).
    pub fn rng(mut self, policy: RngPolicy) -> Self {
        self.rng = policy;
        self
    }

    /// Shorthand for `rng(RngPolicy::Seeded { seed })`: reproducible noise, recorded as such.
    pub fn seed(self, seed: u64) -> Self {
        self.rng(RngPolicy::Seeded { seed })
    }

    /// The public population size `N`, declared by the caller (never computed from the data).
    ///
    /// Under Poisson sampling (add/remove-one) the realised number of records is private: it
    /// differs by one between neighbouring datasets. With a declared `N`, the wall uses `N`
    /// wherever a population size enters a released number or the accounting: the normaliser
    /// `qN` (hence every released value, `noise_std`, `sensitivity` and the ledger notes), the
    /// calibration and the accountant event; the realised count then influences nothing that
    /// leaves the wall (only the batch, through the records themselves), and the wall may even
    /// hold no records. Without it the realised count is used as if public (the papers' choice);
    /// [`Self::require_public_population`] refuses that.
    ///
    /// Under replace-one (fixed-size or single-draw sampling) the record count is public (a
    /// neighbour has the same count) and the accountant needs the true `m / N`: a declared `N`
    /// must equal it.
    pub fn public_population_size(mut self, n: usize) -> Self {
        self.public_population = Some(n);
        self
    }

    /// Refuses to build a **private Poisson** (add/remove-one) wall without
    /// [`Self::public_population_size`]: the realised count is private under add/remove-one and
    /// must not shape the normaliser or the accounting. No effect on replace-one or non-private
    /// walls.
    pub fn require_public_population(mut self) -> Self {
        self.require_public_population = true;
        self
    }

    /// **Audits only: plants a bug.** Multiplies the noise the wall actually draws by `scale`
    /// while everything it reports (noise std, event, ledger) stays the declared mechanism's,
    /// so that the empirical audit ([`crate::audit`]) can show it catches a mis-scaled noise.
    /// Recorded in every ledger entry's notes when not `1`.
    #[doc(hidden)]
    pub fn planted_noise_scale(mut self, scale: f64) -> Self {
        match crate::error::check_positive("planted noise scale", scale) {
            Ok(s) => self.noise_scale = s,
            Err(e) => self.invalid = Some(e),
        }
        self
    }

    /// **Planned accounting**: the whole run of `releases` releases is charged up front, at
    /// [`Self::build`], as **one** ledger entry labelled `label` (the per-release event composed
    /// over the run: [`SamplingScheme::run_event`]), before any record is touched; the wall then
    /// makes up to `releases` releases without touching the ledger and refuses release
    /// `releases + 1` with [`CoreError::BudgetExhausted`]. Without a noise setting the noise
    /// multiplier is calibrated for the run. The alternative (the default) is per-release
    /// accounting: each release is checked against the ledger and recorded as its own entry.
    ///
    /// Use it for long runs of small releases (DP-SEP's one record per step): the accounting
    /// cost is paid once instead of per release. [`SamplingScheme::ShuffledEpoch`] requires it
    /// (it is accounted per epoch).
    ///
    /// # Privacy
    /// The ledger holds the cost of the **planned** run from the start, whether or not every
    /// release is made: [`PrivacyWall::spent_epsilon`] is the run's epsilon from the first
    /// release on. A run stopped early has paid for all of it.
    pub fn planned_run(mut self, label: impl Into<String>, releases: u64) -> Self {
        self.plan = Some((label.into(), releases));
        self
    }

    /// **Replace-one schemes** (fixed size, single draw, shuffled epoch): the wall's data set is
    /// exactly `n` **slots**, `n` declared public (never computed from the records). With fewer
    /// records than `n` the spare slots hold nothing and contribute zero when drawn (a record
    /// whose statistic is zero; the release is made and noised as any other); with more, a
    /// secret uniformly random subset of `n` records, chosen once at [`Self::build`] from the
    /// sampling stream, fills the slots and the rest are never used. The sampler draws from the
    /// `n` slots, and `n` is the population of the accounting, the normaliser and the notes, so
    /// the realised record count shapes nothing that leaves the wall.
    ///
    /// # Privacy
    /// The guarantee is stated for the slot data set under replace-one: replacing one record
    /// that fills a slot changes one slot.
    pub fn population_slots(mut self, n: usize) -> Self {
        self.slots = Some(n);
        self
    }

    /// **Tests only: no noise.** Everything else stays the private wall's (sampling, clipping,
    /// replacement of failing records, accounting, notes); the noise actually drawn is zero
    /// (recorded in the notes). The seam end-to-end neighbouring tests use to compare the
    /// noise-free released values of two neighbouring data sets with all other randomness
    /// equal.
    #[doc(hidden)]
    pub fn noise_free_for_tests(mut self) -> Self {
        self.noise_scale = 0.0;
        self
    }

    /// The accountant's configuration: which accountant calibrates the noise and accounts every
    /// release ([`dp_accountant::AccountantKind`]: RDP, PLD, moments, zCDP, advanced, linear),
    /// and RDP's orders and conversion; default: the accountant's default (RDP). The ledger
    /// records it (its JSON names any accountant but RDP) and replays under it.
    pub fn accountant_config(mut self, config: AccountantConfig) -> Self {
        self.config = config;
        self
    }

    /// **Earlier releases of the same data**: the ledger starts with `entries` (the ledger of a
    /// wall that released from the same records before this one, e.g. a small private estimate
    /// that chose a public-looking setting of this run), so that every budget check, the spent
    /// epsilon and the ledger this wall hands out cover both. Such a wall needs an explicit
    /// [`Self::noise_multiplier`] (the caller split the budget; calibrating this run alone would
    /// ignore what was spent) and a budget the earlier entries fit in.
    ///
    /// # Privacy
    /// Sequential composition: the earlier releases and this wall's are accounted together under
    /// the one accountant, so the budget bounds the whole sequence. The entries must be under
    /// the same neighbouring relation (the accountant refuses a mix).
    pub fn preceded_by(mut self, entries: Vec<LedgerEntry>) -> Self {
        self.preceded_by = entries;
        self
    }

    /// Checks everything and builds the wall (calibrating the noise if asked).
    ///
    /// # Errors
    /// [`CoreError::Misconfigured`] for a missing scheme, budget or noise setting, or both a
    /// budget and non-private mode; [`CoreError::Empty`] for no records; the scheme's,
    /// the noise multiplier's and the calibration's errors; [`CoreError::Entropy`] if the OS
    /// cannot seed the RNG. With [`Self::preceded_by`]: [`CoreError::Misconfigured`] for a
    /// non-private wall or one without an explicit noise multiplier,
    /// [`CoreError::BudgetExhausted`] when the earlier entries alone exceed the budget, and the
    /// accountant's error for entries it cannot compose.
    pub fn build(self) -> Result<PrivacyWall<R>, CoreError> {
        if let Some(e) = self.invalid {
            return Err(e);
        }
        if !self.preceded_by.is_empty() {
            if self.non_private {
                return Err(CoreError::Misconfigured(
                    "a non-private wall cannot be preceded by private releases",
                ));
            }
            if !matches!(self.noise, Some(NoiseSetting::NoiseMultiplier(_))) {
                return Err(CoreError::Misconfigured(
                    "a wall preceded by earlier releases needs an explicit noise multiplier \
                     (calibrating this run alone would ignore what was spent)",
                ));
            }
        }
        let scheme = self
            .scheme
            .ok_or(CoreError::Misconfigured("no sampling scheme given"))?;
        let mut n = self.records.len();
        let mut declared = self.public_population;
        if declared == Some(0) || self.slots == Some(0) {
            return Err(CoreError::Empty("public population size is zero"));
        }
        if let Some(slots) = self.slots {
            if let SamplingScheme::Poisson { .. } = scheme {
                return Err(CoreError::Misconfigured(
                    "population slots are for replace-one schemes; under Poisson sampling \
                     declare the public population size instead",
                ));
            }
            if declared.is_some_and(|d| d != slots) {
                return Err(CoreError::Misconfigured(
                    "a declared public population size must equal the population slots",
                ));
            }
            if self.records.is_empty() {
                return Err(CoreError::Empty("the wall holds no records"));
            }
            n = slots;
            declared = Some(slots);
        }
        if let SamplingScheme::ShuffledEpoch = scheme
            && !self.non_private
            && self.plan.is_none()
        {
            return Err(CoreError::Misconfigured(
                "a shuffled epoch is accounted per epoch: a private shuffled-epoch wall needs \
                 planned accounting (planned_run) over whole epochs",
            ));
        }
        if let Some((_, releases)) = &self.plan {
            scheme.accounted_steps(declared.unwrap_or(n), *releases)?;
        }
        if let SamplingScheme::Poisson { .. } = scheme {
            if self.require_public_population && !self.non_private && declared.is_none() {
                return Err(CoreError::Misconfigured(
                    "a private Poisson (add/remove-one) wall requires a declared public \
                     population size (public_population_size): the record count is private",
                ));
            }
            if declared.is_none() {
                scheme.check_population(n)?;
            }
        } else {
            scheme.check_population(n)?;
            if declared.is_some_and(|d| d != n) {
                return Err(CoreError::Misconfigured(
                    "under replace-one (fixed-size or single-draw sampling) the record count is \
                     public and the accountant needs it: a declared public population size \
                     must equal it",
                ));
            }
        }
        // The population size of everything that leaves the wall: the declared N, or the
        // record count (public under replace-one; used as if public under Poisson when no N
        // was declared).
        let public_n = declared.unwrap_or(n);
        let normaliser = scheme.expected_batch_size(public_n)?;
        let mode = match (self.non_private, self.budget) {
            (true, Some(_)) => {
                return Err(CoreError::Misconfigured(
                    "both a budget and non-private mode were given",
                ));
            }
            (true, None) => Mode::NonPrivate,
            (false, None) => return Err(CoreError::Misconfigured("no budget given")),
            (false, Some(budget)) => {
                let noise = match (self.noise, &self.plan) {
                    (None, Some((_, t))) => Some(NoiseSetting::CalibrateForReleases(*t)),
                    (Some(NoiseSetting::CalibrateForReleases(t)), Some((_, planned)))
                        if t != *planned =>
                    {
                        return Err(CoreError::Misconfigured(
                            "calibrate_for_releases differs from the planned run's releases",
                        ));
                    }
                    (noise, _) => noise,
                };
                let sigma = match noise {
                    None => return Err(CoreError::Misconfigured("no noise setting given")),
                    Some(NoiseSetting::NoiseMultiplier(s)) => {
                        crate::error::check_positive("noise multiplier", s)?
                    }
                    Some(NoiseSetting::CalibrateForReleases(t)) => {
                        calibrate_noise_multiplier(&budget, &scheme, public_n, t, &self.config)?
                    }
                };
                let event = scheme.event(sigma, public_n)?;
                Mode::Private {
                    budget,
                    sigma,
                    event,
                }
            }
        };
        let ledger = prior_ledger(self.config, self.preceded_by, &mode)?;
        let (mut sampling_rng, noise_rng) = self.rng.streams()?;
        let slots = self
            .slots
            .map(|slots| fill_slots(self.records.len(), slots, &mut sampling_rng));
        let mut wall = PrivacyWall {
            records: self.records,
            scheme,
            mode,
            ledger,
            log: Vec::new(),
            rng_policy: self.rng,
            sampling_rng,
            noise_rng,
            normaliser,
            public_population: declared,
            noise_scale: self.noise_scale,
            batch: Vec::new(),
            releases: 0,
            sums: accumulate::SumScratch::default(),
            notes_table: Vec::new(),
            planned: None,
            slots,
            epoch_order: Vec::new(),
            fast: FastScratch::default(),
            spare: Vec::new(),
        };
        if let Some((label, releases)) = self.plan {
            wall.charge_plan(label, releases)?;
        }
        Ok(wall)
    }
}

/// The ledger a wall starts with: the earlier `entries`, checked against the budget of `mode`.
fn prior_ledger(
    config: AccountantConfig,
    entries: Vec<LedgerEntry>,
    mode: &Mode,
) -> Result<Accountant, CoreError> {
    let mut ledger = Accountant::with_config(config)?;
    for entry in entries {
        ledger.record_entry(entry)?;
    }
    if let Mode::Private { budget, event, .. } = mode
        && !ledger.is_empty()
    {
        // This wall's releases must compose with the earlier ones (same neighbouring relation,
        // an accountant that covers both): found now, not at the first release.
        ledger
            .clone()
            .record("compatibility probe", event.clone())?;
        if ledger.epsilon(budget.delta())? > budget.epsilon() {
            return Err(CoreError::BudgetExhausted {
                total_epsilon: budget.epsilon(),
                total_delta: budget.delta(),
            });
        }
    }
    Ok(ledger)
}

/// The record index of each of `slots` slots: the first records in order when there are at
/// most `slots` records (the rest empty), else a uniformly random subset of `slots` records
/// drawn from `rng` (see [`WallBuilder::population_slots`]).
fn fill_slots(records: usize, slots: usize, rng: &mut ChaCha20Rng) -> Vec<Option<usize>> {
    if records <= slots {
        (0..slots).map(|i| (i < records).then_some(i)).collect()
    } else {
        rand::seq::index::sample(rng, records, slots)
            .into_iter()
            .map(Some)
            .collect()
    }
}

/// Memory of the cheap path ([`PrivacyWall::release_into`]) reused between releases.
#[derive(Debug, Default)]
struct FastScratch {
    sums: accumulate::SumScratch,
}

#[derive(Clone)]
enum Mode {
    Private {
        budget: Budget,
        sigma: f64,
        event: PrivacyEvent,
    },
    NonPrivate,
}

/// The privacy wall (see the [module documentation](self)).
///
/// # Privacy
/// Under the scheme's neighbouring relation (add/remove-one for Poisson sampling, replace-one for
/// fixed-size and single draws), each release is the subsampled Gaussian mechanism recorded in
/// the ledger: per-record contributions are clipped to the declared bounds (enforced, not
/// assumed), the noise is calibrated to the clipped sum's sensitivity, and the result is divided
/// by a public number. Releases are refused once the ledger would exceed the budget, so the whole
/// sequence of releases is `(budget.epsilon, budget.delta)`-DP. The wall never exposes its
/// records, the batch, the realised batch size, or the pre-noise sums.
///
/// *Failing contributions.* In a private release a record whose statistic is malformed (a
/// write outside its block, runs out of order, a wrong length) or non-finite is replaced by
/// zero: it adds nothing (so the sensitivity argument holds whatever the statistic does), it is
/// counted in the release's non-private diagnostics, and the release goes ahead and is charged.
/// A failure therefore neither reveals that a sampled record triggered it nor can be retried for
/// a fresh batch without paying. Error messages never carry a record-derived value (an index,
/// an entry, a position in the batch). In non-private mode such a record fails the release with
/// [`CoreError::InvalidContribution`] instead (a loud bug report for baselines).
///
/// *Population size.* Under add/remove-one (Poisson) the realised record count is private;
/// declare a public `N` ([`WallBuilder::public_population_size`], enforced by
/// [`WallBuilder::require_public_population`]) and the wall uses it for the normaliser `qN`, the
/// calibration and the accountant event, so the realised count shapes no released number.
/// [`PrivacyWall::population`] returns the realised count: private under add/remove-one.
///
/// *Not covered, documented:* the diagnostics ([`ReleaseDiagnostics`]: clip and replacement
/// counts, in [`Release::diagnostics`] and [`PrivacyWall::release_log`]); without a declared
/// `N`, a Poisson wall's normaliser reveals the record count; a seeded RNG gives no privacy
/// against whoever knows the seed; and floating-point Gaussian noise is not hardened against
/// least-significant-bit attacks (Mironov 2012).
///
/// # Example
/// ```
/// use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};
/// // records: a word id each; the statistic: a unit run of 2 entries at 2 x id, and a count
/// let records: Vec<usize> = (0..1000).map(|i| i % 7).collect();
/// let mut wall = PrivacyWall::builder(records)
///     .sampling(SamplingScheme::poisson(0.1)?)
///     .epsilon_delta(2.0, 1e-5)
///     .calibrate_for_releases(10)
///     .build()?;
/// let mut spec = ReleaseSpec::builder("word counts");
/// let runs = spec.vector("runs", 14, 1.0)?;
/// let count = spec.vector("count", 1, 1.0)?;
/// let spec = spec.build()?;
/// let release = wall.release(&spec, |&w: &usize, buf| {
///     buf.push_segment(runs, 2 * w, &[0.6, 0.8]); // a run
///     buf.push(count, 0, 1.0);                    // a sparse entry
/// })?;
/// assert_eq!(release.vector(runs)?.len(), 14);
/// assert_eq!(wall.ledger().entries()[0].label, "word counts #0");
/// assert!(wall.spent_epsilon()? <= 2.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PrivacyWall<R> {
    records: Records<R>,
    scheme: SamplingScheme,
    mode: Mode,
    ledger: Accountant,
    log: Vec<ReleaseRecord>,
    rng_policy: RngPolicy,
    sampling_rng: ChaCha20Rng,
    noise_rng: ChaCha20Rng,
    normaliser: f64,
    /// The declared public population size, if any.
    public_population: Option<usize>,
    /// Noise actually drawn / declared noise: `1` except in an audit's planted bug.
    noise_scale: f64,
    batch: Vec<usize>,
    releases: u64,
    /// Memory of the clipped sums reused between releases (never exposed).
    sums: accumulate::SumScratch,
    /// The notes of each spec released under per-release accounting, built once per spec and
    /// shared by its releases' log records.
    notes_table: Vec<(ReleaseSpec, Arc<BTreeMap<String, String>>)>,
    /// Planned accounting: the number of releases charged up front.
    planned: Option<u64>,
    /// Population slots (replace-one with a declared `N`): the record of each slot, if any.
    slots: Option<Vec<Option<usize>>>,
    /// The shuffled epoch's remaining order (sampler state; never exposed).
    epoch_order: Vec<usize>,
    /// Memory of the cheap path reused between releases (never exposed).
    fast: FastScratch,
    /// Buffers of released values handed back by [`PrivacyWall::recycle`] (public numbers
    /// only), reused by the next release.
    spare: Vec<Vec<f64>>,
}

impl<R> std::fmt::Debug for WallBuilder<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WallBuilder")
            .field("records", &self.records.len())
            .field("scheme", &self.scheme)
            .field("budget", &self.budget)
            .field("non_private", &self.non_private)
            .field("noise", &self.noise)
            .field("rng", &self.rng)
            .field("public_population", &self.public_population)
            .finish_non_exhaustive()
    }
}

/// Shows public facts only: never the records, the batch or the RNG state.
impl<R> std::fmt::Debug for PrivacyWall<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivacyWall")
            .field("population", &self.public_population_shown())
            .field("scheme", &self.scheme)
            .field("budget", &self.budget())
            .field("noise_multiplier", &self.noise_multiplier())
            .field("rng_policy", &self.rng_policy)
            .field("expected_batch_size", &self.normaliser)
            .field("releases", &self.releases)
            .finish_non_exhaustive()
    }
}

impl<R> PrivacyWall<R> {
    /// Starts building a wall around `records` (the wall takes ownership).
    pub fn builder(records: Vec<R>) -> WallBuilder<R> {
        Self::builder_over(Records::Memory(records))
    }

    /// Starts building a wall that **reads its records from `source`** per batch instead of
    /// holding them: each release draws record indices with the wall's sampler, reads only those
    /// records ([`RecordSource::read_batch`], 4,096 at a time), sums their clipped statistics
    /// and drops them. The wall's memory is then the batch's indices, one slice of records and
    /// the release, not the records (a full-population batch included). Planned runs
    /// ([`WallBuilder::planned_run`], small batches) read their batch at once.
    ///
    /// With the same records, settings and seed, every release is **bit-identical** to the
    /// release of a wall built with [`Self::builder`] over those records in a `Vec`: the same
    /// sampling stream draws the same indices, and the batch is summed in the same order.
    ///
    /// # Privacy
    /// As [`Self::builder`], for the records the source returns. The source's
    /// [`RecordSource::len`] is the realised count, private under add/remove-one: declare the
    /// public `N` ([`WallBuilder::public_population_size`]). A record the source cannot decode
    /// ([`SourceError::Record`]) is a malformed contribution: replaced by zero in a private
    /// release (counted in the non-private diagnostics), an error in a non-private one. A
    /// **failed read** ([`SourceError::Io`]) aborts the release with [`CoreError::Source`]:
    /// nothing is released, and the release is charged all the same (ledger entry with an
    /// `aborted` note, or one of the planned releases), so that a failure cannot be retried for
    /// a fresh batch without paying ([`Self::release_repeatedly`] too).
    ///
    /// # Example
    /// ```
    /// use dp_core::{PrivacyWall, RecordSource, ReleaseSpec, SamplingScheme, SourceError};
    /// struct Ones(usize); // n records, each the number 1, computed on demand
    /// impl RecordSource for Ones {
    ///     type Record = f64;
    ///     fn len(&self) -> usize { self.0 }
    ///     fn read(&self, _: usize) -> Result<f64, SourceError> { Ok(1.0) }
    /// }
    /// let mut wall = PrivacyWall::from_source(Ones(1_000_000))
    ///     .sampling(SamplingScheme::poisson(1e-3)?)
    ///     .public_population_size(1_000_000)
    ///     .epsilon_delta(1.0, 1e-5)
    ///     .calibrate_for_releases(10)
    ///     .build()?;
    /// let mut spec = ReleaseSpec::builder("count");
    /// let count = spec.vector("count", 1, 1.0)?;
    /// let spec = spec.build()?;
    /// let release = wall.release(&spec, |x: &f64, buf| buf.push(count, 0, *x))?;
    /// assert_eq!(release.vector(count)?.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_source(source: impl RecordSource<Record = R> + 'static) -> WallBuilder<R> {
        Self::builder_over(Records::Source(SourcedBatch::new(Box::new(source))))
    }

    fn builder_over(records: Records<R>) -> WallBuilder<R> {
        WallBuilder {
            records,
            scheme: None,
            budget: None,
            non_private: false,
            noise: None,
            rng: RngPolicy::default(),
            public_population: None,
            require_public_population: false,
            noise_scale: 1.0,
            config: AccountantConfig::default(),
            invalid: None,
            plan: None,
            slots: None,
            preceded_by: Vec::new(),
        }
    }

    /// The sampling scheme of every release.
    pub fn sampling(&self) -> SamplingScheme {
        self.scheme
    }

    /// The total budget (`None` in non-private mode).
    pub fn budget(&self) -> Option<Budget> {
        match &self.mode {
            Mode::Private { budget, .. } => Some(*budget),
            Mode::NonPrivate => None,
        }
    }

    /// The noise multiplier (`None` in non-private mode).
    pub fn noise_multiplier(&self) -> Option<f64> {
        match &self.mode {
            Mode::Private { sigma, .. } => Some(*sigma),
            Mode::NonPrivate => None,
        }
    }

    /// Whether the wall adds noise.
    pub fn is_private(&self) -> bool {
        matches!(self.mode, Mode::Private { .. })
    }

    /// The accountant event charged per release (`None` in non-private mode).
    pub fn event_per_release(&self) -> Option<&PrivacyEvent> {
        match &self.mode {
            Mode::Private { event, .. } => Some(event),
            Mode::NonPrivate => None,
        }
    }

    /// The RNG policy.
    pub fn rng_policy(&self) -> RngPolicy {
        self.rng_policy
    }

    /// Number of records held: the **realised** count.
    ///
    /// # Privacy
    /// Public under replace-one (fixed-size and single-draw sampling), where neighbours have the
    /// same count. With [`WallBuilder::population_slots`] the public size is the declared `N`
    /// ([`Self::public_population`]); the realised count is then not used by anything that
    /// leaves the wall and should not be published. **Private under add/remove-one** (Poisson sampling): it differs by one between
    /// neighbouring datasets and is not covered by the guarantee, so it must not be published
    /// or used in a released number; use the declared [`Self::public_population`] instead
    /// ([`WallBuilder::public_population_size`]).
    pub fn population(&self) -> usize {
        self.records.len()
    }

    /// The population size that may be shown: the record count under replace-one (public),
    /// the declared `N` under Poisson (`None` if none was declared: the count is private).
    fn public_population_shown(&self) -> Option<usize> {
        if let Some(slots) = &self.slots {
            return Some(slots.len());
        }
        match self.scheme {
            SamplingScheme::Poisson { .. } => self.public_population,
            _ => Some(self.records.len()),
        }
    }

    /// The public population size declared with [`WallBuilder::public_population_size`]
    /// (`None` if none was declared).
    pub fn public_population(&self) -> Option<usize> {
        self.public_population
    }

    /// The public expected batch size every release is divided by.
    pub fn expected_batch_size(&self) -> f64 {
        self.normaliser
    }

    /// Number of releases made so far.
    pub fn releases_made(&self) -> u64 {
        self.releases
    }

    /// The accountant ledger (private releases only).
    pub fn ledger(&self) -> &Accountant {
        &self.ledger
    }

    /// Hands a release back once it has been read, so that the next release reuses the memory
    /// of its vector and matrix blocks of at most 2^21 entries (at most 8 buffers are kept)
    /// instead of allocating it afresh: a fit of many small releases (LDA's `K x V` topics)
    /// then stops paying for fresh pages every iteration. Larger blocks are freed, as when the
    /// release is dropped. Dropping a release instead is always correct.
    ///
    /// # Privacy
    /// The buffers hold released (noised, public) numbers only, and every entry is overwritten
    /// before the next release is returned: no value of one release reaches another.
    ///
    /// # Example
    /// ```
    /// use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};
    /// let mut wall = PrivacyWall::builder(vec![1.0_f64; 10])
    ///     .sampling(SamplingScheme::poisson(1.0)?)
    ///     .non_private()
    ///     .build()?;
    /// let mut spec = ReleaseSpec::builder("sum");
    /// let b = spec.vector("x", 3, 1.0)?;
    /// let spec = spec.build()?;
    /// let first = wall.release(&spec, |x: &f64, buf| buf.push(b, 0, *x))?;
    /// let value = first.vector(b)?.clone();
    /// wall.recycle(first);
    /// let second = wall.release(&spec, |x: &f64, buf| buf.push(b, 0, *x))?;
    /// assert_eq!(second.vector(b)?, &value);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn recycle(&mut self, release: Release) {
        for block in release.blocks {
            let buf: Vec<f64> = match block.value {
                BlockValue::Vector(v) => v.data.into(),
                BlockValue::Matrix(m) | BlockValue::Symmetric(m) => m.data.into(),
            };
            if buf.capacity() <= RECYCLE_MAX_ENTRIES && self.spare.len() < RECYCLE_MAX_BUFFERS {
                self.spare.push(buf);
            }
        }
    }

    /// Every release made, private or not, with its notes and its (non-private) clip and
    /// replacement counts.
    pub fn release_log(&self) -> &[ReleaseRecord] {
        &self.log
    }

    /// Total records clipped over all releases (a non-private diagnostic).
    pub fn total_clipped_records(&self) -> u64 {
        self.log.iter().map(|r| r.clipped_records).sum()
    }

    /// The diagnostics summed over all releases (clipped and replaced records): **not
    /// private**, see [`ReleaseDiagnostics`].
    pub fn total_diagnostics(&self) -> ReleaseDiagnostics {
        let mut total = ReleaseDiagnostics::default();
        for r in &self.log {
            total += ReleaseDiagnostics {
                clipped_records: r.clipped_records,
                replaced_records: r.replaced_records,
            };
        }
        total
    }

    /// The epsilon spent so far at the budget's delta (`0` before the first release and in
    /// non-private mode, where nothing is charged).
    ///
    /// # Errors
    /// [`CoreError::Accountant`] if the accountant fails.
    pub fn spent_epsilon(&self) -> Result<f64, CoreError> {
        match &self.mode {
            Mode::Private { budget, .. } if !self.ledger.is_empty() => {
                Ok(self.ledger.epsilon(budget.delta())?)
            }
            _ => Ok(0.0),
        }
    }

    /// Whether one more release fits the budget (always `true` in non-private mode without a
    /// plan; under planned accounting, whether fewer than the planned releases were made).
    ///
    /// # Errors
    /// [`CoreError::Accountant`] if the accountant fails.
    pub fn can_release(&self) -> Result<bool, CoreError> {
        if let Some(planned) = self.planned {
            return Ok(self.releases < planned);
        }
        match &self.mode {
            Mode::Private { budget, event, .. } => Ok(!self.ledger.would_exceed(event, budget)?),
            Mode::NonPrivate => Ok(true),
        }
    }

    /// Releases the noised, normalised sum of `statistic` over a freshly sampled batch.
    ///
    /// `statistic(record, buffer)` writes one record's contribution into `buffer` (zeroed for
    /// each record; sparse, dense and run writes through the spec's handles, see
    /// [`ContributionBuffer`]); it runs in parallel on rayon's pool and must not allocate per
    /// record if speed matters. Each group of blocks is clipped to its bound per record. The
    /// ledger entry is labelled `"<spec name> #<release number>"`.
    ///
    /// # Privacy
    /// See [`PrivacyWall`]. One release costs the wall's [`Self::event_per_release`]. In a
    /// private release a record whose statistic is malformed (an index outside its block, a
    /// write to a block that does not exist, an outer product of the wrong length) or
    /// non-finite is **replaced by zero**: it contributes nothing, it is counted in the
    /// release's non-private [`Release::diagnostics`] (`replaced_records`), and the release goes
    /// ahead and is charged. So whether a sampled record is malformed changes the release only
    /// as removing (or zeroing) that record would, which the noise covers, and a failure cannot
    /// be retried for a fresh batch.
    ///
    /// # Errors
    /// [`CoreError::BudgetExhausted`] if the release would exceed the budget (checked first;
    /// nothing sampled, ledger unchanged). **Non-private mode only**:
    /// [`CoreError::InvalidContribution`] if the statistic wrote outside a block or a non-finite
    /// value (nothing released; the message names the block and the kind of fault, never an
    /// index, a value or a position in the batch).
    pub fn release<F>(&mut self, spec: &ReleaseSpec, statistic: F) -> Result<Release, CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut ContributionBuffer) + Sync,
    {
        let label = format!("{} #{}", spec.name(), self.releases);
        self.release_with_label(label, spec, statistic)
    }

    /// [`Self::release`] with the ledger entry's label chosen by the caller
    /// (e.g. `"iteration 17: E-step"`) instead of the default `"<spec name> #<release number>"`.
    ///
    /// # Errors
    /// As [`Self::release`].
    pub fn release_with_label<F>(
        &mut self,
        label: impl Into<String>,
        spec: &ReleaseSpec,
        statistic: F,
    ) -> Result<Release, CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut ContributionBuffer) + Sync,
    {
        self.check_budget(self.event_per_release(), 1)?;
        let (blocks, diagnostics) = match self.noised_blocks(spec, &statistic) {
            Ok(done) => done,
            Err(e @ CoreError::Source(_)) => {
                self.charge_aborted(label.into(), spec)?;
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let sigma = self.noise_multiplier();
        // Under planned accounting the run's notes were written once, at build.
        let notes = match self.planned {
            Some(_) => Arc::default(),
            None => self.interned_notes(spec),
        };
        let event = self.event_per_release().cloned();
        let done = (event, blocks, diagnostics, sigma, 1);
        self.finish_release(label.into(), spec, notes, done)
    }

    /// `runs` releases of `statistic` (each a fresh batch and fresh noise, exactly as
    /// [`Self::release`] makes them), handed one by one to `observe` and charged as **one**
    /// ledger entry of the per-release event composed `runs` times (one [`ReleaseRecord`] with
    /// the summed diagnostics). For the empirical audit ([`crate::audit`]), which needs 10^6
    /// releases of the real path without a 10^6-entry ledger.
    ///
    /// # Privacy
    /// As `runs` calls of [`Self::release`]: the budget is checked for all of them at once. If
    /// a run fails, the runs already handed to `observe` are charged (plus the failed run if the
    /// record source aborted it, as [`Self::release`] charges it) before the error returns.
    ///
    /// # Errors
    /// As [`Self::release`]; [`CoreError::InvalidParameter`] for `runs == 0`.
    #[doc(hidden)]
    pub fn release_repeatedly<F, O>(
        &mut self,
        label: impl Into<String>,
        spec: &ReleaseSpec,
        runs: u64,
        statistic: F,
        mut observe: O,
    ) -> Result<(), CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut ContributionBuffer) + Sync,
        O: FnMut(&Release),
    {
        if runs == 0 {
            return Err(CoreError::InvalidParameter {
                name: "runs",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        let composed = |wall: &Self, n: u64| -> Result<Option<PrivacyEvent>, CoreError> {
            Ok(match wall.event_per_release() {
                Some(e) => Some(e.clone().self_composed(n)?),
                None => None,
            })
        };
        let event = composed(self, runs)?;
        self.check_budget(event.as_ref(), runs)?;
        let sigma = self.noise_multiplier();
        let label = label.into();
        let mut total = ReleaseDiagnostics::default();
        let mut last = Vec::new();
        for run in 0..runs {
            let (blocks, diagnostics) = match self.noised_blocks(spec, &statistic) {
                Ok(done) => done,
                Err(e) => {
                    // The releases already handed to `observe` are charged, and a run the
                    // record source aborted counts as one more (as in `release`).
                    let charged = run + u64::from(matches!(e, CoreError::Source(_)));
                    if charged > 0 {
                        let mut notes = self.notes(spec, sigma);
                        notes.insert(
                            "releases".into(),
                            format!("{charged} of {runs} (one entry; stopped by an error)"),
                        );
                        let done = (composed(self, charged)?, last, total, sigma, charged);
                        self.finish_release(label, spec, Arc::new(notes), done)?;
                    }
                    return Err(e);
                }
            };
            total += diagnostics;
            let release = Release {
                spec_id: spec.id(),
                index: self.releases + run,
                blocks,
                diagnostics,
                expected_batch_size: self.normaliser,
                noise_multiplier: sigma,
            };
            observe(&release);
            last = release.blocks;
        }
        let mut notes = self.notes(spec, sigma);
        notes.insert("releases".into(), format!("{runs} (one entry)"));
        let done = (event, last, total, sigma, runs);
        self.finish_release(label, spec, Arc::new(notes), done)?;
        Ok(())
    }

    /// Samples a batch into `self.batch`. Under Poisson sampling with a declared public
    /// population the wall may hold no records at all: the batch is then empty.
    fn sample_batch(&mut self) -> Result<(), CoreError> {
        if self.records.is_empty() {
            self.batch.clear();
            return Ok(());
        }
        let Some(slots) = &self.slots else {
            return self.scheme.sample_into(
                self.records.len(),
                &mut self.sampling_rng,
                &mut self.batch,
                &mut self.epoch_order,
            );
        };
        self.scheme.sample_into(
            slots.len(),
            &mut self.sampling_rng,
            &mut self.batch,
            &mut self.epoch_order,
        )?;
        // Drawn slots to records; an empty slot contributes nothing (as a zero statistic).
        self.batch.retain_mut(|i| match slots[*i] {
            Some(record) => {
                *i = record;
                true
            }
            None => false,
        });
        Ok(())
    }

    /// Whether malformed records are replaced by zero (private mode) or fail the release.
    fn replaces_invalid(&self) -> bool {
        self.is_private()
    }

    /// The noise std actually drawn for a block whose declared sum std is `declared` (the
    /// declared one unless an audit planted a bug).
    fn drawn_std(&self, declared: f64) -> f64 {
        declared * self.noise_scale
    }

    /// Samples, sums the clipped contributions, adds the noise, normalises and projects: the
    /// blocks of one release, and its diagnostics. Charges nothing.
    fn noised_blocks<F>(
        &mut self,
        spec: &ReleaseSpec,
        statistic: &F,
    ) -> Result<(Vec<ReleasedBlock>, ReleaseDiagnostics), CoreError>
    where
        R: Sync,
        F: Fn(&R, &mut ContributionBuffer) + Sync,
    {
        self.sample_batch()?;
        let replace = self.replaces_invalid();
        let factor = self.scheme.sensitivity_factor();
        let sigma = self.noise_multiplier();
        let expected = self.normaliser;
        // Declared and drawn std of the noise on each block's sum (module docs).
        let stds: Vec<(f64, f64)> = (0..spec.len())
            .map(|b| {
                let declared = self.sum_noise_std(spec, b, sigma);
                (declared, self.drawn_std(declared))
            })
            .collect();
        let mut scratch = std::mem::take(&mut self.sums);
        let drawn: Vec<f64> = stds.iter().map(|&(_, d)| d).collect();
        let spare = &mut self.spare;
        let mut ahead = NoiseAhead::plan(spec, &drawn, &mut self.noise_rng, |len| {
            pooled_room(spare, len)
        });
        let (records, batch) = (&mut self.records, &self.batch);
        let mut sums = || sum_batch(records, batch, spec, statistic, &mut scratch, replace);
        let summed = match &mut ahead {
            Some(ahead) => ahead.alongside(&drawn, sums),
            None => sums(),
        };
        self.batch.clear();
        // After an error the scratch is dropped (its worker sums may hold part of a batch).
        let diagnostics = summed?;

        // The noise does not depend on the data. Unless it was drawn alongside the sums
        // (`NoiseAhead`), it is drawn now, fused with the normalisation: a small release in
        // order from the wall's noise stream, a large one from per-span streams in parallel
        // (`NoiseSource`); the same draws at every thread count.
        let values = match ahead {
            Some(ahead) => ahead.finish(scratch.sums_mut(), expected),
            None => {
                let entries = spec.blocks().iter().map(|b| b.stored_len()).sum();
                let mut source = NoiseSource::for_release(&mut self.noise_rng, entries);
                let mut first_span = 0;
                let mut values = Vec::with_capacity(spec.len());
                for ((block, sum), &std) in spec.blocks().iter().zip(scratch.sums_mut()).zip(&drawn)
                {
                    values.push(shape_value(
                        block,
                        sum,
                        &mut source,
                        first_span,
                        std,
                        expected,
                        &mut self.spare,
                    ));
                    first_span += spans_of(block.stored_len());
                }
                values
            }
        };
        // A large spec's sums are freed before the projection (they hold the noised values now;
        // the next release starts from zero either way).
        scratch.free_sums_if_large();
        let mut blocks = Vec::with_capacity(spec.len());
        for ((block, value), &(sum_std, _)) in spec.blocks().iter().zip(values).zip(&stds) {
            let (value, projection) = match value {
                BlockValue::Symmetric(mut m) => {
                    let projection = match block.eigenvalue_floor() {
                        Some(floor) => Some(project_to_positive_definite(&mut m, floor)?),
                        None => None,
                    };
                    (BlockValue::Symmetric(m), projection)
                }
                other => (other, None),
            };
            blocks.push(ReleasedBlock {
                name: block.name().to_string(),
                value,
                bound: block.bound(),
                noise_std: sum_std / expected,
                sensitivity: factor * block.bound() / expected,
                projection,
            });
        }
        self.sums = scratch;
        Ok((blocks, diagnostics))
    }

    /// Charges a release the record source aborted (a failed read, [`SourceError::Io`]):
    /// nothing is released, the ledger gets the release's event with an `aborted` note (or the
    /// plan counts one release), so that the failure cannot be retried for free.
    fn charge_aborted(&mut self, label: String, spec: &ReleaseSpec) -> Result<(), CoreError> {
        let mut notes = (*self.interned_notes(spec)).clone();
        notes.insert(
            "aborted".into(),
            "the record source failed to read the batch: nothing released, charged".into(),
        );
        let done = (
            self.event_per_release().cloned(),
            Vec::new(),
            ReleaseDiagnostics::default(),
            self.noise_multiplier(),
            1,
        );
        self.finish_release(label, spec, Arc::new(notes), done)
            .map(|_| ())
    }

    /// The declared std of the noise on the sum of block `block` of `spec`:
    /// `B_g / a_g x sigma x f x sqrt(sum_g a_g^2)` (module docs); `0` in non-private mode.
    fn sum_noise_std(&self, spec: &ReleaseSpec, block: usize, sigma: Option<f64>) -> f64 {
        let rescaled = spec.rescaled_sensitivity() * self.scheme.sensitivity_factor();
        match (sigma, spec.noise_bound(block)) {
            (Some(s), Some(bound)) => bound * s * rescaled,
            _ => 0.0,
        }
    }

    /// The notes of `spec`'s releases, built once per spec and shared.
    fn interned_notes(&mut self, spec: &ReleaseSpec) -> Arc<BTreeMap<String, String>> {
        if let Some((_, notes)) = self.notes_table.iter().find(|(s, _)| s == spec) {
            return Arc::clone(notes);
        }
        let notes = Arc::new(self.notes(spec, self.noise_multiplier()));
        if self.notes_table.len() >= NOTES_TABLE_LEN {
            // A run whose spec keeps changing: forget the oldest (its records keep their copy).
            self.notes_table.remove(0);
        }
        self.notes_table.push((spec.clone(), Arc::clone(&notes)));
        notes
    }

    /// Refuses `count` more releases that would exceed the budget (nothing sampled, nothing
    /// charged): under planned accounting, more than the planned number; otherwise `event`
    /// (their cost) against the ledger.
    fn check_budget(&self, event: Option<&PrivacyEvent>, count: u64) -> Result<(), CoreError> {
        if let Some(planned) = self.planned {
            if self.releases.saturating_add(count) > planned {
                return Err(self.exhausted());
            }
            return Ok(());
        }
        if let (Mode::Private { budget, .. }, Some(event)) = (&self.mode, event)
            && self.ledger.would_exceed(event, budget)?
        {
            return Err(CoreError::BudgetExhausted {
                total_epsilon: budget.epsilon(),
                total_delta: budget.delta(),
            });
        }
        Ok(())
    }

    /// Charges `event` to the ledger (private mode), logs the release and numbers it: the
    /// common end of every release path, once the noised blocks exist. `count` releases are
    /// numbered (one ledger entry and one log record for all of them).
    fn finish_release(
        &mut self,
        label: String,
        spec: &ReleaseSpec,
        notes: Arc<BTreeMap<String, String>>,
        done: Finished,
    ) -> Result<Release, CoreError> {
        let (event, blocks, diagnostics, sigma, count) = done;
        let index = self.releases;
        if self.planned.is_some() {
            // Charged up front: the plan's one log record gathers the diagnostics.
            self.add_to_plan_log(diagnostics);
            self.releases += count;
            return Ok(Release {
                spec_id: spec.id(),
                index,
                blocks,
                diagnostics,
                expected_batch_size: self.normaliser,
                noise_multiplier: sigma,
            });
        }
        if let (Mode::Private { .. }, Some(event)) = (&self.mode, event) {
            self.ledger.record_entry(LedgerEntry {
                label,
                event,
                notes: Arc::clone(&notes),
            })?;
        }
        self.log.push(ReleaseRecord {
            index,
            private: sigma.is_some(),
            notes,
            clipped_records: diagnostics.clipped_records,
            replaced_records: diagnostics.replaced_records,
        });
        self.releases += count;
        Ok(Release {
            spec_id: spec.id(),
            index,
            blocks,
            diagnostics,
            expected_batch_size: self.normaliser,
            noise_multiplier: sigma,
        })
    }
}

/// What a release path hands [`PrivacyWall::finish_release`]: the event to charge, the released
/// blocks, the diagnostics, the noise multiplier and the number of releases numbered.
type Finished = (
    Option<PrivacyEvent>,
    Vec<ReleasedBlock>,
    ReleaseDiagnostics,
    Option<f64>,
    u64,
);

/// Largest released block (entries) whose memory [`PrivacyWall::recycle`] keeps for the next
/// release (16 MiB): small and medium blocks (LDA's `K x V` at the papers' settings) reuse theirs,
/// while a large one (BLR's `d x d` at stroke scale) is freed as before, so recycling never
/// raises a large model's peak memory.
const RECYCLE_MAX_ENTRIES: usize = 1 << 21;

/// Most buffers the recycling pool holds.
const RECYCLE_MAX_BUFFERS: usize = 8;

/// A zeroed buffer of `len` entries: the smallest recycled one with room for it, else a fresh
/// one.
fn pooled(pool: &mut Vec<Vec<f64>>, len: usize) -> Vec<f64> {
    let mut buf = pooled_room(pool, len);
    buf.resize(len, 0.0);
    buf
}

/// An empty buffer with room for `len` entries: the smallest recycled one with that room, else
/// a fresh one. (Who fills it sizes it: [`NoiseAhead`] does so on the thread drawing the noise.)
fn pooled_room(pool: &mut Vec<Vec<f64>>, len: usize) -> Vec<f64> {
    let fit = (0..pool.len())
        .filter(|&i| pool[i].capacity() >= len)
        .min_by_key(|&i| pool[i].capacity());
    let mut buf = match fit {
        Some(i) => pool.swap_remove(i),
        None => Vec::with_capacity(len),
    };
    buf.clear();
    buf
}

/// The clipped sums of the records at `batch` (from memory, or read from the source a slice
/// at a time, so a release holds one slice of records, not the batch: the same sums), left in
/// `scratch`; the release's diagnostics.
///
/// # Errors
/// As [`accumulate::clipped_sums`], and a failed read of the source.
fn sum_batch<R, F>(
    records: &mut Records<R>,
    batch: &[usize],
    spec: &ReleaseSpec,
    statistic: &F,
    scratch: &mut accumulate::SumScratch,
    replace: bool,
) -> Result<ReleaseDiagnostics, CoreError>
where
    R: Sync,
    F: Fn(&R, &mut ContributionBuffer) + Sync,
{
    match records {
        // A small batch is summed on the calling thread: no rayon hand-off for tiny releases.
        Records::Memory(records) => {
            accumulate::clipped_sums(records, batch, spec, statistic, scratch, replace)
        }
        Records::Source(sourced) => {
            let sourced_statistic =
                |record: &Option<R>, buffer: &mut ContributionBuffer| match record {
                    Some(r) => statistic(r, buffer),
                    None => buffer.reject_record(source::UNREADABLE),
                };
            let mut sum = accumulate::Summation::begin(spec, scratch, batch.len(), false);
            for slice in batch.chunks(accumulate::SLICE_RECORDS) {
                let added = match sourced.fetch(slice) {
                    Ok((fetched, positions)) => {
                        sum.add(fetched, positions, spec, &sourced_statistic, replace)
                    }
                    Err(e) => Err(e.into()),
                };
                sourced.clear();
                added?;
            }
            Ok(sum.finish())
        }
    }
}

/// The released value of `block` from its sum: `(sum + sum_std z) / expected` with the noise
/// `z` from `source` (Analyze-Gauss for symmetric blocks: `sum` and `z` are the packed upper
/// triangle, noised and normalised in place, then unpacked into an exactly symmetric matrix).
/// Vector and matrix values are written into zeroed buffers from `pool` (the same values as in
/// fresh ones: every entry is overwritten).
fn shape_value(
    block: &BlockSpec,
    sum: &mut [f64],
    source: &mut NoiseSource<'_>,
    first_span: u64,
    sum_std: f64,
    expected: f64,
    pool: &mut Vec<Vec<f64>>,
) -> BlockValue {
    match block.shape() {
        BlockShape::Vector { len } => {
            let mut v = DVector::from_vec(pooled(pool, len));
            source.noised_normalised(v.as_mut_slice(), Some(sum), first_span, sum_std, expected);
            BlockValue::Vector(v)
        }
        BlockShape::Matrix { rows, cols } => {
            let mut m = DMatrix::from_vec(rows, cols, pooled(pool, rows * cols));
            source.noised_normalised(m.as_mut_slice(), Some(sum), first_span, sum_std, expected);
            BlockValue::Matrix(m)
        }
        BlockShape::Symmetric { dim } => {
            source.noised_normalised(sum, None, first_span, sum_std, expected);
            BlockValue::Symmetric(unpack_symmetric(sum, dim))
        }
    }
}

impl<R> PrivacyWall<R> {
    fn notes(&self, spec: &ReleaseSpec, sigma: Option<f64>) -> BTreeMap<String, String> {
        let factor = self.scheme.sensitivity_factor();
        let rescaled = spec.rescaled_sensitivity() * factor;
        let mut notes = BTreeMap::new();
        notes.insert("spec".into(), spec.name().to_string());
        notes.insert(
            "mechanism".into(),
            match sigma {
                Some(_) => format!(
                    "Gaussian, rescale-noise-rescale over {} group(s) of {} block(s) \
                     (VIPS 003 Eq. 63); Analyze-Gauss on symmetric blocks",
                    spec.groups().len(),
                    spec.len()
                ),
                None => "non-private (epsilon = infinity): clipped sums, no noise".into(),
            },
        );
        notes.append(&mut self.common_notes(sigma));
        notes.insert(
            "rescaled_sensitivity".into(),
            format!("{rescaled:e} (sqrt(sum of squared group weights) x relation factor)"),
        );
        if spec
            .groups()
            .iter()
            .any(|g| g.blocks().len() > 1 || g.weight() != 1.0)
        {
            let groups: Vec<String> = spec
                .groups()
                .iter()
                .map(|g| {
                    let names: Vec<&str> = g
                        .blocks()
                        .iter()
                        .map(|&b| spec.blocks()[b].name())
                        .collect();
                    format!(
                        "{}: blocks [{}], joint bound {:e}, weight {:e}",
                        g.name(),
                        names.join(", "),
                        g.bound(),
                        g.weight()
                    )
                })
                .collect();
            notes.insert("groups".into(), groups.join("; "));
        }
        let described: Vec<String> = spec
            .blocks()
            .iter()
            .enumerate()
            .map(|(b, s)| {
                let sum_std = self.sum_noise_std(spec, b, sigma);
                format!(
                    "{}: {:?}, bound {:e}, sensitivity {:e}, noise std {:e}{}",
                    s.name(),
                    s.shape(),
                    s.bound(),
                    factor * s.bound() / self.normaliser,
                    sum_std / self.normaliser,
                    s.eigenvalue_floor()
                        .map_or(String::new(), |f| format!(", eigenvalue floor {f:e}"))
                )
            })
            .collect();
        notes.insert("blocks".into(), described.join("; "));
        notes
    }

    /// The notes every ledger entry carries, per-release or planned: sampling, relation, noise,
    /// the public normaliser and population, the failure policy, a planted bug, the RNG.
    fn common_notes(&self, sigma: Option<f64>) -> BTreeMap<String, String> {
        let mut notes = BTreeMap::new();
        notes.insert("sampling".into(), format!("{:?}", self.scheme));
        notes.insert(
            "neighbouring".into(),
            format!("{:?}", self.scheme.neighbouring()),
        );
        notes.insert(
            "noise_multiplier".into(),
            sigma.map_or("none".into(), |s| format!("{s:e}")),
        );
        notes.insert(
            "normaliser".into(),
            format!("{:e} (public expected batch size)", self.normaliser),
        );
        let population = match (&self.slots, self.public_population) {
            (Some(slots), _) => format!("{} (declared public population slots)", slots.len()),
            (None, Some(n)) => format!("{n} (declared public)"),
            (None, None) if matches!(self.scheme, SamplingScheme::Poisson { .. }) => format!(
                "{} (record count, used as if public: not declared)",
                self.records.len()
            ),
            (None, None) => format!(
                "{} (record count, public under replace-one)",
                self.records.len()
            ),
        };
        notes.insert("population".into(), population);
        if self.noise_scale != 1.0 && sigma.is_some() {
            notes.insert(
                "planted_bug".into(),
                format!(
                    "TESTS/AUDIT ONLY: noise drawn at {:e} x the declared std",
                    self.noise_scale
                ),
            );
        }
        notes.insert(
            "invalid_records".into(),
            if sigma.is_some() {
                "replaced by zero and counted (non-private diagnostic); the release is charged"
            } else {
                "fail the release (non-private mode)"
            }
            .into(),
        );
        notes.insert("rng".into(), self.rng_policy.describe());
        notes
    }
}
