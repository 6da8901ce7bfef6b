//! `dp-bayes fit pbp`: probabilistic backpropagation (a Bayesian ReLU network for regression)
//! on a UCI split folder, fitted by DP-SEP with `--epsilon` (002 Sec. 6.2) or by SEP. The flags,
//! defaults and checks follow the dp-sep example `pbp`; the private settings default to
//! `dp_sep::recommended::private_pbp`. Saves a `dp_sep::pbp::saved::SavedPbp`.

use std::time::Instant;

use dp_core::RngPolicy;
use dp_sep::data::Standardizer;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::pbp::saved::{SavedPbp, SavedPbpPrivacy, SavedScaling};
use dp_sep::pbp::uci::{RangeDeclaration, UciInput, UciPbpRequest, run_uci_pbp_on};
use dp_sep::pbp::{Method, PbpModel};
use dp_sep::{Batching, Clipping};
use serde_json::json;
use vips_models::engine::{Privacy, PrivacySummary};

use super::uci::{UciArgs, declared_ranges, default_names};
use super::{Common, Fitted, count, positive};
use crate::cli::error::{CliError, ValueError, usage};
use crate::cli::io::num;

/// Arguments of `fit pbp`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    pub data: UciArgs,
    /// Epochs (default: the folder's n_epochs.txt, else 40).
    #[arg(long, value_parser = count)]
    epochs: Option<usize>,
    /// Units of the hidden layer (default: the folder's n_hidden.txt, else 50).
    #[arg(long, value_parser = count)]
    hidden: Option<usize>,
    /// Clip norm C of each record's factor (private default: the recommended C; non-private
    /// default: unclipped).
    #[arg(long, value_parser = positive)]
    clip: Option<f64>,
    /// gamma of 002 Eq. 4 (private default: the recommended `P N / E`, capped at N^2 / S, or 1
    /// with --one-record; non-private default: N).
    #[arg(long, value_parser = positive)]
    gamma: Option<f64>,
    /// Expected Poisson batch size S of a private fit (default: the recommended S, capped at
    /// N/2).
    #[arg(long, value_parser = count)]
    batch_size: Option<usize>,
    /// 002's DP-SEP algorithm: one record per step (replace-one neighbours) instead of the
    /// Poisson minibatch. Private fits only; not with --batch-size.
    #[arg(long)]
    one_record: bool,
    /// What DP-SEP's wall clips: value (each record's factor, 002's), innovation (each
    /// record's factor minus the current shared factor; docs/dp-sep.md, "Innovation
    /// clipping") or whitened (the innovation in the posterior's metric, the clip from the
    /// budget; "Whitened clipping"). Default: the recommendation's for the fit's epsilon and
    /// population (dp_sep::recommended::private_pbp_for). Private fits only; not with
    /// --one-record.
    #[arg(long, value_parser = clipping)]
    clipping: Option<Clipping>,
    /// Seed of the public initialisation and the non-private visiting order.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Run even if the planned steps exceed dp_sep::limits::MAX_STEPS (10^8; refused
    /// otherwise).
    #[arg(long)]
    allow_long_run: bool,
    #[command(flatten)]
    pub common: Common,
}

/// Parses `--clipping` (clap value parser): `value`, `innovation` or `whitened`.
///
/// # Errors
/// [`ValueError::Range`] for anything else.
fn clipping(s: &str) -> Result<Clipping, ValueError> {
    s.trim()
        .parse::<Clipping>()
        .map_err(|_| ValueError::Range("expected `value`, `innovation` or `whitened`"))
}

/// The flags that can be checked before reading any file.
fn check(args: &Args) -> Result<(), CliError> {
    let c = &args.common;
    match c.epsilon {
        Some(_) => {
            if args.one_record && args.batch_size.is_some() {
                return Err(usage(
                    "--one-record",
                    "cannot be combined with --batch-size: choose one record or a batch per step",
                ));
            }
            if args.one_record && args.clipping.is_some() {
                return Err(usage(
                    "--clipping",
                    "cannot be combined with --one-record (002's algorithm clips each record's \
                     factor)",
                ));
            }
            if let (Some(b), Some(p)) = (args.batch_size, c.population)
                && b > p
            {
                return Err(usage(
                    "--batch-size",
                    format!("{b} must be <= --population {p} (the Poisson rate S/N must be <= 1)"),
                ));
            }
        }
        None => {
            for (set, flag) in [
                (args.batch_size.is_some(), "--batch-size"),
                (args.one_record, "--one-record"),
                (args.clipping.is_some(), "--clipping"),
            ] {
                if set {
                    return Err(usage(
                        flag,
                        "has no effect without --epsilon (a non-private fit runs SEP)",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Fits and returns the saved model and the summary parts.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    check(args)?;
    let (privacy, population) = c.privacy()?;
    let start = Instant::now();
    let data = SplitFolder::load(&args.data.uci)?;
    let (train, _) = data.split(args.data.split).map_err(|e| {
        usage(
            "--split",
            format!(
                "split {} of {}: {e}",
                args.data.split,
                args.data.uci.display()
            ),
        )
    })?;
    let d = train.dim();
    let hidden = args.hidden.unwrap_or(data.n_hidden());
    let epochs = args.epochs.unwrap_or(data.n_epochs());
    if hidden == 0 || epochs == 0 {
        return Err(usage(
            if hidden == 0 { "--hidden" } else { "--epochs" },
            "n_hidden.txt / n_epochs.txt of the folder say 0: give the flag (>= 1)",
        ));
    }
    // Sizes before anything is allocated: the network.
    PbpModel::try_new(d, &[hidden])?;
    let (ranges, names, target_name) = match declared_ranges(&data, &args.data)? {
        Some(r) => (Some(r.ranges), r.names, r.target),
        None => {
            let (names, target) = default_names(d);
            (None, names, target)
        }
    };
    if ranges.is_none() && c.epsilon.is_some() {
        return Err(usage(
            "--ranges",
            "a private fit scales with declared public ranges, never with statistics of the \
             training data, and this folder has no committed ranges file: pass --ranges FILE \
             or --feature-range LO:HI --target-range LO:HI",
        ));
    }
    let n = population.unwrap_or(train.len());
    // The settings as the `pbp` example's request: `dp_sep::pbp::uci` resolves the
    // recommendation, the visiting order and the configuration (one home for them).
    let request = UciPbpRequest {
        uci: args.data.uci.clone(),
        split: args.data.split,
        epsilon: c.epsilon,
        delta: match privacy {
            Privacy::Target { delta, .. } => Some(delta),
            _ => None,
        },
        clip: args.clip,
        gamma: args.gamma,
        method: Method::Sep,
        epochs: Some(epochs),
        hidden: Some(hidden),
        seed: args.seed,
        noise_seed: c.noise_seed,
        sampling: None,
        batch_size: args.batch_size,
        one_record: args.one_record,
        clipping: args.clipping,
        average_tail: None,
        accountant: c.accountant,
        population,
        ranges: ranges
            .clone()
            .map_or(RangeDeclaration::Undeclared, RangeDeclaration::Declared),
        allow_long_run: args.allow_long_run,
    };
    // Ctrl-C: the fit stops after the current epoch (SepError::Interrupted, exit 130).
    let cancel = super::ctrl_c_token()?;
    let mut observer = |_: usize, _: usize| !cancel.is_cancelled();
    let run = run_uci_pbp_on(&data, &request, &mut observer).map_err(|e| match e.input {
        UciInput::Accountant => usage("--accountant", e.source.to_string()),
        _ => e.source.into(),
    })?;
    let rng_policy = c
        .noise_seed
        .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed });
    let diag = &run.diagnostics;
    let diagnostics = json!({"counts": diag.counts, "box_clipped": diag.box_clipped});
    let (posterior, metrics, summary, settings_extra) = match (privacy, run.resolved) {
        (Privacy::Target { delta, .. }, Some(p)) => {
            let (Some(report), Some(ledger), Some(r)) =
                (run.outcome.privacy.as_ref(), run.ledger, ranges.as_ref())
            else {
                return Err(CliError::NonFinite(
                    "the accounting (a private fit without a report, ledger or declared ranges)"
                        .into(),
                ));
            };
            let eps = ledger.epsilon(delta)?;
            let neighbouring = ledger
                .neighbouring()
                .map(|n| n.name().to_string())
                .unwrap_or_default();
            let scaler = Standardizer::from_public_ranges(r);
            let s_exp = p.batching.expected_batch_size();
            (
                (run.outcome.posterior, scaler),
                run.outcome.metrics,
                PrivacySummary {
                    epsilon: Some(eps),
                    delta: Some(delta),
                    noise_multiplier: Some(report.noise_multiplier),
                    sampling_rate: s_exp as f64 / n as f64,
                    expected_batch_size: s_exp as f64,
                    public_population: n,
                    population_declared: true,
                    neighbouring,
                    rng: rng_policy.describe(),
                    accountant: report.accountant,
                    ledger: Some(ledger),
                },
                json!({"method": "dp-sep", "gamma": num(p.gamma), "clip": num(p.clip),
                       "clipping": p.clipping.name(),
                       "batch_size": match p.batching {
                           Batching::OneRecord => json!("one record"),
                           b => json!(b.expected_batch_size()),
                       },
                       "releases": report.releases,
                       "theta_noise_std": num(report.theta_noise_std),
                       "recommended": p.note("private_pbp")}),
            )
        }
        _ => {
            let scaler = match &ranges {
                Some(r) => Standardizer::from_public_ranges(r),
                None => Standardizer::fit(&train),
            };
            (
                (run.outcome.posterior, scaler),
                run.outcome.metrics,
                PrivacySummary {
                    epsilon: None,
                    delta: None,
                    noise_multiplier: None,
                    sampling_rate: 1.0,
                    expected_batch_size: 1.0,
                    public_population: n,
                    population_declared: c.population.is_some(),
                    neighbouring: "none (non-private)".into(),
                    rng: "none (no noise)".into(),
                    accountant: Default::default(),
                    ledger: None,
                },
                // Non-private SEP's default gamma is the realised count (as `run_pbp`).
                json!({"method": "sep", "gamma": num(args.gamma.unwrap_or(train.len() as f64)),
                       "clip": args.clip.map_or(json!("none"), num)}),
            )
        }
    };
    let (posterior, scaler) = posterior;
    let dim = posterior.len();
    let p = &summary;
    let saved_privacy = SavedPbpPrivacy {
        private: p.epsilon.is_some(),
        epsilon: p.epsilon,
        delta: p.delta,
        noise_multiplier: p.noise_multiplier,
        accountant: p.epsilon.map(|_| p.accountant.name().to_string()),
        population: p.population_declared.then_some(n),
        neighbouring: p.neighbouring.clone(),
        rng: p.rng.clone(),
        iterations: epochs as u64,
    };
    let scaling =
        SavedScaling::from_standardizer(&scaler, names.clone(), target_name, ranges.as_ref())?;
    let scaling_private = scaling.private;
    let scaling_source = scaling.source.clone();
    let saved = SavedPbp::new(&[hidden], posterior, scaling, saved_privacy)
        .map_err(|e| CliError::NonFinite(format!("posterior: {e}")))?;
    let model_json = saved.to_json()?;
    let heldout = json!({
        "split": args.data.split,
        "test_rmse": num(metrics.rmse),
        "test_log_likelihood": num(metrics.log_likelihood),
        "note": "on the split's test rows, in original units, with the saved scaling",
    });
    let mut settings = json!({
        "input": {"uci": args.data.uci.display().to_string(), "dataset": data.name(),
                  "split": args.data.split},
        "features": names,
        "hidden": [hidden],
        "epochs": epochs,
        "seed": args.seed,
        "scaling": if scaling_private {
            format!("declared public ranges: {scaling_source}")
        } else {
            "training mean and std (non-private; saved marked \"private\": false)".into()
        },
    });
    if let (Some(s), Some(e)) = (settings.as_object_mut(), settings_extra.as_object()) {
        s.extend(e.clone());
    }
    let mut diag = json!({
        "n_train": train.len(),
        "seconds": num(start.elapsed().as_secs_f64()),
    });
    if let (Some(s), Some(e)) = (diag.as_object_mut(), diagnostics.as_object()) {
        s.extend(e.clone());
    }
    Ok(Fitted {
        // The wall's batch regime of a private fit; a non-private SEP fit has no batches.
        sampling: run.resolved.map(|p| p.batching.name()),
        model: "pbp",
        model_json,
        iterations: epochs as u64,
        dim,
        heldout,
        settings,
        diagnostics: diag,
        privacy: summary,
    })
}
