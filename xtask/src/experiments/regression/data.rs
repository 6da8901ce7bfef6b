//! The inputs xtask reads itself: a UCI split (for the mean predictor) and the committed
//! diffprivlib results (so that neither tests nor xtask need Python).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

/// The folder holding `data.txt` and the index files: `dir/data` when it exists, else `dir`.
fn files(dir: &Path) -> PathBuf {
    let nested = dir.join("data");
    if nested.join("data.txt").exists() {
        nested
    } else {
        dir.to_path_buf()
    }
}

fn read_indices(path: &Path) -> anyhow::Result<Vec<usize>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}", path.display()))?;
    text.split_whitespace()
        .map(|t| {
            // Some UCI index files write integers as floats ("3.0").
            let v: f64 = t
                .parse()
                .with_context(|| format!("{}: `{t}` is not an index", path.display()))?;
            anyhow::ensure!(
                v >= 0.0 && v.fract() == 0.0 && v < 1e12,
                "{}: `{t}` is not an index",
                path.display()
            );
            Ok(v as usize)
        })
        .collect()
}

/// Number of standard splits of a UCI folder (`n_splits.txt`).
pub(crate) fn n_splits(dir: &Path) -> anyhow::Result<usize> {
    let path = files(dir).join("n_splits.txt");
    let v = read_indices(&path)?;
    v.first()
        .copied()
        .with_context(|| format!("{} is empty", path.display()))
}

/// Training rows of split `split` (the length of `index_train_<split>.txt`).
pub(crate) fn train_rows(dir: &Path, split: usize) -> anyhow::Result<usize> {
    Ok(read_indices(&files(dir).join(format!("index_train_{split}.txt")))?.len())
}

/// Test RMSE and mean Gaussian test log-likelihood of predicting the training mean, with the
/// training standard deviation (maximum likelihood) as the predictive spread. Non-private.
pub(crate) fn mean_predictor(dir: &Path, split: usize) -> anyhow::Result<(f64, f64)> {
    let f = files(dir);
    let data_path = f.join("data.txt");
    let text = std::fs::read_to_string(&data_path)
        .with_context(|| format!("could not read {}", data_path.display()))?;
    let target = *read_indices(&f.join("index_target.txt"))?
        .first()
        .context("index_target.txt is empty")?;
    let mut y = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let field = line.split_whitespace().nth(target).with_context(|| {
            format!("{} line {}: no column {target}", data_path.display(), i + 1)
        })?;
        let v: f64 = field
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .with_context(|| {
                format!(
                    "{} line {}: bad target `{field}`",
                    data_path.display(),
                    i + 1
                )
            })?;
        y.push(v);
    }
    let pick = |name: String| -> anyhow::Result<Vec<f64>> {
        read_indices(&f.join(&name))?
            .into_iter()
            .map(|i| {
                y.get(i)
                    .copied()
                    .with_context(|| format!("{name}: row {i} is not in data.txt"))
            })
            .collect()
    };
    let train = pick(format!("index_train_{split}.txt"))?;
    let test = pick(format!("index_test_{split}.txt"))?;
    anyhow::ensure!(
        train.len() > 1 && !test.is_empty(),
        "split {split} of {}: too few rows",
        dir.display()
    );
    let mean = train.iter().sum::<f64>() / train.len() as f64;
    let var = train.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / train.len() as f64;
    anyhow::ensure!(
        var > 0.0,
        "split {split} of {}: constant target",
        dir.display()
    );
    let mse = test.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / test.len() as f64;
    let ll = -0.5 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * mse / var;
    Ok((mse.sqrt(), ll))
}

/// The committed diffprivlib results (`linreg_diffprivlib.json`).
pub(crate) struct Diffprivlib {
    doc: Value,
    /// Where it was read from (relative to the workspace root).
    pub path: String,
}

impl Diffprivlib {
    /// Reads the committed JSON.
    pub(crate) fn read(root: &Path, rel: &str) -> anyhow::Result<Self> {
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("could not read {}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        Ok(Self {
            doc,
            path: rel.into(),
        })
    }

    /// Test RMSE of diffprivlib's `LinearRegression` (raw inputs, bounds = declared ranges) on
    /// `dataset` at `eps`, per split in the file's split order, for the splits listed in `splits`.
    pub(crate) fn rmse(&self, dataset: &str, eps: f64, splits: usize) -> Vec<(usize, f64)> {
        let file_splits: Vec<usize> = self.doc["splits"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_u64().map(|s| s as usize))
                    .collect()
            })
            .unwrap_or_default();
        let key = format!("dpl_raw_eps{eps}");
        let values = self.doc["results"][dataset]["test_rmse_per_split"][&key].as_array();
        file_splits
            .iter()
            .zip(values.into_iter().flatten())
            .filter_map(|(&s, v)| Some((s, v.as_f64()?)))
            .filter(|(s, v)| *s < splits && v.is_finite())
            .collect()
    }

    /// The provenance line of the file (command, versions, commit, machine, load).
    pub(crate) fn provenance(&self) -> String {
        let p = &self.doc["provenance"];
        let s = |v: &Value| v.as_str().unwrap_or("?").to_string();
        format!(
            "`{}` (diffprivlib {}, scikit-learn {}; git {}; {} cores; uptime `{}`)",
            s(&p["command"]),
            s(&p["versions"]["diffprivlib"]),
            s(&p["versions"]["scikit-learn"]),
            s(&p["git_commit"]),
            p["machine"]["cpu_count"].as_u64().unwrap_or(0),
            s(&p["uptime"]),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_predictor_on_a_tiny_split() {
        let dir =
            std::env::temp_dir().join(format!("xtask-regression-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("data.txt"), "0 1\n0 3\n0 5\n0 9\n").unwrap();
        std::fs::write(dir.join("index_target.txt"), "1\n").unwrap();
        std::fs::write(dir.join("index_train_0.txt"), "0\n1.0\n2\n").unwrap();
        std::fs::write(dir.join("index_test_0.txt"), "3\n").unwrap();
        std::fs::write(dir.join("n_splits.txt"), "1\n").unwrap();
        let (rmse, ll) = mean_predictor(&dir, 0).unwrap();
        // training mean 3, variance 8/3; test value 9
        assert!((rmse - 6.0).abs() < 1e-12);
        let var = 8.0 / 3.0;
        let want = -0.5 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * 36.0 / var;
        assert!((ll - want).abs() < 1e-12);
        assert_eq!(train_rows(&dir, 0).unwrap(), 3);
        assert_eq!(n_splits(&dir).unwrap(), 1);
        std::fs::write(dir.join("index_test_0.txt"), "7\n").unwrap();
        assert!(mean_predictor(&dir, 0).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
