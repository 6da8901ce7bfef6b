//! Every cell is computed by calling a library in xtask's own process: PBP (SEP, EP, clipped
//! SEP, DP-SEP) through `dp_sep::pbp::uci::run_uci_pbp`, the function the `pbp` example calls
//! with its parsed flags; linear regression through `vips_models::linreg::fit_mapped`, as the
//! `linreg` example; VI through `dp_sep::pbp::vi`. A PBP or linreg cell is keyed by the
//! equivalent example command line (`super::cache::command_line`), so the cells the examples
//! computed before are reused and a rerun gives the same numbers; VI is keyed by a command line
//! naming the function and every setting.

use std::path::Path;

use anyhow::Context as _;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, PublicRanges, Standardizer};
use dp_sep::pbp::Scaling;
use dp_sep::pbp::uci::{RangeDeclaration, UciPbpRequest, run_uci_pbp};
use dp_sep::pbp::vi::{ViConfig, run_vi};
use serde_json::{Value, json};
use vips_models::engine::Privacy;
use vips_models::linreg::{LinregOptions, TargetMap, batch_config, fit_mapped};

use super::methods::{DataSet, Method};
use super::{DELTA, SEED};

/// VI's settings other than the network (the folder's hidden units and epochs, as the PBP
/// runs): `dp_sep::pbp::vi::ViConfig`'s defaults, written out so the cache key names them.
const VI_BATCH: usize = 32;
const VI_LEARNING_RATE: f64 = 0.01;
const VI_INIT_STD: f64 = 0.01;
const VI_PREDICT_SAMPLES: usize = 100;

/// One data set's folder, loaded once for all its in-process cells.
pub(super) struct Folder {
    data: SplitFolder,
    scaling: Scaling,
    /// The ranges as the `pbp` example's flags declare them (`--ranges`, `--feature-range` /
    /// `--target-range`, or none: the committed file, as the example).
    declaration: RangeDeclaration,
    /// The folder, absolute (the examples ran from the workspace root).
    uci: std::path::PathBuf,
}

impl Folder {
    /// Loads `d`'s folder (relative paths from `root`) and its scaling: the declared ranges the
    /// examples get (`--ranges FILE`, or `--feature-range` with `--target-range`), else the
    /// training split's mean and standard deviation, as the pbp example does without ranges.
    pub(super) fn load(root: &Path, d: &DataSet) -> anyhow::Result<Self> {
        // Paths as the examples saw them: relative to the workspace root when xtask runs from
        // there (so the outputs' `scaling` / `ranges` text matches the example runs'), absolute
        // otherwise.
        let from_root = std::env::current_dir()
            .ok()
            .and_then(|cwd| cwd.canonicalize().ok())
            == root.canonicalize().ok();
        let root = if from_root { Path::new("") } else { root };
        let data = SplitFolder::load(root.join(&d.uci))
            .with_context(|| format!("could not load {}", d.uci.display()))?;
        let flags = d.ranges.clone().unwrap_or_default();
        let value = |flag: &str| {
            flags
                .iter()
                .position(|f| f == flag)
                .and_then(|i| flags.get(i + 1))
        };
        let (scaling, declaration) = if let Some(file) = value("--ranges") {
            (
                Scaling::Declared(data.public_ranges(root.join(file))?),
                RangeDeclaration::File(root.join(file)),
            )
        } else if let (Some(f), Some(t)) = (value("--feature-range"), value("--target-range")) {
            let (feature, target) = (f.parse::<PublicRange>()?, t.parse::<PublicRange>()?);
            (
                Scaling::Declared(PublicRanges::uniform(data.all().dim(), feature, target)),
                RangeDeclaration::Uniform { feature, target },
            )
        } else {
            (
                Scaling::FitOnTraining,
                RangeDeclaration::CommittedIn(root.join("crates/dp-sep/ranges")),
            )
        };
        Ok(Self {
            data,
            scaling,
            declaration,
            uci: root.join(&d.uci),
        })
    }

    /// The `pbp` example's request for `method` on `split` at `eps`: the settings
    /// `super::methods::args` writes as its flags (the cache key).
    pub(super) fn pbp_request(
        &self,
        d: &DataSet,
        method: Method,
        split: usize,
        eps: Option<f64>,
    ) -> UciPbpRequest {
        let mut r = UciPbpRequest::new(&self.uci);
        r.split = split;
        r.ranges = self.declaration.clone();
        r.seed = SEED;
        if matches!(method, Method::ClippedSep | Method::DpSep) {
            r.clip = Some(1.0);
        }
        if method == Method::Ep {
            r.method = dp_sep::pbp::Method::Ep;
        }
        r.one_record = method == Method::DpSep && eps.is_some();
        if let Some(e) = eps {
            r.epsilon = Some(e);
            r.delta = Some(DELTA);
            r.noise_seed = Some(split as u64);
            r.population = Some(d.train_rows[split]);
        }
        if method == Method::MinibatchDpSep
            && let Some(e) = eps
        {
            // As `args`: spelled out when the recommendation is innovation or whitened clipping (the same
            // setting; the output's `recommended_settings` then names clipping as given).
            let rec = dp_sep::recommended::private_pbp_for(e, d.train_rows[split]);
            if rec.clipping != dp_sep::Clipping::Value {
                r.clipping = Some(rec.clipping);
            }
            if rec.batch_size != dp_sep::recommended::PRIVATE_PBP.batch_size {
                r.batch_size = Some(rec.batch_size);
            }
        }
        r
    }

    /// Runs `request` (the `pbp` example's code path); the example's JSON output.
    pub(super) fn run_pbp(&self, request: &UciPbpRequest) -> anyhow::Result<Value> {
        Ok(run_uci_pbp(request, &mut |_, _| true)?.to_json())
    }

    /// Linear regression on `split` at `eps` (`None`: non-private), as the `linreg` example
    /// runs it with the flags of `super::methods::args`: the declared ranges map the rows, one
    /// batch release with `--population` = the split's training rows and the noise seeded with
    /// `seed` (the split index for the table's cells). The example's publishable keys the table and the report read.
    pub(super) fn run_linreg(
        &self,
        d: &DataSet,
        split: usize,
        eps: Option<f64>,
        seed: u64,
    ) -> anyhow::Result<Value> {
        let Scaling::Declared(ranges) = &self.scaling else {
            anyhow::bail!("{}: linreg needs declared public ranges", d.label);
        };
        let (train, test) = self.data.split(split)?;
        let map = Standardizer::from_public_ranges(ranges);
        let (train_z, _) = map.transform_counted(&train);
        let test_z = map.transform(&test);
        let target = TargetMap {
            centre: ranges.target().centre(),
            scale: ranges.target().scale(),
        };
        let population = eps.map_or(train_z.len(), |_| d.train_rows[split]);
        let privacy = eps.map_or(Privacy::NonPrivate, |epsilon| Privacy::Target {
            epsilon,
            delta: DELTA,
        });
        let svi = batch_config(population, privacy, eps.map(|_| seed))?;
        let out = fit_mapped(
            train.dim(),
            (0..train_z.len()).map(|i| (train_z.row(i), train_z.target(i))),
            (0..test_z.len()).map(|i| test_z.row(i)),
            test.targets(),
            target,
            &LinregOptions::default(),
            &svi,
        )?;
        let metrics = out
            .metrics
            .with_context(|| format!("{} split {split}: the test split is empty", d.label))?;
        let p = &out.fit.result.privacy;
        let (config, global) = (out.model.config(), &out.fit.result.global);
        let inf = json!("inf");
        Ok(json!({
            "model": "linreg",
            "dataset": self.data.name(),
            "split": split,
            "test_rmse": metrics.rmse,
            "test_log_likelihood": metrics.log_likelihood,
            "epsilon": eps.map_or(inf.clone(), |e| json!(e)),
            "epsilon_spent": p.epsilon.map_or(inf, |e| json!(e)),
            "delta": p.delta.unwrap_or(0.0),
            "noise_multiplier": p.noise_multiplier.unwrap_or(0.0),
            "accountant": if p.noise_multiplier.is_some() { p.accountant.name() } else { "none" },
            "population": p.public_population,
            "population_declared": p.population_declared,
            "neighbouring": p.neighbouring,
            "rng": p.rng,
            "releases": out.fit.result.iterations + u64::from(out.radius_noise_multiplier.is_some()),
            "n_test": test.len(),
            "dim": out.rows.dim(),
            "radius": out.rows.radius(),
            "radius_source": if out.radius_noise_multiplier.is_some() { "released" } else { "declared" },
            "radius_noise_multiplier": out.radius_noise_multiplier.unwrap_or(0.0),
            "ranges": ranges.source(),
            "prior_precision": config.prior_precision(),
            "prior_noise_shape": config.noise_prior().0,
            "prior_noise_rate": config.noise_prior().1,
            "floor_scale": config.floor_scale(),
            "eigenvalue_floor": global.eigenvalue_floor(),
            "eigenvalues_raised": global.eigenvalues_raised(),
        }))
    }

    fn config(&self) -> anyhow::Result<ViConfig> {
        Ok(ViConfig::builder()
            .hidden(self.data.n_hidden())
            .epochs(self.data.n_epochs())
            .batch_size(VI_BATCH)
            .learning_rate(VI_LEARNING_RATE)
            .init_std(VI_INIT_STD)
            .predict_samples(VI_PREDICT_SAMPLES)
            .seed(SEED)
            .build()?)
    }

    /// The cache key of VI on `split`: the function and every setting.
    pub(super) fn vi_command(&self, d: &DataSet, split: usize) -> anyhow::Result<String> {
        let c = self.config()?;
        Ok(format!(
            "xtask (in process) dp_sep::pbp::vi::run_vi --uci {} --split {split} {}--hidden {} --epochs {} --batch-size {} --learning-rate {} --init-std {} --predict-samples {} --seed {}",
            d.uci.display(),
            d.ranges
                .as_ref()
                .map_or_else(String::new, |r| format!("{} ", r.join(" "))),
            c.hidden(),
            c.epochs(),
            c.batch_size(),
            c.learning_rate(),
            c.init_std(),
            c.predict_samples(),
            c.seed()
        ))
    }

    /// Runs VI on `split`; the JSON the cache stores (the keys the table reads, as an
    /// example's output).
    pub(super) fn run_vi(&self, split: usize) -> anyhow::Result<Value> {
        let (train, test) = self.data.split(split)?;
        let config = self.config()?;
        let out = run_vi(&train, &test, &config, &self.scaling)?;
        Ok(json!({
            "method": "vi",
            "test_rmse": out.metrics.rmse,
            "test_log_likelihood": out.metrics.log_likelihood,
            "noise_variance_standardised": out.noise_variance,
            "elbo_per_record_first_epoch": out.elbo_per_epoch.first(),
            "elbo_per_record_last_epoch": out.elbo_per_epoch.last(),
            "seconds": out.seconds,
            "config": config,
            "scaling": match &self.scaling {
                Scaling::Declared(r) => format!("declared public ranges: {}", r.source()),
                Scaling::FitOnTraining => "training mean and std".into(),
            },
        }))
    }
}
