//! Mixture-of-Gaussians clustering with SEP / DP-SEP against a long Gibbs ground truth
//! (002 Sec. 6.1, Table 1).
//!
//! ```text
//! cargo run --release -p dp-sep --example mog -- --epsilon 1 --delta 1e-5 --json
//! ```
//! Omitting `--epsilon` runs non-private SEP. Prints one JSON object: public settings, the
//! accounting, the posterior means and their distance to the generator's (public) means; with
//! `--diagnostics` also `"diagnostics": {"private": false, ...}` with the comparison against a
//! Gibbs run on the same points (002 Table 1), timings and clip counts.
//!
//! Bad input is refused up front with exit status 2 and a message naming the flag: zero or
//! negative sizes, sizes whose memory estimate exceeds `dp_sep::limits`, more than
//! `dp_sep::limits::MAX_STEPS` steps without `--allow-long-run`, and flags that have no effect
//! (`--delta` or `--noise-seed` without `--epsilon`, `--gibbs-samples` without `--diagnostics`).
//! A progress bar is drawn on stderr when it is a terminal.

#[path = "common/mod.rs"]
mod common;

use std::process::ExitCode;
use std::time::Instant;

use common::{ExampleError, at_least_one, finite, flagged, needs, positive};

use clap::Parser;
use dp_accountant::AccountantKind;
use dp_core::RngPolicy;
use dp_sep::limits;
use dp_sep::mog::{
    Family, GibbsConfig, MogModel, Moments, compare, gibbs_posterior, public_start, try_generate,
};
use dp_sep::recommended::{Overrides, PRIVATE_MOG, Resolved};
use dp_sep::sep::run_sep_observed;
use dp_sep::{
    Batching, Clipping, DpSepConfig, FactorWall, SamplingScheme, SepConfig, SepError, SepState,
    WallPlan, run_dp_sep_observed,
};
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

#[derive(Parser, Debug)]
#[command(
    about = "Mixture of Gaussians with (DP-)SEP vs a Gibbs ground truth",
    allow_negative_numbers = true
)]
struct Args {
    /// Privacy budget epsilon; omit for non-private SEP.
    #[arg(long)]
    epsilon: Option<f64>,
    /// delta (only with --epsilon; default 1e-5).
    #[arg(long)]
    delta: Option<f64>,
    /// Clip norm C (DP-SEP always clips; for SEP only if given). Default with --epsilon: the
    /// recommended C (`dp_sep::recommended::PRIVATE_MOG`: whitened clipping, the clip from the
    /// budget by `dp_sep::recommended::whitened_clip`), or 1 with --one-record.
    #[arg(long)]
    clip: Option<f64>,
    /// gamma of 002 Eq. 4. Default: N without --epsilon (SEP damping 1/N, as in the published
    /// SEP runs); with --epsilon the recommended `P N / E` (capped at N^2 / S), or 1 with
    /// --one-record (002's stated DP-SEP setting; see docs/dp-sep.md).
    #[arg(long)]
    gamma: Option<f64>,
    /// Data points.
    #[arg(long, default_value_t = 1000)]
    n: usize,
    /// Components.
    #[arg(long, default_value_t = 4)]
    components: usize,
    /// Dimension.
    #[arg(long, default_value_t = 4)]
    dim: usize,
    /// Component standard deviation.
    #[arg(long, default_value_t = 0.5)]
    s: f64,
    /// Epochs of N steps.
    #[arg(long, default_value_t = 100)]
    epochs: usize,
    /// Covariance family: full or diagonal.
    #[arg(long, default_value = "full")]
    family: String,
    /// Gibbs sweeps kept after 1000 burn-in sweeps (only with --diagnostics; default 10000).
    #[arg(long)]
    gibbs_samples: Option<usize>,
    /// Seed of the synthetic data, the public initialisation and the Gibbs chain.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Seed the privacy noise (reproducible experiments only; default OS entropy).
    #[arg(long)]
    noise_seed: Option<u64>,
    /// Initial posterior precision of each component (public, data-independent; 1 = the prior).
    #[arg(long, default_value_t = 1.0)]
    init_precision: f64,
    /// Also run the Gibbs ground truth on the same points and print the data owner's diagnostics
    /// (Gibbs comparison, timings, clip counts): data-dependent, not noised, marked
    /// `"private": false`.
    #[arg(long)]
    diagnostics: bool,
    /// Print one JSON object (always on; kept for the documented command line).
    #[arg(long)]
    json: bool,
    /// DP-SEP with a Poisson batch of expected size S per step (rate S/n, ceil(n/S) steps per
    /// epoch, per-step accounting). Only with --epsilon. Default with --epsilon: the recommended
    /// S, capped at n/2.
    #[arg(long)]
    batch_size: Option<usize>,
    /// 002's DP-SEP algorithm: one point per step (replace-one neighbours, default gamma 1,
    /// C = 1) instead of the recommended Poisson minibatch. Only with --epsilon; not with
    /// --batch-size.
    #[arg(long)]
    one_record: bool,
    /// The accountant that calibrates the noise and accounts the run: rdp (default), pld (the
    /// least noise; Poisson batches only, refused with --one-record), moments, zcdp, advanced
    /// or linear (docs/accountant.md, section 11). Only with --epsilon.
    #[arg(long)]
    accountant: Option<String>,
    /// What DP-SEP's wall clips: value (each point's factor, 002's), innovation (the factor
    /// minus the shared factor) or whitened (the innovation in the posterior's metric, the clip
    /// from the budget unless --clip is given; docs/dp-sep.md, "Whitened clipping"). Default:
    /// the recommendation's (dp_sep::recommended::PRIVATE_MOG). Only with --epsilon; not with
    /// --one-record.
    #[arg(long)]
    clipping: Option<String>,
    /// Run even if epochs x n exceeds dp_sep::limits::MAX_STEPS (10^8 steps).
    #[arg(long)]
    allow_long_run: bool,
    /// After the private run, also run NON-private clipped SEP from the same public seed and
    /// initialisation with the same C, gamma and epochs (one uniformly drawn point per step, order
    /// seeded by --seed, no noise) and report under "diagnostics" (`"private": false`) the measured
    /// KL[q_SEP || p_DPSEP] over the component means, the effective noise levels s1, s2 of
    /// 002's Thm. 4.1 and its bound (corrected and as printed). The comparison reads the data
    /// without noise: for the data owner / experimenter only, not for publication. Only with
    /// --epsilon.
    #[arg(long)]
    compare_sep: bool,
}

/// Default `--delta`.
const DEFAULT_DELTA: f64 = 1e-5;
/// Default `--gibbs-samples`.
const DEFAULT_GIBBS_SAMPLES: usize = 10_000;
/// Gibbs burn-in sweeps.
const BURN_IN: usize = 1000;

fn main() -> ExitCode {
    let args = Args::parse();
    common::finish(run(&args))
}

/// Every flag checked before anything is allocated or run.
fn check(args: &Args) -> Result<Family, ExampleError> {
    let family = match args.family.as_str() {
        "full" => Family::Full,
        "diagonal" => Family::Diagonal,
        other => {
            return Err(ExampleError::usage(
                format!("--family {}", limits::excerpt(other)),
                "must be full or diagonal",
            ));
        }
    };
    match args.epsilon {
        Some(epsilon) => {
            common::privacy_flags(epsilon, args.delta.unwrap_or(DEFAULT_DELTA))?;
            if args.one_record && args.batch_size.is_some() {
                return Err(ExampleError::usage(
                    "--one-record",
                    "cannot be combined with --batch-size: choose one point or a batch per step",
                ));
            }
            if args.one_record && args.clipping.is_some() {
                return Err(ExampleError::usage(
                    "--clipping",
                    "cannot be combined with --one-record (002's algorithm clips each point's factor)",
                ));
            }
            // The clipping that will run: given, 002's with --one-record, else the recommendation.
            let clipping = match (args.clipping.as_deref(), args.one_record) {
                (Some(c), _) => parse_clipping(c)?,
                (None, true) => Clipping::Value,
                (None, false) => PRIVATE_MOG.clipping,
            };
            if clipping == Clipping::Whitened && args.compare_sep {
                return Err(ExampleError::usage(
                    "--compare-sep",
                    "its noise mapping assumes noise isotropic in the natural parameters; not with \
                     whitened clipping (the default: pass --clipping value or innovation, or \
                     --one-record, to compare)",
                ));
            }
        }
        None => {
            needs(args.clipping.is_some(), "--clipping", "--epsilon")?;
            needs(args.one_record, "--one-record", "--epsilon")?;
            needs(args.accountant.is_some(), "--accountant", "--epsilon")?;
            needs(args.batch_size.is_some(), "--batch-size", "--epsilon")?;
            needs(args.delta.is_some(), "--delta", "--epsilon")?;
            needs(args.noise_seed.is_some(), "--noise-seed", "--epsilon")?;
            needs(args.compare_sep, "--compare-sep", "--epsilon")?;
        }
    }
    if let Some(a) = args.accountant.as_deref() {
        parse_accountant(a)?;
    }
    if let Some(b) = args.batch_size {
        at_least_one("--batch-size", b)?;
        if b > args.n {
            return Err(ExampleError::usage(
                format!("--batch-size {b}"),
                "must be <= --n (the Poisson rate S/n must be <= 1)",
            ));
        }
    }
    needs(
        args.gibbs_samples.is_some() && !args.diagnostics,
        "--gibbs-samples",
        "--diagnostics",
    )?;
    at_least_one("--n", args.n)?;
    at_least_one("--components", args.components)?;
    at_least_one("--dim", args.dim)?;
    at_least_one("--epochs", args.epochs)?;
    positive("--s", args.s)?;
    positive("--init-precision", args.init_precision)?;
    if let Some(c) = args.clip {
        positive("--clip", c)?;
    }
    if let Some(g) = args.gamma {
        positive("--gamma", g)?;
    }
    let gibbs = args.gibbs_samples.unwrap_or(DEFAULT_GIBBS_SAMPLES);
    if args.diagnostics {
        at_least_one("--gibbs-samples", gibbs)?;
    }
    // Memory, estimated from the flags before anything is allocated.
    let per = match family {
        Family::Full => (args.dim as u128).saturating_mul(args.dim as u128 + 1),
        Family::Diagonal => 2 * args.dim as u128,
    };
    limits::check_bytes(
        &format!("--components {} and --dim {}", args.components, args.dim),
        &format!("the natural parameters ({} family)", args.family),
        limits::f64_bytes((args.components as u128).saturating_mul(per))
            .saturating_mul(u128::from(limits::PARAMETER_COPIES)),
        limits::MAX_MODEL_BYTES,
    )
    .map_err(ExampleError::from)?;
    limits::check_bytes(
        &format!("--n {} with --dim {}", args.n, args.dim),
        "the generated points (kept twice: generator and privacy wall)",
        limits::f64_bytes((args.n as u128).saturating_mul(args.dim as u128 + 1)).saturating_mul(2),
        limits::MAX_DATA_BYTES,
    )
    .map_err(ExampleError::from)?;
    // Run time: steps of the fit and of the Gibbs chain.
    limits::check_steps("--epochs", args.epochs, args.n, args.allow_long_run)
        .map_err(ExampleError::from)?;
    if args.diagnostics {
        limits::check_steps(
            "--gibbs-samples (plus 1000 burn-in)",
            gibbs.saturating_add(BURN_IN),
            args.n.saturating_mul(args.components),
            args.allow_long_run,
        )
        .map_err(ExampleError::from)?;
    }
    Ok(family)
}

/// Parses `--clipping`.
fn parse_clipping(text: &str) -> Result<Clipping, ExampleError> {
    text.parse::<Clipping>().map_err(|_| {
        ExampleError::usage(
            format!("--clipping {}", limits::excerpt(text)),
            "must be value, innovation or whitened",
        )
    })
}

/// Parses `--accountant` (`rdp`, `pld`, `moments`, `zcdp`, `advanced`, `linear`).
fn parse_accountant(text: &str) -> Result<AccountantKind, ExampleError> {
    text.trim().parse::<AccountantKind>().map_err(|_| {
        ExampleError::usage(
            format!("--accountant {}", limits::excerpt(text)),
            "must be rdp, pld, moments, zcdp, advanced or linear",
        )
    })
}

fn run(args: &Args) -> Result<serde_json::Value, ExampleError> {
    let family = check(args)?;
    let delta = args.delta.unwrap_or(DEFAULT_DELTA);
    let gibbs_samples = args.gibbs_samples.unwrap_or(DEFAULT_GIBBS_SAMPLES);
    let mut rng = ChaCha20Rng::seed_from_u64(args.seed);
    let data = try_generate(args.n, args.components, args.dim, args.s, &mut rng)?;
    let model = MogModel::new(args.components, args.dim, args.s, family)?;

    // Public initialisation: posterior N(u_j, I / p) with u_j ~ N(0, I) and p = --init-precision.
    let n = args.n;
    let mut state = public_start(&model, n, args.init_precision, &mut rng)?;
    let private = private_settings(args, n)?;
    let gamma = match private {
        Some(p) => p.gamma,
        None => args.gamma.unwrap_or(n as f64),
    };
    let mut model = model;
    // The public starting point, kept for --compare-sep's non-private run (cloning consumes no
    // randomness: the private run and the Gibbs chain see the same streams as without the flag).
    let start = args.compare_sep.then(|| (model.clone(), state.clone()));
    let bar = common::progress(args.epochs);
    common::stop_on_ctrl_c()?;
    let mut observer = |done: usize, _: usize| {
        bar.set_position(done as u64);
        common::keep_going()
    };
    let t1 = Instant::now();
    let (counts, privacy) = match (args.epsilon, private) {
        (Some(epsilon), Some(settings)) => {
            let clip = settings.clip;
            let rng_policy = args
                .noise_seed
                .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed });
            let batching = settings.batching;
            // N is the generator's configured size (public), not a count of the points.
            let plan = WallPlan::builder()
                .population(n)
                .dim(dp_sep::SepModel::dim(&model))
                .budget(epsilon, delta)
                .clip(clip)
                .steps(dp_sep::planned_steps(batching, args.epochs, n, true)?)
                .sampling(dp_sep::sampling_for(batching, n).map_err(flagged("--batch-size"))?)
                .rng(rng_policy)
                .accountant(
                    args.accountant
                        .as_deref()
                        .map(parse_accountant)
                        .transpose()?
                        .unwrap_or_default(),
                )
                .build()
                .map_err(|e| match e {
                    e @ SepError::AccountantUnsupported { .. } => flagged("--accountant")(e),
                    e => flagged("--epsilon / --delta")(e),
                })?;
            let mut wall = FactorWall::new(data.points.clone(), &plan)
                .map_err(flagged("--epsilon / --delta"))?;
            let config = DpSepConfig::builder()
                .gamma(gamma)
                .epochs(args.epochs)
                .batching(batching)
                .clipping(settings.clipping)
                .build()
                .map_err(flagged("--gamma / --epochs"))?;
            let (report, diagnostics) =
                run_dp_sep_observed(&mut model, &mut state, &mut wall, &config, &mut observer)
                    .map_err(flagged("--gamma / --clip"))?;
            (diagnostics.counts, Some((report, rng_policy.describe())))
        }
        _ => {
            let config = SepConfig::builder()
                .gamma(gamma)
                .clip_norm(args.clip)
                .build()
                .map_err(flagged("--gamma / --clip"))?;
            let c = run_sep_observed(
                &mut model,
                &mut state,
                &data.points,
                &config,
                args.epochs,
                SamplingScheme::ShuffledEpoch,
                &mut rng,
                &mut observer,
            )
            .map_err(flagged("--gamma / --clip"))?;
            (c, None)
        }
    };
    bar.finish_and_clear();
    let seconds = t1.elapsed().as_secs_f64();
    // Non-private runs only: there every step is one record, so `failed_tilted == steps` means
    // nothing was learnt. In a private run `failed_tilted` counts records replaced inside the
    // wall (several per step with minibatches) and is a non-private diagnostic: refusing to print
    // the (already charged, post-processed) result because of it would reveal it.
    if privacy.is_none() && counts.steps > 0 && counts.failed_tilted == counts.steps {
        // Nothing was learnt from the data: do not print a result as if something had been.
        return Err(SepError::NoUsableStep {
            steps: counts.steps,
        }
        .into());
    }
    let mut posterior = state.posterior();
    if !dp_sep::SepModel::is_valid(&model, &posterior) {
        dp_sep::SepModel::repair(&model, &mut posterior);
    }
    let estimate = model.moments(&posterior)?;
    if estimate
        .iter()
        .any(|m| m.mean.iter().chain(m.cov.iter()).any(|v| !v.is_finite()))
    {
        return Err(SepError::InvalidNaturalParameters(
            "the fitted posterior has a non-finite mean or covariance; no result",
        )
        .into());
    }
    // The generating means are a public parameter of the synthetic generator (drawn from the
    // public seed before any point), so comparing the released posterior with them is
    // post-processing.
    let generating: Vec<Moments> = data
        .means
        .iter()
        .map(|m| Moments {
            mean: DVector::from_column_slice(m),
            cov: DMatrix::identity(args.dim, args.dim),
        })
        .collect();
    let vs_generating = compare(&generating, &estimate)?;
    let mut json = serde_json::json!({
        "epsilon": args.epsilon.map_or(serde_json::Value::from("inf"), serde_json::Value::from),
        "method": if args.epsilon.is_some() { "dp-sep" } else if args.clip.is_some() { "sep-clipped" } else { "sep" },
        "clip": private.map(|p| p.clip).or(args.clip).map_or(serde_json::Value::from("none"), finite),
        "gamma": gamma,
        "n": n,
        "components": args.components,
        "dim": args.dim,
        "family": args.family,
        "epochs": args.epochs,
        "batch_size": match private.map(|p| p.batching) {
            None | Some(Batching::OneRecord) => serde_json::Value::from("one record"),
            Some(batch) => serde_json::Value::from(batch.expected_batch_size()),
        },
        "init_precision": args.init_precision,
        "posterior_means": estimate.iter().map(|m| m.mean.as_slice().to_vec()).collect::<Vec<_>>(),
        "f_norm_vs_generating_means": finite(vs_generating.f_norm),
    });
    if let Some((report, rng)) = &privacy {
        json["delta"] = delta.into();
        json["population"] = report.population.into();
        json["noise_multiplier"] = finite(report.noise_multiplier);
        json["theta_noise_std"] = finite(report.theta_noise_std);
        json["epsilon_accounted"] = finite(report.epsilon);
        json["accountant"] = report.accountant.name().into();
        json["noise_rng"] = rng.clone().into();
        if let Some(settings) = private {
            json["recommended_settings"] = settings.note("PRIVATE_MOG").into();
        }
    }
    if args.diagnostics {
        // The Gibbs ground truth is fitted on the same (private) points: its comparison with the
        // private posterior is a diagnostic, computed only on request.
        let t0 = Instant::now();
        let truth = gibbs_posterior(
            &data.points,
            &data.means,
            args.s,
            GibbsConfig::builder()
                .burn_in(BURN_IN)
                .samples(gibbs_samples)
                .build()?,
            &mut rng,
        )?;
        let gibbs_seconds = t0.elapsed().as_secs_f64();
        let acc = compare(&truth, &estimate)?;
        json["diagnostics"] = serde_json::json!({
            "private": false,
            "note": "data-dependent and not noised (the Gibbs run uses the same private points): for the data owner, not for publication",
            "f_norm": finite(acc.f_norm),
            "f_norm_cov": finite(acc.f_norm_cov),
            "kl_proxy": finite(acc.kl_proxy),
            "seconds": seconds,
            "gibbs_seconds": gibbs_seconds,
            "gibbs_samples": gibbs_samples,
            "counts": counts,
        });
    }
    if let (Some(start), Some((report, _))) = (start, &privacy) {
        let fields = compare_sep(args, start, &data.points, gamma, &estimate, report)?;
        common::add_diagnostics(&mut json, fields);
    }
    Ok(json)
}

/// `--compare-sep`: non-private clipped SEP from the private run's public starting point, and
/// the measured KL beside 002's Thm. 4.1. The theorem's Gaussian is the mixture's component
/// means: `J` independent `dim`-dimensional Gaussians, joined into one block-diagonal Gaussian
/// of dimension `J dim` (diagonal for `--family diagonal`).
///
/// # Privacy
/// Reads the points without noise: the result goes only into the non-private diagnostics.
fn compare_sep(
    args: &Args,
    (mut model, mut state): (MogModel, SepState),
    points: &[Vec<f64>],
    gamma: f64,
    private: &[Moments],
    report: &dp_sep::DpSepReport,
) -> Result<serde_json::Value, ExampleError> {
    use dp_sep::kl_bound as kb;
    let clip = private_settings(args, args.n)?.map_or(1.0, |p| p.clip);
    let config = SepConfig::builder()
        .gamma(gamma)
        .clip_norm(Some(clip))
        .build()
        .map_err(flagged("--compare-sep"))?;
    // Its visiting order: a ChaCha20 seeded with the public --seed.
    let mut rng = ChaCha20Rng::seed_from_u64(args.seed);
    let t0 = Instant::now();
    let counts = run_sep_observed(
        &mut model,
        &mut state,
        points,
        &config,
        args.epochs,
        SamplingScheme::UniformSingle,
        &mut rng,
        &mut |_, _| common::keep_going(),
    )
    .map_err(flagged("--compare-sep"))?;
    let seconds = t0.elapsed().as_secs_f64();
    let mut posterior = state.posterior();
    if !dp_sep::SepModel::is_valid(&model, &posterior) {
        dp_sep::SepModel::repair(&model, &mut posterior);
    }
    let sep = model
        .moments(&posterior)
        .map_err(flagged("--compare-sep"))?;
    // Noise on the posterior's natural parameters: S = 1 or the batch size, damping S gamma / N^2.
    let n = report.population as f64;
    let theta_std = kb::posterior_noise_std(
        report.theta_noise_std,
        (report.expected_batch_size * gamma / (n * n)).min(1.0),
        report.releases,
    )
    .map_err(flagged("--compare-sep"))?;
    let joint = |ms: &[Moments]| {
        let d = args.dim;
        let k = ms.len();
        let mut mean = DVector::zeros(k * d);
        let mut cov = DMatrix::zeros(k * d, k * d);
        for (j, m) in ms.iter().enumerate() {
            mean.rows_mut(j * d, d).copy_from(&m.mean);
            cov.view_mut((j * d, j * d), (d, d)).copy_from(&m.cov);
        }
        (mean, cov)
    };
    let (mu_q, sigma_q) = joint(&sep);
    let (mu_p, sigma_p) = joint(private);
    let flag = || flagged("--compare-sep");
    let (kl, levels, bound) = match args.family.as_str() {
        "diagonal" => {
            let (vq, vp) = (
                sigma_q.diagonal().as_slice().to_vec(),
                sigma_p.diagonal().as_slice().to_vec(),
            );
            let kl = kb::gaussian_kl_diagonal(mu_q.as_slice(), &vq, mu_p.as_slice(), &vp)
                .map_err(flag())?;
            let levels =
                kb::delta_method_noise_diagonal(mu_q.as_slice(), &vq, theta_std).map_err(flag())?;
            let x = vp
                .iter()
                .zip(&vq)
                .map(|(p, q)| p / q)
                .fold(f64::INFINITY, f64::min);
            let bound = common::kl_bound_json(
                kl,
                x,
                |a| kb::kl_tail_bound_diagonal(levels.s1, levels.s2, &vq, a),
                |a, tau, upper| {
                    kb::theorem_4_1_as_printed_diagonal(levels.s1, levels.s2, &vq, a, tau, upper)
                },
            );
            (kl, levels, bound)
        }
        _ => {
            let kl = kb::gaussian_kl(&mu_q, &sigma_q, &mu_p, &sigma_p).map_err(flag())?;
            let blocks: Vec<_> = sep
                .iter()
                .map(|m| (m.mean.clone(), m.cov.clone()))
                .collect();
            let levels = kb::delta_method_noise_full(&blocks, theta_std).map_err(flag())?;
            let x = kb::one_plus_lambda_min(&sigma_q, &sigma_p).map_err(flag())?;
            let bound = common::kl_bound_json(
                kl,
                x,
                |a| kb::kl_tail_bound(levels.s1, levels.s2, &sigma_q, a),
                |a, tau, upper| {
                    kb::theorem_4_1_as_printed(levels.s1, levels.s2, &sigma_q, a, tau, upper)
                },
            );
            (kl, levels, bound)
        }
    };
    Ok(serde_json::json!({
        "kl_dpsep_to_sep": finite(kl),
        "kl_over": format!("the {} component means' Gaussians (q = clipped SEP, p = DP-SEP), joined block-diagonally: dimension {}", args.components, args.components * args.dim),
        "s1": finite(levels.s1),
        "s2": finite(levels.s2),
        "kl_first_order_expected": finite(levels.first_order_kl),
        "theta_noise_std_posterior": finite(theta_std),
        "noise_mapping": "first-order (delta-method) approximation: s1, s2 match E[e^T P e] and E||P^1/2 E P^1/2||_F^2 of DP-SEP's accumulated natural-parameter noise (dp_sep::kl_bound::delta_method_noise_*); clipping and repair ignored",
        "kl_bound": bound,
        "sep_run": {
            "method": "sep-clipped",
            "clip": clip,
            "gamma": gamma,
            "epochs": args.epochs,
            "sampling": "uniform_single",
            "seconds": seconds,
            "counts": counts,
        },
    }))
}

/// The effective private settings (`None` for a non-private run): the caller's flags where given,
/// otherwise 002's (with `--one-record`: gamma 1, C = 1) or the recommended ones
/// (`dp_sep::recommended::PRIVATE_MOG`).
fn private_settings(args: &Args, n: usize) -> Result<Option<Resolved>, ExampleError> {
    if args.epsilon.is_none() {
        return Ok(None);
    }
    let overrides = Overrides {
        batch_size: args.batch_size,
        gamma: args.gamma,
        clip: args.clip.or(args.one_record.then_some(1.0)),
        one_record: args.one_record,
    };
    let Some(epsilon) = args.epsilon else {
        return Ok(None);
    };
    let clipping = args.clipping.as_deref().map(parse_clipping).transpose()?;
    let budget = dp_accountant::Budget::new(epsilon, args.delta.unwrap_or(DEFAULT_DELTA))
        .map_err(|e| flagged("--epsilon / --delta")(SepError::from(dp_core::CoreError::from(e))))?;
    let accountant = args
        .accountant
        .as_deref()
        .map(parse_accountant)
        .transpose()?
        .unwrap_or_default();
    PRIVATE_MOG
        .resolve_for_budget(n, args.epochs, &overrides, clipping, &budget, accountant)
        .map(Some)
        .map_err(flagged("--batch-size / --n / --epochs / --clipping"))
}
