//! Resource limits of the loaders, models and runs (issue 17): sizes are checked **before**
//! anything is allocated, files are read with a bounded reader, and iteration counts have a
//! documented sane bound. Every refusal is a [`SepError::TooLarge`] naming what was too large.
//!
//! | limit | value | applies to |
//! |---|---|---|
//! | [`MAX_FILE_BYTES`] | 256 MiB | `data.txt`, index files, CSV files |
//! | [`MAX_RANGES_FILE_BYTES`] | 16 MiB | ranges JSON files |
//! | [`MAX_LINE_BYTES`] | 1 MiB | one line of any text file |
//! | [`MAX_MODEL_BYTES`] | 2 GiB | estimated working memory of a model (all copies of its parameters) |
//! | [`MAX_DATA_BYTES`] | 2 GiB | estimated memory of generated or loaded records |
//! | [`MAX_STEPS`] | 10^8 | `epochs x N` steps of one run (the examples' `--allow-long-run` lifts it) |
//! | [`MIN_EPSILON`] | 10^-4 | smallest budget a private run accepts |
//!
//! The largest UCI regression folder (`protein-tertiary-structure`) has a 3.5 MB `data.txt`, so
//! the file limits leave two orders of magnitude of room.
//!
//! # Example
//! ```
//! use dp_sep::limits::{check_bytes, MAX_MODEL_BYTES};
//! assert!(check_bytes("--dim 100000", "the natural parameters", 80_000_000_000, MAX_MODEL_BYTES).is_err());
//! assert!(check_bytes("--dim 4", "the natural parameters", 1_000, MAX_MODEL_BYTES).is_ok());
//! ```

use std::io::{self, BufRead, Read};
use std::path::Path;

use crate::error::SepError;

/// Largest data file (`data.txt`, index files, CSV) a loader reads.
pub const MAX_FILE_BYTES: u64 = 256 << 20;
/// Largest ranges file.
pub const MAX_RANGES_FILE_BYTES: u64 = 16 << 20;
/// Longest line of a text file.
pub const MAX_LINE_BYTES: usize = 1 << 20;
/// Largest estimated working memory of a model's parameters (every copy the engine keeps).
pub const MAX_MODEL_BYTES: u64 = 2 << 30;
/// Largest estimated memory of the records of a run.
pub const MAX_DATA_BYTES: u64 = 2 << 30;
/// Largest number of steps (`epochs x N`) of one run without an explicit override.
pub const MAX_STEPS: u64 = 100_000_000;
/// Smallest epsilon a private run accepts: below it the calibrated noise is so large that the
/// result is the prior plus noise, and the calibration search degenerates.
pub const MIN_EPSILON: f64 = 1e-4;
/// Longest excerpt of bad input quoted in an error message (characters).
pub const MAX_EXCERPT_CHARS: usize = 40;

/// Copies of the natural-parameter vector the engine and a model keep at once (prior, factor,
/// cavity, tilted, intermediate factor, posterior, noise, refreshed factor, plus slack).
pub const PARAMETER_COPIES: u64 = 12;

/// Bytes as a short human-readable string (`"80.0 GB"`).
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Refuses `bytes > limit` with [`SepError::TooLarge`] naming `what` (a flag with its value, a
/// file, a header) and `purpose`.
///
/// # Errors
/// [`SepError::TooLarge`] if `bytes > limit`.
pub fn check_bytes(what: &str, purpose: &str, bytes: u128, limit: u64) -> Result<(), SepError> {
    if bytes > u128::from(limit) {
        Err(SepError::TooLarge {
            what: what.to_string(),
            detail: format!(
                "would need {} for {purpose} (limit {})",
                human_bytes(bytes),
                human_bytes(u128::from(limit))
            ),
        })
    } else {
        Ok(())
    }
}

/// Bytes of `count` values of 8 bytes, saturating (no overflow for absurd inputs).
pub fn f64_bytes(count: u128) -> u128 {
    count.saturating_mul(8)
}

/// At most [`MAX_EXCERPT_CHARS`] characters of `text`, with `...` when cut, quoted.
pub fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(MAX_EXCERPT_CHARS).collect();
    if text.chars().nth(MAX_EXCERPT_CHARS).is_some() {
        out.push_str("...");
    }
    format!("{out:?}")
}

/// Opens `path` for reading, refusing a file larger than `max_bytes` (by its metadata; the
/// returned reader also stops with an error past `max_bytes`, for files that grow or devices).
///
/// # Errors
/// [`SepError::Io`] if the file cannot be opened; [`SepError::TooLarge`] if it is too large.
pub fn open_bounded(path: &Path, max_bytes: u64) -> Result<BoundedReader, SepError> {
    let io_err = |source| SepError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if meta.is_dir() {
        return Err(io_err(io::Error::other("is a directory")));
    }
    check_bytes(
        &path.display().to_string(),
        "reading the file",
        u128::from(meta.len()),
        max_bytes,
    )?;
    Ok(BoundedReader {
        inner: io::BufReader::new(file),
        path: path.display().to_string(),
        max_bytes,
        read: 0,
    })
}

/// A buffered file reader that refuses to read past a byte limit and yields lines of bounded
/// length (see [`open_bounded`]).
#[derive(Debug)]
pub struct BoundedReader {
    inner: io::BufReader<std::fs::File>,
    path: String,
    max_bytes: u64,
    read: u64,
}

impl BoundedReader {
    fn too_large(&self) -> SepError {
        SepError::TooLarge {
            what: self.path.clone(),
            detail: format!(
                "is larger than the limit of {}",
                human_bytes(u128::from(self.max_bytes))
            ),
        }
    }

    /// The next line (without its `\n` / `\r\n`), `None` at the end. `line` is 1-based and only
    /// used in the error message.
    ///
    /// # Errors
    /// [`SepError::TooLarge`] for a line longer than [`MAX_LINE_BYTES`] or a file past its
    /// limit; [`SepError::Corrupt`] for a line that is not UTF-8; [`SepError::Io`].
    pub fn next_line(&mut self, line: usize) -> Result<Option<String>, SepError> {
        let mut buf = Vec::new();
        let n = (&mut self.inner)
            .take(MAX_LINE_BYTES as u64 + 2)
            .read_until(b'\n', &mut buf)
            .map_err(|source| SepError::Io {
                path: self.path.clone(),
                source,
            })?;
        if n == 0 {
            return Ok(None);
        }
        self.read += n as u64;
        if self.read > self.max_bytes {
            return Err(self.too_large());
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
        }
        if buf.len() > MAX_LINE_BYTES {
            return Err(SepError::TooLarge {
                what: format!("{} line {line}", self.path),
                detail: format!(
                    "is longer than the limit of {} per line",
                    human_bytes(MAX_LINE_BYTES as u128)
                ),
            });
        }
        String::from_utf8(buf)
            .map(Some)
            .map_err(|_| SepError::Corrupt {
                path: self.path.clone(),
                reason: format!("line {line}: not UTF-8 text"),
            })
    }

    /// The rest of the file as text (bounded by the reader's limit).
    ///
    /// # Errors
    /// As [`BoundedReader::next_line`], without the line limit.
    pub fn read_all(mut self) -> Result<String, SepError> {
        let mut buf = Vec::new();
        (&mut self.inner)
            .take(self.max_bytes.saturating_sub(self.read) + 1)
            .read_to_end(&mut buf)
            .map_err(|source| SepError::Io {
                path: self.path.clone(),
                source,
            })?;
        if buf.len() as u64 + self.read > self.max_bytes {
            return Err(self.too_large());
        }
        String::from_utf8(buf).map_err(|_| SepError::Corrupt {
            path: self.path.clone(),
            reason: "not UTF-8 text".into(),
        })
    }
}

/// Refuses `epochs x population` above [`MAX_STEPS`] (unless `allow_long_run`), and an
/// overflowing product always.
///
/// # Errors
/// [`SepError::TooLarge`] naming `flag`.
pub fn check_steps(
    flag: &str,
    epochs: usize,
    population: usize,
    allow_long_run: bool,
) -> Result<u64, SepError> {
    let steps = (epochs as u128).saturating_mul(population as u128);
    if steps > u128::from(u64::MAX) || (!allow_long_run && steps > u128::from(MAX_STEPS)) {
        return Err(SepError::TooLarge {
            what: format!("{flag} {epochs}"),
            detail: format!(
                "x N = {population} is {steps} steps, above the limit of {MAX_STEPS} \
                 (pass --allow-long-run to run it anyway)"
            ),
        });
    }
    Ok(steps as u64)
}
