use thiserror::Error;

/// Errors of the VIPS engine. The wall's and the accountant's errors keep their variants
/// (`EngineError::Wall(CoreError::BudgetExhausted { .. })` is matchable).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A parameter is out of range.
    #[error("invalid {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// Why it is refused.
        reason: &'static str,
    },
    /// No records, or a model that declares no statistic.
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// A model wrote a statistic that does not fit its declared blocks, or a non-finite value.
    #[error("model `{model}` wrote an inconsistent statistic: {reason}")]
    BadStatistic {
        /// Model name.
        model: String,
        /// What was wrong.
        reason: String,
    },
    /// Records rejected before any release (a wrong dimension, a value out of range).
    #[error("model `{model}`: records rejected before any release: {reason}")]
    InvalidRecords {
        /// Model name.
        model: String,
        /// What was wrong.
        reason: String,
    },
    /// A private run without a declared public population size.
    #[error(
        "a private run needs a public population size N (used in q = S/N and in the M-step): \
         declare it with SviConfig::population (examples: --population N); the number of records \
         is private and is not used"
    )]
    PopulationNotDeclared,
    /// The privacy wall or a mechanism refused (the variant is kept, so e.g.
    /// `CoreError::BudgetExhausted` stays matchable from a model's fit).
    #[error("privacy wall: {0}")]
    Wall(#[from] dp_core::CoreError),
    /// A private run declared a block without a finite per-record bound.
    #[error(
        "block `{block}` of model `{model}` has no finite per-record bound; a private run needs \
         one (for LDA: a fixed document length)"
    )]
    UnboundedBlock {
        /// Model name.
        model: String,
        /// Block name.
        block: String,
    },
    /// The run would plan more iterations than [`crate::limits::MAX_ITERATIONS`] without an
    /// explicit override.
    #[error(
        "the run plans {iterations} iterations, more than the limit of {limit} \
         (limits::MAX_ITERATIONS): lower the passes or iterations (examples: --passes, \
         --iterations) or raise the batch size, or override explicitly with \
         SviConfigBuilder::allow_long_run (examples: --allow-long-run)"
    )]
    TooManyIterations {
        /// Iterations the settings imply.
        iterations: f64,
        /// The limit.
        limit: u64,
    },
    /// The run was cancelled (Ctrl-C in the examples) after `completed` iterations; no result.
    #[error("interrupted after {completed} iterations; no result")]
    Interrupted {
        /// Iterations completed.
        completed: u64,
    },
    /// A model could not form valid parameters (an initial state, an expectation, or an M-step
    /// target from a release). The reason is a fixed text.
    #[error("model `{model}`: {reason}")]
    Model {
        /// Model name.
        model: &'static str,
        /// What failed.
        reason: &'static str,
    },
    /// As [`EngineError::Model`], with the error of the computation that failed kept as the
    /// source.
    #[error("model `{model}`: {reason}: {source}")]
    ModelFailed {
        /// Model name.
        model: &'static str,
        /// What failed.
        reason: &'static str,
        /// The error of the computation.
        #[source]
        source: ModelFailure,
    },
    /// A private run's accountant cannot account the chosen sampling regime's event (found by
    /// asking it; none of today's accountants is refused since PLD covers the fixed-size,
    /// replace-one subsampled Gaussian). Never a silent fallback to another accountant or
    /// regime.
    #[error(
        "the {accountant} accountant cannot account {sampling} sampling (its event: {}); \
         choose another accountant (rdp covers both regimes; examples: --accountant rdp) or \
         Poisson sampling (examples: --sampling poisson)",
        match sampling {
            dp_core::Batching::Poisson { .. } => "the Poisson-subsampled Gaussian",
            _ => "the fixed-size subsampled Gaussian, replace-one",
        }
    )]
    SamplingUnsupported {
        /// The accountant chosen.
        accountant: dp_accountant::AccountantKind,
        /// The batching it cannot account.
        sampling: dp_core::Batching,
    },
    /// The accountant refused.
    #[error("accountant: {0}")]
    Accountant(#[from] dp_accountant::AccountantError),
}

impl EngineError {
    pub(crate) fn invalid(name: &'static str, value: f64, reason: &'static str) -> Self {
        Self::InvalidParameter {
            name,
            value,
            reason,
        }
    }
}

/// The error behind an [`EngineError::ModelFailed`].
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelFailure {
    /// An `expfam` computation refused its input (a Gaussian that is not valid).
    #[error(transparent)]
    ExpFam(#[from] expfam::ExpFamError),
    /// A linear-regression posterior could not be formed.
    #[error(transparent)]
    Linreg(Box<crate::linreg::LinregError>),
}
