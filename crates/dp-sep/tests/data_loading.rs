//! UCI and CSV loaders: real folders when present (skipped with a message otherwise), and typed
//! errors for corrupt input.

mod common;
use common::TempDirPath;

use std::fs;
use std::path::PathBuf;

use dp_sep::SepError;
use dp_sep::data::csv_loader::load_csv;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{Dataset, Standardizer};

fn uci(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/uci")
        .join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipping: {} is absent", p.display());
        None
    }
}

fn temp_dir(tag: &str) -> TempDirPath {
    TempDirPath::new(&format!("dp_sep_test_{tag}"))
}

#[test]
fn wine_has_the_documented_shape_and_splits() {
    let Some(dir) = uci("wine-quality-red") else {
        return;
    };
    let wine = SplitFolder::load(&dir).unwrap();
    assert_eq!((wine.all().len(), wine.all().dim()), (1599, 11));
    assert_eq!(
        (wine.n_splits(), wine.n_hidden(), wine.n_epochs()),
        (20, 50, 40)
    );
    let (train, test) = wine.split(0).unwrap();
    assert_eq!((train.len(), test.len()), (1439, 160));
    assert!(matches!(
        wine.split(20),
        Err(SepError::InvalidParameter { .. })
    ));
    // Standardised on the training split: mean 0, std 1 (population std).
    let s = Standardizer::fit(&train);
    let z = s.transform(&train);
    let mean: f64 = (0..z.len()).map(|i| z.row(i)[3]).sum::<f64>() / z.len() as f64;
    let var: f64 = (0..z.len()).map(|i| z.row(i)[3].powi(2)).sum::<f64>() / z.len() as f64;
    assert!(mean.abs() < 1e-10 && (var - 1.0).abs() < 1e-10);
}

#[test]
fn naval_constant_columns_do_not_divide_by_zero() {
    let Some(dir) = uci("naval-propulsion-plant") else {
        return;
    };
    let naval = SplitFolder::load(&dir).unwrap();
    let (train, _) = naval.split(0).unwrap();
    let z = Standardizer::fit(&train).transform(&train);
    assert!((0..z.len()).all(|i| z.row(i).iter().all(|v| v.is_finite())));
}

fn write_folder(dir: &std::path::Path, data: &str) {
    fs::write(dir.join("data.txt"), data).unwrap();
    fs::write(dir.join("index_features.txt"), "0\n1\n").unwrap();
    fs::write(dir.join("index_target.txt"), "2\n").unwrap();
    fs::write(dir.join("n_splits.txt"), "1\n").unwrap();
    fs::write(dir.join("index_train_0.txt"), "0\n1\n").unwrap();
    fs::write(dir.join("index_test_0.txt"), "2\n").unwrap();
}

#[test]
fn corrupt_uci_folders_give_typed_errors() {
    let dir = temp_dir("uci_ok");
    write_folder(&dir, "1 2 3\n\n4\t5 6\n7 8 9\n");
    let d = SplitFolder::load(&dir).unwrap();
    let (train, test) = d.split(0).unwrap();
    assert_eq!((train.len(), test.len(), train.dim()), (2, 1, 2));

    let dir = temp_dir("uci_ragged");
    write_folder(&dir, "1 2 3\n4 5\n");
    assert!(matches!(
        SplitFolder::load(&dir),
        Err(SepError::Corrupt { .. })
    ));

    let dir = temp_dir("uci_text");
    write_folder(&dir, "1 2 x\n");
    assert!(matches!(
        SplitFolder::load(&dir),
        Err(SepError::Corrupt { .. })
    ));

    let dir = temp_dir("uci_nan");
    write_folder(&dir, "1 2 3\n4 NaN 6\n7 8 9\n");
    assert!(matches!(
        SplitFolder::load(&dir),
        Err(SepError::NonFinite { row: 1, .. })
    ));

    let dir = temp_dir("uci_empty");
    write_folder(&dir, "\n\n");
    assert!(matches!(SplitFolder::load(&dir), Err(SepError::Empty(_))));

    let dir = temp_dir("uci_missing");
    assert!(matches!(SplitFolder::load(&dir), Err(SepError::Io { .. })));

    let dir = temp_dir("uci_overlap");
    write_folder(&dir, "1 2 3\n4 5 6\n7 8 9\n");
    fs::write(dir.join("index_test_0.txt"), "1\n").unwrap();
    assert!(matches!(
        SplitFolder::load(&dir).unwrap().split(0),
        Err(SepError::Corrupt { .. })
    ));

    let dir = temp_dir("uci_range");
    write_folder(&dir, "1 2 3\n4 5 6\n7 8 9\n");
    fs::write(dir.join("index_train_0.txt"), "0\n7\n").unwrap();
    assert!(SplitFolder::load(&dir).unwrap().split(0).is_err());
}

#[test]
fn csv_loader_errors() {
    let dir = temp_dir("csv");
    let ok = dir.join("ok.csv");
    fs::write(&ok, "a,b,y\n1,2,3\n4,5,6\n").unwrap();
    let d = load_csv(&ok, 0, true).unwrap();
    assert_eq!((d.len(), d.dim(), d.target(1)), (2, 2, 4.0));
    assert!(matches!(
        load_csv(&ok, 3, true),
        Err(SepError::InvalidParameter { .. })
    ));
    let bad = dir.join("bad.csv");
    fs::write(&bad, "1,2,3\n4,five,6\n").unwrap();
    assert!(matches!(
        load_csv(&bad, 2, false),
        Err(SepError::Corrupt { .. })
    ));
    let ragged = dir.join("ragged.csv");
    fs::write(&ragged, "1,2,3\n4,5\n").unwrap();
    assert!(matches!(
        load_csv(&ragged, 2, false),
        Err(SepError::Corrupt { .. })
    ));
    let nan = dir.join("nan.csv");
    fs::write(&nan, "1,2,3\n4,inf,6\n").unwrap();
    assert!(matches!(
        load_csv(&nan, 2, false),
        Err(SepError::NonFinite { .. })
    ));
    let empty = dir.join("empty.csv");
    fs::write(&empty, "a,b\n").unwrap();
    assert!(matches!(load_csv(&empty, 1, true), Err(SepError::Empty(_))));
    assert!(matches!(
        load_csv(dir.join("none.csv"), 1, true),
        Err(SepError::Io { .. })
    ));
}

#[test]
fn dataset_rejects_bad_input() {
    assert!(matches!(
        Dataset::new(vec![], vec![], 1),
        Err(SepError::Empty(_))
    ));
    assert!(matches!(
        Dataset::new(vec![1.0], vec![1.0], 0),
        Err(SepError::Empty(_))
    ));
    assert!(matches!(
        Dataset::new(vec![1.0, 2.0, 3.0], vec![1.0], 2),
        Err(SepError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        Dataset::new(vec![f64::NAN], vec![1.0], 1),
        Err(SepError::NonFinite { .. })
    ));
    assert!(matches!(
        Dataset::new(vec![1.0], vec![f64::INFINITY], 1),
        Err(SepError::NonFinite { .. })
    ));
}

#[test]
fn committed_wine_ranges_cover_every_column() {
    let Some(dir) = uci("wine-quality-red") else {
        return;
    };
    let wine = SplitFolder::load(&dir).unwrap();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ranges/wine-quality-red.json");
    let ranges = wine.public_ranges(&path).unwrap();
    assert_eq!(ranges.features().len(), 11);
    assert_eq!((ranges.target().lower, ranges.target().upper), (0.0, 10.0));
}
