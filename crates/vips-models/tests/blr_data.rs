//! Loaders: typed errors naming the line, label conventions, the public map, the split.

mod common;

use vips_models::blr::{
    BlrError, CsvOptions, FeatureMap, LibsvmOptions, parse_csv, parse_libsvm, stratified_split,
};

fn opts(map: Option<FeatureMap>) -> CsvOptions {
    CsvOptions {
        label: "y".into(),
        map,
    }
}

fn line_of(e: BlrError) -> usize {
    match e {
        BlrError::Parse { line, .. } => line,
        other => panic!("expected a parse error, got {other}"),
    }
}

#[test]
fn csv_bad_rows_name_their_line() {
    assert_eq!(
        line_of(parse_csv("a,y\r\n0.1,1\r\nzz,0\r\n", &opts(None)).unwrap_err()),
        3
    );
    assert_eq!(
        line_of(parse_csv("a,y\n0.1,1\n0.2\n", &opts(None)).unwrap_err()),
        3
    );
    assert_eq!(
        line_of(parse_csv("a,y\n0.1,2\n", &opts(None)).unwrap_err()),
        2
    );
    assert_eq!(
        line_of(parse_csv("a,y\nNaN,1\n", &opts(None)).unwrap_err()),
        2
    );
    assert_eq!(
        line_of(parse_csv("a,y\ninf,1\n", &opts(None)).unwrap_err()),
        2
    );
    assert_eq!(
        line_of(parse_csv("a,y\n0.1,0\n0.2,-1\n", &opts(None)).unwrap_err()),
        3
    );
    assert_eq!(
        line_of(parse_csv("a,b\n0.1,0\n", &opts(None)).unwrap_err()),
        1
    );
    assert!(matches!(
        parse_csv("a,y\n", &opts(None)),
        Err(BlrError::Empty(_))
    ));
    assert!(matches!(
        parse_csv("", &opts(None)),
        Err(BlrError::Parse { .. })
    ));
}

#[test]
fn csv_labels_and_public_map() {
    let text = "a,y,b\r\n10,-1,0\r\n0,1,1\r\n";
    let map = FeatureMap::from_ranges(&[0.0, 0.0], &[10.0, 1.0], true).unwrap();
    let loaded = parse_csv(text, &opts(Some(map))).unwrap();
    assert!(loaded.report.labels_were_signed);
    assert_eq!(loaded.report.dim, 3);
    assert_eq!(loaded.report.clipped, 0);
    assert_eq!(loaded.feature_names, vec!["a", "b", "intercept"]);
    assert!(!loaded.records[0].label() && loaded.records[1].label());
    // (10 - 5)/5 = 1, (0 - 0.5)/0.5 = -1, intercept 1; all divided by sqrt(3).
    let x = loaded.records[0].features().values().to_vec();
    let r = 3f64.sqrt();
    assert!((x[0] - 1.0 / r).abs() < 1e-12 && (x[1] + 1.0 / r).abs() < 1e-12);
    // Rows outside the public box are clipped and counted.
    let loaded = parse_csv("a,y\n100,1\n0.5,0\n", &opts(None)).unwrap();
    assert_eq!(loaded.report.clipped, 1);
    assert!(FeatureMap::from_ranges(&[1.0], &[1.0], false).is_err());
    assert!(parse_csv("a,b,y\n1,2,1\n", &opts(Some(FeatureMap::identity(3)))).is_err());
}

#[test]
fn libsvm_parsing_and_errors() {
    let o = LibsvmOptions {
        dim: Some(6),
        radius: 2.0,
    };
    let loaded = parse_libsvm("# comment\n+1 1:1 6:1 # tail\n-1 2:1 3:1 4:1 5:1 6:1\n", o).unwrap();
    assert_eq!(loaded.records.len(), 2);
    assert_eq!(loaded.report.clipped, 1); // sqrt(5)/2 > 1
    assert!(loaded.report.labels_were_signed);
    for (text, line) in [
        ("1 1:1\n1 7:1\n", 2),
        ("1 0:1\n", 1),
        ("1 2:1 2:1\n", 1),
        ("1 x:1\n", 1),
        ("1 1:nan\n", 1),
        ("2 1:1\n", 1),
        ("1 1-1\n", 1),
    ] {
        assert_eq!(line_of(parse_libsvm(text, o).unwrap_err()), line, "{text}");
    }
    assert!(parse_libsvm("", o).is_err());
    assert!(
        parse_libsvm(
            "1 1:1\n",
            LibsvmOptions {
                dim: None,
                radius: 0.0
            }
        )
        .is_err()
    );
}

#[test]
fn split_is_stratified_seeded_and_checked() {
    let text: String = std::iter::once("a,y".to_string())
        .chain((0..100).map(|i| format!("{},{}", i as f64 / 100.0, u8::from(i < 30))))
        .collect::<Vec<_>>()
        .join("\n");
    let recs = parse_csv(&text, &opts(None)).unwrap().records;
    let (train, test) = stratified_split(recs.clone(), 0.2, 3).unwrap();
    assert_eq!((train.len(), test.len()), (80, 20));
    assert_eq!(test.iter().filter(|r| r.label()).count(), 6);
    let (_, test2) = stratified_split(recs.clone(), 0.2, 3).unwrap();
    assert_eq!(test, test2);
    assert!(stratified_split(recs.clone(), 0.0, 1).is_err());
    assert!(stratified_split(recs, 1.0, 1).is_err());
}

#[test]
fn ranges_file_missing_a_feature_names_the_column() {
    let path = common::TempPath::file(
        "blr-missing-ranges",
        "ranges.csv",
        b"name,lower,upper\na,0,1\n",
    );
    let err = vips_models::blr::read_ranges_csv(&path, &["a".into(), "width".into()]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("width") && text.contains("ranges.csv"),
        "{text}"
    );
    match err {
        BlrError::InFile { source, .. } => {
            assert!(
                matches!(*source, BlrError::MissingRanges { .. }),
                "{source:?}"
            )
        }
        other => panic!("expected InFile(MissingRanges), got {other:?}"),
    }
}
