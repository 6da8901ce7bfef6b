//! Criterion benchmarks of the accountant's hot paths, run side by side with
//! `benches/dp_accounting_timing.py` (same cases in dp_accounting 0.6). Figures and commands are
//! in docs/benchmarks.md, section "dp-accountant".

use criterion::{Criterion, criterion_group, criterion_main};
use dp_accountant::calibrate::{Sampling, calibrate_noise_multiplier};
use dp_accountant::conversion::epsilon_from_rdp_curve;
use dp_accountant::rdp::rdp_curve;
use dp_accountant::{
    Accountant, AccountantConfig, Budget, Conversion, Orders, PrivacyEvent,
    dp_accounting_default_orders, epsilon_for_event,
};
use std::hint::black_box;

fn benches(c: &mut Criterion) {
    let orders = dp_accounting_default_orders();
    let step = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01).unwrap();
    let run = step.clone().self_composed(1000).unwrap();

    c.bench_function("rdp_vector_156_default_orders", |b| {
        b.iter(|| rdp_curve(black_box(&step), black_box(&orders)).unwrap())
    });

    let curve = rdp_curve(&run, &orders).unwrap();
    c.bench_function("rdp_to_eps_156_orders", |b| {
        b.iter(|| {
            epsilon_from_rdp_curve(
                black_box(&orders),
                black_box(&curve),
                1e-5,
                Conversion::Improved,
            )
            .unwrap()
        })
    });

    let continuous = AccountantConfig::default();
    c.bench_function("eps_continuous_orders", |b| {
        b.iter(|| epsilon_for_event(black_box(&run), 1e-5, &continuous).unwrap())
    });

    let grid = AccountantConfig::new(Orders::DpAccountingDefault, Conversion::Improved).unwrap();
    c.bench_function("eps_default_orders_end_to_end", |b| {
        b.iter(|| epsilon_for_event(black_box(&run), 1e-5, &grid).unwrap())
    });

    let budget = Budget::new(1.0, 1e-5).unwrap();
    c.bench_function("calibrate_sigma_continuous", |b| {
        b.iter(|| {
            calibrate_noise_multiplier(Sampling::Poisson { rate: 0.01 }, 1000, &budget, &continuous)
                .unwrap()
        })
    });
    c.bench_function("calibrate_sigma_default_orders", |b| {
        b.iter(|| {
            calibrate_noise_multiplier(Sampling::Poisson { rate: 0.01 }, 1000, &budget, &grid)
                .unwrap()
        })
    });
}

/// A 430,000-release run (DP-SEP on Naval) through the ledger: `record_within` and
/// `epsilon_tracked` after every release, the optimised `epsilon_report` after the last
/// (`examples/long_run.rs` prints the same loop's time; docs/accountant.md, section 10).
fn long_run(c: &mut Criterion) {
    let step = PrivacyEvent::poisson_subsampled_gaussian(1.0, 1e-4).unwrap();
    let budget = Budget::new(10.0, 1e-5).unwrap();
    c.bench_function("ledger_430k_releases_record_within_tracked", |b| {
        b.iter(|| {
            let mut ledger = Accountant::new();
            let mut sum = 0.0;
            for _ in 0..430_000 {
                ledger
                    .record_within("step", black_box(step.clone()), &budget)
                    .unwrap();
                sum += ledger.epsilon_tracked(budget.delta()).unwrap();
            }
            sum + ledger.epsilon_report(budget.delta()).unwrap().epsilon
        })
    });
}

criterion_group! {
    name = ledger;
    config = Criterion::default().sample_size(10).measurement_time(std::time::Duration::from_secs(5));
    targets = long_run
}

criterion_group! {
    name = accountant;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}
criterion_main!(accountant, ledger);
