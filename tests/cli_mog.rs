//! `dp-bayes fit mog` end to end: the synthetic generator (private, replayed bit for bit) and a
//! CSV of points (non-private), saved component means and covariances, typed errors.

mod common;

use common::{fails_with, ok_json, read_json, replays_to, s, temp_dir};
use serde_json::Value;

#[test]
fn private_synthetic_mog_saves_components_and_replays_bit_for_bit() {
    let tmp = temp_dir("mog-syn");
    let dir = tmp.path();
    let out = dir.join("run");
    let r = ok_json(&[
        "fit",
        "mog",
        "--synthetic",
        "--n",
        "400",
        "--components",
        "3",
        "--epochs",
        "5",
        "--epsilon",
        "1",
        "--noise-seed",
        "4",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["model"], "mog");
    assert_eq!(r["private"], true);
    assert_eq!(
        r["sampling"], "poisson",
        "the wall's batch regime, as the engine fits'"
    );
    assert_eq!(
        r["population"], 400,
        "the generator's size is the public population"
    );
    let eps = r["epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && eps <= 1.0);
    let model: Value = read_json(&out.join("model.json"));
    assert_eq!(model["format_version"], 1);
    assert_eq!(model["means"].as_array().unwrap().len(), 3);
    let cov = &model["covariances"][0];
    assert_eq!(cov.as_array().unwrap().len(), 2);
    assert!(cov[0][0].as_f64().unwrap() > 0.0);
    replays_to(&out.join("ledger.json"), eps);
}

#[test]
fn mog_on_a_csv_of_points_and_bad_inputs() {
    let tmp = temp_dir("mog-csv");
    let dir = tmp.path();
    let csv = dir.join("points.csv");
    let mut text = String::from("a,b\n");
    for i in 0..60 {
        let c = if i % 2 == 0 { 2.0 } else { -2.0 };
        text.push_str(&format!("{},{}\n", c + 0.01 * i as f64, -c));
    }
    std::fs::write(&csv, &text).unwrap();
    let out = dir.join("run");
    let r = ok_json(&[
        "fit",
        "mog",
        "--csv",
        s(&csv),
        "--components",
        "2",
        "--epochs",
        "5",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["private"], false);
    assert!(!out.join("ledger.json").exists());
    let model: Value = read_json(&out.join("model.json"));
    assert_eq!(model["columns"], serde_json::json!(["a", "b"]));
    // Bad inputs: a private CSV fit without --population, a bad cell, a bad family.
    fails_with(
        &[
            "fit",
            "mog",
            "--csv",
            s(&csv),
            "--epsilon",
            "1",
            "--out",
            s(&out),
        ],
        &["--population"],
    );
    std::fs::write(&csv, "a,b\n1,2\n3,x\n").unwrap();
    fails_with(
        &["fit", "mog", "--csv", s(&csv), "--out", s(&out)],
        &["points.csv", "line 3", "`b`"],
    );
    fails_with(
        &[
            "fit",
            "mog",
            "--synthetic",
            "--family",
            "round",
            "--out",
            s(&out),
        ],
        &["--family"],
    );
}

/// Issue 22: `--accountant` drives a private mog fit: the summary and the ledger name it, its
/// calibration meets the budget, and replay reproduces the epsilon.
#[test]
fn mog_fit_with_the_moments_accountant_replays_under_it() {
    let tmp = temp_dir("mog-accountant");
    let dir = tmp.path();
    let out = dir.join("run");
    let r = ok_json(&[
        "fit",
        "mog",
        "--synthetic",
        "--n",
        "400",
        "--components",
        "3",
        "--epochs",
        "5",
        "--epsilon",
        "1",
        "--accountant",
        "moments",
        "--noise-seed",
        "4",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["accountant"], "moments");
    let eps = r["epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && eps <= 1.0, "{eps}");
    let model: Value = read_json(&out.join("model.json"));
    assert_eq!(model["privacy"]["accountant"], "moments");
    let ledger: Value = read_json(&out.join("ledger.json"));
    assert_eq!(ledger["accountant"], "moments");
    replays_to(&out.join("ledger.json"), eps);
}
