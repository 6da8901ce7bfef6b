//! Issue 17: fuzz-style property tests, one strategy per file format dp-sep reads (the UCI split
//! folder's `data.txt` and `index_*.txt`, ranges JSON, CSV). Each feeds mutated valid files and
//! arbitrary bytes to the loader and asserts "typed error or valid result, never a panic".
//! Bounded: a fixed number of small cases per format.

mod common;
use common::TempDirPath;

use std::fs;

use dp_sep::data::PublicRanges;
use dp_sep::data::csv_loader::load_csv;
use dp_sep::data::split_folder::SplitFolder;
use proptest::prelude::*;

fn dir(tag: &str) -> TempDirPath {
    TempDirPath::new(&format!("dp_sep_fuzz_{tag}"))
}

const DATA: &str = "1 2 3\n4 5 6.5\n7 8 -9\n10 11 12\n";
const TRAIN: &str = "0\n1\n3\n";
const TEST: &str = "2\n";
const RANGES: &str = r#"{"columns": ["a", "b", "y"], "ranges": {"a": {"lower": 0, "upper": 20}, "b": {"lower": 0, "upper": 20}, "y": {"lower": -10, "upper": 20, "centre": 1, "scale": 3}}}"#;
const CSV: &str = "a,b,y\n1,2,3\n4,5,6\n7,8,9\n";

/// A valid file mutated: bytes replaced, inserted or deleted at random positions.
fn mutated(valid: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let len = valid.len();
    prop::collection::vec((0..len + 1, any::<u8>(), 0u8..3), 0..6).prop_map(move |edits| {
        let mut b = valid.as_bytes().to_vec();
        for (pos, byte, op) in edits {
            let pos = pos.min(b.len());
            match op {
                0 if pos < b.len() => b[pos] = byte,
                1 => b.insert(pos, byte),
                _ if pos < b.len() => {
                    b.remove(pos);
                }
                _ => {}
            }
        }
        b
    })
}

/// A mutated file, arbitrary bytes, or tokens chosen to hit edge cases.
fn file(valid: &'static str) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => mutated(valid),
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => prop::collection::vec(
            prop::sample::select(vec![
                "0", "1", "3", "-1", "1e308", "-1e308", "NaN", "inf", "1e400", "3.0", "2.5",
                "99999999999999999999", " ", "\n", "\t", ",", "\"", "{", "}", ":", "[", "]",
            ]),
            0..24,
        )
        .prop_map(|t| t.concat().into_bytes()),
    ]
}

fn write_folder(
    d: &std::path::Path,
    data: &[u8],
    train: &[u8],
    test: &[u8],
    features: &[u8],
    target: &[u8],
) {
    fs::write(d.join("data.txt"), data).unwrap();
    fs::write(d.join("index_train_0.txt"), train).unwrap();
    fs::write(d.join("index_test_0.txt"), test).unwrap();
    fs::write(d.join("index_features.txt"), features).unwrap();
    fs::write(d.join("index_target.txt"), target).unwrap();
    fs::write(d.join("n_splits.txt"), "1\n").unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn uci_data_txt_never_panics(data in file(DATA)) {
        let d = dir("data");
        write_folder(&d, &data, TRAIN.as_bytes(), TEST.as_bytes(), b"0\n1\n", b"2\n");
        if let Ok(set) = SplitFolder::load(&d) {
            let n = set.all().len();
            prop_assert!(n >= 1);
            if let Ok((train, test)) = set.split(0) {
                prop_assert_eq!(train.dim(), test.dim());
                prop_assert!(train.targets().iter().all(|v| v.is_finite()));
            }
        }
    }

    #[test]
    fn uci_index_files_never_panic(
        train in file(TRAIN),
        test in file(TEST),
        features in file("0\n1\n"),
        target in file("2\n"),
    ) {
        let d = dir("index");
        write_folder(&d, DATA.as_bytes(), &train, &test, &features, &target);
        if let Ok(set) = SplitFolder::load(&d)
            && let Ok((tr, te)) = set.split(0)
        {
            // A valid split lists each record at most once, in one of the two sets.
            prop_assert!(tr.len() + te.len() <= set.all().len());
        }
    }

    #[test]
    fn ranges_json_never_panics(json in file(RANGES)) {
        let d = dir("ranges");
        let path = d.join("r.json");
        fs::write(&path, &json).unwrap();
        if let Ok(r) = PublicRanges::from_file_by_index(&path, 3, &[0, 1], 2) {
            prop_assert_eq!(r.features().len(), 2);
            for x in r.features().iter().chain([r.target()]) {
                prop_assert!(x.lower < x.upper && x.scale() > 0.0 && x.centre().is_finite());
            }
        }
        let names = ["a".to_string(), "b".to_string()];
        let _ = PublicRanges::from_file(&path, &names, "y");
    }

    #[test]
    fn csv_never_panics(csv in file(CSV), target in 0usize..4, header in any::<bool>()) {
        let d = dir("csv");
        let path = d.join("f.csv");
        fs::write(&path, &csv).unwrap();
        if let Ok(data) = load_csv(&path, target, header) {
            prop_assert!(!data.is_empty() && data.dim() >= 1);
            prop_assert!(data.targets().iter().all(|v| v.is_finite()));
        }
    }
}
