//! A CSV loader for the user's own regression data.

use std::path::Path;

use super::Dataset;
use crate::error::SepError;
use crate::limits;

/// Loads a numeric CSV file: every column except `target_column` (0-based) is a feature.
/// `has_header` skips the first line. Delimiter is `,`.
///
/// # Errors
/// [`SepError::Io`] if the file cannot be opened, [`SepError::TooLarge`] for a file or line
/// above the limits of [`crate::limits`], [`SepError::Corrupt`] for a ragged row or a
/// non-numeric field (naming the line and quoting at most a short excerpt), [`SepError::InvalidParameter`] if `target_column` is out of range,
/// [`SepError::Empty`] for no rows, [`SepError::NonFinite`] for NaN / infinite values.
///
/// # Example
/// ```
/// let path = std::env::temp_dir().join("dp_sep_doctest.csv");
/// std::fs::write(&path, "a,b,y\n1,2,3\n4,5,6\n").unwrap();
/// let data = dp_sep::data::csv_loader::load_csv(&path, 2, true)?;
/// assert_eq!((data.len(), data.dim()), (2, 2));
/// assert_eq!(data.target(1), 6.0);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn load_csv(
    path: impl AsRef<Path>,
    target_column: usize,
    has_header: bool,
) -> Result<Dataset, SepError> {
    let path = path.as_ref();
    let corrupt = |reason: String| SepError::Corrupt {
        path: path.display().to_string(),
        reason,
    };
    let text = limits::open_bounded(path, limits::MAX_FILE_BYTES)?.read_all()?;
    if let Some((i, _)) = text
        .split('\n')
        .enumerate()
        .find(|(_, l)| l.len() > limits::MAX_LINE_BYTES)
    {
        return Err(SepError::TooLarge {
            what: format!("{} line {}", path.display(), i + 1),
            detail: format!(
                "is longer than the limit of {} per line",
                limits::human_bytes(limits::MAX_LINE_BYTES as u128)
            ),
        });
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(has_header)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut cols = None;
    for rec in reader.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            corrupt(format!("line {line}: malformed CSV record"))
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        let c = rec.len();
        if *cols.get_or_insert(c) != c {
            return Err(corrupt(format!(
                "line {line} has {c} fields, the first record has {}",
                cols.unwrap_or(0)
            )));
        }
        if target_column >= c {
            return Err(SepError::InvalidParameter {
                name: "target_column",
                value: target_column as f64,
                reason: "must be < number of columns",
            });
        }
        if c < 2 {
            return Err(corrupt(format!(
                "line {line}: need at least one feature and a target"
            )));
        }
        for (j, field) in rec.iter().enumerate() {
            let v: f64 = field.parse().map_err(|_| {
                corrupt(format!(
                    "line {line}, column {j}: not a number: {}",
                    limits::excerpt(field)
                ))
            })?;
            if !v.is_finite() {
                return Err(SepError::NonFinite {
                    context: format!("{} line {line}", path.display()),
                    row: y.len(),
                    column: j,
                });
            }
            if j == target_column {
                y.push(v);
            } else {
                x.push(v);
            }
        }
    }
    let d = cols.ok_or(SepError::Empty("CSV file has no rows"))? - 1;
    Dataset::new(x, y, d)
}
