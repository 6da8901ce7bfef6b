//! The UCI bag-of-words loader: valid files (plain and gzip), and every kind of bad input is a
//! typed error naming the line.

mod common;
use common::TempPath;

use std::io::Write;
use std::path::PathBuf;

use flate2::Compression;
use flate2::write::GzEncoder;
use vips_models::lda::corpus::{CorpusError, load_uci_bow, load_uci_dir};

fn write(name: &str, content: &str) -> TempPath {
    TempPath::file("vips-lda-data", name, content.as_bytes())
}

const GOOD: &str = "3\n4\n5\n1 1 2\n1 4 1\n2 2 3\n3 1 1\n3 3 7\n";

#[test]
fn reads_plain_and_gzip() {
    let plain_file = write("plain.txt", GOOD);
    let plain = load_uci_bow(&plain_file).unwrap();
    assert_eq!(plain.len(), 3);
    assert_eq!(plain.vocab_size(), 4);
    assert_eq!(plain.docs()[0].words(), &[0, 3]);
    assert_eq!(plain.docs()[2].counts(), &[1, 7]);
    assert_eq!(plain.num_tokens(), 14);
    let dir = plain_file.parent().unwrap();
    let gz = dir.join("docword.train.txt.gz");
    let mut enc = GzEncoder::new(std::fs::File::create(&gz).unwrap(), Compression::default());
    enc.write_all(GOOD.as_bytes()).unwrap();
    enc.finish().unwrap();
    let zipped = load_uci_bow(&gz).unwrap();
    assert_eq!(zipped.docs(), plain.docs());
    std::fs::write(dir.join("docword.test.txt"), "1\n4\n1\n1 2 1\n").unwrap();
    std::fs::write(dir.join("vocab.txt"), "a\nb\nc\nd\n").unwrap();
    let splits = load_uci_dir(dir).unwrap();
    assert_eq!(splits.train.len(), 3);
    assert_eq!(splits.test.vocab().unwrap()[1], "b");
}

/// The error inside the `InFile` wrapper (which must name the file).
fn err(content: &str) -> CorpusError {
    match load_uci_bow(write("bad.txt", content)).unwrap_err() {
        CorpusError::InFile { path, source } => {
            assert!(path.ends_with("bad.txt"), "{}", path.display());
            *source
        }
        e => panic!("not wrapped with the file: {e:?}"),
    }
}

#[test]
fn bad_files_are_typed_errors_naming_the_line() {
    match err("2\n4\n2\n1 5 1\n2 1 1\n") {
        CorpusError::WordOutOfRange {
            line: 4, word: 5, ..
        } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n4\n2\n1 0 1\n2 1 1\n") {
        CorpusError::WordOutOfRange {
            line: 4, word: 0, ..
        } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n4\n2\n1 1 1\n3 1 1\n") {
        CorpusError::DocOutOfRange {
            line: 5, doc: 3, ..
        } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n4\n2\n1 1 -3\n2 1 1\n") {
        CorpusError::BadCount { line: 4, count: -3 } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n4\n2\n1 1 0\n2 1 1\n") {
        CorpusError::BadCount { line: 4, count: 0 } => {}
        e => panic!("{e:?}"),
    }
    match err("3\n4\n3\n1 1 1\n3 1 1\n3 2 1\n") {
        CorpusError::EmptyDocument { line: 5, doc: 2 } => {}
        e => panic!("{e:?}"),
    }
    match err("3\n4\n3\n1 1 1\n2 1 1\n2 2 1\n") {
        CorpusError::EmptyDocument { doc: 3, .. } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n4\n5\n1 1 1\n2 1 1\n") {
        CorpusError::Truncated {
            expected: 5,
            found: 2,
            ..
        } => {}
        e => panic!("{e:?}"),
    }
    match err("1\n4\n1\n1 1 1\n1 2 1\n") {
        CorpusError::TooManyEntries { line: 5, .. } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n4\n2\n1 2 1\n1 1 1\n") {
        CorpusError::Unsorted { line: 5 } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n4\n2\n1 x 1\n2 1 1\n") {
        CorpusError::Parse { line: 4, .. } => {}
        e => panic!("{e:?}"),
    }
    match err("2\n") {
        CorpusError::Parse { line: 2, .. } => {}
        e => panic!("{e:?}"),
    }
    assert!(matches!(
        load_uci_bow("/nonexistent/docword.txt"),
        Err(CorpusError::Io { .. })
    ));
}

#[test]
fn news_corpus_when_present() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/news");
    if !dir.exists() {
        eprintln!("skipping: {} is absent", dir.display());
        return;
    }
    let s = load_uci_dir(&dir).unwrap();
    assert_eq!(s.train.len(), 3441);
    assert_eq!(s.test.len(), 382);
    assert_eq!(s.train.vocab_size(), 5000);
    assert_eq!(s.train.num_tokens(), 812_680);
    assert_eq!(s.test.num_tokens(), 82_942);
}
