//! `cargo xtask`: workspace automation (benchmarks, experiments, reports, audits).
//!
//! Run `cargo xtask --help` from the workspace root. `cargo xtask bench --quick` is the README's
//! main command: it needs nothing but the crates.io registry.

mod audit;
mod context;
mod criterion_runner;
mod experiments;
mod plot;
mod report;
mod sensitivity;

use std::path::PathBuf;
use std::time::Instant;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use context::Context;

/// Workspace automation for dp-bayes.
#[derive(Parser, Debug)]
#[command(name = "cargo xtask", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the experiments and the criterion benchmarks and write a report (Markdown, JSON, SVG).
    Bench {
        /// Embedded data only; finishes in a few minutes on 2 cores.
        #[arg(long)]
        quick: bool,
        /// Where the real data sets live (default: ../shared/data when it exists).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Output directory (default: target/xtask).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run only the named experiments (comma-separated; see `cargo xtask list`). Without it
        /// every experiment runs except those only run on request (papers_vips_fig7, papers_vips_fig8).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Skip the criterion benchmarks.
        #[arg(long)]
        no_criterion: bool,
    },
    /// Empirical privacy audits and the models' sensitivity checks, with a pass/fail table.
    Audit {
        /// Fewer runs (2e5 per dataset instead of 1e6).
        #[arg(long)]
        quick: bool,
        /// Output directory (default: target/xtask).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// List the experiments.
    List,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Bench {
            quick,
            data_dir,
            out,
            only,
            no_criterion,
        } => bench(Context::new(quick, data_dir, out)?, &only, no_criterion),
        Command::Audit { quick, out } => {
            audit::run(&Context::new(true, None, out).map(|mut c| {
                c.quick = quick;
                c
            })?)
        }
        Command::List => {
            for e in experiments::all() {
                println!("{:<20} {}", e.name, e.about);
            }
            Ok(())
        }
    }
}

fn bench(ctx: Context, only: &[String], no_criterion: bool) -> anyhow::Result<()> {
    let started = Instant::now();
    let selected: Vec<_> = experiments::all()
        .into_iter()
        .filter(|e| {
            if only.is_empty() {
                !experiments::ON_REQUEST.contains(&e.name)
            } else {
                only.iter().any(|o| o == e.name)
            }
        })
        .collect();
    let bar = ProgressBar::new(selected.len() as u64 + u64::from(!no_criterion));
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut sections = Vec::new();
    let mut failures = Vec::new();
    for e in &selected {
        bar.set_message(e.name);
        let t = Instant::now();
        match (e.run)(&ctx) {
            Ok(mut s) => {
                s.seconds = t.elapsed().as_secs_f64();
                sections.push(s);
            }
            Err(err) => {
                bar.println(format!("experiment {} failed: {err:#}", e.name));
                failures.push((e.name.to_string(), format!("{err:#}")));
            }
        }
        bar.inc(1);
    }
    if !no_criterion && only.is_empty() {
        bar.set_message("criterion");
        match criterion_runner::run(&ctx) {
            Ok(s) => sections.push(s),
            Err(err) => failures.push(("criterion".into(), format!("{err:#}"))),
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    report::write_report(
        &ctx.out,
        ctx.mode(),
        ctx.data_dir.as_deref(),
        &sections,
        &failures,
    )?;
    println!(
        "report written to {} ({} sections, {} failed, {:.0} s)",
        ctx.out.join("report.md").display(),
        sections.len(),
        failures.len(),
        started.elapsed().as_secs_f64()
    );
    anyhow::ensure!(
        failures.is_empty(),
        "{} experiment(s) failed",
        failures.len()
    );
    Ok(())
}
