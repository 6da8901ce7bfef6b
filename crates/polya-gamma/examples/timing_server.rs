//! Timing server for `benches/compare_polyagamma.py`, which interleaves it workload by
//! workload with the same measurement of polyagamma 2.0.2 so both see the same machine load.
//!
//! Reads lines from stdin and answers each with one line (M draws/s, best of `REPS` timings):
//! * `B Z N REPS`: `N` draws of `PG(B, Z)` with [`PolyaGamma::fill`] (setup not timed);
//! * `gibbs N REPS`: one draw of `PG(1, z_i)` per `z_i ~ U(-10, 10)` with
//!   [`PolyaGammaShape::fill_for_tilts`] (the Gibbs workload).
//!
//! `cargo run -p polya-gamma --release --example timing_server`

use std::io::{BufRead, Write};
use std::str::FromStr;
use std::time::Instant;

use polya_gamma::{PolyaGamma, PolyaGammaShape};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// Best rate (M/s) of `reps` runs of `f`, each producing `n` draws, after one warm-up run.
fn best_rate(n: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    n as f64 / best / 1e6
}

const USAGE: &str = "usage (one request per stdin line): 'B Z N REPS' or 'gibbs N REPS'";

fn main() -> std::process::ExitCode {
    match serve() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}\n{USAGE}");
            std::process::ExitCode::from(2)
        }
    }
}

/// What the server can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
enum ServerError {
    /// Stdin could not be read.
    #[error("cannot read stdin: {0}")]
    Io(#[from] std::io::Error),
    /// A request of neither form.
    #[error("cannot read the request {0:.40?}")]
    Request(String),
    /// A field of a request that does not parse.
    #[error("{name} = {value:?} is not a {kind}")]
    BadField {
        /// The field (`B`, `Z`, `N` or `REPS`).
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

/// `value` parsed as field `name` of a request.
fn field<T: FromStr>(
    name: &'static str,
    value: &str,
    kind: &'static str,
) -> Result<T, ServerError> {
    value.parse().map_err(|_| ServerError::BadField {
        name,
        value: value.to_string(),
        kind,
    })
}

fn serve() -> Result<(), ServerError> {
    let mut rng = SmallRng::seed_from_u64(1);
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout();
    for line in stdin.lock().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let rate = match words[..] {
            ["gibbs", n, reps] => {
                let n: usize = field("N", n, "whole number")?;
                let reps: usize = field("REPS", reps, "whole number")?;
                let z: Vec<f64> = (0..n).map(|_| 20.0 * rng.random::<f64>() - 10.0).collect();
                let shape = PolyaGammaShape::new(1.0)?;
                let mut out = vec![0.0; n];
                let mut failed = None;
                let rate = best_rate(n, reps, || {
                    if let Err(e) = shape.fill_for_tilts(&mut rng, &z, &mut out) {
                        failed = Some(e);
                    }
                    std::hint::black_box(&out);
                });
                if let Some(e) = failed {
                    return Err(e.into());
                }
                rate
            }
            [b, z, n, reps] => {
                let b: f64 = field("B", b, "number")?;
                let z: f64 = field("Z", z, "number")?;
                let n: usize = field("N", n, "whole number")?;
                let reps: usize = field("REPS", reps, "whole number")?;
                let pg = PolyaGamma::new(b, z)?;
                let mut out = vec![0.0; n];
                best_rate(n, reps, || {
                    pg.fill(&mut rng, &mut out);
                    std::hint::black_box(&out);
                })
            }
            [] => break,
            _ => return Err(ServerError::Request(line)),
        };
        // The driver went away: stop quietly.
        if writeln!(stdout, "{rate}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            break;
        }
    }
    Ok(())
}
