//! The LDA flags `fit lda` and `fit lda-store` share (one flattened clap struct) and their
//! checks: topics, batches, step size, passes, and the corpus preparation (document length,
//! clipping, priors, resampling).

use vips_models::engine::{CancelToken, Privacy, StepSize, Stop, SviConfig};
use vips_models::lda::corpus::Preparation;

use super::{Common, count, positive};
use crate::cli::error::{CliError, usage};

/// The shared LDA flags (flattened into `fit lda` and `fit lda-store`; both commands' structs
/// dereference to it, so `args.topics` reads the same in either).
#[derive(clap::Args, Debug)]
pub struct LdaArgs {
    /// Number of topics K.
    #[arg(long, default_value_t = 10, value_parser = count)]
    pub topics: usize,
    /// Expected batch size S (Poisson rate q = S / N; the exact size with --sampling fixed).
    #[arg(long, default_value_t = 256.0, value_parser = positive)]
    pub batch_size: f64,
    #[command(flatten)]
    pub batching: super::SamplingArg,
    /// Step-size delay tau0.
    #[arg(long, default_value_t = 1024.0)]
    pub tau0: f64,
    /// Step-size forgetting rate kappa in (0.5, 1].
    #[arg(long, default_value_t = 0.7)]
    pub kappa: f64,
    /// Expected passes over the population (the declared one for a private fit).
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    pub passes: f64,
    /// Fixed document length (default 500 for private fits, none otherwise; 0 = none).
    #[arg(long)]
    pub doc_length: Option<usize>,
    /// Clipping scale a (bound a N; needs a fixed document length). Default 0.1.
    #[arg(long, value_parser = positive)]
    pub clip_scale: Option<f64>,
    /// Dirichlet parameter of theta (default 1/K).
    #[arg(long, value_parser = positive)]
    pub alpha: Option<f64>,
    /// Dirichlet parameter of beta (default 1/K).
    #[arg(long, value_parser = positive)]
    pub eta: Option<f64>,
    /// Seed of the initial topics (public randomness).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Public seed of the fixed-length resampling (default: a secret key from OS entropy).
    #[arg(long)]
    pub resample_seed: Option<u64>,
}

impl LdaArgs {
    /// Checks the step size (`--kappa` in (0.5, 1], `--tau0` finite and >= 0) and returns the
    /// corpus preparation these flags give, checked for a `private` fit or not.
    ///
    /// # Errors
    /// Usage errors naming `--kappa`, `--tau0`, or a preparation flag with no effect
    /// (`--clip-scale` without a fixed length, `--resample-seed` without resampling).
    pub fn preparation(&self, private: bool) -> Result<Preparation, CliError> {
        if !(self.kappa > 0.5 && self.kappa <= 1.0) {
            return Err(usage(
                "--kappa",
                format!("must be in (0.5, 1], got {}", self.kappa),
            ));
        }
        if !(self.tau0 >= 0.0 && self.tau0.is_finite()) {
            return Err(usage(
                "--tau0",
                format!("must be finite and >= 0, got {}", self.tau0),
            ));
        }
        let preparation = Preparation {
            doc_length: self.doc_length,
            clip_scale: self.clip_scale,
            alpha: self.alpha,
            eta: self.eta,
            resample_seed: self.resample_seed,
        };
        preparation
            .check(private)
            .map_err(|e| super::lda::no_effect(e, "(--doc-length N)"))?;
        Ok(preparation)
    }

    /// The SVI settings of a fit with these flags: batches (`--batch-size` against `cap`, the
    /// declared population or else the record count), the Robbins-Monro step, `--passes`, the
    /// privacy, accountant and noise seed of `common`, the initial topics' `--seed`, and the
    /// declared `population`; the progress bar on and `cancel` (Ctrl-C) wired in.
    ///
    /// # Errors
    /// A usage error naming `--batch-size` (see [`super::SamplingArg::apply`]) or `--tau0` /
    /// `--kappa`, or the engine's configuration error.
    pub fn svi(
        &self,
        common: &Common,
        private: bool,
        privacy: Privacy,
        population: Option<usize>,
        cap: f64,
        cancel: CancelToken,
    ) -> Result<SviConfig, CliError> {
        Ok(self
            .batching
            .apply(
                SviConfig::builder(),
                private,
                self.batch_size,
                cap,
                "--batch-size",
            )?
            .step(StepSize::robbins_monro(self.tau0, self.kappa)?)
            .stop(Stop::Passes {
                passes: self.passes,
            })
            .privacy(privacy)
            .accountant(common.accountant.unwrap_or_default())
            .noise_seed(common.noise_seed)
            .init_seed(self.seed)
            .progress_bar(true)
            .cancel(cancel)
            .population(population)
            .build()?)
    }
}
