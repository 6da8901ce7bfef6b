//! The UCI regression folders with the standard PBP splits (`../shared/data/uci/<name>/data/`):
//! a whitespace-separated numeric `data.txt`, 0-based `index_features.txt` / `index_target.txt`,
//! `n_splits.txt`, `n_hidden.txt`, `n_epochs.txt` and 0-based `index_train_<i>.txt` /
//! `index_test_<i>.txt` (Hernández-Lobato & Adams 2015; Gal & Ghahramani 2016).

use std::fs;
use std::path::{Path, PathBuf};

use super::{Dataset, PublicRanges};
use crate::error::SepError;

/// One UCI regression folder, loaded in full, with access to its standard splits.
///
/// # Example
/// ```no_run
/// use dp_sep::data::uci::UciDataset;
/// let wine = UciDataset::load("../shared/data/uci/wine-quality-red")?;
/// let (train, test) = wine.split(0)?;
/// assert_eq!(train.len() + test.len(), 1599);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Debug)]
pub struct UciDataset {
    dir: PathBuf,
    name: String,
    all: Dataset,
    n_columns: usize,
    features: Vec<usize>,
    target: usize,
    n_splits: usize,
    n_hidden: usize,
    n_epochs: usize,
}

fn read(path: &Path) -> Result<String, SepError> {
    fs::read_to_string(path).map_err(|source| SepError::Io {
        path: path.display().to_string(),
        source,
    })
}

fn corrupt(path: &Path, reason: impl Into<String>) -> SepError {
    SepError::Corrupt {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

fn read_usizes(path: &Path) -> Result<Vec<usize>, SepError> {
    let text = read(path)?;
    text.split_whitespace()
        .map(|t| {
            // Some index files are written as floats ("3.0"); accept integral floats only.
            t.parse::<usize>().or_else(|_| match t.parse::<f64>() {
                Ok(v) if v >= 0.0 && v.fract() == 0.0 && v < 1e15 => Ok(v as usize),
                _ => Err(corrupt(path, format!("not a non-negative integer: {t:?}"))),
            })
        })
        .collect()
}

fn read_one(path: &Path) -> Result<usize, SepError> {
    let v = read_usizes(path)?;
    match v.as_slice() {
        [x] => Ok(*x),
        _ => Err(corrupt(
            path,
            format!("expected one integer, found {}", v.len()),
        )),
    }
}

/// Parses a whitespace-separated numeric matrix (blank lines skipped; constant column count).
fn read_matrix(path: &Path) -> Result<(Vec<f64>, usize), SepError> {
    let text = read(path)?;
    let mut values = Vec::new();
    let mut cols = None;
    for (line_no, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let before = values.len();
        for tok in line.split_whitespace() {
            let v: f64 = tok
                .parse()
                .map_err(|_| corrupt(path, format!("row {line_no}: not a number: {tok:?}")))?;
            values.push(v);
        }
        let c = values.len() - before;
        match cols {
            None => cols = Some(c),
            Some(k) if k != c => {
                return Err(corrupt(
                    path,
                    format!("row {line_no} has {c} columns, expected {k}"),
                ));
            }
            _ => {}
        }
    }
    let cols = cols.ok_or(SepError::EmptyData("data.txt has no rows"))?;
    Ok((values, cols))
}

impl UciDataset {
    /// Loads `dir` (either `uci/<name>` or `uci/<name>/data`).
    ///
    /// # Errors
    /// [`SepError::Io`] for a missing file, [`SepError::Corrupt`] for unparsable content or
    /// out-of-range column indices, [`SepError::NonFinite`] for NaN / infinite values.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, SepError> {
        let mut dir = dir.as_ref().to_path_buf();
        if !dir.join("data.txt").exists() && dir.join("data").join("data.txt").exists() {
            dir = dir.join("data");
        }
        let name = dir
            .components()
            .rev()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .find(|c| c != "data")
            .unwrap_or_default();
        let data_path = dir.join("data.txt");
        let (values, cols) = read_matrix(&data_path)?;
        let features = read_usizes(&dir.join("index_features.txt"))?;
        let target = read_one(&dir.join("index_target.txt"))?;
        if features.is_empty() {
            return Err(SepError::EmptyData("index_features.txt lists no features"));
        }
        if let Some(&bad) = features.iter().chain([&target]).find(|&&c| c >= cols) {
            return Err(corrupt(
                &data_path,
                format!("column index {bad} out of range ({cols} columns)"),
            ));
        }
        let rows = values.len() / cols;
        let d = features.len();
        let mut x = Vec::with_capacity(rows * d);
        let mut y = Vec::with_capacity(rows);
        for r in 0..rows {
            let row = &values[r * cols..(r + 1) * cols];
            x.extend(features.iter().map(|&c| row[c]));
            y.push(row[target]);
        }
        let all = Dataset::new(x, y, d).map_err(|e| match e {
            SepError::NonFinite { row, column, .. } => SepError::NonFinite {
                context: data_path.display().to_string(),
                row,
                column,
            },
            other => other,
        })?;
        let n_splits = read_one(&dir.join("n_splits.txt"))?;
        let n_hidden = read_one(&dir.join("n_hidden.txt")).unwrap_or(50);
        let n_epochs = read_one(&dir.join("n_epochs.txt")).unwrap_or(40);
        Ok(Self {
            dir,
            name,
            all,
            n_columns: cols,
            features,
            target,
            n_splits,
            n_hidden,
            n_epochs,
        })
    }

    /// Folder name (e.g. `wine-quality-red`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// All rows.
    pub fn all(&self) -> &Dataset {
        &self.all
    }

    /// Number of columns of `data.txt`.
    pub fn n_columns(&self) -> usize {
        self.n_columns
    }

    /// 0-based `data.txt` columns of the features (`index_features.txt`).
    pub fn feature_columns(&self) -> &[usize] {
        &self.features
    }

    /// 0-based `data.txt` column of the target (`index_target.txt`).
    pub fn target_column(&self) -> usize {
        self.target
    }

    /// The declared public ranges of this folder's features and target from a ranges file whose
    /// `columns` names the columns of `data.txt` (see [`super::ranges`]).
    ///
    /// # Errors
    /// As [`PublicRanges::from_file_by_index`].
    pub fn public_ranges(&self, path: impl AsRef<Path>) -> Result<PublicRanges, SepError> {
        PublicRanges::from_file_by_index(path, self.n_columns, &self.features, self.target)
    }

    /// Number of standard splits (20, or 5 for protein).
    pub fn n_splits(&self) -> usize {
        self.n_splits
    }

    /// Hidden units of the standard protocol (50, or 100 for protein).
    pub fn n_hidden(&self) -> usize {
        self.n_hidden
    }

    /// Epochs of the standard protocol (40, or 20 for protein in the PBP files).
    pub fn n_epochs(&self) -> usize {
        self.n_epochs
    }

    /// Train and test rows of standard split `i` (0-based), in file order.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for `i >= n_splits()`; I/O or corrupt-file errors for the
    /// index files, including indices out of range or train and test overlapping.
    pub fn split(&self, i: usize) -> Result<(Dataset, Dataset), SepError> {
        if i >= self.n_splits {
            return Err(SepError::InvalidParameter {
                name: "split",
                value: i as f64,
                reason: "must be < n_splits",
            });
        }
        let train_path = self.dir.join(format!("index_train_{i}.txt"));
        let train_idx = read_usizes(&train_path)?;
        let test_idx = read_usizes(&self.dir.join(format!("index_test_{i}.txt")))?;
        let mut seen = vec![false; self.all.len()];
        for &r in &train_idx {
            if r >= seen.len() {
                return Err(corrupt(&train_path, format!("row {r} out of range")));
            }
            seen[r] = true;
        }
        if test_idx.iter().any(|&r| r < seen.len() && seen[r]) {
            return Err(corrupt(&train_path, "train and test splits overlap"));
        }
        Ok((self.all.select(&train_idx)?, self.all.select(&test_idx)?))
    }
}
