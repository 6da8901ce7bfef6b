//! End-to-end add/remove-one neighbouring test for BLR, from the public entry points a user calls:
//! a CSV (and a LIBSVM) file written to a temporary directory -> `load_csv` / `load_libsvm` with a
//! public map into the unit ball -> `blr::fit` with one batch-VB iteration (`rho = 1`), the noise
//! off (non-private: the same sampling, clipping and normalisation), Poisson rate 1 and the same
//! declared public population for both datasets.
//!
//! After one step from the data-independent initial parameters, `h = N s1~ = sum_n clip(s1_n)`
//! and `P = N s2~` is the released second moment (projected onto the positive-definite cone,
//! a 1-Lipschitz map), so removing or adding one row (an adversarial one: huge values, an extreme
//! label) must move `h` by at most 1/2, `P` by at most 1/4 (Frobenius), and the two jointly as the
//! wall clips them: `(|dh| / (1/2))^2 + (|dP| / (1/4))^2 <= 2`.

mod common;
use common::TempPath;

use vips_models::blr::{
    self, Blr, BlrConfig, BlrRecord, CsvOptions, FeatureMap, LibsvmOptions, load_csv, load_libsvm,
};
use vips_models::engine::Privacy;

const PUBLIC_N: usize = 500;

fn temp_file(name: &str, text: &str) -> TempPath {
    TempPath::file("vips-blr-e2e", name, text.as_bytes())
}

/// `(h, P)` after one non-private batch step on `records`.
fn released(dim: usize, records: Vec<BlrRecord>) -> (Vec<f64>, Vec<f64>) {
    let model = Blr::new(BlrConfig::builder(dim).build().unwrap());
    let svi = blr::batch_config(PUBLIC_N, 1, Privacy::NonPrivate, Some(1)).unwrap();
    let g = blr::fit(&model, records, &svi).unwrap().result.global;
    (
        g.h().as_slice().to_vec(),
        g.likelihood_precision().as_slice().to_vec(),
    )
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn check(label: &str, dim: usize, d: Vec<BlrRecord>, neighbour: Vec<BlrRecord>) {
    let (h0, p0) = released(dim, d);
    let (h1, p1) = released(dim, neighbour);
    let (dh, dp) = (dist(&h0, &h1), dist(&p0, &p1));
    let tol = 1.0 + 1e-9;
    assert!(dh <= 0.5 * tol, "{label}: h moved {dh} > 1/2");
    assert!(dp <= 0.25 * tol, "{label}: P moved {dp} > 1/4");
    let joint = (dh / 0.5).powi(2) + (dp / 0.25).powi(2);
    assert!(joint <= 2.0 * tol, "{label}: joint {joint} > 2");
    // The neighbour must actually differ (a test that cannot fail is a defect).
    assert!(dh > 0.0 || dp > 0.0, "{label}: nothing moved");
}

fn csv_rows(n: usize) -> String {
    let mut text = String::from("a,b,c,target\n");
    for i in 0..n {
        let t = i as f64;
        text.push_str(&format!(
            "{:.3},{:.3},{:.3},{}\n",
            5.0 + 4.0 * (0.37 * t).sin(),
            5.0 + 4.0 * (0.11 * t).cos(),
            (t * 0.7) % 10.0,
            i % 3 == 0
        ));
    }
    text.replace("true", "1").replace("false", "0")
}

fn csv_options() -> CsvOptions {
    CsvOptions {
        label: "target".into(),
        map: Some(FeatureMap::from_ranges(&[0.0; 3], &[10.0; 3], true).unwrap()),
    }
}

#[test]
fn csv_rows_removed_or_added_move_each_statistic_by_at_most_its_bound() {
    let rows = csv_rows(60);
    let path = temp_file("d.csv", &rows);
    let d = load_csv(&path, &csv_options()).unwrap();
    let dim = d.report.dim;
    // D' = D minus its first row.
    let minus_first = {
        let text: String = rows
            .lines()
            .enumerate()
            .filter(|&(i, _)| i != 1)
            .map(|(_, l)| format!("{l}\n"))
            .collect();
        load_csv(temp_file("d_minus_first.csv", &text), &csv_options()).unwrap()
    };
    check(
        "remove first row",
        dim,
        d.records.clone(),
        minus_first.records,
    );
    // D' = D plus an adversarial first row: huge values (clipped into the ball), each label.
    for (values, y) in [
        ("1e300,-1e300,1e300", 1),
        ("-1e12,0,1e12", 0),
        ("10,10,10", 1),
    ] {
        let mut text = String::from("a,b,c,target\n");
        text.push_str(&format!("{values},{y}\n"));
        text.push_str(rows.split_once('\n').unwrap().1);
        let plus = load_csv(temp_file("d_plus.csv", &text), &csv_options()).unwrap();
        check(
            &format!("add row {values} label {y}"),
            dim,
            d.records.clone(),
            plus.records,
        );
    }
}

#[test]
fn libsvm_rows_removed_or_added_move_each_statistic_by_at_most_its_bound() {
    let dim = 20;
    let mut rows = String::new();
    for i in 0..50usize {
        let y = if i % 2 == 0 { "+1" } else { "-1" };
        rows.push_str(&format!("{y} {}:1 {}:0.5\n", 1 + i % 7, 8 + i % 11));
    }
    let options = LibsvmOptions {
        dim: Some(dim),
        radius: 2.0,
    };
    let d = load_libsvm(temp_file("d.svm", &rows), options).unwrap();
    let minus_first = load_libsvm(
        temp_file("d_minus.svm", rows.split_once('\n').unwrap().1),
        options,
    )
    .unwrap();
    check(
        "remove first row",
        dim,
        d.records.clone(),
        minus_first.records,
    );
    // Adversarial: every feature active with a huge value, and the extreme label.
    let dense: Vec<String> = (1..=dim).map(|i| format!("{i}:1e200")).collect();
    let text = format!("-1 {}\n{rows}", dense.join(" "));
    let plus = load_libsvm(temp_file("d_plus.svm", &text), options).unwrap();
    check("add adversarial row", dim, d.records, plus.records);
}

#[test]
fn a_wrong_dimension_row_is_refused_at_loading_time_naming_file_and_line() {
    let path = temp_file("bad.svm", "+1 1:1\n-1 2:1 21:1\n");
    let err = load_libsvm(
        &path,
        LibsvmOptions {
            dim: Some(20),
            radius: 1.0,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("bad.svm") && err.contains("line 2"), "{err}");
    let path = temp_file("bad.csv", "a,b,target\n1,2,1\n1,2,3,0\n");
    let err = load_csv(
        &path,
        &CsvOptions {
            label: "target".into(),
            map: None,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("bad.csv") && err.contains("line 3"), "{err}");
}
