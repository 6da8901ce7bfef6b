//! The rows of the table (methods), the data sets and each run's command-line flags.

use std::path::{Path, PathBuf};

use super::{DELTA, MINIBATCH, SEED, data};
use crate::context::Context;

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    MeanPredictor,
    Pbp,
    Ep,
    Vi,
    ClippedSep,
    DpSep,
    MinibatchDpSep,
    LinregPrivate,
    Linreg,
    Diffprivlib,
}

impl Method {
    pub(super) const ALL: [Method; 10] = [
        Method::MeanPredictor,
        Method::Pbp,
        Method::Ep,
        Method::Vi,
        Method::ClippedSep,
        Method::DpSep,
        Method::MinibatchDpSep,
        Method::LinregPrivate,
        Method::Linreg,
        Method::Diffprivlib,
    ];

    pub(super) fn key(self) -> &'static str {
        match self {
            Method::MeanPredictor => "mean_predictor",
            Method::Pbp => "pbp_sep",
            Method::Ep => "pbp_ep",
            Method::Vi => "vi",
            Method::ClippedSep => "clipped_sep",
            Method::DpSep => "dp_sep",
            Method::MinibatchDpSep => "minibatch_dp_sep",
            Method::LinregPrivate => "linreg_private",
            Method::Linreg => "linreg",
            Method::Diffprivlib => "diffprivlib",
        }
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            Method::MeanPredictor => "mean predictor",
            Method::Pbp => "PBP (SEP)",
            Method::Ep => "PBP (EP)",
            Method::Vi => "VI",
            Method::ClippedSep => "clipped SEP",
            Method::DpSep => "DP-SEP (002)",
            Method::MinibatchDpSep => "minibatch DP-SEP",
            Method::LinregPrivate => "linreg, private",
            Method::Linreg => "linreg",
            Method::Diffprivlib => "diffprivlib",
        }
    }

    pub(super) fn private(self) -> bool {
        matches!(
            self,
            Method::DpSep | Method::MinibatchDpSep | Method::LinregPrivate | Method::Diffprivlib
        )
    }

    /// (package, example) for the methods xtask runs as examples.
    pub(super) fn example(self) -> Option<(&'static str, &'static str)> {
        match self {
            Method::Pbp
            | Method::Ep
            | Method::ClippedSep
            | Method::DpSep
            | Method::MinibatchDpSep => Some(("dp-sep", "pbp")),
            Method::LinregPrivate | Method::Linreg => Some(("vips-models", "linreg")),
            // VI runs in xtask's process (`dp_sep::pbp::vi`, see `library`).
            Method::MeanPredictor | Method::Diffprivlib | Method::Vi => None,
        }
    }

    /// Whether the method needs declared public ranges (private runs, and linreg's map).
    pub(super) fn needs_ranges(self) -> bool {
        self.private() || self == Method::Linreg
    }
}

/// One data set as run.
pub(super) struct DataSet {
    pub name: String,
    pub label: String,
    /// The folder as passed to the examples (relative to the workspace root when under it).
    pub uci: PathBuf,
    /// The flags declaring public ranges, or `None` when there are none.
    pub ranges: Option<Vec<String>>,
    pub splits: usize,
    pub train_rows: Vec<usize>,
}

pub(super) fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map_or_else(|_| path.to_path_buf(), Path::to_path_buf)
}

pub(super) fn data_set(
    ctx: &Context,
    name: &str,
    label: &str,
    uci: PathBuf,
    splits: usize,
) -> anyhow::Result<DataSet> {
    let ranges_file = Path::new("crates/dp-sep/ranges").join(format!("{name}.json"));
    let ranges = committed(&ctx.root, &ranges_file)
        .then(|| vec!["--ranges".into(), ranges_file.display().to_string()]);
    let train_rows = (0..splits)
        .map(|s| data::train_rows(&uci, s))
        .collect::<anyhow::Result<_>>()?;
    Ok(DataSet {
        name: name.into(),
        label: label.into(),
        uci: relative(&ctx.root, &uci),
        ranges,
        splits,
        train_rows,
    })
}

/// The example's flags for `method` on `split` at `eps` with noise seed `seed` (the split
/// index for the table's cells; without `--json`).
pub(super) fn args(
    d: &DataSet,
    method: Method,
    split: usize,
    eps: Option<f64>,
    seed: u64,
) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "--uci".into(),
        d.uci.display().to_string(),
        "--split".into(),
        split.to_string(),
    ];
    a.extend(d.ranges.iter().flatten().cloned());
    if matches!(method.example(), Some((_, "pbp"))) {
        a.extend(["--seed".into(), SEED.to_string()]);
    }
    // Minibatch DP-SEP takes the example's recommended clip; 002's algorithm and clipped SEP
    // run at C = 1.
    if matches!(method, Method::ClippedSep | Method::DpSep) {
        a.extend(["--clip".into(), "1".into()]);
    }
    if method == Method::Ep {
        a.extend(["--method".into(), "ep".into()]);
    }
    if method == Method::DpSep && eps.is_some() {
        a.push("--one-record".into());
    }
    if let Some(e) = eps {
        a.extend([
            "--epsilon".into(),
            e.to_string(),
            "--delta".into(),
            DELTA.to_string(),
            "--noise-seed".into(),
            seed.to_string(),
            "--population".into(),
            d.train_rows[split].to_string(),
        ]);
    }
    // Spelled out so that cells run before PLD became linreg's default (RDP, same flags) are not
    // reused.
    if method == Method::LinregPrivate && eps.is_some() {
        a.extend(["--accountant".into(), "pld".into()]);
    }
    // Spelled out so that cells run before the released radius became the default (the box's
    // sqrt(1 + d/3), other flags the same) are not reused.
    if matches!(method, Method::LinregPrivate | Method::Linreg) {
        a.extend(["--radius".into(), "released".into()]);
    }
    if method == Method::MinibatchDpSep {
        a.extend(MINIBATCH.map(String::from));
        // Spelled out when the recommendation is innovation or whitened clipping, so that
        // cells run before either became the default (value or innovation clipping, other
        // flags the same) are not reused.
        if let Some(e) = eps {
            let rec = dp_sep::recommended::private_pbp_for(e, d.train_rows[split]);
            if rec.clipping != dp_sep::Clipping::Value {
                a.extend(["--clipping".into(), rec.clipping.name().into()]);
            }
            // Spelled out where the population band changed the recommended batch size (S = 128
            // from N = 20,000 below eps 2), so that cells run at the earlier S are not reused.
            if rec.batch_size != dp_sep::recommended::PRIVATE_PBP.batch_size {
                a.extend(["--batch-size".into(), rec.batch_size.to_string()]);
            }
        }
    }
    a
}

/// Whether `file` is committed and unchanged in the working tree: a ranges file still being
/// written (untracked or modified) is not used, so the cached command lines stay meaningful.
fn committed(root: &Path, file: &Path) -> bool {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .current_dir(root)
            .args(args)
            .arg(file)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    root.join(file).exists()
        && git(&["ls-files", "--error-unmatch", "--"])
        && git(&["diff", "--quiet", "HEAD", "--"])
}
