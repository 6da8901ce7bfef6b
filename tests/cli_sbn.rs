//! `dp-bayes fit sbn` / `reconstruct` / `replay` end to end on small IDX files written by the
//! test: a seeded private fit repeated bit for bit, the saved model scoring held-out images in a
//! new process exactly as the fit did, the ledger replayed, typed errors naming flag or file.

mod common;

use common::{fails_with, ok_json, read_json, replays_to, run_ok, s, temp_dir, write_idx};
use serde_json::Value;

fn fit_args<'a>(train: &'a str, test: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "fit",
        "sbn",
        "--idx",
        train,
        "--test-idx",
        test,
        "--hidden",
        "3",
        "--batch-size",
        "100",
        "--passes",
        "2",
        "--epsilon",
        "1",
        "--population",
        "300",
        "--noise-seed",
        "5",
        "--out",
        out,
        "--json",
    ]
}

#[test]
fn private_fit_reconstructs_in_a_new_process_bit_for_bit_and_replays() {
    let tmp = temp_dir("sbn-fit");
    let dir = tmp.path();
    let (train, test) = (dir.join("train.idx"), dir.join("test.idx"));
    write_idx(&train, 300, 4, 4, 1);
    write_idx(&test, 40, 4, 4, 2);
    let (a, b) = (dir.join("a"), dir.join("b"));
    let ra = ok_json(&fit_args(s(&train), s(&test), s(&a)));
    let rb = ok_json(&fit_args(s(&train), s(&test), s(&b)));
    assert_eq!(ra["model"], "sbn");
    assert_eq!(ra["private"], true);
    assert_eq!(ra["population"], 300);
    assert!(ra["noise_seed_warning"].is_string());
    assert!(
        ra.get("diagnostics").is_none(),
        "diagnostics only on request"
    );
    assert!(!a.join("diagnostics.json").exists());
    let eps = ra["epsilon"].as_f64().unwrap();
    assert!(eps > 0.0 && eps <= 1.0, "{eps}");
    // Seeded: the same model, bit for bit.
    let model_a = std::fs::read_to_string(a.join("model.json")).unwrap();
    assert_eq!(
        model_a,
        std::fs::read_to_string(b.join("model.json")).unwrap()
    );
    assert_eq!(ra["heldout"], rb["heldout"]);
    let model: Value = read_json(&a.join("model.json"));
    assert_eq!(model["format_version"], 2);
    assert_eq!(model["model"], "sbn");
    assert_eq!(model["sampling"], ra["sampling"]);
    assert_eq!(model["privacy"]["private"], true);
    assert_eq!(model["posterior"]["w_mean"].as_array().unwrap().len(), 16);
    assert_eq!(
        model["posterior"]["w_covariance"][0]
            .as_array()
            .unwrap()
            .len(),
        6,
        "the lower triangle of a 3 x 3 covariance"
    );
    // The saved model scores the held-out images in a new process as the fit did.
    let bound = ra["heldout"]["mean_lower_bound"].as_f64().unwrap();
    assert!(bound < 0.0 && bound.is_finite());
    let rec = ok_json(&[
        "reconstruct",
        "--model",
        s(&a.join("model.json")),
        "--idx",
        s(&test),
        "--hidden-means",
        "--json",
    ]);
    assert_eq!(rec["images"], 40);
    assert_eq!(
        rec["mean_lower_bound"].as_f64().unwrap().to_bits(),
        bound.to_bits()
    );
    assert_eq!(rec["pixel_accuracy"], ra["heldout"]["pixel_accuracy"]);
    let first = &rec["results"][0];
    let means = first["hidden_means"].as_array().unwrap();
    assert_eq!(means.len(), 3);
    assert!(
        means
            .iter()
            .all(|m| (0.0..=1.0).contains(&m.as_f64().unwrap()))
    );
    // CSV output: the same numbers.
    let csv = String::from_utf8(
        run_ok(&[
            "reconstruct",
            "--model",
            s(&a.join("model.json")),
            "--idx",
            s(&test),
        ])
        .stdout,
    )
    .unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("image,lower_bound,pixel_accuracy"));
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        row[1].parse::<f64>().unwrap().to_bits(),
        first["lower_bound"].as_f64().unwrap().to_bits()
    );
    // The ledger replays to the fit's epsilon through dp-bayes and dp-accountant's replay.
    let ledger = a.join("ledger.json");
    replays_to(&ledger, eps);
    let direct =
        dp_bayes::dp_accountant::cli::execute(&dp_bayes::dp_accountant::cli::CliCommand::Replay {
            ledger_json: std::fs::read_to_string(&ledger).unwrap(),
            source: s(&ledger).into(),
            delta: 1e-5,
        })
        .unwrap();
    assert_eq!(
        direct.json["epsilon"].as_f64().unwrap().to_bits(),
        eps.to_bits()
    );
}

#[test]
fn non_private_fit_has_no_ledger_and_diagnostics_on_request() {
    let tmp = temp_dir("sbn-np");
    let dir = tmp.path();
    let train = dir.join("train.idx");
    write_idx(&train, 120, 4, 4, 3);
    let out = dir.join("run");
    let r = ok_json(&[
        "fit",
        "sbn",
        "--idx",
        s(&train),
        "--hidden",
        "2",
        "--batch-size",
        "60",
        "--out",
        s(&out),
        "--diagnostics",
        "--json",
    ]);
    assert_eq!(r["private"], false);
    assert!(r["warning"].is_string());
    assert!(!out.join("ledger.json").exists());
    assert_eq!(r["diagnostics"]["private"], false);
    assert_eq!(r["diagnostics"]["train_images"], 120);
    assert!(r["heldout"]["note"].is_string());
    assert!(out.join("diagnostics.json").exists());
}

#[test]
fn bad_inputs_exit_2_naming_the_flag_or_file() {
    let tmp = temp_dir("sbn-bad");
    let dir = tmp.path();
    let (train, test, wide) = (
        dir.join("train.idx"),
        dir.join("test.idx"),
        dir.join("wide.idx"),
    );
    write_idx(&train, 100, 4, 4, 1);
    write_idx(&test, 10, 4, 4, 2);
    write_idx(&wide, 10, 5, 5, 3);
    let out = dir.join("run");
    let o = s(&out);
    // A private fit without the public population.
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&train),
            "--epsilon",
            "1",
            "--out",
            o,
        ],
        &["--population"],
    );
    // Held-out images of another size.
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&train),
            "--test-idx",
            s(&wide),
            "--hidden",
            "2",
            "--out",
            o,
        ],
        &["wide.idx", "25 pixels", "expects 16"],
    );
    // Flags that would have no effect.
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&train),
            "--delta",
            "1e-5",
            "--out",
            o,
        ],
        &["--delta"],
    );
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&train),
            "--heldout-images",
            "5",
            "--out",
            o,
        ],
        &["--heldout-images"],
    );
    fails_with(
        &[
            "fit",
            "sbn",
            "--synthetic",
            "--threshold",
            "100",
            "--out",
            o,
        ],
        &["--threshold"],
    );
    // No input, a missing file, a bad setting.
    fails_with(&["fit", "sbn", "--out", o], &["--idx"]);
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&dir.join("missing.idx")),
            "--out",
            o,
        ],
        &["missing.idx"],
    );
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&train),
            "--clip-fraction",
            "2",
            "--out",
            o,
        ],
        &["--clip-fraction"],
    );
    // A model file too large for any reader is refused before the fit.
    let mnist_sized = dir.join("big.idx");
    write_idx(&mnist_sized, 10, 28, 28, 4);
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&mnist_sized),
            "--hidden",
            "200",
            "--out",
            o,
        ],
        &["--hidden", "MB"],
    );
    fails_with(
        &[
            "fit",
            "sbn",
            "--idx",
            s(&train),
            "--kappa",
            "0.3",
            "--out",
            o,
        ],
        &["--kappa"],
    );
    assert!(!out.join("model.json").exists(), "nothing written");
    // A real model for the reconstruct errors.
    let r = ok_json(&[
        "fit",
        "sbn",
        "--idx",
        s(&train),
        "--hidden",
        "2",
        "--out",
        o,
        "--json",
    ]);
    assert_eq!(r["private"], false);
    let model = out.join("model.json");
    fails_with(
        &["reconstruct", "--model", s(&model), "--idx", s(&wide)],
        &["wide.idx", "25 pixels", "expects 16"],
    );
    // `predict` points at `reconstruct` for an SBN.
    let csv = dir.join("rows.csv");
    std::fs::write(&csv, "a\n1\n").unwrap();
    fails_with(
        &["predict", "--model", s(&model), "--csv", s(&csv)],
        &["model.json", "reconstruct"],
    );
    let text = std::fs::read_to_string(&model).unwrap();
    let write = |name: &str, t: &str| {
        let p = dir.join(name);
        std::fs::write(&p, t).unwrap();
        p
    };
    let newer = write(
        "newer.json",
        &text.replacen("\"format_version\":2", "\"format_version\":3", 1),
    );
    fails_with(
        &["reconstruct", "--model", s(&newer), "--idx", s(&test)],
        &["newer.json", "newer"],
    );
    let other = write("other.json", r#"{"format_version": 1, "model": "mog"}"#);
    fails_with(
        &["reconstruct", "--model", s(&other), "--idx", s(&test)],
        &["other.json", "mog", "sbn"],
    );
    let corrupt = write("corrupt.json", &text[..text.len() / 2]);
    fails_with(
        &["reconstruct", "--model", s(&corrupt), "--idx", s(&test)],
        &["corrupt.json", "corrupt"],
    );
    fails_with(
        &[
            "reconstruct",
            "--model",
            s(&model),
            "--idx",
            s(&dir.join("nope.idx")),
        ],
        &["nope.idx"],
    );
}
