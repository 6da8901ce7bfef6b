//! Private latent Dirichlet allocation (003 Sec. 4, Algorithm 3; Hoffman, Blei & Bach 2010).
//!
//! - [`LdaConfig`]: validated settings (`K`, `alpha`, `eta`, fixed length `N`, clip scale `a`).
//! - [`Lda`]: the [`crate::engine::VipsModel`] implementation (E-step per document, one `V x K`
//!   statistic block clipped to `a N`, M-step `lambda = eta + D max(s~, 0)`).
//! - [`Topics`]: `q(beta) = Dir(lambda)`; [`ExpectedTopics`]: `E[log beta]`.
//! - [`evaluate`]: held-out perplexity bound and document completion.
//! - [`corpus`]: bag-of-words corpora (the UCI bag-of-words loader, synthetic LDA corpora,
//!   fixed-length resampling).
//! - [`text`]: raw text (one document per line, or per `.txt` file): tokenizer, reader,
//!   bag-of-words conversion (issue 20).
//! - [`vocabulary`]: [`Vocabulary`], public from a file or selected privately (Gaussian
//!   partition selection, charged to a ledger).
//! - [`SavedLda`]: a fitted model saved and loaded (versioned JSON) and inference of topic
//!   proportions for new documents.

mod aligned;
mod config;
pub mod corpus;
mod error;
mod estep;
mod evaluate;
mod model;
mod recovery;
mod saved;
mod special_fns;
pub mod text;
mod topics;
pub mod vocabulary;

pub use config::{LdaConfig, LdaConfigBuilder};
pub use error::LdaError;
pub use estep::{DocScratch, document_statistic, infer_document};
pub use evaluate::{HeldOut, completion_perplexity, evaluate, perplexity_bound};
pub use model::{Lda, LdaBlocks};
pub use recovery::{TopicMatch, match_topics};
pub use saved::{
    Provenance, SAVED_LDA_FORMAT, SAVED_LDA_FORMAT_VERSION, SavedLda, SavedLdaError, TextInference,
};
pub use topics::{ExpectedTopics, Topics};
pub use vocabulary::{Vocabulary, VocabularyError};
