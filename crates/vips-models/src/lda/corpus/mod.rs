//! LDA's bag-of-words corpora: the sparse document type, the loader of the UCI bag-of-words
//! format ([`load_uci_bow`], [`load_uci_dir`]), a synthetic corpus drawn from the LDA generative
//! model, fixed-length resampling (003 Sec. 4.2), and the preparation of a corpus for a fit with
//! its privacy-relevant defaults ([`Preparation`]).

mod bag_of_words;
mod document;
mod error;
mod prepare;
mod resample;
mod synthetic;

pub use bag_of_words::{UciSplits, load_uci_bow, load_uci_dir, load_vocab, stream_uci_bow};
pub use document::{Corpus, Document};
pub use error::CorpusError;
pub use prepare::{DEFAULT_CLIP_SCALE, PRIVATE_DOC_LENGTH, Preparation, Prepared};
pub use resample::{ResamplingKey, resample_document, resample_fixed_length};
pub use synthetic::{SyntheticConfig, SyntheticConfigBuilder, SyntheticCorpus};
