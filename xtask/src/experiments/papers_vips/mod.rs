//! The papers' BLR and SBN figures (issue 22), redrawn by calling `vips_models` in-process:
//! 003 Fig. 5 (= 000 Fig. 5), 000 Fig. 6 (BLR), 003 Fig. 7, 000 Fig. 8 and Fig. 9 (SBN).
//! 000 Table 2 is LDA's (see `papers_lda`).
//!
//! Quick mode: synthetic stand-ins; full mode: breast_cancer and mnist10k when present.

mod blr_000;
mod blr_003;
pub(crate) mod blr_setting;
mod erm;
mod sbn_000;
pub(crate) mod sbn_000_seeds;
mod sbn_003;
pub(crate) mod sbn_003_seeds;
pub(crate) mod sbn_setting;
mod weight_image;

use std::fmt::Write as _;
use std::time::Instant;

use dp_accountant::{AccountantConfig, AccountantKind, PrivacyEvent, epsilon_for_event};

use crate::context::Context;
use crate::report::{Part, Section};

/// Epsilon at `delta` of `steps` Poisson-subsampled Gaussian releases (noise multiplier
/// `sigma`, rate `q`) by the accountant `kind`.
pub fn epsilon_at(
    kind: AccountantKind,
    sigma: f64,
    q: f64,
    steps: u64,
    delta: f64,
) -> anyhow::Result<f64> {
    let event = PrivacyEvent::poisson_subsampled_gaussian(sigma, q)?.self_composed(steps)?;
    let config = AccountantConfig::default().with_accountant(kind);
    Ok(epsilon_for_event(&event, delta, &config)?.epsilon)
}

/// Runs every BLR and SBN figure of the papers.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let blr = blr_setting::BlrSetting::for_context(ctx)?;
    let sbn = sbn_setting::SbnSetting::for_context(ctx)?;
    let synthetic_sbn = sbn_setting::SbnSetting::synthetic();
    let timed = |name: &str, f: &dyn Fn() -> anyhow::Result<Part>| -> anyhow::Result<Part> {
        let start = Instant::now();
        let mut part = f()?;
        let _ = writeln!(
            part.body,
            "\n({name}: {:.1} s wall-clock.)",
            start.elapsed().as_secs_f64()
        );
        Ok(part)
    };
    let parts = [
        timed("003 Fig. 5", &|| blr_003::run(ctx, &blr))?,
        timed("000 Fig. 6", &|| blr_000::run(ctx, &blr))?,
        timed("003 Fig. 7 and 000 Fig. 9", &|| sbn_003::run(ctx, &sbn))?,
        timed("000 Fig. 8", &|| {
            sbn_000::run(ctx, &synthetic_sbn, ctx.quick)
        })?,
    ];
    let mut section = Section::new(
        "papers_vips",
        "Papers' figures: BLR and SBN (003 Fig. 5, 7; 000 Fig. 5, 6, 8, 9)",
        if ctx.quick {
            "cargo xtask bench --quick --only papers_vips --no-criterion"
        } else {
            "cargo xtask bench --only papers_vips --no-criterion"
        },
    );
    section.seed = format!(
        "BLR: folds, synthetic rows and noise seed {} (noise seed + fold per fit; pERM's noise \
         one seeded ChaCha20 stream); SBN: seeds 1..n for initial parameters, batches and noise. \
         All seeded on purpose so the figures are reproducible",
        blr_setting::SEED
    );
    section.data = format!(
        "BLR: {}. SBN (003 Fig. 7, 000 Fig. 9): {}. SBN (000 Fig. 8): {}",
        blr.description, sbn.description, synthetic_sbn.description
    );
    section.body = "Every VIPS fit is `vips_models::blr::fit` or `vips_models::engine::fit` with \
        the accountant of the figure (`AccountantKind::{Moments, Advanced, Zcdp, Linear}`); \
        the ERM baselines are in `xtask/src/experiments/papers_vips/erm.rs` (Newton for the \
        non-private fit, objective perturbation for pERM, with its privacy statement). The \
        papers print almost no numbers for these figures (only 003 Fig. 7's epsilons), so the \
        comparison is of orderings, and of those epsilons.\n\n"
        .to_string();
    section.absorb(parts);
    Ok(section)
}
