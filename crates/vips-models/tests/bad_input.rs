//! Issue 17: bad input and resource limits. One test per class (sizes refused before allocation,
//! bounded readers, iteration caps, validated hyperparameters, degenerate labels, typed errors
//! naming the file), and proptest strategies per file format asserting "typed error or valid
//! result, never a panic" (small sizes, a few hundred cases).

mod common;
use common::TempPath;

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use proptest::prelude::*;
use vips_models::blr::{
    BlrConfig, BlrError, CsvOptions, FeatureMap, Hyperprior, LibsvmOptions, parse_csv,
    parse_libsvm, stratified_split,
};
use vips_models::engine::{CancelToken, EngineError, Privacy, Stop, SviConfig, fit};
use vips_models::lda::corpus::{CorpusError, load_uci_bow, load_vocab};
use vips_models::lda::{Lda, LdaConfig, LdaError};
use vips_models::limits::LimitError;
use vips_models::sbn::{SbnConfig, SbnError, parse_idx_images};

fn temp(name: &str, bytes: &[u8]) -> TempPath {
    TempPath::file("vips-bad-input", name, bytes)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn sizes_implied_by_headers_and_flags_are_refused_before_allocation() {
    // A docword header claiming 10^12 documents.
    let p = temp("huge.txt", b"1000000000000\n10\n1000000000000\n1 1 1\n");
    match load_uci_bow(&p).unwrap_err() {
        CorpusError::InFile { source, .. } => {
            assert!(
                matches!(*source, CorpusError::Limit(LimitError::Memory { .. })),
                "{source}"
            )
        }
        e => panic!("{e:?}"),
    }
    // K x V.
    let e = LdaConfig::builder(100_000_000, 100_000)
        .build()
        .unwrap_err();
    assert!(matches!(e, LdaError::Limit(LimitError::Memory { .. })));
    assert!(e.to_string().contains("--topics"), "{e}");
    // A LIBSVM feature id of 10^9 sets d.
    let e = parse_libsvm(
        "1 1000000000:1\n0 1:1\n",
        LibsvmOptions {
            dim: None,
            radius: 1.0,
        },
    )
    .unwrap_err();
    assert!(
        matches!(e, BlrError::Limit(LimitError::Memory { .. })),
        "{e}"
    );
    assert!(e.to_string().contains("line 1"), "{e}");
    // SBN hidden units.
    let e = SbnConfig::builder(784, 1_000_000).build().unwrap_err();
    assert!(
        matches!(e, SbnError::Limit(LimitError::Memory { .. })),
        "{e}"
    );
    assert!(SbnConfig::builder(784, 0).build().is_err());
    // An IDX header whose body would exceed the input limit.
    let mut idx = vec![0, 0, 8, 3];
    for v in [100_000u32, 1000, 1000] {
        idx.extend(v.to_be_bytes());
    }
    assert!(matches!(
        parse_idx_images(&idx, 128, std::path::Path::new("h.idx")),
        Err(SbnError::Idx { .. })
    ));
}

#[test]
fn long_lines_and_bombs_are_bounded() {
    // One 3 MB line, gzipped to a few kB: refused at the line limit, naming the file.
    let mut text = b"1\n1\n1\n".to_vec();
    text.extend(std::iter::repeat_n(b'1', 3 << 20));
    let p = temp("bomb.txt.gz", &gzip(&text));
    let e = load_uci_bow(&p).unwrap_err();
    assert!(
        matches!(&e, CorpusError::InFile { source, .. }
            if matches!(**source, CorpusError::Limit(LimitError::LineTooLong { line: 4, .. }))),
        "{e:?}"
    );
    let e = load_vocab(temp("vocab.txt", &text)).unwrap_err();
    assert!(e.to_string().contains("longer than"), "{e}");
    let e = parse_csv(
        &format!("a,y\n{},1\n", "9".repeat(2 << 20)),
        &CsvOptions {
            label: "y".into(),
            map: None,
        },
    )
    .unwrap_err();
    assert!(
        matches!(e, BlrError::Limit(LimitError::LineTooLong { line: 2, .. })),
        "{e}"
    );
}

#[test]
fn a_garbled_gzip_is_reported_as_such() {
    let good = b"2\n4\n2\n1 1 1\n2 3 1\n".to_vec();
    let mut z = gzip(&good);
    let n = z.len();
    z[n - 6] ^= 0xff; // the CRC
    let e = load_uci_bow(temp("garbled.txt.gz", &z)).unwrap_err();
    assert!(matches!(e, CorpusError::Gzip { .. }), "{e:?}");
    assert!(e.to_string().contains("garbled.txt.gz"), "{e}");
}

#[test]
fn bad_fields_are_echoed_short_and_large_numbers_called_too_large() {
    let long = "x".repeat(10_000);
    let e = load_uci_bow(temp(
        "long.txt",
        format!("1\n4\n1\n1 {long} 1\n").as_bytes(),
    ))
    .unwrap_err();
    assert!(e.to_string().len() < 300, "{}", e.to_string().len());
    let e = load_uci_bow(temp("big.txt", b"1\n4\n1\n1 99999999999999999999999 1\n")).unwrap_err();
    assert!(e.to_string().contains("too large"), "{e}");
}

#[test]
fn hyperparameters_labels_and_overflow_are_typed_errors() {
    assert!(matches!(
        BlrConfig::builder(3)
            .hyperprior(Hyperprior::Gamma {
                shape: 1e300,
                rate: 1e-300
            })
            .build(),
        Err(BlrError::InvalidParameter { .. })
    ));
    let opts = CsvOptions {
        label: "y".into(),
        map: None,
    };
    let constant = parse_csv("a,y\n0.1,1\n0.2,1\n0.3,1\n0.4,1\n0.5,1\n", &opts).unwrap();
    assert!(matches!(
        stratified_split(constant.records, 0.2, 0),
        Err(BlrError::DegenerateLabels(_))
    ));
    // Finite cells near f64::MAX: the public scaling refuses instead of overflowing.
    let map = FeatureMap::from_ranges(&[-1e308], &[1e308], false).unwrap();
    assert!(map.apply(&[1e308]).unwrap()[0].is_finite());
    let map = FeatureMap::from_ranges(&[0.0], &[1.0], false).unwrap();
    let e = parse_csv(
        "a,y\n1e308,1\n",
        &CsvOptions {
            label: "y".into(),
            map: Some(map),
        },
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("line 2"), "{e}");
}

fn tiny_lda(config: LdaConfig) -> (Lda, Vec<vips_models::lda::corpus::Document>) {
    let data = vips_models::lda::corpus::SyntheticConfig::builder()
        .num_docs(20)
        .vocab_size(10)
        .num_topics(2)
        .doc_length(10)
        .build()
        .unwrap()
        .generate()
        .unwrap();
    let model = Lda::new(config);
    let key = vips_models::lda::corpus::ResamplingKey::public_seed(1);
    let records = model.prepare(&data.corpus, &key).unwrap();
    (model, records)
}

#[test]
fn iteration_counts_are_capped_and_runs_can_be_cancelled() {
    let too_many = SviConfig::builder()
        .stop(Stop::Iterations {
            iterations: 1_000_000_000_000,
        })
        .build();
    assert!(matches!(
        too_many,
        Err(EngineError::TooManyIterations { .. })
    ));
    let passes = SviConfig::builder()
        .expected_batch_size(1.0)
        .population(Some(20))
        .stop(Stop::Passes { passes: 1e12 })
        .build();
    assert!(matches!(passes, Err(EngineError::TooManyIterations { .. })));
    assert!(
        SviConfig::builder()
            .stop(Stop::Iterations {
                iterations: 1_000_000_000_000,
            })
            .allow_long_run(true)
            .build()
            .is_ok()
    );
    let token = CancelToken::new();
    token.cancel();
    let (model, records) = tiny_lda(LdaConfig::builder(2, 10).build().unwrap());
    let svi = SviConfig::builder()
        .expected_batch_size(5.0)
        .stop(Stop::Iterations { iterations: 5 })
        .privacy(Privacy::NonPrivate)
        .cancel(token)
        .build()
        .unwrap();
    assert!(matches!(
        fit(&model, records, &svi, |_, _| {}),
        Err(EngineError::Interrupted { completed: 0 })
    ));
}

#[test]
fn clipped_fraction_never_exceeds_one() {
    // A declared population far below the realised count: more records are processed than
    // expected; the fraction is over the realised records processed.
    let (model, records) = tiny_lda(
        LdaConfig::builder(2, 10)
            .doc_length(Some(10))
            .clip_scale(0.01)
            .build()
            .unwrap(),
    );
    let svi = SviConfig::builder()
        .expected_batch_size(2.0)
        .population(Some(2))
        .stop(Stop::Iterations { iterations: 3 })
        .noise_seed(Some(1))
        .build()
        .unwrap();
    let fitted = fit(&model, records, &svi, |_, _| {}).unwrap();
    let d = fitted.diagnostics;
    assert!(d.records_processed > 6, "{}", d.records_processed);
    assert!(d.records_clipped > 6);
    assert!(d.clipped_fraction() <= 1.0 && d.clipped_fraction() > 0.9);
}

// ---- fuzz-style: typed error or valid result, never a panic ----

fn docword_text() -> impl Strategy<Value = String> {
    let valid = (1usize..4, 1usize..6).prop_flat_map(|(d, w)| {
        proptest::collection::vec((1..=d, 1..=w, 1u32..5), 1..10).prop_map(move |mut e| {
            e.sort();
            e.dedup_by_key(|x| (x.0, x.1));
            let mut s = format!("{d}\n{w}\n{}\n", e.len());
            for (a, b, c) in e {
                s.push_str(&format!("{a} {b} {c}\n"));
            }
            s
        })
    });
    prop_oneof![
        valid.clone(),
        (valid, any::<usize>(), "[ -~\n]{0,6}").prop_map(|(s, at, junk)| {
            let mut b = s.into_bytes();
            let at = at % (b.len() + 1);
            b.splice(at..at, junk.into_bytes());
            String::from_utf8_lossy(&b).into_owned()
        }),
        "[0-9 \n-]{0,60}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn uci_bag_of_words_never_panics(text in docword_text(), gz in any::<bool>(), cut in any::<usize>()) {
        let mut bytes = if gz { gzip(text.as_bytes()) } else { text.into_bytes() };
        if gz && cut % 3 == 0 {
            let n = bytes.len();
            bytes.truncate(n - (cut % n.max(1)).min(n));
        }
        let p = temp(&format!("fuzz_{}.txt", cut % 7), &bytes);
        let _ = load_uci_bow(&p);
        let _ = load_vocab(&p);
    }

    #[test]
    fn idx_never_panics(
        n in 0u32..4, rows in 0u32..4, cols in 0u32..4,
        body in proptest::collection::vec(any::<u8>(), 0..40),
        magic in prop_oneof![Just(0x0803u32), any::<u32>()],
        gz in any::<bool>(), raw in proptest::collection::vec(any::<u8>(), 0..40),
        threshold in any::<u8>(),
    ) {
        let mut bytes = Vec::new();
        for v in [magic, n, rows, cols] {
            bytes.extend(v.to_be_bytes());
        }
        bytes.extend(body);
        let bytes = if gz { gzip(&bytes) } else { bytes };
        let path = std::path::Path::new("fuzz.idx");
        if let Ok(images) = parse_idx_images(&bytes, threshold, path) {
            prop_assert_eq!(images.len(), n as usize);
        }
        let _ = parse_idx_images(&raw, threshold, path);
    }

    #[test]
    fn csv_never_panics(
        header in "[a-c,y]{0,8}",
        rows in proptest::collection::vec("[-0-9.,e]{0,12}", 0..6),
        junk in "\\PC{0,30}",
    ) {
        let text = format!("{header}\n{}\n{junk}", rows.join("\n"));
        let opts = CsvOptions { label: "y".into(), map: None };
        if let Ok(l) = parse_csv(&text, &opts) {
            prop_assert!(l.records.iter().all(|r| r.features().values().iter().all(|v| v.is_finite())));
        }
        let _ = parse_csv(&junk, &opts);
    }

    #[test]
    fn libsvm_never_panics(
        lines in proptest::collection::vec(("[-+]?[01]", proptest::collection::vec((0u64..20, -3.0f64..3.0), 0..4)), 0..5),
        junk in "\\PC{0,30}",
        dim in proptest::option::of(0usize..30),
    ) {
        let text: String = lines.iter().map(|(y, f)| {
            let feats: Vec<String> = f.iter().map(|(i, v)| format!("{i}:{v}")).collect();
            format!("{y} {}\n", feats.join(" "))
        }).collect();
        let opts = LibsvmOptions { dim, radius: 1.0 };
        let _ = parse_libsvm(&text, opts);
        let _ = parse_libsvm(&format!("{text}{junk}"), opts);
    }
}

/// Issue 18: errors stay typed across the crate's boundaries (a posterior failure keeps the
/// `expfam` error as its source; an unreadable IDX file keeps the `io::Error`).
#[test]
fn wrapped_errors_keep_their_type() {
    use std::error::Error as _;
    // A likelihood precision that is not positive definite even with the prior added.
    let h = nalgebra::DVector::from_vec(vec![0.0, 0.0]);
    let p = nalgebra::DMatrix::from_row_slice(2, 2, &[-5.0, 0.0, 0.0, -5.0]);
    let err = vips_models::blr::Blr::posterior_from(&h, &p, 1.0).unwrap_err();
    assert!(matches!(err, BlrError::Posterior(_)), "{err:?}");
    assert!(
        err.source()
            .is_some_and(|s| s.downcast_ref::<expfam::ExpFamError>().is_some())
    );
    let missing = std::env::temp_dir().join("vips-models-no-such-file.idx");
    let err = vips_models::sbn::load_idx_images(&missing, 128).unwrap_err();
    match &err {
        SbnError::IdxIo { source, .. } => {
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected IdxIo, got {other:?}"),
    }
    assert!(err.to_string().starts_with("IDX file "), "{err}");
}
