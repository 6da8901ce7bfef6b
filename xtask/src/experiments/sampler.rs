//! Pólya-Gamma sampler throughput (single thread, in process): `PG(1, z)` over a grid of tilts,
//! the Gibbs workload (one draw per element of a slice of tilts), and larger shapes.
//!
//! The criterion benches of the `polya-gamma` crate measure the same with confidence intervals;
//! this experiment gives the report a plot and a number in quick mode.

use std::hint::black_box;
use std::time::Instant;

use polya_gamma::{PolyaGamma, PolyaGammaShape};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::json;

use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, markdown_table};

const SEED: u64 = 20261121;

/// Draws per second of `fill` into a buffer of `n` values, best of three runs.
fn rate(n: usize, mut fill: impl FnMut(&mut [f64])) -> f64 {
    let mut out = vec![0.0; n];
    (0..3)
        .map(|_| {
            let t = Instant::now();
            fill(&mut out);
            black_box(&out);
            n as f64 / t.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max)
}

/// Runs the throughput measurements.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let n = if ctx.quick { 200_000 } else { 2_000_000 };
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let tilts = [0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0];
    let shapes = [0.5, 1.0, 2.5, 10.0, 100.0];
    let mut rows = Vec::new();
    let mut series = Vec::new();
    let mut figures = Vec::new();
    for &b in &shapes {
        let mut points = Vec::new();
        for &z in &tilts {
            let pg = PolyaGamma::new(b, z)?;
            let r = rate(n, |out| pg.fill(&mut rng, out));
            points.push((z.max(0.1), r / 1e6));
            figures.push(json!({"b": b, "z": z, "draws_per_second": r}));
            rows.push(vec![
                format!("{b}"),
                format!("{z}"),
                format!("{:.2}", r / 1e6),
            ]);
        }
        series.push(Series::new(format!("b = {b}"), points));
    }
    // The Gibbs workload: b = 1, one draw per tilt, tilts spread like |x' beta| in a logistic model.
    let gibbs_tilts: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 5.0).collect();
    let sampler = PolyaGammaShape::new(1.0)?;
    let mut failed = false;
    let gibbs = rate(n, |out| {
        failed |= sampler.fill_for_tilts(&mut rng, &gibbs_tilts, out).is_err();
    });
    anyhow::ensure!(!failed, "fill_for_tilts refused valid tilts");
    let plot_file = "pg_throughput.svg";
    line_plot(
        &ctx.output(plot_file),
        &LinePlot {
            title: "Polya-Gamma PG(b, z) draws per second (1 thread, ChaCha8)",
            x_label: "tilt z (0 shown at 0.1)",
            y_label: "million draws / s",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        },
        &series,
    )?;
    let mut section = Section::new(
        "pg_throughput",
        "Pólya-Gamma sampler throughput",
        "cargo xtask bench --quick --only pg_throughput --no-criterion",
    );
    section.seed = format!("{SEED} (ChaCha8Rng)");
    section.data = format!("{n} draws per cell, best of 3");
    section.body = format!(
        "Exact sampler, one thread. Gibbs workload (b = 1, one draw per tilt, tilts uniform on \
         [0, 5]): **{:.2} M draws/s**. For the comparison with polyagamma 2.0.2 in one run see the \
         polya-gamma section of docs/benchmarks.md.\n\n{}",
        gibbs / 1e6,
        markdown_table(&["b", "z", "M draws/s"], &rows)
    );
    section.figures = json!({"cells": figures, "gibbs_draws_per_second": gibbs});
    section.plots.push(plot_file.into());
    Ok(section)
}
