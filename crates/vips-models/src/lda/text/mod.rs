//! Raw text for LDA (issue 20): read one document per line (or one per `.txt` file), tokenise,
//! and map tokens to a vocabulary ([`crate::lda::Vocabulary`], public or privately selected by
//! [`crate::lda::vocabulary::select_vocabulary`]).
//!
//! - [`Tokenizer`]: Unicode word segmentation (UAX #29), lower-case, runs of at least three
//!   letters, the committed English stop-word list [`ENGLISH_STOP_WORDS`].
//! - [`read_text`]: reading with size caps ([`TextLimits`]) and typed errors naming file and line.
//! - [`bag_of_words`]: tokens to the crate's [`crate::lda::corpus::Corpus`], unknown tokens
//!   dropped and counted (a non-private diagnostic).
//!
//! # Example
//! ```
//! use vips_models::lda::Vocabulary;
//! use vips_models::lda::text::{Tokenizer, bag_of_words};
//! let t = Tokenizer::english();
//! let docs: Vec<Vec<String>> = ["Rivers flow to the sea.", "The sea is deep; rivers are not."]
//!     .iter().map(|s| t.tokenize(s)).collect();
//! let vocab = Vocabulary::from_words(vec!["deep".into(), "rivers".into(), "sea".into()])?;
//! let corpus = bag_of_words(&docs, &vocab)?.into_corpus(&vocab)?;
//! assert_eq!((corpus.len(), corpus.num_tokens()), (2, 5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bow;
mod error;
mod read;
mod tokenize;

pub use bow::{BagOfWords, bag_of_words};
pub use error::TextError;
pub use read::{TextCorpus, TextLimits, read_text, stream_text};
pub use tokenize::{DEFAULT_MIN_CHARS, ENGLISH_STOP_WORDS, Tokenizer, parse_stop_words};
