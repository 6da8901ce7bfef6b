//! Heavy statistical tests of the sampler over the grid
//! `b in {0.01, 0.5, 0.999, 1, 1.5, 2.5, 4, 4.5, 8, 13, 50, 51, 100, 1000}` x
//! `z in {0, 1e-8, 0.5, 1, 2, 5, 10, 50, 177.5, 1000}`.
//!
//! Run: `cargo test -p polya-gamma --release -- --ignored`.
//!
//! At every grid point, with a fixed seed:
//! * mean and variance z-scores against the exact moments (`|score| < 5`; false-alarm rate
//!   5.7e-7 per score under the normal approximation, 1.6e-4 over all 280 scores);
//! * a binned chi-square test with 15 bins whose probabilities come from the crate's exact CDF
//!   (edges: the mpmath quantile points of `cdf_grid.json` and their geometric midpoints),
//!   requiring `p > 1e-4` (false-alarm rate 1e-4 per point, 1.4% over the 140 points).
//!
//! Draw counts: the issue asks 5e6 per point. CI must finish in about 3 minutes on one core,
//! so by default each point gets 200_000 draws (enough to see, e.g., the 1% mean bias of the
//! `(pi/2)^{h/2}` constant at 9 standard errors). Set `PG_STAT_DRAWS=5000000` to run the full
//! 5e6-per-point version (see docs/benchmarks.md for its run time).

use polya_gamma::{PolyaGamma, PolyaGammaShape, cdf, cumulant};
use rand::SeedableRng;
use rand::distr::Distribution;
use rand::rngs::ChaCha8Rng;
use serde_json::Value;
use special::Gamma as _;

const B_GRID: [f64; 14] = [
    0.01, 0.5, 0.999, 1.0, 1.5, 2.5, 4.0, 4.5, 8.0, 13.0, 50.0, 51.0, 100.0, 1000.0,
];
const Z_GRID: [f64; 10] = [0.0, 1e-8, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0, 177.5, 1000.0];

fn draws_for() -> usize {
    match std::env::var("PG_STAT_DRAWS") {
        Ok(v) => v.parse().expect("PG_STAT_DRAWS must be an integer"),
        Err(_) => 200_000,
    }
}

/// The mpmath quantile points for `(b, z)`, sorted.
fn reference_points(table: &Value, b: f64, z: f64) -> Vec<f64> {
    let mut pts: Vec<f64> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["b"].as_f64() == Some(b) && r["z"].as_f64() == Some(z))
        .map(|r| r["x"].as_f64().unwrap())
        .collect();
    pts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    pts
}

/// Chi-square survival function with `df` degrees of freedom.
fn chi_square_p_value(stat: f64, df: f64) -> f64 {
    1.0 - (0.5 * stat).inc_gamma(0.5 * df)
}

/// Runs the z-score and chi-square checks at one grid point; returns a failure message.
fn check_point(
    table: &Value,
    b: f64,
    z: f64,
    n: usize,
    seed: u64,
    mut draw: impl FnMut(&mut ChaCha8Rng) -> f64,
) -> Option<String> {
    let pg = PolyaGamma::new(b, z).unwrap();
    let mean = pg.mean();
    let var = pg.variance();
    let k4 = cumulant(4, b, z).unwrap();
    // Bin edges: reference points and their geometric midpoints.
    let pts = reference_points(table, b, z);
    let mut edges = Vec::new();
    for (i, &p) in pts.iter().enumerate() {
        if i > 0 {
            edges.push((pts[i - 1] * p).sqrt());
        }
        edges.push(p);
    }
    let mut probs = Vec::with_capacity(edges.len() + 1);
    let mut prev = 0.0;
    for &e in &edges {
        let c = cdf(b, z, e).unwrap();
        probs.push(c - prev);
        prev = c;
    }
    probs.push(1.0 - prev);

    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut counts = vec![0u64; probs.len()];
    let (mut s1, mut s2) = (0.0, 0.0);
    for _ in 0..n {
        let x = draw(&mut rng);
        let d = x - mean;
        s1 += d;
        s2 += d * d;
        let bin = edges.partition_point(|&e| e < x);
        counts[bin] += 1;
    }
    let nf = n as f64;
    let m = s1 / nf;
    let v = s2 / nf - m * m;
    let z_mean = m / (var / nf).sqrt();
    let z_var = (v - var) / ((k4 + 2.0 * var * var) / nf).sqrt();
    let stat: f64 = counts
        .iter()
        .zip(&probs)
        .map(|(&c, &p)| {
            let e = p * nf;
            (c as f64 - e).powi(2) / e
        })
        .sum();
    let p_value = chi_square_p_value(stat, (probs.len() - 1) as f64);
    eprintln!(
        "b={b:<6} z={z:<6} n={n:<8} z_mean={z_mean:+.2} z_var={z_var:+.2} chi2={stat:.1} p={p_value:.3}"
    );
    if z_mean.abs() >= 5.0 || z_var.abs() >= 5.0 || p_value <= 1e-4 {
        Some(format!(
            "b={b} z={z}: z_mean={z_mean} z_var={z_var} p={p_value}"
        ))
    } else {
        None
    }
}

fn load_table() -> Value {
    let path = format!("{}/tests/data/cdf_grid.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
#[ignore = "heavy: run in release with --ignored"]
fn sampler_matches_exact_law_over_the_grid() {
    let table = load_table();
    let mut failures = Vec::new();
    let mut seed = 20_261_121u64;
    // Optional filter for investigations: PG_STAT_ONLY_B=0.5 runs one row of the grid.
    let only_b: Option<f64> = std::env::var("PG_STAT_ONLY_B")
        .ok()
        .map(|v| v.parse().unwrap());
    for &b in &B_GRID {
        for &z in &Z_GRID {
            seed += 1;
            if only_b.is_some_and(|o| o != b) {
                continue;
            }
            let pg = PolyaGamma::new(b, z).unwrap();
            if let Some(f) = check_point(&table, b, z, draws_for(), seed, |r| pg.sample(r)) {
                failures.push(f);
            }
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}

/// The per-draw-tilt path (`PolyaGammaShape`, the Gibbs workload) uses a different, cheaper
/// setup for `b = 1`; check it over the `z` grid for the shapes whose setup differs.
#[test]
#[ignore = "heavy: run in release with --ignored"]
fn per_draw_tilt_path_matches_exact_law() {
    let table = load_table();
    let mut failures = Vec::new();
    let mut seed = 30_261_121u64;
    for &b in &[1.0, 2.0, 0.5, 2.5, 100.0] {
        let shape = PolyaGammaShape::new(b).unwrap();
        for &z in &Z_GRID {
            seed += 1;
            let has_points = table["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["b"].as_f64() == Some(b));
            if !has_points {
                continue;
            }
            let draw = |r: &mut ChaCha8Rng| shape.sample_with_tilt(r, -z).unwrap();
            if let Some(f) = check_point(&table, b, z, draws_for(), seed, draw) {
                failures.push(f);
            }
        }
    }
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
}
