//! The built binary: the issue's command forms, JSON fields, exit status 2 on bad arguments.
//! (Needs `--features cli`; the argument-to-result logic is also tested in the library.)

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_dp-accountant"))
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> serde_json::Value {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    serde_json::from_str(stdout.trim()).expect("one JSON object")
}

#[test]
fn issue_forms_work() {
    let e = json(&[
        "epsilon",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert!(e["epsilon"].as_f64().unwrap() > 0.0 && e["order"].as_f64().unwrap() > 1.0);
    assert!(e["method"].as_str().unwrap().starts_with("rdp/"));
    let w = json(&[
        "epsilon",
        "--noise-multiplier",
        "0.8",
        "--sample-size",
        "6",
        "--population",
        "60000",
        "--steps",
        "100",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert!(w["epsilon"].as_f64().unwrap() > 0.0);
    let d = json(&[
        "delta",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--epsilon",
        "2",
        "--json",
    ]);
    let delta = d["delta"].as_f64().unwrap();
    assert!(delta > 0.0 && delta < 1e-5);
    let c = json(&[
        "calibrate",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--json",
    ]);
    assert!(c["noise_multiplier"].as_f64().unwrap() > 1.0 && c["epsilon"].as_f64().unwrap() <= 1.0);
    let z = json(&["zcdp", "--rho", "0.1", "--delta", "1e-5", "--json"]);
    assert!(z["epsilon"].as_f64().unwrap() < z["epsilon_bun_steinke"].as_f64().unwrap());
    let g = json(&[
        "epsilon",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--orders",
        "default",
        "--json",
    ]);
    assert_eq!(g["method"], "rdp/improved/dp_accounting_default");
}

#[test]
fn replay_round_trips_a_ledger() {
    let mut ledger = dp_accountant::Accountant::new();
    let step = dp_accountant::PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01).unwrap();
    for t in 0..50 {
        ledger.record(format!("step {t}"), step.clone()).unwrap();
    }
    let dir = tempfile::Builder::new()
        .prefix("dp-accountant-cli-")
        .tempdir()
        .unwrap();
    let path = dir.path().join("ledger.json");
    std::fs::write(&path, ledger.to_json().unwrap()).unwrap();
    let r = json(&[
        "replay",
        path.to_str().unwrap(),
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(
        r["epsilon"].as_f64().unwrap().to_bits(),
        ledger.epsilon(1e-5).unwrap().to_bits()
    );
    std::fs::write(&path, "{\"format\": 3}").unwrap();
    let (code, _, err) = run(&["replay", path.to_str().unwrap(), "--delta", "1e-5"]);
    assert_eq!(code, 2);
    assert_eq!(err.trim().lines().count(), 1);
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    for args in [
        &[
            "epsilon",
            "--noise-multiplier",
            "-1",
            "--sampling-rate",
            "0.01",
            "--steps",
            "10",
            "--delta",
            "1e-5",
        ][..],
        &[
            "epsilon",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "1.5",
            "--steps",
            "10",
            "--delta",
            "1e-5",
        ],
        &[
            "epsilon",
            "--noise-multiplier",
            "1",
            "--sampling-rate",
            "0.1",
            "--steps",
            "10",
            "--delta",
            "1",
        ],
        &[
            "epsilon",
            "--noise-multiplier",
            "NaN",
            "--sampling-rate",
            "0.1",
            "--steps",
            "10",
            "--delta",
            "1e-5",
        ],
        &[
            "epsilon",
            "--noise-multiplier",
            "1",
            "--sample-size",
            "7",
            "--population",
            "6",
            "--steps",
            "10",
            "--delta",
            "1e-5",
        ],
        &[
            "epsilon",
            "--noise-multiplier",
            "1",
            "--steps",
            "10",
            "--delta",
            "1e-5",
            "--orders",
            "0.5,2",
        ],
        &[
            "epsilon",
            "--noise-multiplier",
            "1",
            "--steps",
            "10",
            "--delta",
            "1e-5",
            "--accountant",
            "prv",
        ],
        &[
            "calibrate",
            "--epsilon",
            "0",
            "--delta",
            "1e-5",
            "--steps",
            "10",
        ],
        &["zcdp", "--rho", "0.1"],
        &["frobnicate"],
        &["replay", "/nonexistent/ledger.json", "--delta", "1e-5"],
    ] {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 2, "{args:?}: {stdout} {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
    }
}

/// `--accountant pld` on the epsilon, delta and calibrate commands: JSON with the PLD method
/// and a lower bound, tighter than the RDP answer to the same question.
#[test]
fn pld_forms_work() {
    let base = [
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
    ];
    let with = |cmd: &str, extra: &[&str]| {
        let mut v = vec![cmd];
        v.extend_from_slice(&base);
        v.extend_from_slice(extra);
        v.push("--json");
        json(&v)
    };
    let rdp = with("epsilon", &["--delta", "1e-5"]);
    let pld = with("epsilon", &["--delta", "1e-5", "--accountant", "pld"]);
    assert_eq!(pld["accountant"], "pld");
    assert_eq!(pld["method"], "pld/connect-the-dots");
    let (up, lo) = (
        pld["epsilon"].as_f64().unwrap(),
        pld["epsilon_lower"].as_f64().unwrap(),
    );
    // dp_accounting's PLD: 1.5154 for this run (docs/pld.md)
    assert!(lo <= up && (up - 1.5154).abs() < 1e-3, "{pld}");
    assert!(up < rdp["epsilon"].as_f64().unwrap());
    assert!(rdp.get("epsilon_lower").is_none());
    // Fixed-size batches (replace-one) too (docs/pld.md, section 9): below RDP, with a lower
    // bound (the achievable Poisson pair's) below the claim.
    let fixed = [
        "--noise-multiplier",
        "0.8",
        "--sample-size",
        "6",
        "--population",
        "60000",
        "--steps",
        "100",
        "--delta",
        "1e-5",
        "--json",
    ];
    let wor = json(&[&["epsilon"][..], &fixed[..], &["--accountant", "pld"][..]].concat());
    let wor_rdp = json(&[&["epsilon"][..], &fixed[..]].concat());
    let (p, r) = (
        wor["epsilon"].as_f64().unwrap(),
        wor_rdp["epsilon"].as_f64().unwrap(),
    );
    assert!(p > 0.0 && p < r, "{wor} {wor_rdp}");
    let lo = wor["epsilon_lower"].as_f64().unwrap();
    assert!((0.0..=p).contains(&lo), "{wor}");
    let d = with("delta", &["--epsilon", "2", "--accountant", "pld"]);
    assert!(d["delta_lower"].as_f64().unwrap() <= d["delta"].as_f64().unwrap());
    assert!(d["delta"].as_f64().unwrap() > 0.0 && d["delta"].as_f64().unwrap() < 1e-5);
    let c = json(&[
        "calibrate",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--accountant",
        "pld",
        "--json",
    ]);
    assert_eq!(c["accountant"], "pld");
    assert!(c["epsilon"].as_f64().unwrap() <= 1.0);
    assert!(c["epsilon_lower"].as_f64().unwrap() <= c["epsilon"].as_f64().unwrap());
    // RDP needs sigma ~1.513 here; PLD is tighter, so less noise suffices
    let sigma = c["noise_multiplier"].as_f64().unwrap();
    assert!(sigma > 1.0 && sigma < 1.5, "{c}");
    let (code, stdout, _) = run(&[
        "epsilon",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("PLD lower bound"), "{stdout}");
}

/// Issue 16: a noise multiplier whose `1/(2 sigma^2)` overflows gives `"epsilon": "inf"` with a
/// reason (it said 10.13 with rdp 0), `delta` 1 at epsilon 1 (it said 0), and no `null` anywhere.
#[test]
fn infinite_answers_are_explicit() {
    let base = [
        "--noise-multiplier",
        "1e-300",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--json",
    ];
    let mut args = vec!["epsilon", "--delta", "1e-5"];
    args.extend(base);
    let e = json(&args);
    assert_eq!(e["epsilon"], "inf", "{e}");
    assert!(e["reason"].as_str().unwrap().contains("f64"), "{e}");
    assert!(!e.to_string().contains("null"), "{e}");
    args.extend(["--accountant", "pld"]);
    let e = json(&args);
    assert_eq!(e["epsilon"], "inf", "{e}");
    assert!(!e.to_string().contains("null"), "{e}");
    let mut args = vec!["delta", "--epsilon", "1"];
    args.extend(base);
    let d = json(&args);
    assert_eq!(d["delta"].as_f64(), Some(1.0), "{d}");
    // PLD at noise multiplier 2e-5 (it said about 10 with upper = lower)
    let e = json(&[
        "epsilon",
        "--noise-multiplier",
        "2e-5",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
        "--json",
    ]);
    assert!(e["epsilon"].as_f64().is_none_or(|x| x > 1e9), "{e}");
}

/// Issue 17: resource limits, negative numbers, flags without effect, long values, stdout.
#[test]
fn bad_input_gets_typed_one_line_errors() {
    // PLD at 10^12 steps: refused before allocating, naming the flag and the size
    let (code, _, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        "1.1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000000000000",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--steps") && err.contains("1000000000000"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // a negative number is a value, rejected by its domain
    let (code, _, err) = run(&[
        "calibrate",
        "--epsilon",
        "-1",
        "--delta",
        "1e-5",
        "--sampling-rate",
        "0.01",
        "--steps",
        "10",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--epsilon") && err.contains("> 0"), "{err}");
    // flags that would have no effect
    let (code, _, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        "1",
        "--sampling-rate",
        "0.01",
        "--steps",
        "10",
        "--delta",
        "1e-5",
        "--replace-one",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--replace-one"), "{err}");
    let (code, _, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        "1",
        "--steps",
        "10",
        "--delta",
        "1e-5",
        "--accountant",
        "pld",
        "--classic",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--classic"), "{err}");
    // a huge bad value is echoed as a short excerpt only
    let long = "x".repeat(100_000);
    let (code, _, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        &long,
        "--steps",
        "1",
        "--delta",
        "1e-5",
    ]);
    assert_eq!(code, 2);
    assert!(err.len() < 600, "{} bytes", err.len());
    assert!(err.contains("--noise-multiplier"), "{err}");
    // steps in exponent form, and too large for a counter
    let e = json(&[
        "epsilon",
        "--noise-multiplier",
        "1",
        "--steps",
        "1e3",
        "--delta",
        "1e-5",
        "--json",
    ]);
    assert_eq!(e["steps"], 1000);
    let (code, _, err) = run(&[
        "epsilon",
        "--noise-multiplier",
        "1",
        "--steps",
        "1e30",
        "--delta",
        "1e-5",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--steps"), "{err}");
}

/// Calibration towards an unreachable epsilon ends with a typed error (it used to run for
/// seconds to minutes); a reachable tiny one returns a multiplier that meets it.
#[test]
fn calibration_to_tiny_epsilon_terminates() {
    let (code, _, err) = run(&[
        "calibrate",
        "--epsilon",
        "1e-300",
        "--delta",
        "1e-12",
        "--sampling-rate",
        "0.01",
        "--steps",
        "1000",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no noise multiplier"), "{err}");
}

/// A closed stdout ends the tool quietly; a full device is a reported error, never a panic.
#[test]
fn closed_or_full_stdout() {
    use std::process::Stdio;
    let args = [
        "epsilon",
        "--noise-multiplier",
        "1",
        "--steps",
        "10",
        "--delta",
        "1e-5",
    ];
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_dp-accountant"))
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = Command::new(env!("CARGO_BIN_EXE_dp-accountant"))
            .args(args)
            .stdout(Stdio::from(full))
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("stdout") && !err.contains("panicked"), "{err}");
    }
}
