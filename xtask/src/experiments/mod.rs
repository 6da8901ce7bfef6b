//! The experiments behind the report: each reproduces one figure or table of the papers.

pub mod accountant;
pub mod blr;
mod child;
pub mod dpsep;
pub mod dpsep_defaults;
pub mod lda;
pub mod lda_threads;
pub mod papers_lda;
pub mod papers_sep;
pub mod papers_vips;
pub mod pld_savings;
pub mod regression;
pub mod sampler;
pub mod sbn;
pub mod scale_blr;
pub mod scale_store;

use crate::context::Context;
use crate::report::Section;

/// One experiment of `cargo xtask bench`.
pub struct Experiment {
    /// Name used by `--only` and as the report anchor.
    pub name: &'static str,
    /// What it reproduces.
    pub about: &'static str,
    /// Runs it.
    pub run: fn(&Context) -> anyhow::Result<Section>,
}

/// Experiments left out of a run without `--only` (quick and full): they take hours.
pub const ON_REQUEST: &[&str] = &["papers_vips_fig7", "papers_vips_fig8"];

/// Every experiment, in report order.
pub fn all() -> Vec<Experiment> {
    vec![
        Experiment {
            name: "accountant",
            about: "epsilon against iterations: RDP, moments accountant, advanced and linear composition",
            run: accountant::run,
        },
        Experiment {
            name: "pg_throughput",
            about: "Polya-Gamma sampler draws per second over shapes and tilts",
            run: sampler::run,
        },
        Experiment {
            name: "lda",
            about: "private LDA: held-out perplexity against epsilon",
            run: lda::run,
        },
        Experiment {
            name: "lda_threads",
            about: "issue 21: LDA thread scaling, 1 against 2 threads, and the Amdahl curve",
            run: lda_threads::run,
        },
        Experiment {
            name: "scale_blr",
            about: "issue 21: one private BLR iteration at d = 4,146 (wall, peak memory) and numpy's eigh",
            run: scale_blr::run,
        },
        Experiment {
            name: "scale_store",
            about: "issue 21: LDA from a record store (10 M documents in full mode) against in memory",
            run: scale_store::run,
        },
        Experiment {
            name: "papers_lda",
            about: "issue 22: the papers' LDA figures (003 Fig. 2, 3, Table 1; 000 Fig. 2, 3, Table 2; 004; 001)",
            run: papers_lda::run,
        },
        Experiment {
            name: "papers_vips",
            about: "issue 22: the papers' BLR and SBN figures (003 Fig. 5, 7; 000 Fig. 5, 6, 8, 9)",
            run: papers_vips::run,
        },
        Experiment {
            name: "papers_vips_fig7",
            about: "issue 22: 003 Fig. 7 (SBN) at every S over 10 seeds; hours on mnist10k, only with --only",
            run: papers_vips::sbn_003_seeds::run,
        },
        Experiment {
            name: "papers_vips_fig8",
            about: "issue 22: 000 Fig. 8 (SBN) on mnist10k at the paper's grid over 10 seeds; hours, only with --only",
            run: papers_vips::sbn_000_seeds::run,
        },
        Experiment {
            name: "papers_sep",
            about: "issue 22: the papers' DP-SEP figure (002 Fig. 1, mixture of Gaussians)",
            run: papers_sep::run,
        },
        Experiment {
            name: "pld_savings",
            about: "issue 22: PLD against RDP through LDA, BLR and SBN (noise saved, utility)",
            run: pld_savings::run,
        },
        Experiment {
            name: "blr",
            about: "private Bayesian logistic regression: test AUC against epsilon",
            run: blr::run,
        },
        Experiment {
            name: "sbn",
            about: "private sigmoid belief network: pixel accuracy against batch size at fixed noise",
            run: sbn::run,
        },
        Experiment {
            name: "dpsep",
            about: "DP-SEP: PBP test RMSE against epsilon; mixture-of-Gaussians table",
            run: dpsep::run,
        },
        Experiment {
            name: "regression",
            about: "issue 19: nine UCI sets, eight methods, RMSE and log-likelihood against epsilon",
            run: regression::run,
        },
        Experiment {
            name: "dpsep_defaults",
            about: "DP-SEP: the private defaults chosen on synthetic data (batch size, damping, clip)",
            run: dpsep_defaults::run,
        },
    ]
}
