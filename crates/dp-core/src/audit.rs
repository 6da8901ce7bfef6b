//! Empirical privacy audit: a statistical *lower* bound on epsilon from running a mechanism many
//! times on a worst-case pair of neighbouring datasets.
//!
//! For a threshold `t`, the test "output >= t" has false-positive rate `p0 = P[M(D) >= t]` and
//! true-positive rate `p1 = P[M(D') >= t]`. If `M` is `(eps, delta)`-DP then `p1 <= e^eps p0 +
//! delta`, so `eps >= ln((p1 - delta) / p0)`. With `n` runs on each dataset, Clopper-Pearson
//! bounds (a lower bound on `p1`, an upper bound on `p0`) turn the counts into a lower bound on
//! `eps` that holds with probability at least `1 - alpha`, simultaneously over a grid of
//! thresholds fixed in advance and both tails (Bonferroni) — the approach of Jagielski, Ullman &
//! Oprea 2020 and Nasr et al. 2021, with the threshold test of Ding et al. 2018.
//!
//! An audit passes when the lower bound stays below the accountant's epsilon. It cannot prove a
//! mechanism private, but it catches gross bugs: [`audit_with_noise_scale`] with scale `0.5` (noise
//! halved, accountant unchanged) is refuted at the default settings.
//!
//! The mechanisms are run through the crate's own code: the [`GaussianMechanism`] for the plain
//! Gaussian, and the wall's Poisson sampler, clipping and noise for the subsampled one.

use dp_accountant::{AccountantConfig, PrivacyEvent, epsilon_for_event};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::clip::clip_l2;
use crate::error::{CoreError, check_delta, check_positive};
use crate::gaussian::GaussianMechanism;
use crate::sampling::SamplingScheme;

/// How much auditing to do.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditConfig {
    /// Runs of the mechanism on each of the two datasets (default `1_000_000`).
    pub runs: u64,
    /// Probability that the reported lower bound is wrong (default `0.05`), shared by
    /// Bonferroni over every threshold and tail.
    pub alpha: f64,
    /// Seed of the audit's RNG (the audit is a reproducible experiment; default `0xA0D17`).
    pub seed: u64,
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
    if config.runs < 100 {
        return Err(CoreError::InvalidParameter {
            name: "runs",
            value: config.runs as f64,
            reason: "an audit needs at least 100 runs",
        });
    }
    check_delta("alpha", config.alpha)?;
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
        let (up0, up1) = (at_or_above(&without, t), at_or_above(&with, t));
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
    Ok(best)
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
/// let config = AuditConfig { runs: 20_000, ..AuditConfig::default() };
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
/// Worst-case pair (add/remove-one, sensitivity 1): `D` holds one record contributing 0; `D'`
/// adds a record whose contribution (`1e6`, clipped by the crate's [`clip_l2`] to the bound `1`)
/// is at the bound. Thresholds: `1/2 + s z` for `z = 0, 0.25, ..., 5` and their mirror images,
/// `s` the declared noise std (fixed before any output is seen).
///
/// # Errors
/// Parameter errors of the mechanism, `noise_scale` not finite and `> 0`, the accountant's
/// errors, and [`threshold_audit`]'s.
pub fn audit_with_noise_scale(
    mechanism: AuditedMechanism,
    noise_scale: f64,
    delta: f64,
    config: &AuditConfig,
) -> Result<AuditReport, CoreError> {
    check_positive("noise scale", noise_scale)?;
    let event = mechanism.event()?;
    let claimed = epsilon_for_event(&event, delta, &AccountantConfig::default())?.epsilon;
    let declared_std = mechanism.noise_multiplier();
    let actual = GaussianMechanism::from_std(declared_std * noise_scale, 1.0)?;
    let rate = match mechanism {
        AuditedMechanism::Gaussian { .. } => 1.0,
        AuditedMechanism::PoissonSubsampledGaussian { sampling_rate, .. } => sampling_rate,
    };
    let scheme = SamplingScheme::poisson(rate)?;
    let records: [f64; 2] = [0.0, 1e6];
    let mut batch = Vec::with_capacity(2);
    let run = |with: bool, rng: &mut ChaCha20Rng| -> f64 {
        let population = if with { 2 } else { 1 };
        if scheme.sample_into(population, rng, &mut batch).is_err() {
            return f64::NAN;
        }
        let mut sum = [0.0];
        for &i in &batch {
            let mut contribution = [records[i]];
            if clip_l2(&mut contribution, 1.0).is_err() {
                return f64::NAN;
            }
            sum[0] += contribution[0];
        }
        match actual.add_noise(&mut sum, rng) {
            Ok(()) => sum[0],
            Err(_) => f64::NAN,
        }
    };
    let mut thresholds = Vec::new();
    for i in 0..=20 {
        let z = 0.25 * i as f64;
        thresholds.push(0.5 + declared_std * z);
        thresholds.push(0.5 - declared_std * z);
    }
    threshold_audit(run, &thresholds, claimed, delta, config)
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
        let tiny = AuditConfig {
            runs: 10,
            ..AuditConfig::default()
        };
        let m = AuditedMechanism::Gaussian {
            noise_multiplier: 1.0,
        };
        assert!(audit(m, 1e-5, &tiny).is_err());
        assert!(audit(m, 0.0, &AuditConfig::default()).is_err());
        assert!(audit_with_noise_scale(m, 0.0, 1e-5, &AuditConfig::default()).is_err());
    }
}
