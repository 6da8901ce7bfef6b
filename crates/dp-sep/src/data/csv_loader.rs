//! A CSV loader for the user's own regression data.

use std::path::Path;

use super::Dataset;
use crate::error::SepError;

/// Loads a numeric CSV file: every column except `target_column` (0-based) is a feature.
/// `has_header` skips the first line. Delimiter is `,`.
///
/// # Errors
/// [`SepError::Io`] if the file cannot be opened, [`SepError::Corrupt`] for a ragged row or a
/// non-numeric field, [`SepError::InvalidParameter`] if `target_column` is out of range,
/// [`SepError::EmptyData`] for no rows, [`SepError::NonFinite`] for NaN / infinite values.
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
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(has_header)
        .trim(csv::Trim::All)
        .from_path(path)
        .map_err(|e| match e.kind() {
            csv::ErrorKind::Io(_) => SepError::Io {
                path: path.display().to_string(),
                source: std::io::Error::other(e.to_string()),
            },
            _ => corrupt(e.to_string()),
        })?;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut cols = None;
    for (r, rec) in reader.records().enumerate() {
        let rec = rec.map_err(|e| corrupt(format!("row {r}: {e}")))?;
        let c = rec.len();
        if *cols.get_or_insert(c) != c {
            return Err(corrupt(format!("row {r} has {c} fields")));
        }
        if target_column >= c {
            return Err(SepError::InvalidParameter {
                name: "target_column",
                value: target_column as f64,
                reason: "must be < number of columns",
            });
        }
        if c < 2 {
            return Err(corrupt("need at least one feature and a target".into()));
        }
        for (j, field) in rec.iter().enumerate() {
            let v: f64 = field
                .parse()
                .map_err(|_| corrupt(format!("row {r}, column {j}: not a number: {field:?}")))?;
            if j == target_column {
                y.push(v);
            } else {
                x.push(v);
            }
        }
    }
    let d = cols.ok_or(SepError::EmptyData("CSV file has no rows"))? - 1;
    Dataset::new(x, y, d)
}
