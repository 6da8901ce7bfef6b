//! The data every BLR figure of the papers is redrawn on (breast_cancer in full mode, a
//! synthetic logistic set in quick mode; the papers' stroke data is not available), its five
//! train/test folds, and one VIPS BLR fit through `vips_models::blr::fit`.

use dp_accountant::AccountantKind;
use nalgebra::DVector;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use vips_models::blr::{
    self, Blr, BlrConfig, BlrRecord, CsvOptions, Features, Hyperprior, evaluate,
};
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig};

use super::erm::ErmData;
use crate::context::Context;

/// The seed of the folds, the synthetic rows and (on purpose, for reproducible figures) the
/// noise of every BLR fit.
pub const SEED: u64 = 22;
/// The papers' delta for BLR (003 Fig. 5: "moments accountant with delta = 0.0001").
pub const DELTA: f64 = 1e-4;
/// 003 Sec. 6.3: "5 pairs of training and test sets".
pub const FOLDS: usize = 5;
/// Rows of breast_cancer as published (UCI WDBC: 569 instances): public.
const BREAST_CANCER_ROWS: usize = 569;
/// Quick mode's synthetic set: rows, dimension, norm of the true coefficients.
const SYNTHETIC_ROWS: usize = 2000;
const SYNTHETIC_DIM: usize = 10;
const SYNTHETIC_SIGNAL: f64 = 8.0;

/// The rows, their folds and what they are.
pub struct BlrSetting {
    pub records: Vec<BlrRecord>,
    /// Fold of each record (`0..FOLDS`), a seeded shuffle.
    pub fold: Vec<usize>,
    pub dim: usize,
    /// The public training population of one fold pair (from the published row count).
    pub population: usize,
    pub description: String,
}

impl BlrSetting {
    /// breast_cancer in full mode when present, otherwise the synthetic stand-in.
    pub fn for_context(ctx: &Context) -> anyhow::Result<Self> {
        let (records, total, description) = match ctx.data_set("breast_cancer") {
            Some(dir) => {
                let csv = dir.join("breast_cancer.csv");
                let loaded = blr::load_csv(
                    &csv,
                    &CsvOptions {
                        label: "target".into(),
                        map: Some(blr::wdbc_feature_map()),
                    },
                )?;
                (
                    loaded.records,
                    BREAST_CANCER_ROWS,
                    format!(
                        "breast_cancer (UCI WDBC, {} rows, 30 features mapped by their published \
                         ranges onto [-1, 1] plus an intercept, / sqrt(d): public, not fitted) \
                         at {}; the papers' stroke data (N = 12,586, d = 4,146, MarketScan) \
                         is not available",
                        BREAST_CANCER_ROWS,
                        csv.display()
                    ),
                )
            }
            None => (
                synthetic_records()?,
                SYNTHETIC_ROWS,
                format!(
                    "synthetic logistic data (seed {SEED}): {SYNTHETIC_ROWS} rows uniform in the \
                     unit ball of R^{SYNTHETIC_DIM}, y ~ Bernoulli(sigmoid(x'beta)), ||beta|| = \
                     {SYNTHETIC_SIGNAL}; quick mode reads no data files and the papers' stroke \
                     data is not available"
                ),
            ),
        };
        let dim = records.first().map_or(0, |r| r.features().values().len());
        let mut fold: Vec<usize> = (0..records.len()).map(|i| i % FOLDS).collect();
        fold.shuffle(&mut ChaCha8Rng::seed_from_u64(SEED));
        Ok(Self {
            records,
            fold,
            dim,
            population: total - total / FOLDS,
            description,
        })
    }

    /// Training and test records of fold pair `k`.
    pub fn split(&self, k: usize) -> (Vec<BlrRecord>, Vec<BlrRecord>) {
        let pick = |test: bool| {
            self.records
                .iter()
                .zip(&self.fold)
                .filter(|(_, f)| (**f == k) == test)
                .map(|(r, _)| r.clone())
                .collect()
        };
        (pick(false), pick(true))
    }
}

/// Rows uniform in the unit ball with logistic labels.
fn synthetic_records() -> anyhow::Result<Vec<BlrRecord>> {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let gauss = |rng: &mut ChaCha8Rng, d: usize| -> Vec<f64> {
        (0..d)
            .map(|_| rng.sample::<f64, _>(rand_distr::StandardNormal))
            .collect()
    };
    let beta = DVector::from_vec(gauss(&mut rng, SYNTHETIC_DIM));
    let beta = beta.normalize() * SYNTHETIC_SIGNAL;
    (0..SYNTHETIC_ROWS)
        .map(|_| {
            let x = DVector::from_vec(gauss(&mut rng, SYNTHETIC_DIM));
            let radius = rng.random::<f64>().powf(1.0 / SYNTHETIC_DIM as f64);
            let x = x.normalize() * radius;
            let y = rng.random::<f64>() < blr::sigmoid(x.dot(&beta));
            Ok(BlrRecord::new(Features::Dense(x.as_slice().to_vec()), y)?.0)
        })
        .collect()
}

/// The records as ERM data (labels in `{-1, +1}`).
pub fn erm_data(records: &[BlrRecord]) -> ErmData {
    ErmData {
        x: records
            .iter()
            .map(|r| DVector::from_column_slice(r.features().values()))
            .collect(),
        y: records
            .iter()
            .map(|r| if r.label() { 1.0 } else { -1.0 })
            .collect(),
    }
}

/// One VIPS BLR run: batch (`batch = None`: S = N, rho = 1) or stochastic.
#[derive(Clone, Copy, Debug)]
pub struct BlrRun {
    pub iterations: u64,
    pub batch: Option<f64>,
    /// `None`: non-private.
    pub epsilon: Option<f64>,
    pub accountant: AccountantKind,
}

/// What a run gives the figures.
pub struct BlrOutcome {
    pub auc: f64,
    pub noise_multiplier: Option<f64>,
    /// Epsilon the run's ledger reports at [`DELTA`] (`None` when non-private).
    pub epsilon: Option<f64>,
    /// The run's ledger, for re-accounting by another accountant.
    pub ledger: Option<dp_accountant::Accountant>,
}

/// SVI step of the stochastic runs (the blr example's defaults; the papers print none).
const TAU0: f64 = 1.0;
const KAPPA: f64 = 0.7;

/// Fits VIPS BLR (Gamma(1, 1) hyperprior on the prior precision, the example's default) on
/// `train` and scores the posterior predictive AUC on `test`.
pub fn fit_blr(
    setting: &BlrSetting,
    train: Vec<BlrRecord>,
    test: &[BlrRecord],
    run: BlrRun,
    noise_seed: u64,
) -> anyhow::Result<BlrOutcome> {
    let privacy = match run.epsilon {
        Some(epsilon) => Privacy::Target {
            epsilon,
            delta: DELTA,
        },
        None => Privacy::NonPrivate,
    };
    let (batch, step) = match run.batch {
        None => (setting.population as f64, StepSize::Constant { rho: 1.0 }),
        Some(s) => (s, StepSize::robbins_monro(TAU0, KAPPA)?),
    };
    let svi = SviConfig::builder()
        .expected_batch_size(batch)
        .step(step)
        .stop(Stop::Iterations {
            iterations: run.iterations,
        })
        .privacy(privacy)
        .accountant(run.accountant)
        .noise_seed(Some(noise_seed))
        .init_seed(noise_seed)
        .population(Some(setting.population))
        .build()?;
    let model = Blr::new(
        BlrConfig::builder(setting.dim)
            .hyperprior(Hyperprior::Gamma {
                shape: 1.0,
                rate: 1.0,
            })
            .build()?,
    );
    let fitted = blr::fit(&model, train, &svi)?.result;
    let metrics = evaluate(fitted.global.posterior(), test)
        .ok_or_else(|| anyhow::anyhow!("empty test fold"))?;
    Ok(BlrOutcome {
        auc: metrics.auc,
        noise_multiplier: fitted.privacy.noise_multiplier,
        epsilon: fitted.privacy.epsilon,
        ledger: fitted.privacy.ledger,
    })
}

/// Mean and standard deviation (n - 1) of `v`.
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

/// The median of `v`.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        0.5 * (s[m - 1] + s[m])
    }
}
