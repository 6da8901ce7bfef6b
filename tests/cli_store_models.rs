//! `dp-bayes convert csv|text|idx` and `fit blr-store` / `fit sbn-store` end to end (issue 21):
//! the store fits equal `fit blr --csv` and `fit sbn --idx` with the same seeds (model.json
//! and ledger.json byte for byte, the ledger replayed); `convert text` feeds `fit lda-store`;
//! bad inputs and flags with no effect are typed errors naming the flag, file or line.

mod common;

use std::path::Path;

use common::{fails_with, ok_json, read_json, replays_to, s, temp_dir, write_idx};

/// A CSV of `n` rows `a,b,c,target` and its public ranges file.
fn csv_with_ranges(dir: &Path, n: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut text = String::from("a,b,c,target\n");
    for i in 0..n {
        text.push_str(&format!(
            "{},{},{},{}\n",
            (i % 11) as f64 - 3.0,
            (i % 7) as f64 * 0.5,
            (i % 3) as f64,
            u8::from(i % 3 == 0 || i % 7 == 1)
        ));
    }
    let (csv, ranges) = (dir.join("rows.csv"), dir.join("ranges.csv"));
    std::fs::write(&csv, text).unwrap();
    std::fs::write(&ranges, "name,lower,upper\nc,0,2\na,-3,7\nb,0,3\n").unwrap();
    (csv, ranges)
}

/// Asserts two fit output directories hold the same model.json and ledger.json, and that the
/// ledger replays to the reported epsilon.
fn same_fit(a: &Path, b: &Path, reported_epsilon: f64) {
    for file in ["model.json", "ledger.json"] {
        assert_eq!(
            std::fs::read_to_string(a.join(file)).unwrap(),
            std::fs::read_to_string(b.join(file)).unwrap(),
            "{file} differs"
        );
    }
    replays_to(&a.join("ledger.json"), reported_epsilon);
}

const PRIVATE: [&str; 6] = ["--epsilon", "1", "--population", "300", "--noise-seed", "7"];

#[test]
fn fit_blr_store_equals_fit_blr_csv_and_replays() {
    let tmp = temp_dir("cli-blr-store");
    let dir = tmp.path();
    let (csv, ranges) = csv_with_ranges(dir, 300);
    let store = dir.join("rows.store");
    let converted = ok_json(&[
        "convert",
        "csv",
        "--input",
        s(&csv),
        "--ranges",
        s(&ranges),
        "--out",
        s(&store),
        "--json",
    ]);
    assert_eq!(converted["kind"], "LabelledDenseRow");
    assert_eq!(converted["dimension"], 4);
    assert_eq!(converted["data_owner_only"]["records"], 300);
    let (a, b) = (dir.join("store"), dir.join("memory"));
    let mut store_args = vec![
        "fit",
        "blr-store",
        "--store",
        s(&store),
        "--iterations",
        "2",
    ];
    store_args.extend(PRIVATE);
    store_args.extend(["--out", s(&a), "--json"]);
    let from_store = ok_json(&store_args);
    let mut csv_args = vec![
        "fit",
        "blr",
        "--csv",
        s(&csv),
        "--ranges",
        s(&ranges),
        "--test-fraction",
        "0",
        "--iterations",
        "2",
    ];
    csv_args.extend(PRIVATE);
    csv_args.extend(["--out", s(&b), "--json"]);
    let from_csv = ok_json(&csv_args);
    same_fit(&a, &b, from_store["epsilon"].as_f64().unwrap());
    // The summary has the keys of `fit blr`, with the same public values.
    for key in [
        "model",
        "epsilon",
        "delta",
        "noise_multiplier",
        "accountant",
        "population",
        "sampling",
        "iterations",
        "dim",
    ] {
        assert_eq!(from_store[key], from_csv[key], "{key}");
    }
    let (ks, kc) = (
        from_store["settings"].as_object().unwrap(),
        from_csv["settings"].as_object().unwrap(),
    );
    assert_eq!(ks.keys().collect::<Vec<_>>(), kc.keys().collect::<Vec<_>>());
    assert_eq!(ks["feature_map"], kc["feature_map"]);
    assert_eq!(read_json(&a.join("result.json"))["model"], "blr");
}

#[test]
fn fit_blr_store_equals_fit_blr_libsvm() {
    let tmp = temp_dir("cli-blr-store-libsvm");
    let dir = tmp.path();
    let rows: String = (0..200)
        .map(|i| {
            format!(
                "{} {}:{} {}:0.5\n",
                if i % 3 == 0 { "+1" } else { "-1" },
                1 + i % 4,
                (i % 9) as f64 / 4.0,
                5 + i % 3
            )
        })
        .collect();
    let (libsvm, store) = (dir.join("rows.libsvm"), dir.join("rows.store"));
    std::fs::write(&libsvm, rows).unwrap();
    let declared = ["--dim", "8", "--radius", "2"];
    let mut convert = vec![
        "convert",
        "libsvm",
        "--input",
        s(&libsvm),
        "--out",
        s(&store),
    ];
    convert.extend(declared);
    convert.push("--json");
    assert_eq!(ok_json(&convert)["kind"], "LabelledSparseRow");
    let (a, b) = (dir.join("store"), dir.join("memory"));
    let mut store_args = vec!["fit", "blr-store", "--store", s(&store)];
    store_args.extend(PRIVATE);
    store_args.extend(["--out", s(&a), "--json"]);
    let from_store = ok_json(&store_args);
    let mut libsvm_args = vec!["fit", "blr", "--libsvm", s(&libsvm), "--test-fraction", "0"];
    libsvm_args.extend(declared);
    libsvm_args.extend(PRIVATE);
    libsvm_args.extend(["--out", s(&b), "--json"]);
    ok_json(&libsvm_args);
    same_fit(&a, &b, from_store["epsilon"].as_f64().unwrap());
}

#[test]
fn fit_sbn_store_equals_fit_sbn_idx_and_replays() {
    let tmp = temp_dir("cli-sbn-store");
    let dir = tmp.path();
    let (idx, store) = (dir.join("train.idx"), dir.join("train.store"));
    write_idx(&idx, 300, 4, 4, 1);
    let converted = ok_json(&[
        "convert",
        "idx",
        "--input",
        s(&idx),
        "--threshold",
        "100",
        "--out",
        s(&store),
        "--json",
    ]);
    assert_eq!(converted["dimension"], 16);
    let model = ["--hidden", "3", "--batch-size", "100", "--passes", "2"];
    let (a, b) = (dir.join("store"), dir.join("memory"));
    let mut store_args = vec!["fit", "sbn-store", "--store", s(&store)];
    store_args.extend(model);
    store_args.extend(PRIVATE);
    store_args.extend(["--out", s(&a), "--json"]);
    let from_store = ok_json(&store_args);
    let mut idx_args = vec!["fit", "sbn", "--idx", s(&idx), "--threshold", "100"];
    idx_args.extend(model);
    idx_args.extend(PRIVATE);
    idx_args.extend(["--out", s(&b), "--json"]);
    let from_idx = ok_json(&idx_args);
    same_fit(&a, &b, from_store["epsilon"].as_f64().unwrap());
    assert_eq!(from_store["settings"]["threshold"], 100);
    assert_eq!(from_store["iterations"], from_idx["iterations"]);
}

#[test]
fn convert_text_feeds_fit_lda_store() {
    let tmp = temp_dir("cli-text-store");
    let dir = tmp.path();
    let (text, vocab, store) = (
        dir.join("docs.txt"),
        dir.join("vocab.txt"),
        dir.join("docs.store"),
    );
    let themes = ["river water boat fish", "market price trade money"];
    let lines: String = (0..60)
        .map(|i| format!("{} {}\n", themes[i % 2], themes[(i / 2) % 2]))
        .collect();
    std::fs::write(&text, lines).unwrap();
    std::fs::write(
        &vocab,
        "boat\nfish\nmarket\nmoney\nprice\nriver\ntrade\nwater\n",
    )
    .unwrap();
    let converted = ok_json(&[
        "convert",
        "text",
        "--input",
        s(&text),
        "--vocab",
        s(&vocab),
        "--out",
        s(&store),
        "--json",
    ]);
    assert_eq!(converted["dimension"], 8);
    assert_eq!(converted["data_owner_only"]["records"], 60);
    let out = dir.join("fit");
    let fitted = ok_json(&[
        "fit",
        "lda-store",
        "--store",
        s(&store),
        "--vocab",
        s(&vocab),
        "--topics",
        "2",
        "--batch-size",
        "20",
        "--doc-length",
        "8",
        "--epsilon",
        "1",
        "--population",
        "60",
        "--noise-seed",
        "3",
        "--out",
        s(&out),
        "--json",
    ]);
    replays_to(
        &out.join("ledger.json"),
        fitted["epsilon"].as_f64().unwrap(),
    );
}

#[test]
fn bad_inputs_and_flags_are_typed_errors() {
    let tmp = temp_dir("cli-store-models-errors");
    let dir = tmp.path();
    let (csv, ranges) = csv_with_ranges(dir, 20);
    let store = dir.join("o.store");
    let convert_csv = |input: &Path, extra: &[&str], needles: &[&str]| {
        let mut args = vec!["convert", "csv", "--input", s(input), "--out", s(&store)];
        args.extend(extra);
        fails_with(&args, needles);
        assert!(!store.exists());
    };
    // A missing label column: the file and the line.
    convert_csv(
        &csv,
        &["--label", "y", "--ranges", s(&ranges)],
        &["rows.csv", "line 1", "no label column `y`"],
    );
    // A cell that is not a number: the file, the line and the column.
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "a,b,c,target\n1,1,1,0\n1,oops,1,1\n").unwrap();
    convert_csv(
        &bad,
        &["--ranges", s(&ranges)],
        &["bad.csv", "line 3", "column `b`", "oops"],
    );
    // A ranges file missing a column.
    let short = dir.join("short.csv");
    std::fs::write(&short, "a,-3,7\nb,0,3\n").unwrap();
    convert_csv(
        &csv,
        &["--ranges", s(&short)],
        &["short.csv", "no range", "c"],
    );
    // No public scaling declared for a non-WDBC header.
    convert_csv(&csv, &[], &["--ranges"]);
    // Flags with no effect on this format.
    let vocab = dir.join("vocab.txt");
    std::fs::write(&vocab, "river\n").unwrap();
    convert_csv(&csv, &["--vocab", s(&vocab)], &["--vocab", "no effect"]);
    let text = dir.join("docs.txt");
    std::fs::write(&text, "river boat\n").unwrap();
    let convert_text = |extra: &[&str], needles: &[&str]| {
        let mut args = vec!["convert", "text", "--input", s(&text), "--out", s(&store)];
        args.extend(extra);
        fails_with(&args, needles);
        assert!(!store.exists());
    };
    convert_text(
        &["--vocab", s(&vocab), "--label", "y"],
        &["--label", "no effect"],
    );
    // No public vocabulary: private selection is `fit lda --text`'s.
    convert_text(&[], &["--vocab", "PUBLIC vocabulary", "fit lda --text"]);
    // A missing vocabulary file, an empty corpus.
    convert_text(
        &["--vocab", s(&dir.join("missing-vocab.txt"))],
        &["missing-vocab.txt"],
    );
    std::fs::write(&text, "\n\n").unwrap();
    convert_text(&["--vocab", s(&vocab)], &["docs.txt", "empty corpus"]);
    // The store fits: a private fit needs the population; --noise-ridge needs --epsilon; a
    // store of another model; a store without its schema.
    ok_json(&[
        "convert",
        "csv",
        "--input",
        s(&csv),
        "--ranges",
        s(&ranges),
        "--out",
        s(&store),
        "--json",
    ]);
    let out = dir.join("fit");
    let fit = |cmd: &str, extra: &[&str], needles: &[&str]| {
        let mut args = vec!["fit", cmd, "--store", s(&store), "--out", s(&out)];
        args.extend(extra);
        fails_with(&args, needles);
        assert!(!out.join("model.json").exists());
    };
    fit("blr-store", &["--epsilon", "1"], &["--population"]);
    fit(
        "blr-store",
        &["--noise-ridge", "0.1"],
        &["--noise-ridge", "no effect"],
    );
    fit(
        "sbn-store",
        &["--population", "20", "--epsilon", "1"],
        &["--store", "not binary images"],
    );
    std::fs::remove_file(dir.join("o.store.schema.json")).unwrap();
    fit(
        "blr-store",
        &["--population", "20", "--epsilon", "1"],
        &["o.store.schema.json", "convert the input again"],
    );
}
