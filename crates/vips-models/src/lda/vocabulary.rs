//! LDA vocabularies: public (a word list the user asserts is public) or selected privately from
//! the training text by Gaussian-thresholding partition selection.
//!
//! # Private selection (Gopi et al. 2020; Google's differential-privacy library)
//! 1. **Contribution bound.** Each document contributes each distinct word at most once, and at
//!    most `k` distinct words (`k` = [`PartitionSelection::max_words_per_doc`], public): the first
//!    `k` distinct words in reading order. This depends on the document only.
//! 2. **Counts.** `c(w)` = number of documents contributing `w`. Under add/remove-one document
//!    the vector `c` moves by at most 1 per word (L-inf 1) in at most `k` words: L2 `sqrt(k)`.
//! 3. **Noise and threshold.** Keep `w` iff `c(w) + N(0, sigma^2) > T`, over the words with
//!    `c(w) >= 1` only (words absent from the text are never candidates).
//!
//! `delta` is split in two halves as Google's `GaussianPartitionSelection` does:
//! `delta_noise = delta_thr = delta / 2`. `sigma = z sqrt(k)`, with the noise multiplier `z`
//! calibrated by dp-accountant so that one Gaussian release of L2 sensitivity `sqrt(k)` is
//! `(epsilon, delta_noise)`-DP. The threshold makes a document whose `k` words appear nowhere
//! else reveal itself with probability at most `delta_thr`: each such word has `c = 1` and is
//! kept with probability `p = P[1 + N(0, sigma^2) > T]`, so `T = 1 + sigma Phi^-1(1 - p)` with
//! `p = 1 - (1 - delta_thr)^(1/k)` (then `1 - (1 - p)^k = delta_thr`). The threshold is rounded
//! up (the safe side).
//!
//! # Privacy
//! The selection is `(epsilon_vocab, delta_vocab)`-DP under add/remove-one document, with
//! `delta_vocab = delta_noise + delta_thr` (Gopi et al. 2020, Thm. for Gaussian thresholding;
//! Google's "Delta for thresholding" note). It is recorded in the caller's
//! [`dp_accountant::Accountant`] as a [`PrivacyEvent::Gaussian`] with noise multiplier `z`
//! under add/remove-one (the count part) **before** any noise is drawn; the threshold's
//! `delta_thr` is not an RDP quantity and is stated in the entry's notes
//! (`extra_delta_not_in_event`) and in the [`VocabularyReport`].
//!
//! **Composition with the LDA fit** uses the budget split (basic composition): if the fit on the
//! selected vocabulary is `(epsilon_fit, delta_fit)`-DP for every fixed vocabulary (the
//! bag-of-words conversion is a per-document map given the vocabulary), the whole pipeline is
//! `(epsilon_vocab + epsilon_fit, delta_vocab + delta_fit)`-DP
//! ([`VocabularyReport::compose_with_fit`]). An answer of a ledger holding both the selection's
//! Gaussian event and the fit's events covers the Gaussian parts only: `delta_thr` must be added
//! to its delta, and this module does not claim that tighter bound; quote the basic composition.
//!
//! Noise comes from ChaCha20 keyed from OS entropy ([`RngPolicy::OsEntropy`], a CSPRNG) unless a
//! seed is given on purpose ([`RngPolicy::Seeded`]); then the report and the ledger say so, and
//! the selection gives no privacy against whoever knows the seed. Each word's noise is drawn from
//! its own stream (`SHA-256(domain || key || word)`), so the noise of a word does not depend on
//! which other words occur (this couples neighbouring corpora exactly under a fixed seed). The
//! returned vocabulary is sorted (byte order), so its order reveals nothing beyond the set.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use dp_accountant::calibrate::{Sampling, calibrate_noise_multiplier};
use dp_accountant::{
    Accountant, AccountantConfig, AccountantError, Budget, Neighbouring, PrivacyEvent,
};
use dp_core::RngPolicy;
use rand::rngs::{ChaCha20Rng, SysRng};
use rand::{Rng, RngExt, SeedableRng};
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use crate::limits::{MAX_INPUT_BYTES, MAX_LINE_BYTES};

/// Domain separator of the per-word noise streams.
const DOMAIN: &[u8] = b"vips-models/lda/vocabulary/gaussian-partition-selection/v1";

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

/// The per-document contribution bound: each document's first `max_words_per_doc` distinct
/// tokens (in reading order), each once.
///
/// # Privacy
/// A function of the one document only (a per-record transform).
pub fn bounded_words<S: AsRef<str>>(doc: &[S], max_words_per_doc: usize) -> Vec<&str> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut out = Vec::new();
    for t in doc {
        if out.len() >= max_words_per_doc {
            break;
        }
        let t = t.as_ref();
        if seen.insert(t) {
            out.push(t);
        }
    }
    out
}

/// The contribution-bounded document counts `c(w)` (how many documents contribute `w`, each
/// contributing at most `max_words_per_doc` distinct words, see [`bounded_words`]).
///
/// **Not private**: the exact statistic the selection noises. Exposed for tests and audits.
///
/// # Example
/// ```
/// use vips_models::lda::vocabulary::contribution_counts;
/// let docs = vec![vec!["sea", "sea", "river"], vec!["sea", "moon", "sun"]];
/// let c = contribution_counts(&docs, 2);
/// assert_eq!(c.get("sea"), Some(&2)); // once per document
/// assert_eq!(c.get("sun"), None); // the third distinct word of document 2 is over the cap
/// ```
pub fn contribution_counts<S: AsRef<str>>(
    docs: &[Vec<S>],
    max_words_per_doc: usize,
) -> BTreeMap<String, u64> {
    let mut counts: HashMap<&str, u64> = HashMap::new();
    for doc in docs {
        for w in bounded_words(doc, max_words_per_doc) {
            *counts.entry(w).or_insert(0) += 1;
        }
    }
    counts
        .into_iter()
        .map(|(w, c)| (w.to_string(), c))
        .collect()
}

/// The calibrated Gaussian-thresholding partition selection (see the [module docs](self)).
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
pub struct PartitionSelection {
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

impl PartitionSelection {
    /// Calibrates the selection for `(epsilon, delta)` and a public cap of `max_words_per_doc`
    /// distinct words per document.
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
        let bad = |name, value, reason| {
            Err(VocabularyError::InvalidParameter {
                name,
                value,
                reason,
            })
        };
        if !(epsilon > 0.0 && epsilon.is_finite()) {
            return bad("epsilon", epsilon, "must be finite and > 0");
        }
        if !(delta > 0.0 && delta < 1.0) {
            return bad("delta", delta, "must lie in (0, 1)");
        }
        if max_words_per_doc == 0 {
            return bad("max_words_per_doc", 0.0, "must be >= 1");
        }
        let threshold_delta = delta / 2.0;
        let noise_delta = delta - threshold_delta;
        let calibration = calibrate_noise_multiplier(
            Sampling::FullBatch {
                neighbouring: Neighbouring::AddRemoveOne,
            },
            1,
            &Budget::new(epsilon, noise_delta)?,
            &AccountantConfig::default(),
        )?;
        let noise_multiplier = calibration.noise_multiplier;
        let sigma = noise_multiplier * (max_words_per_doc as f64).sqrt();
        // 1 - (1 - delta_thr)^(1/k), computed without cancellation.
        let per_word_delta = -((-threshold_delta).ln_1p() / max_words_per_doc as f64).exp_m1();
        let threshold = 1.0 + sigma * upper_quantile(per_word_delta);
        Ok(Self {
            epsilon,
            delta,
            max_words_per_doc,
            noise_delta,
            threshold_delta,
            per_word_delta,
            noise_multiplier,
            sigma,
            threshold,
        })
    }

    /// The selection's epsilon.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }
    /// The selection's total delta (`noise_delta + threshold_delta`).
    pub fn delta(&self) -> f64 {
        self.delta
    }
    /// The public cap `k` on distinct words per document.
    pub fn max_words_per_doc(&self) -> usize {
        self.max_words_per_doc
    }
    /// The Gaussian mechanism's delta (half of `delta`).
    pub fn noise_delta(&self) -> f64 {
        self.noise_delta
    }
    /// The threshold's delta (half of `delta`): the probability bound that any word of a
    /// document whose words occur nowhere else is selected.
    pub fn threshold_delta(&self) -> f64 {
        self.threshold_delta
    }
    /// The per-word share `1 - (1 - threshold_delta)^(1/k)`.
    pub fn per_word_delta(&self) -> f64 {
        self.per_word_delta
    }
    /// Noise std divided by the L2 sensitivity `sqrt(k)`.
    pub fn noise_multiplier(&self) -> f64 {
        self.noise_multiplier
    }
    /// The noise standard deviation `sigma`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    /// The threshold `T`: a word is kept iff its noisy count exceeds it.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
    /// `P[1 + N(0, sigma^2) > T]`, the probability that a word with count 1 is kept (at most
    /// [`PartitionSelection::per_word_delta`]).
    pub fn count_one_keep_probability(&self) -> f64 {
        dp_accountant::normal::normal_sf((self.threshold - 1.0) / self.sigma)
    }
    /// The event recorded for the count part: a Gaussian mechanism with
    /// [`PartitionSelection::noise_multiplier`] under add/remove-one.
    ///
    /// # Errors
    /// Never for a calibrated selection.
    pub fn event(&self) -> Result<PrivacyEvent, VocabularyError> {
        Ok(PrivacyEvent::gaussian(
            self.noise_multiplier,
            Neighbouring::AddRemoveOne,
        )?)
    }
    /// Whether a word with noisy count `noisy` is kept.
    pub fn keeps(&self, noisy: f64) -> bool {
        noisy > self.threshold
    }
}

/// The smallest `z` (within 1e-12 relative, rounded up) with `P[N(0,1) > z] <= p`.
fn upper_quantile(p: f64) -> f64 {
    use dp_accountant::normal::normal_sf;
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if normal_sf(mid) <= p {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo <= 1e-12 * hi.abs().max(1.0) {
            break;
        }
    }
    hi
}

/// The noise key: 32 bytes from OS entropy, or derived from a seed given on purpose.
struct NoiseKey {
    bytes: [u8; 32],
}

impl NoiseKey {
    fn new(policy: RngPolicy) -> Result<Self, VocabularyError> {
        match policy {
            RngPolicy::OsEntropy => {
                let mut rng =
                    ChaCha20Rng::try_from_rng(&mut SysRng).map_err(VocabularyError::Entropy)?;
                let mut bytes = [0u8; 32];
                rng.fill_bytes(&mut bytes);
                Ok(Self { bytes })
            }
            RngPolicy::Seeded { seed } => {
                let mut h = Sha256::new();
                h.update(DOMAIN);
                h.update(b"/seed");
                h.update(seed.to_le_bytes());
                Ok(Self {
                    bytes: h.finalize().into(),
                })
            }
        }
    }

    /// One standard-normal draw for `word` from its own ChaCha20 stream.
    fn standard_normal(&self, word: &str) -> f64 {
        let mut h = Sha256::new();
        h.update(DOMAIN);
        h.update(self.bytes);
        h.update((word.len() as u64).to_le_bytes());
        h.update(word.as_bytes());
        let mut rng = ChaCha20Rng::from_seed(h.finalize().into());
        rng.sample(StandardNormal)
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
            self.selection.epsilon + epsilon_fit,
            self.selection.delta + delta_fit,
        )
    }
}

/// The ledger label of a vocabulary selection.
pub const LEDGER_LABEL: &str = "lda vocabulary: Gaussian partition selection";

/// Selects a vocabulary privately from tokenised documents (one `Vec` of tokens per document):
/// records the release in `ledger` first, then keeps the words whose noisy contribution-bounded
/// count exceeds the threshold. The result is sorted (byte order).
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
    let key = NoiseKey::new(policy)?;
    let event = selection.event()?;
    let k = selection.max_words_per_doc;
    let mut notes = BTreeMap::new();
    notes.insert(
        "mechanism".into(),
        "Gaussian-thresholding partition selection (Gopi et al. 2020)".into(),
    );
    notes.insert(
        "sensitivity".into(),
        format!(
            "L2 sqrt({k}) = {}, L-inf 1 (add/remove-one document)",
            (k as f64).sqrt()
        ),
    );
    notes.insert("noise_std".into(), format!("{}", selection.sigma));
    notes.insert("threshold".into(), format!("{}", selection.threshold));
    notes.insert("epsilon".into(), format!("{}", selection.epsilon));
    notes.insert("delta".into(), format!("{}", selection.delta));
    notes.insert("noise_delta".into(), format!("{}", selection.noise_delta));
    notes.insert(
        "extra_delta_not_in_event".into(),
        format!(
            "{} (threshold delta: add it to the delta of any answer that includes this entry)",
            selection.threshold_delta
        ),
    );
    notes.insert(
        "composition".into(),
        "basic composition with the fit: (eps_vocab + eps_fit, delta_vocab + delta_fit)".into(),
    );
    notes.insert("rng".into(), policy.describe());
    ledger.record_with_notes(LEDGER_LABEL, event, notes)?;

    let counts = contribution_counts(docs, k);
    let words: Vec<String> = counts
        .into_iter()
        .filter(|(w, c)| selection.keeps(*c as f64 + selection.sigma * key.standard_normal(w)))
        .map(|(w, _)| w)
        .collect();
    let vocab = Vocabulary::from_words(words)?;
    let report = VocabularyReport {
        size: vocab.len(),
        mechanism: "Gaussian-thresholding partition selection".into(),
        selection: selection.clone(),
        rng: policy.describe(),
        seeded: policy.is_seeded(),
        ledger_label: LEDGER_LABEL.into(),
    };
    Ok((vocab, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_inverts_the_tail() {
        for p in [0.5, 0.1, 1e-3, 1e-9, 1e-15] {
            let z = upper_quantile(p);
            let sf = dp_accountant::normal::normal_sf(z);
            assert!(sf <= p && sf > p * (1.0 - 1e-9), "p {p} z {z} sf {sf}");
        }
    }

    #[test]
    fn threshold_matches_the_union_bound() {
        let s = PartitionSelection::calibrate(1.0, 1e-5, 7).unwrap();
        let p = s.count_one_keep_probability();
        let any = 1.0 - (1.0 - p).powi(7);
        assert!(any <= s.threshold_delta() && any > 0.99 * s.threshold_delta());
    }
}
