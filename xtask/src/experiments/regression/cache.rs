//! The run cache of the regression table: one JSON line per finished cell, keyed by the exact
//! command line of the equivalent example run (the cells are computed in process; rows written
//! when xtask still spawned the examples have the same keys and are reused). A rerun skips every
//! command already in the file, so the full table can be built over several invocations and
//! interrupted safely (a half-written last line is skipped).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::{Value, json};

/// The command line that runs `package`'s `example` with `args` (plus `--json`) and gives the
/// cell's numbers: the cache key.
pub(crate) fn command_line(package: &str, example: &str, args: &[String]) -> String {
    format!(
        "cargo run --release -q -p {package} --example {example} -- {} --json",
        args.join(" ")
    )
}

/// One finished run, as stored.
pub(crate) struct Entry<'a> {
    /// Data set folder name.
    pub dataset: &'a str,
    /// Split index.
    pub split: usize,
    /// Method key (`Method::key`).
    pub method: &'a str,
    /// Epsilon; `None` for a non-private run.
    pub epsilon: Option<f64>,
    /// The command line (the key).
    pub command: &'a str,
    /// The cell's JSON output (the example's keys).
    pub output: &'a Value,
    /// Commit the run was made at.
    pub commit: &'a str,
    /// `/proc/loadavg` (or "unknown") when the run finished.
    pub load: &'a str,
}

/// The cache file and the outputs it holds, by command line.
pub(crate) struct Cache {
    path: PathBuf,
    /// Output and commit, by command line.
    outputs: HashMap<String, (Value, String)>,
    /// Lines that did not parse (for example a line cut short by an interrupt); skipped.
    pub skipped_lines: usize,
}

impl Cache {
    /// Reads `path` if it exists (an absent file is an empty cache).
    pub(crate) fn open(path: &Path) -> anyhow::Result<Self> {
        let mut outputs = HashMap::new();
        let mut skipped_lines = 0;
        if path.exists() {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("could not read {}", path.display()))?;
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let parsed: Option<(String, Value, String)> =
                    serde_json::from_str::<Value>(line).ok().and_then(|v| {
                        let command = v.get("command")?.as_str()?.to_string();
                        let output = v.get("output")?.clone();
                        let commit = v.get("commit")?.as_str()?.to_string();
                        output.is_object().then_some((command, output, commit))
                    });
                match parsed {
                    Some((command, output, commit)) => {
                        outputs.insert(command, (output, commit));
                    }
                    None => skipped_lines += 1,
                }
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            outputs,
            skipped_lines,
        })
    }

    /// The stored output of `command`, if it ran before.
    pub(crate) fn get(&self, command: &str) -> Option<&Value> {
        self.outputs.get(command).map(|e| &e.0)
    }

    /// The commit `command`'s stored run was made at.
    pub(crate) fn commit(&self, command: &str) -> Option<&str> {
        self.outputs.get(command).map(|e| e.1.as_str())
    }

    /// Number of distinct commands stored.
    pub(crate) fn len(&self) -> usize {
        self.outputs.len()
    }

    /// Appends `entry` as one line (creating the file and its directory) and remembers it.
    pub(crate) fn append(&mut self, entry: &Entry<'_>) -> anyhow::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let line = json!({
            "dataset": entry.dataset,
            "split": entry.split,
            "method": entry.method,
            "epsilon": entry.epsilon.map_or(Value::from("inf"), Value::from),
            "delta": entry.epsilon.map_or(Value::from(0.0), |_| Value::from(super::DELTA)),
            "command": entry.command,
            "output": entry.output,
            "commit": entry.commit,
            "load": entry.load,
        });
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("could not open {}", self.path.display()))?;
        // One write of the whole line, so that two invocations appending to the same file
        // (e.g. one filling a data set while another fills a method) cannot interleave.
        file.write_all(format!("{line}\n").as_bytes())?;
        file.flush()?;
        self.outputs.insert(
            entry.command.to_string(),
            (entry.output.clone(), entry.commit.to_string()),
        );
        Ok(())
    }
}

/// A number from a cell's JSON output at `path` (keys joined by `.`, e.g.
/// `diagnostics.clipped_fraction`); the string `"inf"` (the examples' spelling of an infinite
/// epsilon) reads as infinity.
///
/// # Errors
/// When the key is missing or not a number, naming the key and the keys that are there, so a
/// renamed key stops the report instead of becoming NaN in it.
pub(crate) fn number(v: &Value, path: &str) -> anyhow::Result<f64> {
    let mut here = v;
    for key in path.split('.') {
        here = here.get(key).with_context(|| {
            let keys: Vec<&str> = here
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            format!("cached output has no key `{path}` (at `{key}`; keys here: {keys:?})")
        })?;
    }
    match here {
        Value::Number(n) => n
            .as_f64()
            .with_context(|| format!("`{path}` is not representable as f64")),
        Value::String(s) if s == "inf" => Ok(f64::INFINITY),
        other => anyhow::bail!("cached output `{path}` is not a number: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(eps: &str) -> Vec<String> {
        ["--uci", "d", "--split", "0", "--epsilon", eps]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn key_is_the_example_command_line() {
        assert_eq!(
            command_line("dp-sep", "pbp", &args("1")),
            "cargo run --release -q -p dp-sep --example pbp -- --uci d --split 0 --epsilon 1 --json"
        );
        assert_ne!(
            command_line("dp-sep", "pbp", &args("1")),
            command_line("dp-sep", "pbp", &args("2"))
        );
        assert_ne!(
            command_line("dp-sep", "pbp", &args("1")),
            command_line("vips-models", "linreg", &args("1"))
        );
    }

    #[test]
    fn a_renamed_key_is_an_error_not_nan() {
        let output = json!({"test_rmse": 0.5, "epsilon": "inf", "d": {"x": 2.0}, "s": "a"});
        assert_eq!(number(&output, "test_rmse").unwrap(), 0.5);
        assert_eq!(number(&output, "epsilon").unwrap(), f64::INFINITY);
        assert_eq!(number(&output, "d.x").unwrap(), 2.0);
        let err = number(&output, "rmse").unwrap_err().to_string();
        assert!(err.contains("`rmse`") && err.contains("test_rmse"), "{err}");
        assert!(number(&output, "d.y").is_err());
        assert!(number(&output, "s").is_err());
    }

    #[test]
    fn appended_runs_are_found_after_reopening_and_bad_lines_skipped() {
        let dir =
            std::env::temp_dir().join(format!("xtask-regression-cache-{}", std::process::id()));
        let path = dir.join("sub").join("table.jsonl");
        let _ = std::fs::remove_dir_all(&dir);
        let one = command_line("dp-sep", "pbp", &args("1"));
        let two = command_line("dp-sep", "pbp", &args("2"));
        let output = json!({"test_rmse": 0.5, "test_log_likelihood": -1.0});
        let mut cache = Cache::open(&path).unwrap();
        assert_eq!(cache.len(), 0);
        cache
            .append(&Entry {
                dataset: "d",
                split: 0,
                method: "dp_sep",
                epsilon: Some(1.0),
                command: &one,
                output: &output,
                commit: "abc",
                load: "1.0",
            })
            .unwrap();
        // An interrupted write leaves a partial line; the next open skips it.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        write!(f, "{{\"command\": \"{two}\", \"outp").unwrap();
        drop(f);
        let cache = Cache::open(&path).unwrap();
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.skipped_lines, 1);
        assert_eq!(cache.get(&one), Some(&output));
        assert_eq!(cache.get(&two), None);
        assert_eq!(cache.commit(&one), Some("abc"));
        let line: Value = serde_json::from_str(
            std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(line["epsilon"], json!(1.0));
        assert_eq!(line["commit"], json!("abc"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
