//! Tokenised documents to the crate's bag-of-words [`Corpus`] over a [`Vocabulary`].

use std::collections::HashMap;

use super::TextError;
use crate::lda::Vocabulary;
use crate::lda::corpus::{Corpus, Document};

/// Documents as bags of words over a vocabulary, one entry per input document, with counts of
/// what was dropped.
///
/// `unknown_tokens` and `empty_documents` depend on the data: they are **non-private
/// diagnostics** for the data owner, never to be published with a private model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BagOfWords {
    /// One entry per input document, in order: `None` if it has no word of the vocabulary.
    pub docs: Vec<Option<Document>>,
    /// The vocabulary's size.
    pub vocab_size: usize,
    /// NON-PRIVATE diagnostic: tokens dropped because they are not in the vocabulary.
    pub unknown_tokens: u64,
    /// NON-PRIVATE diagnostic: documents left with no known word (the `None` entries).
    pub empty_documents: usize,
}

impl BagOfWords {
    /// The documents that have at least one known word, as a [`Corpus`] carrying the vocabulary's
    /// words.
    ///
    /// # Errors
    /// [`TextError::NoKnownWords`] if no document has a known word (or the vocabulary is empty).
    pub fn into_corpus(self, vocab: &Vocabulary) -> Result<Corpus, TextError> {
        let docs: Vec<Document> = self.docs.into_iter().flatten().collect();
        if docs.is_empty() || vocab.is_empty() {
            return Err(TextError::NoKnownWords {
                vocab_size: vocab.len(),
            });
        }
        Ok(Corpus::new(docs, vocab.len())?.with_vocab(vocab.words().to_vec())?)
    }
}

/// Maps each document's tokens to word ids of `vocab` and counts them; unknown tokens are
/// dropped and counted.
///
/// # Example
/// ```
/// use vips_models::lda::Vocabulary;
/// use vips_models::lda::text::bag_of_words;
/// let vocab = Vocabulary::from_words(vec!["apple".into(), "river".into()])?;
/// let docs = vec![vec!["river".to_string(), "apple".into(), "river".into(), "moon".into()], vec!["moon".into()]];
/// let bow = bag_of_words(&docs, &vocab)?;
/// let first = bow.docs[0].as_ref().unwrap();
/// assert_eq!((first.words(), first.counts()), (&[0, 1][..], &[1, 2][..]));
/// assert!(bow.docs[1].is_none());
/// assert_eq!((bow.unknown_tokens, bow.empty_documents), (2, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`TextError::Corpus`] if a word's count in one document exceeds `u32::MAX`.
///
/// # Privacy
/// A per-record transform: each document's bag of words depends on that document and the
/// vocabulary only. With a privately selected vocabulary (released before, and accounted for),
/// the conversion is post-processing of that release plus a per-record map, so a fit on the
/// result composes with the selection (see [`crate::lda::vocabulary`]). The dropped-token counts
/// are not private.
pub fn bag_of_words<S: AsRef<str>>(
    docs: &[Vec<S>],
    vocab: &Vocabulary,
) -> Result<BagOfWords, TextError> {
    let mut out = Vec::with_capacity(docs.len());
    let mut unknown_tokens = 0u64;
    let mut empty_documents = 0usize;
    let mut counts: HashMap<u32, u32> = HashMap::new();
    for doc in docs {
        counts.clear();
        for token in doc {
            match vocab.id(token.as_ref()) {
                Some(id) => {
                    let c = counts.entry(id).or_insert(0);
                    *c = c.checked_add(1).ok_or_else(|| {
                        crate::lda::corpus::CorpusError::InvalidDocument(
                            "a word's count overflows u32".into(),
                        )
                    })?;
                }
                None => unknown_tokens += 1,
            }
        }
        if counts.is_empty() {
            empty_documents += 1;
            out.push(None);
        } else {
            out.push(Some(Document::new(counts.drain().collect())?));
        }
    }
    Ok(BagOfWords {
        docs: out,
        vocab_size: vocab.len(),
        unknown_tokens,
        empty_documents,
    })
}
