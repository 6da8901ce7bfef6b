//! `dp-bayes convert` and `dp-bayes fit lda-store` end to end: a UCI bag-of-words folder is
//! converted to a record store; the store fit equals `fit lda --corpus` on the same folder with
//! the same seeds (topics and ledger bit for bit); bad flags and inputs are typed errors.

mod common;

use std::io::Write;
use std::path::Path;

use common::{ok_json, read_json, s, temp_dir};

/// A small UCI folder: `docs` documents over `v` words (three themes), vocab.txt and both splits.
fn uci_folder(dir: &Path, docs: usize, v: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut lines = Vec::new();
    for d in 0..docs {
        let theme = d % 3;
        for w in 0..6 {
            let word = (theme * (v / 3) + (d + w * 7) % (v / 3)) + 1;
            lines.push((d + 1, word, 1 + (d + w) % 4));
        }
    }
    lines.sort();
    lines.dedup_by_key(|l| (l.0, l.1));
    let write = |name: &str| {
        let mut f = std::fs::File::create(dir.join(name)).unwrap();
        writeln!(f, "{docs}\n{v}\n{}", lines.len()).unwrap();
        for (d, w, c) in &lines {
            writeln!(f, "{d} {w} {c}").unwrap();
        }
    };
    write("docword.train.txt");
    write("docword.test.txt");
    let vocab: Vec<String> = (0..v).map(|i| format!("word{i}")).collect();
    std::fs::write(dir.join("vocab.txt"), vocab.join("\n") + "\n").unwrap();
}

fn fit_args<'a>(extra: &[&'a str], out: &'a Path) -> Vec<&'a str> {
    let mut a = vec![
        "--topics",
        "3",
        "--batch-size",
        "40",
        "--passes",
        "2",
        "--doc-length",
        "20",
        "--resample-seed",
        "5",
        "--population",
        "300",
    ];
    a.extend_from_slice(extra);
    a.extend(["--out", s(out), "--json"]);
    a
}

#[test]
fn a_store_fit_equals_the_corpus_fit_with_the_same_seeds() {
    let tmp = temp_dir("cli-store");
    let dir = tmp.path();
    let corpus = dir.join("uci");
    uci_folder(&corpus, 300, 60);
    let store = dir.join("train.store");
    let converted = ok_json(&[
        "convert",
        "bow",
        "--input",
        s(&corpus.join("docword.train.txt")),
        "--out",
        s(&store),
        "--json",
    ]);
    assert_eq!(converted["dimension"], 60);
    assert_eq!(converted["data_owner_only"]["private"], false);
    let vocab = corpus.join("vocab.txt");
    // Private and seeded (a non-private fit's sampling stream comes from OS entropy: it cannot
    // be seeded from the command line, so two non-private runs differ).
    {
        let privacy = &["--epsilon", "2", "--noise-seed", "7"][..];
        let (a, b) = (dir.join("from-store"), dir.join("from-corpus"));
        let mut store_args = vec![
            "fit",
            "lda-store",
            "--store",
            s(&store),
            "--vocab",
            s(&vocab),
        ];
        store_args.extend(fit_args(privacy, &a));
        let from_store = ok_json(&store_args);
        let mut corpus_args = vec!["fit", "lda", "--corpus", s(&corpus), "--vocab-public"];
        corpus_args.extend(fit_args(privacy, &b));
        let from_corpus = ok_json(&corpus_args);
        assert_eq!(from_store["epsilon"], from_corpus["epsilon"]);
        let (ma, mb) = (
            read_json(&a.join("model.json")),
            read_json(&b.join("model.json")),
        );
        assert_eq!(ma["model"]["topics"], mb["model"]["topics"]);
        assert_eq!(ma["model"]["vocabulary"], mb["model"]["vocabulary"]);
        assert_eq!(
            read_json(&a.join("ledger.json")),
            read_json(&b.join("ledger.json"))
        );
    }
}

#[test]
fn convert_and_fit_lda_store_refuse_bad_flags_and_files() {
    let tmp = temp_dir("cli-store-errors");
    let dir = tmp.path();
    let corpus = dir.join("uci");
    uci_folder(&corpus, 30, 12);
    let docword = corpus.join("docword.train.txt");
    let store = dir.join("s.store");
    let fails = |args: &[&str], needles: &[&str]| {
        let err = common::fails_with(args, needles);
        assert!(err.starts_with("dp-bayes: error: "), "{err}");
    };
    fails(
        &[
            "convert",
            "bow",
            "--input",
            s(&docword),
            "--out",
            s(&store),
            "--dim",
            "3",
        ],
        &["--dim", "no effect"],
    );
    fails(
        &[
            "convert",
            "libsvm",
            "--input",
            s(&docword),
            "--out",
            s(&store),
        ],
        &["--dim"],
    );
    assert!(!store.exists());
    ok_json(&[
        "convert",
        "bow",
        "--input",
        s(&docword),
        "--out",
        s(&store),
        "--json",
    ]);
    // A private fit needs the declared population.
    fails(
        &[
            "fit",
            "lda-store",
            "--store",
            s(&store),
            "--vocab",
            s(&corpus.join("vocab.txt")),
            "--epsilon",
            "1",
            "--out",
            s(&dir.join("o")),
        ],
        &["--population"],
    );
    // A vocabulary smaller than the store's.
    let small = dir.join("small.txt");
    std::fs::write(&small, "a\nb\n").unwrap();
    fails(
        &[
            "fit",
            "lda-store",
            "--store",
            s(&store),
            "--vocab",
            s(&small),
            "--population",
            "30",
            "--epsilon",
            "1",
            "--out",
            s(&dir.join("o")),
        ],
        &["small.txt", "fewer than the store's vocabulary size 12"],
    );
    // Not a store.
    fails(
        &[
            "fit",
            "lda-store",
            "--store",
            s(&docword),
            "--vocab",
            s(&corpus.join("vocab.txt")),
            "--population",
            "30",
            "--epsilon",
            "1",
            "--out",
            s(&dir.join("o")),
        ],
        &["docword.train.txt", "not a record store"],
    );
}
