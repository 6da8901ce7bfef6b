//! The UCI split folder and its public ranges, as `fit linreg` and `fit pbp` take them: the
//! shared flags ([`UciArgs`]) and the one way to resolve the declared ranges
//! ([`declared_ranges`]).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, PublicRanges};

use crate::cli::error::{CliError, usage};

/// The flags naming a UCI split folder, its split and its public ranges.
#[derive(clap::Args, Debug)]
pub struct UciArgs {
    /// UCI split folder (`uci/<name>` or `uci/<name>/data`).
    #[arg(long)]
    pub uci: PathBuf,
    /// Standard split (0-based): the model is fitted on its training rows and scored on its
    /// test rows.
    #[arg(long, default_value_t = 0)]
    pub split: usize,
    /// Public ranges file (JSON with `columns` and `ranges`, as crates/dp-sep/ranges/*.json).
    /// Default: the committed file of the folder's name, when there is one.
    #[arg(long, conflicts_with_all = ["feature_range", "target_range"])]
    pub ranges: Option<PathBuf>,
    /// One public range LO:HI for every feature (with --target-range); features are then
    /// named x1..xd and the target y.
    #[arg(long, requires = "target_range", value_parser = PublicRange::from_str, allow_hyphen_values = true)]
    pub feature_range: Option<PublicRange>,
    /// Public range LO:HI of the target (with --feature-range).
    #[arg(long, requires = "feature_range", value_parser = PublicRange::from_str, allow_hyphen_values = true)]
    pub target_range: Option<PublicRange>,
}

/// Declared public ranges with the column names they go with.
pub struct DeclaredRanges {
    pub ranges: PublicRanges,
    /// Feature names, in the order of the folder's feature columns.
    pub names: Vec<String>,
    pub target: String,
}

/// The default names of `d` features and the target (x1..xd, y).
pub fn default_names(d: usize) -> (Vec<String>, String) {
    ((1..=d).map(|j| format!("x{j}")).collect(), "y".to_string())
}

/// The committed ranges file of a UCI folder, if this build's source tree has one.
fn committed_ranges(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("crates/dp-sep/ranges")
        .join(format!("{name}.json"));
    p.exists().then_some(p)
}

/// The column names of a ranges file (already validated by dp-sep, which requires `columns`
/// for a header-less folder).
fn column_names(path: &Path) -> Result<Vec<String>, CliError> {
    #[derive(serde::Deserialize)]
    struct Columns {
        columns: Vec<String>,
    }
    let text = crate::cli::io::read_text(path, "--ranges")?;
    serde_json::from_str::<Columns>(&text)
        .map(|c| c.columns)
        .map_err(|e| CliError::File {
            path: path.display().to_string(),
            reason: format!("cannot read `columns`: {e}"),
        })
}

/// The declared public ranges of `data`: `--ranges FILE`, else `--feature-range` with
/// `--target-range`, else the committed ranges file of the folder's name; `None` when there
/// is none of these.
pub fn declared_ranges(
    data: &SplitFolder,
    args: &UciArgs,
) -> Result<Option<DeclaredRanges>, CliError> {
    let file = match (&args.ranges, args.feature_range) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(_)) => None,
        (None, None) => committed_ranges(data.name()),
    };
    match (&file, args.feature_range, args.target_range) {
        (Some(p), _, _) => {
            let ranges = data.public_ranges(p)?;
            let cols = column_names(p)?;
            let name = |i: usize| cols.get(i).cloned().unwrap_or_else(|| format!("column{i}"));
            let names = data.feature_columns().iter().map(|&i| name(i)).collect();
            Ok(Some(DeclaredRanges {
                ranges,
                names,
                target: name(data.target_column()),
            }))
        }
        (None, Some(feature), Some(target_range)) => {
            let d = data.all().dim();
            let (names, target) = default_names(d);
            Ok(Some(DeclaredRanges {
                ranges: PublicRanges::uniform(d, feature, target_range),
                names,
                target,
            }))
        }
        (None, Some(_), None) => Err(usage(
            "--feature-range",
            "give both --feature-range and --target-range",
        )),
        (None, None, _) => Ok(None),
    }
}
