//! Criterion benchmarks of the PLD accountant on the reference grid
//! (sigma x q x steps as in `tests/data/pld/make_reference.py`): one full accounting
//! (compose both bounds, both directions, then epsilon at delta = 1e-5 and 1e-6) per iteration.
//!
//! `cargo bench -p dp-accountant --bench pld` (a filter such as `-- 'pld/0.5'` selects cases).
//! At the end the process prints its peak resident memory (VmHWM), which bounds the peak of
//! every case run.

use criterion::{BenchmarkId, Criterion, criterion_group};
use dp_accountant::PrivacyEvent;
use dp_accountant::pld::{PldAccountant, PldConfig};
use std::hint::black_box;
use std::time::Duration;

const SIGMAS: [f64; 5] = [0.5, 1.0, 2.0, 5.0, 10.0];
const QS: [f64; 5] = [1e-4, 1e-3, 1e-2, 1e-1, 1.0];
const STEPS: [u64; 5] = [1, 10, 100, 1000, 10000];

fn account(sigma: f64, q: f64, steps: u64) -> (f64, f64) {
    let event = PrivacyEvent::poisson_subsampled_gaussian(sigma, q)
        .and_then(|e| e.self_composed(steps))
        .expect("valid event");
    let acc = PldAccountant::new(&event, &PldConfig::default()).expect("accountable");
    (
        acc.epsilon(1e-5).expect("delta valid").upper,
        acc.epsilon(1e-6).expect("delta valid").upper,
    )
}

fn grid(c: &mut Criterion) {
    let mut group = c.benchmark_group("pld");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    for sigma in SIGMAS {
        for q in QS {
            for steps in STEPS {
                let id = BenchmarkId::from_parameter(format!("{sigma}/{q}/{steps}"));
                group.bench_with_input(id, &(sigma, q, steps), |b, &(s, q, t)| {
                    b.iter(|| account(black_box(s), black_box(q), black_box(t)))
                });
            }
        }
    }
    group.finish();
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

criterion_group!(benches, grid);

/// `PLD_BENCH_ONCE=sigma/q/steps[/repeats]` runs that case `repeats` times (default 1) and
/// prints the bounds and the grid spacing, without criterion: a fixed amount of work for
/// instruction counts (`valgrind --tool=callgrind`) and quick checks.
fn run_once(spec: &str) {
    let f: Vec<f64> = spec
        .split('/')
        .map(|x| x.parse().expect("number"))
        .collect();
    let (sigma, q, steps) = (f[0], f[1], f[2] as u64);
    let repeats = f.get(3).map_or(1, |r| *r as usize);
    let event = PrivacyEvent::poisson_subsampled_gaussian(sigma, q)
        .and_then(|e| e.self_composed(steps))
        .expect("valid event");
    for _ in 0..repeats {
        let acc = PldAccountant::new(&event, &PldConfig::default()).expect("accountable");
        let (a, b) = (acc.epsilon(1e-5).unwrap(), acc.epsilon(1e-6).unwrap());
        black_box((a, b));
        if repeats == 1 {
            println!(
                "{spec}: delta 1e-5 {a:?}; delta 1e-6 {b:?}; step {:?}",
                acc.value_discretization_interval()
            );
        }
    }
}

fn main() {
    if let Ok(spec) = std::env::var("PLD_BENCH_ONCE") {
        return run_once(&spec);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    match peak_rss_mb() {
        Some(mb) => println!("pld bench peak resident memory (VmHWM): {mb:.1} MB"),
        None => println!("pld bench peak resident memory: /proc/self/status unavailable"),
    }
}
