//! What a fit returns: the private result (parameters, privacy summary and ledger, trace of the
//! step size and the epsilon spent) and, separately, the data owner's non-private diagnostics.

use dp_accountant::{Accountant, AccountantKind};
use serde::{Deserialize, Serialize, Serializer};

/// One row of the private per-iteration trace (public schedule and ledger values only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationReport {
    /// 0-based iteration.
    pub iteration: u64,
    /// Step size used.
    pub rho: f64,
    /// Epsilon spent so far (at the run's delta; `None` when non-private).
    pub epsilon_spent: Option<f64>,
}

/// The privacy summary of a run (public facts and the ledger).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivacySummary {
    /// Total epsilon spent (`None` = infinity, non-private).
    pub epsilon: Option<f64>,
    /// The delta it is stated at (`None` when non-private).
    pub delta: Option<f64>,
    /// Noise std / per-release L2 sensitivity (`None` when non-private).
    pub noise_multiplier: Option<f64>,
    /// Inclusion probability `q = S / N` of each record (`N` the public population): the Poisson
    /// rate, or `m / N` under fixed-size sampling ([`FitResult::sampling`]).
    pub sampling_rate: f64,
    /// Public expected batch size `q N` every release is divided by (the exact `S` under
    /// fixed-size sampling).
    pub expected_batch_size: f64,
    /// The population size `N` used in `q` and in the M-step: the caller's declared public
    /// figure ([`crate::engine::SviConfigBuilder::population`]); for a non-private run without
    /// one, the number of records.
    pub public_population: usize,
    /// Whether `public_population` was declared by the caller (always `true` for private runs).
    pub population_declared: bool,
    /// Neighbouring relation of the guarantee: `add_remove_one` (Poisson) or `replace_one`
    /// (fixed-size sampling).
    pub neighbouring: String,
    /// How the noise RNG was seeded.
    pub rng: String,
    /// The accountant that calibrated and accounted the run
    /// ([`crate::engine::SviConfigBuilder::accountant`]); absent in the JSON for RDP, the default,
    /// as in the ledger's own JSON.
    #[serde(default, skip_serializing_if = "AccountantKind::is_rdp")]
    pub accountant: AccountantKind,
    /// The accountant's ledger (`None` when non-private). Serialised as the accountant's own
    /// JSON ([`dp_accountant::Accountant::to_json`], keys in sorted order), which the
    /// accountant's CLI and [`dp_accountant::Accountant::from_json`] replay; read back through
    /// `from_json`, so a ledger whose content hash does not match is refused.
    #[serde(with = "ledger_json", default)]
    pub ledger: Option<Accountant>,
}

/// The serialised form of [`PrivacySummary::ledger`]: the accountant's JSON (checked on reading).
mod ledger_json {
    use dp_accountant::Accountant;
    use serde::{Deserialize, Deserializer, Serializer, de, ser};

    pub(super) fn serialize<S: Serializer>(
        ledger: &Option<Accountant>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match ledger {
            None => s.serialize_none(),
            Some(l) => {
                let json = l.to_json().map_err(ser::Error::custom)?;
                let value: serde_json::Value =
                    serde_json::from_str(&json).map_err(ser::Error::custom)?;
                s.serialize_some(&value)
            }
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Accountant>, D::Error> {
        match Option::<serde_json::Value>::deserialize(d)? {
            None => Ok(None),
            Some(v) => Accountant::from_json(&v.to_string())
                .map(Some)
                .map_err(de::Error::custom),
        }
    }
}

/// The private result of [`crate::engine::fit`]: safe to publish.
///
/// # Privacy
/// Everything here is either public (settings, schedule, the declared population, the ledger)
/// or post-processing of the noised releases (the global parameters), so it carries the run's
/// `(epsilon, delta)` guarantee. The realised number of records, clip counts and timings are in
/// [`FitDiagnostics`] instead.
#[derive(Clone, Debug, Serialize)]
pub struct FitResult<G> {
    /// Final global variational parameters.
    pub global: G,
    /// Privacy summary and ledger.
    pub privacy: PrivacySummary,
    /// One row per iteration (`rho`, epsilon spent).
    pub trace: Vec<IterationReport>,
    /// Iterations run (a function of the settings and the ledger only).
    pub iterations: u64,
    /// Expected number of records processed (`iterations x q N`, public).
    pub expected_records_processed: f64,
    /// The batching ([`crate::engine::SviConfigBuilder::batching`]); in the JSON its name
    /// (`fixed_size`), absent for Poisson, the default (so a Poisson result's JSON is as
    /// before). The ledger's events (and its `sampling` notes) record the same regime, so
    /// replaying it reproduces the epsilon.
    #[serde(
        serialize_with = "crate::engine::config::batching_name",
        skip_serializing_if = "crate::engine::config::is_poisson"
    )]
    pub sampling: dp_core::Batching,
}

/// One row of the diagnostics' per-iteration trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationDiagnostics {
    /// 0-based iteration.
    pub iteration: u64,
    /// Records whose statistic was clipped in this batch.
    pub clipped: u64,
    /// Records whose statistic was malformed or non-finite in this batch, replaced by zero by the
    /// wall (the release still went ahead and was charged).
    pub replaced: u64,
    /// Seconds since the start of the fit (reflects the realised batch sizes).
    pub elapsed_seconds: f64,
}

/// The data owner's report of a fit: **not private**. Serialises with `"private": false`.
///
/// # Privacy
/// None of these numbers is noised or accounted for: the realised number of records, the clip
/// counts (an over-bound record is visible in them), the timings (they track the realised batch
/// sizes). Do not publish them; the examples print them only with `--diagnostics`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct FitDiagnostics {
    /// The realised number of records in the wall.
    pub realised_population: usize,
    /// Records clipped over all iterations.
    pub records_clipped: u64,
    /// Records replaced by zero over all iterations (a malformed or non-finite statistic inside
    /// a private release; see dp-core's failure policy).
    pub records_replaced: u64,
    /// Per-iteration clip counts and timings.
    pub trace: Vec<IterationDiagnostics>,
    /// Wall-clock seconds of the fit.
    pub seconds: f64,
    /// CPU seconds of the process during the fit (Linux; `None` elsewhere).
    pub cpu_seconds: Option<f64>,
    /// The public expected number of records processed (to form rates).
    pub expected_records_processed: f64,
    /// The realised number of records processed (sampled) over all iterations.
    pub records_processed: u64,
}

impl FitDiagnostics {
    /// Clipped records divided by the realised number of records processed: a fraction in
    /// `[0, 1]` (0 when nothing was processed). Before, the divisor was the *expected* count,
    /// which the realised count can exceed (a declared population below the realised one), so
    /// the "fraction" could exceed 1.
    pub fn clipped_fraction(&self) -> f64 {
        if self.records_processed > 0 {
            (self.records_clipped as f64 / self.records_processed as f64).min(1.0)
        } else {
            0.0
        }
    }

    /// Expected records processed per wall-clock second (`None` if no time was measured).
    pub fn records_per_second(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.expected_records_processed / self.seconds)
    }

    /// Expected records processed per CPU second (`None` without a positive CPU time).
    pub fn records_per_cpu_second(&self) -> Option<f64> {
        self.cpu_seconds
            .filter(|&c| c > 0.0)
            .map(|c| self.expected_records_processed / c)
    }
}

impl Serialize for FitDiagnostics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct View<'a> {
            private: bool,
            realised_population: usize,
            records_clipped: u64,
            records_replaced: u64,
            clipped_fraction: f64,
            seconds: f64,
            #[serde(skip_serializing_if = "Option::is_none")]
            cpu_seconds: Option<f64>,
            trace: &'a [IterationDiagnostics],
        }
        View {
            private: false,
            realised_population: self.realised_population,
            records_clipped: self.records_clipped,
            records_replaced: self.records_replaced,
            clipped_fraction: self.clipped_fraction(),
            seconds: self.seconds,
            cpu_seconds: self.cpu_seconds,
            trace: &self.trace,
        }
        .serialize(s)
    }
}

/// What [`crate::engine::fit`] returns: the private result and, next to it, the non-private
/// diagnostics (kept apart so that publishing `result` never publishes `diagnostics`).
#[derive(Clone, Debug)]
pub struct Fit<G> {
    /// Safe to publish.
    pub result: FitResult<G>,
    /// For the data owner only (`"private": false`).
    pub diagnostics: FitDiagnostics,
}

/// CPU time (user + system) of this process in seconds, from `/proc/self/stat` (Linux).
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // USER_HZ is 100 on every Linux configuration in practice.
    Some((utime + stime) / 100.0)
}

/// Peak resident set of this process in KiB (`VmHWM` of `/proc/self/status`, Linux).
pub fn process_peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
