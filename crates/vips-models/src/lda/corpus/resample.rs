//! Fixed document length (003 Sec. 4.2): each document's tokens are resampled with replacement to
//! exactly `N`, so every document carries the same weight and the per-document statistic has a
//! fixed scale.
//!
//! # Privacy
//! Resampling runs *before* the documents enter the privacy wall, so it must be a per-record
//! transform: the resampled version of a document may depend on that document and on randomness
//! that does not depend on any other document, never on a random stream shared across documents
//! in corpus order (then removing one document would shift the draws, and so the resampling, of
//! every later document, and the wall's per-record bound would no longer bound how far the
//! release moves). [`resample_document`] gives each document its own ChaCha20 stream, seeded by a
//! keyed SHA-256 hash of a [`ResamplingKey`] and the document's own `(word, count)` pairs: the
//! map `d -> resample(key, d)` is a fixed function of one document for a fixed key, so datasets
//! that differ in one document map to resampled datasets that differ in one document, and the
//! wall's add/remove-one guarantee carries over unchanged for every key value.

use rand::rngs::{ChaCha20Rng, SysRng};
use rand::{Rng, RngExt, SeedableRng};
use sha2::{Digest, Sha256};

use super::synthetic::tokens_to_document;
use super::{CorpusError, Document};

/// Domain separation of the per-document seed hash (changing it changes every resampling).
const DOMAIN: &[u8] = b"vips-models/lda-fixed-length-resampling/v1";

/// The key every document's resampling stream is derived from (see [`resample_document`]).
///
/// Two kinds: a secret key from OS entropy ([`ResamplingKey::from_os_entropy`], the default of the
/// examples; never printed, its `Debug` output is redacted) or a public seed
/// ([`ResamplingKey::public_seed`]) for reproducible experiments, which the output should say
/// ([`ResamplingKey::describe`]).
///
/// # Privacy
/// The guarantee of the downstream release does not depend on the key being secret: for every
/// fixed key, resampling is a function of one document alone, so neighbouring corpora stay
/// neighbouring. A public seed only makes the resampled tokens reproducible by whoever holds it
/// and the document. Identical documents get identical resamplings (the transform depends on the
/// document's content, not on its position).
///
/// # Example
/// ```
/// use vips_models::lda::corpus::{Document, ResamplingKey, resample_document};
/// let key = ResamplingKey::public_seed(7);
/// let doc = Document::new(vec![(1, 3), (4, 1)])?;
/// let a = resample_document(&doc, 50, &key)?;
/// assert_eq!(a, resample_document(&doc, 50, &key)?); // a function of the document and the key
/// assert_eq!(key.describe(), "public seed 7 (reproducible)");
/// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ResamplingKey {
    bytes: [u8; 32],
    public_seed: Option<u64>,
}

impl std::fmt::Debug for ResamplingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResamplingKey(")?;
        f.write_str(&self.describe())?;
        f.write_str(")")
    }
}

impl ResamplingKey {
    /// A secret 256-bit key from the operating system's entropy (never printed or serialised).
    ///
    /// # Errors
    /// [`CorpusError::Entropy`] if the OS cannot provide entropy.
    pub fn from_os_entropy() -> Result<Self, CorpusError> {
        let mut rng = ChaCha20Rng::try_from_rng(&mut SysRng).map_err(CorpusError::Entropy)?;
        let mut bytes = [0u8; 32];
        rng.fill_bytes(&mut bytes);
        Ok(Self {
            bytes,
            public_seed: None,
        })
    }

    /// A key derived from a public seed (reproducible resampling, recorded as such).
    pub fn public_seed(seed: u64) -> Self {
        let mut h = Sha256::new();
        h.update(DOMAIN);
        h.update(b"/public-seed");
        h.update(seed.to_le_bytes());
        Self {
            bytes: h.finalize().into(),
            public_seed: Some(seed),
        }
    }

    /// The public seed, if the key was derived from one.
    pub fn seed(&self) -> Option<u64> {
        self.public_seed
    }

    /// What the key is, for the output: the seed when public, never the bytes of a secret key.
    pub fn describe(&self) -> String {
        match self.public_seed {
            Some(s) => format!("public seed {s} (reproducible)"),
            None => "secret key from OS entropy (not printed)".to_string(),
        }
    }

    /// The resampling stream of one document for target length `length`: ChaCha20 seeded by
    /// `SHA-256(domain || key || length || number of distinct words || (word, count) pairs)`.
    pub fn document_rng(&self, doc: &Document, length: usize) -> ChaCha20Rng {
        let mut h = Sha256::new();
        h.update(DOMAIN);
        h.update(self.bytes);
        h.update((length as u64).to_le_bytes());
        h.update((doc.num_distinct() as u64).to_le_bytes());
        for (&w, &c) in doc.words().iter().zip(doc.counts()) {
            h.update(w.to_le_bytes());
            h.update(c.to_le_bytes());
        }
        ChaCha20Rng::from_seed(h.finalize().into())
    }
}

/// Resamples one document to exactly `length` tokens with its own stream
/// ([`ResamplingKey::document_rng`]): the result depends on this document and the key only.
///
/// # Errors
/// As [`resample_fixed_length`].
///
/// # Privacy
/// A per-record transform, safe to apply before the privacy wall: the resampled version of a
/// document may depend on that document and on randomness that does not depend on any other
/// document, never on a random stream shared across documents in corpus order (then removing one
/// document would shift the draws, and so the resampling, of every later document). For a fixed
/// key the map `d -> resample(key, d)` is a function of one document, so corpora that differ in
/// one document map to resampled corpora that differ in one document, and the wall's
/// add/remove-one guarantee carries over unchanged, for every key value.
///
/// # Example
/// See [`ResamplingKey`].
pub fn resample_document(
    doc: &Document,
    length: usize,
    key: &ResamplingKey,
) -> Result<Document, CorpusError> {
    resample_fixed_length(doc, length, &mut key.document_rng(doc, length))
}

/// Draws `length` tokens with replacement from `doc`'s empirical word distribution.
///
/// # Errors
/// [`CorpusError::InvalidParameter`] if `length == 0` or does not fit in `u32`.
///
/// # Privacy
/// Draws from `rng`: use a stream that belongs to this document only (as
/// [`resample_document`] does). Resampling a corpus from one stream in corpus order is *not* a
/// per-record transform and breaks the add/remove-one guarantee of whatever is released later.
///
/// # Example
/// ```
/// use rand::SeedableRng;
/// use vips_models::lda::corpus::{resample_fixed_length, Document};
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let doc = Document::new(vec![(1, 3), (4, 1)])?;
/// let fixed = resample_fixed_length(&doc, 500, &mut rng)?;
/// assert_eq!(fixed.len(), 500);
/// assert!(fixed.words().iter().all(|w| [1, 4].contains(w)));
/// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
/// ```
pub fn resample_fixed_length<R: Rng + ?Sized>(
    doc: &Document,
    length: usize,
    rng: &mut R,
) -> Result<Document, CorpusError> {
    if length == 0 || length > u32::MAX as usize {
        return Err(CorpusError::InvalidParameter {
            name: "length",
            value: length as f64,
            reason: "must be in 1..=u32::MAX",
        });
    }
    let mut cumulative: Vec<u64> = Vec::with_capacity(doc.num_distinct());
    let mut acc = 0u64;
    for &c in doc.counts() {
        acc += u64::from(c);
        cumulative.push(acc);
    }
    let mut tokens: Vec<u32> = Vec::with_capacity(length);
    for _ in 0..length {
        let u = rng.random_range(0..acc);
        let i = cumulative.partition_point(|&c| c <= u);
        tokens.push(doc.words()[i]);
    }
    Ok(tokens_to_document(&mut tokens))
}
