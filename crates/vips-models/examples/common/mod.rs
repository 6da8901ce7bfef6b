#![allow(dead_code)] // each example uses a part of this module

//! What the three examples share: the error type and exit-code convention, flag parsers with
//! clear messages (`--accountant` and `--sampling` among them), output that survives a closed pipe, Ctrl-C, and the no-null check.
//!
//! Exit codes: 0 success (also when stdout is a closed pipe: the reader went away), 2 usage and
//! input errors (bad or ineffective flags, unreadable or malformed files, sizes over a limit,
//! an impossible privacy calibration), 1 when the result cannot be written (`/dev/full`) or is
//! not finite, 130 when interrupted by Ctrl-C.

use std::io::Write;
use std::process::ExitCode;

use thiserror::Error;
use vips_models::engine::{CancelToken, EngineError};

/// Everything an example can fail with.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CliError {
    /// A flag that is wrong, or has no effect in the given combination.
    #[error("{flag}: {reason}")]
    Usage {
        /// The flag.
        flag: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// A file that cannot be used.
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// What is wrong (line included).
        reason: String,
    },
    /// Loader or model errors (they name the file, line or parameter).
    #[error(transparent)]
    Data(#[from] vips_models::lda::corpus::CorpusError),
    /// LDA errors.
    #[error(transparent)]
    Lda(#[from] vips_models::lda::LdaError),
    /// BLR errors.
    #[error(transparent)]
    Blr(#[from] vips_models::blr::BlrError),
    /// SBN errors.
    #[error(transparent)]
    Sbn(#[from] vips_models::sbn::SbnError),
    /// Engine errors (settings, calibration, the wall).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A metric of the result is not finite.
    #[error("the result's `{key}` is not finite; nothing printed")]
    NonFinite {
        /// The metric's path in the result (e.g. `test.accuracy`).
        key: String,
    },
    /// The result could not be written to stdout.
    #[error("cannot write the result to stdout: {0}")]
    Output(std::io::Error),
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Could not install the Ctrl-C handler.
    #[error("set-up: {0}")]
    CtrlC(#[from] ctrlc::Error),
    /// Could not set up the rayon thread pool.
    #[error("set-up: {0}")]
    Threads(#[from] rayon::ThreadPoolBuildError),
}

impl CliError {
    fn exit_code(&self) -> u8 {
        match self {
            Self::Engine(EngineError::Interrupted { .. }) => 130,
            Self::Blr(vips_models::blr::BlrError::Engine(EngineError::Interrupted { .. }))
            | Self::Sbn(vips_models::sbn::SbnError::Engine(EngineError::Interrupted { .. })) => 130,
            Self::NonFinite { .. } | Self::Output(_) | Self::CtrlC(_) | Self::Threads(_) => 1,
            _ => 2,
        }
    }
}

/// A flag refused because of how it combines with others.
pub fn usage(flag: &'static str, reason: impl Into<String>) -> CliError {
    CliError::Usage {
        flag,
        reason: reason.into(),
    }
}

/// Runs `run`, prints the error (one line) and maps it to the exit code.
pub fn finish(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let code = e.exit_code();
            // stderr may be closed too; nothing more to do then.
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(code)
        }
    }
}

/// Checks that the JSON has no `null` (a `NaN` becomes `null` in serde_json) and prints it.
/// A closed stdout (`| head`, `| true`) ends quietly with success; other write errors (a full
/// disk) are [`CliError::Output`].
pub fn emit(value: &serde_json::Value, compact: bool) -> Result<(), CliError> {
    if let Some(key) = find_null(value, "") {
        return Err(CliError::NonFinite { key });
    }
    let text = if compact {
        value.to_string()
    } else {
        serde_json::to_string_pretty(value).map_err(|e| CliError::Output(e.into()))?
    };
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Output(e)),
    }
}

/// The path of the first `null` in `value`, if any.
pub fn find_null(value: &serde_json::Value, path: &str) -> Option<String> {
    match value {
        serde_json::Value::Null => Some(if path.is_empty() {
            "(root)".into()
        } else {
            path.into()
        }),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| find_null(v, &format!("{path}[{i}]"))),
        serde_json::Value::Object(map) => map.iter().find_map(|(k, v)| {
            find_null(
                v,
                &if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                },
            )
        }),
        _ => None,
    }
}

/// A token that Ctrl-C sets; the engine stops before its next iteration.
pub fn ctrl_c_token() -> Result<CancelToken, CliError> {
    let token = CancelToken::new();
    let handle = token.clone();
    ctrlc::set_handler(move || handle.cancel())?;
    Ok(token)
}

/// Sets the number of rayon threads.
pub fn threads(n: Option<usize>) -> Result<(), CliError> {
    if let Some(t) = n {
        if t == 0 {
            return Err(usage("--threads", "must be >= 1"));
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()?;
    }
    Ok(())
}

/// A flag value refused by a clap value parser (clap names the flag).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Not a number.
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// Not a whole number `>= 1`.
    #[error("`{0}` is not a whole number >= 1")]
    NotACount(String),
    /// A count of 0.
    #[error("must be >= 1")]
    Zero,
    /// A whole number that does not fit (the largest that does).
    #[error("too large: at most {0}")]
    TooLarge(u64),
    /// A number outside its domain.
    #[error("must be {domain}, got {value}")]
    OutOfRange {
        /// The domain, e.g. `finite and > 0`.
        domain: &'static str,
        /// The value given.
        value: f64,
    },
    /// A range that is not `LO:HI` with finite `LO < HI`.
    #[error("{0}")]
    Range(&'static str),
    /// An accountant name the accountant does not know.
    #[error(transparent)]
    Accountant(#[from] dp_accountant::AccountantError),
    /// An engine error.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A batching name dp-core does not know.
    #[error(transparent)]
    Batching(#[from] dp_core::CoreError),
}

fn number(s: &str) -> Result<f64, ValueError> {
    s.trim()
        .parse()
        .map_err(|_| ValueError::NotANumber(excerpt(s)))
}

/// Parses a finite number `> 0` (clap value parser).
///
/// # Errors
/// [`ValueError::NotANumber`] or [`ValueError::OutOfRange`].
pub fn positive(s: &str) -> Result<f64, ValueError> {
    let v = number(s)?;
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(ValueError::OutOfRange {
            domain: "finite and > 0",
            value: v,
        })
    }
}

/// Parses a finite number `>= 0` (clap value parser).
///
/// # Errors
/// [`ValueError::NotANumber`] or [`ValueError::OutOfRange`].
pub fn non_negative(s: &str) -> Result<f64, ValueError> {
    let v = number(s)?;
    if v >= 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(ValueError::OutOfRange {
            domain: "finite and >= 0",
            value: v,
        })
    }
}

/// Parses a probability in `(0, 1)` (clap value parser).
///
/// # Errors
/// [`ValueError::NotANumber`] or [`ValueError::OutOfRange`].
pub fn open_unit(s: &str) -> Result<f64, ValueError> {
    let v = positive(s)?;
    if v < 1.0 {
        Ok(v)
    } else {
        Err(ValueError::OutOfRange {
            domain: "in (0, 1)",
            value: v,
        })
    }
}

/// Parses a whole number `>= 1` (clap value parser), saying "too large" for a number that does
/// not fit rather than "not an integer".
///
/// # Errors
/// [`ValueError::Zero`], [`ValueError::TooLarge`] or [`ValueError::NotACount`].
pub fn count(s: &str) -> Result<u64, ValueError> {
    let t = s.trim();
    match t.parse::<u64>() {
        Ok(0) => Err(ValueError::Zero),
        Ok(v) => Ok(v),
        Err(_) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
            Err(ValueError::TooLarge(u64::MAX))
        }
        Err(_) => match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= u64::MAX as f64 => {
                Ok(v as u64)
            }
            Ok(v) if v > u64::MAX as f64 => Err(ValueError::TooLarge(u64::MAX)),
            _ => Err(ValueError::NotACount(excerpt(t))),
        },
    }
}

/// Parses `--accountant` (clap value parser): `rdp`, `pld`, `moments`, `zcdp`, `advanced` or
/// `linear` ([`dp_accountant::AccountantKind`]).
///
/// # Errors
/// [`ValueError::Accountant`] for another name.
pub fn accountant(s: &str) -> Result<dp_accountant::AccountantKind, ValueError> {
    Ok(s.trim().parse::<dp_accountant::AccountantKind>()?)
}

/// Parses `--sampling` (clap value parser): `poisson` or `fixed` / `fixed_size`
/// ([`vips_models::engine::Batching`]; the size comes from `--batch-size`, see
/// [`with_batching`]).
///
/// # Errors
/// [`ValueError::Batching`] for another name; [`ValueError::Range`] for `one_record` (DP-SEP's;
/// here it is `fixed` with `--batch-size 1`).
pub fn sampling(s: &str) -> Result<vips_models::engine::Batching, ValueError> {
    match s.parse::<vips_models::engine::Batching>()? {
        vips_models::engine::Batching::OneRecord => Err(ValueError::Range(
            "one_record is DP-SEP's batching: use --sampling fixed --batch-size 1",
        )),
        b => Ok(b),
    }
}

/// Gives the engine's builder `--sampling` with the batch size `batch` (`--batch-size`): a
/// fixed-size batch of `batch` records (a whole number, checked by [`check_sampling`]) or a
/// Poisson batch of expected size `batch` (the default).
pub fn with_batching(
    builder: vips_models::engine::SviConfigBuilder,
    sampling: Option<vips_models::engine::Batching>,
    batch: f64,
) -> vips_models::engine::SviConfigBuilder {
    use vips_models::engine::Batching;
    match sampling {
        Some(Batching::FixedSize { .. }) => builder.batching(Batching::FixedSize {
            batch_size: batch as usize,
        }),
        Some(b @ Batching::OneRecord) => builder.batching(b),
        _ => builder.expected_batch_size(batch),
    }
}

/// Refuses `--sampling` where it has no effect: a non-private run whose batch is the whole
/// population (`batch >= population`) takes every record under either regime. A private
/// full-batch run keeps it (the regimes then differ in neighbouring relation and noise). A
/// fixed-size batch must be a whole number of records (`--batch-size`).
pub fn check_sampling(
    sampling: Option<vips_models::engine::Batching>,
    private: bool,
    batch: f64,
    population: f64,
) -> Result<(), CliError> {
    match sampling {
        Some(_) if !private && batch >= population => Err(usage(
            "--sampling",
            "has no effect in a non-private full-batch run (every record is taken under either \
             regime)",
        )),
        Some(vips_models::engine::Batching::FixedSize { .. }) if batch.fract() != 0.0 => {
            Err(usage(
                "--batch-size",
                format!("must be a whole number of records with --sampling fixed, got {batch}"),
            ))
        }
        _ => Ok(()),
    }
}

/// [`count`] as a `usize`.
///
/// # Errors
/// As [`count`]; [`ValueError::TooLarge`] for a number above `usize::MAX`.
pub fn count_usize(s: &str) -> Result<usize, ValueError> {
    let v = count(s)?;
    usize::try_from(v).map_err(|_| ValueError::TooLarge(usize::MAX as u64))
}

/// At most 80 characters of a bad value.
pub fn excerpt(s: &str) -> String {
    vips_models::limits::excerpt(s)
}
