//! Caller-declared public ranges for features and target (issue 16, `docs/dp-sep.md` Sec. 5).
//!
//! A private run must not compute its feature scaling from the private data: a training mean or
//! standard deviation depends on every record, so one changed record would change every other
//! record's transformed value and every release of the run. Instead the caller declares, per
//! feature and for the target, a public interval `[lower, upper]` (and optionally a public centre
//! and scale inside it); every record is clipped into that box and mapped by a fixed affine map
//! ([`super::Standardizer::from_public_ranges`]).
//!
//! Ranges come either from a **ranges file** (JSON, matched by column *name*) or from one interval
//! for all features plus one for the target ([`PublicRanges::uniform`], the example's
//! `--feature-range` / `--target-range` flags). A ranges file looks like
//!
//! ```json
//! {
//!   "dataset": "wine-quality-red",
//!   "provenance": "where the numbers come from (never the training data)",
//!   "columns": ["fixed acidity", "volatile acidity", "quality"],
//!   "ranges": {
//!     "fixed acidity": {"lower": 3.5, "upper": 16, "source": "..."},
//!     "volatile acidity": {"lower": 0, "upper": 1.2},
//!     "quality": {"lower": 0, "upper": 10, "centre": 5, "scale": 2}
//!   }
//! }
//! ```
//!
//! `columns` names the columns of a header-less data file (the UCI `data.txt`) in order; for
//! data with a header the names come from the header. Every feature and the target must have a
//! range, and every range must name a column of the data (a misspelt or extra name is an error
//! naming it: ranges are never applied by position). `centre` defaults to the midpoint and `scale` to the half
//! width, so the box maps onto `[-1, 1]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::SepError;

/// One declared public interval, with the public centre and scale of the affine map.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublicRange {
    /// Lower end (values below are clipped up to it).
    pub lower: f64,
    /// Upper end (values above are clipped down to it).
    pub upper: f64,
    /// Centre of the map `(v - centre) / scale`; default the midpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub centre: Option<f64>,
    /// Scale of the map; default the half width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
}

/// The text form of a declared range, `LO:HI` (as the `--feature-range` / `--target-range` flags
/// take it), with the default centre and scale.
///
/// # Example
/// ```
/// use dp_sep::data::PublicRange;
/// let r: PublicRange = "-2:2.5".parse()?;
/// assert_eq!((r.lower, r.upper), (-2.0, 2.5));
/// assert!("2:1".parse::<PublicRange>().is_err());
/// assert!("1..2".parse::<PublicRange>().is_err());
/// # Ok::<(), dp_sep::SepError>(())
/// ```
///
/// # Errors
/// [`SepError::MalformedRange`] without a `:`, with an end that is not a number, or unless both
/// ends are finite and `LO < HI`.
impl std::str::FromStr for PublicRange {
    type Err = SepError;

    fn from_str(s: &str) -> Result<Self, SepError> {
        let bad = |reason| SepError::MalformedRange { reason };
        let (lo, hi) = s.split_once(':').ok_or(bad("expected LO:HI"))?;
        let lo: f64 = lo.trim().parse().map_err(|_| bad("LO is not a number"))?;
        let hi: f64 = hi.trim().parse().map_err(|_| bad("HI is not a number"))?;
        Self::new(lo, hi).map_err(|_| bad("needs finite LO < HI"))
    }
}

impl PublicRange {
    /// `[lower, upper]` with the default centre and scale.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] unless both ends are finite and `lower < upper`.
    pub fn new(lower: f64, upper: f64) -> Result<Self, SepError> {
        let r = Self {
            lower,
            upper,
            centre: None,
            scale: None,
        };
        r.validate("range")?;
        Ok(r)
    }

    fn validate(&self, name: &'static str) -> Result<(), SepError> {
        if !(self.lower.is_finite() && self.upper.is_finite() && self.lower < self.upper) {
            return Err(SepError::InvalidParameter {
                name,
                value: self.upper - self.lower,
                reason: "a public range needs finite lower < upper",
            });
        }
        if let Some(c) = self.centre
            && !c.is_finite()
        {
            return Err(SepError::InvalidParameter {
                name,
                value: c,
                reason: "the centre must be finite",
            });
        }
        if let Some(s) = self.scale {
            crate::error::check_positive("scale", s)?;
        }
        Ok(())
    }

    /// The centre of the affine map.
    pub fn centre(&self) -> f64 {
        self.centre.unwrap_or(0.5 * (self.lower + self.upper))
    }

    /// The scale of the affine map.
    pub fn scale(&self) -> f64 {
        self.scale.unwrap_or(0.5 * (self.upper - self.lower))
    }
}

/// Declared public ranges for every feature (in data order) and for the target.
///
/// # Example
/// ```
/// use dp_sep::data::{PublicRange, PublicRanges};
/// let r = PublicRanges::uniform(3, PublicRange::new(0.0, 10.0)?, PublicRange::new(-5.0, 5.0)?);
/// assert_eq!(r.features().len(), 3);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PublicRanges {
    features: Vec<PublicRange>,
    target: PublicRange,
    /// Where the ranges come from (a file path or "flags").
    source: String,
}

#[derive(Deserialize)]
struct RangesFile {
    #[serde(default)]
    provenance: Option<String>,
    #[serde(default)]
    columns: Option<Vec<String>>,
    ranges: BTreeMap<String, PublicRange>,
}

impl PublicRanges {
    /// One declared interval for every one of `d` features and one for the target.
    pub fn uniform(d: usize, feature: PublicRange, target: PublicRange) -> Self {
        Self {
            features: vec![feature; d],
            target,
            source: "flags".into(),
        }
    }

    /// Per-feature ranges (in data order) and the target's.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for an invalid range, [`SepError::Empty`] for no features.
    pub fn new(features: Vec<PublicRange>, target: PublicRange) -> Result<Self, SepError> {
        if features.is_empty() {
            return Err(SepError::Empty("public ranges for no features"));
        }
        for r in features.iter().chain([&target]) {
            r.validate("range")?;
        }
        Ok(Self {
            features,
            target,
            source: "caller".into(),
        })
    }

    /// Reads a ranges file (see the [module documentation](self)) and picks the ranges of the
    /// named features (in this order) and of the named target.
    ///
    /// # Errors
    /// [`SepError::Io`] / [`SepError::Corrupt`] for an unreadable or malformed file, or one that
    /// lacks a range for one of the names or declares one for a name that is neither a feature
    /// nor the target (the message names the file and the column), or holds an invalid range;
    /// [`SepError::TooLarge`] for a file above [`crate::limits::MAX_RANGES_FILE_BYTES`].
    pub fn from_file(
        path: impl AsRef<Path>,
        feature_names: &[String],
        target_name: &str,
    ) -> Result<Self, SepError> {
        let path = path.as_ref();
        let file = read_file(path)?;
        let known: Vec<&str> = feature_names
            .iter()
            .map(String::as_str)
            .chain([target_name])
            .collect();
        check_extra(path, &file, &known)?;
        resolve(path, &file, feature_names, target_name)
    }

    /// Reads a ranges file for a header-less data file whose columns are named, in order, by the
    /// file's `columns` list; `features` and `target` are 0-based column indices (the UCI
    /// `index_features.txt` / `index_target.txt`).
    ///
    /// # Errors
    /// As [`PublicRanges::from_file`]; [`SepError::Corrupt`] if `columns` is missing or has not
    /// exactly `n_columns` distinct names, or if `ranges` names a column not in `columns`.
    pub fn from_file_by_index(
        path: impl AsRef<Path>,
        n_columns: usize,
        features: &[usize],
        target: usize,
    ) -> Result<Self, SepError> {
        let path = path.as_ref();
        let file = read_file(path)?;
        let columns = file.columns.as_ref().ok_or_else(|| SepError::Corrupt {
            path: path.display().to_string(),
            reason: "a ranges file for a header-less data file needs `columns`".into(),
        })?;
        if columns.len() != n_columns {
            return Err(SepError::Corrupt {
                path: path.display().to_string(),
                reason: format!(
                    "`columns` names {} columns but the data file has {n_columns}",
                    columns.len()
                ),
            });
        }
        if let Some((i, dup)) = columns
            .iter()
            .enumerate()
            .find(|(i, c)| columns[..*i].contains(c))
        {
            return Err(SepError::Corrupt {
                path: path.display().to_string(),
                reason: format!(
                    "`columns` names column {i} {} like an earlier one",
                    crate::limits::excerpt(dup)
                ),
            });
        }
        let known: Vec<&str> = columns.iter().map(String::as_str).collect();
        check_extra(path, &file, &known)?;
        let name = |c: usize| columns.get(c).cloned().unwrap_or_default();
        let names: Vec<String> = features.iter().map(|&c| name(c)).collect();
        resolve(path, &file, &names, &name(target))
    }

    /// Feature ranges in data order.
    pub fn features(&self) -> &[PublicRange] {
        &self.features
    }

    /// Target range.
    pub fn target(&self) -> &PublicRange {
        &self.target
    }

    /// Where the ranges were declared (a file path, "flags" or "caller").
    pub fn source(&self) -> &str {
        &self.source
    }
}

fn read_file(path: &Path) -> Result<RangesFile, SepError> {
    let text =
        crate::limits::open_bounded(path, crate::limits::MAX_RANGES_FILE_BYTES)?.read_all()?;
    serde_json::from_str(&text).map_err(|e| {
        // serde's message can quote the input: keep a short excerpt only.
        let msg = e.to_string();
        let msg: String = msg.chars().take(120).collect();
        SepError::Corrupt {
            path: path.display().to_string(),
            reason: format!("not a valid ranges file: {msg}"),
        }
    })
}

/// Refuses names of `ranges` that are not in `known` (a range for a column that does not exist
/// is a sign the file belongs to another data set or is misspelt).
fn check_extra(path: &Path, file: &RangesFile, known: &[&str]) -> Result<(), SepError> {
    let extra: Vec<String> = file
        .ranges
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .map(|k| crate::limits::excerpt(k))
        .collect();
    if extra.is_empty() {
        Ok(())
    } else {
        let shown: Vec<&str> = extra.iter().take(5).map(String::as_str).collect();
        Err(SepError::Corrupt {
            path: path.display().to_string(),
            reason: format!(
                "ranges declared for {} column(s) the data does not have: {}{}",
                extra.len(),
                shown.join(", "),
                if extra.len() > 5 { ", ..." } else { "" }
            ),
        })
    }
}

fn resolve(
    path: &Path,
    file: &RangesFile,
    feature_names: &[String],
    target_name: &str,
) -> Result<PublicRanges, SepError> {
    let corrupt = |reason: String| SepError::Corrupt {
        path: path.display().to_string(),
        reason,
    };
    let get = |name: &str| -> Result<PublicRange, SepError> {
        let r = file.ranges.get(name).copied().ok_or_else(|| {
            corrupt(format!(
                "no range declared for column {}",
                crate::limits::excerpt(name)
            ))
        })?;
        r.validate("range")
            .map_err(|e| corrupt(format!("column {}: {e}", crate::limits::excerpt(name))))?;
        Ok(r)
    };
    let features = feature_names
        .iter()
        .map(|n| get(n))
        .collect::<Result<Vec<_>, _>>()?;
    let target = get(target_name)?;
    let mut out = PublicRanges::new(features, target)?;
    out.source = match &file.provenance {
        Some(_) => PathBuf::from(path).display().to_string(),
        None => format!("{} (no provenance stated)", path.display()),
    };
    Ok(out)
}
