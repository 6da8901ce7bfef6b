use serde::{Deserialize, Serialize};

use super::CorpusError;

/// One document as a bag of words: distinct word ids in increasing order, each with a positive count.
///
/// # Example
/// ```
/// use vips_models::lda::corpus::Document;
/// let doc = Document::new(vec![(3, 2), (0, 1)])?;
/// assert_eq!(doc.words(), &[0, 3]);
/// assert_eq!(doc.counts(), &[1, 2]);
/// assert_eq!(doc.len(), 3);
/// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    words: Vec<u32>,
    counts: Vec<u32>,
    total: u64,
}

impl Document {
    /// A document from `(word id, count)` pairs in any order; repeated ids are merged.
    ///
    /// # Errors
    /// [`CorpusError::InvalidDocument`] for a zero count or no words at all.
    pub fn new(mut pairs: Vec<(u32, u32)>) -> Result<Self, CorpusError> {
        if pairs.iter().any(|&(_, c)| c == 0) {
            return Err(CorpusError::InvalidDocument("zero count".into()));
        }
        pairs.sort_unstable_by_key(|&(w, _)| w);
        let mut words: Vec<u32> = Vec::with_capacity(pairs.len());
        let mut counts: Vec<u32> = Vec::with_capacity(pairs.len());
        for (w, c) in pairs {
            if words.last() == Some(&w) {
                let last = counts.last_mut().expect("parallel vectors");
                *last = last
                    .checked_add(c)
                    .ok_or_else(|| CorpusError::InvalidDocument("count overflows u32".into()))?;
            } else {
                words.push(w);
                counts.push(c);
            }
        }
        Self::from_sorted(words, counts)
    }

    /// A document from sorted distinct word ids and their positive counts.
    ///
    /// # Errors
    /// [`CorpusError::InvalidDocument`] if the lengths differ, ids are not strictly increasing, a
    /// count is zero, or the document is empty.
    pub fn from_sorted(words: Vec<u32>, counts: Vec<u32>) -> Result<Self, CorpusError> {
        if words.len() != counts.len() {
            return Err(CorpusError::InvalidDocument(
                "words and counts differ in length".into(),
            ));
        }
        if words.is_empty() {
            return Err(CorpusError::InvalidDocument("no words".into()));
        }
        if words.windows(2).any(|w| w[0] >= w[1]) {
            return Err(CorpusError::InvalidDocument(
                "word ids must be strictly increasing".into(),
            ));
        }
        if counts.contains(&0) {
            return Err(CorpusError::InvalidDocument("zero count".into()));
        }
        let total = counts.iter().map(|&c| u64::from(c)).sum();
        Ok(Self {
            words,
            counts,
            total,
        })
    }

    /// Distinct word ids, increasing.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Counts, parallel to [`Document::words`].
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// Number of distinct words.
    pub fn num_distinct(&self) -> usize {
        self.words.len()
    }

    /// Number of tokens (sum of counts).
    pub fn len(&self) -> u64 {
        self.total
    }

    /// Always `false`: a document has at least one word.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The largest word id (documents are never empty).
    pub fn max_word(&self) -> u32 {
        *self.words.last().expect("documents are never empty")
    }

    /// Splits the tokens in two for document completion: tokens are enumerated in word-id order
    /// (each word repeated `count` times); even positions go to the first part, odd to the second.
    ///
    /// Returns `None` if either part would be empty (a one-token document).
    pub fn split_alternate(&self) -> Option<(Document, Document)> {
        let mut first = Vec::new();
        let mut second = Vec::new();
        let mut position: u64 = 0;
        for (&w, &c) in self.words.iter().zip(&self.counts) {
            let c = u64::from(c);
            // positions position..position+c; evens go to `first`.
            let evens = (position + c).div_ceil(2) - position.div_ceil(2);
            let odds = c - evens;
            if evens > 0 {
                first.push((w, evens as u32));
            }
            if odds > 0 {
                second.push((w, odds as u32));
            }
            position += c;
        }
        let a = Document::new(first).ok()?;
        let b = Document::new(second).ok()?;
        Some((a, b))
    }
}

/// A corpus: documents over a vocabulary of `vocab_size` words, with optional word strings.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Corpus {
    docs: Vec<Document>,
    vocab_size: usize,
    vocab: Option<Vec<String>>,
}

impl Corpus {
    /// A corpus of `docs` over `vocab_size` words.
    ///
    /// # Errors
    /// [`CorpusError::InvalidDocument`] if a document uses a word id `>= vocab_size`;
    /// [`CorpusError::InvalidParameter`] for `vocab_size == 0`.
    pub fn new(docs: Vec<Document>, vocab_size: usize) -> Result<Self, CorpusError> {
        if vocab_size == 0 {
            return Err(CorpusError::InvalidParameter {
                name: "vocab_size",
                value: 0.0,
                reason: "must be positive",
            });
        }
        if let Some((i, d)) = docs
            .iter()
            .enumerate()
            .find(|(_, d)| d.max_word() as usize >= vocab_size)
        {
            return Err(CorpusError::InvalidDocument(format!(
                "document {i} uses word id {} outside 0..{vocab_size}",
                d.max_word()
            )));
        }
        Ok(Self {
            docs,
            vocab_size,
            vocab: None,
        })
    }

    /// Attaches word strings (one per word id).
    ///
    /// # Errors
    /// [`CorpusError::Mismatch`] if there are not exactly `vocab_size` words.
    pub fn with_vocab(mut self, vocab: Vec<String>) -> Result<Self, CorpusError> {
        if vocab.len() != self.vocab_size {
            return Err(CorpusError::Mismatch(format!(
                "vocabulary has {} words, corpus declares {}",
                vocab.len(),
                self.vocab_size
            )));
        }
        self.vocab = Some(vocab);
        Ok(self)
    }

    /// The documents.
    pub fn docs(&self) -> &[Document] {
        &self.docs
    }

    /// Consumes the corpus, returning its documents.
    pub fn into_docs(self) -> Vec<Document> {
        self.docs
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// `true` if there are no documents.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Vocabulary size `V`.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// Word strings, if known.
    pub fn vocab(&self) -> Option<&[String]> {
        self.vocab.as_deref()
    }

    /// Total number of tokens.
    pub fn num_tokens(&self) -> u64 {
        self.docs.iter().map(Document::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_alternates_tokens() {
        let d = Document::new(vec![(0, 3), (5, 1), (7, 2)]).unwrap();
        // tokens: 0 0 0 5 7 7 -> even: 0 0 7 ; odd: 0 5 7
        let (a, b) = d.split_alternate().unwrap();
        assert_eq!(a.words(), &[0, 7]);
        assert_eq!(a.counts(), &[2, 1]);
        assert_eq!(b.words(), &[0, 5, 7]);
        assert_eq!(b.counts(), &[1, 1, 1]);
        assert!(
            Document::new(vec![(1, 1)])
                .unwrap()
                .split_alternate()
                .is_none()
        );
    }

    #[test]
    fn bad_documents_are_refused() {
        assert!(Document::new(vec![]).is_err());
        assert!(Document::new(vec![(1, 0)]).is_err());
        assert!(Document::from_sorted(vec![2, 1], vec![1, 1]).is_err());
        let d = Document::new(vec![(9, 1)]).unwrap();
        assert!(Corpus::new(vec![d], 5).is_err());
    }
}
