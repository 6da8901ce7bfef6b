//! Loaders (CSV with a named label column, LIBSVM for sparse high-dimensional data) and the
//! public map of raw features into the unit ball.
//!
//! # Privacy
//! The unit-ball bound `||x|| <= 1` the sensitivities rely on is reached by a **public** map
//! fixed before the data is seen ([`FeatureMap`]: per-feature centre and scale from known
//! ranges, an optional constant intercept feature, a public radius), followed by clipping of each
//! row that still falls outside (counted in [`LoadReport::clipped`]). Nothing here is fitted to
//! the rows: the papers' code divides by the data's largest row norm, which is data-dependent and
//! leaks.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{BlrError, BlrRecord, Features};
use crate::limits::{ReadFileError, check_line_lengths, excerpt, read_text_file};

/// A public, data-independent map of raw features into the unit ball:
/// `x_i -> (x_i - centre_i) / scale_i`, an optional constant feature `1` appended (intercept),
/// the whole vector divided by `radius`, then clipped to norm 1 by [`BlrRecord::new`].
///
/// # Example
/// ```
/// use vips_models::blr::FeatureMap;
/// // features known to lie in [0, 10] and [-1, 1]; with an intercept
/// let map = FeatureMap::from_ranges(&[0.0, -1.0], &[10.0, 1.0], true)?;
/// assert_eq!(map.output_dim(), 3);
/// let x = map.apply(&[10.0, -1.0])?;
/// assert!(x.iter().map(|v| v * v).sum::<f64>() <= 1.0 + 1e-12);
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FeatureMap {
    centre: Vec<f64>,
    scale: Vec<f64>,
    intercept: bool,
    radius: f64,
}

impl FeatureMap {
    /// No per-feature scaling, no intercept, radius 1: for rows already prepared to lie in the
    /// unit ball (rows outside are clipped and counted).
    pub fn identity(dim: usize) -> Self {
        Self {
            centre: vec![0.0; dim],
            scale: vec![1.0; dim],
            intercept: false,
            radius: 1.0,
        }
    }

    /// For features known a priori to lie in `[lower_i, upper_i]`: each is mapped onto
    /// `[-1, 1]`, the intercept (if asked) is the constant 1, and the vector is divided by
    /// `sqrt(output_dim)`, so every row inside the box lands in the unit ball without clipping.
    ///
    /// # Errors
    /// [`BlrError::DimensionMismatch`] for different lengths, [`BlrError::Empty`] for none,
    /// [`BlrError::NonFinite`], [`BlrError::InvalidParameter`] unless `lower_i < upper_i`.
    pub fn from_ranges(lower: &[f64], upper: &[f64], intercept: bool) -> Result<Self, BlrError> {
        if lower.len() != upper.len() {
            return Err(BlrError::DimensionMismatch {
                what: "public ranges (lower vs upper)",
                expected: lower.len(),
                found: upper.len(),
            });
        }
        if lower.is_empty() {
            return Err(BlrError::Empty("no feature ranges"));
        }
        let mut centre = Vec::with_capacity(lower.len());
        let mut scale = Vec::with_capacity(lower.len());
        for (&lo, &hi) in lower.iter().zip(upper) {
            if !(lo.is_finite() && hi.is_finite()) {
                return Err(BlrError::NonFinite("public feature ranges"));
            }
            if lo >= hi {
                return Err(BlrError::invalid(
                    "lower bound",
                    lo,
                    "every range needs lower < upper",
                ));
            }
            // Halves first: `lo + hi` and `hi - lo` overflow for finite ranges near 1e308.
            centre.push(0.5 * lo + 0.5 * hi);
            scale.push(0.5 * hi - 0.5 * lo);
        }
        let out = lower.len() + usize::from(intercept);
        Ok(Self {
            centre,
            scale,
            intercept,
            radius: (out as f64).sqrt(),
        })
    }

    /// Replaces the radius the scaled vector is divided by (a smaller radius keeps more signal
    /// and clips more rows; it must be public).
    ///
    /// # Errors
    /// [`BlrError::InvalidParameter`] unless finite and `> 0`.
    pub fn with_radius(mut self, radius: f64) -> Result<Self, BlrError> {
        if !(radius > 0.0 && radius.is_finite()) {
            return Err(BlrError::invalid(
                "radius",
                radius,
                "must be finite and > 0",
            ));
        }
        self.radius = radius;
        Ok(self)
    }

    /// Number of raw input features.
    pub fn input_dim(&self) -> usize {
        self.centre.len()
    }

    /// Model dimension (input features plus the intercept).
    pub fn output_dim(&self) -> usize {
        self.centre.len() + usize::from(self.intercept)
    }

    /// The radius the scaled vector is divided by.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Maps raw features (before the unit-ball clip).
    ///
    /// # Errors
    /// [`BlrError::DimensionMismatch`] for a wrong length; [`BlrError::NonFinite`].
    pub fn apply(&self, raw: &[f64]) -> Result<Vec<f64>, BlrError> {
        if raw.len() != self.centre.len() {
            return Err(BlrError::DimensionMismatch {
                what: "raw features vs feature map",
                expected: self.centre.len(),
                found: raw.len(),
            });
        }
        if raw.iter().any(|v| !v.is_finite()) {
            return Err(BlrError::NonFinite("raw features"));
        }
        // (x - c) / s computed as x/s - c/s halves the chance of overflow; a value the public
        // scaling still cannot represent is refused (never silently made infinite).
        let mut out = Vec::with_capacity(raw.len() + 1);
        for (i, (x, (c, s))) in raw
            .iter()
            .zip(self.centre.iter().zip(&self.scale))
            .enumerate()
        {
            let mut v = (x - c) / s;
            if !v.is_finite() {
                v = x / s - c / s;
            }
            let v = v / self.radius;
            if !v.is_finite() {
                return Err(BlrError::NonFiniteFeature { feature: i + 1 });
            }
            out.push(v);
        }
        if self.intercept {
            out.push(1.0 / self.radius);
        }
        Ok(out)
    }
}

/// What a loader did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Records read.
    pub rows: usize,
    /// Records whose mapped features had norm above 1 and were clipped onto the unit sphere.
    pub clipped: usize,
    /// Model dimension.
    pub dim: usize,
    /// Whether the file's labels were `{-1, 1}` (mapped to `{0, 1}`).
    pub labels_were_signed: bool,
}

impl LoadReport {
    /// `clipped / rows`.
    pub fn clipped_fraction(&self) -> f64 {
        if self.rows == 0 {
            0.0
        } else {
            self.clipped as f64 / self.rows as f64
        }
    }
}

/// Records with their feature names and a report.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The records (features in the unit ball).
    pub records: Vec<BlrRecord>,
    /// Names of the model's features (`"intercept"` last if the map adds one).
    pub feature_names: Vec<String>,
    /// Counts.
    pub report: LoadReport,
}

/// Options of [`load_csv`].
#[derive(Clone, Debug)]
pub struct CsvOptions {
    /// Name of the label column (values `{0, 1}` or `{-1, 1}`).
    pub label: String,
    /// The public map; `None` = [`FeatureMap::identity`] (rows assumed already in the ball).
    pub map: Option<FeatureMap>,
}

/// Tracks whether labels are `{0,1}` or `{-1,1}`.
#[derive(Default)]
struct LabelKind {
    zero: bool,
    minus: bool,
    signed: bool,
}

impl LabelKind {
    fn read(&mut self, token: &str, line: usize) -> Result<bool, BlrError> {
        let v: f64 = token.trim().parse().map_err(|_| {
            BlrError::parse(line, format!("label `{}` is not a number", excerpt(token)))
        })?;
        let y = if v == 1.0 {
            true
        } else if v == 0.0 {
            self.zero = true;
            false
        } else if v == -1.0 {
            self.minus = true;
            false
        } else {
            return Err(BlrError::parse(
                line,
                format!("label `{}` is not one of 0, 1, -1", excerpt(token)),
            ));
        };
        if self.zero && self.minus {
            return Err(BlrError::parse(
                line,
                "labels mix 0 and -1: use {0, 1} or {-1, 1}",
            ));
        }
        self.signed = self.minus;
        Ok(y)
    }
}

fn parse_value(token: &str, line: usize, column: &str) -> Result<f64, BlrError> {
    let v: f64 = token.trim().parse().map_err(|_| {
        BlrError::parse(
            line,
            format!(
                "column `{}`: `{}` is not a number",
                excerpt(column),
                excerpt(token)
            ),
        )
    })?;
    if !v.is_finite() {
        return Err(BlrError::parse(
            line,
            format!(
                "column `{}`: `{}` is not finite",
                excerpt(column),
                excerpt(token)
            ),
        ));
    }
    Ok(v)
}

/// Reads a whole text file within [`crate::limits::MAX_INPUT_BYTES`] and
/// [`crate::limits::MAX_LINE_BYTES`].
pub(crate) fn read_file(path: &Path) -> Result<String, BlrError> {
    read_text_file(path).map_err(|e| match e {
        ReadFileError::Io(source) => BlrError::Io {
            path: path.display().to_string(),
            source,
        },
        ReadFileError::Limit(l) => in_file(path, BlrError::Limit(l)),
    })
}

/// Reads a CSV file: see [`parse_csv`].
///
/// # Errors
/// [`BlrError::Io`] if the file cannot be read, else [`BlrError::InFile`] naming the file around
/// the errors of [`parse_csv`] (which name the line).
pub fn load_csv(path: impl AsRef<Path>, options: &CsvOptions) -> Result<Loaded, BlrError> {
    let path = path.as_ref();
    parse_csv(&read_file(path)?, options).map_err(|e| in_file(path, e))
}

/// Wraps a parsing error with the file's path.
fn in_file(path: &Path, e: BlrError) -> BlrError {
    BlrError::InFile {
        path: path.display().to_string(),
        source: Box::new(e),
    }
}

/// Parses CSV text: a header line naming the columns (one is the label), then one row per line
/// (LF or CRLF line ends; blank lines skipped). Every non-label column is a numeric feature,
/// mapped by the public [`FeatureMap`] and clipped into the unit ball.
///
/// Fields are split on commas by hand, without CSV quoting: the format is numeric only, so a
/// quoted field is refused as not a number (with its line) rather than misread.
///
/// # Errors
/// [`BlrError::Parse`] naming the 1-based line for a missing header or label column, a row with
/// the wrong number of fields, a value that is not a finite number, or a label outside
/// `{0, 1}` / `{-1, 1}`; [`BlrError::DimensionMismatch`] if the map does not fit the feature count;
/// [`BlrError::Empty`] for no rows.
///
/// # Example
/// ```
/// use vips_models::blr::{CsvOptions, parse_csv};
/// let text = "a,b,label\r\n0.1,0.2,1\r\n0.3,-0.1,0\r\n";
/// let loaded = parse_csv(text, &CsvOptions { label: "label".into(), map: None })?;
/// assert_eq!(loaded.records.len(), 2);
/// let bad = parse_csv("a,label\n0.1,2\n", &CsvOptions { label: "label".into(), map: None });
/// assert!(bad.unwrap_err().to_string().starts_with("line 2"));
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
pub fn parse_csv(text: &str, options: &CsvOptions) -> Result<Loaded, BlrError> {
    check_line_lengths(text)?;
    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)));
    let (_, header) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty())
        .ok_or_else(|| BlrError::parse(1, "no header line"))?;
    let mut rows = CsvRows::new(header, options)?;
    let mut records = Vec::new();
    let mut clipped = 0;
    for (line, text) in lines {
        if let Some((record, clip)) = rows.row(line, text)? {
            clipped += usize::from(clip);
            records.push(record);
        }
    }
    if records.is_empty() {
        return Err(BlrError::Empty("the CSV has a header but no rows"));
    }
    Ok(Loaded {
        report: LoadReport {
            rows: records.len(),
            clipped,
            dim: rows.map.output_dim(),
            labels_were_signed: rows.labels.signed,
        },
        records,
        feature_names: rows.model_names(),
    })
}

/// The CSV rows' parser, one home for [`parse_csv`] and [`stream_csv`]: the header's columns,
/// the label column, the public map, and the label convention seen so far.
struct CsvRows {
    columns: Vec<String>,
    label_col: usize,
    map: FeatureMap,
    labels: LabelKind,
    raw: Vec<f64>,
}

impl CsvRows {
    /// Reads the header line (line 1 in errors: the first non-blank line).
    fn new(header: &str, options: &CsvOptions) -> Result<Self, BlrError> {
        let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
        let label_col = columns
            .iter()
            .position(|c| *c == options.label)
            .ok_or_else(|| {
                BlrError::parse(
                    1,
                    format!(
                        "no label column `{}` in the header",
                        excerpt(&options.label)
                    ),
                )
            })?;
        let d_raw = columns.len() - 1;
        if d_raw == 0 {
            return Err(BlrError::parse(1, "no feature columns besides the label"));
        }
        let map = options
            .map
            .clone()
            .unwrap_or_else(|| FeatureMap::identity(d_raw));
        if map.input_dim() != d_raw {
            return Err(BlrError::DimensionMismatch {
                what: "feature map vs CSV feature columns",
                expected: map.input_dim(),
                found: d_raw,
            });
        }
        Ok(Self {
            columns,
            label_col,
            map,
            labels: LabelKind::default(),
            raw: Vec::with_capacity(d_raw),
        })
    }

    /// The model's feature names: the CSV's feature columns, `"intercept"` last if the map adds
    /// one.
    fn model_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .columns
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != self.label_col)
            .map(|(_, c)| c.clone())
            .collect();
        if self.map.output_dim() > names.len() {
            names.push("intercept".into());
        }
        names
    }

    /// One row (1-based `line`): `None` for a blank line, else the mapped, clipped record and
    /// whether it was clipped.
    fn row(&mut self, line: usize, text: &str) -> Result<Option<(BlrRecord, bool)>, BlrError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        let fields: Vec<&str> = text.split(',').collect();
        if fields.len() != self.columns.len() {
            return Err(BlrError::parse(
                line,
                format!(
                    "{} fields, the header has {}",
                    fields.len(),
                    self.columns.len()
                ),
            ));
        }
        self.raw.clear();
        let mut y = false;
        for (i, f) in fields.iter().enumerate() {
            if i == self.label_col {
                y = self.labels.read(f, line)?;
            } else {
                self.raw.push(parse_value(f, line, &self.columns[i])?);
            }
        }
        let x = self
            .map
            .apply(&self.raw)
            .map_err(|e| BlrError::parse(line, e.to_string()))?;
        let (record, clip) = BlrRecord::new(Features::Dense(x), y)
            .map_err(|e| BlrError::parse(line, e.to_string()))?;
        Ok(Some((record, clip.was_clipped())))
    }
}

/// What [`stream_csv`] read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamedCsv {
    /// Rows read (handed to the sink).
    pub rows: usize,
    /// Rows clipped into the unit ball (a non-private count for the data owner).
    pub clipped: usize,
    /// The model's feature names (the CSV's feature columns, `"intercept"` last if the map
    /// adds one), as [`Loaded::feature_names`].
    pub feature_names: Vec<String>,
}

/// Reads a CSV file as [`load_csv`] does (the same header, per-row checks and errors, the same
/// public map and clipping: each record is the one [`load_csv`] makes from its line, bit for
/// bit) but hands each record to `sink` as soon as its line is read: memory is one line, each
/// line within [`crate::limits::MAX_LINE_BYTES`] (no limit on the file's size). `sink` returns
/// `false` to stop.
///
/// # Privacy
/// Reads the private rows; the returned counts are the data owner's, not a release.
///
/// # Errors
/// [`BlrError::Io`] if the file cannot be read; [`BlrError::InFile`] naming the file around the
/// errors of [`parse_csv`] (which name the line), and around [`BlrError::Empty`] for no rows.
///
/// # Example
/// ```
/// use vips_models::blr::{CsvOptions, stream_csv};
/// # let dir = std::env::temp_dir().join(format!("stream-csv-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("rows.csv");
/// std::fs::write(&path, "a,b,y\n0.1,0.2,1\n0.3,-0.1,0\n")?;
/// let options = CsvOptions { label: "y".into(), map: None };
/// let mut labels = Vec::new();
/// let read = stream_csv(&path, &options, |r| {
///     labels.push(r.label());
///     true
/// })?;
/// assert_eq!((read.rows, labels), (2, vec![true, false]));
/// assert_eq!(read.feature_names, ["a", "b"]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn stream_csv(
    path: impl AsRef<Path>,
    options: &CsvOptions,
    mut sink: impl FnMut(BlrRecord) -> bool,
) -> Result<StreamedCsv, BlrError> {
    let path = path.as_ref();
    let at = |e| in_file(path, e);
    let io = |source| BlrError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut buf = String::new();
    let mut rows: Option<CsvRows> = None;
    let (mut count, mut clipped) = (0usize, 0usize);
    for line in 1.. {
        match crate::limits::read_line_bounded(
            &mut reader,
            &mut buf,
            crate::limits::MAX_LINE_BYTES,
            line,
        ) {
            Ok(true) => {}
            Ok(false) => break,
            Err(crate::limits::ReadLineError::Io(source)) => return Err(io(source)),
            Err(crate::limits::ReadLineError::Limit(l)) => return Err(at(BlrError::Limit(l))),
        }
        let Some(parser) = rows.as_mut() else {
            if !buf.trim().is_empty() {
                rows = Some(CsvRows::new(&buf, options).map_err(at)?);
            }
            continue;
        };
        let Some((record, clip)) = parser.row(line, &buf).map_err(at)? else {
            continue;
        };
        count += 1;
        clipped += usize::from(clip);
        if !sink(record) {
            break;
        }
    }
    let Some(parser) = rows else {
        return Err(at(BlrError::parse(1, "no header line")));
    };
    if count == 0 {
        return Err(at(BlrError::Empty("the CSV has a header but no rows")));
    }
    Ok(StreamedCsv {
        rows: count,
        clipped,
        feature_names: parser.model_names(),
    })
}

/// The feature column names of a CSV file (its first non-blank line, the `label` column left
/// out), read without the rows (at most [`crate::limits::MAX_LINE_BYTES`]): what a caller needs
/// to match a public ranges file ([`read_ranges_csv`]) before loading the rows.
///
/// # Privacy
/// Column names are the file's schema, public; no row is read.
///
/// # Errors
/// [`BlrError::Io`] if the file cannot be read; [`BlrError::InFile`] for no header line or no
/// `label` column.
pub fn read_csv_header(path: impl AsRef<Path>, label: &str) -> Result<Vec<String>, BlrError> {
    use std::io::{BufRead, Read};
    let path = path.as_ref();
    let io = |source| BlrError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?)
        .take(crate::limits::MAX_LINE_BYTES as u64 * 4);
    let mut line = Vec::new();
    let mut line_no = 0;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            return Err(in_file(
                path,
                BlrError::parse(line_no.max(1), "no header line"),
            ));
        }
        line_no += 1;
        if !String::from_utf8_lossy(&line).trim().is_empty() {
            break;
        }
    }
    let columns: Vec<String> = String::from_utf8_lossy(&line)
        .trim_end_matches(['\r', '\n'])
        .split(',')
        .map(|c| c.trim().to_string())
        .collect();
    if !columns.iter().any(|c| c == label) {
        return Err(in_file(
            path,
            BlrError::parse(
                line_no,
                format!("no label column `{}` in the header", excerpt(label)),
            ),
        ));
    }
    Ok(columns.into_iter().filter(|c| c != label).collect())
}

/// Reads a public ranges file, CSV lines `name,lower,upper` (a first line
/// `name,lower,upper` is a header; blank lines are skipped), and orders the ranges by
/// `features` (the CSV's feature names, [`read_csv_header`]). Every feature must be listed
/// exactly once, and nothing else: ranges are matched by name, never by position.
///
/// # Privacy
/// The ranges must be declared from knowledge of the domain, never computed from the data.
///
/// # Errors
/// [`BlrError::Io`] if the file cannot be read; [`BlrError::InFile`] naming the file around
/// [`BlrError::Parse`] (the line) for a malformed line, a value that is not a finite number or a
/// name listed twice or not a feature, and around [`BlrError::MissingRanges`] for features with no range.
///
/// # Example
/// ```
/// let dir = std::env::temp_dir().join(format!("vips-ranges-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("ranges.csv");
/// std::fs::write(&path, "name,lower,upper\nb,0,1\na,-2,2\n")?;
/// let (lo, hi) = vips_models::blr::read_ranges_csv(&path, &["a".into(), "b".into()])?;
/// assert_eq!((lo, hi), (vec![-2.0, 0.0], vec![2.0, 1.0]));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_ranges_csv(
    path: impl AsRef<Path>,
    features: &[String],
) -> Result<(Vec<f64>, Vec<f64>), BlrError> {
    let path = path.as_ref();
    let text = read_file(path)?;
    let err = |line: usize, reason: String| in_file(path, BlrError::parse(line, reason));
    let mut by_name: std::collections::HashMap<String, (f64, f64, usize)> =
        std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 3 {
            return Err(err(
                line_no,
                format!("expected name,lower,upper, found {} fields", f.len()),
            ));
        }
        if line_no == 1 && f == ["name", "lower", "upper"] {
            continue;
        }
        let num = |v: &str, what: &str| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    err(
                        line_no,
                        format!("{what} `{}` is not a finite number", excerpt(v)),
                    )
                })
        };
        let (lo, hi) = (num(f[1], "lower")?, num(f[2], "upper")?);
        if !features.iter().any(|n| n == f[0]) {
            return Err(err(
                line_no,
                format!(
                    "range for `{}`, which is not a feature column of the CSV",
                    excerpt(f[0])
                ),
            ));
        }
        if by_name
            .insert(f[0].to_string(), (lo, hi, line_no))
            .is_some()
        {
            return Err(err(
                line_no,
                format!("feature `{}` is listed twice", excerpt(f[0])),
            ));
        }
    }
    let missing: Vec<&str> = features
        .iter()
        .filter(|n| !by_name.contains_key(*n))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(in_file(
            path,
            BlrError::MissingRanges {
                columns: excerpt(&missing.join(", ")),
            },
        ));
    }
    Ok(features
        .iter()
        .map(|n| (by_name[n].0, by_name[n].1))
        .unzip())
}

/// Options of [`load_libsvm`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LibsvmOptions {
    /// The model dimension `d` (feature ids must be `<= d`, else a typed error naming the line,
    /// at loading time, before any release); `None` = the largest id seen (that maximum is then a
    /// property of the data and may only be used for non-private runs: the example refuses a
    /// private run without `--dim`).
    pub dim: Option<usize>,
    /// Public radius every row is divided by before clipping to the unit ball (e.g. the square
    /// root of a public bound on the number of active binary features).
    pub radius: f64,
}

/// Reads a LIBSVM file: see [`parse_libsvm`].
///
/// # Errors
/// [`BlrError::Io`] if the file cannot be read, else [`BlrError::InFile`] naming the file around
/// the errors of [`parse_libsvm`] (which name the line).
pub fn load_libsvm(path: impl AsRef<Path>, options: LibsvmOptions) -> Result<Loaded, BlrError> {
    let path = path.as_ref();
    parse_libsvm(&read_file(path)?, options).map_err(|e| in_file(path, e))
}

/// Parses LIBSVM / SVMlight text: `label id:value id:value ...` per line, ids 1-based and
/// strictly increasing, labels `{0, 1}` or `{-1, +1}`; `#` starts a comment. Rows are stored
/// sparse, divided by the public `radius` and clipped into the unit ball.
///
/// # Errors
/// [`BlrError::Parse`] naming the 1-based line for a bad label, a token that is not `id:value`,
/// an id of 0, above `dim`, or not increasing, a value that is not finite;
/// [`BlrError::InvalidParameter`] for a bad radius or `dim = 0`; [`BlrError::Empty`] for no rows.
///
/// # Example
/// ```
/// use vips_models::blr::{LibsvmOptions, parse_libsvm};
/// let loaded = parse_libsvm("+1 1:1 4:1\n-1 2:1\n", LibsvmOptions { dim: Some(5), radius: 2.0 })?;
/// assert_eq!((loaded.records.len(), loaded.report.dim), (2, 5));
/// assert!(parse_libsvm("1 3:1 2:1\n", LibsvmOptions { dim: None, radius: 1.0 }).is_err());
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
pub fn parse_libsvm(text: &str, options: LibsvmOptions) -> Result<Loaded, BlrError> {
    check_line_lengths(text)?;
    if !(options.radius > 0.0 && options.radius.is_finite()) {
        return Err(BlrError::invalid(
            "radius",
            options.radius,
            "must be finite and > 0",
        ));
    }
    if options.dim == Some(0) {
        return Err(BlrError::invalid("dim", 0.0, "must be >= 1"));
    }
    let mut labels = LabelKind::default();
    let mut rows: Vec<(Vec<u32>, Vec<f64>, bool, usize)> = Vec::new();
    let mut max_id = 0usize;
    let mut max_line = 0usize;
    for (i, raw_line) in text.split('\n').enumerate() {
        let line = i + 1;
        if let Some((indices, values, y, id)) =
            parse_libsvm_line(raw_line, line, &mut labels, options)?
        {
            if id > max_id {
                max_id = id;
                max_line = line;
            }
            rows.push((indices, values, y, line));
        }
    }
    if rows.is_empty() {
        return Err(BlrError::Empty("the LIBSVM file has no rows"));
    }
    let dim = options.dim.unwrap_or(max_id).max(1);
    // The dimension sizes the model's d x d state: refuse before anything of that size exists.
    super::config::check_dim_memory(
        dim,
        &match options.dim {
            Some(_) => "the declared dimension (--dim)".to_string(),
            None => format!("the largest feature id (line {max_line}; declare --dim)"),
        },
    )?;
    let mut records = Vec::with_capacity(rows.len());
    let mut clipped = 0;
    for (indices, values, y, line) in rows {
        let (r, clip) = BlrRecord::new(Features::Sparse { indices, values }, y)
            .map_err(|e| BlrError::parse(line, e.to_string()))?;
        clipped += usize::from(clip.was_clipped());
        records.push(r);
    }
    Ok(Loaded {
        report: LoadReport {
            rows: records.len(),
            clipped,
            dim,
            labels_were_signed: labels.signed,
        },
        records,
        feature_names: (1..=dim).map(|i| format!("f{i}")).collect(),
    })
}

/// One LIBSVM line: `None` for a blank or comment line, else the sparse row (0-based indices,
/// values divided by the radius, zeros dropped), its label and the largest feature id on it.
#[allow(clippy::type_complexity)]
fn parse_libsvm_line(
    raw_line: &str,
    line: usize,
    labels: &mut LabelKind,
    options: LibsvmOptions,
) -> Result<Option<(Vec<u32>, Vec<f64>, bool, usize)>, BlrError> {
    let mut line_max = 0usize;
    let content = raw_line.split('#').next().unwrap_or("").trim();
    if content.is_empty() {
        return Ok(None);
    }
    let mut tokens = content.split_whitespace();
    let label = tokens.next().unwrap_or("");
    let y = labels.read(label.strip_prefix('+').unwrap_or(label), line)?;
    let mut indices = Vec::new();
    let mut values = Vec::new();
    for tok in tokens {
        let (id, val) = tok
            .split_once(':')
            .ok_or_else(|| BlrError::parse(line, format!("`{}` is not id:value", excerpt(tok))))?;
        let id: usize = id.parse().map_err(|_| {
            BlrError::parse(
                line,
                if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
                    format!(
                        "feature id `{}` is too large: at most {}",
                        excerpt(id),
                        u32::MAX
                    )
                } else {
                    format!("feature id `{}` is not a positive integer", excerpt(id))
                },
            )
        })?;
        if id == 0 {
            return Err(BlrError::parse(line, "feature ids are 1-based; found 0"));
        }
        if let Some(d) = options.dim
            && id > d
        {
            return Err(BlrError::parse(
                line,
                format!("feature id {id} exceeds the dimension {d}"),
            ));
        }
        if id > u32::MAX as usize {
            return Err(BlrError::parse(
                line,
                format!("feature id {id} is too large: at most {}", u32::MAX),
            ));
        }
        if indices.last().is_some_and(|&last| id as u32 - 1 <= last) {
            return Err(BlrError::parse(
                line,
                format!("feature id {id} is not above the previous one"),
            ));
        }
        let v = parse_value(val, line, id.to_string().as_str())?;
        line_max = line_max.max(id);
        if v != 0.0 {
            indices.push(id as u32 - 1);
            values.push(v / options.radius);
        }
    }
    Ok(Some((indices, values, y, line_max)))
}

/// Reads a LIBSVM file as [`load_libsvm`] does (the same per-line checks and errors, the same
/// scaling by the radius and clipping into the unit ball) but hands each record to `sink` as
/// soon as its line is read, instead of keeping the data set: memory is one line. The
/// dimension must be declared (`options.dim`): it cannot wait for the largest id. `sink`
/// returns `false` to stop. Returns the rows read and how many were clipped.
///
/// # Errors
/// As [`load_libsvm`]; [`BlrError::InvalidParameter`] without a declared dimension.
///
/// # Example
/// ```
/// use vips_models::blr::{LibsvmOptions, stream_libsvm};
/// # let dir = std::env::temp_dir().join(format!("stream-libsvm-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("rows.libsvm");
/// std::fs::write(&path, "1 1:0.5 3:0.5\n0 2:2\n")?;
/// let mut labels = Vec::new();
/// let (rows, clipped) = stream_libsvm(&path, LibsvmOptions { dim: Some(3), radius: 1.0 }, |r| {
///     labels.push(r.label());
///     true
/// })?;
/// assert_eq!((rows, clipped, labels), (2, 1, vec![true, false]));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn stream_libsvm(
    path: impl AsRef<Path>,
    options: LibsvmOptions,
    mut sink: impl FnMut(BlrRecord) -> bool,
) -> Result<(usize, usize), BlrError> {
    let path = path.as_ref();
    let Some(dim) = options.dim else {
        return Err(BlrError::invalid(
            "dim",
            0.0,
            "a streamed LIBSVM file needs a declared dimension",
        ));
    };
    let at = |e| in_file(path, e);
    if dim == 0 {
        return Err(BlrError::invalid("dim", 0.0, "must be >= 1"));
    }
    if !(options.radius > 0.0 && options.radius.is_finite()) {
        return Err(BlrError::invalid(
            "radius",
            options.radius,
            "must be finite and > 0",
        ));
    }
    let io = |source| BlrError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::new(file);
    let mut labels = LabelKind::default();
    let mut buf = String::new();
    let (mut rows, mut clipped) = (0usize, 0usize);
    for line in 1.. {
        match crate::limits::read_line_bounded(
            &mut reader,
            &mut buf,
            crate::limits::MAX_LINE_BYTES,
            line,
        ) {
            Ok(true) => {}
            Ok(false) => break,
            Err(crate::limits::ReadLineError::Io(source)) => return Err(io(source)),
            Err(crate::limits::ReadLineError::Limit(l)) => return Err(at(BlrError::Limit(l))),
        }
        let Some((indices, values, y, _)) =
            parse_libsvm_line(&buf, line, &mut labels, options).map_err(at)?
        else {
            continue;
        };
        let (record, clip) = BlrRecord::new(Features::Sparse { indices, values }, y)
            .map_err(|e| at(BlrError::parse(line, e.to_string())))?;
        rows += 1;
        clipped += usize::from(clip.was_clipped());
        if !sink(record) {
            break;
        }
    }
    if rows == 0 {
        return Err(at(BlrError::Empty("the LIBSVM file has no rows")));
    }
    Ok((rows, clipped))
}
