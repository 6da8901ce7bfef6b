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
