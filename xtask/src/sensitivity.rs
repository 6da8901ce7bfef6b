//! The models' sensitivity checks of `cargo xtask audit`: for every released statistic, the
//! property tests that perturb one record (under the statistic's neighbouring relation) and check
//! that the released quantity moves by no more than its declared bound, run in release mode and
//! reported test by test as a pass/fail table.
//!
//! The checks themselves live next to the code they check (each crate's `tests/`), so that
//! `cargo test --workspace` runs them too; this module runs exactly those test targets and reports
//! what they checked, so an auditor gets one table without reading the test suites.

use std::process::Command;

use serde_json::{Value, json};

use crate::context::Context;
use crate::report::markdown_table;

/// One test target that checks declared sensitivities.
struct Check {
    /// Model or mechanism whose release is checked.
    model: &'static str,
    package: &'static str,
    /// Integration-test target (`tests/<name>.rs`).
    target: &'static str,
    /// Neighbouring relation and declared bound, as the tests check them.
    claim: &'static str,
}

const CHECKS: &[Check] = &[
    Check {
        model: "privacy wall (dense release)",
        package: "dp-core",
        target: "wall_neighbouring",
        claim: "add/remove one record: the released sum moves by at most the declared L2 bound",
    },
    Check {
        model: "privacy wall (segment release)",
        package: "dp-core",
        target: "wall_segments",
        claim: "add/remove one record: the released sum moves by at most the declared L2 bound",
    },
    Check {
        model: "LDA (003 Eq. 24)",
        package: "vips-models",
        target: "lda_sensitivity",
        claim: "add/remove one document: the K x V statistic moves by at most a N / S (Frobenius)",
    },
    Check {
        model: "BLR (003 Sec. 6)",
        package: "vips-models",
        target: "blr_sensitivity",
        claim: "add/remove one record: s1 by at most 1/2, s2 by at most 1/4 (after clipping)",
    },
    Check {
        model: "SBN (000 Eq. 61-68)",
        package: "vips-models",
        target: "sbn_sensitivity",
        claim: "add/remove one image: every released block by at most its declared bound",
    },
    Check {
        model: "LDA end to end (corpus -> prepare -> release)",
        package: "vips-models",
        target: "lda_end_to_end",
        claim: "add/remove one document, including the per-document fixed-length resampling: the \
                K x V statistic moves by at most a N / S",
    },
    Check {
        model: "BLR end to end (CSV / LIBSVM file -> scaling -> release)",
        package: "vips-models",
        target: "blr_end_to_end",
        claim: "add/remove one row with huge values: each block and the joint release move by at \
                most the declared bounds",
    },
    Check {
        model: "SBN end to end (IDX file -> binarise -> release)",
        package: "vips-models",
        target: "sbn_end_to_end",
        claim: "add/remove one image: each block moves by at most its declared bound",
    },
    Check {
        model: "Bayesian linear regression end to end (UCI folder -> public ranges -> release)",
        package: "vips-models",
        target: "linreg_end_to_end",
        claim: "add/remove one row (features 1e300, target 1e3): X^T X, X^T y and y^T y each move \
                by at most 1, the joint release by at most sqrt(3)",
    },
    Check {
        model: "DP-SEP end to end (UCI folder / synthetic MoG -> public scaling -> step)",
        package: "dp-sep",
        target: "end_to_end",
        claim: "one record replaced (target 1e3, features 1e12, NaN): a step that draws it moves by \
                at most 2 gamma C / N, any other step not at all",
    },
    Check {
        model: "DP-SEP (002 Eq. 4)",
        package: "dp-sep",
        target: "sensitivity",
        claim: "replace the drawn record: theta_new moves by at most 2 gamma C / N",
    },
];

/// One test function's outcome, parsed from libtest's `test <name> ... <outcome>` lines.
struct Outcome {
    name: String,
    passed: bool,
}

fn parse_libtest(stdout: &str) -> Vec<Outcome> {
    stdout
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("test ")?;
            let (name, outcome) = rest.rsplit_once(" ... ")?;
            match outcome.trim() {
                "ok" => Some(true),
                "FAILED" => Some(false),
                _ => None, // ignored, or a libtest summary line
            }
            .map(|passed| Outcome {
                name: name.trim().to_string(),
                passed,
            })
        })
        .collect()
}

/// Runs every check, returns the Markdown section, the JSON record and whether all passed.
pub fn run(ctx: &Context) -> anyhow::Result<(String, Value, bool)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut rows = Vec::new();
    let mut records = Vec::new();
    let mut all_pass = true;
    for check in CHECKS {
        eprintln!(
            "xtask audit: sensitivity checks of {} (cargo test --release -p {} --test {})",
            check.model, check.package, check.target
        );
        let output = Command::new(&cargo)
            .current_dir(&ctx.root)
            .args(["test", "--release", "-p", check.package, "--test"])
            .arg(check.target)
            .args(["--", "--test-threads", "1"])
            .output()?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let outcomes = parse_libtest(&stdout);
        // A target that ran no test, or exited non-zero, is a failure even if no line says FAILED.
        let ran_ok = output.status.success() && !outcomes.is_empty();
        if !ran_ok {
            eprintln!("{}", String::from_utf8_lossy(&output.stderr));
            rows.push(vec![
                check.model.to_string(),
                format!("`{}` / `{}`", check.package, check.target),
                "(the test target did not run to completion)".to_string(),
                check.claim.to_string(),
                "FAIL".to_string(),
            ]);
        }
        for outcome in &outcomes {
            rows.push(vec![
                check.model.to_string(),
                format!("`{}` / `{}`", check.package, check.target),
                format!("`{}`", outcome.name),
                check.claim.to_string(),
                if outcome.passed { "PASS" } else { "FAIL" }.to_string(),
            ]);
        }
        let pass = ran_ok && outcomes.iter().all(|o| o.passed);
        all_pass &= pass;
        records.push(json!({
            "model": check.model,
            "package": check.package,
            "test_target": check.target,
            "claim": check.claim,
            "pass": pass,
            "tests": outcomes
                .iter()
                .map(|o| json!({"name": o.name, "pass": o.passed}))
                .collect::<Vec<_>>(),
        }));
    }
    let table = markdown_table(
        &[
            "model",
            "test target",
            "test",
            "what the target checks",
            "result",
        ],
        &rows,
    );
    let md = format!(
        "## Declared sensitivities\n\nEach row is a test that perturbs one record under the stated \
         neighbouring relation (property tests: many random datasets and adversarial records) and \
         checks that the released statistic moves by no more than its declared sensitivity. Rerun \
         one: `cargo test --release -p <package> --test <target>`.\n\n{table}"
    );
    Ok((md, json!(records), all_pass))
}

#[cfg(test)]
mod tests {
    use super::parse_libtest;

    #[test]
    fn libtest_lines_are_parsed_and_other_lines_ignored() {
        let out = "\nrunning 3 tests\ntest a_b ... ok\ntest c ... FAILED\ntest d ... ignored\n\
                   test result: FAILED. 1 passed; 1 failed; 1 ignored\n";
        let parsed = parse_libtest(out);
        assert_eq!(parsed.len(), 2);
        assert_eq!((parsed[0].name.as_str(), parsed[0].passed), ("a_b", true));
        assert_eq!((parsed[1].name.as_str(), parsed[1].passed), ("c", false));
    }
}
