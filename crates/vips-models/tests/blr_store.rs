//! BLR over a record store on disk (issue 21): the store fit equals the in-memory fit for the
//! same seeds, and one row added or removed moves each released statistic by at most its bound
//! through the store path (LIBSVM file -> `convert_libsvm` -> store -> `fit_source`).

mod common;

use std::path::Path;

use common::{assert_blr_bounds, blr_store_release};
use vips_models::blr::{Blr, BlrConfig, LibsvmOptions, load_libsvm};
use vips_models::engine::{Batching, Privacy, Stop, SviConfig, fit, fit_source};
use vips_models::store::{RecordStore, convert_libsvm};

fn dir(name: &str) -> tempfile::TempDir {
    common::dir("blr-store", name)
}

/// LIBSVM rows over `dim` features, some outside the unit ball after scaling (clipped).
fn rows(n: usize, dim: usize) -> String {
    (0..n)
        .map(|i| {
            let y = if i % 3 == 0 { "+1" } else { "-1" };
            format!(
                "{y} {}:{} {}:0.5 {}:-{}\n",
                1 + i % 5,
                (i % 9) as f64 / 4.0,
                6 + i % 7,
                14 + i % (dim - 13),
                (i % 4) as f64
            )
        })
        .collect()
}

fn options(dim: usize) -> LibsvmOptions {
    LibsvmOptions {
        dim: Some(dim),
        radius: 2.0,
    }
}

fn source(blr: &Blr, path: &Path) -> vips_models::store::BlrStoreSource {
    blr.store_source(RecordStore::open(path).unwrap()).unwrap()
}

#[test]
fn store_fit_is_identical_to_in_memory_fit() {
    let tmp = dir("identity");
    let d = tmp.path();
    let dim = 20;
    let text = d.join("rows.svm");
    std::fs::write(&text, rows(600, dim)).unwrap();
    let store = d.join("rows.store");
    let (written, clipped) = convert_libsvm(&text, &store, options(dim)).unwrap();
    let loaded = load_libsvm(&text, options(dim)).unwrap();
    assert_eq!(written as usize, loaded.records.len());
    assert_eq!(clipped as usize, loaded.report.clipped);
    assert!(clipped > 0, "some rows are clipped");
    let blr = Blr::new(BlrConfig::builder(dim).build().unwrap());
    for privacy in [
        Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        },
        Privacy::NonPrivate,
    ] {
        for batching in [
            Batching::poisson(100).unwrap(),
            Batching::FixedSize { batch_size: 100 },
        ] {
            let svi = SviConfig::builder()
                .batching(batching)
                .stop(Stop::Iterations { iterations: 4 })
                .privacy(privacy)
                .noise_seed(Some(5))
                .population(Some(600))
                .build()
                .unwrap();
            let a = fit(&blr, loaded.records.clone(), &svi, |_, _| {}).unwrap();
            let b = fit_source(&blr, source(&blr, &store), &svi, |_, _| {}).unwrap();
            let (ga, gb) = (&a.result.global, &b.result.global);
            assert_eq!(ga.h(), gb.h(), "{privacy:?} {batching:?}");
            assert_eq!(ga.likelihood_precision(), gb.likelihood_precision());
            assert_eq!(ga.posterior().mean(), gb.posterior().mean());
            assert_eq!(a.result.privacy.ledger, b.result.privacy.ledger);
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// `(h, P)` of the noise-free batch release over the store converted from `text`.
fn released(d: &Path, name: &str, dim: usize, text: &str) -> (Vec<f64>, Vec<f64>) {
    let input = d.join(format!("{name}.svm"));
    std::fs::write(&input, text).unwrap();
    let store = d.join(format!("{name}.store"));
    convert_libsvm(&input, &store, options(dim)).unwrap();
    blr_store_release(&store, dim)
}

/// As `tests/blr_end_to_end.rs`, through the store: `h` moves by at most 1/2, `P` by 1/4.
#[test]
fn one_row_moves_each_store_statistic_by_at_most_its_bound() {
    let tmp = dir("neighbours");
    let d = tmp.path();
    let dim = 20;
    let base = rows(50, dim);
    let dense: Vec<String> = (1..=dim).map(|i| format!("{i}:1e200")).collect();
    for (label, neighbour) in [
        (
            "remove first row",
            base.split_once('\n').unwrap().1.to_string(),
        ),
        (
            "add adversarial row",
            format!("-1 {}\n{base}", dense.join(" ")),
        ),
        (
            "add adversarial row last",
            format!("{base}+1 {}\n", dense.join(" ")),
        ),
    ] {
        let r0 = released(d, "d", dim, &base);
        let r1 = released(d, "d1", dim, &neighbour);
        assert_blr_bounds(label, &r0, &r1);
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn a_libsvm_conversion_needs_a_dimension_and_names_bad_lines() {
    let tmp = dir("bad");
    let d = tmp.path();
    let text = d.join("rows.svm");
    std::fs::write(&text, "1 1:0.5\n0 30:1\n").unwrap();
    let out = d.join("rows.store");
    let no_dim = LibsvmOptions {
        dim: None,
        radius: 1.0,
    };
    assert!(convert_libsvm(&text, &out, no_dim).is_err());
    let e = convert_libsvm(&text, &out, options(20)).unwrap_err();
    let message = e.to_string();
    assert!(
        message.contains("rows.svm") && message.contains("line 2"),
        "{message}"
    );
    assert!(!out.exists());
    // A bag-of-words store is not a BLR store.
    let bow = d.join("bow.store");
    let doc = vips_models::lda::corpus::Document::new(vec![(1, 2)]).unwrap();
    vips_models::store::write_documents(&bow, 20, [Ok(doc)]).unwrap();
    let blr = Blr::new(BlrConfig::builder(20).build().unwrap());
    assert!(blr.store_source(RecordStore::open(&bow).unwrap()).is_err());
    std::fs::remove_dir_all(d).unwrap();
}
