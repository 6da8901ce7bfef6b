//! Bag-of-words records (LDA): encoding, the converters, and the wall's source for LDA.

use std::path::Path;

use dp_core::SourceError;

use super::{RecordKind, RecordStore, StoreError, StoreWriter};
use crate::lda::corpus::{Document, ResamplingKey, SyntheticConfig, resample_document};

/// Encodes `doc` as `(word u32, count u32)` pairs into `buf` (cleared first).
fn encode_document(doc: &Document, buf: &mut Vec<u8>) {
    buf.clear();
    for (&w, &c) in doc.words().iter().zip(doc.counts()) {
        buf.extend_from_slice(&w.to_le_bytes());
        buf.extend_from_slice(&c.to_le_bytes());
    }
}

/// Why a stored bag of words is refused (a fixed text: it may reach an error message).
fn check_pairs(payload: &[u8], dim: u64) -> Result<(), &'static str> {
    if payload.is_empty() || !payload.len().is_multiple_of(8) {
        return Err("a bag-of-words record is not a whole number of (word, count) pairs");
    }
    let mut previous: Option<u32> = None;
    for pair in payload.chunks_exact(8) {
        let (w, c) = pair_at(pair);
        if u64::from(w) >= dim {
            return Err("a word id outside the store's vocabulary");
        }
        if previous.is_some_and(|p| w <= p) {
            return Err("word ids not strictly increasing");
        }
        if c == 0 {
            return Err("a zero count");
        }
        previous = Some(w);
    }
    Ok(())
}

fn pair_at(pair: &[u8]) -> (u32, u32) {
    let mut w = [0u8; 4];
    let mut c = [0u8; 4];
    w.copy_from_slice(&pair[..4]);
    c.copy_from_slice(&pair[4..8]);
    (u32::from_le_bytes(w), u32::from_le_bytes(c))
}

/// Reads and decodes document `index` of a bag-of-words store (`buf` is scratch).
///
/// # Errors
/// [`StoreError::WrongKind`] for another kind of store; [`StoreError::Io`] if the read fails;
/// [`StoreError::Corrupt`] if the payload is not a valid document of the store's vocabulary.
pub fn decode_document(
    store: &RecordStore,
    index: usize,
    buf: &mut Vec<u8>,
) -> Result<Document, StoreError> {
    if store.kind() != RecordKind::BagOfWords {
        return Err(StoreError::WrongKind {
            path: store.path().to_path_buf(),
            expected: RecordKind::BagOfWords,
            found: store.kind(),
        });
    }
    store.read_payload(index, buf)?;
    let corrupt = |reason| StoreError::Corrupt {
        path: store.path().to_path_buf(),
        reason,
    };
    check_pairs(buf, store.dim()).map_err(corrupt)?;
    let (words, counts) = buf.chunks_exact(8).map(pair_at).unzip();
    Document::from_sorted(words, counts).map_err(|_| corrupt("not a valid document"))
}

/// Writes the documents of `docs` (in order) as a bag-of-words store of vocabulary size
/// `vocab_size` at `path`, streaming (one document in memory at a time) and atomically.
/// Returns the number of documents.
///
/// # Errors
/// The iterator's first error (typically the input's parser's, naming its file and line);
/// [`StoreError::BadRecord`] for a word id `>= vocab_size`; the writer's errors. On any error
/// nothing is left at `path`.
pub fn write_documents<I>(
    path: impl AsRef<Path>,
    vocab_size: usize,
    docs: I,
) -> Result<u64, StoreError>
where
    I: IntoIterator<Item = Result<Document, StoreError>>,
{
    let mut writer = StoreWriter::create(path, RecordKind::BagOfWords, vocab_size as u64)?;
    let mut buf = Vec::new();
    for doc in docs {
        let doc = doc?;
        if doc.max_word() as usize >= vocab_size {
            return Err(StoreError::BadRecord {
                path: writer.path().to_path_buf(),
                record: writer.len(),
                reason: "a word id outside the vocabulary",
            });
        }
        encode_document(&doc, &mut buf);
        writer.push_payload(&buf)?;
    }
    writer.finish()
}

/// What [`convert_text`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextConversion {
    /// Documents written (those with at least one word of the vocabulary).
    pub documents: u64,
    /// NON-PRIVATE diagnostic: input documents left out (no word of the vocabulary: blank
    /// lines, unknown words only).
    pub documents_without_known_words: u64,
    /// NON-PRIVATE diagnostic: tokens dropped as not in the vocabulary.
    pub unknown_tokens: u64,
}

/// Converts raw text (a file, one document per line, or a directory, one document per `.txt`
/// file: [`crate::lda::text::read_text`]) into a bag-of-words store at `store`, tokenised by
/// `tokenizer` (`fit lda --text` uses [`crate::lda::text::Tokenizer::english`]) and mapped to
/// the word ids of the PUBLIC `vocab` ([`crate::lda::text::bag_of_words`], one document at a
/// time): each stored document is the one `fit lda --text --vocab` fits, in input order,
/// documents without a known word left out as that fit leaves them out. The store's vocabulary
/// size is `vocab.len()`.
///
/// Streaming ([`crate::lda::text::stream_text`]): one document in memory (and, for a
/// directory, the list of its `.txt` files), within `limits` (the caps are checked before
/// allocating: file sizes, document length, document count, token count; the caps on the
/// totals exist for in-memory fits and may be raised for a conversion).
///
/// # Privacy
/// `vocab` must be public: chosen independently of these documents. Selecting a vocabulary
/// privately is a release that a store cannot carry; it stays with `fit lda --text`. The
/// returned counts are the data owner's, not a release.
///
/// # Errors
/// [`StoreError::Text`] for the input's errors ([`crate::lda::text::stream_text`]: a missing
/// path, sizes over `limits`, a line that is not UTF-8, an empty corpus, naming the file and
/// line) and for no document with a word of the vocabulary; the writer's errors. On any error
/// nothing is left at `store`.
///
/// # Example
/// ```
/// use vips_models::lda::Vocabulary;
/// use vips_models::lda::text::{TextLimits, Tokenizer};
/// use vips_models::store::{RecordStore, convert_text};
/// # let dir = std::env::temp_dir().join(format!("convert-text-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("docs.txt"), "Apples and pears.\n\nThe river flows.\n")?;
/// let vocab = Vocabulary::from_words(vec!["apples".into(), "river".into()])?;
/// let tokenizer = Tokenizer::english();
/// let out = dir.join("docs.store");
/// let written = convert_text(dir.join("docs.txt"), &out, &vocab, &tokenizer, &TextLimits::default())?;
/// assert_eq!((written.documents, written.unknown_tokens), (2, 2));
/// assert_eq!(RecordStore::open(&out)?.dim(), 2);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_text(
    input: impl AsRef<Path>,
    store: impl AsRef<Path>,
    vocab: &crate::lda::Vocabulary,
    tokenizer: &crate::lda::text::Tokenizer,
    limits: &crate::lda::text::TextLimits,
) -> Result<TextConversion, StoreError> {
    use crate::lda::text::{TextError, bag_of_words, stream_text};
    if vocab.is_empty() {
        return Err(TextError::NoKnownWords { vocab_size: 0 }.into());
    }
    let mut writer = StoreWriter::create(store, RecordKind::BagOfWords, vocab.len() as u64)?;
    let mut buf = Vec::new();
    let mut out = TextConversion {
        documents: 0,
        documents_without_known_words: 0,
        unknown_tokens: 0,
    };
    let mut failure: Option<StoreError> = None;
    stream_text(input.as_ref(), tokenizer, limits, |tokens| {
        let pushed = bag_of_words(std::slice::from_ref(&tokens), vocab)
            .map_err(StoreError::from)
            .and_then(|bow| {
                out.unknown_tokens += bow.unknown_tokens;
                match bow.docs.into_iter().next().flatten() {
                    Some(document) => {
                        encode_document(&document, &mut buf);
                        writer.push_payload(&buf)?;
                        out.documents += 1;
                    }
                    None => out.documents_without_known_words += 1,
                }
                Ok(())
            });
        match pushed {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    if writer.is_empty() {
        return Err(TextError::NoKnownWords {
            vocab_size: vocab.len(),
        }
        .into());
    }
    writer.finish()?;
    Ok(out)
}

/// Converts a UCI bag-of-words `docword` file (plain or gzip) into a store at `store`,
/// streaming: the input is parsed line by line with the in-memory loader's checks
/// ([`crate::lda::corpus::load_uci_bow`]) and each document is written as soon as it is
/// complete. Returns the number of documents.
///
/// # Errors
/// [`StoreError::Input`] for the input's errors (file and line, as the loader reports them);
/// the writer's errors. On any error nothing is left at `store`.
pub fn convert_uci_bow(
    input: impl AsRef<Path>,
    store: impl AsRef<Path>,
) -> Result<u64, StoreError> {
    let mut writer: Option<StoreWriter> = None;
    let mut buf = Vec::new();
    let mut failure: Option<StoreError> = None;
    let store = store.as_ref();
    crate::lda::corpus::stream_uci_bow(input.as_ref(), |vocab_size, doc| {
        if failure.is_some() {
            return false;
        }
        if writer.is_none() {
            match StoreWriter::create(store, RecordKind::BagOfWords, vocab_size as u64) {
                Ok(w) => writer = Some(w),
                Err(e) => {
                    failure = Some(e);
                    return false;
                }
            }
        }
        let Some(w) = writer.as_mut() else {
            return false;
        };
        encode_document(&doc, &mut buf);
        if let Err(e) = w.push_payload(&buf) {
            failure = Some(e);
            return false;
        }
        true
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    match writer {
        Some(w) => w.finish(),
        None => Err(StoreError::Corrupt {
            path: store.to_path_buf(),
            reason: "the input holds no document",
        }),
    }
}

/// LDA's records read from a bag-of-words store, each prepared exactly as
/// [`crate::lda::Lda::prepare`] prepares an in-memory corpus (resampled to the fixed length
/// from its own keyed stream); built by [`crate::lda::Lda::store_source`].
///
/// # Privacy
/// Each record handed to the wall is a function of the stored document and the key only: the
/// prepared record of document `i` is the one `prepare` makes in memory, so a fit through the
/// store releases exactly what the in-memory fit releases for the same seeds. A stored record
/// that does not decode or uses a word outside the model's vocabulary is a
/// [`SourceError::Record`]: replaced by zero in a private release. [`RecordSource::len`](dp_core::RecordSource::len) is
/// the store's record count (private under add/remove-one).
#[derive(Debug)]
pub struct LdaStoreSource {
    store: RecordStore,
    doc_length: Option<usize>,
    key: ResamplingKey,
}

impl LdaStoreSource {
    /// The source over `store` (checked by the caller: bag of words, dimension at most `V`).
    pub(crate) fn new(store: RecordStore, doc_length: Option<usize>, key: ResamplingKey) -> Self {
        Self {
            store,
            doc_length,
            key,
        }
    }

    /// The store.
    pub fn store(&self) -> &RecordStore {
        &self.store
    }

    fn read_with(&self, index: usize, buf: &mut Vec<u8>) -> Result<Document, SourceError> {
        let doc = decode_document(&self.store, index, buf)
            .map_err(|e| self.store.source_error(e, "a corrupt bag-of-words record"))?;
        match self.doc_length {
            None => Ok(doc),
            Some(n) => resample_document(&doc, n, &self.key).map_err(|_| SourceError::Record {
                reason: "the document could not be resampled",
            }),
        }
    }
}

buffered_record_source!(LdaStoreSource, Document);

/// Draws the synthetic LDA corpus of `cfg` ([`SyntheticConfig::stream_documents`]: the
/// documents [`SyntheticConfig::generate`] draws, in the same order) straight into a
/// bag-of-words store at `path`, streaming, atomically. Returns the number of documents and
/// the true topics (`K` rows of `V`).
///
/// # Errors
/// The generator's settings errors ([`StoreError::Input`]); the writer's errors. On any error
/// nothing is left at `path`.
///
/// # Example
/// ```
/// use vips_models::lda::corpus::SyntheticConfig;
/// use vips_models::store::{RecordStore, write_synthetic};
/// # let dir = std::env::temp_dir().join(format!("synthetic-store-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let cfg = SyntheticConfig::builder().num_docs(100).vocab_size(30).num_topics(3).doc_length(20).build()?;
/// let (docs, topics) = write_synthetic(dir.join("s.store"), &cfg)?;
/// assert_eq!((docs, topics.len()), (100, 90));
/// assert_eq!(RecordStore::open(dir.join("s.store"))?.len(), 100);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_synthetic(
    path: impl AsRef<Path>,
    cfg: &SyntheticConfig,
) -> Result<(u64, Vec<f64>), StoreError> {
    let mut writer = StoreWriter::create(path, RecordKind::BagOfWords, cfg.vocab_size() as u64)?;
    let mut buf = Vec::new();
    let mut failure = None;
    let topics = cfg.stream_documents(|doc| {
        encode_document(&doc, &mut buf);
        match writer.push_payload(&buf) {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    Ok((writer.finish()?, topics))
}
