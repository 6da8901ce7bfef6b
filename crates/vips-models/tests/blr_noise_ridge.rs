//! Private batch BLR over several releases: without the noise ridge the fit collapses (the
//! noised `s2` leaves near-floor directions, the mean grows there, `<xi_n>` shrink and the
//! signal fades against the same noise); with `noise_ridge(0.1)` it keeps ranking the test rows.
//!
//! Statistical test: 5 noise seeds (fixed), the **median** test AUC over them (deterministic for
//! a given build). Measured with these seeds (2026-11-25), median AUC at eps 4:
//!
//! | releases | 1 | 3 | 10 | 20 |
//! |---|---|---|---|---|
//! | no ridge | 0.9447 | 0.6341 | 0.7045 | 0.7528 |
//! | ridge 0.1 | 0.9475 | 0.8735 | 0.8645 | 0.9042 |
//!
//! The bars (ridged > 0.8, and 0.08 above the unridged) sit well inside that gap; other seeds
//! could move single runs, which is why the median of five is asserted.

use rand::RngExt;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::blr::{self, Blr, BlrConfig, BlrRecord, Features, evaluate};
use vips_models::engine::Privacy;

/// Rows in the unit ball (`d = 10` plus an intercept-like constant), a strong logistic signal.
fn synthetic(n: usize, seed: u64) -> Vec<BlrRecord> {
    let d = 10;
    let w: Vec<f64> = (0..d).map(|j| if j < 5 { 12.0 } else { -6.0 }).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut x: Vec<f64> = (0..d).map(|_| rng.random_range(-1.0..1.0)).collect();
            x[d - 1] = 1.0;
            let norm = (d as f64).sqrt();
            x.iter_mut().for_each(|v| *v /= norm);
            let t: f64 = x.iter().zip(&w).map(|(a, b)| a * b).sum();
            let y = rng.random::<f64>() < blr::sigmoid(t);
            BlrRecord::new(Features::Dense(x), y).unwrap().0
        })
        .collect()
}

fn median_auc(ridge: f64, iterations: u64) -> f64 {
    let train = synthetic(450, 1);
    let test = synthetic(2000, 2);
    let model = Blr::new(BlrConfig::builder(10).noise_ridge(ridge).build().unwrap());
    let mut aucs: Vec<f64> = (1..=5)
        .map(|seed| {
            let privacy = Privacy::Target {
                epsilon: 4.0,
                delta: 1e-5,
            };
            let cfg = blr::batch_config(train.len(), iterations, privacy, Some(seed)).unwrap();
            let fitted = blr::fit(&model, train.clone(), &cfg).unwrap().result;
            evaluate(fitted.global.posterior(), &test).unwrap().auc
        })
        .collect();
    aucs.sort_by(f64::total_cmp);
    aucs[2]
}

#[test]
fn ten_private_releases_without_the_ridge_collapse_and_with_it_do_not() {
    let plain = median_auc(0.0, 10);
    let ridged = median_auc(0.1, 10);
    eprintln!(
        "median AUC over 5 noise seeds, 10 releases at eps 4: plain {plain:.4}, ridge 0.1 {ridged:.4}"
    );
    // Measured: plain 0.7045, ridged 0.8645 (one release: 0.9447 plain, 0.9475 ridged).
    assert!(ridged > 0.8, "ridged median AUC {ridged}");
    assert!(plain + 0.08 < ridged, "plain {plain} vs ridged {ridged}");
}

#[test]
fn the_ridge_is_validated_and_ignored_without_noise() {
    assert!(BlrConfig::builder(3).noise_ridge(-0.1).build().is_err());
    assert!(BlrConfig::builder(3).noise_ridge(f64::NAN).build().is_err());
    assert!(
        BlrConfig::builder(3)
            .noise_ridge(f64::INFINITY)
            .build()
            .is_err()
    );
    let train = synthetic(300, 3);
    let fit = |ridge| {
        let model = Blr::new(BlrConfig::builder(10).noise_ridge(ridge).build().unwrap());
        let cfg = blr::batch_config(train.len(), 5, Privacy::NonPrivate, None).unwrap();
        blr::fit(&model, train.clone(), &cfg).unwrap().result
    };
    let (a, b) = (fit(0.0), fit(0.5));
    assert_eq!(a.global.posterior().mean(), b.global.posterior().mean());
    assert_eq!(a.global.alpha_mean(), b.global.alpha_mean());
}
