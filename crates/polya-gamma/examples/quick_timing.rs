//! Rough single-thread timing of a few workloads (use the criterion bench for real figures).
//! `cargo run -p polya-gamma --release --example quick_timing`

use polya_gamma::{PolyaGamma, PolyaGammaShape};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use std::time::Instant;

fn main() {
    let mut rng = SmallRng::seed_from_u64(1);
    let mut out = vec![0.0; 1_000_000];
    let only: Option<f64> = match std::env::args().nth(1).map(|a| a.parse::<f64>()) {
        None => None,
        Some(Ok(b)) => Some(b),
        Some(Err(e)) => {
            eprintln!("error: the optional argument is a shape B: {e}\nusage: quick_timing [B]");
            std::process::exit(2);
        }
    };
    let all = [
        (1.0, 0.0),
        (1.0, 2.0),
        (2.5, 0.0),
        (10.0, 0.0),
        (100.0, 0.0),
        (0.5, 0.0),
    ];
    for &(b, z) in all.iter().filter(|p| only.is_none_or(|o| p.0 == o)) {
        let pg = PolyaGamma::new(b, z).unwrap();
        let t = Instant::now();
        pg.fill(&mut rng, &mut out);
        let dt = t.elapsed().as_secs_f64();
        println!(
            "PG({b}, {z}): {:.1} ns/draw (mean {:.4})",
            dt * 1e3,
            out.iter().sum::<f64>() / 1e6
        );
    }
    let shape = PolyaGammaShape::new(1.0).unwrap();
    let z: Vec<f64> = (0..1_000_000)
        .map(|i| (i % 2000) as f64 / 100.0 - 10.0)
        .collect();
    for _ in 0..3 {
        let t = Instant::now();
        shape.fill_for_tilts(&mut rng, &z, &mut out).unwrap();
        println!("gibbs: {:.1} ns/draw", t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let mut acc = 0.0;
        for &zi in &z {
            acc += polya_gamma::mean(1.0, zi).unwrap();
        }
        println!(
            "  (mean(1, z) alone: {:.1} ns, checksum {acc:.3})",
            t.elapsed().as_secs_f64() * 1e3
        );
        let t = Instant::now();
        let mut acc = 0.0;
        for &zi in &z {
            acc += polya_gamma::cdf(1.0, 0.0, 0.1 + zi.abs() * 1e-3).unwrap();
        }
        println!(
            "  (cdf(1, 0, x) alone: {:.1} ns, checksum {acc:.3})",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}
