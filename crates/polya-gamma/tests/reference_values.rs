//! Moments, cumulants, density and CDF against the committed mpmath tables
//! (`tests/data/reference.py` produced `cumulants.json` and `cdf_grid.json`).

use polya_gamma::{cdf, cumulant, density};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).expect("valid JSON")
}

#[test]
fn cumulants_match_mpmath_to_1e14_relative() {
    let table = load("cumulants.json");
    let mut worst: f64 = 0.0;
    for row in table["rows"].as_array().unwrap() {
        let z = row["z"].as_f64().unwrap();
        for (i, k) in row["kappa"].as_array().unwrap().iter().enumerate() {
            let want: f64 = k.as_str().unwrap().parse().unwrap();
            let n = i as u32 + 1;
            for &sign in &[1.0, -1.0] {
                let got = cumulant(n, 1.0, sign * z).unwrap();
                if want < 1e-300 {
                    // Not representable as a normal double: the result must underflow too.
                    assert!(got < 1e-290, "n={n} z={z}: {got} vs {want}");
                    continue;
                }
                let rel = ((got - want) / want).abs();
                worst = worst.max(rel);
                assert!(rel <= 1e-14, "n={n} z={z}: {got} vs {want} (rel {rel:e})");
            }
        }
    }
    eprintln!("worst relative cumulant error: {worst:e}");
}

#[test]
fn cdf_and_density_match_mpmath_grid() {
    let table = load("cdf_grid.json");
    let (mut worst_cdf, mut worst_pdf): (f64, f64) = (0.0, 0.0);
    let mut bad: Vec<String> = Vec::new();
    for row in table["rows"].as_array().unwrap() {
        let b = row["b"].as_f64().unwrap();
        let z = row["z"].as_f64().unwrap();
        let x = row["x"].as_f64().unwrap();
        let want_cdf = row["cdf"].as_f64().unwrap();
        let want_pdf = row["pdf"].as_f64().unwrap();
        let got_cdf = cdf(b, z, x).unwrap();
        let got_pdf = density(b, z, x).unwrap();
        let e_cdf = (got_cdf - want_cdf).abs();
        // Absolute 1e-12, scaled up for densities above 1 (peaked laws at large z).
        let e_pdf = (got_pdf - want_pdf).abs() / want_pdf.max(1.0);
        worst_cdf = worst_cdf.max(e_cdf);
        worst_pdf = worst_pdf.max(e_pdf);
        if e_cdf > 1e-12 || e_pdf > 1e-12 {
            bad.push(format!(
                "b={b} z={z} x={x}: cdf {got_cdf} vs {want_cdf} ({e_cdf:e}), pdf {got_pdf} vs {want_pdf} ({e_pdf:e})"
            ));
        }
    }
    eprintln!("worst |cdf error| {worst_cdf:e}, worst pdf error {worst_pdf:e}");
    assert!(
        bad.is_empty(),
        "{} points off:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn spot_values() {
    // (b, z, x, cdf, pdf) from reference.py
    let pts = [
        (1.0, 0.0, 0.25, 0.6292225702004761, 1.8294609025356798),
        (100.0, 0.0, 25.0, 0.5130300036776382, 0.19530149629130755),
        (1000.0, 1000.0, 0.5, 0.5002820946507267, 564.1895835477563),
        (1000.0, 0.0, 250.0, 0.5041202777212358, 0.06179945805135307),
    ];
    for (b, z, x, c, f) in pts {
        let gc = cdf(b, z, x).unwrap();
        let gf = density(b, z, x).unwrap();
        eprintln!(
            "b={b} z={z}: cdf err {:e} pdf rel err {:e}",
            gc - c,
            (gf - f) / f
        );
        assert!((gc - c).abs() < 1e-12);
        assert!((gf - f).abs() < 1e-12 * f.max(1.0));
    }
}
