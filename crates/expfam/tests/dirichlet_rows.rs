//! The topic-matrix KL and the per-document expectation agree with the single-Dirichlet family.
//! (The row-wise expectation and normaliser behind the KL are crate-private; their unit tests are
//! in `src/dirichlet_rows.rs`.)

use expfam::*;
use nalgebra::DMatrix;

fn lambda(k: usize, v: usize) -> DMatrix<f64> {
    DMatrix::from_fn(k, v, |i, j| {
        0.01 + ((i * 7919 + j * 104_729) % 1000) as f64 / 37.0
    })
}

fn expectation(alpha: &[f64]) -> Result<Vec<f64>> {
    let mut out = vec![0.0; alpha.len()];
    dirichlet_expectation_into(alpha, &mut out)?;
    Ok(out)
}

#[test]
fn rows_match_single_dirichlet() {
    let l = lambda(7, 300);
    let kl = dirichlet_kl_rows_to_symmetric(&l, 0.3).unwrap();
    let prior = Dirichlet::new(vec![0.3; 300]).unwrap();
    for k in 0..7 {
        let row: Vec<f64> = l.row(k).iter().cloned().collect();
        let d = Dirichlet::new(row.clone()).unwrap();
        let want = d.expected_log();
        let single = expectation(&row).unwrap();
        for v in 0..300 {
            assert!((single[v] - want[v]).abs() <= 1e-14 * (1.0 + want[v].abs()));
        }
        let kl_single = d.kl_divergence(&prior).unwrap();
        assert!((kl[k] - kl_single).abs() <= 1e-10 * (1.0 + kl_single));
    }
}

/// One component is the point mass at `theta = 1` (LDA with one topic): `E[ln theta] = 0` and the
/// KL to any symmetric prior is 0. No components is still an error.
#[test]
fn one_component_is_a_point_mass() {
    assert_eq!(expectation(&[3.5]).unwrap(), vec![0.0]);
    let l = DMatrix::from_column_slice(2, 1, &[0.7, 40.0]);
    assert_eq!(
        dirichlet_kl_rows_to_symmetric(&l, 0.3).unwrap().as_slice(),
        &[0.0, 0.0]
    );
    assert!(matches!(
        expectation(&[]),
        Err(ExpFamError::TooShort { .. })
    ));
}
