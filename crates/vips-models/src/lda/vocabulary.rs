//! LDA vocabularies: public (a word list the user asserts is public) or selected privately from
//! the training text by Gaussian-thresholding partition selection.
//!
//! # Private selection (Gopi et al. 2020; Google's differential-privacy library)
//! The mechanism is dp-core's ([`dp_core::wall::partition`], the privacy wall's crate, the one
//! place private records are released); this module is its LDA wrapper: a document is a record,
//! its tokens are its keys, in reading order.
//! 1. **Contribution bound** (enforced again by dp-core). Each document contributes each distinct
//!    word at most once, and at most `k` distinct words (`k` =
//!    [`PartitionSelection::max_words_per_doc`], public). A document with more than `k` distinct
//!    words contributes a uniformly random `k` of them ([`bounded_words`]), drawn from the
//!    document's own ChaCha20 stream, keyed by a [`WordSampleKey`] (secret, or derived from the
//!    selection's seed) and a hash of the document's tokens. This is a per-record transform: the
//!    subset depends on that document and the key only, never on the other documents or their
//!    order (an RNG stream shared across documents in corpus order would let one added
//!    document shift the samples of every later one, and the per-document bound would no longer
//!    bound how far the counts move). A uniform sample, rather than the first `k` words, does not
//!    favour the words at the start of long documents.
//! 2. **Counts.** `c(w)` = number of documents contributing `w`. Under add/remove-one document
//!    the vector `c` moves by at most 1 per word (L-inf 1) in at most `k` words: L2 `sqrt(k)`.
//! 3. **Noise and threshold.** Keep `w` iff `c(w) + N(0, sigma^2) > T`, over the words with
//!    `c(w) >= 1` only (words absent from the text are never candidates).
//!
//! `delta` is split in two halves as Google's `GaussianPartitionSelection` does:
//! `delta_noise = delta_thr = delta / 2`. `sigma = z sqrt(k)`, with the noise multiplier `z`
//! calibrated by dp-accountant so that one Gaussian release of L2 sensitivity `sqrt(k)` is
//! `(epsilon - eps_thr, delta_noise)`-DP (`eps_thr` below). The threshold makes a document whose `k` words appear nowhere
//! else reveal itself with probability at most `delta_thr`: each such word has `c = 1` and is
//! kept with probability `p = P[1 + N(0, sigma^2) > T]`, so `T = 1 + sigma Phi^-1(1 - p)` with
//! `p = 1 - (1 - delta_thr)^(1/k)` (then `1 - (1 - p)^k = delta_thr`). The threshold is rounded
//! up (the safe side).
//!
//! # Privacy
//! The selection is `(epsilon_vocab, delta_vocab)`-DP under add/remove-one document, with
//! `delta_vocab = delta_noise + delta_thr` (Gopi et al. 2020, Thm. for Gaussian thresholding;
//! Google's "Delta for thresholding" note; the Gaussian part is calibrated to
//! `epsilon_vocab - eps_thr`, `eps_thr = -ln(1 - delta_thr)`, see `dp_core::wall::partition`).
//! It is recorded in the caller's [`dp_accountant::Accountant`] as a [`PrivacyEvent::Gaussian`]
//! with noise multiplier `z` under add/remove-one (the count part) **before** any noise is
//! drawn; the threshold's `delta_thr` and `eps_thr` are not RDP quantities and are stated in the
//! entry's notes ([`dp_accountant::EXTRA_DELTA_NOTE`], [`dp_accountant::EXTRA_EPSILON_NOTE`]) and
//! in the [`VocabularyReport`].
//!
//! **Composition with the LDA fit.** If the fit on the selected vocabulary is
//! `(epsilon_fit, delta_fit)`-DP for every fixed vocabulary (the bag-of-words conversion is a
//! per-document map given the vocabulary), the whole pipeline is
//! `(epsilon_vocab + epsilon_fit, delta_vocab + delta_fit)`-DP by basic composition
//! ([`VocabularyReport::compose_with_fit`]). Tighter: a ledger holding the selection's entry and
//! the fit's events, replayed at a total `delta` (`dp_accountant::cli::CliCommand::Replay`),
//! answers the events at `delta - delta_thr` and adds `eps_thr`; that is the guarantee
//! `dp-bayes fit lda` states (the proof is in `dp_core::wall::partition`'s module docs).
//!
//! The word samples and the noise come from ChaCha20 keyed from OS entropy
//! ([`RngPolicy::OsEntropy`], a CSPRNG) unless a seed is given on purpose
//! ([`RngPolicy::Seeded`]); then the report and the ledger say so, and the selection gives no
//! privacy against whoever knows the seed (the sample key and the noise key are derived from it
//! under different domains). Each word's noise is drawn from
//! its own stream (`SHA-256(domain || key || word)`), so the noise of a word does not depend on
//! which other words occur (this couples neighbouring corpora exactly under a fixed seed). The
//! returned vocabulary is sorted (byte order), so its order reveals nothing beyond the set.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use dp_accountant::{Accountant, AccountantError, PrivacyEvent};
use dp_core::wall::partition::{self, PartitionRelease};
use dp_core::{CoreError, RngPolicy};
use rand::rngs::{ChaCha20Rng, SysRng};
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::limits::{MAX_INPUT_BYTES, MAX_LINE_BYTES};

/// Domain separator of the per-word noise streams (unchanged since before the selection moved
/// into dp-core, so seeded selections are the same).
const DOMAIN: &[u8] = b"vips-models/lda/vocabulary/gaussian-partition-selection/v1";

/// Domain separator of the per-document word samples ([`WordSampleKey`]).
const SAMPLE_DOMAIN: &[u8] = b"vips-models/lda/vocabulary/per-document-word-sample/v1";

/// Most words a vocabulary may hold (word ids are `u32`).
pub const MAX_VOCABULARY: usize = u32::MAX as usize;

/// Why a vocabulary could not be loaded or selected.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum VocabularyError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line that is not valid UTF-8.
    #[error("{}: line {line} is not valid UTF-8", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },
    /// An empty (or blank) line.
    #[error("{}: line {line} is empty", path.display())]
    EmptyLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },
    /// A word with whitespace in it (tokens never have any).
    #[error("{}: line {line}: `{word}` contains whitespace", path.display())]
    Whitespace {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The line (cut to 60 characters).
        word: String,
    },
    /// A word listed twice.
    #[error("{}: line {line}: `{word}` repeats line {first_line}", path.display())]
    Duplicate {
        /// The file (empty for a list given in memory).
        path: PathBuf,
        /// 1-based line number of the repeat.
        line: usize,
        /// The word (cut to 60 characters).
        word: String,
        /// The line where it first appeared.
        first_line: usize,
    },
    /// A line longer than `MAX_LINE_BYTES`, or a file larger than `MAX_INPUT_BYTES`.
    #[error("{}: line {line}: over the size limit ({what})", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0 for the whole file).
        line: usize,
        /// Which limit.
        what: &'static str,
    },
    /// A file with no words.
    #[error("{}: the vocabulary file has no words", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// More than [`MAX_VOCABULARY`] words.
    #[error("more than {MAX_VOCABULARY} words")]
    TooManyWords,
    /// A selection setting out of range.
    #[error("invalid {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// Why it is refused.
        reason: &'static str,
    },
    /// The accountant refused the calibration or the ledger entry (nothing was released).
    #[error(transparent)]
    Accountant(#[from] AccountantError),
    /// The operating system could not provide entropy for the noise key (nothing was released).
    #[error("no OS entropy for the vocabulary noise: {0}")]
    Entropy(#[source] rand::rngs::SysError),
    /// dp-core's partition selection failed otherwise (nothing was released).
    #[error("private vocabulary selection: {0}")]
    Core(#[source] CoreError),
}

/// dp-core's errors in the vocabulary's terms: a bad setting names the LDA parameter, the
/// accountant's and the entropy source's errors keep their variants.
impl From<CoreError> for VocabularyError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::InvalidParameter {
                name,
                value,
                reason,
            } => Self::InvalidParameter {
                name: if name == "max_keys_per_record" {
                    "max_words_per_doc"
                } else {
                    name
                },
                value,
                reason,
            },
            CoreError::Accountant(e) => Self::Accountant(e),
            CoreError::Entropy(e) => Self::Entropy(e),
            other => Self::Core(other),
        }
    }
}

fn cut(s: &str) -> String {
    s.chars().take(60).collect()
}

/// A vocabulary: distinct non-empty words without whitespace; word id = position.
///
/// Serialises as its list of words.
///
/// # Example
/// ```
/// use vips_models::lda::Vocabulary;
/// let v = Vocabulary::from_words(vec!["river".into(), "apple".into()])?;
/// assert_eq!((v.id("apple"), v.id("moon")), (Some(1), None));
/// assert!(Vocabulary::from_words(vec!["a".into(), "a".into()]).is_err());
/// # Ok::<(), vips_models::lda::VocabularyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<String>", into = "Vec<String>")]
pub struct Vocabulary {
    words: Vec<String>,
    index: HashMap<String, u32>,
}

impl TryFrom<Vec<String>> for Vocabulary {
    type Error = VocabularyError;
    fn try_from(words: Vec<String>) -> Result<Self, VocabularyError> {
        Self::from_words(words)
    }
}

impl From<Vocabulary> for Vec<String> {
    fn from(v: Vocabulary) -> Self {
        v.words
    }
}

impl Vocabulary {
    /// A vocabulary from words in id order.
    ///
    /// # Errors
    /// [`VocabularyError::EmptyLine`], [`VocabularyError::Whitespace`] or
    /// [`VocabularyError::Duplicate`] naming the (1-based) position as the line, with an empty
    /// path; [`VocabularyError::TooManyWords`].
    pub fn from_words(words: Vec<String>) -> Result<Self, VocabularyError> {
        Self::checked(words, Path::new(""))
    }

    fn checked(words: Vec<String>, path: &Path) -> Result<Self, VocabularyError> {
        if words.len() > MAX_VOCABULARY {
            return Err(VocabularyError::TooManyWords);
        }
        let mut index: HashMap<String, u32> = HashMap::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            check_word(w, path, i + 1)?;
            if let Some(&first) = index.get(w.as_str()) {
                return Err(VocabularyError::Duplicate {
                    path: path.to_path_buf(),
                    line: i + 1,
                    word: cut(w),
                    first_line: first as usize + 1,
                });
            }
            index.insert(w.clone(), i as u32);
        }
        Ok(Self { words, index })
    }

    /// Reads a public vocabulary: one word per line (`\n` or `\r\n`), word id = line - 1. The
    /// words are used as written (tokens are lower-case, so a capitalised word never matches).
    ///
    /// # Errors
    /// [`VocabularyError::Io`]; [`VocabularyError::TooLarge`] for a file over `MAX_INPUT_BYTES`
    /// (from its size, before reading) or a line over `MAX_LINE_BYTES`;
    /// [`VocabularyError::NotUtf8`], [`VocabularyError::EmptyLine`],
    /// [`VocabularyError::Whitespace`], [`VocabularyError::Duplicate`] naming the line;
    /// [`VocabularyError::Empty`] for a file without words.
    ///
    /// # Privacy
    /// The caller asserts the list is public (chosen without looking at the private text). A
    /// vocabulary written from the private corpus itself (e.g. its own `vocab.txt`) is not
    /// public, and using it as such is outside every guarantee of this crate.
    pub fn load(path: &Path) -> Result<Self, VocabularyError> {
        let io = |source| VocabularyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        let too_large = |line, what| VocabularyError::TooLarge {
            path: path.to_path_buf(),
            line,
            what,
        };
        if size > MAX_INPUT_BYTES {
            return Err(too_large(0, "MAX_INPUT_BYTES"));
        }
        let mut reader = BufReader::new(File::open(path).map_err(io)?.take(MAX_INPUT_BYTES + 1));
        let mut words = Vec::new();
        let mut bytes = Vec::new();
        let mut line = 0usize;
        loop {
            line += 1;
            bytes.clear();
            let n = (&mut reader)
                .take(MAX_LINE_BYTES as u64 + 2)
                .read_until(b'\n', &mut bytes)
                .map_err(io)?;
            if n == 0 {
                break;
            }
            if bytes.last() == Some(&b'\n') {
                bytes.pop();
                if bytes.last() == Some(&b'\r') {
                    bytes.pop();
                }
            }
            if bytes.len() > MAX_LINE_BYTES {
                return Err(too_large(line, "MAX_LINE_BYTES"));
            }
            let word = String::from_utf8(bytes.clone()).map_err(|_| VocabularyError::NotUtf8 {
                path: path.to_path_buf(),
                line,
            })?;
            if words.len() >= MAX_VOCABULARY {
                return Err(VocabularyError::TooManyWords);
            }
            words.push(word);
        }
        if words.is_empty() {
            return Err(VocabularyError::Empty {
                path: path.to_path_buf(),
            });
        }
        Self::checked(words, path)
    }

    /// Writes the words, one per line, each line ending in `\n`.
    ///
    /// # Errors
    /// [`VocabularyError::Io`].
    pub fn save(&self, path: &Path) -> Result<(), VocabularyError> {
        let mut text = String::with_capacity(self.words.iter().map(|w| w.len() + 1).sum());
        for w in &self.words {
            text.push_str(w);
            text.push('\n');
        }
        std::fs::write(path, text).map_err(|source| VocabularyError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The words in id order.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The id of `word`, if it is in the vocabulary.
    pub fn id(&self, word: &str) -> Option<u32> {
        self.index.get(word).copied()
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// `true` for no words.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

fn check_word(w: &str, path: &Path, line: usize) -> Result<(), VocabularyError> {
    if w.trim().is_empty() {
        return Err(VocabularyError::EmptyLine {
            path: path.to_path_buf(),
            line,
        });
    }
    if w.chars().any(char::is_whitespace) {
        return Err(VocabularyError::Whitespace {
            path: path.to_path_buf(),
            line,
            word: cut(w),
        });
    }
    Ok(())
}

/// The key of the per-document word samples of a private vocabulary selection
/// ([`bounded_words`]): a secret 256-bit key from OS entropy, or one derived from a seed given on
/// purpose (then the samples are reproducible by whoever knows the seed). Its `Debug` output
/// never shows the bytes.
///
/// # Privacy
/// For every fixed key, a document's sample is a function of that document alone, so
/// neighbouring corpora give neighbouring sets of samples whatever the key; a seeded key only
/// makes the samples reproducible.
///
/// # Example
/// ```
/// use dp_core::RngPolicy;
/// use vips_models::lda::vocabulary::{WordSampleKey, bounded_words};
/// let key = WordSampleKey::new(RngPolicy::Seeded { seed: 3 })?;
/// let doc = ["sea", "moon", "sun", "sea", "river", "star"];
/// let kept = bounded_words(&doc, 2, &key);
/// assert_eq!(kept.len(), 2);
/// assert_eq!(kept, bounded_words(&doc, 2, &key)); // a function of the document and the key
/// assert!(kept.iter().all(|w| doc.contains(w)));
/// # Ok::<(), vips_models::lda::VocabularyError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WordSampleKey {
    bytes: [u8; 32],
    seed: Option<u64>,
}

impl std::fmt::Debug for WordSampleKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.seed {
            Some(seed) => write!(f, "WordSampleKey(seed {seed})"),
            None => f.write_str("WordSampleKey(secret, from OS entropy)"),
        }
    }
}

impl WordSampleKey {
    /// The key for `policy`: fresh from OS entropy ([`RngPolicy::OsEntropy`]), or derived from
    /// the seed ([`RngPolicy::Seeded`]).
    ///
    /// # Errors
    /// [`VocabularyError::Entropy`] if the OS cannot provide entropy.
    pub fn new(policy: RngPolicy) -> Result<Self, VocabularyError> {
        match policy {
            RngPolicy::OsEntropy => {
                let mut rng =
                    ChaCha20Rng::try_from_rng(&mut SysRng).map_err(VocabularyError::Entropy)?;
                let mut bytes = [0u8; 32];
                rng.fill_bytes(&mut bytes);
                Ok(Self { bytes, seed: None })
            }
            RngPolicy::Seeded { seed } => {
                let mut h = Sha256::new();
                h.update(SAMPLE_DOMAIN);
                h.update(b"/seed");
                h.update(seed.to_le_bytes());
                Ok(Self {
                    bytes: h.finalize().into(),
                    seed: Some(seed),
                })
            }
        }
    }

    /// The sampling stream of one document: ChaCha20 seeded by `SHA-256(domain || key ||
    /// number of tokens || (length, bytes) of each token)`, a function of the document's
    /// tokens and the key only.
    fn document_rng<S: AsRef<str>>(&self, doc: &[S]) -> ChaCha20Rng {
        let mut h = Sha256::new();
        h.update(SAMPLE_DOMAIN);
        h.update(self.bytes);
        h.update((doc.len() as u64).to_le_bytes());
        for token in doc {
            let t = token.as_ref().as_bytes();
            h.update((t.len() as u64).to_le_bytes());
            h.update(t);
        }
        ChaCha20Rng::from_seed(h.finalize().into())
    }
}

/// The per-document contribution bound: a document's distinct tokens, each once; when it has
/// more than `max_words_per_doc`, a uniformly random `max_words_per_doc` of them, drawn from the
/// document's own stream ([`WordSampleKey`]). The kept words come in reading order.
///
/// # Privacy
/// A function of the one document and the key only (a per-record transform): no state is
/// shared across documents, so adding, removing or reordering other documents changes nothing.
pub fn bounded_words<'d, S: AsRef<str>>(
    doc: &'d [S],
    max_words_per_doc: usize,
    key: &WordSampleKey,
) -> Vec<&'d str> {
    let distinct = partition::bounded_keys(doc.iter().map(AsRef::as_ref), usize::MAX);
    if distinct.len() <= max_words_per_doc {
        return distinct;
    }
    let mut rng = key.document_rng(doc);
    let mut picked =
        rand::seq::index::sample(&mut rng, distinct.len(), max_words_per_doc).into_vec();
    picked.sort_unstable();
    picked.into_iter().map(|i| distinct[i]).collect()
}

/// The contribution-bounded document counts `c(w)` (how many documents contribute `w`, each
/// contributing at most `max_words_per_doc` distinct words, sampled with `key`, see
/// [`bounded_words`]): with the key [`select_vocabulary`] derives from a seeded policy
/// (`WordSampleKey::new(policy)`), the counts that selection noises.
///
/// **Not private**: the exact statistic the selection noises. Exposed for tests and audits.
///
/// # Example
/// ```
/// use dp_core::RngPolicy;
/// use vips_models::lda::vocabulary::{WordSampleKey, contribution_counts};
/// let key = WordSampleKey::new(RngPolicy::Seeded { seed: 1 })?;
/// let docs = vec![vec!["sea", "sea", "river"], vec!["sea", "moon", "sun"]];
/// let c = contribution_counts(&docs, 2, &key);
/// assert_eq!(c["river"], 1); // document 1 has only two distinct words: both count
/// assert!(c["sea"] <= 2); // once per document at most
/// assert_eq!(c.values().sum::<u64>(), 4); // two of document 2's three words
/// # Ok::<(), vips_models::lda::VocabularyError>(())
/// ```
pub fn contribution_counts<S: AsRef<str>>(
    docs: &[Vec<S>],
    max_words_per_doc: usize,
    key: &WordSampleKey,
) -> BTreeMap<String, u64> {
    partition::contribution_counts(
        docs,
        |d| bounded_words(d, max_words_per_doc, key),
        max_words_per_doc,
    )
    .into_iter()
    .map(|(w, c)| (w.to_string(), c))
    .collect()
}

/// The calibrated Gaussian-thresholding partition selection for a vocabulary: dp-core's
/// [`partition::PartitionSelection`] with `k` = the cap on distinct words per document (see
/// the [module docs](self)).
///
/// Serialises with the fields it always had; deserialising recalibrates from `epsilon`, `delta`
/// and `max_words_per_doc` and refuses a value whose other fields disagree, so every value is a
/// calibrated selection.
///
/// # Example
/// ```
/// use vips_models::lda::vocabulary::PartitionSelection;
/// let s = PartitionSelection::calibrate(1.0, 1e-6, 50)?;
/// assert!(s.sigma() > 0.0 && s.threshold() > 1.0);
/// assert!((s.noise_delta() + s.threshold_delta() - 1e-6).abs() < 1e-18);
/// // A word only one document has is kept with probability at most the per-word share.
/// assert!(s.count_one_keep_probability() <= s.per_word_delta());
/// # Ok::<(), vips_models::lda::VocabularyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SelectionRepr", into = "SelectionRepr")]
pub struct PartitionSelection(partition::PartitionSelection);

/// The serialised form of a [`PartitionSelection`] (the field names of before issue 18).
#[derive(Serialize, Deserialize)]
struct SelectionRepr {
    epsilon: f64,
    delta: f64,
    max_words_per_doc: usize,
    noise_delta: f64,
    threshold_delta: f64,
    per_word_delta: f64,
    noise_multiplier: f64,
    sigma: f64,
    threshold: f64,
}

impl From<PartitionSelection> for SelectionRepr {
    fn from(s: PartitionSelection) -> Self {
        let s = s.0;
        Self {
            epsilon: s.epsilon(),
            delta: s.delta(),
            max_words_per_doc: s.max_keys_per_record(),
            noise_delta: s.noise_delta(),
            threshold_delta: s.threshold_delta(),
            per_word_delta: s.per_key_delta(),
            noise_multiplier: s.noise_multiplier(),
            sigma: s.sigma(),
            threshold: s.threshold(),
        }
    }
}

impl TryFrom<SelectionRepr> for PartitionSelection {
    type Error = VocabularyError;
    fn try_from(r: SelectionRepr) -> Result<Self, VocabularyError> {
        let s = Self::calibrate(r.epsilon, r.delta, r.max_words_per_doc)?;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        for (name, stored, calibrated) in [
            ("noise_delta", r.noise_delta, s.noise_delta()),
            ("threshold_delta", r.threshold_delta, s.threshold_delta()),
            ("per_word_delta", r.per_word_delta, s.per_word_delta()),
            ("noise_multiplier", r.noise_multiplier, s.noise_multiplier()),
            ("sigma", r.sigma, s.sigma()),
            ("threshold", r.threshold, s.threshold()),
        ] {
            if !close(stored, calibrated) {
                return Err(VocabularyError::InvalidParameter {
                    name,
                    value: stored,
                    reason: "disagrees with the calibration of (epsilon, delta, max_words_per_doc)",
                });
            }
        }
        Ok(s)
    }
}

impl PartitionSelection {
    /// Calibrates the selection for `(epsilon, delta)` and a public cap of `max_words_per_doc`
    /// distinct words per document ([`partition::PartitionSelection::calibrate`]).
    ///
    /// # Errors
    /// [`VocabularyError::InvalidParameter`] for `epsilon` not finite and positive, `delta`
    /// outside `(0, 1)`, or `max_words_per_doc == 0`; [`VocabularyError::Accountant`] if the
    /// calibration fails.
    pub fn calibrate(
        epsilon: f64,
        delta: f64,
        max_words_per_doc: usize,
    ) -> Result<Self, VocabularyError> {
        Ok(Self(partition::PartitionSelection::calibrate(
            epsilon,
            delta,
            max_words_per_doc,
        )?))
    }

    /// dp-core's selection.
    pub fn as_core(&self) -> &partition::PartitionSelection {
        &self.0
    }
    /// The selection's epsilon.
    pub fn epsilon(&self) -> f64 {
        self.0.epsilon()
    }
    /// The selection's total delta (`noise_delta + threshold_delta`).
    pub fn delta(&self) -> f64 {
        self.0.delta()
    }
    /// The public cap `k` on distinct words per document.
    pub fn max_words_per_doc(&self) -> usize {
        self.0.max_keys_per_record()
    }
    /// The Gaussian mechanism's delta (half of `delta`).
    pub fn noise_delta(&self) -> f64 {
        self.0.noise_delta()
    }
    /// The threshold's delta (half of `delta`): the probability bound that any word of a
    /// document whose words occur nowhere else is selected.
    pub fn threshold_delta(&self) -> f64 {
        self.0.threshold_delta()
    }
    /// The per-word share `1 - (1 - threshold_delta)^(1/k)`.
    pub fn per_word_delta(&self) -> f64 {
        self.0.per_key_delta()
    }
    /// Noise std divided by the L2 sensitivity `sqrt(k)`.
    pub fn noise_multiplier(&self) -> f64 {
        self.0.noise_multiplier()
    }
    /// The noise standard deviation `sigma`.
    pub fn sigma(&self) -> f64 {
        self.0.sigma()
    }
    /// The threshold `T`: a word is kept iff its noisy count exceeds it.
    pub fn threshold(&self) -> f64 {
        self.0.threshold()
    }
    /// `P[1 + N(0, sigma^2) > T]`, the probability that a word with count 1 is kept (at most
    /// [`PartitionSelection::per_word_delta`]).
    pub fn count_one_keep_probability(&self) -> f64 {
        self.0.count_one_keep_probability()
    }
    /// The event recorded for the count part: a Gaussian mechanism with
    /// [`PartitionSelection::noise_multiplier`] under add/remove-one.
    ///
    /// # Errors
    /// Never for a calibrated selection.
    pub fn event(&self) -> Result<PrivacyEvent, VocabularyError> {
        Ok(self.0.event()?)
    }
    /// Whether a word with noisy count `noisy` is kept.
    pub fn keeps(&self, noisy: f64) -> bool {
        self.0.keeps(noisy)
    }
}

/// What a private vocabulary selection released and spent (all public).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VocabularyReport {
    /// Number of words selected.
    pub size: usize,
    /// The mechanism.
    pub mechanism: String,
    /// The calibrated selection (epsilon, deltas, `k`, sigma, threshold).
    pub selection: PartitionSelection,
    /// The noise source (`RngPolicy::describe`).
    pub rng: String,
    /// `true` if the noise was seeded on purpose (no privacy against whoever knows the seed).
    pub seeded: bool,
    /// The ledger entry's label.
    pub ledger_label: String,
}

impl VocabularyReport {
    /// The whole pipeline's guarantee by basic composition with a fit that is
    /// `(epsilon_fit, delta_fit)`-DP for every fixed vocabulary:
    /// `(epsilon_vocab + epsilon_fit, delta_vocab + delta_fit)`.
    ///
    /// # Example
    /// ```
    /// use dp_core::RngPolicy;
    /// use dp_accountant::Accountant;
    /// use vips_models::lda::vocabulary::{PartitionSelection, select_vocabulary};
    /// let docs = vec![vec!["sea".to_string()]; 200];
    /// let s = PartitionSelection::calibrate(0.5, 1e-6, 10)?;
    /// let mut ledger = Accountant::new();
    /// let (_vocab, report) = select_vocabulary(&docs, &s, RngPolicy::Seeded { seed: 1 }, &mut ledger)?;
    /// let (eps, delta) = report.compose_with_fit(1.5, 1e-6);
    /// assert_eq!((eps, delta), (2.0, 2e-6));
    /// # Ok::<(), vips_models::lda::VocabularyError>(())
    /// ```
    pub fn compose_with_fit(&self, epsilon_fit: f64, delta_fit: f64) -> (f64, f64) {
        (
            self.selection.epsilon() + epsilon_fit,
            self.selection.delta() + delta_fit,
        )
    }
}

/// The ledger label of a vocabulary selection.
pub const LEDGER_LABEL: &str = "lda vocabulary: Gaussian partition selection";

/// Selects a vocabulary privately from tokenised documents (one `Vec` of tokens per document)
/// through dp-core's wall ([`dp_core::wall::partition::select_partitions`], the documents'
/// tokens as keys, at most `selection.max_words_per_doc()` distinct ones per document, a
/// per-document sample keyed by `WordSampleKey::new(policy)` when a document has more, see
/// [`bounded_words`]): the release is recorded in `ledger` first, then the words whose noisy
/// contribution-bounded count exceeds the threshold are kept. The result is sorted (byte order).
///
/// # Example
/// ```
/// use dp_accountant::Accountant;
/// use dp_core::RngPolicy;
/// use vips_models::lda::vocabulary::{PartitionSelection, select_vocabulary};
/// // 300 documents share "river"; one document alone has "secret".
/// let mut docs = vec![vec!["river".to_string(), "flows".into()]; 300];
/// docs.push(vec!["secret".into()]);
/// let s = PartitionSelection::calibrate(1.0, 1e-6, 20)?;
/// let mut ledger = Accountant::new();
/// let (vocab, report) = select_vocabulary(&docs, &s, RngPolicy::OsEntropy, &mut ledger)?;
/// assert_eq!(vocab.words(), &["flows", "river"]);
/// assert_eq!(ledger.len(), 1);
/// assert!(!report.seeded);
/// # Ok::<(), vips_models::lda::VocabularyError>(())
/// ```
///
/// # Errors
/// [`VocabularyError::Accountant`] if the ledger refuses the entry (e.g. it holds replace-one
/// events), [`VocabularyError::Entropy`] if the OS has no entropy: in both cases nothing is
/// released. [`VocabularyError::TooManyWords`] cannot happen for fewer than `2^32` candidates.
///
/// # Privacy
/// See the [module docs](self): `(selection.epsilon(), selection.delta())`-DP under add/remove-one
/// document, recorded in `ledger` as a Gaussian event plus the threshold delta in the notes. An
/// empty vocabulary is a possible (and private) outcome; the budget is spent either way.
pub fn select_vocabulary<S: AsRef<str>>(
    docs: &[Vec<S>],
    selection: &PartitionSelection,
    policy: RngPolicy,
    ledger: &mut Accountant,
) -> Result<(Vocabulary, VocabularyReport), VocabularyError> {
    let release = PartitionRelease::new(LEDGER_LABEL, DOMAIN).record_name("document");
    let k = selection.max_words_per_doc();
    let key = WordSampleKey::new(policy)?;
    let selected = partition::select_partitions(
        docs,
        |d| bounded_words(d, k, &key),
        selection.as_core(),
        policy,
        ledger,
        &release,
    )?;
    let vocab = Vocabulary::from_words(selected.keys.into_iter().map(str::to_string).collect())?;
    let report = VocabularyReport {
        size: vocab.len(),
        mechanism: "Gaussian-thresholding partition selection".into(),
        selection: selection.clone(),
        rng: selected.rng,
        seeded: selected.seeded,
        ledger_label: selected.ledger_label,
    };
    Ok((vocab, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_round_trips_with_its_old_field_names() {
        let s = PartitionSelection::calibrate(1.0, 1e-5, 7).unwrap();
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["max_words_per_doc"], 7);
        assert!(json["per_word_delta"].as_f64().unwrap() > 0.0);
        let back: PartitionSelection = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, s);
        // A tampered threshold is refused: every selection is a calibrated one.
        let mut bad = json;
        bad["threshold"] = serde_json::json!(0.5);
        assert!(serde_json::from_value::<PartitionSelection>(bad).is_err());
    }

    #[test]
    fn bad_settings_name_the_lda_parameter() {
        let e = PartitionSelection::calibrate(1.0, 1e-6, 0).unwrap_err();
        assert!(matches!(
            e,
            VocabularyError::InvalidParameter {
                name: "max_words_per_doc",
                ..
            }
        ));
    }
}
