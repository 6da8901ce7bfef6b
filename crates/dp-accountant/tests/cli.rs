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
    let path = std::env::temp_dir().join(format!("dp-accountant-cli-{}.json", std::process::id()));
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
    let _ = std::fs::remove_file(&path);
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
            "--accountant",
            "pld",
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
