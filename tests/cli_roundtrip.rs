//! `dp-bayes` end to end on small synthetic inputs written to a temporary directory: fit ->
//! save -> predict in a new process (bit for bit), replay of the ledger (the fit's epsilon bit
//! for bit), atomic writes.

mod common;

use std::path::{Path, PathBuf};

use common::{ok_json, read_json, replays_to, run_ok, s, temp_dir};
use serde_json::Value;

/// A UCI-style split folder: 3 features and a target, 240 rows, one split (200 / 40), and a
/// ranges file naming the columns.
fn uci_folder(dir: &Path) -> (PathBuf, PathBuf) {
    let data = dir.join("toy/data");
    std::fs::create_dir_all(&data).unwrap();
    let mut text = String::new();
    for i in 0..240 {
        let a = (i as f64 * 0.37).sin() * 4.0 + 5.0;
        let b = (i as f64 * 0.11).cos() * 2.0;
        let c = ((i * 7) % 13) as f64;
        let t = 2.0 + 0.8 * a - 1.5 * b + 0.1 * c + (i as f64 * 1.3).sin() * 0.3;
        text.push_str(&format!("{a} {b} {c} {t}\n"));
    }
    std::fs::write(data.join("data.txt"), text).unwrap();
    std::fs::write(data.join("index_features.txt"), "0\n1\n2\n").unwrap();
    std::fs::write(data.join("index_target.txt"), "3\n").unwrap();
    std::fs::write(data.join("n_splits.txt"), "1\n").unwrap();
    let idx = |r: std::ops::Range<usize>| r.map(|i| format!("{i}\n")).collect::<String>();
    std::fs::write(data.join("index_train_0.txt"), idx(0..200)).unwrap();
    std::fs::write(data.join("index_test_0.txt"), idx(200..240)).unwrap();
    let ranges = dir.join("toy-ranges.json");
    std::fs::write(
        &ranges,
        r#"{"columns": ["a", "b", "c", "t"],
            "ranges": {"a": {"lower": 0, "upper": 10}, "b": {"lower": -3, "upper": 3},
                       "c": {"lower": 0, "upper": 12}, "t": {"lower": -5, "upper": 15}}}"#,
    )
    .unwrap();
    (dir.join("toy"), ranges)
}

/// A labelled CSV (3 features, label `y`) and its public ranges file.
fn blr_csv(dir: &Path) -> (PathBuf, PathBuf) {
    let mut text = String::from("a,b,c,y\n");
    for i in 0..300 {
        let a = (i as f64 * 0.37).sin() * 4.0 + 5.0;
        let b = (i as f64 * 0.11).cos() * 2.0;
        let c = ((i * 7) % 13) as f64;
        let y = u8::from(a - 5.0 + b + (i as f64 * 1.7).sin() > 0.0);
        text.push_str(&format!("{a},{b},{c},{y}\n"));
    }
    let csv = dir.join("train.csv");
    std::fs::write(&csv, text).unwrap();
    let ranges = dir.join("ranges.csv");
    std::fs::write(&ranges, "name,lower,upper\nc,0,12\na,0,10\nb,-3,3\n").unwrap();
    (csv, ranges)
}

/// New rows: features in another column order, the target / label column present (ignored),
/// values inside and outside the declared ranges.
fn new_rows(dir: &Path, label: &str) -> PathBuf {
    let path = dir.join("new.csv");
    std::fs::write(
        &path,
        format!("c,{label},a,b\n3,1,4.5,0.25\n0,0,0.123456789,-2.999\n12,1,9.99,2.5\n50,0,-7,9\n"),
    )
    .unwrap();
    path
}

fn bits(v: &Value) -> Vec<u64> {
    v["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p.as_object()
                .unwrap()
                .values()
                .map(|x| x.as_f64().unwrap().to_bits())
        })
        .collect()
}

/// Fits, then predicts in two further processes (JSON and CSV output) and checks the
/// predictions are identical bit for bit, and that replay gives the fit's epsilon bit for bit.
fn round_trip(model: &str, fit_args: &[&str], dir: &Path, label: &str) {
    let out = dir.join("out");
    let mut args = vec!["fit", model];
    args.extend_from_slice(fit_args);
    args.extend_from_slice(&[
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--out",
        s(&out),
        "--json",
    ]);
    let fit = ok_json(&args);
    assert_eq!(fit["model"], model);
    assert_eq!(fit["private"], true);
    // BLR files are format version 2 (they record `sampling`); linreg's are still 1.
    let version = if model == "blr" { 2 } else { 1 };
    assert_eq!(fit["format_version"], version);
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("model.json")).unwrap()).unwrap();
    assert_eq!(saved["format_version"], version);
    if model == "blr" {
        assert_eq!(saved["sampling"], fit["sampling"]);
        assert_eq!(saved["sampling"], "poisson");
    }
    // linreg is one release and defaults to the tight PLD accountant; the others to RDP.
    assert_eq!(
        fit["accountant"],
        if model == "linreg" { "pld" } else { "rdp" }
    );
    let epsilon = fit["epsilon"].as_f64().unwrap();
    assert!(epsilon > 0.0 && epsilon <= 1.0);
    for f in ["model.json", "ledger.json", "result.json"] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    assert!(!out.join("diagnostics.json").exists());
    // result.json is the printed object; it has no diagnostics and no null.
    let result: Value = read_json(&out.join("result.json"));
    assert_eq!(result, fit);
    assert!(result.get("diagnostics").is_none());
    // model.json holds no data-derived, non-noised counts.
    let model_text = std::fs::read_to_string(out.join("model.json")).unwrap();
    for key in ["n_train", "realised", "clipped", "seconds"] {
        assert!(!model_text.contains(key), "model.json contains {key}");
    }

    let csv = new_rows(dir, label);
    let model_file = out.join("model.json");
    let p1 = ok_json(&[
        "predict",
        "--model",
        s(&model_file),
        "--csv",
        s(&csv),
        "--json",
    ]);
    let p2 = ok_json(&[
        "predict",
        "--model",
        s(&model_file),
        "--csv",
        s(&csv),
        "--json",
    ]);
    assert_eq!(p1["rows"], 4);
    assert_eq!(p1["model"], model);
    let b1 = bits(&p1);
    assert_eq!(b1.len(), if model == "linreg" { 8 } else { 4 });
    assert!(b1.iter().all(|&b| f64::from_bits(b).is_finite()));
    assert_eq!(b1, bits(&p2), "a second process predicts the same bits");
    if model == "blr" {
        // The same model as a format-version-1 file (before `sampling`) still predicts the
        // same bits.
        let mut old = saved.clone();
        old["format_version"] = 1.into();
        old.as_object_mut().unwrap().remove("sampling");
        let old_file = out.join("model-v1.json");
        std::fs::write(&old_file, serde_json::to_string_pretty(&old).unwrap()).unwrap();
        let p3 = ok_json(&[
            "predict",
            "--model",
            s(&old_file),
            "--csv",
            s(&csv),
            "--json",
        ]);
        assert_eq!(b1, bits(&p3), "a version-1 file predicts the same bits");
        std::fs::remove_file(&old_file).unwrap();
    }
    // The CSV output reads back to the same bits.
    let text = run_ok(&["predict", "--model", s(&model_file), "--csv", s(&csv)]);
    let text = String::from_utf8(text.stdout).unwrap();
    let csv_bits: Vec<u64> = text
        .lines()
        .skip(1)
        .flat_map(|l| {
            l.split(',')
                .map(|v| v.parse::<f64>().unwrap().to_bits())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(csv_bits, b1);

    // Replay gives the fit's epsilon bit for bit, through dp-bayes and through the library
    // function dp-accountant's own `replay` command runs.
    let ledger = out.join("ledger.json");
    replays_to(&ledger, epsilon);
    let direct =
        dp_bayes::dp_accountant::cli::execute(&dp_bayes::dp_accountant::cli::CliCommand::Replay {
            ledger_json: std::fs::read_to_string(&ledger).unwrap(),
            source: s(&ledger).into(),
            delta: 1e-5,
        })
        .unwrap();
    assert_eq!(
        direct.json["epsilon"].as_f64().unwrap().to_bits(),
        epsilon.to_bits()
    );
}

#[test]
fn linreg_fit_predict_replay_round_trip() {
    let tmp = temp_dir("linreg");
    let dir = tmp.path();
    let (uci, ranges) = uci_folder(dir);
    round_trip(
        "linreg",
        &[
            "--uci",
            s(&uci),
            "--ranges",
            s(&ranges),
            "--population",
            "200",
        ],
        dir,
        "t",
    );
    // The predictions agree with the library's saved model loaded in this process.
    let model =
        dp_bayes::vips_models::linreg::SavedLinreg::load(dir.join("out/model.json")).unwrap();
    assert_eq!(model.feature_names(), ["a", "b", "c"]);
    let p = ok_json(&[
        "predict",
        "--model",
        s(&dir.join("out/model.json")),
        "--csv",
        s(&new_rows(dir, "t")),
        "--json",
    ]);
    let here = model.predict(&[4.5, 0.25, 3.0]).unwrap();
    assert_eq!(
        p["predictions"][0]["mean"].as_f64().unwrap().to_bits(),
        here.mean.to_bits()
    );
    assert_eq!(
        p["predictions"][0]["variance"].as_f64().unwrap().to_bits(),
        here.variance.to_bits()
    );
}

/// linreg's default (PLD) needs less noise than RDP for the same budget, and `--accountant rdp`
/// still selects RDP; both spend at most the budget.
#[test]
fn linreg_defaults_to_pld_and_rdp_can_be_chosen() {
    let tmp = temp_dir("linreg_accountant");
    let dir = tmp.path();
    let (uci, ranges) = uci_folder(dir);
    let fit = |extra: &[&str], out: &str| {
        let out = dir.join(out);
        let mut args = vec![
            "fit",
            "linreg",
            "--uci",
            s(&uci),
            "--ranges",
            s(&ranges),
            "--population",
            "200",
            "--epsilon",
            "1",
            "--noise-seed",
            "3",
            "--out",
            s(&out),
            "--json",
        ];
        args.extend_from_slice(extra);
        ok_json(&args)
    };
    let pld = fit(&[], "pld");
    let rdp = fit(&["--accountant", "rdp"], "rdp");
    assert_eq!(pld["accountant"], "pld");
    assert_eq!(rdp["accountant"], "rdp");
    let sigma = |v: &Value| v["noise_multiplier"].as_f64().unwrap();
    assert!(
        sigma(&pld) < 0.95 * sigma(&rdp),
        "{} vs {}",
        sigma(&pld),
        sigma(&rdp)
    );
    for v in [&pld, &rdp] {
        assert!(v["epsilon"].as_f64().unwrap() <= 1.0);
    }
}

#[test]
fn blr_fit_predict_replay_round_trip() {
    let tmp = temp_dir("blr");
    let dir = tmp.path();
    let (csv, ranges) = blr_csv(dir);
    round_trip(
        "blr",
        &[
            "--csv",
            s(&csv),
            "--label",
            "y",
            "--ranges",
            s(&ranges),
            "--population",
            "240",
        ],
        dir,
        "y",
    );
    let p = ok_json(&[
        "predict",
        "--model",
        s(&dir.join("out/model.json")),
        "--csv",
        s(&new_rows(dir, "y")),
        "--json",
    ]);
    for row in p["predictions"].as_array().unwrap() {
        let prob = row["probability"].as_f64().unwrap();
        assert!(prob > 0.0 && prob < 1.0);
    }
}

#[test]
fn non_private_fit_says_so_and_writes_no_ledger() {
    let tmp = temp_dir("nonprivate");
    let dir = tmp.path();
    let (csv, ranges) = blr_csv(dir);
    let out = dir.join("out");
    // A stale ledger of an earlier fit is removed: it would describe another model.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("ledger.json"), "{}").unwrap();
    let fit = ok_json(&[
        "fit",
        "blr",
        "--csv",
        s(&csv),
        "--label",
        "y",
        "--ranges",
        s(&ranges),
        "--out",
        s(&out),
        "--json",
        "--diagnostics",
    ]);
    assert_eq!(fit["private"], false);
    assert_eq!(fit["epsilon"], "inf");
    assert!(fit["warning"].as_str().unwrap().contains("non-private"));
    assert_eq!(fit["diagnostics"]["private"], false);
    assert!(!out.join("ledger.json").exists());
    assert!(out.join("diagnostics.json").is_file());
    let result: Value = read_json(&out.join("result.json"));
    assert!(
        result.get("diagnostics").is_none(),
        "result.json has no diagnostics"
    );
    assert_eq!(result["private"], false);
}

#[test]
fn outputs_are_replaced_whole_and_no_temporary_file_is_left() {
    let tmp = temp_dir("atomic");
    let dir = tmp.path();
    let (csv, ranges) = blr_csv(dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // An existing, longer model.json is replaced whole (no tail of the old file left).
    let old = format!("{{\"old\": \"{}\"}}\n", "x".repeat(200_000));
    std::fs::write(out.join("model.json"), &old).unwrap();
    // A hard link to the old file: a write in place would change what it shows, a rename of a
    // new file over the name leaves it alone.
    let link = dir.join("old-model-link.json");
    std::fs::hard_link(out.join("model.json"), &link).unwrap();
    let args = [
        "fit",
        "blr",
        "--csv",
        s(&csv),
        "--label",
        "y",
        "--ranges",
        s(&ranges),
        "--population",
        "240",
        "--epsilon",
        "0.5",
        "--out",
        s(&out),
        "--json",
    ];
    ok_json(&args);
    let first = std::fs::read_to_string(out.join("model.json")).unwrap();
    assert!(first.len() < old.len());
    let value: Value = serde_json::from_str(&first).expect("a whole JSON file");
    assert_eq!(value["format_version"], 2);
    assert!(value.get("old").is_none());
    assert_eq!(
        std::fs::read_to_string(&link).unwrap(),
        old,
        "the old file was not written in place"
    );
    ok_json(&args);
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["ledger.json", "model.json", "result.json"],
        "{names:?}"
    );
}
