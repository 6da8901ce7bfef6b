//! `dp-bayes fit mog`: a mixture of Gaussians with known component spread fitted by SEP, or by
//! DP-SEP with `--epsilon` (002 Sec. 6.1), on a CSV of points or the synthetic generator. Saves
//! the component means and covariances.

use std::path::PathBuf;
use std::time::Instant;

use dp_core::RngPolicy;
use dp_sep::mog::{Family, MogModel, public_start, try_generate};
use dp_sep::recommended::{Overrides, PRIVATE_MOG};
use dp_sep::sep::run_sep_observed;
use dp_sep::{DpSepConfig, FactorWall, SamplingScheme, SepConfig, WallPlan, run_dp_sep_observed};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;
use serde_json::{Value, json};
use vips_models::engine::{Privacy, PrivacySummary};

use super::{Common, Fitted, count, positive};
use crate::cli::error::{CliError, usage};
use crate::cli::io::{num, read_text};

/// Arguments of `fit mog`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// CSV of points: a header, then one point per line (every column numeric).
    #[arg(
        long,
        conflicts_with = "synthetic",
        required_unless_present = "synthetic"
    )]
    csv: Option<PathBuf>,
    /// Draw the points from the synthetic generator (--n points of --dim dimensions around
    /// --components means; the sizes are public).
    #[arg(long)]
    synthetic: bool,
    /// Synthetic: number of points (public; the population of a private fit). Default 1000.
    #[arg(long, value_parser = count, requires = "synthetic")]
    n: Option<usize>,
    /// Synthetic: dimension. Default 2.
    #[arg(long, value_parser = count, requires = "synthetic")]
    dim: Option<usize>,
    /// Components J.
    #[arg(long, default_value_t = 4, value_parser = count)]
    components: usize,
    /// Known component standard deviation s.
    #[arg(long, default_value_t = 0.5, value_parser = positive)]
    s: f64,
    /// Epochs.
    #[arg(long, default_value_t = 20, value_parser = count)]
    epochs: usize,
    /// Covariance family of the posterior over the means: full or diagonal.
    #[arg(long, default_value = "full")]
    family: String,
    /// Clip norm C (private default: `dp_sep::recommended::PRIVATE_MOG`).
    #[arg(long, value_parser = positive)]
    clip: Option<f64>,
    /// gamma of 002 Eq. 4 (private default: the recommended `P N / E`, capped at N^2 / S; else N).
    #[arg(long, value_parser = positive)]
    gamma: Option<f64>,
    /// Expected Poisson batch size of a private fit (default: the recommended S, capped at N/2).
    #[arg(long, value_parser = count)]
    batch_size: Option<usize>,
    /// Seed of the synthetic points, the public initialisation and the non-private visiting order.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    pub common: Common,
}

/// Largest number of points read from a CSV.
const MAX_POINTS: usize = 10_000_000;

/// Reads a CSV of points (header, numeric columns). Errors name the file and line.
fn read_points(path: &std::path::Path) -> Result<(Vec<String>, Vec<Vec<f64>>), CliError> {
    let text = read_text(path, "--csv")?;
    let name = path.display().to_string();
    let err = |line: usize, reason: String| CliError::File {
        path: name.clone(),
        reason: format!("line {line}: {reason}"),
    };
    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty());
    let (hline, header) = lines
        .next()
        .ok_or_else(|| err(1, "no header line".into()))?;
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    let mut points = Vec::new();
    for (line, l) in lines {
        if points.len() >= MAX_POINTS {
            return Err(err(line, format!("more than {MAX_POINTS} points")));
        }
        let fields: Vec<&str> = l.split(',').collect();
        if fields.len() != columns.len() {
            return Err(err(
                line,
                format!("{} fields, the header has {}", fields.len(), columns.len()),
            ));
        }
        let mut p = Vec::with_capacity(fields.len());
        for (c, v) in columns.iter().zip(&fields) {
            match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => p.push(x),
                _ => {
                    return Err(err(
                        line,
                        format!(
                            "column `{}`: `{}` is not a finite number",
                            vips_models::limits::excerpt(c),
                            vips_models::limits::excerpt(v)
                        ),
                    ));
                }
            }
        }
        points.push(p);
    }
    if points.is_empty() {
        return Err(err(hline, "a header but no points".into()));
    }
    Ok((columns, points))
}

/// Fits and returns the saved model and the summary parts.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let family = match args.family.as_str() {
        "full" => Family::Full,
        "diagonal" => Family::Diagonal,
        other => {
            return Err(usage(
                "--family",
                format!(
                    "must be full or diagonal, got `{}`",
                    vips_models::limits::excerpt(other)
                ),
            ));
        }
    };
    // The synthetic generator's size is public: it is the population of a private fit.
    let synthetic_n = args.n.unwrap_or(1000);
    let population_flag = c.population;
    let (privacy, population) = match (args.synthetic, c.epsilon, population_flag) {
        (true, Some(epsilon), None) => (
            Privacy::Target {
                epsilon,
                delta: c.delta.unwrap_or(1e-5),
            },
            Some(synthetic_n),
        ),
        _ => c.privacy()?,
    };
    if c.epsilon.is_none() && args.batch_size.is_some() {
        return Err(usage("--batch-size", "has no effect without --epsilon"));
    }
    let start = Instant::now();
    let mut rng = ChaCha20Rng::seed_from_u64(args.seed);
    let (columns, points, source) = if args.synthetic {
        let d = args.dim.unwrap_or(2);
        dp_sep::limits::check_bytes(
            &format!("--n {synthetic_n} with --dim {d}"),
            "the generated points",
            dp_sep::limits::f64_bytes((synthetic_n as u128).saturating_mul(d as u128 + 1))
                .saturating_mul(2),
            dp_sep::limits::MAX_DATA_BYTES,
        )?;
        let data = try_generate(synthetic_n, args.components, d, args.s, &mut rng)?;
        (
            (1..=d).map(|i| format!("x{i}")).collect::<Vec<_>>(),
            data.points,
            json!({"synthetic": {"n": synthetic_n, "dim": d, "components": args.components,
                                  "s": num(args.s), "seed": args.seed}}),
        )
    } else {
        let path = args
            .csv
            .as_ref()
            .ok_or_else(|| usage("--csv", "give --csv FILE or --synthetic"))?;
        let (cols, pts) = read_points(path)?;
        (cols, pts, json!({"csv": path.display().to_string()}))
    };
    let d = columns.len();
    let realised = points.len();
    let n = population.unwrap_or(realised);
    let model = MogModel::new(args.components, d, args.s, family)?;
    // Public initialisation: posterior N(u_j, I) with u_j ~ N(0, I) from the public seed.
    let mut state = public_start(&model, n, 1.0, &mut rng)?;
    let mut model = model;
    let mut observer = |_: usize, _: usize| true;
    // The wall's batch regime of a private fit (the summary's `sampling`).
    let mut sampling = None;
    let (summary, settings_extra) = match privacy {
        Privacy::Target { epsilon, delta } => {
            // Whitened clipping (the recommendation) takes its clip from the budget unless
            // --clip is given.
            let budget = dp_accountant::Budget::new(epsilon, delta)
                .map_err(|e| dp_sep::SepError::from(dp_core::CoreError::from(e)))?;
            let resolved = PRIVATE_MOG.resolve_for_budget(
                n,
                args.epochs,
                &Overrides {
                    batch_size: args.batch_size,
                    gamma: args.gamma,
                    clip: args.clip,
                    one_record: false,
                },
                None,
                &budget,
                c.accountant.unwrap_or_default(),
            )?;
            let batching = resolved.batching;
            sampling = Some(batching.name());
            let s_exp = batching.expected_batch_size() as f64;
            let (gamma, clip) = (resolved.gamma, resolved.clip);
            let rng_policy = c
                .noise_seed
                .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed });
            let plan = WallPlan::builder()
                .population(n)
                .dim(dp_sep::SepModel::dim(&model))
                .budget(epsilon, delta)
                .clip(clip)
                .steps(dp_sep::planned_steps(batching, args.epochs, n, false)?)
                .sampling(dp_sep::sampling_for(batching, n)?)
                .rng(rng_policy)
                .accountant(c.accountant.unwrap_or_default())
                .build()
                .map_err(|e| match e {
                    e @ dp_sep::SepError::AccountantUnsupported { .. } => {
                        usage("--accountant", e.to_string())
                    }
                    e => e.into(),
                })?;
            let mut wall = FactorWall::new(points, &plan)?;
            let config = DpSepConfig::builder()
                .gamma(gamma)
                .epochs(args.epochs)
                .batching(batching)
                .clipping(resolved.clipping)
                .build()?;
            let (report, _) =
                run_dp_sep_observed(&mut model, &mut state, &mut wall, &config, &mut observer)?;
            let ledger = wall.core().ledger().clone();
            let eps = ledger.epsilon(delta)?;
            let neighbouring = ledger
                .neighbouring()
                .map(|n| n.name().to_string())
                .unwrap_or_default();
            (
                PrivacySummary {
                    epsilon: Some(eps),
                    delta: Some(delta),
                    noise_multiplier: Some(report.noise_multiplier),
                    sampling_rate: s_exp / n as f64,
                    expected_batch_size: s_exp,
                    public_population: n,
                    population_declared: true,
                    neighbouring,
                    rng: rng_policy.describe(),
                    accountant: report.accountant,
                    ledger: Some(ledger),
                },
                json!({"method": "dp-sep", "gamma": num(gamma), "clip": num(clip),
                       "clipping": resolved.clipping.name(),
                       "batch_size": s_exp, "releases": report.releases,
                       "theta_noise_std": num(report.theta_noise_std),
                       "recommended": resolved.note("PRIVATE_MOG")}),
            )
        }
        Privacy::NonPrivate => {
            let gamma = args.gamma.unwrap_or(n as f64);
            let config = SepConfig::builder()
                .gamma(gamma)
                .clip_norm(args.clip)
                .build()?;
            run_sep_observed(
                &mut model,
                &mut state,
                &points,
                &config,
                args.epochs,
                SamplingScheme::ShuffledEpoch,
                &mut rng,
                &mut observer,
            )?;
            (
                PrivacySummary {
                    epsilon: None,
                    delta: None,
                    noise_multiplier: None,
                    sampling_rate: 1.0,
                    expected_batch_size: 1.0,
                    public_population: n,
                    population_declared: population_flag.is_some(),
                    neighbouring: "none (non-private)".into(),
                    rng: "none (no noise)".into(),
                    accountant: Default::default(),
                    ledger: None,
                },
                json!({"method": "sep", "gamma": num(gamma),
                       "clip": args.clip.map_or(json!("none"), num)}),
            )
        }
        #[allow(unreachable_patterns)]
        _ => return Err(usage("--epsilon", "unsupported privacy setting for mog")),
    };
    let mut posterior = state.posterior();
    if !dp_sep::SepModel::is_valid(&model, &posterior) {
        dp_sep::SepModel::repair(&model, &mut posterior);
    }
    let comps = model.moments(&posterior)?;
    let means: Vec<Value> = comps
        .iter()
        .map(|m| Value::from(m.mean.iter().map(|&v| num(v)).collect::<Vec<_>>()))
        .collect();
    let covs: Vec<Value> = comps
        .iter()
        .map(|m| {
            Value::from(
                (0..d)
                    .map(|i| Value::from((0..d).map(|j| num(m.cov[(i, j)])).collect::<Vec<_>>()))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    if comps
        .iter()
        .any(|m| m.mean.iter().chain(m.cov.iter()).any(|v| !v.is_finite()))
    {
        return Err(CliError::NonFinite("component means or covariances".into()));
    }
    let p = &summary;
    let mut priv_json = json!({
        "private": p.epsilon.is_some(),
        "epsilon": num(p.epsilon.unwrap_or(f64::INFINITY)),
        "delta": num(p.delta.unwrap_or(0.0)),
        "noise_multiplier": num(p.noise_multiplier.unwrap_or(0.0)),
    });
    if p.epsilon.is_some() {
        priv_json["accountant"] = json!(p.accountant.name());
        priv_json["population"] = json!(n);
    }
    priv_json["neighbouring"] = json!(p.neighbouring);
    priv_json["rng"] = json!(p.rng);
    priv_json["iterations"] = json!(args.epochs);
    let model_json = json!({
        "format_version": vips_models::linreg::MODEL_FORMAT_VERSION,
        "model": "mog",
        "columns": columns,
        "components": args.components,
        "dim": d,
        "family": args.family,
        "s": num(args.s),
        "means": means,
        "covariances": covs,
        "privacy": priv_json,
    });
    crate::cli::io::check_no_null(&model_json)?;
    let mut settings = json!({
        "input": source,
        "components": args.components,
        "family": args.family,
        "s": num(args.s),
        "epochs": args.epochs,
        "seed": args.seed,
        "means": means,
    });
    if let (Some(s), Some(e)) = (settings.as_object_mut(), settings_extra.as_object()) {
        s.extend(e.clone());
    }
    Ok(Fitted {
        sampling,
        model: "mog",
        model_json: serde_json::to_string_pretty(&model_json)
            .map_err(|e| CliError::Output(e.into()))?,
        iterations: args.epochs as u64,
        dim: args.components * d,
        heldout: json!({"note": "no held-out metrics for clustering"}),
        settings,
        diagnostics: json!({
            "points": realised,
            "seconds": num(start.elapsed().as_secs_f64()),
        }),
        privacy: summary,
    })
}
