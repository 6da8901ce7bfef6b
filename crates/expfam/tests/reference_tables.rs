//! Table tests against mpmath reference values (`tests/data/reference.json`, produced by
//! `tests/data/reference.py`; provenance inside the JSON).
//!
//! Bar: relative error <= 1e-12 (`TABLE_REL_TOL`) wherever the quantity is representable in f64.
//! The table's `bessel_k` rows are checked by the unit tests of `src/bessel.rs` (the Bessel
//! functions are crate-private since issue 18; GIG's moments below go through them).

mod common;

use common::TABLE_REL_TOL;
use expfam::*;
use nalgebra::DVector;
use serde_json::Value;

fn reference() -> Value {
    let text = include_str!("data/reference.json");
    serde_json::from_str(text).expect("reference.json parses")
}

fn num(v: &Value) -> f64 {
    v.as_str()
        .expect("decimal string")
        .parse()
        .expect("a number")
}

/// Relative error with a tiny absolute floor for values that are exactly zero.
fn rel(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs().max(1e-300)
}

#[track_caller]
fn assert_rel(what: &str, got: f64, want: f64, tol: f64) {
    let e = if want == 0.0 {
        got.abs()
    } else {
        rel(got, want)
    };
    assert!(
        e <= tol,
        "{what}: got {got:e}, want {want:e}, rel err {e:e} > {tol:e}"
    );
}

#[test]
fn gig_moments_table() {
    let r = reference();
    for row in r["gig"].as_array().unwrap() {
        let (p, a, b) = (num(&row["p"]), num(&row["a"]), num(&row["b"]));
        let g = Gig::new(p, a, b).unwrap();
        let ctx = format!("GIG({p}, {a}, {b})");
        assert_rel(
            &format!("{ctx} E[x]"),
            g.mean(),
            num(&row["mean"]),
            TABLE_REL_TOL,
        );
        assert_rel(
            &format!("{ctx} E[1/x]"),
            g.expected_inverse(),
            num(&row["mean_inv"]),
            TABLE_REL_TOL,
        );
        // E[ln x] and A can pass through zero: relative to max(1, |value|).
        let want = num(&row["mean_log"]);
        assert!(
            (g.expected_log() - want).abs() <= TABLE_REL_TOL * want.abs().max(1.0),
            "{ctx} E[ln x] {} vs {want}",
            g.expected_log()
        );
        let want = num(&row["log_partition"]);
        assert!(
            (g.log_partition() - want).abs() <= TABLE_REL_TOL * want.abs().max(1.0),
            "{ctx} A {} vs {want}",
            g.log_partition()
        );
    }
}

#[test]
fn dirichlet_table() {
    let r = reference();
    for row in r["dirichlet"].as_array().unwrap() {
        let alpha: Vec<f64> = row["alpha"].as_array().unwrap().iter().map(num).collect();
        let d = Dirichlet::new(alpha.clone()).unwrap();
        let elog = d.expected_log();
        let mut single = vec![0.0; alpha.len()];
        dirichlet_expectation_into(&alpha, &mut single).unwrap();
        for (k, want) in row["expected_log"]
            .as_array()
            .unwrap()
            .iter()
            .map(num)
            .enumerate()
        {
            assert_rel(
                &format!("Dir{alpha:?} E[ln theta_{k}]"),
                elog[k],
                want,
                TABLE_REL_TOL,
            );
            assert_rel(
                &format!("slice Dir{alpha:?} E[ln theta_{k}]"),
                single[k],
                want,
                TABLE_REL_TOL,
            );
        }
        let want = num(&row["log_normalizer"]);
        assert!(
            (d.log_partition() - want).abs() <= TABLE_REL_TOL * want.abs().max(1.0),
            "Dir{alpha:?} ln B"
        );
        let want = num(&row["entropy"]);
        // The entropy is a difference of terms as large as ln B: relative to the larger of the two.
        let scale = d.log_partition().abs().max(want.abs()).max(1.0);
        assert!(
            (d.entropy() - want).abs() <= TABLE_REL_TOL * scale,
            "Dir{alpha:?} H {} vs {want}",
            d.entropy()
        );
    }
    for row in r["dirichlet_kl"].as_array().unwrap() {
        let p: Vec<f64> = row["p"].as_array().unwrap().iter().map(num).collect();
        let q: Vec<f64> = row["q"].as_array().unwrap().iter().map(num).collect();
        let kl = Dirichlet::new(p)
            .unwrap()
            .kl_divergence(&Dirichlet::new(q).unwrap())
            .unwrap();
        let want = num(&row["kl"]);
        // KL of nearly equal members is a small difference of O(1) terms: absolute 1e-13.
        assert!(
            (kl - want).abs() <= TABLE_REL_TOL * want + 1e-13,
            "KL {kl} vs {want}"
        );
    }
}

#[test]
fn gamma_table() {
    let r = reference();
    for row in r["gamma"].as_array().unwrap() {
        let (a, b) = (num(&row["shape"]), num(&row["rate"]));
        let g = Gamma::new(a, b).unwrap();
        let want = num(&row["expected_log"]);
        assert!(
            (g.expected_log() - want).abs() <= TABLE_REL_TOL * want.abs().max(1.0),
            "Gamma({a},{b}) E[ln x] {} vs {want}",
            g.expected_log()
        );
        assert_rel(
            &format!("Gamma({a},{b}) E[x]"),
            g.mean(),
            num(&row["mean"]),
            1e-15,
        );
        let want = num(&row["entropy"]);
        assert!(
            (g.entropy() - want).abs() <= TABLE_REL_TOL * want.abs().max(1.0),
            "Gamma({a},{b}) H {} vs {want}",
            g.entropy()
        );
    }
    for row in r["gamma_kl"].as_array().unwrap() {
        let p: Vec<f64> = row["p"].as_array().unwrap().iter().map(num).collect();
        let q: Vec<f64> = row["q"].as_array().unwrap().iter().map(num).collect();
        let kl = Gamma::new(p[0], p[1])
            .unwrap()
            .kl_divergence(&Gamma::new(q[0], q[1]).unwrap())
            .unwrap();
        let want = num(&row["kl"]);
        assert!(
            (kl - want).abs() <= TABLE_REL_TOL * want + 1e-13,
            "Gamma KL {kl} vs {want}"
        );
    }
}

#[test]
fn special_functions_table() {
    let r = reference();
    for row in r["special"].as_array().unwrap() {
        let x = num(&row["x"]);
        let want = num(&row["digamma"]);
        let got = digamma(x).unwrap();
        // Near the root of digamma (x ~ 1.4616) only an absolute error is meaningful.
        assert!(
            (got - want).abs() <= TABLE_REL_TOL * want.abs() + 1e-15,
            "digamma({x}) = {got} vs {want}"
        );
        if let Some(v) = row.get("ln_gamma") {
            let want = num(v);
            let got = ln_gamma(x).unwrap();
            assert!(
                (got - want).abs() <= TABLE_REL_TOL * want.abs().max(1.0),
                "ln_gamma({x}) = {got} vs {want}"
            );
        }
    }
    let _ = DVector::<f64>::zeros(0);
}
