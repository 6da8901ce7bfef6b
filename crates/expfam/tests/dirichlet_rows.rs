//! The topic-matrix functions agree with the single-Dirichlet ones, row by row.

use expfam::*;
use nalgebra::DMatrix;

fn lambda(k: usize, v: usize) -> DMatrix<f64> {
    DMatrix::from_fn(k, v, |i, j| {
        0.01 + ((i * 7919 + j * 104_729) % 1000) as f64 / 37.0
    })
}

#[test]
fn rows_match_single_dirichlet() {
    let l = lambda(7, 300);
    let e = dirichlet_expectation_rows(&l).unwrap();
    let ln_b = dirichlet_log_normalizer_rows(&l).unwrap();
    let kl = dirichlet_kl_rows_to_symmetric(&l, 0.3).unwrap();
    let prior = Dirichlet::new(vec![0.3; 300]).unwrap();
    for k in 0..7 {
        let row: Vec<f64> = l.row(k).iter().cloned().collect();
        let d = Dirichlet::new(row.clone()).unwrap();
        let want = d.expected_log();
        let single = dirichlet_expectation(&row).unwrap();
        for v in 0..300 {
            assert!((e[(k, v)] - want[v]).abs() <= 1e-14 * (1.0 + want[v].abs()));
            assert!((single[v] - e[(k, v)]).abs() <= 1e-14 * (1.0 + single[v].abs()));
        }
        assert!((ln_b[k] - d.log_partition()).abs() <= 1e-11 * (1.0 + ln_b[k].abs()));
        let kl_single = d.kl_divergence(&prior).unwrap();
        assert!((kl[k] - kl_single).abs() <= 1e-10 * (1.0 + kl_single));
    }
}

#[test]
fn dominant_entries_keep_full_relative_precision() {
    // Row [1.5, 1e-8]: E[ln beta_0] = psi(1.5) - psi(1.5 + 1e-8) ~ -9.348e-9 (mpmath value below);
    // the plain difference would lose 7 digits.
    let l = DMatrix::from_row_slice(1, 2, &[1.5, 1e-8]);
    let want = -9.348_021_964_006_962e-9;
    let e = dirichlet_expectation_rows(&l).unwrap();
    assert!(((e[(0, 0)] - want) / want).abs() < 1e-12, "{}", e[(0, 0)]);
}

/// One component is the point mass at `theta = 1` (LDA with one topic): `E[ln theta] = 0` and the
/// KL to any symmetric prior is 0. No components is still an error.
#[test]
fn one_component_is_a_point_mass() {
    assert_eq!(dirichlet_expectation(&[3.5]).unwrap(), vec![0.0]);
    let l = DMatrix::from_column_slice(2, 1, &[0.7, 40.0]);
    assert_eq!(
        dirichlet_expectation_rows(&l).unwrap().as_slice(),
        &[0.0, 0.0]
    );
    assert_eq!(
        dirichlet_kl_rows_to_symmetric(&l, 0.3).unwrap().as_slice(),
        &[0.0, 0.0]
    );
    assert!(matches!(
        dirichlet_expectation(&[]),
        Err(ExpFamError::TooShort { .. })
    ));
}
