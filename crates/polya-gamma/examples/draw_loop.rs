//! Fixed-work draw loop for instruction counting (robust to machine load):
//! `valgrind --tool=callgrind target/release/examples/draw_loop B Z N` draws `N` values of
//! `PG(B, Z)` (one setup) with `SmallRng`, and prints their mean;
//! `draw_loop gibbs N` draws one `PG(1, z_i)` per `z_i ~ U(-10, 10)` (the Gibbs workload,
//! the `z_i` generated before the draws); `draw_loop gibbs N skip` generates the `z_i` only.
//! Instructions per draw = (total - total at `N = 0`, resp. with `skip`) / `N`.

use std::io::Write;
use std::process::ExitCode;
use std::str::FromStr;

use polya_gamma::{PolyaGamma, PolyaGammaShape};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

const USAGE: &str = "usage: draw_loop B Z N | draw_loop gibbs N [skip]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// What the driver can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
enum DrawLoopError {
    /// Arguments of neither form.
    #[error("{0}")]
    Usage(&'static str),
    /// An argument that does not parse.
    #[error("{name} = {value:?} is not a {kind}")]
    BadArgument {
        /// The argument (`B`, `Z` or `N`).
        name: &'static str,
        /// What was given.
        value: String,
        /// What it should be.
        kind: &'static str,
    },
    /// The sampler refused its parameters.
    #[error(transparent)]
    PolyaGamma(#[from] polya_gamma::Error),
}

/// `value` parsed as argument `name`.
fn arg<T: FromStr>(
    name: &'static str,
    value: &str,
    kind: &'static str,
) -> Result<T, DrawLoopError> {
    value.parse().map_err(|_| DrawLoopError::BadArgument {
        name,
        value: value.to_string(),
        kind,
    })
}

fn run() -> Result<(), DrawLoopError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut rng = SmallRng::seed_from_u64(1);
    if args.first().map(String::as_str) == Some("gibbs") {
        let n: usize = arg(
            "N",
            args.get(1).ok_or(DrawLoopError::Usage("gibbs needs N"))?,
            "whole number",
        )?;
        let z: Vec<f64> = (0..n).map(|_| 20.0 * rng.random::<f64>() - 10.0).collect();
        let mut out = vec![0.0; n];
        let shape = PolyaGammaShape::new(1.0)?;
        if args.get(2).map(String::as_str) != Some("skip") {
            shape.fill_for_tilts(&mut rng, &z, &mut out)?;
        }
        // A closed stdout is not an error for a profiling driver.
        let _ = writeln!(
            std::io::stdout(),
            "gibbs: mean of {n} draws {:.6}",
            out.iter().sum::<f64>() / n.max(1) as f64
        );
        return Ok(());
    }
    let (b, z, n) = match &args[..] {
        [b, z, n] => (
            arg::<f64>("B", b, "number")?,
            arg::<f64>("Z", z, "number")?,
            arg::<usize>("N", n, "whole number")?,
        ),
        _ => return Err(DrawLoopError::Usage("expected three arguments")),
    };
    let pg = PolyaGamma::new(b, z)?;
    let mut out = vec![0.0; n];
    pg.fill(&mut rng, &mut out);
    let _ = writeln!(
        std::io::stdout(),
        "PG({b}, {z}): mean of {n} draws {:.6}",
        out.iter().sum::<f64>() / n.max(1) as f64
    );
    Ok(())
}
