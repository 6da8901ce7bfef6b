//! `dp-bayes fit pbp` and `predict` end to end on a small UCI-layout folder written to a temp
//! dir: a private fit replayed bit for bit, predictions in a new process equal to a second
//! process and to the library, a non-private fit with training-fitted scaling saved marked
//! `"private": false`, and typed errors for bad inputs.

mod common;

use std::path::{Path, PathBuf};

use common::{fails_with, ok_json, read_json, replays_to, run, run_ok, s, temp_dir};
use dp_sep::pbp::saved::SavedPbp;
use serde_json::Value;

/// A deterministic row: features `a` in [0, 10], `b` in [-1, 1], target `y` in about [2, 8].
fn row(i: usize) -> (f64, f64, f64) {
    let a = (i * 37 % 101) as f64 / 10.1;
    let b = ((i * 53 % 97) as f64 / 48.5) - 1.0;
    (a, b, 5.0 + 2.0 * (a / 3.0).sin() + b)
}

/// Writes a UCI-layout folder `<dir>/<name>` (240 rows, 200 train / 40 test, one split) and a
/// ranges file for it; returns both paths.
fn uci(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let data: String = (0..240)
        .map(|i| {
            let (a, b, y) = row(i);
            format!("{a} {b} {y}\n")
        })
        .collect();
    let idx = |r: std::ops::Range<usize>| r.map(|i| format!("{i}\n")).collect::<String>();
    for (file, text) in [
        ("data.txt", data),
        ("index_features.txt", "0\n1\n".into()),
        ("index_target.txt", "2\n".into()),
        ("n_splits.txt", "1\n".into()),
        ("n_hidden.txt", "4\n".into()),
        ("n_epochs.txt", "3\n".into()),
        ("index_train_0.txt", idx(0..200)),
        ("index_test_0.txt", idx(200..240)),
    ] {
        std::fs::write(folder.join(file), text).unwrap();
    }
    let ranges = dir.join("ranges.json");
    std::fs::write(
        &ranges,
        r#"{"dataset": "toy", "provenance": "declared for the test",
            "columns": ["a", "b", "y"],
            "ranges": {"a": {"lower": 0, "upper": 10}, "b": {"lower": -1, "upper": 1},
                       "y": {"lower": 0, "upper": 10}}}"#,
    )
    .unwrap();
    (folder, ranges)
}

/// New rows, two outside the declared box.
fn new_csv(dir: &Path) -> (PathBuf, Vec<Vec<f64>>) {
    let rows = vec![
        vec![1.0, 0.5],
        vec![7.25, -0.3],
        vec![-50.0, 3.0],
        vec![1e6, -1e6],
    ];
    let mut text = String::from("b,y,a\n");
    for r in &rows {
        text.push_str(&format!("{},9,{}\n", r[1], r[0]));
    }
    let path = dir.join("new.csv");
    std::fs::write(&path, text).unwrap();
    (path, rows)
}

/// `predict --json` twice (two processes): identical, and equal bit for bit to the library's
/// `SavedPbp::predict` on the same rows.
fn predictions_match_the_library(model: &Path, csv: &Path, rows: &[Vec<f64>]) {
    let args = ["predict", "--model", s(model), "--csv", s(csv), "--json"];
    let first = run_ok(&args);
    let second = run(&args);
    assert_eq!(first.stdout, second.stdout, "two processes, same bytes");
    let p: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(p["model"], "pbp");
    assert_eq!(p["rows"], rows.len());
    let lib = SavedPbp::load(model).unwrap();
    for (i, r) in rows.iter().enumerate() {
        let (mean, var) = lib.predict(r).unwrap();
        let got = &p["predictions"][i];
        assert_eq!(got["mean"].as_f64().unwrap().to_bits(), mean.to_bits());
        assert_eq!(got["variance"].as_f64().unwrap().to_bits(), var.to_bits());
        assert!(var > 0.0);
    }
    // The CSV output carries the same numbers.
    let csv_out = run_ok(&["predict", "--model", s(model), "--csv", s(csv)]);
    let text = String::from_utf8(csv_out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("mean,variance"));
    for (i, line) in lines.enumerate() {
        let (m, v) = line.split_once(',').unwrap();
        let want = &p["predictions"][i];
        assert_eq!(m.parse::<f64>().unwrap(), want["mean"].as_f64().unwrap());
        assert_eq!(
            v.parse::<f64>().unwrap(),
            want["variance"].as_f64().unwrap()
        );
    }
}

/// The held-out RMSE of result.json recomputed from the saved model on the test rows.
fn heldout_rmse_from_the_saved_model(model: &Path) -> f64 {
    let lib = SavedPbp::load(model).unwrap();
    let se: f64 = (200..240)
        .map(|i| {
            let (a, b, y) = row(i);
            let r = y - lib.predict(&[a, b]).unwrap().0;
            r * r
        })
        .sum();
    (se / 40.0).sqrt()
}

#[test]
fn private_pbp_fit_predicts_bit_for_bit_and_replays() {
    let tmp = temp_dir("pbp-private");
    let dir = tmp.path();
    let (folder, ranges) = uci(dir, "toy");
    let out = dir.join("run");
    let r = ok_json(&[
        "fit",
        "pbp",
        "--uci",
        s(&folder),
        "--ranges",
        s(&ranges),
        "--epsilon",
        "1",
        "--population",
        "200",
        "--noise-seed",
        "5",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["model"], "pbp");
    assert_eq!(r["private"], true);
    assert_eq!(
        r["sampling"], "poisson",
        "the wall's batch regime, as the engine fits'"
    );
    assert_eq!(r["population"], 200);
    assert_eq!(r["settings"]["method"], "dp-sep");
    assert_eq!(r["settings"]["epochs"], 3, "n_epochs.txt");
    assert_eq!(r["settings"]["hidden"][0], 4, "n_hidden.txt");
    assert_eq!(
        r["settings"]["batch_size"], 100,
        "PRIVATE_PBP's S capped at N/2"
    );
    let eps = r["epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && eps <= 1.0, "{eps}");
    let model = read_json(&out.join("model.json"));
    assert_eq!(model["format_version"], 1);
    assert_eq!(model["model"], "pbp");
    assert_eq!(model["architecture"]["input_dim"], 2);
    assert_eq!(model["scaling"]["private"], true);
    assert_eq!(model["scaling"]["features"][1]["name"], "b");
    assert_eq!(model["scaling"]["target"]["upper"], 10.0);
    assert_eq!(
        model["privacy"]["epsilon"].as_f64().unwrap().to_bits(),
        eps.to_bits()
    );
    let text = std::fs::read_to_string(out.join("model.json")).unwrap();
    assert!(!text.contains("null") && !text.contains("n_train"));
    let result = read_json(&out.join("result.json"));
    let rmse = result["heldout"]["test_rmse"].as_f64().unwrap();
    assert_eq!(
        rmse.to_bits(),
        heldout_rmse_from_the_saved_model(&out.join("model.json")).to_bits()
    );
    assert!(
        result["heldout"]["test_log_likelihood"]
            .as_f64()
            .unwrap()
            .is_finite()
    );
    let (csv, rows) = new_csv(dir);
    predictions_match_the_library(&out.join("model.json"), &csv, &rows);
    // Predictions of a private model stay in the declared target range.
    let lib = SavedPbp::load(out.join("model.json")).unwrap();
    for r in &rows {
        assert!((0.0..=10.0).contains(&lib.predict(r).unwrap().0));
    }
    replays_to(&out.join("ledger.json"), eps);
}

#[test]
fn non_private_pbp_with_fitted_scaling_saves_it_marked_non_private() {
    let tmp = temp_dir("pbp-nonprivate");
    let dir = tmp.path();
    let (folder, _) = uci(dir, "toy2");
    let out = dir.join("run");
    let r = ok_json(&[
        "fit",
        "pbp",
        "--uci",
        s(&folder),
        "--epochs",
        "2",
        "--hidden",
        "3",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["private"], false);
    assert!(
        r.get("sampling").is_none(),
        "non-private SEP has no batches: {r}"
    );
    assert!(r["warning"].as_str().unwrap().contains("non-private"));
    assert_eq!(r["settings"]["method"], "sep");
    assert!(!out.join("ledger.json").exists());
    let model = read_json(&out.join("model.json"));
    assert_eq!(model["scaling"]["private"], false);
    assert!(model["scaling"]["features"][0].get("lower").is_none());
    assert_eq!(model["scaling"]["features"][0]["name"], "x1");
    assert_eq!(model["privacy"]["private"], false);
    let result = read_json(&out.join("result.json"));
    assert_eq!(
        result["heldout"]["test_rmse"].as_f64().unwrap().to_bits(),
        heldout_rmse_from_the_saved_model(&out.join("model.json")).to_bits()
    );
    let csv = dir.join("x.csv");
    std::fs::write(&csv, "x1,x2\n1,0.5\n8,-0.2\n").unwrap();
    predictions_match_the_library(
        &out.join("model.json"),
        &csv,
        &[vec![1.0, 0.5], vec![8.0, -0.2]],
    );
}

#[test]
fn bad_pbp_inputs_are_typed_errors() {
    let tmp = temp_dir("pbp-errors");
    let dir = tmp.path();
    let (folder, ranges) = uci(dir, "toy3");
    let out = dir.join("run");
    let f = s(&folder);
    let o = s(&out);
    // Private without declared ranges (no committed file for this folder).
    fails_with(
        &[
            "fit",
            "pbp",
            "--uci",
            f,
            "--epsilon",
            "1",
            "--population",
            "200",
            "--out",
            o,
        ],
        &["--ranges", "declared public ranges"],
    );
    fails_with(
        &[
            "fit",
            "pbp",
            "--uci",
            f,
            "--ranges",
            s(&ranges),
            "--epsilon",
            "1",
            "--out",
            o,
        ],
        &["--population"],
    );
    fails_with(
        &["fit", "pbp", "--uci", f, "--batch-size", "10", "--out", o],
        &["--batch-size", "--epsilon"],
    );
    fails_with(
        &[
            "fit",
            "pbp",
            "--uci",
            f,
            "--ranges",
            s(&ranges),
            "--epsilon",
            "1",
            "--population",
            "200",
            "--one-record",
            "--batch-size",
            "10",
            "--out",
            o,
        ],
        &["--one-record", "--batch-size"],
    );
    fails_with(
        &[
            "fit",
            "pbp",
            "--uci",
            f,
            "--ranges",
            s(&ranges),
            "--epsilon",
            "1",
            "--population",
            "200",
            "--batch-size",
            "500",
            "--out",
            o,
        ],
        &["--batch-size", "--population"],
    );
    fails_with(
        &["fit", "pbp", "--uci", f, "--split", "3", "--out", o],
        &["--split"],
    );
    fails_with(
        &["fit", "pbp", "--uci", f, "--hidden", "0", "--out", o],
        &["--hidden"],
    );
    fails_with(
        &["fit", "pbp", "--uci", f, "--gamma", "-1", "--out", o],
        &["--gamma"],
    );
    // More steps than dp_sep::limits::MAX_STEPS: refused before allocating, naming the flag
    // that allows it (which the command has).
    fails_with(
        &[
            "fit",
            "pbp",
            "--uci",
            f,
            "--epochs",
            "1000000000",
            "--out",
            o,
        ],
        &["--allow-long-run"],
    );
    // A corrupt data file: the error names the file and the line.
    std::fs::write(folder.join("data.txt"), "1 2 3\n4 five 6\n").unwrap();
    fails_with(
        &["fit", "pbp", "--uci", f, "--out", o],
        &["data.txt", "line 2"],
    );
    assert!(!out.join("model.json").exists(), "no failed fit writes");
    // predict: a CSV without a feature column, a newer model, a corrupt model.
    let (folder, _) = uci(dir, "toy4");
    ok_json(&[
        "fit",
        "pbp",
        "--uci",
        s(&folder),
        "--epochs",
        "1",
        "--hidden",
        "2",
        "--out",
        o,
        "--json",
    ]);
    let model = out.join("model.json");
    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "x1,z\n1,2\n").unwrap();
    fails_with(
        &["predict", "--model", s(&model), "--csv", s(&csv)],
        &["bad.csv", "line 1", "x2"],
    );
    std::fs::write(&csv, "x1,x2\n1,2\n3,inf\n").unwrap();
    fails_with(
        &["predict", "--model", s(&model), "--csv", s(&csv)],
        &["bad.csv"],
    );
    let text = std::fs::read_to_string(&model).unwrap();
    let newer = dir.join("newer.json");
    std::fs::write(
        &newer,
        text.replacen("\"format_version\": 1", "\"format_version\": 9", 1),
    )
    .unwrap();
    std::fs::write(&csv, "x1,x2\n1,2\n").unwrap();
    fails_with(
        &["predict", "--model", s(&newer), "--csv", s(&csv)],
        &["newer.json", "newer"],
    );
    let corrupt = dir.join("corrupt.json");
    std::fs::write(
        &corrupt,
        text.replacen("\"input_dim\": 2", "\"input_dim\": 5", 1),
    )
    .unwrap();
    fails_with(
        &["predict", "--model", s(&corrupt), "--csv", s(&csv)],
        &["corrupt.json", "corrupt PBP model file"],
    );
}

/// Issue 22: `--accountant` drives the calibration of a DP-SEP fit (PLD: less noise at the same
/// epsilon), the summary, the saved model and the ledger name it, and replay reproduces the
/// epsilon; `--clipping` reaches the fit (the recommendation's innovation clipping by default
/// below epsilon 2) and is refused where it has no effect.
#[test]
fn pbp_accountant_and_clipping_reach_the_fit_and_the_ledger() {
    let tmp = temp_dir("pbp-accountant");
    let dir = tmp.path();
    let (folder, ranges) = uci(dir, "toy3");
    let fit = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "fit",
            "pbp",
            "--uci",
            s(&folder),
            "--ranges",
            s(&ranges),
            "--epsilon",
            "1",
            "--population",
            "200",
            "--noise-seed",
            "5",
            "--out",
            s(out),
            "--json",
        ];
        args.extend_from_slice(extra);
        ok_json(&args)
    };
    let rdp_out = dir.join("rdp");
    let rdp = fit(&[], &rdp_out);
    assert_eq!(rdp["accountant"], "rdp");
    assert_eq!(rdp["settings"]["clipping"], "innovation", "private_pbp(1)");
    let pld_out = dir.join("pld");
    let pld = fit(&["--accountant", "pld", "--clipping", "value"], &pld_out);
    assert_eq!(pld["accountant"], "pld");
    assert_eq!(pld["settings"]["clipping"], "value");
    let sigma = |r: &Value| r["noise_multiplier"].as_f64().unwrap();
    assert!(
        sigma(&pld) < sigma(&rdp),
        "{} vs {}",
        sigma(&pld),
        sigma(&rdp)
    );
    let eps = pld["epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && eps <= 1.0, "{eps}");
    let model = read_json(&pld_out.join("model.json"));
    assert_eq!(model["privacy"]["accountant"], "pld");
    let ledger = read_json(&pld_out.join("ledger.json"));
    assert_eq!(ledger["accountant"], "pld");
    replays_to(&pld_out.join("ledger.json"), eps);
    // --clipping: refused without --epsilon, with --one-record, and for an unknown name
    let bad = dir.join("bad");
    let o = s(&bad);
    let f = s(&folder);
    fails_with(
        &[
            "fit",
            "pbp",
            "--uci",
            f,
            "--clipping",
            "innovation",
            "--out",
            o,
        ],
        &["--clipping", "no effect"],
    );
    fails_with(
        &[
            "fit",
            "pbp",
            "--uci",
            f,
            "--ranges",
            s(&ranges),
            "--epsilon",
            "1",
            "--population",
            "200",
            "--one-record",
            "--clipping",
            "innovation",
            "--out",
            o,
        ],
        &["--clipping", "--one-record"],
    );
    fails_with(
        &["fit", "pbp", "--uci", f, "--clipping", "both", "--out", o],
        &["--clipping", "value", "innovation"],
    );
}
