//! LDA over a record store on disk (issue 21, "corpora larger than memory"):
//! - the same seeds give the same fit from the store as from memory (identity);
//! - each release through the store path moves by at most its declared sensitivity when one
//!   document is added (end-to-end neighbours: docword files -> convert -> store -> wall);
//! - converting streams the UCI loader's documents unchanged;
//! - bad stores are typed errors naming the file, checked before allocating.

mod common;

use std::io::Write;
use std::path::Path;

use common::store_releases;

use dp_core::{CoreError, SourceError};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::{Batching, EngineError, Privacy, Stop, SviConfig, fit, fit_source};
use vips_models::lda::corpus::{Document, ResamplingKey, SyntheticConfig, load_uci_bow};
use vips_models::lda::{Lda, LdaConfig, LdaError, Topics};
use vips_models::store::{
    RecordKind, RecordStore, StoreError, StoreWriter, convert_uci_bow, write_documents,
};

/// A fresh directory for one test.
fn dir(name: &str) -> tempfile::TempDir {
    common::dir("lda-store", name)
}

fn corpus(docs: usize, v: usize, k: usize, n: usize, seed: u64) -> Vec<Document> {
    SyntheticConfig::builder()
        .num_docs(docs)
        .vocab_size(v)
        .num_topics(k)
        .doc_length(n)
        .alpha(0.2)
        .eta(0.1)
        .seed(seed)
        .build()
        .unwrap()
        .generate()
        .unwrap()
        .corpus
        .into_docs()
}

fn store_of(path: &Path, v: usize, docs: &[Document]) -> RecordStore {
    write_documents(path, v, docs.iter().cloned().map(Ok)).unwrap();
    RecordStore::open(path).unwrap()
}

/// Same seeds, same corpus: the fit from the store equals the fit from memory, bit for bit,
/// with Poisson and fixed-size batches, private and not.
#[test]
fn store_fit_is_identical_to_in_memory_fit() {
    let tmp = dir("identity");
    let d = tmp.path();
    let (v, k) = (60, 4);
    let docs = corpus(700, v, k, 50, 3);
    let path = d.join("train.store");
    store_of(&path, v, &docs);
    // Resampled to 40 tokens (keyed per document) and not resampled.
    for length in [Some(40), None] {
        let lda = Lda::new(
            LdaConfig::builder(k, v)
                .doc_length(length)
                .clip_scale(0.5)
                .build()
                .unwrap(),
        );
        let key = ResamplingKey::public_seed(9);
        let corpus = vips_models::lda::corpus::Corpus::new(docs.clone(), v).unwrap();
        let prepared = lda.prepare(&corpus, &key).unwrap();
        let privacies = match length {
            Some(_) => vec![
                Privacy::Target {
                    epsilon: 1.0,
                    delta: 1e-5,
                },
                Privacy::NonPrivate,
            ],
            None => vec![Privacy::NonPrivate],
        };
        for privacy in privacies {
            for batching in [
                Batching::poisson(80).unwrap(),
                Batching::FixedSize { batch_size: 80 },
            ] {
                let svi = SviConfig::builder()
                    .batching(batching)
                    .stop(Stop::Iterations { iterations: 6 })
                    .privacy(privacy)
                    .noise_seed(Some(21))
                    .population(Some(700))
                    .build()
                    .unwrap();
                let source = lda
                    .store_source(RecordStore::open(&path).unwrap(), key.clone())
                    .unwrap();
                let a = fit(&lda, prepared.clone(), &svi, |_, _| {}).unwrap();
                let b = fit_source(&lda, source, &svi, |_, _| {}).unwrap();
                assert_eq!(
                    a.result.global, b.result.global,
                    "{length:?} {privacy:?} {batching:?}"
                );
                assert_eq!(a.result.privacy.ledger, b.result.privacy.ledger);
                assert_eq!(a.result.trace, b.result.trace);
                assert_eq!(a.diagnostics.records_clipped, b.diagnostics.records_clipped);
                assert_eq!(
                    a.diagnostics.records_processed,
                    b.diagnostics.records_processed
                );
            }
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Writes `docs` as a UCI docword file.
fn write_docword(path: &Path, v: usize, docs: &[Document]) {
    let nnz: usize = docs.iter().map(|d| d.num_distinct()).sum();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "{}\n{v}\n{nnz}", docs.len()).unwrap();
    for (i, doc) in docs.iter().enumerate() {
        for (&w, &c) in doc.words().iter().zip(doc.counts()) {
            writeln!(f, "{} {} {c}", i + 1, w + 1).unwrap();
        }
    }
}

/// End-to-end neighbours through the store: D and D' = D + one document (adversarial: all
/// tokens one word; or a copy of a real one) are converted from docword files, read by the
/// wall from their stores, and every release moves by at most `a N / S`. With rate 1 (every
/// record in every batch) non-private; with rate 0.5 private (same seeds: the added last
/// record does not change the draws of the others, nor the noise).
#[test]
fn adding_one_document_moves_each_store_release_by_at_most_its_bound() {
    let tmp = dir("neighbours");
    let d = tmp.path();
    let (v, k, n, a) = (30, 3, 25, 0.3);
    let lda = Lda::new(
        LdaConfig::builder(k, v)
            .doc_length(Some(n))
            .clip_scale(a)
            .build()
            .unwrap(),
    );
    for seed in 0..4u64 {
        let base = corpus(40, v, k, 60, seed);
        for extra in [
            Document::new(vec![(seed as u32 % v as u32, 500)]).unwrap(),
            base[seed as usize].clone(),
        ] {
            let mut neighbour = base.clone();
            neighbour.push(extra);
            let (p0, p1) = (d.join("d.txt"), d.join("d1.txt"));
            write_docword(&p0, v, &base);
            write_docword(&p1, v, &neighbour);
            let (s0, s1) = (d.join("d.store"), d.join("d1.store"));
            assert_eq!(convert_uci_bow(&p0, &s0).unwrap(), 40);
            assert_eq!(convert_uci_bow(&p1, &s1).unwrap(), 41);
            let topics = Topics::random_init(k, v, 0.1, &mut ChaCha8Rng::seed_from_u64(seed));
            for (rate, private) in [(1.0, false), (0.5, true)] {
                let (r0, sens) = store_releases(&lda, &s0, &topics, rate, private, 5);
                let (r1, _) = store_releases(&lda, &s1, &topics, rate, private, 5);
                let declared = a * n as f64 / (rate * 100.0);
                assert!((sens - declared).abs() <= 1e-12 * declared);
                let mut largest = 0.0f64;
                for (x, y) in r0.iter().zip(&r1) {
                    let moved = x
                        .iter()
                        .zip(y)
                        .map(|(p, q)| (p - q).powi(2))
                        .sum::<f64>()
                        .sqrt();
                    assert!(
                        moved <= declared * (1.0 + 1e-9),
                        "moved {moved} > {declared}"
                    );
                    largest = largest.max(moved);
                }
                // The neighbour is in some batch: the releases do move (the test can fail).
                assert!(largest > 0.0);
            }
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Converting a docword file streams exactly the documents the in-memory loader returns.
#[test]
fn convert_keeps_the_loaders_documents() {
    let tmp = dir("convert");
    let d = tmp.path();
    let docs = corpus(300, 50, 3, 30, 8);
    let txt = d.join("docword.txt");
    write_docword(&txt, 50, &docs);
    let store = d.join("c.store");
    assert_eq!(convert_uci_bow(&txt, &store).unwrap(), 300);
    let loaded = load_uci_bow(&txt).unwrap();
    let store = RecordStore::open(&store).unwrap();
    store.verify_payloads().unwrap();
    assert_eq!((store.len(), store.dim()), (300, 50));
    let mut buf = Vec::new();
    for (i, doc) in loaded.docs().iter().enumerate() {
        assert_eq!(
            &vips_models::store::decode_document(&store, i, &mut buf).unwrap(),
            doc
        );
    }
    // A bad input line fails the conversion with the input's file and line; nothing is left.
    let bad = d.join("bad.txt");
    std::fs::write(&bad, "2\n3\n3\n1 1 2\n1 9 1\n2 2 4\n").unwrap();
    let out = d.join("bad.store");
    let err = convert_uci_bow(&bad, &out).unwrap_err();
    assert!(err.to_string().contains("bad.txt"), "{err}");
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(d).unwrap().count(),
        3,
        "no temporary file left"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// Overwrites `len` bytes at `at` of `path`.
fn patch(path: &Path, at: u64, bytes: &[u8]) {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(bytes).unwrap();
}

/// Rewrites the header checksum after a patch of the header (FNV-1a 64 of bytes 0..56).
fn reseal(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in &bytes[..56] {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    patch(path, 56, &h.to_le_bytes());
}

#[test]
fn bad_stores_are_typed_errors_naming_the_file() {
    let tmp = dir("bad");
    let d = tmp.path();
    let docs = corpus(20, 30, 2, 20, 1);
    let good = d.join("good.store");
    store_of(&good, 30, &docs);
    let copy = |name: &str| {
        let p = d.join(name);
        std::fs::copy(&good, &p).unwrap();
        p
    };
    let named = |e: &StoreError, p: &Path| {
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(e.to_string().contains(name), "{e}");
    };
    // Not a store at all.
    let text = d.join("text.store");
    std::fs::write(
        &text,
        "hello, this is not a store at all; long enough for a header ......",
    )
    .unwrap();
    let e = RecordStore::open(&text).unwrap_err();
    assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
    named(&e, &text);
    // Truncated.
    let cut = copy("cut.store");
    let len = std::fs::metadata(&cut).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&cut)
        .unwrap()
        .set_len(len - 5)
        .unwrap();
    let e = RecordStore::open(&cut).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    named(&e, &cut);
    // A newer format version.
    let newer = copy("newer.store");
    patch(&newer, 8, &2u32.to_le_bytes());
    reseal(&newer);
    let e = RecordStore::open(&newer).unwrap_err();
    assert!(
        matches!(e, StoreError::NewerVersion { found: 2, .. }),
        "{e}"
    );
    // A header claiming 10^18 records: refused from the file length, nothing allocated.
    let huge = copy("huge.store");
    patch(&huge, 16, &1_000_000_000_000_000_000u64.to_le_bytes());
    reseal(&huge);
    let e = RecordStore::open(&huge).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    // A header byte changed without resealing: the checksum catches it.
    let flipped = copy("flipped.store");
    patch(&flipped, 24, &31u64.to_le_bytes());
    assert!(matches!(
        RecordStore::open(&flipped).unwrap_err(),
        StoreError::Corrupt { .. }
    ));
    // An offset changed: the table check catches it.
    let table = copy("table.store");
    let len = std::fs::metadata(&table).unwrap().len();
    patch(&table, len - 8 * 10, &3u64.to_le_bytes());
    let e = RecordStore::open(&table).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    // A payload byte changed: opens (the table is intact), the payload checksum and the
    // record's decoding catch it; in a private fit the record would be replaced by zero.
    let payload = copy("payload.store");
    patch(&payload, 64, &[0xff, 0xff, 0xff, 0xff]); // first word id of record 0: 2^32 - 1
    let store = RecordStore::open(&payload).unwrap();
    assert!(matches!(
        store.verify_payloads().unwrap_err(),
        StoreError::Corrupt { .. }
    ));
    let mut buf = Vec::new();
    let e = vips_models::store::decode_document(&store, 0, &mut buf).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    // Through the wall: replaced in a private fit, an error in a non-private one.
    let lda = Lda::new(
        LdaConfig::builder(2, 30)
            .doc_length(Some(20))
            .build()
            .unwrap(),
    );
    let key = ResamplingKey::public_seed(1);
    use dp_core::RecordSource;
    let source = lda.store_source(store, key.clone()).unwrap();
    assert!(matches!(source.read(0), Err(SourceError::Record { .. })));
    let full = |privacy| {
        SviConfig::builder()
            .batching(Batching::poisson(20).unwrap())
            .stop(Stop::Iterations { iterations: 1 })
            .privacy(privacy)
            .noise_seed(Some(1))
            .population(Some(20))
            .build()
            .unwrap()
    };
    let fitted = fit_source(
        &lda,
        source,
        &full(Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        }),
        |_, _| {},
    )
    .unwrap();
    assert_eq!(fitted.diagnostics.records_replaced, 1);
    let source = lda
        .store_source(RecordStore::open(&payload).unwrap(), key.clone())
        .unwrap();
    let e = fit_source(&lda, source, &full(Privacy::NonPrivate), |_, _| {}).unwrap_err();
    assert!(
        matches!(e, EngineError::Wall(CoreError::InvalidContribution { .. })),
        "{e}"
    );
    // A store whose vocabulary is larger than the model's, and one of another kind.
    let wide = Lda::new(
        LdaConfig::builder(2, 10)
            .doc_length(Some(20))
            .build()
            .unwrap(),
    );
    let e = wide
        .store_source(RecordStore::open(&good).unwrap(), key.clone())
        .unwrap_err();
    assert!(
        matches!(e, LdaError::Store(StoreError::Dimension { .. })),
        "{e}"
    );
    let other = d.join("other.store");
    let mut w = StoreWriter::create(&other, RecordKind::BinaryVector, 16).unwrap();
    w.push_payload(&[1, 2]).unwrap();
    w.finish().unwrap();
    let e = lda
        .store_source(RecordStore::open(&other).unwrap(), key)
        .unwrap_err();
    assert!(
        matches!(e, LdaError::Store(StoreError::WrongKind { .. })),
        "{e}"
    );
    // A private Poisson fit from a store needs the declared population (the count is private).
    let source = lda
        .store_source(
            RecordStore::open(&good).unwrap(),
            ResamplingKey::public_seed(1),
        )
        .unwrap();
    let undeclared = SviConfig::builder()
        .batching(Batching::poisson(5).unwrap())
        .stop(Stop::Iterations { iterations: 1 })
        .privacy(Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        })
        .build()
        .unwrap();
    assert!(fit_source(&lda, source, &undeclared, |_, _| {}).is_err());
    // An unfinished writer leaves nothing behind.
    let unfinished = d.join("unfinished.store");
    let mut w = StoreWriter::create(&unfinished, RecordKind::BagOfWords, 30).unwrap();
    w.push_payload(&[0, 0, 0, 0, 1, 0, 0, 0]).unwrap();
    drop(w);
    assert!(!unfinished.exists());
    assert!(
        std::fs::read_dir(d).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("tmp"))
    );
    std::fs::remove_dir_all(d).unwrap();
}
