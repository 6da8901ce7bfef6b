//! Runs the criterion benchmarks of every crate and gathers their estimates into a table.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::context::Context;
use crate::report::{Section, markdown_table};

/// The packages whose criterion benches are run, in order.
pub const BENCH_PACKAGES: &[&str] = &[
    "dp-accountant",
    "dp-core",
    "expfam",
    "polya-gamma",
    "vips-models",
    "dp-sep",
];

/// Runs `cargo bench -p <package>` for each package that has benches, then reads criterion's
/// `estimates.json` files. In quick mode criterion runs with `--quick` and short warm-up and
/// measurement times.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let started = std::time::Instant::now();
    let criterion_home = ctx.out.join("criterion");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut ran = Vec::new();
    let mut failed = Vec::new();
    for package in BENCH_PACKAGES {
        let bench_dir = ctx.root.join("crates").join(package).join("benches");
        if !bench_dir.is_dir() {
            continue;
        }
        // Name every criterion bench explicitly: `--benches` would also select the library's
        // libtest harness, which rejects criterion's flags.
        let mut benches: Vec<String> = std::fs::read_dir(&bench_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect();
        benches.sort();
        if benches.is_empty() {
            continue;
        }
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(&ctx.root)
            .env("CRITERION_HOME", &criterion_home)
            // Benches that can read real data take it from here; empty means embedded data only
            // (always so in quick mode, which must not read ../shared).
            .env(
                "DP_BAYES_DATA_DIR",
                ctx.data_dir
                    .as_deref()
                    .map(|d| d.as_os_str())
                    .unwrap_or_default(),
            )
            .args(["bench", "-q", "-p", package]);
        for bench in &benches {
            cmd.args(["--bench", bench]);
        }
        cmd.args(["--", "--noplot"]);
        if ctx.quick {
            cmd.args([
                "--quick",
                "--warm-up-time",
                "0.2",
                "--measurement-time",
                "0.5",
            ]);
        }
        eprintln!("xtask: running criterion benches of {package}");
        let status = cmd.status()?;
        if status.success() {
            ran.push(*package);
        } else {
            failed.push(*package);
        }
    }
    let mut rows = Vec::new();
    let mut figures = Vec::new();
    collect(&criterion_home, &mut rows, &mut figures)?;
    rows.sort();
    let mut section = Section::new(
        "criterion",
        "Criterion micro-benchmarks",
        if ctx.quick {
            "cargo bench -p <crate> -- --quick"
        } else {
            "cargo bench -p <crate>"
        },
    );
    section.body = format!(
        "Packages benchmarked: {}.{}\n\n{}",
        ran.join(", "),
        if failed.is_empty() {
            String::new()
        } else {
            format!(" **Failed:** {}.", failed.join(", "))
        },
        markdown_table(&["benchmark", "mean", "95% CI"], &rows)
    );
    section.figures = json!(figures);
    section.seconds = started.elapsed().as_secs_f64();
    Ok(section)
}

fn collect(
    dir: &Path,
    rows: &mut Vec<Vec<String>>,
    figures: &mut Vec<Value>,
) -> anyhow::Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            let estimates = path.join("new").join("estimates.json");
            let meta = path.join("new").join("benchmark.json");
            if estimates.is_file() && meta.is_file() {
                let est: Value = serde_json::from_str(&std::fs::read_to_string(&estimates)?)?;
                let meta: Value = serde_json::from_str(&std::fs::read_to_string(&meta)?)?;
                let id = meta["full_id"].as_str().unwrap_or("?").to_string();
                let mean = est["mean"]["point_estimate"].as_f64().unwrap_or(f64::NAN);
                let lo = est["mean"]["confidence_interval"]["lower_bound"]
                    .as_f64()
                    .unwrap_or(f64::NAN);
                let hi = est["mean"]["confidence_interval"]["upper_bound"]
                    .as_f64()
                    .unwrap_or(f64::NAN);
                rows.push(vec![
                    id.clone(),
                    format_ns(mean),
                    format!("{} – {}", format_ns(lo), format_ns(hi)),
                ]);
                figures.push(json!({"id": id, "mean_ns": mean, "ci_low_ns": lo, "ci_high_ns": hi}));
            } else {
                collect(&path, rows, figures)?;
            }
        }
    }
    Ok(())
}

/// Formats nanoseconds with a readable unit.
pub fn format_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "?".into()
    } else if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}
