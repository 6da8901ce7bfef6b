//! Runs a crate's example (`cargo run --release -p P --example E -- ARGS --json`) and parses the
//! one JSON object it prints, so that every experiment's rerun command is a documented example.

use std::process::Command;

use anyhow::Context as _;
use serde_json::Value;

use crate::context::Context;

/// Environment variable naming a directory of prebuilt example binaries (see [`run_example`]).
pub const PREBUILT_DIR_VAR: &str = "XTASK_EXAMPLES_DIR";

/// The command line (as a user would type it) and its parsed JSON output.
pub struct ExampleRun {
    /// `cargo run --release -p ... --example ... -- ...` as text.
    pub command: String,
    /// The JSON object the example printed.
    pub output: Value,
}

/// Runs `example` of `package` with `args` (plus `--json`) from the workspace root; with
/// [`PREBUILT_DIR_VAR`] set, runs the prebuilt binary of that name from the directory instead.
pub fn run_example(
    ctx: &Context,
    package: &str,
    example: &str,
    args: &[String],
) -> anyhow::Result<ExampleRun> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut full: Vec<String> = vec![
        "run".into(),
        "--release".into(),
        "-q".into(),
        "-p".into(),
        package.into(),
        "--example".into(),
        example.into(),
        "--".into(),
    ];
    full.extend(args.iter().cloned());
    full.push("--json".into());
    let command = format!("cargo {}", full.join(" "));
    // Long experiments may pin the binaries: with `XTASK_EXAMPLES_DIR=DIR` the example runs as
    // `DIR/<example>` (built beforehand from a known commit), so edits in the working tree during
    // a run cannot change or break it. The recorded command stays the documented cargo form.
    let out = match std::env::var_os(PREBUILT_DIR_VAR) {
        Some(dir) => {
            let binary = std::path::Path::new(&dir).join(example);
            Command::new(&binary)
                .current_dir(&ctx.root)
                .args(args)
                .arg("--json")
                .output()
                .with_context(|| format!("could not start {}", binary.display()))?
        }
        None => Command::new(&cargo)
            .current_dir(&ctx.root)
            .args(&full)
            .output()
            .with_context(|| format!("could not start {command}"))?,
    };
    anyhow::ensure!(
        out.status.success(),
        "{command} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .with_context(|| format!("{command} printed no JSON object"))?;
    let output: Value =
        serde_json::from_str(line).with_context(|| format!("{command} printed bad JSON"))?;
    Ok(ExampleRun { command, output })
}

/// A number from an example's JSON output at `path` (keys joined by `.`, e.g.
/// `diagnostics.clipped_fraction`); the string `"inf"` (the examples' spelling of an infinite
/// epsilon) reads as infinity.
///
/// # Errors
/// When the key is missing or not a number, naming the key and the keys that are there, so a renamed
/// key stops the report instead of becoming NaN in it.
pub fn number(v: &Value, path: &str) -> anyhow::Result<f64> {
    let mut here = v;
    for key in path.split('.') {
        here = here.get(key).with_context(|| {
            let keys: Vec<&str> = here
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            format!("example output has no key `{path}` (at `{key}`; keys here: {keys:?})")
        })?;
    }
    match here {
        Value::Number(n) => n
            .as_f64()
            .with_context(|| format!("`{path}` is not representable as f64")),
        Value::String(s) if s == "inf" => Ok(f64::INFINITY),
        other => anyhow::bail!("example output `{path}` is not a number: {other}"),
    }
}
