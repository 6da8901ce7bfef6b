//! Private latent Dirichlet allocation (003 Sec. 4, Algorithm 3; Hoffman, Blei & Bach 2010).
//!
//! - [`LdaConfig`]: validated settings (`K`, `alpha`, `eta`, fixed length `N`, clip scale `a`).
//! - [`Lda`]: the [`crate::engine::VipsModel`] implementation (E-step per document, one `V x K`
//!   statistic block clipped to `a N`, M-step `lambda = eta + D max(s~, 0)`).
//! - [`Topics`]: `q(beta) = Dir(lambda)`; [`ExpectedTopics`]: `E[log beta]`.
//! - [`evaluate`]: held-out perplexity bound and document completion.
//! - [`corpus`]: bag-of-words corpora (the UCI bag-of-words loader, synthetic LDA corpora,
//!   fixed-length resampling).

mod config;
pub mod corpus;
mod error;
mod estep;
mod evaluate;
mod model;
mod recovery;
mod special_fns;
mod topics;

pub use config::{LdaConfig, LdaConfigBuilder};
pub use error::LdaError;
pub use estep::{DocScratch, document_statistic, infer_document};
pub use evaluate::{HeldOut, completion_perplexity, evaluate, perplexity_bound};
pub use model::{Lda, LdaBlocks};
pub use recovery::{TopicMatch, match_topics};
pub use topics::{ExpectedTopics, Topics};
