//! The SVI driver (003 Algorithm 2): sample, release through the wall, M-step, damp, repeat.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use dp_accountant::AccountantConfig;
use dp_core::{PrivacyWall, RecordSource, RngPolicy, SamplingScheme, WallBuilder};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use super::pool::ScratchPool;
use super::result::process_cpu_seconds;
use super::{
    EngineError, Fit, FitDiagnostics, FitResult, IterationDiagnostics, IterationReport, Privacy,
    PrivacySummary, Stop, SviConfig, VipsModel,
};

/// Bounds at or above this are "no clipping" and only allowed in non-private runs.
const UNBOUNDED: f64 = 1e300;

/// Fits `model` to `records` by (private) stochastic variational inference (003 Algorithm 2).
///
/// The records move into a dp-core [`PrivacyWall`] with Poisson sampling at rate
/// `q = S / N` (`S` = the expected batch size, `N` the declared public population,
/// [`crate::engine::SviConfigBuilder::population`]). Each iteration `t`: the wall draws a Poisson batch,
/// runs the model's E-step on every sampled record in parallel (rayon), clips each record's
/// statistic block-wise to the declared bounds, sums, adds Gaussian noise (none when
/// non-private), divides by the public `S`, and charges the ledger one Poisson-subsampled
/// Gaussian event; the M-step forms `nu + N s~` and the global parameters are damped with
/// `rho_t`.
///
/// With [`crate::engine::Batching::FixedSize`]
/// ([`crate::engine::SviConfigBuilder::batching`]) the wall instead holds `N` public slots
/// (dp-core's `population_slots`) and draws exactly `S` of them uniformly without replacement;
/// the noise std is `sigma` times the replace-one sensitivity (twice the bound), the sum is
/// divided by the exact `S`, and the ledger is charged one fixed-size subsampled Gaussian event
/// (`m = S` of `N`) per iteration. `observer` is called after every iteration with the (private) report and the current
/// global parameters (held-out evaluation, progress bars).
///
/// Returns a [`Fit`]: the private [`FitResult`] (parameters, privacy summary and ledger, trace of
/// `rho` and epsilon) and, apart, the non-private [`FitDiagnostics`] (realised record count,
/// clip counts, timings).
///
/// Stopping: a fixed number of iterations ([`Stop::Iterations`], or `ceil(passes / q)` for
/// [`Stop::Passes`]); or, with a given noise multiplier, as soon as the next release would exceed
/// the budget ([`Stop::Budget`]).
///
/// # Errors
/// [`EngineError::InvalidParameter`] / [`EngineError::Empty`] for bad settings or no records;
/// [`EngineError::PopulationNotDeclared`] for a private Poisson run without a public population;
/// [`EngineError::InvalidRecords`] if the model's [`VipsModel::check_records`] rejects a record
/// (before any release);
/// [`EngineError::Wall`] if the wall refuses (bad block, calibration impossible, a malformed
/// contribution, a release over budget in a fixed-iteration run) or a private run declares an
/// unbounded block; [`EngineError::Accountant`] for accountant failures;
/// [`EngineError::TooManyIterations`] if the run would plan more than
/// [`crate::limits::MAX_ITERATIONS`] iterations without
/// [`crate::engine::SviConfigBuilder::allow_long_run`] (checked before anything is allocated);
/// [`EngineError::Interrupted`] once the configuration's [`crate::engine::CancelToken`] is set;
/// any error of the model's own steps (typically [`EngineError::Model`]). A record the E-step
/// rejects ([`crate::engine::RecordError`]) contributes zero to a private release (counted in
/// [`FitDiagnostics::records_replaced`]) and fails a non-private fit with [`EngineError::Wall`].
///
/// # Privacy
/// Under add/remove-one neighbouring (Poisson sampling; replace-one for fixed-size sampling, over
/// the `N` public slots), the released sequence and the whole [`FitResult`] computed
/// from it and from public settings are `(epsilon, delta)`-DP with the epsilon the ledger
/// reports, which never exceeds the configured budget. The sampling rate and the M-step use the
/// declared public population, never the number of records (under Poisson sampling), and the
/// result does not contain that number. [`FitDiagnostics`] (realised count, clip counts, timings) is not private. A
/// `noise_seed` makes the noise reproducible and gives no privacy against whoever holds it.
///
/// # Example
/// ```
/// use vips_models::lda::corpus::SyntheticConfig;
/// use vips_models::engine::{fit, Privacy, Stop, SviConfig};
/// use vips_models::lda::{Lda, LdaConfig};
/// let data = SyntheticConfig::builder().num_docs(200).vocab_size(40).num_topics(3).doc_length(30).build()?
///     .generate()?;
/// let cfg = LdaConfig::builder(3, 40).doc_length(Some(30)).clip_scale(0.5).build()?;
/// let model = Lda::new(cfg);
/// let docs = data.corpus.into_docs();
/// let svi = SviConfig::builder()
///     .expected_batch_size(50.0)
///     .stop(Stop::Iterations { iterations: 5 })
///     .privacy(Privacy::Target { epsilon: 1.0, delta: 1e-5 })
///     .noise_seed(Some(7))
///     .population(Some(200)) // the generator's configured size: public
///     .build()?;
/// let fitted = fit(&model, docs, &svi, |_, _| {})?;
/// assert!(fitted.result.privacy.epsilon.unwrap() <= 1.0);
/// assert_eq!(fitted.result.trace.len(), 5);
/// assert_eq!(fitted.diagnostics.realised_population, 200); // not private
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit<M: VipsModel>(
    model: &M,
    records: Vec<M::Record>,
    config: &SviConfig,
    observer: impl FnMut(&IterationReport, &M::Global),
) -> Result<Fit<M::Global>, EngineError> {
    let realised = records.len();
    if realised == 0 {
        return Err(EngineError::Empty("no records"));
    }
    model.check_records(&records)?;
    run(
        model,
        PrivacyWall::builder(records),
        realised,
        config,
        observer,
    )
}

/// [`fit`] over records **read from `source`** per batch instead of held in memory (a
/// [`crate::store::RecordStore`] through a model's source, e.g.
/// [`crate::lda::Lda::store_source`]): each iteration the wall draws its batch of record
/// indices and reads only those records ([`dp_core::PrivacyWall::from_source`]). Memory is
/// the batch plus the model, not the records.
///
/// Everything else is [`fit`]'s: with the same records, settings and seeds the result is
/// identical to [`fit`] over the same records in a `Vec` (the same draws, the same sums, the
/// same noise). [`VipsModel::check_records`] is not run (it would read every record): the
/// source checks each record when it reads it, and a record it cannot decode contributes zero
/// to a private release (counted in [`FitDiagnostics::records_replaced`]) and fails a
/// non-private fit.
///
/// # Errors
/// As [`fit`]; [`EngineError::Wall`] with [`dp_core::CoreError::Source`] when a read fails
/// (the fit stops; that release is charged, nothing of it is released).
///
/// # Privacy
/// As [`fit`]. The source's record count is the realised count: private under add/remove-one,
/// so a private Poisson fit requires the declared public population
/// ([`crate::engine::SviConfigBuilder::population`]) and never uses the count in a released
/// number. It appears only in the non-private [`FitDiagnostics::realised_population`].
///
/// # Example
/// See [`crate::lda::Lda::store_source`].
pub fn fit_source<M, S>(
    model: &M,
    source: S,
    config: &SviConfig,
    observer: impl FnMut(&IterationReport, &M::Global),
) -> Result<Fit<M::Global>, EngineError>
where
    M: VipsModel,
    S: RecordSource<Record = M::Record> + 'static,
{
    let realised = source.len();
    if realised == 0 {
        return Err(EngineError::Empty("no records"));
    }
    run(
        model,
        PrivacyWall::from_source(source),
        realised,
        config,
        observer,
    )
}

/// The SVI loop over a wall built from `builder` (records in memory or a source).
fn run<M: VipsModel>(
    model: &M,
    builder: WallBuilder<M::Record>,
    realised: usize,
    config: &SviConfig,
    mut observer: impl FnMut(&IterationReport, &M::Global),
) -> Result<Fit<M::Global>, EngineError> {
    let population = config.public_population(realised)?;
    let rate = config.sampling_rate(population)?;
    let scheme = config.sampling_scheme(population)?;
    let (spec, blocks) = model.release_spec()?;
    let private = !matches!(config.privacy, Privacy::NonPrivate);
    if private && let Some(b) = spec.blocks().iter().find(|b| b.bound() >= UNBOUNDED) {
        return Err(EngineError::UnboundedBlock {
            model: model.name().to_string(),
            block: b.name().to_string(),
        });
    }
    let planned = config.iterations(population)?;
    // `iterations()` is `None` only for `Stop::Budget`, whose cap then bounds the run.
    let max_iterations = match (planned, config.stop) {
        (Some(n), _) => Some(n),
        (None, Stop::Budget { max_iterations }) => Some(max_iterations),
        (None, _) => None,
    }
    .ok_or(EngineError::Empty(
        "no iteration count for this stopping rule",
    ))?;
    let policy = match config.noise_seed {
        Some(seed) => RngPolicy::Seeded { seed },
        None => RngPolicy::OsEntropy,
    };
    let builder = builder
        .accountant_config(AccountantConfig::default().with_accountant(config.accountant()))
        .sampling(scheme)
        .preceded_by(config.preceded_by.clone())
        .rng(policy);
    let builder = match scheme {
        SamplingScheme::Poisson { .. } => builder
            .public_population_size(population)
            .require_public_population(),
        // replace-one: the N public slots (the records fill them in order when there are at
        // most N; no randomness is drawn when there are exactly N).
        _ => builder.population_slots(population),
    };
    let builder = match config.privacy {
        Privacy::NonPrivate => builder.non_private(),
        Privacy::Target { epsilon, delta } => builder
            .epsilon_delta(epsilon, delta)
            .calibrate_for_releases(max_iterations),
        Privacy::NoiseMultiplier {
            noise_multiplier,
            epsilon,
            delta,
        } => builder
            .epsilon_delta(epsilon, delta)
            .noise_multiplier(noise_multiplier),
    };
    let mut wall = builder.build()?;
    let expected_batch = wall.expected_batch_size();
    let delta = wall.budget().map(|b| b.delta());

    let mut init_rng = ChaCha8Rng::seed_from_u64(config.init_seed);
    let mut global = model.init_global(&mut init_rng)?;
    let pool = ScratchPool::new();
    let start = Instant::now();
    let cpu_start = process_cpu_seconds();
    let mut trace = Vec::new();
    let mut diag_trace = Vec::new();
    let mut clipped_total = 0u64;
    let mut replaced_total = 0u64;
    let processed = AtomicU64::new(0);
    let bar = if config.progress_bar && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(max_iterations);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} iterations (eta {eta}) {msg}",
        ) {
            bar.set_style(style);
        }
        bar.set_prefix(model.name().to_string());
        Some(bar)
    } else {
        None
    };
    // Natural parameters the model computed in its last `after_blend_natural`, for this iteration.
    let mut carried: Option<M::Natural> = None;
    for t in 0..max_iterations {
        if config.cancel.is_cancelled() {
            if let Some(bar) = &bar {
                bar.abandon_with_message("interrupted");
            }
            return Err(EngineError::Interrupted { completed: t });
        }
        if matches!(config.stop, Stop::Budget { .. }) && !wall.can_release()? {
            break;
        }
        let natural = match carried.take() {
            Some(natural) => natural,
            None => model.expected_natural(&global)?,
        };
        let release = wall.release(&spec, |record, buffer| {
            processed.fetch_add(1, Ordering::Relaxed);
            pool.with(
                || model.new_scratch(),
                |scratch| {
                    if let Err(e) =
                        model.record_statistic(&blocks, &natural, record, scratch, buffer)
                    {
                        buffer.reject_record(e.reason());
                    }
                },
            )
        })?;
        let rho = config.step.rho(t);
        let release_diagnostics = release.diagnostics();
        if model.fuses_m_step() {
            model.blend_release(
                &mut global,
                &blocks,
                &release,
                &natural,
                population as f64,
                rho,
            )?;
            wall.recycle(release);
            drop(natural);
        } else {
            let target = model.global_target(&blocks, &release, &natural, population as f64)?;
            // Large models hold several d x d matrices: drop each as soon as it is used.
            // Its memory serves the next release (small and medium blocks; large ones are freed).
            wall.recycle(release);
            drop(natural);
            model.blend(&mut global, &target, rho);
            drop(target);
        }
        carried = model.after_blend_natural(&mut global)?;
        clipped_total += release_diagnostics.clipped_records;
        replaced_total += release_diagnostics.replaced_records;
        let report = IterationReport {
            iteration: t,
            rho,
            epsilon_spent: if private {
                Some(wall.spent_epsilon()?)
            } else {
                None
            },
        };
        let diag = IterationDiagnostics {
            iteration: t,
            clipped: release_diagnostics.clipped_records,
            replaced: release_diagnostics.replaced_records,
            elapsed_seconds: start.elapsed().as_secs_f64(),
        };
        if config.progress {
            eprintln!(
                "[{}] iteration {}/{} rho {:.5} clipped {} epsilon {}",
                model.name(),
                t + 1,
                max_iterations,
                rho,
                diag.clipped,
                report
                    .epsilon_spent
                    .map_or("inf".to_string(), |e| format!("{e:.4}"))
            );
        }
        if let Some(bar) = &bar {
            bar.inc(1);
            if let Some(e) = report.epsilon_spent {
                bar.set_message(format!("epsilon {e:.4}"));
            }
        }
        observer(&report, &global);
        trace.push(report);
        diag_trace.push(diag);
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = match (cpu_start, process_cpu_seconds()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let iterations = trace.len() as u64;
    let ledger = if private {
        Some(wall.ledger().clone())
    } else {
        None
    };
    let expected_records_processed = expected_batch * iterations as f64;
    Ok(Fit {
        result: FitResult {
            global,
            privacy: PrivacySummary {
                epsilon: if private {
                    Some(wall.spent_epsilon()?)
                } else {
                    None
                },
                delta,
                noise_multiplier: wall.noise_multiplier(),
                sampling_rate: rate,
                expected_batch_size: expected_batch,
                public_population: population,
                population_declared: config.population().is_some(),
                neighbouring: config.batching().neighbouring().name().into(),
                rng: policy.describe(),
                accountant: config.accountant(),
                ledger,
            },
            trace,
            iterations,
            expected_records_processed,
            sampling: config.batching(),
        },
        diagnostics: FitDiagnostics {
            realised_population: realised,
            records_clipped: clipped_total,
            records_replaced: replaced_total,
            trace: diag_trace,
            seconds,
            cpu_seconds,
            expected_records_processed,
            records_processed: processed.into_inner(),
        },
    })
}
