//! Resource limits stated up front: the sizes a loader or a model may allocate, the longest line
//! and the largest (decompressed) input a loader reads, and the most iterations a run may plan
//! without an explicit override. Every check happens **before** the allocation or the loop, and a
//! refusal is a typed [`LimitError`] naming what implied the size (a flag, a header field) and the
//! bytes it would need.
//!
//! | limit | value | where |
//! |---|---|---|
//! | [`MAX_LINE_BYTES`] | 1 MiB | one line of a UCI docword/vocab, CSV, LIBSVM or ranges file |
//! | [`MAX_INPUT_BYTES`] | 2 GiB | a file read whole, a decompressed gzip stream, an IDX body |
//! | [`memory_limit`] | total RAM (`/proc/meminfo`), else 16 GiB | estimated model state |
//! | [`MAX_ITERATIONS`] | 10^7 | iterations a run plans (`SviConfigBuilder::allow_long_run`) |

use std::io::{self, BufRead, Read};

use thiserror::Error;

/// Longest accepted line of a text input (1 MiB).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Largest accepted input in bytes after decompression (2 GiB): whole-file reads, gzip streams,
/// IDX bodies.
pub const MAX_INPUT_BYTES: u64 = 2 << 30;

/// Most iterations a run may plan unless the caller overrides it explicitly
/// (`SviConfigBuilder::allow_long_run`, the examples' `--allow-long-run`).
pub const MAX_ITERATIONS: u64 = 10_000_000;

/// Used as the memory limit when the machine's RAM cannot be read.
const FALLBACK_MEMORY: u64 = 16 << 30;

/// A size or count over a documented limit.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum LimitError {
    /// The state implied by flags or a header would not fit in memory.
    #[error("{what}: {formula} would need {} (limit {}, the machine's memory)", human_bytes(*.bytes), human_bytes(*.limit as f64))]
    Memory {
        /// What implied the size (a flag or a header field).
        what: String,
        /// The size, e.g. `K x V = 10^13 entries`.
        formula: String,
        /// Estimated bytes.
        bytes: f64,
        /// The limit in bytes.
        limit: u64,
    },
    /// A line longer than [`MAX_LINE_BYTES`].
    #[error("line {line} is longer than {limit} bytes (limit MAX_LINE_BYTES)")]
    LineTooLong {
        /// 1-based line number.
        line: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// An input larger than [`MAX_INPUT_BYTES`] (after decompression).
    #[error("{what} is larger than {} (limit MAX_INPUT_BYTES)", human_bytes(*.limit as f64))]
    Input {
        /// What was read (a file, a decompressed stream, an IDX body).
        what: String,
        /// The limit in bytes.
        limit: u64,
    },
}

/// The memory an estimated model state may use: the machine's total RAM from `/proc/meminfo`,
/// or 16 GiB where that cannot be read.
///
/// # Example
/// ```
/// assert!(vips_models::limits::memory_limit() > 0);
/// ```
pub fn memory_limit() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(FALLBACK_MEMORY, |kb| kb.saturating_mul(1024))
}

/// Refuses an estimated allocation of `bytes` above [`memory_limit`], naming `what` implied it
/// and the `formula`.
///
/// # Errors
/// [`LimitError::Memory`] when `bytes` (computed in `f64`, so it cannot overflow) exceeds the
/// limit or is not finite.
///
/// # Example
/// ```
/// use vips_models::limits::check_memory;
/// let k = 1e8_f64; let v = 1e5_f64;
/// let e = check_memory("--topics", format!("K x V = {:.0e} entries", k * v), k * v * 8.0).unwrap_err();
/// assert!(e.to_string().contains("--topics"));
/// assert!(check_memory("--topics", "K x V = 10 entries", 80.0).is_ok());
/// ```
pub fn check_memory(
    what: impl Into<String>,
    formula: impl Into<String>,
    bytes: f64,
) -> Result<(), LimitError> {
    let limit = memory_limit();
    if bytes.is_finite() && bytes <= limit as f64 {
        Ok(())
    } else {
        Err(LimitError::Memory {
            what: what.into(),
            formula: formula.into(),
            bytes,
            limit,
        })
    }
}

/// `bytes` in decimal units (`"80 TB"`).
///
/// # Example
/// ```
/// assert_eq!(vips_models::limits::human_bytes(8e13), "80 TB");
/// assert_eq!(vips_models::limits::human_bytes(512.0), "512 B");
/// ```
pub fn human_bytes(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "more than any machine has".into();
    }
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut b = bytes;
    let mut i = 0;
    while b >= 1000.0 && i + 1 < units.len() {
        b /= 1000.0;
        i += 1;
    }
    if i + 1 == units.len() && b >= 1000.0 {
        return format!("{bytes:.1e} B");
    }
    format!("{b:.0} {}", units[i])
}

/// A count as a power of ten when large (`10^13`), else plainly.
pub(crate) fn count(n: f64) -> String {
    if n >= 1e6 {
        format!("{:.1e}", n).replace("e", " x 10^")
    } else {
        format!("{n:.0}")
    }
}

/// At most 80 characters of untrusted input, for error messages (`...` marks the cut).
///
/// # Example
/// ```
/// let long = "x".repeat(1000);
/// assert!(vips_models::limits::excerpt(&long).chars().count() <= 83);
/// assert_eq!(vips_models::limits::excerpt("12a"), "12a");
/// ```
pub fn excerpt(s: &str) -> String {
    const MAX: usize = 80;
    let mut out: String = s
        .chars()
        .take(MAX)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if s.chars().nth(MAX).is_some() {
        out.push_str("...");
    }
    out
}

/// A reader that fails with [`io::ErrorKind::InvalidData`] once more than `limit` bytes were
/// read (a bound on decompressed sizes: a gzip bomb stops at the limit).
#[derive(Debug)]
pub struct BoundedReader<R> {
    inner: R,
    remaining: u64,
    limit: u64,
}

impl<R: Read> BoundedReader<R> {
    /// Wraps `inner`, allowing at most `limit` bytes.
    pub fn new(inner: R, limit: u64) -> Self {
        Self {
            inner,
            remaining: limit,
            limit,
        }
    }
}

/// The message of the I/O error a [`BoundedReader`] returns at its limit.
pub(crate) fn over_limit_message(limit: u64) -> String {
    format!(
        "input larger than {} after decompression (limit MAX_INPUT_BYTES)",
        human_bytes(limit as f64)
    )
}

impl<R: Read> Read for BoundedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.remaining == 0 {
            // Anything left is over the limit.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    over_limit_message(self.limit),
                )),
            };
        }
        let max = buf
            .len()
            .min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        self.remaining -= n as u64;
        Ok(n)
    }
}

/// Reads one line (without its `\n` / `\r\n`) into `buf`, at most `max` bytes.
///
/// Returns `Ok(false)` at the end of input.
///
/// # Errors
/// The reader's I/O errors; [`LimitError::LineTooLong`] (as [`ReadLineError::Limit`]) for a
/// longer line (nothing beyond `max + 1` bytes is buffered); invalid UTF-8 as
/// [`io::ErrorKind::InvalidData`].
pub(crate) fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut String,
    max: usize,
    line: usize,
) -> Result<bool, ReadLineError> {
    buf.clear();
    let mut bytes = Vec::new();
    let n = (&mut *reader)
        .take(max as u64 + 2)
        .read_until(b'\n', &mut bytes)
        .map_err(ReadLineError::Io)?;
    if n == 0 {
        return Ok(false);
    }
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
    }
    if bytes.len() > max {
        return Err(ReadLineError::Limit(LimitError::LineTooLong {
            line,
            limit: max,
        }));
    }
    *buf = String::from_utf8(bytes).map_err(|_| {
        ReadLineError::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("line {line} is not valid UTF-8"),
        ))
    })?;
    Ok(true)
}

/// Why [`read_line_bounded`] failed.
#[derive(Debug)]
pub(crate) enum ReadLineError {
    Io(io::Error),
    Limit(LimitError),
}

/// Checks every line of `text` against [`MAX_LINE_BYTES`].
pub(crate) fn check_line_lengths(text: &str) -> Result<(), LimitError> {
    match text.split('\n').position(|l| l.len() > MAX_LINE_BYTES + 1) {
        Some(i) => Err(LimitError::LineTooLong {
            line: i + 1,
            limit: MAX_LINE_BYTES,
        }),
        None => Ok(()),
    }
}

/// Reads a whole text file, refusing one larger than [`MAX_INPUT_BYTES`] before reading it.
pub(crate) fn read_text_file(path: &std::path::Path) -> Result<String, ReadFileError> {
    let file = std::fs::File::open(path).map_err(ReadFileError::Io)?;
    let mut text = String::new();
    BoundedReader::new(file, MAX_INPUT_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| {
            if e.kind() == io::ErrorKind::InvalidData && e.to_string().contains("MAX_INPUT_BYTES") {
                ReadFileError::Limit(LimitError::Input {
                    what: format!("{}", path.display()),
                    limit: MAX_INPUT_BYTES,
                })
            } else {
                ReadFileError::Io(e)
            }
        })?;
    check_line_lengths(&text).map_err(ReadFileError::Limit)?;
    Ok(text)
}

/// Why [`read_text_file`] failed.
#[derive(Debug)]
pub(crate) enum ReadFileError {
    Io(io::Error),
    Limit(LimitError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_reader_stops_at_the_limit() {
        let data = [b'a'; 100];
        let mut out = Vec::new();
        let e = BoundedReader::new(&data[..], 50)
            .read_to_end(&mut out)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let mut out = Vec::new();
        BoundedReader::new(&data[..], 100)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out.len(), 100);
    }

    #[test]
    fn long_lines_are_refused_without_buffering_them() {
        let text = format!("short\n{}\n", "y".repeat(100));
        let mut r = io::BufReader::new(text.as_bytes());
        let mut buf = String::new();
        assert!(read_line_bounded(&mut r, &mut buf, 10, 1).unwrap());
        assert_eq!(buf, "short");
        assert!(matches!(
            read_line_bounded(&mut r, &mut buf, 10, 2),
            Err(ReadLineError::Limit(LimitError::LineTooLong {
                line: 2,
                ..
            }))
        ));
    }

    #[test]
    fn sizes_read_as_decimal_units() {
        assert_eq!(human_bytes(8e13), "80 TB");
        assert_eq!(count(1e13), "1.0 x 10^13");
        assert!(check_memory("x", "y", f64::INFINITY).is_err());
    }
}
