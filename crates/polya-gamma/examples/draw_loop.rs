//! Fixed-work draw loop for instruction counting (robust to machine load):
//! `valgrind --tool=callgrind target/release/examples/draw_loop B Z N` draws `N` values of
//! `PG(B, Z)` (one setup) with `SmallRng`, and prints their mean.
//! Instructions per draw = (total - total at `N = 0`) / `N`.

use polya_gamma::PolyaGamma;
use rand::SeedableRng;
use rand::rngs::SmallRng;

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("usage: draw_loop B Z N"))
        .collect();
    let (b, z, n) = match args[..] {
        [b, z, n] => (b, z, n as usize),
        _ => panic!("usage: draw_loop B Z N"),
    };
    let mut rng = SmallRng::seed_from_u64(1);
    let pg = PolyaGamma::new(b, z).unwrap();
    let mut out = vec![0.0; n];
    pg.fill(&mut rng, &mut out);
    println!(
        "PG({b}, {z}): mean of {n} draws {:.6}",
        out.iter().sum::<f64>() / n.max(1) as f64
    );
}
