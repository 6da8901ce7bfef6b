//! Batch and stochastic (SVI) modes, private and not, through the same engine path.

use rand::RngExt;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::blr::{self, Blr, BlrConfig, BlrRecord, Features, evaluate};
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig};

fn synthetic(n: usize, seed: u64) -> Vec<BlrRecord> {
    let w = [5.0, -4.0, 2.0, 0.0];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let x: Vec<f64> = (0..4).map(|_| rng.random_range(-0.5..0.5)).collect();
            let t: f64 = x.iter().zip(&w).map(|(a, b)| a * b).sum();
            let y = rng.random::<f64>() < blr::sigmoid(t);
            BlrRecord::new(Features::Dense(x), y).unwrap().0
        })
        .collect()
}

#[test]
fn svi_reaches_the_batch_posterior_mean() {
    let train = synthetic(2000, 1);
    let model = Blr::new(BlrConfig::builder(4).build().unwrap());
    let batch = blr::fit(
        &model,
        train.clone(),
        &blr::batch_config(train.len(), 30, Privacy::NonPrivate, None).unwrap(),
    )
    .unwrap()
    .result;
    let svi = SviConfig::builder()
        .expected_batch_size(200.0)
        .step(StepSize::robbins_monro(1.0, 0.7).unwrap())
        .stop(Stop::Iterations { iterations: 200 })
        .privacy(Privacy::NonPrivate)
        .noise_seed(Some(3))
        .build()
        .unwrap();
    let stochastic = blr::fit(&model, train, &svi).unwrap().result;
    let a = batch.global.posterior().mean();
    let b = stochastic.global.posterior().mean();
    let sd = batch.global.posterior().cov().diagonal().map(f64::sqrt);
    for j in 0..4 {
        assert!(
            (a[j] - b[j]).abs() < 2.0 * sd[j],
            "coordinate {j}: {} vs {}",
            a[j],
            b[j]
        );
    }
    assert!(stochastic.privacy.sampling_rate < 0.2);
}

#[test]
fn private_svi_spends_at_most_its_budget_and_still_predicts() {
    let train = synthetic(4000, 2);
    let test = synthetic(1000, 3);
    let model = Blr::new(BlrConfig::builder(4).build().unwrap());
    let svi = SviConfig::builder()
        .expected_batch_size(400.0)
        .step(StepSize::robbins_monro(1.0, 0.7).unwrap())
        .stop(Stop::Iterations { iterations: 20 })
        .privacy(Privacy::Target {
            epsilon: 2.0,
            delta: 1e-5,
        })
        .noise_seed(Some(4))
        .population(Some(train.len()))
        .build()
        .unwrap();
    let fit = blr::fit(&model, train, &svi).unwrap();
    let fitted = &fit.result;
    assert!(fitted.privacy.epsilon.unwrap() <= 2.0 * (1.0 + 1e-9));
    assert!(fitted.privacy.ledger.is_some());
    assert_eq!(fit.diagnostics.records_clipped, 0); // rows are in the ball, <xi> <= 1/4
    let m = evaluate(fitted.global.posterior(), &test).unwrap();
    assert!(m.auc > 0.75, "private SVI AUC {}", m.auc);
}

#[test]
fn bad_settings_and_records_are_typed_errors() {
    assert!(BlrConfig::builder(3).eigenvalue_floor(0.0).build().is_err());
    assert!(
        BlrConfig::builder(3)
            .hyperprior(blr::Hyperprior::Gamma {
                shape: -1.0,
                rate: 1.0
            })
            .build()
            .is_err()
    );
    let model = Blr::new(BlrConfig::builder(3).build().unwrap());
    let cfg = blr::batch_config(1, 1, Privacy::NonPrivate, None).unwrap();
    let (r, _) = BlrRecord::new(Features::Dense(vec![0.1, 0.2]), true).unwrap();
    assert!(matches!(
        blr::fit(&model, vec![r], &cfg),
        Err(blr::BlrError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        blr::fit(&model, vec![], &cfg),
        Err(blr::BlrError::Empty(_))
    ));
    assert!(
        blr::batch_config(
            10,
            1,
            Privacy::Target {
                epsilon: 0.0,
                delta: 1e-5
            },
            None
        )
        .is_err()
    );
}
