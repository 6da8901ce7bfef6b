//! The committed public-ranges files (`crates/dp-sep/ranges/*.json`, issue 19): each parses with
//! the crate's loader, names a column for every feature and the target of its UCI folder (checked
//! against the folder's index files when `../shared/data/uci/<name>` exists, skipped with a
//! message otherwise), and declares only finite ranges with `lower < upper`. A broken file is a
//! typed error, so the checks can fail.

use std::fs;
use std::path::{Path, PathBuf};

use dp_sep::SepError;
use dp_sep::data::PublicRanges;
use dp_sep::data::split_folder::SplitFolder;

fn ranges_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ranges")
}

fn uci(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/uci")
        .join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "skipping the folder check for {name}: {} is absent",
            p.display()
        );
        None
    }
}

fn ranges_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(ranges_dir())
        .expect("crates/dp-sep/ranges exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// A file `TAG-*.json` holding `text`, removed when the returned guard is dropped.
fn temp_file(tag: &str, text: &str) -> tempfile::TempPath {
    let mut f = tempfile::Builder::new()
        .prefix(&format!("dp_sep_ranges_{tag}-"))
        .suffix(".json")
        .tempfile()
        .unwrap();
    std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    f.into_temp_path()
}

/// Raw view of a ranges file: its `dataset`, `columns` and the names and ends of its ranges.
struct Raw {
    dataset: String,
    columns: Vec<String>,
    ranges: Vec<(String, f64, f64)>,
}

fn raw(path: &Path) -> Raw {
    let v: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(path).unwrap()).expect("valid JSON");
    let dataset = v["dataset"].as_str().expect("`dataset` string").to_string();
    let columns = v["columns"]
        .as_array()
        .expect("`columns` list")
        .iter()
        .map(|c| c.as_str().expect("column name").to_string())
        .collect();
    let ranges = v["ranges"]
        .as_object()
        .expect("`ranges` object")
        .iter()
        .map(|(k, r)| {
            let end = |e: &str| {
                r[e].as_f64()
                    .unwrap_or_else(|| panic!("{}: `{k}.{e}` is a number", path.display()))
            };
            (k.clone(), end("lower"), end("upper"))
        })
        .collect();
    Raw {
        dataset,
        columns,
        ranges,
    }
}

fn assert_valid(path: &Path, what: &str, lower: f64, upper: f64) {
    assert!(
        lower.is_finite() && upper.is_finite() && lower < upper,
        "{}: {what} has [{lower}, {upper}], not finite lower < upper",
        path.display()
    );
}

#[test]
fn every_committed_file_parses_names_its_columns_and_has_valid_ranges() {
    let files = ranges_files();
    // The three files of issue 16 and the six of issue 19.
    assert!(
        files.len() >= 9,
        "expected at least 9 ranges files, found {}",
        files.len()
    );
    for path in &files {
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let raw = raw(path);
        assert_eq!(
            raw.dataset,
            stem,
            "{}: `dataset` must be the file name",
            path.display()
        );
        assert!(
            !raw.columns.is_empty(),
            "{}: empty `columns`",
            path.display()
        );
        for (name, lower, upper) in &raw.ranges {
            assert!(
                raw.columns.contains(name),
                "{}: range for unknown column {name}",
                path.display()
            );
            assert_valid(path, name, *lower, *upper);
        }

        // The crate's loader on the file alone: every column that has a range, the last one as
        // the target (what a header-less folder with these columns would ask for).
        let with_range: Vec<usize> = (0..raw.columns.len())
            .filter(|&c| raw.ranges.iter().any(|(n, _, _)| *n == raw.columns[c]))
            .collect();
        let (&target, features) = with_range.split_last().expect("at least one range");
        let loaded = PublicRanges::from_file_by_index(path, raw.columns.len(), features, target)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(loaded.features().len(), features.len());

        // Against the real folder: the loader must find a range for every feature and the target
        // named by index_features.txt / index_target.txt.
        let Some(dir) = uci(&stem) else { continue };
        let folder = SplitFolder::load(&dir).unwrap();
        assert_eq!(
            folder.n_columns(),
            raw.columns.len(),
            "{}: `columns` must name every column of data.txt",
            path.display()
        );
        let ranges = folder
            .public_ranges(path)
            .unwrap_or_else(|e| panic!("{} against {}: {e}", path.display(), dir.display()));
        assert_eq!(ranges.features().len(), folder.feature_columns().len());
        for (i, r) in ranges.features().iter().enumerate() {
            let col = &raw.columns[folder.feature_columns()[i]];
            assert_valid(path, col, r.lower, r.upper);
            assert!(r.scale() > 0.0 && r.centre().is_finite());
        }
        let t = ranges.target();
        assert_valid(path, &raw.columns[folder.target_column()], t.lower, t.upper);
    }
}

#[test]
fn the_six_issue_19_files_exist() {
    for name in [
        "bostonHousing",
        "concrete",
        "energy",
        "naval-propulsion-plant",
        "protein-tertiary-structure",
        "yacht",
    ] {
        let p = ranges_dir().join(format!("{name}.json"));
        assert!(p.exists(), "missing {}", p.display());
    }
}

fn corrupt_reason(r: Result<PublicRanges, SepError>) -> String {
    match r {
        Err(SepError::Corrupt { reason, .. }) => reason,
        other => panic!("expected SepError::Corrupt, got {other:?}"),
    }
}

#[test]
fn broken_files_are_typed_errors() {
    let ok_ranges = r#""a": {"lower": 0, "upper": 1}, "y": {"lower": -1, "upper": 1}"#;
    // Sanity: the good version loads.
    let good = temp_file(
        "good",
        &format!(r#"{{"columns": ["a", "y"], "ranges": {{{ok_ranges}}}}}"#),
    );
    PublicRanges::from_file_by_index(&good, 2, &[0], 1).unwrap();

    // lower > upper.
    let p = temp_file(
        "inverted",
        r#"{"columns": ["a", "y"], "ranges": {"a": {"lower": 2, "upper": 1}, "y": {"lower": -1, "upper": 1}}}"#,
    );
    let reason = corrupt_reason(PublicRanges::from_file_by_index(&p, 2, &[0], 1));
    assert!(reason.contains(r#"column "a""#), "{reason}");

    // lower == upper (an empty interval).
    let p = temp_file(
        "empty",
        r#"{"columns": ["a", "y"], "ranges": {"a": {"lower": 1, "upper": 1}, "y": {"lower": -1, "upper": 1}}}"#,
    );
    corrupt_reason(PublicRanges::from_file_by_index(&p, 2, &[0], 1));

    // A non-finite end (JSON has no infinity; an overflowing literal is refused by the parser).
    let p = temp_file(
        "infinite",
        r#"{"columns": ["a", "y"], "ranges": {"a": {"lower": 0, "upper": 1e999}, "y": {"lower": -1, "upper": 1}}}"#,
    );
    corrupt_reason(PublicRanges::from_file_by_index(&p, 2, &[0], 1));

    // The target has no range.
    let p = temp_file(
        "missing",
        r#"{"columns": ["a", "y"], "ranges": {"a": {"lower": 0, "upper": 1}}}"#,
    );
    let reason = corrupt_reason(PublicRanges::from_file_by_index(&p, 2, &[0], 1));
    assert!(
        reason.contains(r#"no range declared for column "y""#),
        "{reason}"
    );

    // A range for a column that is not in `columns` (misspelt).
    let p = temp_file(
        "misspelt",
        r#"{"columns": ["a", "y"], "ranges": {"a": {"lower": 0, "upper": 1}, "Y": {"lower": -1, "upper": 1}}}"#,
    );
    corrupt_reason(PublicRanges::from_file_by_index(&p, 2, &[0], 1));

    // `columns` does not match the data file's column count.
    let p = temp_file(
        "count",
        &format!(r#"{{"columns": ["a", "y"], "ranges": {{{ok_ranges}}}}}"#),
    );
    let reason = corrupt_reason(PublicRanges::from_file_by_index(&p, 3, &[0], 1));
    assert!(
        reason.contains("2 columns but the data file has 3"),
        "{reason}"
    );

    // Not JSON at all.
    let p = temp_file("garbage", "columns: a, y");
    corrupt_reason(PublicRanges::from_file_by_index(&p, 2, &[0], 1));
}
