//! PBP regression on a UCI folder with SEP / clipped SEP / DP-SEP (or ADF, EP).
//!
//! ```text
//! cargo run --release -p dp-sep --example pbp -- --uci ../shared/data/uci/wine-quality-red \
//!     --split 0 --epsilon 1 --delta 1e-5 --clip 1 --json
//! ```
//! Omitting `--epsilon` runs non-private SEP (clipped if `--clip` is given). Prints one JSON object.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dp_core::RngPolicy;
use dp_sep::Sampling;
use dp_sep::data::uci::UciDataset;
use dp_sep::pbp::{Method, PbpConfig, Privacy, run_pbp};

#[derive(Parser, Debug)]
#[command(about = "PBP Bayesian neural network regression with (DP-)SEP")]
struct Args {
    /// UCI folder (e.g. ../shared/data/uci/wine-quality-red).
    #[arg(long)]
    uci: PathBuf,
    /// Standard split (0-based).
    #[arg(long, default_value_t = 0)]
    split: usize,
    /// Privacy budget epsilon; omit for non-private SEP.
    #[arg(long)]
    epsilon: Option<f64>,
    /// Privacy parameter delta (with --epsilon).
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    /// Clip norm C of the factor's natural parameters (required with --epsilon).
    #[arg(long)]
    clip: Option<f64>,
    /// gamma of 002 Eq. 4. Default: N without --epsilon (SEP damping 1/N, as in the published
    /// SEP runs); 1 with --epsilon (002's stated DP-SEP setting; see docs/dp-sep.md).
    #[arg(long)]
    gamma: Option<f64>,
    /// Method for non-private runs: sep, adf, ep.
    #[arg(long, default_value = "sep")]
    method: String,
    /// Epochs (default: the folder's n_epochs).
    #[arg(long)]
    epochs: Option<usize>,
    /// Hidden units (default: the folder's n_hidden).
    #[arg(long)]
    hidden: Option<usize>,
    /// Seed for the public initialisation and the non-private visiting order.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Seed the privacy noise and the private record draws (reproducible experiments only;
    /// default: ChaCha20 from OS entropy).
    #[arg(long)]
    noise_seed: Option<u64>,
    /// Visiting order: `uniform` (independent draw per step; default with --epsilon) or
    /// `shuffled` (permutation per epoch; default without; accounted without amplification).
    #[arg(long)]
    sampling: Option<String>,
    /// Print one JSON object (always on; kept for the documented command line).
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    if !args.uci.exists() {
        return Err(format!(
            "data folder {} is absent (the UCI sets live in ../shared/data/uci)",
            args.uci.display()
        )
        .into());
    }
    let data = UciDataset::load(&args.uci)?;
    let (train, test) = data.split(args.split)?;
    let method = match args.method.as_str() {
        "sep" => Method::Sep,
        "adf" => Method::Adf,
        "ep" => Method::Ep,
        other => return Err(format!("unknown method {other:?} (sep, adf, ep)").into()),
    };
    let sampling = match (args.sampling.as_deref(), args.epsilon) {
        (Some("uniform"), _) | (None, Some(_)) => Sampling::IndependentUniform,
        (Some("shuffled"), _) | (None, None) => Sampling::ShuffledEpoch,
        (Some(other), _) => return Err(format!("unknown sampling {other:?}").into()),
    };
    let privacy = args.epsilon.map(|epsilon| Privacy {
        epsilon,
        delta: args.delta,
        rng: args
            .noise_seed
            .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed }),
    });
    let config = PbpConfig {
        method,
        hidden: vec![args.hidden.unwrap_or(data.n_hidden())],
        epochs: args.epochs.unwrap_or(data.n_epochs()),
        gamma: args.gamma.or(args.epsilon.map(|_| 1.0)),
        clip: args.clip,
        sampling,
        seed: args.seed,
        privacy,
    };
    let out = run_pbp(&train, &test, &config)?;
    Ok(serde_json::json!({
        "dataset": data.name(),
        "split": args.split,
        "method": args.method,
        "epsilon": args.epsilon,
        "delta": args.epsilon.map(|_| args.delta),
        "clip": args.clip,
        "gamma": config.gamma.unwrap_or(train.len() as f64),
        "epochs": config.epochs,
        "hidden": config.hidden,
        "n_train": train.len(),
        "test_rmse": out.metrics.rmse,
        "test_log_likelihood": out.metrics.log_likelihood,
        "seconds": out.seconds,
        "sampling": sampling,
        "counts": out.counts,
        "noise_multiplier": out.privacy.as_ref().map(|p| p.noise_multiplier),
        "theta_noise_std": out.privacy.as_ref().map(|p| p.theta_noise_std),
        "epsilon_accounted": out.privacy.as_ref().map(|p| p.epsilon),
        "noise_rng": privacy.map(|p| p.rng.describe()),
    }))
}
