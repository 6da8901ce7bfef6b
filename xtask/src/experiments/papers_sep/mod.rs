//! The papers' DP-SEP figures (issue 22), redrawn by calling `dp_sep` in-process: 002 Fig. 1
//! (mixture-of-Gaussians posteriors of EP, SEP and DP-SEP at epsilon 1, 5, 50).

mod fig1;

use crate::context::Context;
use crate::report::Section;

/// Runs every DP-SEP figure of the papers.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let part = fig1::run(ctx)?;
    let mut section = Section::new(
        "papers_sep",
        "Papers' figures: DP-SEP (002 Fig. 1)",
        if ctx.quick {
            "cargo xtask bench --quick --only papers_sep --no-criterion"
        } else {
            "cargo xtask bench --only papers_sep --no-criterion"
        },
    );
    section.seed = part.seed;
    section.data = part.data;
    section.body = part.body;
    section.plots = part.plots;
    section.figures = part.figures;
    Ok(section)
}
