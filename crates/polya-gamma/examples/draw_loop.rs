//! Fixed-work draw loop for instruction counting (robust to machine load):
//! `valgrind --tool=callgrind target/release/examples/draw_loop B Z N` draws `N` values of
//! `PG(B, Z)` (one setup) with `SmallRng`, and prints their mean;
//! `draw_loop gibbs N` draws one `PG(1, z_i)` per `z_i ~ U(-10, 10)` (the Gibbs workload,
//! the `z_i` generated before the draws); `draw_loop gibbs N skip` generates the `z_i` only.
//! Instructions per draw = (total - total at `N = 0`, resp. with `skip`) / `N`.

use polya_gamma::{PolyaGamma, PolyaGammaShape};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut rng = SmallRng::seed_from_u64(1);
    if args.first().map(String::as_str) == Some("gibbs") {
        let n: usize = args[1].parse().expect("usage: draw_loop gibbs N");
        let z: Vec<f64> = (0..n).map(|_| 20.0 * rng.random::<f64>() - 10.0).collect();
        let mut out = vec![0.0; n];
        let shape = PolyaGammaShape::new(1.0).unwrap();
        if args.get(2).map(String::as_str) != Some("skip") {
            shape.fill_for_tilts(&mut rng, &z, &mut out).unwrap();
        }
        println!(
            "gibbs: mean of {n} draws {:.6}",
            out.iter().sum::<f64>() / n.max(1) as f64
        );
        return;
    }
    let args: Vec<f64> = args
        .iter()
        .map(|a| a.parse().expect("usage: draw_loop B Z N"))
        .collect();
    let (b, z, n) = match args[..] {
        [b, z, n] => (b, z, n as usize),
        _ => panic!("usage: draw_loop B Z N"),
    };
    let pg = PolyaGamma::new(b, z).unwrap();
    let mut out = vec![0.0; n];
    pg.fill(&mut rng, &mut out);
    println!(
        "PG({b}, {z}): mean of {n} draws {:.6}",
        out.iter().sum::<f64>() / n.max(1) as f64
    );
}
