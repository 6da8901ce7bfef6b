//! What a fit returns: parameters, privacy summary and ledger, per-iteration trace.

use serde::{Deserialize, Serialize};

/// One row of the per-iteration trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IterationReport {
    /// 0-based iteration.
    pub iteration: u64,
    /// Step size used.
    pub rho: f64,
    /// Records whose statistic was clipped in this batch (a non-private diagnostic for the data
    /// owner; it is not part of the released output).
    pub clipped: u64,
    /// Epsilon spent so far (at the run's delta; `None` when non-private).
    pub epsilon_spent: Option<f64>,
    /// Seconds since the start of the fit.
    pub elapsed_seconds: f64,
}

/// The privacy summary of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PrivacySummary {
    /// Total epsilon spent (`None` = infinity, non-private).
    pub epsilon: Option<f64>,
    /// The delta it is stated at (`None` when non-private).
    pub delta: Option<f64>,
    /// Noise std / per-release L2 sensitivity (`None` when non-private).
    pub noise_multiplier: Option<f64>,
    /// Poisson sampling rate `q`.
    pub sampling_rate: f64,
    /// Public expected batch size `q N` every release is divided by.
    pub expected_batch_size: f64,
    /// Number of records `N` in the wall.
    pub population: usize,
    /// Neighbouring relation of the guarantee.
    pub neighbouring: String,
    /// How the noise RNG was seeded.
    pub rng: String,
    /// The accountant's ledger (JSON), replayable with the accountant's CLI.
    pub ledger: Option<serde_json::Value>,
}

/// The result of [`crate::engine::fit`].
#[derive(Clone, Debug, Serialize)]
pub struct FitResult<G> {
    /// Final global variational parameters.
    pub global: G,
    /// Privacy summary and ledger.
    pub privacy: PrivacySummary,
    /// One row per iteration.
    pub trace: Vec<IterationReport>,
    /// Iterations run.
    pub iterations: u64,
    /// Expected number of records processed (`iterations x q N`; the realised count stays
    /// behind the wall).
    pub expected_records_processed: f64,
    /// Records clipped over all iterations.
    pub records_clipped: u64,
    /// Wall-clock seconds of the fit.
    pub seconds: f64,
    /// CPU seconds of the process during the fit (Linux; `None` elsewhere).
    pub cpu_seconds: Option<f64>,
}

impl<G> FitResult<G> {
    /// Clipped records divided by the expected number processed.
    pub fn clipped_fraction(&self) -> f64 {
        if self.expected_records_processed > 0.0 {
            self.records_clipped as f64 / self.expected_records_processed
        } else {
            0.0
        }
    }
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
