//! Empirical privacy audit: statistical *lower* bounds on the privacy loss of the wall's own
//! release path, run many times on a worst-case pair of neighbouring datasets, compared with
//! what the accountant claims. An audit that can fail (DESIGN Sec. 3).
//!
//! **The wall audit** ([`audit_wall`], used by `cargo xtask audit`): the mechanism is a real
//! [`PrivacyWall`] built over each dataset of the pair ([`AuditedWall`]: add/remove-one with
//! Poisson sampling, including the plain Gaussian at `q = 1`, and replace-one with fixed-size
//! or single-draw sampling), released through [`PrivacyWall`]'s own sampling, clipping, noise
//! and normalisation and charged to its ledger. Every threshold test of a grid fixed in advance
//! gives Clopper-Pearson bounds on its false- and true-positive rates, all valid at once with
//! probability `1 - alpha` (Bonferroni); from them a lower bound on `mu` of `mu`-GDP (sharp for
//! the full-batch Gaussian) and on `delta(eps)` at several `eps`, against the claimed `mu` and
//! the accountant's `delta(eps)`. A correct wall is refuted with probability at most `alpha`;
//! a wall whose noise is `1/sqrt(2)` of the declared (a `sqrt(2)` sensitivity bug, planted with
//! a hidden builder option) is refuted, for both relations, at `2 x 10^5` runs.
//!
//! **The threshold audit** ([`audit`], [`threshold_audit`]; kept for comparison): for a
//! threshold `t`, "output >= t" has rates `p0 = P[M(D) >= t]` and `p1 = P[M(D') >= t]`; `(eps,
//! delta)`-DP gives `eps >= ln((p1 - delta) / p0)` at the accountant's small `delta`, whose tail
//! events are rare: at `10^6` runs it does **not** refute a `1/sqrt(2)` noise bug (only a
//! halved noise) — the reason for the wall audit (Jagielski, Ullman & Oprea 2020; Nasr et al.
//! 2021; Ding et al. 2018; GDP: Dong, Roth & Su 2022).

use dp_accountant::{
    AccountantConfig, AccountantKind, Budget, PrivacyEvent, delta_for_event, epsilon_for_event,
};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, check_delta, check_positive};
use crate::sampling::SamplingScheme;
use crate::wall::{PrivacyWall, ReleaseSpec, VectorBlock};

/// How much auditing to do.
///
/// Valid by construction: the fields are private, [`AuditConfig::new`] and the `with_*` setters
/// check them (at least [`MIN_AUDIT_RUNS`] runs, `alpha` in `(0, 1)`), and a deserialised
/// configuration is checked the same way (an invalid one is a deserialisation error). The JSON
/// form is `{"runs": 1000000, "alpha": 0.05, "seed": 658711}`.
///
/// # Example
/// ```
/// use dp_core::audit::AuditConfig;
/// let config = AuditConfig::default().with_runs(20_000)?.with_alpha(1e-3)?;
/// assert_eq!((config.runs(), config.alpha()), (20_000, 1e-3));
/// assert!(AuditConfig::default().with_runs(0).is_err());
/// assert!(AuditConfig::new(10_000, 1.5, 7).is_err());
/// assert!(serde_json::from_str::<AuditConfig>(r#"{"runs": 0, "alpha": 0.05, "seed": 1}"#).is_err());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "AuditConfigData", into = "AuditConfigData")]
pub struct AuditConfig {
    runs: u64,
    alpha: f64,
    seed: u64,
}

/// Fewest runs per dataset an audit accepts.
pub const MIN_AUDIT_RUNS: u64 = 100;

/// The serialised form of [`AuditConfig`] (unchecked; checked by `TryFrom`).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct AuditConfigData {
    runs: u64,
    alpha: f64,
    seed: u64,
}

impl TryFrom<AuditConfigData> for AuditConfig {
    type Error = CoreError;

    fn try_from(d: AuditConfigData) -> Result<Self, CoreError> {
        AuditConfig::new(d.runs, d.alpha, d.seed)
    }
}

impl From<AuditConfig> for AuditConfigData {
    fn from(c: AuditConfig) -> Self {
        Self {
            runs: c.runs,
            alpha: c.alpha,
            seed: c.seed,
        }
    }
}

impl AuditConfig {
    /// A checked configuration.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for fewer than [`MIN_AUDIT_RUNS`] runs (`0` included) or
    /// `alpha` outside `(0, 1)`.
    pub fn new(runs: u64, alpha: f64, seed: u64) -> Result<Self, CoreError> {
        let config = Self { runs, alpha, seed };
        check_runs(&config)?;
        Ok(config)
    }

    /// Runs of the mechanism on each of the two datasets (default `1_000_000`).
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// Probability that the reported lower bound is wrong (default `0.05`), shared by
    /// Bonferroni over every threshold and tail.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Seed of the audit's RNG (the audit is a reproducible experiment; default `0xA0D17`).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The same configuration with another number of runs.
    ///
    /// # Errors
    /// As [`AuditConfig::new`].
    pub fn with_runs(self, runs: u64) -> Result<Self, CoreError> {
        Self::new(runs, self.alpha, self.seed)
    }

    /// The same configuration with another error probability.
    ///
    /// # Errors
    /// As [`AuditConfig::new`].
    pub fn with_alpha(self, alpha: f64) -> Result<Self, CoreError> {
        Self::new(self.runs, alpha, self.seed)
    }

    /// The same configuration with another seed (any seed is valid).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self {
            runs: 1_000_000,
            alpha: 0.05,
            seed: 0xA0D17,
        }
    }
}

/// Which mechanism to audit (at its declared noise multiplier; sensitivity 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mechanism", rename_all = "snake_case")]
pub enum AuditedMechanism {
    /// The Gaussian mechanism on the full dataset (add/remove-one: `D' = D + {x}` with `x` at the
    /// norm bound, all other records contributing 0).
    Gaussian {
        /// Declared noise multiplier.
        noise_multiplier: f64,
    },
    /// The Poisson-subsampled Gaussian mechanism of the wall (same worst-case pair; the added
    /// record is included with probability `sampling_rate`).
    PoissonSubsampledGaussian {
        /// Declared noise multiplier.
        noise_multiplier: f64,
        /// Sampling rate `q` in `(0, 1]`.
        sampling_rate: f64,
    },
}

impl AuditedMechanism {
    fn noise_multiplier(&self) -> f64 {
        match *self {
            Self::Gaussian { noise_multiplier }
            | Self::PoissonSubsampledGaussian {
                noise_multiplier, ..
            } => noise_multiplier,
        }
    }

    /// The accountant event of one run (what the accountant is told).
    ///
    /// # Errors
    /// The event constructors' parameter errors.
    pub fn event(&self) -> Result<PrivacyEvent, CoreError> {
        Ok(match *self {
            Self::Gaussian { noise_multiplier } => {
                PrivacyEvent::gaussian(noise_multiplier, dp_accountant::Neighbouring::AddRemoveOne)?
            }
            Self::PoissonSubsampledGaussian {
                noise_multiplier,
                sampling_rate,
            } => PrivacyEvent::poisson_subsampled_gaussian(noise_multiplier, sampling_rate)?,
        })
    }
}

/// The outcome of an audit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditReport {
    /// The largest lower bound on epsilon over the thresholds (`0` if none is informative).
    pub epsilon_lower_bound: f64,
    /// The epsilon the accountant claims for the declared mechanism at `delta`.
    pub claimed_epsilon: f64,
    /// The delta of both.
    pub delta: f64,
    /// Runs per dataset.
    pub runs: u64,
    /// Error probability of the lower bound.
    pub alpha: f64,
    /// The threshold that gave the bound.
    pub threshold: f64,
    /// Whether the bound came from the upper tail (`output >= t`) or the lower tail.
    pub upper_tail: bool,
    /// Runs of the dataset the test favours (`D'` for the upper tail, `D` for the lower tail)
    /// that fell on the test's side of the threshold.
    pub count_favoured: u64,
    /// Runs of the other dataset that fell on the test's side (the false positives).
    pub count_other: u64,
}

impl AuditReport {
    /// Whether the audit refutes the claim (the lower bound exceeds the accountant's epsilon).
    pub fn refutes_claim(&self) -> bool {
        self.epsilon_lower_bound > self.claimed_epsilon
    }
}

/// `ln P[X = i]` for `X ~ Binomial(n, p)`.
fn ln_binomial_pmf(i: u64, n: u64, p: f64) -> f64 {
    let lg = |x: f64| special::Gamma::ln_gamma(x).0;
    lg(n as f64 + 1.0) - lg(i as f64 + 1.0) - lg((n - i) as f64 + 1.0)
        + i as f64 * p.ln()
        + (n - i) as f64 * (-p).ln_1p()
}

/// `P[X >= k]` when that tail lies above the mean (summed upward until negligible).
fn upper_tail(k: u64, n: u64, p: f64) -> f64 {
    let mut sum = 0.0;
    for i in k..=n {
        let term = ln_binomial_pmf(i, n, p).exp();
        sum += term;
        if term <= sum * 1e-17 && i as f64 > n as f64 * p {
            break;
        }
    }
    sum
}

/// `P[X <= k]` when that tail lies below the mean (summed downward until negligible).
fn lower_tail(k: u64, n: u64, p: f64) -> f64 {
    let mut sum = 0.0;
    for i in (0..=k).rev() {
        let term = ln_binomial_pmf(i, n, p).exp();
        sum += term;
        if term <= sum * 1e-17 && (i as f64) < n as f64 * p {
            break;
        }
    }
    sum
}

/// One-sided Clopper-Pearson lower bound on `p` at level `a`: the `p` with `P[X >= k; p] = a`.
fn clopper_pearson_lower(k: u64, n: u64, a: f64) -> f64 {
    if k == 0 {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0, k as f64 / n as f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if upper_tail(k, n, mid) > a {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
}

/// One-sided Clopper-Pearson upper bound on `p` at level `a`: the `p` with `P[X <= k; p] = a`.
fn clopper_pearson_upper(k: u64, n: u64, a: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    let (mut lo, mut hi) = (k as f64 / n as f64, 1.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if lower_tail(k, n, mid) > a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The threshold audit of a scalar mechanism: `mechanism(with_record, rng)` returns one output on
/// `D'` (`true`) or `D` (`false`). Thresholds must be fixed before seeing outputs.
///
/// # Errors
/// [`CoreError::InvalidParameter`] for fewer than 100 runs, `alpha` outside `(0, 1)`, `delta`
/// outside `(0, 1)`, a non-finite claim, or no thresholds; [`CoreError::NonFinite`] if the
/// mechanism returns NaN.
pub fn threshold_audit<M>(
    mut mechanism: M,
    thresholds: &[f64],
    claimed_epsilon: f64,
    delta: f64,
    config: &AuditConfig,
) -> Result<AuditReport, CoreError>
where
    M: FnMut(bool, &mut ChaCha20Rng) -> f64,
{
    check_runs(config)?;
    check_delta("delta", delta)?;
    check_positive("claimed epsilon", claimed_epsilon)?;
    if thresholds.is_empty() {
        return Err(CoreError::Empty("audit thresholds"));
    }
    let mut rng = ChaCha20Rng::seed_from_u64(config.seed);
    let mut outputs = |with: bool| -> Result<Vec<f64>, CoreError> {
        let mut v: Vec<f64> = (0..config.runs)
            .map(|_| mechanism(with, &mut rng))
            .collect();
        if v.iter().any(|x| x.is_nan()) {
            return Err(CoreError::NonFinite("audited mechanism output"));
        }
        v.sort_by(f64::total_cmp);
        Ok(v)
    };
    let without = outputs(false)?;
    let with = outputs(true)?;
    Ok(threshold_bound(
        &without,
        &with,
        thresholds,
        claimed_epsilon,
        delta,
        config,
    ))
}

/// The threshold audit's bound from sorted outputs on `D` (`without`) and `D'` (`with`).
fn threshold_bound(
    without: &[f64],
    with: &[f64],
    thresholds: &[f64],
    claimed_epsilon: f64,
    delta: f64,
    config: &AuditConfig,
) -> AuditReport {
    let n = config.runs;
    let at_or_above = |v: &[f64], t: f64| (v.len() - v.partition_point(|x| *x < t)) as u64;
    let tests = 2 * thresholds.len();
    // each of the 2 bounds of each test at alpha / (2 tests)
    let a = config.alpha / (2.0 * tests as f64);
    let mut best = AuditReport {
        epsilon_lower_bound: 0.0,
        claimed_epsilon,
        delta,
        runs: n,
        alpha: config.alpha,
        threshold: thresholds[0],
        upper_tail: true,
        count_favoured: 0,
        count_other: 0,
    };
    for &t in thresholds {
        let (up0, up1) = (at_or_above(without, t), at_or_above(with, t));
        // upper tail: "output >= t" favours D' (bounds eps of D' against D);
        // lower tail: "output < t" favours D (bounds eps of D against D'); DP bounds both.
        for (upper, favoured, other) in [(true, up1, up0), (false, n - up0, n - up1)] {
            let p_lo = clopper_pearson_lower(favoured, n, a);
            let q_hi = clopper_pearson_upper(other, n, a);
            if p_lo - delta > 0.0 && q_hi > 0.0 {
                let eps = ((p_lo - delta) / q_hi).ln();
                if eps > best.epsilon_lower_bound {
                    best.epsilon_lower_bound = eps;
                    best.threshold = t;
                    best.upper_tail = upper;
                    best.count_favoured = favoured;
                    best.count_other = other;
                }
            }
        }
    }
    best
}

/// Audits `mechanism` as declared: the accountant's epsilon at `delta` for its event against the
/// empirical lower bound from the crate's own implementation.
///
/// # Errors
/// As [`audit_with_noise_scale`].
///
/// # Example
/// ```
/// use dp_core::audit::{AuditConfig, AuditedMechanism, audit};
/// let config = AuditConfig::default().with_runs(20_000)?;
/// let report = audit(AuditedMechanism::Gaussian { noise_multiplier: 2.0 }, 1e-5, &config)?;
/// assert!(!report.refutes_claim());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn audit(
    mechanism: AuditedMechanism,
    delta: f64,
    config: &AuditConfig,
) -> Result<AuditReport, CoreError> {
    audit_with_noise_scale(mechanism, 1.0, delta, config)
}

/// Audits a deliberately mis-implemented `mechanism` whose noise std is `noise_scale` times the
/// declared one, while the claim stays the accountant's epsilon for the declared mechanism
/// (`noise_scale = 0.5`: the noise-halving bug an audit must catch).
///
/// The mechanism runs through a real [`PrivacyWall`] (Poisson sampling, add/remove-one) on the
/// pair of [`AuditedWall`]; outputs are standardised by the declared noise std, and the
/// thresholds `1/(2 sigma) + z` for `z = 0, 0.25, ..., 5` and their mirror images are fixed
/// before any output is seen. This `(eps, delta)` threshold test is weak at small `delta`: use
/// [`audit_wall`] to catch a `1/sqrt(2)` noise bug.
///
/// # Errors
/// Parameter errors of the mechanism, `noise_scale` not finite and `> 0`, the accountant's
/// errors, the wall's, and [`threshold_audit`]'s.
pub fn audit_with_noise_scale(
    mechanism: AuditedMechanism,
    noise_scale: f64,
    delta: f64,
    config: &AuditConfig,
) -> Result<AuditReport, CoreError> {
    check_runs(config)?;
    check_delta("delta", delta)?;
    check_positive("noise scale", noise_scale)?;
    let event = mechanism.event()?;
    let claimed = epsilon_for_event(&event, delta, &AccountantConfig::default())?.epsilon;
    let sigma = mechanism.noise_multiplier();
    let wall = match mechanism {
        AuditedMechanism::Gaussian { noise_multiplier } => {
            AuditedWall::add_remove_gaussian(noise_multiplier)?
        }
        AuditedMechanism::PoissonSubsampledGaussian {
            noise_multiplier,
            sampling_rate,
        } => AuditedWall::poisson_subsampled(noise_multiplier, sampling_rate)?,
    };
    let (without, with, _) = wall.standardised_outputs(noise_scale, config)?;
    let mut thresholds = Vec::new();
    for i in 0..=20 {
        let z = 0.25 * i as f64;
        thresholds.push(0.5 / sigma + z);
        thresholds.push(0.5 / sigma - z);
    }
    Ok(threshold_bound(
        &without,
        &with,
        &thresholds,
        claimed,
        delta,
        config,
    ))
}

// ---------------------------------------------------------------------------------------------
// The wall audit: the wall's own release path on a worst-case neighbouring pair, both relations.
// ---------------------------------------------------------------------------------------------

/// A privacy wall to audit: its sampling scheme (which fixes the neighbouring relation), its
/// declared noise multiplier, and the number of records of the smaller dataset of the pair.
///
/// The worst-case neighbouring pair, one vector block of length 1 with bound 1:
/// * **add/remove-one** (Poisson, rate `q`): `D` = `population` records contributing `0`;
///   `D'` = `D` plus one record writing `1e6` (clipped by the wall to the bound). Both walls
///   declare the same public population size `population + 1`, so they divide by the same
///   `qN`. At `q = 1` this is the plain Gaussian mechanism.
/// * **replace-one** (fixed size `m` of `N`, or one uniform draw of `N`): `D` = `N` records
///   writing `+1` (at the bound), `D'` = `D` with its first record replaced by one writing
///   `-1e6` (clipped to `-1`): the sum moves by `2` (the relation's sensitivity `2B`) whenever
///   that record is drawn, with probability `m / N`. At `m = N` this is the plain Gaussian.
///
/// In both, the output of `D` is Gaussian and that of `D'` a mixture with the shifted Gaussian
/// of weight `q` (or `m / N`): the pair of Mironov, Talwar & Zhang (2019) and the one behind the
/// fixed-size bound of Wang, Balle & Kasiviswanathan (2019).
///
/// **Grouped** ([`Self::grouped`]): the released statistic is instead a group of `m` vector
/// blocks of length 1 sharing the joint bound 1 (one unit of rescale-noise-rescale). The
/// differing record writes `±1e6` into every block (clipped jointly to `1/sqrt(m)` each), `D`'s
/// records (replace-one) `1/sqrt(m)` each, and the audited output is the sum of the `m` blocks
/// standardised by `sqrt(m)` times their declared noise std: under a correct wall the same
/// Gaussian pair as above, with mean shift `1 / sigma`. Clipping the blocks one by one (a
/// shift of `sqrt(m) / sigma`) or noise too small for the group is refuted.
///
/// # Example
/// ```
/// use dp_core::audit::AuditedWall;
/// let gaussian = AuditedWall::add_remove_gaussian(1.0)?;
/// assert_eq!(gaussian.inclusion_probability(), 1.0);
/// assert_eq!(gaussian.grouped(4)?.grouped_blocks, 4);
/// let single = AuditedWall::replace_one_single_draw(0.8, 2)?;
/// assert_eq!(single.inclusion_probability(), 0.5);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditedWall {
    /// The sampling scheme of every release (and so the neighbouring relation).
    pub scheme: SamplingScheme,
    /// The declared noise multiplier (noise std / sensitivity under the scheme's relation).
    pub noise_multiplier: f64,
    /// Records of `D` (add/remove: `D'` has one more; replace-one: both have this many).
    pub population: usize,
    /// Blocks in the audited group (`1`: one block of its own, the plain audit).
    #[serde(default = "one_block")]
    pub grouped_blocks: usize,
}

fn one_block() -> usize {
    1
}

impl AuditedWall {
    /// A wall of `scheme` with noise multiplier `noise_multiplier` over `population` records.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for a noise multiplier that is not finite and `> 0`;
    /// the scheme's population errors; [`CoreError::Misconfigured`] for
    /// [`SamplingScheme::ShuffledEpoch`] (accounted per epoch, not per release).
    pub fn new(
        scheme: SamplingScheme,
        noise_multiplier: f64,
        population: usize,
    ) -> Result<Self, CoreError> {
        check_positive("noise multiplier", noise_multiplier)?;
        scheme.check_population(population)?;
        if let SamplingScheme::ShuffledEpoch = scheme {
            return Err(CoreError::Misconfigured(
                "the audit releases one accounted event at a time; a shuffled epoch is \
                 accounted per epoch (planned accounting only)",
            ));
        }
        Ok(Self {
            scheme,
            noise_multiplier,
            population,
            grouped_blocks: 1,
        })
    }

    /// The same wall releasing a **group** of `blocks` blocks that share one joint bound (see
    /// the type's documentation).
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless `1 <= blocks <= 64`.
    pub fn grouped(mut self, blocks: usize) -> Result<Self, CoreError> {
        if !(1..=64).contains(&blocks) {
            return Err(CoreError::InvalidParameter {
                name: "grouped blocks",
                value: blocks as f64,
                reason: "must lie in 1..=64",
            });
        }
        self.grouped_blocks = blocks;
        Ok(self)
    }

    /// The plain Gaussian mechanism under add/remove-one (Poisson at `q = 1`, one record in `D`).
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn add_remove_gaussian(noise_multiplier: f64) -> Result<Self, CoreError> {
        Self::new(SamplingScheme::poisson(1.0)?, noise_multiplier, 1)
    }

    /// The Poisson-subsampled Gaussian mechanism (add/remove-one) at rate `sampling_rate`.
    ///
    /// # Errors
    /// As [`Self::new`] and [`SamplingScheme::poisson`].
    pub fn poisson_subsampled(
        noise_multiplier: f64,
        sampling_rate: f64,
    ) -> Result<Self, CoreError> {
        Self::new(SamplingScheme::poisson(sampling_rate)?, noise_multiplier, 1)
    }

    /// The plain Gaussian mechanism under replace-one (fixed size `m = N = 2`: the full batch).
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn replace_one_gaussian(noise_multiplier: f64) -> Result<Self, CoreError> {
        Self::new(SamplingScheme::fixed_size(2)?, noise_multiplier, 2)
    }

    /// Fixed-size sampling of `sample_size` of `population` records without replacement
    /// (replace-one).
    ///
    /// # Errors
    /// As [`Self::new`] and [`SamplingScheme::fixed_size`].
    pub fn replace_one_fixed_size(
        noise_multiplier: f64,
        sample_size: usize,
        population: usize,
    ) -> Result<Self, CoreError> {
        Self::new(
            SamplingScheme::fixed_size(sample_size)?,
            noise_multiplier,
            population,
        )
    }

    /// One uniform draw of `population` records per release (DP-SEP's sampler; replace-one).
    ///
    /// # Errors
    /// As [`Self::new`].
    pub fn replace_one_single_draw(
        noise_multiplier: f64,
        population: usize,
    ) -> Result<Self, CoreError> {
        Self::new(
            SamplingScheme::uniform_single(),
            noise_multiplier,
            population,
        )
    }

    /// Probability that the differing record is in a batch (`q`, `m / N` or `1 / N`).
    pub fn inclusion_probability(&self) -> f64 {
        match self.scheme {
            SamplingScheme::Poisson { rate } => rate,
            SamplingScheme::FixedSize { sample_size } => {
                sample_size as f64 / self.population as f64
            }
            SamplingScheme::UniformSingle => 1.0 / self.population as f64,
            // No amplification is claimed (and `new` refuses the scheme).
            SamplingScheme::ShuffledEpoch => 1.0,
        }
    }

    /// Whether every release is the plain (unsubsampled) Gaussian mechanism, `mu`-GDP with
    /// `mu = 1 / noise multiplier` (Dong, Roth & Su 2022, Thm 2.7).
    pub fn is_full_batch(&self) -> bool {
        self.inclusion_probability() >= 1.0
    }

    /// A short description, e.g. `"add/remove-one, Poisson q = 0.5, sigma = 0.8"`.
    pub fn describe(&self) -> String {
        let relation = match self.scheme.neighbouring() {
            dp_accountant::Neighbouring::AddRemoveOne => "add/remove-one",
            dp_accountant::Neighbouring::ReplaceOne => "replace-one",
        };
        let sampling = match self.scheme {
            SamplingScheme::Poisson { rate } if rate >= 1.0 => "full batch (Poisson q = 1)".into(),
            SamplingScheme::Poisson { rate } => format!("Poisson q = {rate}"),
            SamplingScheme::FixedSize { sample_size } if sample_size == self.population => {
                format!(
                    "full batch (fixed size {sample_size} of {})",
                    self.population
                )
            }
            SamplingScheme::FixedSize { sample_size } => {
                format!("fixed size {sample_size} of {}", self.population)
            }
            SamplingScheme::UniformSingle => format!("single draw of {}", self.population),
            SamplingScheme::ShuffledEpoch => format!("shuffled epoch of {}", self.population),
        };
        let grouped = match self.grouped_blocks {
            1 => String::new(),
            m => format!(", a group of {m} blocks"),
        };
        format!(
            "{relation}, {sampling}{grouped}, sigma = {}",
            self.noise_multiplier
        )
    }

    /// The two walls of the pair (`D`, `D'`), built like a user's: the real builder, budget and
    /// accountant, with the planted noise scale (1 = as implemented) and separate seeds.
    fn walls(
        &self,
        noise_scale: f64,
        runs: u64,
        seed: u64,
    ) -> Result<(PrivacyWall<f64>, PrivacyWall<f64>, PrivacyEvent), CoreError> {
        let (d, d_prime, public_n): (Vec<f64>, Vec<f64>, Option<usize>) =
            match self.scheme.neighbouring() {
                dp_accountant::Neighbouring::AddRemoveOne => {
                    let d = vec![0.0; self.population];
                    let mut d_prime = d.clone();
                    d_prime.push(1e6);
                    (d, d_prime, Some(self.population + 1))
                }
                dp_accountant::Neighbouring::ReplaceOne => {
                    let d = vec![1.0; self.population];
                    let mut d_prime = d.clone();
                    d_prime[0] = -1e6;
                    (d, d_prime, None)
                }
            };
        // The budget is whatever `runs` releases spend: the wall charges every one of them.
        let event = self
            .scheme
            .event(self.noise_multiplier, self.population)?
            .self_composed(runs)?;
        let spent = epsilon_for_event(&event, 0.5, &AccountantConfig::default())?.epsilon;
        let budget = Budget::new((2.0 * spent).max(1.0), 0.5)?;
        let build = |records: Vec<f64>, seed: u64| {
            let mut b = PrivacyWall::builder(records)
                .sampling(self.scheme)
                .budget(budget)
                .noise_multiplier(self.noise_multiplier)
                .seed(seed)
                .planted_noise_scale(noise_scale);
            if let Some(n) = public_n {
                b = b.public_population_size(n).require_public_population();
            }
            b.build()
        };
        let wall_d = build(d, seed)?;
        let wall_d_prime = build(d_prime, seed ^ 0x5EED_D1FF)?;
        let per_release = wall_d
            .event_per_release()
            .cloned()
            .ok_or(CoreError::Misconfigured("an audited wall must be private"))?;
        Ok((wall_d, wall_d_prime, per_release))
    }

    /// Sorted standardised outputs of `config.runs` releases on `D` and on `D'` (see
    /// [`wall_outputs`]), and the per-release event the walls charge.
    fn standardised_outputs(
        &self,
        noise_scale: f64,
        config: &AuditConfig,
    ) -> Result<(Vec<f64>, Vec<f64>, PrivacyEvent), CoreError> {
        let (mut wall_d, mut wall_d_prime, event) =
            self.walls(noise_scale, config.runs, config.seed)?;
        // D's noiseless sum is 0 (add/remove) or its batch size (replace-one: every record at
        // +1); D' moves up (add/remove) or down by 2 (replace-one: flip the sign).
        let (centre, sign) = match self.scheme.neighbouring() {
            dp_accountant::Neighbouring::AddRemoveOne => (0.0, 1.0),
            dp_accountant::Neighbouring::ReplaceOne => (wall_d.expected_batch_size(), -1.0),
        };
        let m = self.grouped_blocks;
        let d = wall_outputs(&mut wall_d, config.runs, centre, sign, m)?;
        let d_prime = wall_outputs(&mut wall_d_prime, config.runs, centre, sign, m)?;
        Ok((d, d_prime, event))
    }
}

/// The standardised outputs of `runs` releases of `wall` (sorted): `sign (value - centre) / s`
/// with `s` the released block's declared noise std, so that `D` gives `N(0, r^2)` (`r` the
/// planted noise scale) and `D'` a mixture with `N(1 / sigma, r^2)`. With a group of `m > 1`
/// blocks, each record writes its value times `1/sqrt(m)` into every block and the output is
/// `sign sum_b (value_b - centre / sqrt(m)) / (sqrt(m) s)`: the same two distributions.
fn wall_outputs(
    wall: &mut PrivacyWall<f64>,
    runs: u64,
    centre_sum: f64,
    sign: f64,
    blocks: usize,
) -> Result<Vec<f64>, CoreError> {
    let mut b = ReleaseSpec::builder("audit");
    let handles: Vec<VectorBlock> = if blocks == 1 {
        vec![b.vector("audit", 1, 1.0)?]
    } else {
        let g = b.group("audit", 1.0)?;
        (0..blocks)
            .map(|i| b.vector_in(g, format!("audit{i}"), 1))
            .collect::<Result<_, _>>()?
    };
    let spec = b.build()?;
    let root = (blocks as f64).sqrt();
    let w = 1.0 / root;
    let mut out = Vec::with_capacity(usize::try_from(runs).unwrap_or(0));
    let expected = wall.expected_batch_size();
    let centre = centre_sum / expected * w;
    let mut failure = None;
    wall.release_repeatedly(
        "audit",
        &spec,
        runs,
        |&x: &f64, buf| {
            for &h in &handles {
                buf.push(h, 0, x * w);
            }
        },
        |r| {
            let mut y = 0.0;
            for &h in &handles {
                match r.released(h) {
                    Ok(block) => {
                        y += sign * (block.value.as_slice()[0] - centre) / (root * block.noise_std)
                    }
                    Err(e) => failure = Some(e),
                }
            }
            if y.is_nan() {
                failure = Some(CoreError::NonFinite("audited release"));
            }
            out.push(y);
        },
    )?;
    if let Some(e) = failure {
        return Err(e);
    }
    out.sort_by(f64::total_cmp);
    Ok(out)
}

/// One point of the audited privacy curve.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeltaPoint {
    /// The epsilon.
    pub epsilon: f64,
    /// The accountant's delta at `epsilon` for the declared per-release event (an upper bound).
    pub claimed_delta: f64,
    /// The audit's lower bound on the true delta at `epsilon`: `max_t TPR_lo - e^eps FPR_hi`
    /// (`0` when no test is informative).
    pub delta_lower_bound: f64,
    /// The standardised threshold of the test that gave the bound.
    pub threshold: f64,
    /// Whether that test favoured `D'` (`output >= t`) rather than `D` (`output < t`).
    pub upper_tail: bool,
}

/// The outcome of [`audit_wall`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WallAuditReport {
    /// What was audited.
    pub wall: AuditedWall,
    /// The planted noise scale (`1` = the wall as implemented).
    pub noise_scale: f64,
    /// Releases per dataset.
    pub runs: u64,
    /// Probability that any lower bound of this report is wrong (the false-alarm rate of
    /// [`Self::refutes_claim`] for a correct wall), shared by Bonferroni over every threshold,
    /// tail and bound.
    pub alpha: f64,
    /// The claimed `mu` of `mu`-GDP, `1 / sigma` (full-batch walls only).
    pub claimed_mu: Option<f64>,
    /// Lower bound on `mu`: `max_t Phi^-1(TPR_lo) - Phi^-1(FPR_hi)` over every test (valid
    /// for any mechanism; compared with the claim for full-batch walls only).
    pub mu_lower_bound: f64,
    /// The accountant's delta and the audit's lower bound at each epsilon of the grid.
    pub curve: Vec<DeltaPoint>,
    /// The accountant method of the claims (`"pld/..."` or `"rdp/..."`).
    pub accountant: String,
}

impl WallAuditReport {
    /// Whether the audit refutes the accountant: the `mu` lower bound exceeds the claimed `mu`,
    /// or the delta lower bound exceeds the claimed delta at some epsilon of the grid.
    pub fn refutes_claim(&self) -> bool {
        self.claimed_mu.is_some_and(|mu| self.mu_lower_bound > mu)
            || self
                .curve
                .iter()
                .any(|p| p.delta_lower_bound > p.claimed_delta)
    }

    /// The largest `delta_lower_bound - claimed_delta` over the grid (positive: refuted).
    pub fn worst_delta_excess(&self) -> f64 {
        self.curve
            .iter()
            .map(|p| p.delta_lower_bound - p.claimed_delta)
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

/// The epsilons at which the delta curve is audited (fixed in advance).
pub const AUDIT_EPSILONS: [f64; 12] =
    [0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0];

/// `Phi^-1(p)` by bisection on `ln Phi` (`-inf` at `0`, `+inf` at `1`), to `1e-13` absolute.
fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    if p > 0.5 {
        return -normal_quantile(1.0 - p);
    }
    let target = p.ln();
    let (mut lo, mut hi) = (-40.0f64, 0.0f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if crate::normal::ln_ndtr(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Audits a wall through its own release path: `config.runs` releases on each dataset of the
/// worst-case pair ([`AuditedWall`]), with the noise scaled by `noise_scale` (`1` = as
/// implemented; `0.5` or `1/sqrt(2)` = planted bugs, the claim unchanged).
///
/// **The statistic.** Every threshold test `output >= t` (favouring `D'`) and `output < t`
/// (favouring `D`) of a grid fixed in advance (standardised `t` from `-4` to `4 + 1/sigma` in
/// steps of `0.2`; the likelihood ratio of the pair is monotone in the output, so these are the
/// Neyman-Pearson tests) has a false-positive rate `FPR` and a true-positive rate `TPR`, bounded
/// by one-sided Clopper-Pearson intervals, each at `alpha / (4 x thresholds)` (Bonferroni), so
/// **every** bound holds at once with probability `>= 1 - alpha`. Then:
/// * `mu`-GDP implies `TPR <= Phi(Phi^-1(FPR) + mu)` for every test (Dong, Roth & Su 2022), so
///   `mu >= Phi^-1(TPR_lo) - Phi^-1(FPR_hi)`; for the full-batch Gaussian (`mu = 1/sigma`, the
///   whole trade-off curve) this is a sharp estimate of the mean shift over the noise std;
/// * `(eps, delta)`-DP implies `TPR <= e^eps FPR + delta`, so `delta(eps) >= TPR_lo - e^eps
///   FPR_hi`, compared with the accountant's `delta(eps)` for the wall's per-release event at
///   each epsilon of [`AUDIT_EPSILONS`] (the PLD accountant, the tightest, for every event).
///
/// A correct wall is refuted with probability at most `alpha` (the false-alarm rate).
///
/// # Errors
/// [`CoreError::InvalidParameter`] for fewer than 100 runs, `alpha` outside `(0, 1)` or a
/// noise scale that is not finite and `> 0`; the wall's and the accountant's errors.
///
/// # Example
/// ```
/// use dp_core::audit::{AuditConfig, AuditedWall, audit_wall};
/// let config = AuditConfig::new(20_000, 1e-3, 0xA0D17)?;
/// let wall = AuditedWall::add_remove_gaussian(1.0)?;
/// assert!(!audit_wall(&wall, 1.0, &config)?.refutes_claim());
/// assert!(audit_wall(&wall, std::f64::consts::FRAC_1_SQRT_2, &config)?.refutes_claim());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn audit_wall(
    wall: &AuditedWall,
    noise_scale: f64,
    config: &AuditConfig,
) -> Result<WallAuditReport, CoreError> {
    check_runs(config)?;
    check_positive("noise scale", noise_scale)?;
    let sigma = wall.noise_multiplier;
    let (d, d_prime, event) = wall.standardised_outputs(noise_scale, config)?;

    let steps = ((8.0 + 1.0 / sigma) / 0.2).ceil() as usize;
    let thresholds: Vec<f64> = (0..=steps).map(|k| -4.0 + 0.2 * k as f64).collect();
    let a = config.alpha / (4.0 * thresholds.len() as f64);
    let n = config.runs;
    let at_or_above = |v: &[f64], t: f64| (v.len() - v.partition_point(|x| *x < t)) as u64;
    // (threshold, upper tail, TPR_lo, FPR_hi)
    let mut tests = Vec::with_capacity(2 * thresholds.len());
    for &t in &thresholds {
        let (up0, up1) = (at_or_above(&d, t), at_or_above(&d_prime, t));
        for (upper, favoured, other) in [(true, up1, up0), (false, n - up0, n - up1)] {
            tests.push((
                t,
                upper,
                clopper_pearson_lower(favoured, n, a),
                clopper_pearson_upper(other, n, a),
            ));
        }
    }
    let mu_lower_bound = tests
        .iter()
        .map(|&(_, _, tpr, fpr)| normal_quantile(tpr) - normal_quantile(fpr))
        .filter(|m| m.is_finite())
        .fold(0.0f64, f64::max);
    let (claim_config, accountant) = claim_accountant();
    let mut curve = Vec::with_capacity(AUDIT_EPSILONS.len());
    for eps in AUDIT_EPSILONS {
        let claimed_delta = delta_for_event(&event, eps, &claim_config)?.delta;
        let mut point = DeltaPoint {
            epsilon: eps,
            claimed_delta,
            delta_lower_bound: 0.0,
            threshold: thresholds[0],
            upper_tail: true,
        };
        for &(t, upper, tpr, fpr) in &tests {
            let bound = tpr - eps.exp() * fpr;
            if bound > point.delta_lower_bound {
                point.delta_lower_bound = bound;
                point.threshold = t;
                point.upper_tail = upper;
            }
        }
        curve.push(point);
    }
    Ok(WallAuditReport {
        wall: *wall,
        noise_scale,
        runs: n,
        alpha: config.alpha,
        claimed_mu: wall.is_full_batch().then(|| 1.0 / sigma),
        mu_lower_bound,
        curve,
        accountant,
    })
}

/// The tightest sound accountant for the claims: PLD, which covers every event the wall charges
/// (the fixed-size, replace-one one through its symmetrised pair, `docs/pld.md` section 9, whose
/// one-step profile is exact: so the audit tests that claim against the wall itself).
fn claim_accountant() -> (AccountantConfig, String) {
    let config = AccountantConfig::default().with_accountant(AccountantKind::Pld);
    let method = config.method();
    (config, method)
}

fn check_runs(config: &AuditConfig) -> Result<(), CoreError> {
    if config.runs < MIN_AUDIT_RUNS {
        return Err(CoreError::InvalidParameter {
            name: "runs",
            value: config.runs as f64,
            reason: "an audit needs at least 100 runs",
        });
    }
    check_delta("alpha", config.alpha)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_matches_scipy() {
        // scipy.stats.beta.ppf(0.025, 30, 971) and beta.ppf(0.975, 31, 970)
        let lo = clopper_pearson_lower(30, 1000, 0.025);
        let hi = clopper_pearson_upper(30, 1000, 0.025);
        assert!((lo - 0.020_330_485_683_109_627).abs() < 1e-9, "{lo}");
        assert!((hi - 0.042_551_402_470_029_046).abs() < 1e-9, "{hi}");
        assert_eq!(clopper_pearson_lower(0, 10, 0.05), 0.0);
        assert_eq!(clopper_pearson_upper(10, 10, 0.05), 1.0);
    }

    #[test]
    fn refuses_bad_configuration() {
        for (bad, name) in [
            (AuditConfig::new(0, 0.05, 1), "runs"),
            (AuditConfig::default().with_runs(10), "runs"),
            (AuditConfig::default().with_alpha(0.0), "alpha"),
            (AuditConfig::default().with_alpha(1.0), "alpha"),
            (AuditConfig::default().with_alpha(f64::NAN), "alpha"),
        ] {
            match bad {
                Err(CoreError::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
                other => panic!("{name}: {other:?}"),
            }
        }
        let ok = AuditConfig::new(100, 0.5, 3).unwrap().with_seed(4);
        assert_eq!((ok.runs(), ok.alpha(), ok.seed()), (100, 0.5, 4));
        // the JSON form is the fields', and a deserialised configuration is checked
        let json = serde_json::to_string(&AuditConfig::default()).unwrap();
        assert_eq!(json, r#"{"runs":1000000,"alpha":0.05,"seed":658711}"#);
        assert_eq!(
            serde_json::from_str::<AuditConfig>(&json).unwrap(),
            AuditConfig::default()
        );
        for bad in [
            r#"{"runs":0,"alpha":0.05,"seed":1}"#,
            r#"{"runs":1000,"alpha":2.0,"seed":1}"#,
        ] {
            let e = serde_json::from_str::<AuditConfig>(bad).unwrap_err();
            assert!(e.to_string().contains("invalid parameter"), "{e}");
        }
        let m = AuditedMechanism::Gaussian {
            noise_multiplier: 1.0,
        };
        assert!(audit(m, 0.0, &AuditConfig::default()).is_err());
        assert!(audit_with_noise_scale(m, 0.0, 1e-5, &AuditConfig::default()).is_err());
    }
}
