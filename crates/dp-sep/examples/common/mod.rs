//! What both examples share: one exit-code convention, quiet exit on a closed stdout, flag
//! checks that name the flag, and a progress bar on a terminal.
//!
//! Exit codes: 0 success (also when stdout is a closed pipe: the reader has gone away); 2 usage
//! and input errors (clap's own, bad flag values, flags with no effect, bad or too large files
//! and sizes); 1 a run that failed (every step failed, an improper posterior, writing the result
//! failed, e.g. on `/dev/full`); 130 interrupted by Ctrl-C (the run stops after the current
//! epoch and prints no result).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use dp_sep::SepError;

/// An error of the example: a flag with a bad value or combination, or a library error,
/// optionally attributed to the flag that caused it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExampleError {
    /// A flag's value is out of its domain, or the flag has no effect in this combination.
    #[error("{flag}: {reason}")]
    Usage {
        /// The flag (with its value where useful).
        flag: String,
        /// What is wrong.
        reason: String,
    },
    /// A library error caused by the value of a flag.
    #[error("{flag}: {source}")]
    Flag {
        /// The flag.
        flag: String,
        /// The library's error.
        #[source]
        source: SepError,
    },
    /// A library error.
    #[error(transparent)]
    Sep(#[from] SepError),
    /// The Ctrl-C handler could not be installed.
    #[error("cannot install the Ctrl-C handler: {0}")]
    CtrlC(#[from] ctrlc::Error),
}

impl ExampleError {
    /// `flag` has a bad value or no effect.
    pub fn usage(flag: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Usage {
            flag: flag.into(),
            reason: reason.into(),
        }
    }

    fn exit_code(&self) -> u8 {
        match self {
            Self::Usage { .. } => 2,
            Self::CtrlC(_) => 1,
            Self::Flag { source, .. } | Self::Sep(source) => {
                if matches!(source, SepError::Interrupted { .. }) {
                    130
                } else if source.is_input_error() {
                    2
                } else {
                    1
                }
            }
        }
    }
}

/// Attributes a library error to `flag`.
pub fn flagged(flag: impl Into<String>) -> impl FnOnce(SepError) -> ExampleError {
    let flag = flag.into();
    move |source| match source {
        // Not caused by any flag.
        SepError::Interrupted { .. } => ExampleError::Sep(source),
        source => ExampleError::Flag { flag, source },
    }
}

/// A number for a message: plain when moderate, scientific otherwise (never 300 digits).
pub fn num(x: f64) -> String {
    if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e9) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `value` must be finite and > 0.
pub fn positive(flag: &str, value: f64) -> Result<f64, ExampleError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ExampleError::usage(
            format!("{flag} {}", num(value)),
            "must be > 0 and finite",
        ))
    }
}

/// `value` must be >= 1.
pub fn at_least_one(flag: &str, value: usize) -> Result<usize, ExampleError> {
    if value >= 1 {
        Ok(value)
    } else {
        Err(ExampleError::usage(format!("{flag} 0"), "must be >= 1"))
    }
}

/// The privacy flags: `--epsilon` in `[MIN_EPSILON, inf)`; `--delta` in `(0, 1)`.
pub fn privacy_flags(epsilon: f64, delta: f64) -> Result<(), ExampleError> {
    positive("--epsilon", epsilon)?;
    if epsilon < dp_sep::limits::MIN_EPSILON {
        return Err(ExampleError::usage(
            format!("--epsilon {}", num(epsilon)),
            format!(
                "below the smallest budget a private run accepts ({})",
                dp_sep::limits::MIN_EPSILON
            ),
        ));
    }
    if !(delta > 0.0 && delta < 1.0) {
        return Err(ExampleError::usage(
            format!("--delta {}", num(delta)),
            "must be in (0, 1)",
        ));
    }
    Ok(())
}

/// Refuses a flag that was given but has no effect without `needed`.
pub fn needs(given: bool, flag: &str, needed: &str) -> Result<(), ExampleError> {
    if given {
        Err(ExampleError::usage(
            flag,
            format!("has no effect without {needed}; remove it or add {needed}"),
        ))
    } else {
        Ok(())
    }
}

/// A JSON number, or for a non-finite value an explicit string (never `null`).
pub fn finite(x: f64) -> serde_json::Value {
    if x.is_finite() {
        x.into()
    } else if x == f64::INFINITY {
        "inf".into()
    } else {
        format!("non-finite ({x})").into()
    }
}

/// Set by the Ctrl-C handler; the epoch observers stop the run when it is set.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs a Ctrl-C handler that asks the run to stop after the current epoch (the library
/// then returns `SepError::Interrupted`, exit code 130, and no result is printed).
pub fn stop_on_ctrl_c() -> Result<(), ExampleError> {
    ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst))?;
    Ok(())
}

/// Whether the run should go on (no Ctrl-C so far): what an epoch observer returns.
pub fn keep_going() -> bool {
    !INTERRUPTED.load(Ordering::SeqCst)
}

/// A progress bar over epochs on stderr, drawn only when stderr is a terminal.
pub fn progress(epochs: usize) -> indicatif::ProgressBar {
    if std::io::stderr().is_terminal() {
        let pb = indicatif::ProgressBar::new(epochs as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} epochs, eta {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// Prints the result (or the error) and returns the exit code of the convention above.
pub fn finish(result: Result<serde_json::Value, ExampleError>) -> ExitCode {
    match result {
        Ok(json) => {
            let mut out = std::io::stdout().lock();
            match writeln!(out, "{json}").and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                // The reader has gone away (`| head -c 1`, `| true`): nothing left to do.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: writing the result to stdout: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// The fixed thresholds `a` at which `--compare-sep` evaluates the bounds, besides the measured
/// KL.
pub const FIXED_THRESHOLDS: [f64; 3] = [1.0, 10.0, 100.0];

/// Relative half-width of the window `(tau, A)` around the realised `1 + lambda_min` at which
/// the as-printed bound is evaluated.
const PRINTED_WINDOW: f64 = 1e-6;

/// A bound's value, or the library's error as text (never `null`).
fn value_or_error<E: std::fmt::Display>(r: Result<f64, E>) -> serde_json::Value {
    r.map_or_else(|e| format!("error: {e}").into(), finite)
}

/// The `kl_bound` object of `--compare-sep`: for `a` = the measured KL and each of
/// [`FIXED_THRESHOLDS`], the corrected bound on `P(KL >= a)` (`corrected(a)`) and 002's
/// printed right-hand side (`printed(a, tau, A)`) with its hypothesis window `(tau, A)` shrunk
/// around `one_plus_lambda_min`, the realised `1 + lambda_min(Sigma_q^{-1} E)`.
pub fn kl_bound_json(
    kl: f64,
    one_plus_lambda_min: f64,
    corrected: impl Fn(f64) -> Result<dp_sep::kl_bound::KlTailBound, SepError>,
    printed: impl Fn(f64, f64, f64) -> Result<f64, SepError>,
) -> serde_json::Value {
    let tau = one_plus_lambda_min * (1.0 - PRINTED_WINDOW);
    let upper = one_plus_lambda_min * (1.0 + PRINTED_WINDOW);
    let at = |a: f64| {
        let corrected = corrected(a);
        serde_json::json!({
            "a": finite(a),
            "corrected_probability": value_or_error(corrected.as_ref().map(|b| b.probability)),
            "corrected_tau": value_or_error(corrected.as_ref().map(|b| b.tau)),
            "as_printed": value_or_error(printed(a, tau, upper)),
        })
    };
    serde_json::json!({
        "what": "P(KL[q_SEP || p_DPSEP] >= a) under 002's Thm. 4.1 noise model with the effective s1, s2: corrected bound (dp_sep::kl_bound::kl_tail_bound) and the printed right-hand side (not a valid bound; see docs/dp-sep.md section 8)",
        "as_printed_constants": format!("tau, A = realised 1 + lambda_min(Sigma_q^-1 E) times (1 -/+ {PRINTED_WINDOW})"),
        "one_plus_lambda_min": finite(one_plus_lambda_min),
        "at_measured_kl": if kl > 0.0 { at(kl) } else { "measured KL is 0: no threshold".into() },
        "at_fixed": FIXED_THRESHOLDS.iter().map(|&a| at(a)).collect::<Vec<_>>(),
    })
}

/// Puts `fields` into `json["diagnostics"]`, creating it (marked `"private": false`) when
/// `--diagnostics` was not given.
pub fn add_diagnostics(json: &mut serde_json::Value, fields: serde_json::Value) {
    if json.get("diagnostics").is_none() {
        json["diagnostics"] = serde_json::json!({
            "private": false,
            "note": "data-dependent and not noised: for the data owner, not for publication",
        });
    }
    if let (Some(d), serde_json::Value::Object(f)) = (json["diagnostics"].as_object_mut(), fields) {
        d.extend(f);
    }
}
