//! A model written outside the crate: the mean `m` of Gaussian data with known variance 1 and
//! prior `m ~ N(0, 1 / TAU0)`, fitted through [`vips_models::engine::fit`] like LDA, BLR or the
//! SBN. Implementing [`VipsModel`] is all it takes; no engine file changes.
//!
//! The model in VIPS terms (003 Algorithm 2):
//! - per-record statistic `s(x) = x`, clipped by the wall to `|x| <= BOUND`;
//! - global parameters `nu~ = (h, P)`, the natural parameters of `q(m) = N(h / P, 1 / P)`;
//! - M-step target from the release `s~` (the noised sum divided by the public expected batch
//!   size) and the public population `N`: `h = N s~`, `P = TAU0 + N`.
//!
//! With full batches (`q = 1`) and `rho = 1`, a non-private fit is exact: `q(m)` is the
//! conjugate posterior `N(sum x / (TAU0 + n), 1 / (TAU0 + n))`.

use dp_core::{ContributionBuffer, CoreError, Release, ReleaseSpec, VectorBlock};
use serde::Serialize;
use vips_models::engine::{
    EngineError, Privacy, RecordError, StepSize, Stop, SviConfig, VipsModel, fit,
};

/// Prior precision of the mean.
const TAU0: f64 = 1.0;
/// Per-record bound on `|x|` (the wall clips to it; it is the statistic's sensitivity).
const BOUND: f64 = 3.0;

/// The model's only setting is the constants above.
struct GaussianMean;

/// `q(m) = N(shift / precision, 1 / precision)`: what is blended and returned.
#[derive(Clone, Debug, Serialize)]
struct Posterior {
    shift: f64,
    precision: f64,
}

impl Posterior {
    fn mean(&self) -> f64 {
        self.shift / self.precision
    }
}

impl VipsModel for GaussianMean {
    type Record = f64;
    type Global = Posterior;
    // One release gives a whole posterior's natural parameters.
    type Target = Posterior;
    // The E-step needs nothing from the current posterior (no latent variables).
    type Natural = ();
    type Scratch = ();
    // The handle to the one released block.
    type Blocks = VectorBlock;

    fn name(&self) -> &str {
        "gaussian-mean"
    }

    // One block: the sum of x, each record clipped to |x| <= BOUND.
    fn release_spec(&self) -> Result<(ReleaseSpec, VectorBlock), EngineError> {
        let mut spec = ReleaseSpec::builder("gaussian mean");
        let sum_x = spec.vector("sum_x", 1, BOUND)?;
        Ok((spec.build()?, sum_x))
    }

    // Start from the prior.
    fn init_global(&self, _rng: &mut dyn rand::Rng) -> Result<Posterior, EngineError> {
        Ok(Posterior {
            shift: 0.0,
            precision: TAU0,
        })
    }

    fn expected_natural(&self, _global: &Posterior) -> Result<(), EngineError> {
        Ok(())
    }

    fn new_scratch(&self) {}

    // The E-step, behind the wall. A non-finite value is rejected with a fixed reason: the wall
    // drops the record from a private release, and fails a non-private one.
    fn record_statistic(
        &self,
        sum_x: &VectorBlock,
        _natural: &(),
        x: &f64,
        _scratch: &mut (),
        out: &mut ContributionBuffer,
    ) -> Result<(), RecordError> {
        if !x.is_finite() {
            return Err(RecordError::new("a non-finite value"));
        }
        out.push(*sum_x, 0, *x);
        Ok(())
    }

    // The M-step, outside the wall: post-processing of the release and public numbers only.
    fn global_target(
        &self,
        sum_x: &VectorBlock,
        release: &Release,
        _natural: &(),
        population: f64,
    ) -> Result<Posterior, EngineError> {
        Ok(Posterior {
            shift: population * release.vector(*sum_x)?[0],
            precision: TAU0 + population,
        })
    }

    // The damped SVI step and nothing else.
    fn blend(&self, global: &mut Posterior, target: &Posterior, rho: f64) {
        global.shift = (1.0 - rho) * global.shift + rho * target.shift;
        global.precision = (1.0 - rho) * global.precision + rho * target.precision;
    }
}

/// `n` values in `[-2, 2]` with mean about `0.7`.
fn data(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 0.7 + 1.3 * (i as f64 * 0.77).sin())
        .collect()
}

/// Full batches (`S = N = n`, declared public), `rho = 1`, a few iterations.
fn batch(n: usize, privacy: Privacy) -> Result<SviConfig, EngineError> {
    SviConfig::builder()
        .expected_batch_size(n as f64)
        .population(Some(n))
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations { iterations: 3 })
        .privacy(privacy)
        .noise_seed(Some(11))
        .build()
}

#[test]
fn non_private_fit_is_the_conjugate_posterior() {
    let x = data(500);
    let n = x.len() as f64;
    let exact_mean = x.iter().sum::<f64>() / (TAU0 + n);
    let fitted = fit(
        &GaussianMean,
        x,
        &batch(500, Privacy::NonPrivate).unwrap(),
        |_, _| {},
    )
    .unwrap()
    .result;
    assert!((fitted.global.mean() - exact_mean).abs() < 1e-12);
    assert_eq!(fitted.global.precision, TAU0 + n);
    assert!(fitted.privacy.epsilon.is_none() && fitted.privacy.ledger.is_none());
}

#[test]
fn private_fit_spends_at_most_the_budget() {
    let x = data(2000);
    let exact_mean = x.iter().sum::<f64>() / (TAU0 + x.len() as f64);
    let privacy = Privacy::Target {
        epsilon: 1.0,
        delta: 1e-5,
    };
    let fitted = fit(&GaussianMean, x, &batch(2000, privacy).unwrap(), |_, _| {}).unwrap();
    let result = fitted.result;
    let epsilon = result.privacy.epsilon.unwrap();
    assert!(epsilon > 0.0 && epsilon <= 1.0, "epsilon {epsilon}");
    assert_eq!(result.privacy.ledger.as_ref().unwrap().entries().len(), 3);
    // Noise std on the mean ~ sigma * BOUND / N: small next to 0.7 at N = 2000.
    assert!((result.global.mean() - exact_mean).abs() < 0.1);
}

#[test]
fn a_rejected_record_follows_the_walls_policy() {
    let mut x = data(100);
    x[3] = f64::NAN;
    // Non-private: the fit fails with the wall's typed error naming the reason.
    let err = fit(
        &GaussianMean,
        x.clone(),
        &batch(100, Privacy::NonPrivate).unwrap(),
        |_, _| {},
    )
    .unwrap_err();
    assert!(
        matches!(&err, EngineError::Wall(CoreError::InvalidContribution { reason, .. })
            if reason == "a non-finite value"),
        "{err}"
    );
    // Private: the record contributes zero, and the (non-private) diagnostics count it.
    let privacy = Privacy::Target {
        epsilon: 1.0,
        delta: 1e-5,
    };
    let fitted = fit(&GaussianMean, x, &batch(100, privacy).unwrap(), |_, _| {}).unwrap();
    assert_eq!(fitted.diagnostics.records_replaced, 3);
    assert!(fitted.result.privacy.epsilon.unwrap() <= 1.0);
}
