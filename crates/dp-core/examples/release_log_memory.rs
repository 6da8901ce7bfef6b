//! Memory and time of the wall's bookkeeping over a long run of tiny releases: 430,000
//! releases of one 100-entry vector block over a 10-record set (one uniform draw per release),
//! noise-free (`noise_free_for_tests`: everything but the draws is the private wall's).
//!
//! `cargo run --release -p dp-core --example release_log_memory [planned|per-release|non-private] [releases]`
//!
//! Peak RSS: run under `/usr/bin/time -v`. Under per-release accounting every release is also a
//! ledger entry; its notes are shared with the wall's log (one copy per spec, an `Arc`). The time printed is the release loop's total minus
//! the time spent in the statistic itself (measured inside it), i.e. the wall's own work.

use std::cell::Cell;
use std::time::{Duration, Instant};

use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};

mod common;
use common::{ExampleError, arg};

fn main() -> Result<(), ExampleError> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "planned".into());
    let releases: u64 = arg(args.next(), "RELEASES", "whole number", 430_000)?;
    let dim = 100;
    let records: Vec<Vec<f64>> = (0..10)
        .map(|i| {
            (0..dim)
                .map(|j| ((i * dim + j) as f64).sin() * 0.05)
                .collect()
        })
        .collect();
    let builder = PrivacyWall::builder(records).sampling(SamplingScheme::uniform_single());
    let builder = match mode.as_str() {
        "planned" => builder
            .epsilon_delta(1.0, 1e-5)
            .planned_run("long run", releases),
        "per-release" => builder.epsilon_delta(1e9, 1e-5).noise_multiplier(1.0),
        "non-private" => builder.non_private(),
        other => {
            return Err(ExampleError::UnknownChoice {
                name: "mode",
                given: other.to_string(),
                expected: "planned, per-release or non-private",
            });
        }
    };
    let mut wall = builder.noise_free_for_tests().seed(1).build()?;
    let mut spec = ReleaseSpec::builder("dp-sep step");
    let factor = spec.vector("factor", dim, 1.0)?;
    let spec = spec.build()?;
    let in_stat = Cell::new(Duration::ZERO);
    let mut out = vec![0.0; dim];
    let t = Instant::now();
    for _ in 0..releases {
        wall.release_into(
            &spec,
            |x: &Vec<f64>, buf| {
                let t = Instant::now();
                buf.dense(factor).copy_from_slice(x);
                in_stat.set(in_stat.get() + t.elapsed());
            },
            &mut out,
        )?;
    }
    let total = t.elapsed();
    let wall_only = total.saturating_sub(in_stat.get());
    println!(
        "{mode}: {releases} releases in {:.3} s; outside the statistic {:.3} s ({:.2} us each); \
         log records {}, ledger entries {}",
        total.as_secs_f64(),
        wall_only.as_secs_f64(),
        wall_only.as_secs_f64() * 1e6 / releases as f64,
        wall.release_log().len(),
        wall.ledger().len()
    );
    Ok(())
}
