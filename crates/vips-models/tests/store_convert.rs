//! The CSV and raw-text converters of the record store (issue 21), end to end from files on
//! disk: CSV -> `convert_csv` -> store -> BLR, text -> `convert_text` -> store -> LDA.
//! - identity: the BLR fit through a CSV store equals the in-memory CSV fit bit for bit;
//! - neighbours: one row / one document added or removed moves each release by at most its
//!   declared bound;
//! - the text store holds the documents `fit lda --text --vocab` fits;
//! - bad inputs are typed errors naming the file and line, and leave no store behind.

mod common;

use std::path::Path;

use common::{assert_blr_bounds, blr_store_release, store_releases};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::blr::{self, Blr, BlrConfig, CsvOptions, FeatureMap, load_csv};
use vips_models::engine::{Privacy, fit_source};
use vips_models::lda::text::{TextLimits, Tokenizer, bag_of_words, read_text};
use vips_models::lda::{Lda, LdaConfig, Topics, Vocabulary};
use vips_models::store::{
    RecordKind, RecordStore, StoreError, convert_csv, convert_text, decode_document,
};

fn dir(name: &str) -> tempfile::TempDir {
    common::dir("store-convert", name)
}

/// CSV rows `a,b,c,target` with values inside and outside the declared ranges (clipped).
fn csv_rows(n: usize) -> String {
    let mut text = String::from("a,b,c,target\n");
    for i in 0..n {
        text.push_str(&format!(
            "{},{},{},{}\n",
            (i % 11) as f64 - 3.0,
            (i % 7) as f64 * 0.5,
            if i % 5 == 0 { 40.0 } else { (i % 3) as f64 },
            u8::from(i % 3 == 0)
        ));
    }
    text
}

/// The public map of [`csv_rows`]: ranges a in [-3, 7], b in [0, 3], c in [0, 2], intercept.
fn csv_options() -> CsvOptions {
    CsvOptions {
        label: "target".into(),
        map: Some(FeatureMap::from_ranges(&[-3.0, 0.0, 0.0], &[7.0, 3.0, 2.0], true).unwrap()),
    }
}

#[test]
fn blr_fit_through_a_csv_store_equals_the_in_memory_csv_fit() {
    let tmp = dir("identity");
    let d = tmp.path();
    let (csv, store) = (d.join("rows.csv"), d.join("rows.store"));
    std::fs::write(&csv, csv_rows(300)).unwrap();
    let options = csv_options();
    let read = convert_csv(&csv, &store, &options).unwrap();
    assert_eq!(read.feature_names, ["a", "b", "c", "intercept"]);
    let opened = RecordStore::open(&store).unwrap();
    assert_eq!(
        (opened.kind(), opened.dim(), opened.len()),
        (RecordKind::LabelledDenseRow, 4, 300)
    );
    let loaded = load_csv(&csv, &options).unwrap();
    assert_eq!(loaded.report.clipped, read.clipped);
    assert!(
        read.clipped > 0,
        "some rows are clipped: the test covers it"
    );
    let blr = Blr::new(BlrConfig::builder(4).build().unwrap());
    for (privacy, iterations) in [
        (
            Privacy::Target {
                epsilon: 1.0,
                delta: 1e-5,
            },
            2,
        ),
        (Privacy::NonPrivate, 3),
    ] {
        let svi = blr::batch_config(300, iterations, privacy, Some(9)).unwrap();
        let memory = blr::fit(&blr, loaded.records.clone(), &svi).unwrap().result;
        let source = blr
            .store_source(RecordStore::open(&store).unwrap())
            .unwrap();
        let stored = fit_source(&blr, source, &svi, |_, _| {}).unwrap().result;
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let (a, b) = (memory.global.posterior(), stored.global.posterior());
        assert_eq!(bits(a.mean().as_slice()), bits(b.mean().as_slice()));
        assert_eq!(bits(a.cov().as_slice()), bits(b.cov().as_slice()));
        assert_eq!(
            memory.privacy.epsilon.map(f64::to_bits),
            stored.privacy.epsilon.map(f64::to_bits)
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// CSV -> store -> BLR: removing the first row, or adding an adversarial row (far outside the
/// ranges, clipped to the unit sphere) first or last, moves `h` by at most 1/2 and `P` by 1/4.
#[test]
fn one_csv_row_moves_each_store_statistic_by_at_most_its_bound() {
    let tmp = dir("csv-neighbours");
    let d = tmp.path();
    let base = csv_rows(60);
    let (header, body) = base.split_once('\n').unwrap();
    let adversarial = "1e300,-1e300,1e300";
    let release = |name: &str, text: &str| {
        let (csv, store) = (
            d.join(format!("{name}.csv")),
            d.join(format!("{name}.store")),
        );
        std::fs::write(&csv, text).unwrap();
        convert_csv(&csv, &store, &csv_options()).unwrap();
        blr_store_release(&store, 4)
    };
    let r0 = release("d", &base);
    for (label, neighbour) in [
        (
            "remove first row",
            format!("{header}\n{}", body.split_once('\n').unwrap().1),
        ),
        (
            "add adversarial row first",
            format!("{header}\n{adversarial},0\n{body}"),
        ),
        (
            "add adversarial row last",
            format!("{base}{adversarial},1\n"),
        ),
    ] {
        let r1 = release("d1", &neighbour);
        assert_blr_bounds(label, &r0, &r1);
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Documents of three themes over a small public vocabulary, one per line.
fn text_lines(n: usize) -> String {
    let themes = [
        "river water boat fish river bank",
        "market price trade money market bank",
        "music song dance music stage song",
    ];
    (0..n)
        .map(|i| format!("{} {}\n", themes[i % 3], themes[(i / 3) % 3]))
        .collect()
}

fn vocabulary() -> Vocabulary {
    let words = "bank boat dance fish market money music price river song stage trade water";
    Vocabulary::from_words(words.split(' ').map(String::from).collect()).unwrap()
}

#[test]
fn a_text_store_holds_the_documents_fit_lda_text_fits() {
    let tmp = dir("text");
    let d = tmp.path();
    let (text, store) = (d.join("docs.txt"), d.join("docs.store"));
    // A blank line and a line of unknown words are left out, as `fit lda --text` leaves them.
    std::fs::write(&text, format!("{}\nzebra zebra\n", text_lines(20))).unwrap();
    let vocab = vocabulary();
    let tokenizer = Tokenizer::english();
    let written = convert_text(&text, &store, &vocab, &tokenizer, &TextLimits::default()).unwrap();
    assert_eq!(
        (written.documents, written.documents_without_known_words),
        (20, 2)
    );
    assert_eq!(written.unknown_tokens, 2);
    let docs = read_text(&text, &tokenizer, &TextLimits::default())
        .unwrap()
        .into_docs();
    let corpus = bag_of_words(&docs, &vocab)
        .unwrap()
        .into_corpus(&vocab)
        .unwrap();
    let opened = RecordStore::open(&store).unwrap();
    assert_eq!(opened.dim(), vocab.len() as u64);
    let mut buf = Vec::new();
    let stored: Vec<_> = (0..opened.len())
        .map(|i| decode_document(&opened, i, &mut buf).unwrap())
        .collect();
    assert_eq!(stored, corpus.into_docs());
    // A directory of `.txt` files (one document each, in file-name order) streams the same way.
    let folder = d.join("folder");
    std::fs::create_dir_all(&folder).unwrap();
    for (i, line) in text_lines(5).lines().enumerate() {
        std::fs::write(folder.join(format!("doc{i}.txt")), line).unwrap();
    }
    std::fs::write(folder.join("notes.md"), "river river").unwrap();
    let from_dir = d.join("dir.store");
    let written = convert_text(
        &folder,
        &from_dir,
        &vocab,
        &tokenizer,
        &TextLimits::default(),
    )
    .unwrap();
    assert_eq!(written.documents, 5);
    let (a, b) = (
        RecordStore::open(&from_dir).unwrap(),
        RecordStore::open(&store).unwrap(),
    );
    for i in 0..5 {
        assert_eq!(
            decode_document(&a, i, &mut buf).unwrap(),
            decode_document(&b, i, &mut buf).unwrap()
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Text -> store -> LDA: one added document (adversarial: one word 400 times; or a copy of a
/// real one) moves each release by at most `a N / S`, noise-free and with seeded noise.
#[test]
fn one_text_document_moves_each_store_release_by_at_most_its_bound() {
    let tmp = dir("text-neighbours");
    let d = tmp.path();
    let vocab = vocabulary();
    let (v, k, n, a) = (vocab.len(), 3, 12, 0.3);
    let lda = Lda::new(
        LdaConfig::builder(k, v)
            .doc_length(Some(n))
            .clip_scale(a)
            .build()
            .unwrap(),
    );
    let base = text_lines(40);
    let first = base.lines().next().unwrap().to_string();
    let convert = |name: &str, text: &str| {
        let (file, store) = (
            d.join(format!("{name}.txt")),
            d.join(format!("{name}.store")),
        );
        std::fs::write(&file, text).unwrap();
        let tokenizer = Tokenizer::english();
        convert_text(&file, &store, &vocab, &tokenizer, &TextLimits::default()).unwrap();
        store
    };
    let s0 = convert("d", &base);
    for extra in ["river ".repeat(400), first] {
        let s1 = convert("d1", &format!("{base}{extra}\n"));
        let topics = Topics::random_init(k, v, 0.1, &mut ChaCha8Rng::seed_from_u64(3));
        for (rate, private) in [(1.0, false), (0.5, true)] {
            let (r0, sens) = store_releases(&lda, &s0, &topics, rate, private, 5);
            let (r1, _) = store_releases(&lda, &s1, &topics, rate, private, 5);
            let declared = a * n as f64 / (rate * 100.0);
            assert!((sens - declared).abs() <= 1e-12 * declared);
            let mut largest = 0.0f64;
            for (x, y) in r0.iter().zip(&r1) {
                let moved = common::dist(x, y);
                assert!(
                    moved <= declared * (1.0 + 1e-9),
                    "moved {moved} > {declared}"
                );
                largest = largest.max(moved);
            }
            assert!(largest > 0.0, "the added document is in some batch");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// The error's text, and no store (nor temporary file) left in `d`.
fn refused(d: &Path, e: StoreError, needles: &[&str]) {
    let text = e.to_string();
    for n in needles {
        assert!(text.contains(n), "`{n}` not in: {text}");
    }
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".store"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn bad_csv_and_text_inputs_are_typed_errors_naming_file_and_line() {
    let tmp = dir("bad");
    let d = tmp.path();
    let store = d.join("out.store");
    let csv = d.join("rows.csv");
    let options = csv_options();
    // No label column.
    std::fs::write(&csv, "a,b,c,y\n1,1,1,0\n").unwrap();
    let e = convert_csv(&csv, &store, &options).unwrap_err();
    refused(d, e, &["rows.csv", "line 1", "no label column `target`"]);
    // A cell that is not a number, on line 3.
    std::fs::write(&csv, "a,b,c,target\n1,1,1,0\n1,x,1,1\n").unwrap();
    let e = convert_csv(&csv, &store, &options).unwrap_err();
    refused(
        d,
        e,
        &["rows.csv", "line 3", "column `b`", "`x` is not a number"],
    );
    // A header and no rows.
    std::fs::write(&csv, "a,b,c,target\n\n").unwrap();
    let e = convert_csv(&csv, &store, &options).unwrap_err();
    refused(d, e, &["rows.csv", "no rows"]);
    // A missing file.
    let e = convert_csv(d.join("missing.csv"), &store, &options).unwrap_err();
    refused(d, e, &["missing.csv"]);
    // Text: an empty corpus, and no document with a word of the vocabulary.
    let text = d.join("docs.txt");
    let tokenizer = Tokenizer::english();
    let limits = TextLimits::default();
    std::fs::write(&text, "\n\n").unwrap();
    let e = convert_text(&text, &store, &vocabulary(), &tokenizer, &limits).unwrap_err();
    assert!(matches!(e, StoreError::Text(_)), "{e:?}");
    refused(d, e, &["docs.txt"]);
    std::fs::write(&text, "zebra giraffe\n").unwrap();
    let e = convert_text(&text, &store, &vocabulary(), &tokenizer, &limits).unwrap_err();
    assert!(matches!(e, StoreError::Text(_)), "{e:?}");
    refused(d, e, &["no document"]);
    // Sizes are checked before reading: a document cap of one.
    std::fs::write(&text, text_lines(3)).unwrap();
    let small = TextLimits {
        max_documents: 1,
        ..TextLimits::default()
    };
    let e = convert_text(&text, &store, &vocabulary(), &tokenizer, &small).unwrap_err();
    refused(d, e, &["docs.txt", "line 2"]);
    std::fs::remove_dir_all(d).unwrap();
}
