//! The cells xtask computes by calling a library in its own process instead of spawning an
//! example: the VI column (`dp_sep::pbp::vi`). Cached like the example runs, keyed by a command
//! line naming the function and every setting.

use std::path::Path;

use anyhow::Context as _;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, PublicRanges};
use dp_sep::pbp::Scaling;
use dp_sep::pbp::vi::{ViConfig, run_vi};
use serde_json::{Value, json};

use super::SEED;
use super::methods::DataSet;

/// VI's settings other than the network (the folder's hidden units and epochs, as the PBP
/// runs): `dp_sep::pbp::vi::ViConfig`'s defaults, written out so the cache key names them.
const VI_BATCH: usize = 32;
const VI_LEARNING_RATE: f64 = 0.01;
const VI_INIT_STD: f64 = 0.01;
const VI_PREDICT_SAMPLES: usize = 100;

/// One data set's folder, loaded once for all its VI cells.
pub(super) struct Folder {
    data: SplitFolder,
    scaling: Scaling,
}

impl Folder {
    /// Loads `d`'s folder (relative paths from `root`) and its scaling: the declared ranges the
    /// examples get (`--ranges FILE`, or `--feature-range` with `--target-range`), else the
    /// training split's mean and standard deviation, as the pbp example does without ranges.
    pub(super) fn load(root: &Path, d: &DataSet) -> anyhow::Result<Self> {
        let data = SplitFolder::load(root.join(&d.uci))
            .with_context(|| format!("could not load {}", d.uci.display()))?;
        let flags = d.ranges.clone().unwrap_or_default();
        let value = |flag: &str| {
            flags
                .iter()
                .position(|f| f == flag)
                .and_then(|i| flags.get(i + 1))
        };
        let scaling = if let Some(file) = value("--ranges") {
            Scaling::Declared(data.public_ranges(root.join(file))?)
        } else if let (Some(f), Some(t)) = (value("--feature-range"), value("--target-range")) {
            Scaling::Declared(PublicRanges::uniform(
                data.all().dim(),
                f.parse::<PublicRange>()?,
                t.parse::<PublicRange>()?,
            ))
        } else {
            Scaling::FitOnTraining
        };
        Ok(Self { data, scaling })
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
