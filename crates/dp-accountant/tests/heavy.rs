//! Heavy checks, `#[ignore]`d in debug builds; CI runs them in release
//! (`cargo test --workspace --release -- --ignored`). Together well under a minute.

use dp_accountant::calibrate::{Sampling, calibrate_noise_multiplier, max_steps};
use dp_accountant::rdp::{rdp_fixed_size_subsampled_gaussian, rdp_poisson_subsampled_gaussian};
use dp_accountant::{AccountantConfig, Budget, PrivacyEvent, epsilon_for_event};

/// A dense deterministic grid: RDP monotone in the order (fractional and integer interleaved),
/// finite and non-negative, over sigma in [0.1, 1e4], q in [1e-8, 1], orders up to 1e4.
#[test]
#[ignore = "heavy: run in release"]
fn rdp_grid_is_monotone_and_finite() {
    let sigmas = [0.1, 0.3, 0.7, 1.0, 2.0, 5.0, 30.0, 300.0, 1e4];
    let qs = [1e-8, 1e-5, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.99, 1.0];
    let mut orders: Vec<f64> = (0..120).map(|k| 1.0 + 0.05 * f64::from(k + 1)).collect();
    orders.extend([
        8.5, 9.0, 12.25, 20.0, 33.3, 64.0, 100.5, 256.0, 300.5, 1000.0, 1023.0, 1024.0, 1025.0,
        4097.5, 1e4,
    ]);
    for &s in &sigmas {
        for &q in &qs {
            let mut last = 0.0;
            for &a in &orders {
                let r = rdp_poisson_subsampled_gaussian(s, q, a).unwrap();
                assert!(r.is_finite() && r >= 0.0, "sigma={s} q={q} a={a}: {r}");
                assert!(
                    r >= last * (1.0 - 1e-10),
                    "sigma={s} q={q} a={a}: {r} < {last}"
                );
                last = r;
            }
        }
    }
    for &s in &[0.5, 1.0, 4.0] {
        let mut last = 0.0;
        for &a in &orders {
            let r = rdp_fixed_size_subsampled_gaussian(s, 64, 10_000, a).unwrap();
            assert!(
                r.is_finite() && r >= last * (1.0 - 1e-10),
                "sigma={s} a={a}: {r} < {last}"
            );
            last = r;
        }
    }
}

/// Calibration then accounting lands at or below the target over a grid, and max_steps is the
/// largest admissible count.
#[test]
#[ignore = "heavy: run in release"]
fn calibration_grid() {
    let config = AccountantConfig::default();
    for &eps in &[0.1, 0.5, 1.0, 3.0, 10.0] {
        for &q in &[1e-4, 1e-2, 0.2, 1.0] {
            for &steps in &[1u64, 100, 10_000] {
                let budget = Budget::new(eps, 1e-6).unwrap();
                let c = calibrate_noise_multiplier(
                    Sampling::Poisson { rate: q },
                    steps,
                    &budget,
                    &config,
                )
                .unwrap();
                let run = PrivacyEvent::poisson_subsampled_gaussian(c.noise_multiplier, q)
                    .unwrap()
                    .self_composed(steps)
                    .unwrap();
                let e = epsilon_for_event(&run, 1e-6, &config).unwrap().epsilon;
                assert!(e <= eps, "eps={eps} q={q} T={steps}: {e}");
                let m = max_steps(
                    Sampling::Poisson { rate: q },
                    c.noise_multiplier,
                    &budget,
                    &config,
                )
                .unwrap();
                assert!(
                    m.steps >= steps,
                    "eps={eps} q={q} T={steps}: max {}",
                    m.steps
                );
                let over = PrivacyEvent::poisson_subsampled_gaussian(c.noise_multiplier, q)
                    .unwrap()
                    .self_composed(m.steps + 1)
                    .unwrap();
                assert!(epsilon_for_event(&over, 1e-6, &config).unwrap().epsilon > eps);
            }
        }
    }
}
