//! A split folder: one regression data set with its standard train/test splits, in the layout
//! of the UCI regression benchmark of PBP (`../shared/data/uci/<name>/data/`): a
//! whitespace-separated numeric `data.txt`, 0-based `index_features.txt` / `index_target.txt`,
//! `n_splits.txt`, `n_hidden.txt`, `n_epochs.txt` and 0-based `index_train_<i>.txt` /
//! `index_test_<i>.txt` (Hernández-Lobato & Adams 2015; Gal & Ghahramani 2016).

use std::path::{Path, PathBuf};

use super::{Dataset, PublicRanges};
use crate::error::SepError;
use crate::limits;

/// One split folder (see the [module documentation](self)), loaded in full, with access to its
/// standard splits.
///
/// # Example
/// ```no_run
/// use dp_sep::data::split_folder::SplitFolder;
/// let wine = SplitFolder::load("../shared/data/uci/wine-quality-red")?;
/// let (train, test) = wine.split(0)?;
/// assert_eq!(train.len() + test.len(), 1599);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SplitFolder {
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

fn corrupt(path: &Path, reason: impl Into<String>) -> SepError {
    SepError::Corrupt {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Non-blank lines of a bounded text file with their 1-based line numbers.
fn read_lines(path: &Path) -> Result<Vec<(usize, String)>, SepError> {
    let mut reader = limits::open_bounded(path, limits::MAX_FILE_BYTES)?;
    let mut out = Vec::new();
    let mut line_no = 0;
    while let Some(line) = reader.next_line(line_no + 1)? {
        line_no += 1;
        if !line.trim().is_empty() {
            out.push((line_no, line));
        }
    }
    Ok(out)
}

/// Parses one non-negative integer token (integral floats such as `3.0` are accepted: some index
/// files are written that way).
fn parse_usize(path: &Path, line: usize, t: &str) -> Result<usize, SepError> {
    if let Ok(v) = t.parse::<usize>() {
        return Ok(v);
    }
    match t.parse::<f64>() {
        Ok(v) if v >= 0.0 && v.fract() == 0.0 && v < 9e15 => Ok(v as usize),
        Ok(v) if v.is_finite() && v.fract() == 0.0 && v > 0.0 => Err(corrupt(
            path,
            format!("line {line}: integer {} is too large", limits::excerpt(t)),
        )),
        _ => Err(corrupt(
            path,
            format!(
                "line {line}: not a non-negative integer: {}",
                limits::excerpt(t)
            ),
        )),
    }
}

/// Every integer of an index file with the line it is on.
fn read_usizes(path: &Path) -> Result<Vec<(usize, usize)>, SepError> {
    let mut out = Vec::new();
    for (line, text) in read_lines(path)? {
        for t in text.split_whitespace() {
            out.push((parse_usize(path, line, t)?, line));
        }
    }
    Ok(out)
}

fn read_one(path: &Path) -> Result<usize, SepError> {
    let v = read_usizes(path)?;
    match v.as_slice() {
        [(x, _)] => Ok(*x),
        _ => Err(corrupt(
            path,
            format!("expected exactly one integer, found {}", v.len()),
        )),
    }
}

/// Parses a whitespace-separated numeric matrix (blank lines skipped; constant column count).
/// Returns the values, the column count and the 1-based file line of each row.
fn read_matrix(path: &Path) -> Result<(Vec<f64>, usize, Vec<usize>), SepError> {
    let mut reader = limits::open_bounded(path, limits::MAX_FILE_BYTES)?;
    let mut values = Vec::new();
    let mut lines = Vec::new();
    let mut cols = None;
    let mut line_no = 0;
    while let Some(line) = reader.next_line(line_no + 1)? {
        line_no += 1;
        if line.trim().is_empty() {
            continue;
        }
        let before = values.len();
        for (j, tok) in line.split_whitespace().enumerate() {
            let v: f64 = tok.parse().map_err(|_| {
                corrupt(
                    path,
                    format!(
                        "line {line_no}, column {j}: not a number: {}",
                        limits::excerpt(tok)
                    ),
                )
            })?;
            if !v.is_finite() {
                return Err(SepError::NonFinite {
                    context: format!("{} line {line_no}", path.display()),
                    row: lines.len(),
                    column: j,
                });
            }
            values.push(v);
        }
        let c = values.len() - before;
        match cols {
            None => cols = Some(c),
            Some(k) if k != c => {
                return Err(corrupt(
                    path,
                    format!("line {line_no} has {c} columns, the first row has {k}"),
                ));
            }
            _ => {}
        }
        lines.push(line_no);
    }
    let cols = cols.ok_or(SepError::Empty("data.txt has no rows"))?;
    Ok((values, cols, lines))
}

impl SplitFolder {
    /// Loads `dir`: the folder `<name>` or its `data` subfolder (e.g. `uci/<name>` or
    /// `uci/<name>/data`).
    ///
    /// # Errors
    /// [`SepError::Io`] for a missing file, [`SepError::TooLarge`] for a file or line above the
    /// limits of [`crate::limits`], [`SepError::Corrupt`] for unparsable content, a column
    /// listed twice or out of range (the message names the file and line),
    /// [`SepError::NonFinite`] for NaN / infinite values (naming the file and line).
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
        let (values, cols, _lines) = read_matrix(&data_path)?;
        let features_path = dir.join("index_features.txt");
        let features = read_usizes(&features_path)?;
        if let Some(&(dup, line)) = features
            .iter()
            .enumerate()
            .find(|(i, (c, _))| features[..*i].iter().any(|(p, _)| p == c))
            .map(|(_, f)| f)
        {
            return Err(corrupt(
                &features_path,
                format!("line {line}: column {dup} is listed twice"),
            ));
        }
        let features: Vec<usize> = features.into_iter().map(|(c, _)| c).collect();
        let target = read_one(&dir.join("index_target.txt"))?;
        if features.is_empty() {
            return Err(SepError::Empty("index_features.txt lists no features"));
        }
        if let Some(&bad) = features.iter().chain([&target]).find(|&&c| c >= cols) {
            return Err(corrupt(
                &data_path,
                format!(
                    "column index {bad} (index_features.txt / index_target.txt) out of range ({cols} columns)"
                ),
            ));
        }
        if features.contains(&target) {
            return Err(corrupt(
                &features_path,
                format!("the target column {target} is also listed as a feature"),
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
        let all = Dataset::new(x, y, d)?;
        let n_splits = read_one(&dir.join("n_splits.txt"))?;
        // Optional protocol files: absent means the PBP defaults; present but corrupt is an error.
        let optional = |file: &str, default: usize| -> Result<usize, SepError> {
            let path = dir.join(file);
            if path.exists() {
                read_one(&path)
            } else {
                Ok(default)
            }
        };
        let n_hidden = optional("n_hidden.txt", 50)?;
        let n_epochs = optional("n_epochs.txt", 40)?;
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
    /// [`SepError::InvalidParameter`] for `i >= n_splits()`; I/O, size-limit or corrupt-file
    /// errors for the index files, naming the file and line: an index out of range, a row listed
    /// twice, train and test overlapping, an empty split, or a constant training target.
    pub fn split(&self, i: usize) -> Result<(Dataset, Dataset), SepError> {
        if i >= self.n_splits {
            return Err(SepError::InvalidParameter {
                name: "split",
                value: i as f64,
                reason: "must be < n_splits",
            });
        }
        let train_path = self.dir.join(format!("index_train_{i}.txt"));
        let test_path = self.dir.join(format!("index_test_{i}.txt"));
        let n = self.all.len();
        // 0 = unseen, 1 = train, 2 = test.
        let mut seen = vec![0u8; n];
        let mut train_idx = Vec::new();
        let mut test_idx = Vec::new();
        for (path, tag, out) in [
            (&train_path, 1u8, &mut train_idx),
            (&test_path, 2u8, &mut test_idx),
        ] {
            for (r, line) in read_usizes(path)? {
                if r >= n {
                    return Err(corrupt(
                        path,
                        format!("line {line}: row {r} out of range (data.txt has {n} rows)"),
                    ));
                }
                match seen[r] {
                    0 => seen[r] = tag,
                    t if t == tag => {
                        return Err(corrupt(
                            path,
                            format!(
                                "line {line}: row {r} is listed twice (each record at most once)"
                            ),
                        ));
                    }
                    _ => {
                        return Err(corrupt(
                            path,
                            format!(
                                "line {line}: row {r} is in both the training and the test split"
                            ),
                        ));
                    }
                }
                out.push(r);
            }
            if out.is_empty() {
                return Err(corrupt(path, "lists no rows"));
            }
        }
        let first = self.all.target(train_idx[0]);
        if train_idx.iter().all(|&r| self.all.target(r) == first) {
            return Err(corrupt(
                &train_path,
                format!(
                    "every training target (column {} of data.txt) has the same value: a \
                     regression needs a non-constant target",
                    self.target
                ),
            ));
        }
        Ok((self.all.select(&train_idx)?, self.all.select(&test_idx)?))
    }
}
