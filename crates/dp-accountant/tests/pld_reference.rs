//! The PLD accountant against Google's dp_accounting 0.6 (PLD and RDP) and the exact analytic
//! Gaussian, on the grid sigma in {0.5, 1, 2, 5, 10} x q in {1e-4, 1e-3, 1e-2, 0.1, 1} x
//! steps in {1, 10, 100, 1000, 10000} x delta in {1e-5, 1e-6}.
//!
//! Data: `tests/data/pld/pld_reference.json`, written by `tests/data/pld/make_reference.py`
//! (provenance inside the file). The full grid runs in release (`--ignored`); the debug-mode
//! test checks the cheap cases.

use dp_accountant::PrivacyEvent;
use dp_accountant::pld::{PldAccountant, PldConfig};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    sigma: f64,
    q: f64,
    steps: u64,
    dp_pess: Option<[f64; 2]>,
    dp_opt: Option<[f64; 2]>,
    rdp: Option<[f64; 2]>,
    exact: Option<[f64; 2]>,
}

const DELTAS: [f64; 2] = [1e-5, 1e-6];

fn reference() -> Reference {
    let text = include_str!("data/pld/pld_reference.json");
    serde_json::from_str(text).expect("reference JSON parses")
}

/// Checks every bar on the selected cases; returns the worst |upper - dp_pess|.
fn check(select: impl Fn(&Case) -> bool) -> f64 {
    let mut worst: f64 = 0.0;
    let mut failures = Vec::new();
    let mut n = 0;
    for case in reference().cases.iter().filter(|c| select(c)) {
        let event = PrivacyEvent::poisson_subsampled_gaussian(case.sigma, case.q)
            .unwrap()
            .self_composed(case.steps)
            .unwrap();
        let acc = PldAccountant::new(&event, &PldConfig::default()).unwrap();
        for (i, &delta) in DELTAS.iter().enumerate() {
            n += 1;
            let eps = acc.epsilon(delta).unwrap();
            let tag = format!(
                "sigma {} q {} steps {} delta {delta:e}",
                case.sigma, case.q, case.steps
            );
            if eps.lower > eps.upper || !eps.upper.is_finite() {
                failures.push(format!("{tag}: bounds {eps:?}"));
            }
            if let Some(exact) = case.exact {
                // q = 1: the analytic Gaussian, exact to 1e-6.
                if (eps.upper - exact[i]).abs() > 1e-6 || (eps.lower - exact[i]).abs() > 1e-6 {
                    failures.push(format!("{tag}: {eps:?} vs exact {}", exact[i]));
                }
            }
            let rdp_i = case.rdp.map_or(f64::INFINITY, |r| r[i]);
            if let Some(pess) = case.dp_pess {
                let diff = eps.upper - pess[i];
                if std::env::var_os("PLD_PRINT").is_some() {
                    // diagnostics: every case's difference, lower-bound gap and grid spacing
                    println!(
                        "DIFF {diff:+.3e} {tag} lower-gap {:.3e} h {:?}",
                        eps.upper - eps.lower,
                        acc.value_discretization_interval()
                    );
                }
                // Where dp_accounting's fixed 1e-4 grid is itself more than 1e-3 loose, our
                // upper bound is *below* its pessimistic value; it is still a valid bound (by
                // construction) and we require it to be below RDP's, which is also valid.
                let tighter = diff < 0.0 && eps.upper <= rdp_i;
                if tighter && diff < -1e-3 {
                    println!(
                        "tighter than dp_accounting: {tag}: {} vs {} ({diff:+.2e})",
                        eps.upper, pess[i]
                    );
                } else {
                    worst = worst.max(diff.abs());
                }
                if diff.abs() > 1e-3 && !tighter {
                    failures.push(format!(
                        "{tag}: upper {} vs dp_accounting {} ({diff:+.2e})",
                        eps.upper, pess[i]
                    ));
                }
                if eps.lower > pess[i] + 1e-9 {
                    failures.push(format!(
                        "{tag}: lower {} above dp_accounting's upper {}",
                        eps.lower, pess[i]
                    ));
                }
            }
            // dp_accounting's "optimistic" epsilon is not a lower bound at large epsilon: at
            // q = 1 it lies 0.5-1 *above* the exact analytic value for every epsilon > 500 of
            // the grid (printed below). So above 500 we do not hold our upper bound to it; the
            // one q < 1 case there (sigma 0.5, q 0.1, 10^4 steps, eps ~ 782) is reported in
            // docs/pld.md as unverified against an independent lower bound.
            let dp_opt_valid = match (case.exact, case.dp_opt) {
                (Some(exact), Some(opt)) => opt[i] <= exact[i],
                (None, Some(opt)) => opt[i] < 500.0,
                _ => true,
            };
            if let (Some(opt), Some(exact)) = (case.dp_opt, case.exact)
                && opt[i] > exact[i]
            {
                println!(
                    "dp_accounting's lower bound above the exact value: {tag}: {} > {}",
                    opt[i], exact[i]
                );
            }
            if let Some(opt) = case.dp_opt.filter(|_| dp_opt_valid)
                && eps.upper < opt[i] - 1e-9
            {
                failures.push(format!(
                    "{tag}: upper {} below dp_accounting's lower {}",
                    eps.upper, opt[i]
                ));
            }
            // The lower bound (merging by post-processing, docs/pld.md Sec. 3, on a grid twice
            // as coarse) is within a stated distance of `upper`: measured at most
            // `0.58 T h_lower + 0.001` (sigma 0.5, q 1e-4: most of the mass just below a grid
            // point) and at most 0.023 wherever q >= 0.01 and T <= 1000 (before: rounding down,
            // up to `0.76 T h_lower`, e.g. 1.01 at sigma 0.5, q 0.1, T 1000).
            if let Some(h) = acc.value_discretization_interval() {
                let mut allowed = 0.75 * case.steps as f64 * 2.0 * h + 0.001;
                if case.q >= 0.01 && case.steps <= 1000 {
                    allowed = allowed.min(0.03);
                }
                if eps.upper - eps.lower > allowed {
                    failures.push(format!(
                        "{tag}: lower {} more than {allowed:.3e} below upper {}",
                        eps.lower, eps.upper
                    ));
                }
            }
            if eps.upper > rdp_i + 1e-9 {
                failures.push(format!("{tag}: upper {} above RDP {rdp_i}", eps.upper));
            }
        }
    }
    assert!(n > 0, "no cases selected");
    assert!(
        failures.is_empty(),
        "{} of {n} checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    worst
}

/// Cheap cases in debug mode: few steps, or noise large enough that the grid is small.
#[test]
fn agrees_with_dp_accounting_on_cheap_cases() {
    let worst = check(|c| c.steps <= 10 && c.sigma >= 1.0 || c.q == 1.0);
    println!("worst |upper - dp_accounting| = {worst:.2e}");
}

/// The full grid (release mode).
#[test]
#[ignore]
fn agrees_with_dp_accounting_on_the_full_grid() {
    let worst = check(|_| true);
    println!("worst |upper - dp_accounting| = {worst:.2e}");
}
