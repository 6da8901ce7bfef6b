//! Private partition selection: which keys (words, categories, ...) occur in the records, released
//! by Gaussian thresholding (Gopi et al. 2020; Google's differential-privacy library). Like
//! [`PrivacyWall::release`](super::PrivacyWall::release), this is a release of private records,
//! and it lives here so that dp-core's wall stays the one place where that happens.
//!
//! # The mechanism
//! 1. **Contribution bound** (enforced here, not by the caller). Each record contributes each
//!    distinct key at most once, and at most `k` distinct keys
//!    (`k` = [`PartitionSelection::max_keys_per_record`], public): the first `k` distinct keys in
//!    the order the caller's closure lists them ([`bounded_keys`]). This depends on the record
//!    only.
//! 2. **Counts.** `c(x)` = number of records contributing key `x`. Under add/remove-one record
//!    the vector `c` moves by at most 1 per key (L-inf 1) in at most `k` keys: L2 `sqrt(k)`.
//! 3. **Noise and threshold.** Keep `x` iff `c(x) + N(0, sigma^2) > T`, over the keys with
//!    `c(x) >= 1` only (keys absent from the records are never candidates).
//!
//! `delta` is split in two halves as Google's `GaussianPartitionSelection` does:
//! `delta_noise = delta_thr = delta / 2`. `sigma = z sqrt(k)`, with the noise multiplier `z`
//! calibrated by dp-accountant so that one Gaussian release of L2 sensitivity `sqrt(k)` is
//! `(epsilon - eps_thr, delta_noise)`-DP, `eps_thr = -ln(1 - delta_thr)` (about `delta_thr`; why
//! below). The threshold makes a record whose `k` keys appear nowhere else
//! reveal itself with probability at most `delta_thr`: each such key has `c = 1` and is kept with
//! probability `p = P[1 + N(0, sigma^2) > T]`, so `T = 1 + sigma Phi^-1(1 - p)` with
//! `p = 1 - (1 - delta_thr)^(1/k)` (then `1 - (1 - p)^k = delta_thr`). The threshold is rounded
//! up (the safe side).
//!
//! # Noise
//! Noise comes from ChaCha20 keyed from OS entropy ([`RngPolicy::OsEntropy`], a CSPRNG) unless a
//! seed is given on purpose ([`RngPolicy::Seeded`]); then the outcome and the ledger say so, and
//! the selection gives no privacy against whoever knows the seed. Each key's noise is drawn from
//! its own stream (`SHA-256(domain || noise key || len(key) || key)`, the noise key being 32
//! bytes of OS entropy or `SHA-256(domain || "/seed" || seed)`), so the noise of a key depends
//! on nothing but the key: the outcome for a key depends only on its count and the key (this
//! couples neighbouring datasets exactly under a fixed seed). The selected keys are returned
//! sorted, so their order reveals nothing beyond the set.
//!
//! # Privacy
//! [`select_partitions`] is `(epsilon, delta)`-DP under add/remove-one record, with
//! `delta = delta_noise + delta_thr` (Gopi et al. 2020, Thm. for Gaussian thresholding; Google's
//! "Delta for thresholding" note), for every closure that lists a record's keys from that record
//! alone. It is recorded in the caller's [`Accountant`] as a [`PrivacyEvent::Gaussian`] with
//! noise multiplier `z` under add/remove-one (the count part) **before** any noise is drawn; the
//! threshold's `delta_thr` and `eps_thr` are not RDP quantities and are stated in the entry's
//! notes ([`EXTRA_DELTA_NOTE`], [`EXTRA_EPSILON_NOTE`]). An answer `(eps, delta')` of a ledger
//! holding this entry (and whatever runs after it, e.g. a fit on the selected keys) covers the
//! Gaussian parts only; the whole is `(eps + eps_thr, delta' + delta_thr)`-DP.
//!
//! Why both terms. Let `D` hold the extra record and `D'` not, `B` the event that one of the
//! record's keys that no other record has is kept (`P[B] <= delta_thr` whatever else happens:
//! each such key's noise is its own stream), and `M~(D)` the run on `D` with those keys dropped,
//! which against `M(D')` is the Gaussian mechanism (and the Gaussian parts of anything after it)
//! with the stated sensitivity. `M(D) = M~(D)` off `B`, and `B` is independent of `M~(D)` given
//! the record's keys, so for every set `E` of outcomes `P[M(D) in E] <= P[M~(D) in E] + delta_thr`
//! and `P[M~(D) in E] <= P[M(D) in E] / (1 - delta_thr)`. The first gives the `delta_thr`
//! (record added), the second the factor `e^eps_thr` (record removed). Several selections in one
//! ledger add their `eps_thr` and `delta_thr`.
//!
//! # Example
//! ```
//! use dp_accountant::Accountant;
//! use dp_core::RngPolicy;
//! use dp_core::wall::partition::{PartitionRelease, PartitionSelection, select_partitions};
//! // 300 records share the key "river"; one record alone has "secret".
//! let mut records = vec![vec!["river", "flows"]; 300];
//! records.push(vec!["secret"]);
//! let selection = PartitionSelection::calibrate(1.0, 1e-6, 20)?;
//! let mut ledger = Accountant::new();
//! let release = PartitionRelease::new("keys", b"my-crate/keys/v1");
//! let out = select_partitions(
//!     &records,
//!     |r: &Vec<&'static str>| r.iter().copied(),
//!     &selection,
//!     RngPolicy::OsEntropy,
//!     &mut ledger,
//!     &release,
//! )?;
//! assert_eq!(out.keys, ["flows", "river"]);
//! assert_eq!(ledger.entries()[0].label, "keys");
//! # Ok::<(), dp_core::CoreError>(())
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hash;

use dp_accountant::calibrate::{Sampling, calibrate_noise_multiplier};
use dp_accountant::normal::normal_sf;
use dp_accountant::{Accountant, AccountantConfig, Budget, Neighbouring, PrivacyEvent};
pub use dp_accountant::{EXTRA_DELTA_NOTE, EXTRA_EPSILON_NOTE};
use rand::rngs::{ChaCha20Rng, SysRng};
use rand::{Rng, SeedableRng};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::CoreError;
use crate::gaussian::GaussianMechanism;
use crate::rng::RngPolicy;

/// The calibrated Gaussian-thresholding partition selection (see the [module docs](self)).
///
/// Only [`PartitionSelection::calibrate`] makes one, so every value is calibrated (it is not
/// deserialisable; rebuild it from `epsilon`, `delta` and `k`).
///
/// # Example
/// ```
/// use dp_core::wall::partition::PartitionSelection;
/// let s = PartitionSelection::calibrate(1.0, 1e-6, 50)?;
/// assert!(s.sigma() > 0.0 && s.threshold() > 1.0);
/// assert!((s.noise_delta() + s.threshold_delta() - 1e-6).abs() < 1e-18);
/// // A key only one record has is kept with probability at most the per-key share.
/// assert!(s.count_one_keep_probability() <= s.per_key_delta());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionSelection {
    epsilon: f64,
    delta: f64,
    max_keys_per_record: usize,
    noise_delta: f64,
    threshold_delta: f64,
    threshold_epsilon: f64,
    per_key_delta: f64,
    noise_multiplier: f64,
    sigma: f64,
    threshold: f64,
}

impl PartitionSelection {
    /// Calibrates the selection for `(epsilon, delta)` and a public cap of
    /// `max_keys_per_record` distinct keys per record.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for `epsilon` not finite or not above the threshold's
    /// share `-ln(1 - delta / 2)`, `delta` outside `(0, 1)`, or `max_keys_per_record == 0`;
    /// [`CoreError::Accountant`] if the calibration fails.
    pub fn calibrate(
        epsilon: f64,
        delta: f64,
        max_keys_per_record: usize,
    ) -> Result<Self, CoreError> {
        let bad = |name, value, reason| {
            Err(CoreError::InvalidParameter {
                name,
                value,
                reason,
            })
        };
        if !(epsilon > 0.0 && epsilon.is_finite()) {
            return bad("epsilon", epsilon, "must be finite and > 0");
        }
        if !(delta > 0.0 && delta < 1.0) {
            return bad("delta", delta, "must lie in (0, 1)");
        }
        if max_keys_per_record == 0 {
            return bad("max_keys_per_record", 0.0, "must be >= 1");
        }
        let threshold_delta = delta / 2.0;
        let noise_delta = delta - threshold_delta;
        // The threshold costs a factor 1 / (1 - delta_thr) in the direction where the record is
        // removed (module docs, "Privacy"): the Gaussian gets what is left of epsilon.
        let threshold_epsilon = -(-threshold_delta).ln_1p();
        let gaussian_epsilon = epsilon - threshold_epsilon;
        if gaussian_epsilon.is_nan() || gaussian_epsilon <= 0.0 {
            return bad(
                "epsilon",
                epsilon,
                "must exceed the threshold's share -ln(1 - delta / 2)",
            );
        }
        let calibration = calibrate_noise_multiplier(
            Sampling::FullBatch {
                neighbouring: Neighbouring::AddRemoveOne,
            },
            1,
            &Budget::new(gaussian_epsilon, noise_delta)?,
            &AccountantConfig::default(),
        )?;
        let noise_multiplier = calibration.noise_multiplier;
        let sigma = noise_multiplier * (max_keys_per_record as f64).sqrt();
        // 1 - (1 - delta_thr)^(1/k), computed without cancellation.
        let per_key_delta = -((-threshold_delta).ln_1p() / max_keys_per_record as f64).exp_m1();
        let threshold = 1.0 + sigma * upper_quantile(per_key_delta);
        Ok(Self {
            epsilon,
            delta,
            max_keys_per_record,
            noise_delta,
            threshold_delta,
            threshold_epsilon,
            per_key_delta,
            noise_multiplier,
            sigma,
            threshold,
        })
    }

    /// The selection's epsilon.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }
    /// The selection's total delta (`noise_delta + threshold_delta`).
    pub fn delta(&self) -> f64 {
        self.delta
    }
    /// The public cap `k` on distinct keys per record.
    pub fn max_keys_per_record(&self) -> usize {
        self.max_keys_per_record
    }
    /// The Gaussian mechanism's delta (half of `delta`).
    pub fn noise_delta(&self) -> f64 {
        self.noise_delta
    }
    /// The threshold's delta (half of `delta`): the probability bound that any key of a record
    /// whose keys occur nowhere else is selected.
    pub fn threshold_delta(&self) -> f64 {
        self.threshold_delta
    }
    /// The threshold's share of epsilon, `-ln(1 - threshold_delta)`: the Gaussian count part is
    /// calibrated to `epsilon` minus it (see the module docs, "Privacy").
    pub fn threshold_epsilon(&self) -> f64 {
        self.threshold_epsilon
    }
    /// The per-key share `1 - (1 - threshold_delta)^(1/k)`.
    pub fn per_key_delta(&self) -> f64 {
        self.per_key_delta
    }
    /// Noise std divided by the L2 sensitivity `sqrt(k)`.
    pub fn noise_multiplier(&self) -> f64 {
        self.noise_multiplier
    }
    /// The noise standard deviation `sigma`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// The threshold `T`: a key is kept iff its noisy count exceeds it.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
    /// The L2 sensitivity `sqrt(k)` of the contribution-bounded counts.
    pub fn sensitivity(&self) -> f64 {
        (self.max_keys_per_record as f64).sqrt()
    }
    /// `P[1 + N(0, sigma^2) > T]`, the probability that a key with count 1 is kept (at most
    /// [`PartitionSelection::per_key_delta`]).
    pub fn count_one_keep_probability(&self) -> f64 {
        normal_sf((self.threshold - 1.0) / self.sigma)
    }
    /// The event recorded for the count part: a Gaussian mechanism with
    /// [`PartitionSelection::noise_multiplier`] under add/remove-one.
    ///
    /// # Errors
    /// Never for a calibrated selection.
    pub fn event(&self) -> Result<PrivacyEvent, CoreError> {
        Ok(PrivacyEvent::gaussian(
            self.noise_multiplier,
            Neighbouring::AddRemoveOne,
        )?)
    }
    /// Whether a key with noisy count `noisy` is kept.
    pub fn keeps(&self, noisy: f64) -> bool {
        noisy > self.threshold
    }
}

/// The smallest `z` (within 1e-12 relative, rounded up) with `P[N(0,1) > z] <= p`.
fn upper_quantile(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_sf(mid) <= p {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo <= 1e-12 * hi.abs().max(1.0) {
            break;
        }
    }
    hi
}

/// What a partition release is called: the ledger label, the domain separator of its noise
/// streams, and the word for a record in the ledger notes. All public.
///
/// # Example
/// ```
/// use dp_core::wall::partition::PartitionRelease;
/// let r = PartitionRelease::new("lda vocabulary", b"my-crate/vocabulary/v1").record_name("document");
/// assert_eq!(r.label(), "lda vocabulary");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionRelease<'a> {
    label: &'a str,
    domain: &'a [u8],
    record_name: &'a str,
}

impl<'a> PartitionRelease<'a> {
    /// A release labelled `label` in the ledger, drawing its noise from streams separated by
    /// `domain` (use a fixed string naming the use and a version: a seeded run is reproducible
    /// for the same domain, seed and records). Records are called "record" in the notes.
    pub fn new(label: &'a str, domain: &'a [u8]) -> Self {
        Self {
            label,
            domain,
            record_name: "record",
        }
    }

    /// What a record is called in the ledger notes (e.g. `"document"`).
    pub fn record_name(mut self, name: &'a str) -> Self {
        self.record_name = name;
        self
    }

    /// The ledger label.
    pub fn label(&self) -> &'a str {
        self.label
    }
}

/// The outcome of [`select_partitions`] (all public).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SelectedPartitions<K> {
    /// The selected keys, sorted by `K`'s order (byte order for strings).
    pub keys: Vec<K>,
    /// The ledger entry's label.
    pub ledger_label: String,
    /// The noise source ([`RngPolicy::describe`]).
    pub rng: String,
    /// `true` if the noise was seeded on purpose (no privacy against whoever knows the seed).
    pub seeded: bool,
}

/// The noise key: 32 bytes from OS entropy, or derived from a seed given on purpose.
struct NoiseKey<'a> {
    domain: &'a [u8],
    bytes: [u8; 32],
}

impl<'a> NoiseKey<'a> {
    fn new(policy: RngPolicy, domain: &'a [u8]) -> Result<Self, CoreError> {
        match policy {
            RngPolicy::OsEntropy => {
                let mut rng = ChaCha20Rng::try_from_rng(&mut SysRng).map_err(CoreError::Entropy)?;
                let mut bytes = [0u8; 32];
                rng.fill_bytes(&mut bytes);
                Ok(Self { domain, bytes })
            }
            RngPolicy::Seeded { seed } => {
                let mut h = Sha256::new();
                h.update(domain);
                h.update(b"/seed");
                h.update(seed.to_le_bytes());
                Ok(Self {
                    domain,
                    bytes: h.finalize().into(),
                })
            }
        }
    }

    /// The ChaCha20 stream of `key` (its own, whatever other keys occur).
    fn stream(&self, key: &[u8]) -> ChaCha20Rng {
        let mut h = Sha256::new();
        h.update(self.domain);
        h.update(self.bytes);
        h.update((key.len() as u64).to_le_bytes());
        h.update(key);
        ChaCha20Rng::from_seed(h.finalize().into())
    }
}

/// The per-record contribution bound: the first `max_keys_per_record` distinct keys of `keys`
/// (in the order given), each once.
///
/// # Example
/// ```
/// use dp_core::wall::partition::bounded_keys;
/// assert_eq!(bounded_keys(["a", "a", "b", "c", "d"], 3), ["a", "b", "c"]);
/// ```
///
/// # Privacy
/// A function of the one record only (a per-record transform).
pub fn bounded_keys<K, I>(keys: I, max_keys_per_record: usize) -> Vec<K>
where
    I: IntoIterator<Item = K>,
    K: Eq + Hash + Clone,
{
    let mut seen: HashSet<K> = HashSet::new();
    let mut out = Vec::new();
    for key in keys {
        if out.len() >= max_keys_per_record {
            break;
        }
        if seen.insert(key.clone()) {
            out.push(key);
        }
    }
    out
}

/// The contribution-bounded record counts `c(x)` (how many records contribute key `x`, each
/// contributing at most `max_keys_per_record` distinct keys, see [`bounded_keys`]).
///
/// **Not private**: the exact statistic [`select_partitions`] noises. Exposed for tests and
/// audits.
///
/// # Example
/// ```
/// use dp_core::wall::partition::contribution_counts;
/// let records = vec![vec!["sea", "sea", "river"], vec!["sea", "moon", "sun"]];
/// let c = contribution_counts(&records, |r: &Vec<&'static str>| r.iter().copied(), 2);
/// assert_eq!(c.get("sea"), Some(&2)); // once per record
/// assert_eq!(c.get("sun"), None); // the third distinct key of record 2 is over the cap
/// ```
pub fn contribution_counts<'r, R, K, I, F>(
    records: &'r [R],
    keys_of: F,
    max_keys_per_record: usize,
) -> BTreeMap<K, u64>
where
    F: Fn(&'r R) -> I,
    I: IntoIterator<Item = K>,
    K: Ord + Hash + Clone,
{
    let mut counts: HashMap<K, u64> = HashMap::new();
    for record in records {
        for key in bounded_keys(keys_of(record), max_keys_per_record) {
            *counts.entry(key).or_insert(0) += 1;
        }
    }
    counts.into_iter().collect()
}

/// Selects privately which keys occur in `records` (`keys_of` lists a record's keys; at most
/// `selection.max_keys_per_record()` distinct ones per record are counted, each once, see
/// [`bounded_keys`]): records the release in `ledger` first, labelled `release.label()`, then
/// keeps the keys whose noisy contribution-bounded count exceeds the threshold. The keys come
/// back sorted.
///
/// See the [module docs](self) for an example.
///
/// # Errors
/// [`CoreError::Accountant`] if the ledger refuses the entry (e.g. it holds replace-one events),
/// [`CoreError::Entropy`] if the OS has no entropy: in both cases nothing is released (and on
/// an entropy failure nothing is recorded).
///
/// # Privacy
/// `(selection.epsilon(), selection.delta())`-DP under add/remove-one record, provided `keys_of`
/// lists the keys of the record it is given from that record alone (no state shared across
/// records), recorded in `ledger` as a Gaussian event (noise multiplier
/// `selection.noise_multiplier()`, add/remove-one) with the threshold's delta and epsilon in the
/// notes ([`EXTRA_DELTA_NOTE`], [`EXTRA_EPSILON_NOTE`]). The contribution bound is enforced here whatever `keys_of`
/// lists. An empty selection is a possible (and private) outcome; the budget is spent either
/// way. A seeded policy gives no privacy against whoever knows the seed.
pub fn select_partitions<'r, R, K, I, F>(
    records: &'r [R],
    keys_of: F,
    selection: &PartitionSelection,
    policy: RngPolicy,
    ledger: &mut Accountant,
    release: &PartitionRelease<'_>,
) -> Result<SelectedPartitions<K>, CoreError>
where
    F: Fn(&'r R) -> I,
    I: IntoIterator<Item = K>,
    K: Ord + Hash + Clone + AsRef<[u8]>,
{
    let key = NoiseKey::new(policy, release.domain)?;
    let event = selection.event()?;
    let mechanism = GaussianMechanism::from_std(selection.sigma, selection.sensitivity())?;
    let k = selection.max_keys_per_record;
    let noun = release.record_name;
    let mut notes = BTreeMap::new();
    notes.insert(
        "mechanism".into(),
        "Gaussian-thresholding partition selection (Gopi et al. 2020)".into(),
    );
    notes.insert(
        "sensitivity".into(),
        format!(
            "L2 sqrt({k}) = {}, L-inf 1 (add/remove-one {noun})",
            (k as f64).sqrt()
        ),
    );
    notes.insert("noise_std".into(), format!("{}", selection.sigma));
    notes.insert("threshold".into(), format!("{}", selection.threshold));
    notes.insert("epsilon".into(), format!("{}", selection.epsilon));
    notes.insert("delta".into(), format!("{}", selection.delta));
    notes.insert("noise_delta".into(), format!("{}", selection.noise_delta));
    notes.insert(
        EXTRA_DELTA_NOTE.into(),
        format!(
            "{} (threshold delta: add it to the delta of any answer that includes this entry)",
            selection.threshold_delta
        ),
    );
    notes.insert(
        EXTRA_EPSILON_NOTE.into(),
        format!(
            "{} (threshold epsilon -ln(1 - threshold delta): add it to the epsilon of any \
             answer that includes this entry)",
            selection.threshold_epsilon
        ),
    );
    notes.insert(
        "composition".into(),
        "an answer of a ledger holding this entry is (eps_events + extra epsilon, \
         delta_events + extra delta); basic composition with a fit also holds"
            .into(),
    );
    notes.insert("rng".into(), policy.describe());
    ledger.record_with_notes(release.label, event, notes)?;

    let counts = contribution_counts(records, keys_of, k);
    let mut keys = Vec::new();
    for (x, c) in counts {
        let mut noisy = [c as f64];
        mechanism.add_noise(&mut noisy, &mut key.stream(x.as_ref()))?;
        if selection.keeps(noisy[0]) {
            keys.push(x);
        }
    }
    Ok(SelectedPartitions {
        keys,
        ledger_label: release.label.to_string(),
        rng: policy.describe(),
        seeded: policy.is_seeded(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_inverts_the_tail() {
        for p in [0.5, 0.1, 1e-3, 1e-9, 1e-15] {
            let z = upper_quantile(p);
            let sf = normal_sf(z);
            assert!(sf <= p && sf > p * (1.0 - 1e-9), "p {p} z {z} sf {sf}");
        }
    }

    #[test]
    fn threshold_matches_the_union_bound() {
        let s = PartitionSelection::calibrate(1.0, 1e-5, 7).unwrap();
        let p = s.count_one_keep_probability();
        let any = 1.0 - (1.0 - p).powi(7);
        assert!(any <= s.threshold_delta() && any > 0.99 * s.threshold_delta());
    }
}
