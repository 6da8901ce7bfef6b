//! The input forms of issue 20 in new processes: `fit blr --libsvm FILE --dim D` and `predict
//! --libsvm`, `fit linreg --csv FILE --label COL --ranges RANGES.csv` and `predict --csv`,
//! `--sampling poisson|fixed` on `fit lda|blr|sbn`; their typed errors (exit 2, naming the
//! flags or the file). The data files are small synthetic ones written by the tests.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use common::{fails_with, ok_json, read_json, replays_to, run_ok, s, temp_dir};
use serde_json::Value;

/// 300 sparse binary rows of dimension 10 (about 3 active ids each), label 1 when id 1 or 2
/// is active; deterministic.
fn write_libsvm(dir: &Path) -> PathBuf {
    let mut text = String::new();
    for i in 0..300u32 {
        let ids: Vec<u32> = {
            let mut v = vec![1 + i % 10, 1 + (i * 7 + 3) % 10, 1 + (i * 13 + 5) % 10];
            v.sort_unstable();
            v.dedup();
            v
        };
        let y = u8::from(ids.contains(&1) || ids.contains(&2));
        let _ = write!(text, "{y}");
        for id in ids {
            let _ = write!(text, " {id}:1");
        }
        text.push('\n');
    }
    let p = dir.join("train.svm");
    std::fs::write(&p, text).unwrap();
    p
}

/// 200 rows `a,b,y` with `y = 2a - 3b + small wobble`, `a` in [0, 10], `b` in [-1, 1], and
/// the declared ranges file (every feature and the target).
fn write_linreg_csv(dir: &Path) -> (PathBuf, PathBuf) {
    let mut text = String::from("a,b,y\n");
    for i in 0..200u32 {
        let a = f64::from(i % 41) / 4.0;
        let b = f64::from((i * 17) % 21) / 10.0 - 1.0;
        let wobble = f64::from((i * 31) % 11) / 20.0 - 0.25;
        let _ = writeln!(text, "{a},{b},{}", 2.0 * a - 3.0 * b + wobble);
    }
    let csv = dir.join("lin.csv");
    std::fs::write(&csv, text).unwrap();
    let ranges = dir.join("ranges.csv");
    std::fs::write(&ranges, "name,lower,upper\na,0,10\nb,-1,1\ny,-10,30\n").unwrap();
    (csv, ranges)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

#[test]
fn blr_libsvm_fit_then_predict_in_a_new_process() {
    let tmp = temp_dir("inputs-libsvm");
    let dir = tmp.path();
    let train = write_libsvm(dir);
    let out = dir.join("fit");
    let r = ok_json(&[
        "fit",
        "blr",
        "--libsvm",
        s(&train),
        "--dim",
        "10",
        "--radius",
        "1.7320508075688772",
        "--epsilon",
        "2",
        "--population",
        "240",
        "--noise-seed",
        "7",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["model"], "blr");
    assert_eq!(r["dim"], 10);
    assert_eq!(r["sampling"], "poisson");
    assert_eq!(r["settings"]["input"]["dim_declared"], true);
    assert!(r["noise_seed_warning"].is_string());
    assert_eq!(read_json(&out.join("result.json"))["sampling"], "poisson");
    replays_to(&out.join("ledger.json"), f(&r["epsilon"]));

    // New rows as LIBSVM (labels read and ignored) and the same rows as a dense CSV.
    let new = dir.join("new.svm");
    std::fs::write(&new, "0 1:1 5:1\n1 7:1 9:1\n0\n").unwrap();
    let model = out.join("model.json");
    let p = ok_json(&[
        "predict",
        "--model",
        s(&model),
        "--libsvm",
        s(&new),
        "--dim",
        "10",
        "--json",
    ]);
    assert_eq!(p["model"], "blr");
    assert_eq!(p["rows"], 3);
    assert_eq!(p["libsvm"], s(&new));
    let probs: Vec<f64> = p["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| f(&r["probability"]))
        .collect();
    assert!(probs.iter().all(|&q| q > 0.0 && q < 1.0), "{probs:?}");
    let names: Vec<String> = (1..=10).map(|j| format!("f{j}")).collect();
    let mut csv = names.join(",");
    for ids in [&[1, 5][..], &[7, 9], &[]] {
        let row: Vec<&str> = (1..=10)
            .map(|j| if ids.contains(&j) { "1" } else { "0" })
            .collect();
        csv.push('\n');
        csv.push_str(&row.join(","));
    }
    let dense = dir.join("new.csv");
    std::fs::write(&dense, csv).unwrap();
    let q = ok_json(&[
        "predict",
        "--model",
        s(&model),
        "--csv",
        s(&dense),
        "--json",
    ]);
    for (a, b) in probs.iter().zip(q["predictions"].as_array().unwrap()) {
        assert!((a - f(&b["probability"])).abs() < 1e-12, "{a} vs {b}");
    }
    // The CSV text output: a header and one line per row.
    let text = String::from_utf8(
        run_ok(&[
            "predict",
            "--model",
            s(&model),
            "--libsvm",
            s(&new),
            "--dim",
            "10",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert_eq!(text.lines().next(), Some("probability"));

    // A dimension that is not the model's, and an id above the declared dimension.
    fails_with(
        &[
            "predict",
            "--model",
            s(&model),
            "--libsvm",
            s(&new),
            "--dim",
            "12",
        ],
        &["--dim 12", s(&model), "dimension 10"],
    );
    fails_with(
        &["predict", "--model", s(&model), "--libsvm", s(&new)],
        &["--dim", s(&model)],
    );
    let wide = dir.join("wide.svm");
    std::fs::write(&wide, "1 1:1\n0 11:1\n").unwrap();
    fails_with(
        &[
            "predict",
            "--model",
            s(&model),
            "--libsvm",
            s(&wide),
            "--dim",
            "10",
        ],
        &["wide.svm", "line 2", "exceeds the dimension 10"],
    );
}

#[test]
fn linreg_csv_fit_then_predict_in_a_new_process() {
    let tmp = temp_dir("inputs-linreg");
    let dir = tmp.path();
    let (csv, ranges) = write_linreg_csv(dir);
    let out = dir.join("fit");
    let r = ok_json(&[
        "fit",
        "linreg",
        "--csv",
        s(&csv),
        "--label",
        "y",
        "--ranges",
        s(&ranges),
        // A declared radius, sqrt(1 + d): rows of the declared box are never rescaled (the
        // default releases the rows' root-mean-square norm from the data).
        "--radius",
        "1.7320508075688772",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["model"], "linreg");
    assert_eq!(r["private"], false);
    assert_eq!(r["settings"]["ranges"], s(&ranges));
    assert_eq!(r["settings"]["input"]["label"], "y");
    let new = dir.join("new.csv");
    std::fs::write(&new, "b,a\n0,5\n1,1\n").unwrap();
    let p = ok_json(&[
        "predict",
        "--model",
        s(&out.join("model.json")),
        "--csv",
        s(&new),
        "--json",
    ]);
    assert_eq!(p["model"], "linreg");
    let pred = p["predictions"].as_array().unwrap();
    // Non-private: close to 2a - 3b (10 and -1; the ridge prior shrinks a little).
    assert!((f(&pred[0]["mean"]) - 10.0).abs() < 1.0, "{p}");
    assert!((f(&pred[1]["mean"]) + 1.0).abs() < 1.0, "{p}");
    assert!(f(&pred[0]["variance"]) > 0.0);

    // Private, with the ledger replayed.
    let private = dir.join("private");
    let r = ok_json(&[
        "fit",
        "linreg",
        "--csv",
        s(&csv),
        "--label",
        "y",
        "--ranges",
        s(&ranges),
        "--epsilon",
        "1",
        "--population",
        "200",
        "--out",
        s(&private),
        "--json",
    ]);
    replays_to(&private.join("ledger.json"), f(&r["epsilon"]));

    // Errors naming the flag or the file.
    fails_with(
        &[
            "fit",
            "linreg",
            "--csv",
            s(&csv),
            "--label",
            "y",
            "--out",
            s(&out),
        ],
        &["--ranges"],
    );
    let short = dir.join("short.csv");
    std::fs::write(&short, "name,lower,upper\na,0,10\ny,-10,30\n").unwrap();
    fails_with(
        &[
            "fit",
            "linreg",
            "--csv",
            s(&csv),
            "--label",
            "y",
            "--ranges",
            s(&short),
            "--out",
            s(&out),
        ],
        &["short.csv", "b"],
    );
    fails_with(
        &[
            "fit",
            "linreg",
            "--csv",
            s(&csv),
            "--label",
            "nope",
            "--ranges",
            s(&ranges),
            "--out",
            s(&out),
        ],
        &["lin.csv", "nope"],
    );
    fails_with(
        &[
            "fit",
            "linreg",
            "--csv",
            s(&csv),
            "--uci",
            s(dir),
            "--ranges",
            s(&ranges),
            "--out",
            s(&out),
        ],
        &["--csv", "--uci"],
    );
}

/// `fit linreg --csv CSV --label y --ranges RANGES` followed by `extra`: the argument vector the
/// held-out tests repeat.
fn linreg_csv_args<'a>(csv: &'a Path, ranges: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "fit",
        "linreg",
        "--csv",
        s(csv),
        "--label",
        "y",
        "--ranges",
        s(ranges),
    ];
    args.extend_from_slice(extra);
    args
}

/// Issue 20: `fit linreg --csv --test-fraction F --split-seed S` holds out a seeded, public
/// share of the rows and reports test RMSE and log-likelihood; the assignment depends on the
/// row index and the seed only (not on the values), is reproducible, and changes with the seed.
#[test]
fn linreg_csv_held_out_split_is_seeded_and_scored() {
    let tmp = temp_dir("inputs-linreg-split");
    let dir = tmp.path();
    let (csv, ranges) = write_linreg_csv(dir);
    let out = dir.join("fit");
    let fit = |csv: &Path, extra: &[&str]| -> Value {
        let mut tail = extra.to_vec();
        tail.extend_from_slice(&["--diagnostics", "--out", s(&out), "--json"]);
        ok_json(&linreg_csv_args(csv, &ranges, &tail))
    };
    let split = ["--test-fraction", "0.25", "--split-seed", "4"];
    let r = fit(&csv, &split);
    let h = &r["heldout"];
    assert_eq!(
        (f(&h["test_fraction"]), h["split_seed"].as_u64()),
        (0.25, Some(4))
    );
    assert!(f(&h["test_rmse"]) > 0.0 && f(&h["test_rmse"]) < 1.5, "{h}");
    assert!(f(&h["test_log_likelihood"]).is_finite(), "{h}");
    let (n_train, n_test) = (
        r["diagnostics"]["n_train"].as_u64().unwrap(),
        r["diagnostics"]["n_test"].as_u64().unwrap(),
    );
    assert_eq!(n_train + n_test, 200);
    // Binomial(200, 0.25): mean 50, sd 6.1; 20..80 is about 5 sd either side.
    assert!((20..=80).contains(&n_test), "{n_test}");
    // Reproducible, bit for bit.
    assert_eq!(fit(&csv, &split)["heldout"], *h);
    // Another seed, another assignment.
    let other = fit(&csv, &["--test-fraction", "0.25", "--split-seed", "5"]);
    assert_ne!(other["heldout"]["test_rmse"], h["test_rmse"]);
    // Not data-dependent: the same rows with other values are split alike.
    let text = std::fs::read_to_string(&csv).unwrap();
    let shifted: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{l}\n")
            } else {
                let (head, y) = l.rsplit_once(',').unwrap();
                format!("{head},{}\n", y.parse::<f64>().unwrap() * 0.5)
            }
        })
        .collect();
    let csv2 = dir.join("shifted.csv");
    std::fs::write(&csv2, shifted).unwrap();
    let r2 = fit(&csv2, &split);
    assert_eq!(r2["diagnostics"]["n_test"], r["diagnostics"]["n_test"]);
    assert_ne!(r2["heldout"]["test_rmse"], h["test_rmse"]);

    // Flags without effect, bad values and empty sides are errors naming the flag.
    let o = ["--out", s(&out)];
    let with = |extra: &[&'static str]| {
        let mut v = extra.to_vec();
        v.extend_from_slice(&o);
        v
    };
    fails_with(
        &linreg_csv_args(&csv, &ranges, &with(&["--split-seed", "3"])),
        &["--test-fraction"],
    );
    fails_with(
        &linreg_csv_args(&csv, &ranges, &with(&["--test-fraction", "1.5"])),
        &["--test-fraction"],
    );
    fails_with(
        &linreg_csv_args(&csv, &ranges, &with(&["--test-fraction", "0.0001"])),
        &["--test-fraction", "no test rows"],
    );
    fails_with(
        &linreg_csv_args(&csv, &ranges, &with(&["--test-fraction", "0.9999"])),
        &["--test-fraction", "no training rows"],
    );
    fails_with(
        &[
            "fit",
            "linreg",
            "--uci",
            s(dir),
            "--test-fraction",
            "0.2",
            "--out",
            s(&out),
        ],
        &["--test-fraction", "--uci"],
    );
}

#[test]
fn two_inputs_and_missing_declarations_are_usage_errors() {
    let tmp = temp_dir("inputs-errors");
    let dir = tmp.path();
    let train = write_libsvm(dir);
    let (csv, _) = write_linreg_csv(dir);
    let out = dir.join("fit");
    fails_with(
        &[
            "fit",
            "blr",
            "--csv",
            s(&csv),
            "--libsvm",
            s(&train),
            "--out",
            s(&out),
        ],
        &["--csv", "--libsvm"],
    );
    fails_with(
        &[
            "predict",
            "--model",
            s(&out),
            "--csv",
            s(&csv),
            "--libsvm",
            s(&train),
        ],
        &["--csv", "--libsvm"],
    );
    // Neither input: both named.
    fails_with(&["fit", "blr", "--out", s(&out)], &["--csv", "--libsvm"]);
    fails_with(&["predict", "--model", s(&out)], &["--csv", "--libsvm"]);
    fails_with(&["fit", "linreg", "--out", s(&out)], &["--uci", "--csv"]);
    // The dimension of a private LIBSVM fit must be declared.
    fails_with(
        &[
            "fit",
            "blr",
            "--libsvm",
            s(&train),
            "--epsilon",
            "1",
            "--population",
            "240",
            "--out",
            s(&out),
        ],
        &["--dim"],
    );
    // Flags of the other input kind.
    fails_with(
        &[
            "fit",
            "blr",
            "--libsvm",
            s(&train),
            "--ranges",
            s(&csv),
            "--out",
            s(&out),
        ],
        &["--ranges", "--libsvm"],
    );
    fails_with(
        &[
            "fit",
            "blr",
            "--csv",
            s(&csv),
            "--dim",
            "3",
            "--out",
            s(&out),
        ],
        &["--dim", "--csv"],
    );
    // A linreg model takes no LIBSVM rows.
    let (lcsv, ranges) = write_linreg_csv(dir);
    let lin = dir.join("lin");
    ok_json(&[
        "fit",
        "linreg",
        "--csv",
        s(&lcsv),
        "--label",
        "y",
        "--ranges",
        s(&ranges),
        "--out",
        s(&lin),
        "--json",
    ]);
    fails_with(
        &[
            "predict",
            "--model",
            s(&lin.join("model.json")),
            "--libsvm",
            s(&train),
            "--dim",
            "10",
        ],
        &["--libsvm", "not a blr model"],
    );
    assert!(!out.exists(), "a refused fit wrote {}", out.display());
}

#[test]
fn sampling_fixed_is_recorded_and_its_ledger_replays() {
    let tmp = temp_dir("inputs-sampling");
    let dir = tmp.path();
    let train = write_libsvm(dir);
    let out = dir.join("blr");
    let r = ok_json(&[
        "fit",
        "blr",
        "--libsvm",
        s(&train),
        "--dim",
        "10",
        "--sampling",
        "fixed",
        "--epsilon",
        "1",
        "--population",
        "240",
        "--out",
        s(&out),
        "--json",
    ]);
    assert_eq!(r["sampling"], "fixed_size");
    assert_eq!(r["neighbouring"], "replace_one");
    let saved = read_json(&out.join("result.json"));
    assert_eq!(saved["sampling"], "fixed_size");
    let model = read_json(&out.join("model.json"));
    assert_eq!(model["privacy"]["neighbouring"], "replace_one");
    replays_to(&out.join("ledger.json"), f(&r["epsilon"]));
    // Poisson, named, is the default regime.
    let poisson = dir.join("poisson");
    let r = ok_json(&[
        "fit",
        "blr",
        "--libsvm",
        s(&train),
        "--dim",
        "10",
        "--sampling",
        "poisson",
        "--epsilon",
        "1",
        "--population",
        "240",
        "--out",
        s(&poisson),
        "--json",
    ]);
    assert_eq!(r["sampling"], "poisson");
    assert_eq!(r["neighbouring"], "add_remove_one");

    // LDA, fixed-size batches of 60 of the 360 documents with a public vocabulary: recorded in
    // the model's notes too.
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/lda_three_topics.txt");
    let vocab = dir.join("vocab.txt");
    std::fs::write(
        &vocab,
        "boat\ncomet\nmarket\nocean\nplanet\nprice\nriver\nstar\n",
    )
    .unwrap();
    let lda = dir.join("lda");
    let lda_args = |sampling: &'static str| {
        vec![
            "fit".to_string(),
            "lda".into(),
            "--text".into(),
            s(&corpus).into(),
            "--topics".into(),
            "3".into(),
            "--epsilon".into(),
            "2".into(),
            "--population".into(),
            "360".into(),
            "--batch-size".into(),
            "60".into(),
            "--sampling".into(),
            sampling.into(),
            "--doc-length".into(),
            "8".into(),
            "--out".into(),
            s(&lda).into(),
            "--json".into(),
        ]
    };
    let mut args = lda_args("fixed");
    args.extend(["--vocab".to_string(), s(&vocab).to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = ok_json(&args);
    assert_eq!(r["sampling"], "fixed_size");
    assert!(
        std::fs::read_to_string(lda.join("model.json"))
            .unwrap()
            .contains("fixed_size")
    );
    replays_to(&lda.join("ledger.json"), f(&r["epsilon"]));

    // Where it has no effect, or cannot be: refused naming the flag.
    let none = dir.join("none");
    fails_with(
        &[
            "fit",
            "blr",
            "--libsvm",
            s(&train),
            "--sampling",
            "fixed",
            "--out",
            s(&none),
        ],
        &["--sampling", "no effect"],
    );
    fails_with(
        &[
            "fit",
            "sbn",
            "--synthetic",
            "--batch-size",
            "1000000",
            "--sampling",
            "poisson",
            "--out",
            s(&none),
        ],
        &["--sampling", "no effect"],
    );
    fails_with(
        &[
            "fit",
            "lda",
            "--text",
            s(&corpus),
            "--vocab",
            s(&vocab),
            "--sampling",
            "fixed",
            "--batch-size",
            "2.5",
            "--epsilon",
            "4",
            "--population",
            "360",
            "--out",
            s(&none),
        ],
        &["--batch-size", "whole number"],
    );
    for bad in ["one_record", "bogus"] {
        fails_with(
            &[
                "fit",
                "blr",
                "--libsvm",
                s(&train),
                "--sampling",
                bad,
                "--out",
                s(&none),
            ],
            &["--sampling"],
        );
    }
    // A private vocabulary selection (add/remove-one) cannot share a ledger with fixed-size
    // batches (replace-one): refused before anything is selected.
    let args = lda_args("fixed");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails_with(&args, &["--sampling", "--vocab"]);
    assert!(!none.exists());
}
