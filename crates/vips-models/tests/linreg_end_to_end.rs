//! End to end, from files to the release: a UCI-format folder written to a temp dir, loaded by
//! dp-sep's loader, mapped by declared public ranges, turned into records and released through
//! the engine's wall with no noise (non-private path, q = 1, equal seeds). Between D and D' (D
//! plus one adversarial record) each block, and the joint rescaled release, moves by at most the
//! declared bounds (add/remove-one). Plus the closed-form posterior.

mod common;

use std::path::Path;

use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, PublicRanges, Standardizer};
use nalgebra::{DMatrix, DVector};
use vips_models::engine::Privacy;
use vips_models::linreg::{
    Linreg, LinregConfig, LinregGlobal, LinregRecord, NormalGamma, RowMap, batch_config, fit,
    sensitivity,
};

const D: usize = 3;

fn base_rows() -> Vec<[f64; D + 1]> {
    (0..40)
        .map(|i| {
            let t = i as f64;
            let (a, b, c) = ((t * 0.7).sin() * 4.0, (t * 0.3).cos() * 8.0, t % 5.0);
            [
                a,
                b,
                c,
                0.5 * a - 0.2 * b + 0.1 * c + 1.0 + 0.3 * (t * 1.3).sin(),
            ]
        })
        .collect()
}

/// Loads the folder, maps by public ranges and releases (non-private, q = 1).
fn release(dir: &Path, population: usize) -> LinregGlobal {
    let data = SplitFolder::load(dir).unwrap();
    let ranges = PublicRanges::uniform(
        D,
        PublicRange::new(-10.0, 10.0).unwrap(),
        PublicRange::new(-20.0, 20.0).unwrap(),
    );
    let (train, _) = data.split(0).unwrap();
    let z = Standardizer::from_public_ranges(&ranges).transform(&train);
    let map = RowMap::new(D, Some(1.2)).unwrap();
    let records: Vec<LinregRecord> = (0..z.len())
        .map(|i| map.record(z.row(i), z.target(i)).unwrap().0)
        .collect();
    let model = Linreg::new(LinregConfig::builder(D + 1).build().unwrap());
    let cfg = batch_config(population, Privacy::NonPrivate, Some(7)).unwrap();
    fit(&model, records, &cfg).unwrap().result.global
}

fn sym_frobenius(a: &DMatrix<f64>) -> f64 {
    a.iter().map(|v| v * v).sum::<f64>().sqrt()
}

#[test]
fn neighbouring_releases_move_by_at_most_the_bounds() {
    let adversaries: [[f64; D + 1]; 4] = [
        [1e300, -1e300, 1e300, 1e3],
        [1e9, 1e9, 1e9, -1e3],
        [10.0, 10.0, 10.0, 20.0],
        [0.0, 0.0, 0.0, 1e3],
    ];
    let base = base_rows();
    let dir_guard = tempdir("linreg-e2e-base");
    let dir = dir_guard.path();
    common::write_uci_folder(dir, &base, 30);
    // The population is public and the same on both sides (the M-step's N).
    let g = release(dir, 31);
    let mut tight = 0.0_f64;
    for (k, adv) in adversaries.iter().enumerate() {
        let mut rows = base[..30].to_vec();
        rows.push(*adv);
        rows.extend_from_slice(&base[30..]);
        let dir2_guard = tempdir(&format!("linreg-e2e-adv{k}"));
        let dir2 = dir2_guard.path();
        common::write_uci_folder(dir2, &rows, 31);
        let g2 = release(dir2, 31);
        let da = sym_frobenius(&(g2.xx() - g.xx()));
        let db = (g2.xy() - g.xy()).norm();
        let dc = (g2.yy() - g.yy()).abs();
        let tol = 1e-9;
        assert!(da <= sensitivity::XX_BOUND + tol, "xx moved {da}");
        assert!(db <= sensitivity::XY_BOUND + tol, "xy moved {db}");
        assert!(dc <= sensitivity::YY_BOUND + tol, "yy moved {dc}");
        // The released triple is (A, b, s c): its joint move is bounded by the group's bound.
        let s = sensitivity::YY_SCALE;
        let joint = (da * da + db * db + (s * dc) * (s * dc)).sqrt();
        assert!(
            joint <= sensitivity::JOINT_BOUND + tol,
            "joint move {joint}"
        );
        tight = tight.max(da.max(db).max(dc));
    }
    // The adversaries reach the bounds (the test would notice a map that lets them past).
    assert!(tight > 0.99, "no adversary reached a bound: {tight}");
}

#[test]
fn nan_in_a_file_is_refused_at_loading() {
    let mut rows = base_rows();
    rows[3][1] = f64::NAN;
    let dir_guard = tempdir("linreg-e2e-nan");
    let dir = dir_guard.path();
    common::write_uci_folder(dir, &rows, 30);
    assert!(SplitFolder::load(dir).is_err());
    assert!(LinregRecord::new(vec![f64::NAN, 0.0], 0.0).is_err());
    assert!(LinregRecord::new(vec![0.0, 0.0], f64::NAN).is_err());
    assert!(
        RowMap::new(2, None)
            .unwrap()
            .record(&[f64::INFINITY, 0.0], 0.0)
            .is_err()
    );
}

#[test]
fn posterior_matches_the_closed_form() {
    // Rows inside the box and the unit ball: no clipping, so the sums are the data's.
    let rows: Vec<(Vec<f64>, f64)> = (0..50)
        .map(|i| {
            let t = i as f64;
            let x = vec![0.4 * (t * 0.9).sin(), 0.3 * (t * 0.4).cos(), 0.5];
            let y = 0.8 * x[0] - 0.5 * x[1] + 0.2 + 0.05 * (t * 2.1).sin();
            (x, y)
        })
        .collect();
    let cfg = LinregConfig::builder(3)
        .prior_precision(0.5)
        .noise_prior(2.0, 0.1)
        .build()
        .unwrap();
    let records: Vec<LinregRecord> = rows
        .iter()
        .map(|(x, y)| {
            let (r, clipped) = LinregRecord::new(x.clone(), *y).unwrap();
            assert!(!clipped);
            r
        })
        .collect();
    let fitted = fit(
        &Linreg::new(cfg),
        records,
        &batch_config(50, Privacy::NonPrivate, None).unwrap(),
    )
    .unwrap()
    .result;
    let post = fitted.global.posterior();
    let x = DMatrix::from_fn(50, 3, |i, j| rows[i].0[j]);
    let y = DVector::from_fn(50, |i, _| rows[i].1);
    let lambda = x.transpose() * &x + DMatrix::identity(3, 3) * 0.5;
    let m = lambda.clone().try_inverse().unwrap() * x.transpose() * &y;
    let rate = 0.1 + 0.5 * (y.dot(&y) - m.dot(&(&lambda * &m)));
    for j in 0..3 {
        assert!((post.mean()[j] - m[j]).abs() < 1e-8, "mean {j}");
    }
    let (shape, r) = post.noise_precision();
    assert!((shape - (2.0 + 25.0)).abs() < 1e-12);
    assert!((r - rate).abs() < 1e-8, "rate {r} vs {rate}");
    // Predictive: Student-t with 2a dof, scale^2 = (b/a)(1 + x^T Lambda^-1 x).
    let x0 = [0.1, -0.2, 0.5];
    let (loc, s2, dof) = post.predictive_t(&x0);
    let xv = DVector::from_column_slice(&x0);
    let q = (lambda.try_inverse().unwrap() * &xv).dot(&xv);
    assert!((loc - m.dot(&xv)).abs() < 1e-8);
    assert!((s2 - rate / shape * (1.0 + q)).abs() < 1e-8);
    assert_eq!(dof, 2.0 * shape);
    // And the same through the public constructor.
    let direct = NormalGamma::from_sums(
        &cfg,
        &(x.transpose() * &x),
        &(x.transpose() * &y),
        y.dot(&y),
        50.0,
    )
    .unwrap();
    assert!((direct.mean() - post.mean()).norm() < 1e-8);
}

fn tempdir(name: &str) -> tempfile::TempDir {
    common::dir("vips-linreg", name)
}
