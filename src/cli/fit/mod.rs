//! `dp-bayes fit MODEL ...`: one module per model. Each builds its fit from the libraries'
//! public APIs and returns a [`Fitted`]; [`finish`] writes the files and prints the summary
//! with the keys every model shares. Adding a model is one module and one [`FitCommand`] arm.

mod blr;
mod blr_store;
mod lda;
mod lda_args;
mod lda_store;
mod linreg;
mod mog;
mod pbp;
mod sbn;
mod sbn_store;
mod uci;

pub(crate) use blr::{
    csv_scaling as blr_csv_scaling, libsvm_names as blr_libsvm_names,
    libsvm_scaling as blr_libsvm_scaling,
};

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use vips_models::engine::{Batching, CancelToken, Privacy, PrivacySummary, SviConfigBuilder};

use super::error::{CliError, ValueError, usage};
use super::io::{check_no_null, emit, num, out_dir, remove_stale, write_atomic};

/// The models `fit` knows.
#[derive(clap::Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per run
pub enum FitCommand {
    /// Bayesian linear regression (one release of X^T X, X^T y, y^T y) on a UCI split folder or
    /// a CSV file with a target column and declared public ranges.
    Linreg(linreg::Args),
    /// Bayesian logistic regression (Pólya-Gamma VB) on a CSV file with a label column or a
    /// sparse LIBSVM file of a declared public dimension.
    Blr(blr::Args),
    /// Bayesian logistic regression on a record store of labelled rows (`dp-bayes convert csv`
    /// or `convert libsvm`): rows read per batch, the schema from STORE.schema.json.
    BlrStore(blr_store::Args),
    /// LDA (VIPS) on raw text (public or privately selected vocabulary) or a UCI bag-of-words
    /// folder with a declared-public vocabulary.
    Lda(lda::Args),
    /// LDA (VIPS) on a record store of documents (`dp-bayes convert bow`): a corpus larger
    /// than memory, read per batch; the vocabulary is a public file.
    LdaStore(lda_store::Args),
    /// Sigmoid belief network (VIPS, Pólya-Gamma augmentation) on binarised IDX images (a file
    /// or an MNIST-style directory) or the embedded synthetic data.
    Sbn(sbn::Args),
    /// Sigmoid belief network on a record store of binary images (`dp-bayes convert idx`):
    /// images read per batch.
    SbnStore(sbn_store::Args),
    /// Mixture of Gaussians (SEP / DP-SEP) on a CSV of points or synthetic data.
    Mog(mog::Args),
    /// Probabilistic backpropagation (a Bayesian ReLU network; SEP / DP-SEP) on a UCI split
    /// folder.
    Pbp(pbp::Args),
}

/// The flags every `fit` shares: the privacy budget and the output.
#[derive(clap::Args, Debug)]
pub struct Common {
    /// Total epsilon (omit for a non-private fit: no noise, and the output says so).
    #[arg(long, value_parser = positive)]
    pub epsilon: Option<f64>,
    /// Total delta of a private fit (default 1e-5).
    #[arg(long, value_parser = open_unit)]
    pub delta: Option<f64>,
    /// Public population size N of the training set: a declared figure, never the count of the
    /// private rows. Required for private fits.
    #[arg(long, value_parser = count)]
    pub population: Option<usize>,
    /// The accountant that calibrates the noise and accounts the fit: rdp (default; pld for
    /// linreg, a single release), pld, moments, zcdp, advanced, linear. Private fits only.
    #[arg(long, value_parser = accountant)]
    pub accountant: Option<dp_accountant::AccountantKind>,
    /// Seed the noise on purpose (reproducible; no privacy against whoever knows the seed, and
    /// the output says so). Default: a CSPRNG seeded from the OS.
    #[arg(long)]
    pub noise_seed: Option<u64>,
    /// Output directory (created if needed); model.json, ledger.json and result.json are
    /// written there atomically.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write diagnostics.json and print the diagnostics: NOT private (realised counts,
    /// clip counts, timings), for the data owner only.
    #[arg(long)]
    pub diagnostics: bool,
    /// Print one compact JSON object.
    #[arg(long)]
    pub json: bool,
}

impl Common {
    /// Refuses flags that would have no effect; returns the privacy setting and the population
    /// the engine is given (declared, or `None` for a non-private fit without one).
    pub fn privacy(&self) -> Result<(Privacy, Option<usize>), CliError> {
        match self.epsilon {
            None => {
                for (set, flag) in [
                    (self.delta.is_some(), "--delta"),
                    (self.accountant.is_some(), "--accountant"),
                    (self.noise_seed.is_some(), "--noise-seed"),
                ] {
                    if set {
                        return Err(usage(
                            flag,
                            "has no effect without --epsilon (a non-private fit adds no noise)",
                        ));
                    }
                }
                Ok((Privacy::NonPrivate, self.population))
            }
            Some(epsilon) => {
                let n = self.population.ok_or_else(|| {
                    usage(
                        "--population",
                        "a private fit needs the public population size of the training set \
                         (a declared figure, never the count of the private rows)",
                    )
                })?;
                Ok((
                    Privacy::Target {
                        epsilon,
                        delta: self.delta.unwrap_or(1e-5),
                    },
                    Some(n),
                ))
            }
        }
    }
}

/// What a model's fit hands back to [`finish`].
pub struct Fitted {
    /// `"linreg"`, `"blr"`, ...
    pub model: &'static str,
    /// The saved model's JSON (with its `format_version`).
    pub model_json: String,
    /// The fit's privacy summary (holds the ledger).
    pub privacy: PrivacySummary,
    /// Releases.
    pub iterations: u64,
    /// Model dimension.
    pub dim: usize,
    /// Held-out metrics computed with public transforms (part of the private result), or a
    /// note why there are none.
    pub heldout: Value,
    /// Public settings of the model (prior, ranges source, ...).
    pub settings: Value,
    /// Non-private diagnostics (realised counts, clip counts, timings).
    pub diagnostics: Value,
    /// The batch regime of the release path ([`Batching::name`]): the engine's, or the
    /// DP-SEP wall's for a private mog / pbp fit; `None` for a non-private SEP fit (no batches).
    pub sampling: Option<&'static str>,
}

/// `--sampling` of the engine's stochastic fits (`fit lda|blr|sbn`).
#[derive(clap::Args, Debug)]
pub struct SamplingArg {
    /// Batch sampling: poisson (default; each record with probability S / N, add/remove-one
    /// neighbouring) or fixed (exactly S records without replacement, replace-one: twice the
    /// sensitivity, the fixed-size subsampled Gaussian event; every accountant, PLD included).
    /// Refused where it has no effect (a non-private fit whose batch is the whole population).
    #[arg(long, value_parser = sampling)]
    pub sampling: Option<Batching>,
}

impl SamplingArg {
    /// Gives the engine's builder the batching: a fixed-size batch of `batch` records or a
    /// Poisson batch of expected size `batch` (the default). Refuses `--sampling` where it has
    /// no effect (non-private and `batch >= population`: every record is taken under either
    /// regime) and a fixed-size batch that is not a whole number of records (`batch_flag`).
    pub fn apply(
        &self,
        builder: SviConfigBuilder,
        private: bool,
        batch: f64,
        population: f64,
        batch_flag: &'static str,
    ) -> Result<SviConfigBuilder, CliError> {
        let Some(regime) = self.sampling else {
            return Ok(builder.expected_batch_size(batch));
        };
        if !private && batch >= population {
            return Err(usage(
                "--sampling",
                "has no effect in a non-private full-batch fit (every record is taken under \
                 either regime)",
            ));
        }
        match regime {
            Batching::FixedSize { .. } => {
                if batch.fract() != 0.0 || batch < 1.0 {
                    return Err(usage(
                        batch_flag,
                        format!(
                            "must be a whole number of records >= 1 with --sampling fixed, got \
                             {batch}"
                        ),
                    ));
                }
                Ok(builder.batching(Batching::FixedSize {
                    batch_size: batch as usize,
                }))
            }
            _ => Ok(builder.expected_batch_size(batch)),
        }
    }
}

/// Parses `--sampling` (clap value parser): `poisson`, `fixed` or `fixed_size`.
///
/// # Errors
/// [`ValueError::Range`] for another name, `one_record` among them (DP-SEP's regime, not the
/// engine's).
pub fn sampling(s: &str) -> Result<Batching, ValueError> {
    match s.parse::<Batching>() {
        Ok(Batching::OneRecord) => Err(ValueError::Range(
            "one_record is DP-SEP's batching: use poisson or fixed",
        )),
        Ok(b) => Ok(b),
        Err(_) => Err(ValueError::Range(
            "expected `poisson` or `fixed` (`fixed_size`)",
        )),
    }
}

/// A Ctrl-C token for the engine (the fit stops before its next release; nothing is written).
pub fn ctrl_c_token() -> Result<CancelToken, CliError> {
    let token = CancelToken::new();
    let handle = token.clone();
    ctrlc::set_handler(move || handle.cancel())?;
    Ok(token)
}

/// Runs `fit`.
pub fn run(cmd: FitCommand) -> Result<(), CliError> {
    let (fitted, common) = match cmd {
        FitCommand::Linreg(args) => (linreg::fit(&args)?, args.common),
        FitCommand::Blr(args) => (blr::fit(&args)?, args.common),
        FitCommand::BlrStore(args) => (blr_store::fit(&args)?, args.common),
        FitCommand::Lda(args) => (lda::fit(&args)?, args.common),
        FitCommand::LdaStore(args) => (lda_store::fit(&args)?, args.common),
        FitCommand::Sbn(args) => (sbn::fit(&args)?, args.common),
        FitCommand::SbnStore(args) => (sbn_store::fit(&args)?, args.common),
        FitCommand::Mog(args) => (mog::fit(&args)?, args.common),
        FitCommand::Pbp(args) => (pbp::fit(&args)?, args.common),
    };
    finish(&fitted, &common)
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// The `format_version` of a model's JSON (1, or 2 for BLR and SBN): read from what is
/// written, so the summary cannot disagree with model.json.
fn model_format_version(model_json: &str) -> Result<u32, CliError> {
    #[derive(serde::Deserialize)]
    struct Head {
        format_version: u32,
    }
    serde_json::from_str::<Head>(model_json)
        .map(|h| h.format_version)
        .map_err(|e| {
            vips_models::saved::ModelFileError::Corrupt {
                path: "model.json (before writing)".into(),
                reason: format!("no format_version: {e}"),
            }
            .into()
        })
}

/// Writes model.json, ledger.json (private fits), result.json and, with `--diagnostics`,
/// diagnostics.json (each atomically; outputs of an earlier run this run does not write are
/// removed), then prints the summary.
pub fn finish(f: &Fitted, common: &Common) -> Result<(), CliError> {
    let p = &f.privacy;
    let private = p.epsilon.is_some() && p.delta.is_some();
    let mut out = Map::new();
    out.insert("command".into(), json!("fit"));
    out.insert("model".into(), json!(f.model));
    out.insert(
        "format_version".into(),
        json!(model_format_version(&f.model_json)?),
    );
    out.insert("private".into(), json!(private));
    out.insert("epsilon".into(), num(p.epsilon.unwrap_or(f64::INFINITY)));
    out.insert(
        "epsilon_budget".into(),
        num(common.epsilon.unwrap_or(f64::INFINITY)),
    );
    out.insert("delta".into(), num(p.delta.unwrap_or(0.0)));
    out.insert(
        "noise_multiplier".into(),
        num(p.noise_multiplier.unwrap_or(0.0)),
    );
    out.insert(
        "accountant".into(),
        json!(if private { p.accountant.name() } else { "none" }),
    );
    if p.population_declared {
        out.insert("population".into(), json!(p.public_population));
    }
    out.insert("population_declared".into(), json!(p.population_declared));
    out.insert("neighbouring".into(), json!(p.neighbouring));
    if let Some(sampling) = f.sampling {
        out.insert("sampling".into(), json!(sampling));
    }
    out.insert("rng".into(), json!(p.rng));
    out.insert("iterations".into(), json!(f.iterations));
    out.insert("dim".into(), json!(f.dim));
    if !private {
        out.insert(
            "warning".into(),
            json!(
                "non-private fit: no noise was added and nothing was accounted; the model \
                   reveals the training data and must not be published as private"
            ),
        );
    }
    if common.noise_seed.is_some() {
        out.insert(
            "noise_seed_warning".into(),
            json!(
                "the noise was seeded on purpose (--noise-seed): reproducible, and no privacy \
                   against whoever knows the seed"
            ),
        );
    }
    out.insert("heldout".into(), f.heldout.clone());
    out.insert("settings".into(), f.settings.clone());
    let dir = out_dir(&common.out)?;
    out.insert("out".into(), json!(path_text(&dir)));
    let mut files = Map::new();
    files.insert("model".into(), json!(path_text(&dir.join("model.json"))));
    if private {
        files.insert("ledger".into(), json!(path_text(&dir.join("ledger.json"))));
    }
    files.insert("result".into(), json!(path_text(&dir.join("result.json"))));
    if common.diagnostics {
        files.insert(
            "diagnostics".into(),
            json!(path_text(&dir.join("diagnostics.json"))),
        );
    }
    out.insert("files".into(), Value::Object(files));
    let result = Value::Object(out);
    check_no_null(&result)?;
    let mut diagnostics = f.diagnostics.clone();
    if let Some(m) = diagnostics.as_object_mut() {
        m.insert("private".into(), json!(false));
    }
    check_no_null(&diagnostics)?;
    let ledger = match &p.ledger {
        Some(l) if private => Some(
            l.to_json()
                .map_err(|e| CliError::NonFinite(format!("ledger: {e}")))?,
        ),
        _ => None,
    };
    // Everything is computed: write. The ledger before the model, so that a model.json never
    // stands next to a ledger of another fit.
    match &ledger {
        Some(text) => {
            write_atomic(&dir, "ledger.json", text)?;
        }
        None => remove_stale(&dir, "ledger.json")?,
    }
    write_atomic(&dir, "model.json", &f.model_json)?;
    let pretty =
        |v: &Value| serde_json::to_string_pretty(v).map_err(|e| CliError::Output(e.into()));
    write_atomic(&dir, "result.json", &pretty(&result)?)?;
    if common.diagnostics {
        write_atomic(&dir, "diagnostics.json", &pretty(&diagnostics)?)?;
    } else {
        remove_stale(&dir, "diagnostics.json")?;
    }
    let mut shown = result;
    if common.diagnostics
        && let Some(m) = shown.as_object_mut()
    {
        m.insert("diagnostics".into(), diagnostics);
    }
    emit(&shown, common.json)
}

/// `diagnostics` (a JSON object) with the run's timings added: `fit_seconds` (the fit loop's
/// wall clock), `cpu_seconds` (its process CPU time, where the platform reports it) and
/// `seconds` (the whole command since `start`). Timings depend on the data, so they belong to the
/// non-private diagnostics only, as every command places them.
pub fn with_timings(
    mut diagnostics: Value,
    fit: &vips_models::engine::FitDiagnostics,
    start: std::time::Instant,
) -> Value {
    if let Some(map) = diagnostics.as_object_mut() {
        map.insert("fit_seconds".into(), num(fit.seconds));
        if let Some(cpu) = fit.cpu_seconds {
            map.insert("cpu_seconds".into(), num(cpu));
        }
        map.insert("seconds".into(), num(start.elapsed().as_secs_f64()));
    }
    diagnostics
}

/// Parses a finite number `> 0` (clap value parser).
///
/// # Errors
/// [`ValueError::NotANumber`] or [`ValueError::OutOfRange`].
pub fn positive(s: &str) -> Result<f64, ValueError> {
    let v = number(s)?;
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(ValueError::OutOfRange {
            domain: "finite and > 0",
            value: v,
        })
    }
}

fn number(s: &str) -> Result<f64, ValueError> {
    s.trim()
        .parse()
        .map_err(|_| ValueError::NotANumber(vips_models::limits::excerpt(s)))
}

/// Parses a finite number `>= 0` (clap value parser).
///
/// # Errors
/// [`ValueError::NotANumber`] or [`ValueError::OutOfRange`].
pub fn non_negative(s: &str) -> Result<f64, ValueError> {
    let v = number(s)?;
    if v >= 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(ValueError::OutOfRange {
            domain: "finite and >= 0",
            value: v,
        })
    }
}

/// Parses a probability in `(0, 1)` (clap value parser).
///
/// # Errors
/// [`ValueError::NotANumber`] or [`ValueError::OutOfRange`].
pub fn open_unit(s: &str) -> Result<f64, ValueError> {
    let v = number(s)?;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else if v > 0.0 && v.is_finite() {
        Err(ValueError::OutOfRange {
            domain: "in (0, 1)",
            value: v,
        })
    } else {
        Err(ValueError::OutOfRange {
            domain: "finite and > 0",
            value: v,
        })
    }
}

/// Parses a whole number `>= 1` (clap value parser).
///
/// # Errors
/// [`ValueError::Zero`] or [`ValueError::NotACount`].
pub fn count(s: &str) -> Result<usize, ValueError> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err(ValueError::Zero("")),
        Ok(v) => Ok(v),
        Err(_) => Err(ValueError::NotACount(vips_models::limits::excerpt(s))),
    }
}

/// Parses `--threshold` (1 to 255; clap value parser).
///
/// # Errors
/// [`ValueError::Zero`] or [`ValueError::NotAThreshold`].
pub fn threshold(s: &str) -> Result<u8, ValueError> {
    match s.trim().parse::<u8>() {
        Ok(0) => Err(ValueError::Zero(" (0 would make every pixel 1)")),
        Ok(v) => Ok(v),
        Err(_) => Err(ValueError::NotAThreshold(vips_models::limits::excerpt(s))),
    }
}

/// Parses `--accountant` (clap value parser).
///
/// # Errors
/// [`ValueError::Accountant`] for a name that is not an accountant.
pub fn accountant(s: &str) -> Result<dp_accountant::AccountantKind, ValueError> {
    Ok(s.trim().parse::<dp_accountant::AccountantKind>()?)
}
