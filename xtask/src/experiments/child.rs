//! Issue 21's scale sections run the examples as child processes, so that the peak memory they
//! report is the fit's own and not xtask's (every other experiment calls the libraries in xtask's
//! process, issue 20; a peak resident set is per process): build and locate an example binary,
//! run it with a wall clock and read its JSON line, remove temporary files on every exit path,
//! and describe the machine and the free disk space.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

use crate::context::Context;

/// Builds `cargo build --release -p PACKAGE --example NAME` and returns the executable's path
/// (read from cargo's JSON messages, so any `CARGO_TARGET_DIR` is honoured).
pub fn build_example(ctx: &Context, package: &str, name: &str) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(&ctx.root)
        .args(["build", "--release", "-q", "-p", package, "--example", name])
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()?;
    anyhow::ensure!(
        output.status.success(),
        "cargo build --release -p {package} --example {name} failed"
    );
    executable(&String::from_utf8_lossy(&output.stdout), name)
        .ok_or_else(|| anyhow::anyhow!("cargo named no executable for example {name}"))
}

/// The `executable` of the compiler artifact whose target is `name`, from cargo's JSON lines.
fn executable(messages: &str, name: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == name)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
}

/// One finished child: its whole-process wall clock and the last JSON object it printed.
pub struct Timed {
    /// Seconds from spawn to exit.
    pub wall: f64,
    /// The last line of standard output that parses as a JSON object (`Null` if none).
    pub json: Value,
}

/// Runs `program args`, fails with its standard error's tail if it exits non-zero.
pub fn run(program: &Path, args: &[String]) -> anyhow::Result<Timed> {
    let started = Instant::now();
    let output = Command::new(program).args(args).output()?;
    let wall = started.elapsed().as_secs_f64();
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let tail: String = err.lines().rev().take(5).collect::<Vec<_>>().join(" / ");
        anyhow::bail!(
            "{} {} exited with {}: {tail}",
            program.display(),
            args.join(" "),
            output.status
        );
    }
    let json = String::from_utf8_lossy(&output.stdout)
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(Value::is_object)
        .unwrap_or(Value::Null);
    Ok(Timed { wall, json })
}

/// Files and folders removed when the guard is dropped (success, error or panic).
#[derive(Default)]
pub struct Cleanup(Vec<PathBuf>);

impl Cleanup {
    /// Removes `path` (file or folder) when the guard goes.
    pub fn add(&mut self, path: &Path) {
        self.0.push(path.to_path_buf());
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for p in self.0.iter().rev() {
            let removed = if p.is_dir() {
                std::fs::remove_dir_all(p)
            } else {
                std::fs::remove_file(p)
            };
            if let Err(e) = removed
                && e.kind() != std::io::ErrorKind::NotFound
            {
                eprintln!("warning: could not remove {}: {e}", p.display());
            }
        }
    }
}

/// The number at `key` of a child's JSON object `json`.
///
/// # Errors
/// When `key` is missing or not a number (the example's output changed): the report never shows
/// a NaN for it.
pub fn number(json: &Value, key: &str) -> anyhow::Result<f64> {
    json[key]
        .as_f64()
        .ok_or_else(|| anyhow::anyhow!("the example's JSON has no number `{key}`"))
}

/// Bytes free for an unprivileged writer at `dir` (`df -B1 --output=avail`), if `df` answers.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let out = Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| parse_df_avail(&String::from_utf8_lossy(&out.stdout)))?
}

/// The number under `df --output=avail`'s header.
fn parse_df_avail(text: &str) -> Option<u64> {
    text.lines().nth(1)?.trim().parse().ok()
}

/// "2-core AMD EPYC, 23.5 GiB" from /proc/cpuinfo and /proc/meminfo (parts that cannot be read
/// are left out).
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let mem = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let kib: f64 = s.lines().next()?.split_whitespace().nth(1)?.parse().ok()?;
        Some(format!(", {:.1} GiB", kib / 1024.0 / 1024.0))
    });
    format!("{cores}-core {cpu}{}", mem.unwrap_or_default())
}

/// `n` with thousands separators: 10,000,000.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A number of bytes in GB (10^9), one decimal.
pub fn gb(bytes: f64) -> String {
    format!("{:.1} GB", bytes / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_output_and_cargo_messages_are_parsed() {
        assert_eq!(parse_df_avail("Avail\n21474836480\n"), Some(21_474_836_480));
        assert_eq!(parse_df_avail("Avail\n"), None);
        assert_eq!(parse_df_avail("Avail\n12G\n"), None);
        let messages = concat!(
            "{\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"vips_models\"},\"executable\":null}\n",
            "not json\n",
            "{\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"blr\"},\"executable\":\"/t/release/examples/blr\"}\n",
            "{\"reason\":\"build-finished\",\"success\":true}\n"
        );
        assert_eq!(
            executable(messages, "blr"),
            Some(PathBuf::from("/t/release/examples/blr"))
        );
        assert_eq!(executable(messages, "lda_store"), None);
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(50_000), "50,000");
        assert_eq!(thousands(10_000_000), "10,000,000");
    }
}
