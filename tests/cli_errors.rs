//! `dp-bayes` on bad inputs: a typed one-line error naming the flag, file or line, exit code 2,
//! never a panic.

mod common;

use common::{fails_with, ok_json, s, temp_dir};
use std::path::{Path, PathBuf};

fn blr_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let mut text = String::from("a,b,y\n");
    for i in 0..100 {
        let a = (i as f64 * 0.37).sin() * 4.0 + 5.0;
        let b = (i as f64 * 0.11).cos() * 2.0;
        text.push_str(&format!("{a},{b},{}\n", u8::from(a + b > 5.0)));
    }
    let csv = dir.join("train.csv");
    std::fs::write(&csv, text).unwrap();
    let ranges = dir.join("ranges.csv");
    std::fs::write(&ranges, "a,0,10\nb,-3,3\n").unwrap();
    (csv, ranges)
}

#[test]
fn bad_fit_inputs_are_typed_errors_with_exit_code_2() {
    let tmp = temp_dir("errors-fit");
    let dir = tmp.path();
    let (csv, ranges) = blr_inputs(dir);
    let out = dir.join("out");
    let base = [
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
    ];
    let with = |extra: &[&'static str]| -> Vec<String> {
        base.iter()
            .map(|a| a.to_string())
            .chain(extra.iter().map(|a| a.to_string()))
            .collect()
    };
    let check = |extra: &[&'static str], needles: &[&str]| {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_with(&args, needles);
    };
    // Flags with no effect, and a private fit without a declared population.
    check(&["--delta", "1e-5"], &["--delta", "no effect"]);
    check(&["--noise-seed", "3"], &["--noise-seed", "no effect"]);
    check(&["--accountant", "pld"], &["--accountant", "no effect"]);
    check(&["--epsilon", "1"], &["--population"]);
    check(&["--epsilon", "-1", "--population", "80"], &["--epsilon"]);
    // Missing file, bad CSV line, bad ranges line, unknown label.
    fails_with(
        &[
            "fit",
            "blr",
            "--csv",
            s(&dir.join("missing.csv")),
            "--out",
            s(&out),
        ],
        &["missing.csv"],
    );
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "a,b,y\n1,2,1\n3,oops,0\n").unwrap();
    fails_with(
        &[
            "fit",
            "blr",
            "--csv",
            s(&bad),
            "--label",
            "y",
            "--ranges",
            s(&ranges),
            "--out",
            s(&out),
        ],
        &["bad.csv", "line 3", "oops"],
    );
    let bad_ranges = dir.join("bad-ranges.csv");
    std::fs::write(&bad_ranges, "a,0,10\nb,-3\n").unwrap();
    fails_with(
        &[
            "fit",
            "blr",
            "--csv",
            s(&csv),
            "--label",
            "y",
            "--ranges",
            s(&bad_ranges),
            "--out",
            s(&out),
        ],
        &["bad-ranges.csv", "line 2"],
    );
    fails_with(
        &[
            "fit",
            "blr",
            "--csv",
            s(&csv),
            "--label",
            "nope",
            "--ranges",
            s(&ranges),
            "--out",
            s(&out),
        ],
        &["train.csv", "nope"],
    );
    fails_with(
        &[
            "fit",
            "linreg",
            "--uci",
            s(&dir.join("no-such-folder")),
            "--out",
            s(&out),
        ],
        &["no-such-folder"],
    );
    // A declared range that is not LO:HI with LO < HI names its flag.
    for bad in ["2:1", "1..2", "a:1"] {
        fails_with(
            &[
                "fit",
                "linreg",
                "--uci",
                s(dir),
                "--feature-range",
                bad,
                "--target-range",
                "0:1",
                "--out",
                s(&out),
            ],
            &["--feature-range", "LO:HI"],
        );
    }
    // A radius that is neither `released` nor a finite number > 0 names its flag.
    for bad in ["0", "-1", "inf", "big"] {
        fails_with(
            &[
                "fit",
                "linreg",
                "--uci",
                s(dir),
                "--radius",
                bad,
                "--out",
                s(&out),
            ],
            &["--radius", "released"],
        );
    }
    // Unknown models, and a flag another model takes.
    fails_with(&["fit", "gpt", "--out", s(&out)], &["gpt"]);
    fails_with(&["fit", "sbn", "--corpus", "x"], &["--corpus"]);
    // Nothing was written by any failed fit.
    assert!(!out.join("model.json").exists());
}

#[test]
fn bad_model_files_and_csvs_for_predict_are_typed_errors() {
    let tmp = temp_dir("errors-predict");
    let dir = tmp.path();
    let (csv, ranges) = blr_inputs(dir);
    let out = dir.join("out");
    ok_json(&[
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
    ]);
    let model = out.join("model.json");
    let text = std::fs::read_to_string(&model).unwrap();
    let new = dir.join("new.csv");
    std::fs::write(&new, "b,a\n0.5,4\n").unwrap();

    fails_with(
        &[
            "predict",
            "--model",
            s(&dir.join("nope.json")),
            "--csv",
            s(&new),
        ],
        &["nope.json"],
    );
    let newer = dir.join("newer.json");
    std::fs::write(
        &newer,
        text.replacen("\"format_version\": 2", "\"format_version\": 3", 1),
    )
    .unwrap();
    fails_with(
        &["predict", "--model", s(&newer), "--csv", s(&new)],
        &["newer.json", "format_version 3", "newer"],
    );
    let corrupt = dir.join("corrupt.json");
    std::fs::write(&corrupt, &text[..text.len() / 2]).unwrap();
    fails_with(
        &["predict", "--model", s(&corrupt), "--csv", s(&new)],
        &["corrupt.json", "corrupt"],
    );
    let unknown = dir.join("unknown.json");
    std::fs::write(
        &unknown,
        text.replacen("\"model\": \"blr\"", "\"model\": \"gpt\"", 1),
    )
    .unwrap();
    fails_with(
        &["predict", "--model", s(&unknown), "--csv", s(&new)],
        &["unknown.json", "gpt"],
    );

    let missing_col = dir.join("missing-col.csv");
    std::fs::write(&missing_col, "a\n4\n").unwrap();
    fails_with(
        &["predict", "--model", s(&model), "--csv", s(&missing_col)],
        &["missing-col.csv", "line 1", "`b`"],
    );
    let extra_col = dir.join("extra-col.csv");
    std::fs::write(&extra_col, "a,b,z\n4,0.5,1\n").unwrap();
    fails_with(
        &["predict", "--model", s(&model), "--csv", s(&extra_col)],
        &["extra-col.csv", "`z`"],
    );
    let bad_line = dir.join("bad-line.csv");
    std::fs::write(&bad_line, "a,b\n4,0.5\n\n4,NaN\n").unwrap();
    fails_with(
        &["predict", "--model", s(&model), "--csv", s(&bad_line)],
        &["bad-line.csv", "line 4", "NaN"],
    );
    fails_with(
        &[
            "predict",
            "--model",
            s(&model),
            "--csv",
            s(&dir.join("absent.csv")),
        ],
        &["absent.csv"],
    );
    // Replay: a missing ledger, a corrupt one, a bad delta.
    fails_with(
        &["replay", s(&dir.join("ledger.json")), "--delta", "1e-5"],
        &["ledger.json"],
    );
    let bad_ledger = dir.join("bad-ledger.json");
    std::fs::write(&bad_ledger, "{\"entries\": 3}").unwrap();
    fails_with(
        &["replay", s(&bad_ledger), "--delta", "1e-5"],
        &["bad-ledger.json"],
    );
    fails_with(&["replay", s(&bad_ledger), "--delta", "2"], &["--delta"]);
}
