//! Everything the command line can fail with, and the exit code of each.

use thiserror::Error;
use vips_models::engine::EngineError;

/// An error of the `dp-bayes` command line. Each names the flag, file or line at fault.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CliError {
    /// A flag that is wrong, or has no effect in the given combination.
    #[error("{flag}: {reason}")]
    Usage {
        /// The flag.
        flag: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// A declared dimension that is not the saved model's.
    #[error("{flag} {given}: the model {model} has dimension {expected}")]
    Dimension {
        /// The flag declaring the dimension.
        flag: &'static str,
        /// The dimension given.
        given: usize,
        /// The model file.
        model: String,
        /// The model's dimension.
        expected: usize,
    },
    /// A file that cannot be used (the reason names the line).
    #[error("{path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A file that cannot be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A model file that cannot be used (newer format, corrupt, wrong kind).
    #[error(transparent)]
    ModelFile(#[from] vips_models::linreg::ModelFileError),
    /// Loader errors of the UCI split folders and public ranges files.
    #[error(transparent)]
    Data(#[from] dp_sep::SepError),
    /// Linear regression errors.
    #[error(transparent)]
    Linreg(#[from] vips_models::linreg::LinregError),
    /// Logistic regression errors (they name the file and line).
    #[error(transparent)]
    Blr(#[from] vips_models::blr::BlrError),
    /// LDA settings and model errors.
    #[error(transparent)]
    Lda(#[from] vips_models::lda::LdaError),
    /// Raw-text reading errors (they name the file and line).
    #[error(transparent)]
    Text(#[from] vips_models::lda::text::TextError),
    /// Vocabulary loading and selection errors (they name the file and line).
    #[error(transparent)]
    Vocabulary(#[from] vips_models::lda::VocabularyError),
    /// Saved LDA model errors (newer, corrupt, foreign files).
    #[error(transparent)]
    SavedLda(#[from] vips_models::lda::SavedLdaError),
    /// Bag-of-words corpus errors (they name the file and line).
    #[error(transparent)]
    Corpus(#[from] vips_models::lda::corpus::CorpusError),
    /// Saved PBP model errors (newer, corrupt, foreign files; rows of the wrong width).
    #[error(transparent)]
    SavedPbp(#[from] dp_sep::pbp::saved::SavedPbpError),
    /// Sigmoid belief network errors (settings, IDX files naming the file, images).
    #[error(transparent)]
    Sbn(#[from] vips_models::sbn::SbnError),
    /// Engine errors (settings, calibration, the wall).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Accountant errors (a ledger that cannot be replayed or extended; parameters named by
    /// their flags, as `dp-accountant` reports them).
    #[error("{}", dp_accountant::cli::describe_error(.0))]
    Accountant(#[from] dp_accountant::AccountantError),
    /// A value of the result is not finite.
    #[error("the result's `{0}` is not finite; nothing written")]
    NonFinite(String),
    /// An output file could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The result could not be written to stdout.
    #[error("cannot write the result to stdout: {0}")]
    Output(std::io::Error),
    /// Could not install the Ctrl-C handler.
    #[error("set-up: {0}")]
    CtrlC(#[from] ctrlc::Error),
}

impl CliError {
    /// 130 for Ctrl-C, 1 for output errors, 2 for usage and input errors.
    pub fn exit_code(&self) -> u8 {
        use vips_models::blr::BlrError;
        use vips_models::linreg::LinregError;
        match self {
            Self::Engine(EngineError::Interrupted { .. })
            | Self::Blr(BlrError::Engine(EngineError::Interrupted { .. }))
            | Self::Sbn(vips_models::sbn::SbnError::Engine(EngineError::Interrupted { .. }))
            | Self::Linreg(LinregError::Engine(EngineError::Interrupted { .. }))
            | Self::Data(dp_sep::SepError::Interrupted { .. }) => 130,
            Self::NonFinite(_) | Self::Write { .. } | Self::Output(_) | Self::CtrlC(_) => 1,
            _ => 2,
        }
    }
}

/// A flag value refused by its clap value parser (clap names the flag).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Not a number.
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// Not a whole number `>= 1`.
    #[error("`{0}` is not a whole number >= 1")]
    NotACount(String),
    /// Not a whole number in `1..=255`.
    #[error("`{0}` is not a whole number in 1..=255")]
    NotAThreshold(String),
    /// A count or threshold of 0.
    #[error("must be >= 1{0}")]
    Zero(&'static str),
    /// A number outside its domain.
    #[error("must be {domain}, got {value}")]
    OutOfRange {
        /// The domain, e.g. `finite and > 0`.
        domain: &'static str,
        /// The value given.
        value: f64,
    },
    /// A range that is not `LO:HI` with finite `LO < HI`.
    #[error("{0}")]
    Range(&'static str),
    /// An accountant name the accountant does not know.
    #[error(transparent)]
    Accountant(#[from] dp_accountant::AccountantError),
}

/// A flag refused because of its value or how it combines with others.
pub fn usage(flag: &'static str, reason: impl Into<String>) -> CliError {
    CliError::Usage {
        flag,
        reason: reason.into(),
    }
}
