//! Bag-of-words corpora: the sparse document type, the UCI bag-of-words loader, a synthetic corpus
//! drawn from the LDA generative model, and fixed-length resampling (003 Sec. 4.2).

mod corpus;
mod error;
mod resample;
mod synthetic;
mod uci;

pub use corpus::{Corpus, Document};
pub use error::DataError;
pub use resample::{ResamplingKey, resample_document, resample_fixed_length};
pub use synthetic::{SyntheticConfig, SyntheticCorpus};
pub use uci::{UciSplits, load_uci_bow, load_uci_dir, load_vocab};
