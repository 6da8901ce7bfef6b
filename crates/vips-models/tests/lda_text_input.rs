//! Issue 20, raw text input: the tokenizer (Unicode, case, stop words), the reader's typed errors
//! (naming file and line) and size caps, public vocabulary files, and the bag-of-words
//! conversion with its count of unknown tokens.

mod common;
use common::TempPath;

use vips_models::lda::text::{
    ENGLISH_STOP_WORDS, TextError, TextLimits, Tokenizer, bag_of_words, parse_stop_words, read_text,
};
use vips_models::lda::{Vocabulary, VocabularyError};

fn tmp(name: &str) -> TempPath {
    TempPath::new("vips-lda-text-input", name)
}

#[test]
fn stop_word_list_is_sklearns_318_words() {
    let words = parse_stop_words(ENGLISH_STOP_WORDS);
    assert_eq!(words.len(), 318);
    let mut sorted = words.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, words, "sorted, no duplicates");
    for w in ["the", "and", "would", "yourselves", "amoungst"] {
        assert!(words.iter().any(|x| x == w), "{w}");
    }
}

#[test]
fn tokenizer_lowercases_and_drops_stop_words_and_short_words() {
    let t = Tokenizer::english();
    assert_eq!(
        t.tokenize("The QUICK brown Fox jumps over the lazy dog; it is an ox."),
        ["quick", "brown", "fox", "jumps", "lazy", "dog"]
    );
    // Numbers and words with digits are dropped, as the news corpus's [a-z]{3,} pattern does.
    assert_eq!(t.tokenize("In 2017 covid19 3rd budget"), ["budget"]);
    // Apostrophes and underscores split words into runs of letters.
    assert_eq!(
        t.tokenize("can't won't snake_case_label"),
        ["won", "snake", "case", "label"]
    );
    assert!(t.tokenize("").is_empty());
    assert!(t.tokenize("  \t ... !!! ").is_empty());
}

#[test]
fn tokenizer_is_unicode_aware() {
    let t = Tokenizer::english();
    // Letters beyond a-z are kept and lower-cased with full Unicode case mapping.
    assert_eq!(
        t.tokenize("CAFÉ Naïve ÜBER Straße МОСКВА Ωμέγα"),
        ["café", "naïve", "über", "straße", "москва", "ωμέγα"]
    );
    // A combining accent stays with its letter; the length is counted in characters as seen.
    assert_eq!(t.tokenize("cafe\u{301} ab\u{301}"), ["cafe\u{301}"]);
    // CJK ideographs are letters; UAX #29 gives one word per ideograph, shorter than 3.
    assert!(t.tokenize("東京").is_empty());
    // Curly apostrophes split like straight ones.
    assert_eq!(t.tokenize("rock’n’roll"), ["rock", "roll"]);
}

#[test]
fn tokenizer_settings() {
    let t = Tokenizer::new(vec!["Apple".to_string()], 2);
    assert_eq!(t.tokenize("apple an APPLE pie"), ["an", "pie"]);
    assert!(t.is_stop_word("apple"));
    assert_eq!(Tokenizer::new(Vec::new(), 0).min_chars(), 1);
}

#[test]
fn reads_one_document_per_line_and_a_directory_of_txt_files() {
    let t = Tokenizer::english();
    let file = tmp("lines.txt");
    std::fs::write(&file, "Rivers and seas\r\n\nMountain rivers\n").unwrap();
    let c = read_text(&file, &t, &TextLimits::default()).unwrap();
    assert_eq!(c.len(), 3);
    assert_eq!(c.docs()[0], ["rivers", "seas"]);
    assert!(c.docs()[1].is_empty());
    assert_eq!(c.origin(2).unwrap(), (&*file, 3));

    let dir = tmp("dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("b.txt"), "second document\nwith lines").unwrap();
    std::fs::write(dir.join("a.TXT"), "opening document").unwrap();
    std::fs::write(dir.join("ignored.md"), "not read").unwrap();
    let c = read_text(&dir, &t, &TextLimits::default()).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(c.docs()[0], ["opening", "document"]);
    assert_eq!(c.docs()[1], ["second", "document", "lines"]);
    assert_eq!(c.origin(1).unwrap().0, dir.join("b.txt"));
}

#[test]
fn reader_errors_name_file_and_line() {
    let t = Tokenizer::english();
    let lim = TextLimits::default();
    let file = tmp("bad_utf8.txt");
    std::fs::write(&file, b"good line\nbad \xff\xfe line\n").unwrap();
    match read_text(&file, &t, &lim) {
        Err(TextError::NotUtf8 { path, line }) => assert_eq!((path, line), (file.to_path_buf(), 2)),
        other => panic!("{other:?}"),
    }
    let msg = read_text(&file, &t, &lim).unwrap_err().to_string();
    assert!(
        msg.contains("bad_utf8.txt") && msg.contains("line 2"),
        "{msg}"
    );

    let dir = tmp("bad_dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.txt"), b"ok\nok\n\xc3(").unwrap();
    match read_text(&dir, &t, &lim) {
        Err(TextError::NotUtf8 { path, line }) => assert_eq!((path, line), (dir.join("x.txt"), 3)),
        other => panic!("{other:?}"),
    }

    let missing = tmp("missing.txt");
    assert!(matches!(
        read_text(&missing, &t, &lim),
        Err(TextError::Io { .. })
    ));

    for (name, text) in [("empty.txt", ""), ("stop.txt", "the and of\n\n 12 ab\n")] {
        let f = tmp(name);
        std::fs::write(&f, text).unwrap();
        assert!(
            matches!(read_text(&f, &t, &lim), Err(TextError::EmptyCorpus { .. })),
            "{name}"
        );
    }
    let empty_dir = tmp("empty_dir");
    std::fs::create_dir_all(&empty_dir).unwrap();
    assert!(matches!(
        read_text(&empty_dir, &t, &lim),
        Err(TextError::EmptyCorpus { .. })
    ));
}

#[test]
fn reader_caps_are_typed_errors() {
    let t = Tokenizer::english();
    let file = tmp("caps.txt");
    std::fs::write(
        &file,
        "alpha beta gamma\ndelta epsilon\nzeta eta theta iota\n",
    )
    .unwrap();
    let docs = TextLimits {
        max_documents: 2,
        ..TextLimits::default()
    };
    match read_text(&file, &t, &docs) {
        Err(TextError::TooManyDocuments { line, limit, .. }) => assert_eq!((line, limit), (3, 2)),
        other => panic!("{other:?}"),
    }
    let tokens = TextLimits {
        max_tokens: 5,
        ..TextLimits::default()
    };
    match read_text(&file, &t, &tokens) {
        Err(TextError::TooManyTokens { line, .. }) => assert_eq!(line, 3),
        other => panic!("{other:?}"),
    }
    let long = TextLimits {
        max_document_bytes: 14,
        ..TextLimits::default()
    };
    match read_text(&file, &t, &long) {
        Err(TextError::DocumentTooLong { line, .. }) => assert_eq!(line, 1),
        other => panic!("{other:?}"),
    }
    let total = TextLimits {
        max_total_bytes: 10,
        ..TextLimits::default()
    };
    assert!(matches!(
        read_text(&file, &t, &total),
        Err(TextError::InputTooLarge { .. })
    ));
    // Exactly at the caps is fine.
    let exact = TextLimits {
        max_documents: 3,
        max_tokens: 9,
        max_document_bytes: 19,
        max_total_bytes: std::fs::metadata(&file).unwrap().len(),
    };
    assert_eq!(read_text(&file, &t, &exact).unwrap().num_tokens(), 9);
}

#[test]
fn public_vocabulary_files() {
    let ok = tmp("vocab_ok.txt");
    std::fs::write(&ok, "river\r\nsea\ncafé\n").unwrap();
    let v = Vocabulary::load(&ok).unwrap();
    assert_eq!(v.words(), ["river", "sea", "café"]);
    assert_eq!(v.id("café"), Some(2));
    let saved = tmp("vocab_saved.txt");
    v.save(&saved).unwrap();
    assert_eq!(Vocabulary::load(&saved).unwrap(), v);

    let cases: [(&str, &[u8]); 5] = [
        ("dup", b"river\nsea\nriver\n"),
        ("blank", b"river\n\nsea\n"),
        ("space", b"river\nsea bed\n"),
        ("utf8", b"river\n\xff\n"),
        ("empty", b""),
    ];
    for (name, bytes) in cases {
        let f = tmp(&format!("vocab_{name}.txt"));
        std::fs::write(&f, bytes).unwrap();
        let err = Vocabulary::load(&f).unwrap_err();
        match (name, &err) {
            (
                "dup",
                VocabularyError::Duplicate {
                    line,
                    first_line,
                    word,
                    ..
                },
            ) => {
                assert_eq!((*line, *first_line, word.as_str()), (3, 1, "river"))
            }
            ("blank", VocabularyError::EmptyLine { line, .. }) => assert_eq!(*line, 2),
            ("space", VocabularyError::Whitespace { line, .. }) => assert_eq!(*line, 2),
            ("utf8", VocabularyError::NotUtf8 { line, .. }) => assert_eq!(*line, 2),
            ("empty", VocabularyError::Empty { .. }) => {}
            _ => panic!("{name}: {err:?}"),
        }
        assert!(
            err.to_string().contains(&format!("vocab_{name}.txt")),
            "{err}"
        );
    }
    assert!(Vocabulary::load(&tmp("vocab_missing.txt")).is_err());
}

#[test]
fn bag_of_words_counts_and_drops_unknown_tokens() {
    let vocab = Vocabulary::from_words(vec!["sea".into(), "river".into()]).unwrap();
    let docs = vec![
        vec!["river", "moon", "river", "sea"],
        vec!["moon", "sun"],
        vec!["sea"],
    ];
    let bow = bag_of_words(&docs, &vocab).unwrap();
    assert_eq!((bow.unknown_tokens, bow.empty_documents), (3, 1));
    let d0 = bow.docs[0].as_ref().unwrap();
    assert_eq!((d0.words(), d0.counts()), (&[0, 1][..], &[1, 2][..]));
    assert!(bow.docs[1].is_none());
    let corpus = bow.into_corpus(&vocab).unwrap();
    assert_eq!(
        (corpus.len(), corpus.num_tokens(), corpus.vocab_size()),
        (2, 4, 2)
    );
    assert_eq!(corpus.vocab().unwrap(), ["sea", "river"]);
    let none = bag_of_words(&[vec!["moon"]], &vocab).unwrap();
    assert!(matches!(
        none.into_corpus(&vocab),
        Err(TextError::NoKnownWords { .. })
    ));
}
