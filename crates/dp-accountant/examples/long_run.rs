//! A long run through the ledger, as dp-core's privacy wall and the engine drive it: for every
//! release `record_within` (the budget check plus the record) and then a spent-epsilon report,
//! and a final (optimised) `epsilon_report` after the last release.
//!
//! ```text
//! cargo run --release -p dp-accountant --example long_run -- [RELEASES] [ACCOUNTANT] \
//!     [tracked|exact|none] [POPULATION] [SIGMA] [BUDGET_EPSILON]
//! ```
//!
//! `ACCOUNTANT` is `rdp` (the default), `pld`, `moments`, `zcdp`, `advanced` or `linear`.
//!
//! The per-release report is `epsilon_tracked(delta)` (`tracked`, the default: a valid bound,
//! cheap), `epsilon(delta)` (`exact`: the optimised answer, one order optimisation per release)
//! or nothing (`none`). Defaults: 430,000 releases (DP-SEP on the Naval data set) of a
//! Poisson-subsampled Gaussian with `q = 1/10,000` and `sigma = 1.0`, RDP accountant, budget
//! `(10, 1e-5)` (`BUDGET_EPSILON` sets its epsilon). Prints the total wall-clock time of the
//! loop (including the final report) and the cost per release; figures are in
//! docs/accountant.md, section 10.
use std::time::Instant;

use dp_accountant::{
    Accountant, AccountantConfig, AccountantError, AccountantKind, Budget, PrivacyEvent,
};

fn main() -> Result<(), AccountantError> {
    let mut args = std::env::args().skip(1);
    let releases: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(430_000);
    let kind = match args.next() {
        Some(name) => name.parse::<AccountantKind>()?,
        None => AccountantKind::Rdp,
    };
    let report = args.next().unwrap_or_else(|| "tracked".to_string());
    let population: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10_000.0);
    let sigma: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let budget_epsilon: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let step = PrivacyEvent::poisson_subsampled_gaussian(sigma, 1.0 / population)?;
    let budget = Budget::new(budget_epsilon, 1e-5)?;
    let config = AccountantConfig::default().with_accountant(kind);
    let mut ledger = Accountant::with_config(config)?;

    let start = Instant::now();
    let mut checksum = 0.0;
    for t in 0..releases {
        ledger.record_within(format!("step {t}"), step.clone(), &budget)?;
        checksum += match report.as_str() {
            "exact" => ledger.epsilon(budget.delta())?,
            "none" => 0.0,
            _ => ledger.epsilon_tracked(budget.delta())?,
        };
    }
    let last = ledger.epsilon_report(budget.delta())?;
    let elapsed = start.elapsed();

    println!(
        "{} releases ({}, {report} epsilon per release, q = 1/{population}, sigma = {sigma}): {:.3} s in accounting, {:.2} us per release",
        releases,
        kind.name(),
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / releases as f64
    );
    println!(
        "final epsilon {:.6} at delta {:e} (order {:.3}, {}); checksum {checksum:.6e}",
        last.epsilon, last.delta, last.order, last.method
    );
    Ok(())
}
