//! Profiling driver for the RDP hot paths (`valgrind --tool=callgrind` counts instructions
//! regardless of machine load): `cargo build --release -p dp-accountant --example profile_rdp`,
//! then `valgrind --tool=callgrind target/release/examples/profile_rdp 5`. A second argument
//! `curves` skips the conversions (for CPU-time measurements: `/usr/bin/time -f %U ... 2000
//! curves`).
use dp_accountant::conversion::epsilon_from_rdp_curve;
use dp_accountant::rdp::rdp_curve;
use dp_accountant::{Conversion, PrivacyEvent, dp_accounting_default_orders};
use std::hint::black_box;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let n: usize = match std::env::args().nth(1).map(|s| s.parse::<usize>()) {
        None => 20,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!(
                "error: the first argument (repetitions) must be a count: {e}\nusage: profile_rdp [N] [curves]"
            );
            return ExitCode::from(2);
        }
    };
    let curves_only = std::env::args().nth(2).as_deref() == Some("curves");
    let orders = dp_accounting_default_orders();
    let step = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01).unwrap();
    let mut s = 0.0;
    for _ in 0..n {
        let c = rdp_curve(black_box(&step), black_box(&orders)).unwrap();
        s += c[0];
    }
    let curve: Vec<f64> = rdp_curve(&step, &orders)
        .unwrap()
        .iter()
        .map(|r| r * 1000.0)
        .collect();
    let conversions = if curves_only { 0 } else { n * 10 };
    for _ in 0..conversions {
        s += epsilon_from_rdp_curve(&orders, black_box(&curve), 1e-5, Conversion::Improved)
            .unwrap()
            .0;
    }
    // A closed stdout is not an error for a profiling driver.
    let _ = writeln!(std::io::stdout(), "{s}");
    ExitCode::SUCCESS
}
