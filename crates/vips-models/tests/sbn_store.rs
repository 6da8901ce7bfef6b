//! SBN over a record store on disk (issue 21): IDX file -> `convert_idx` -> store ->
//! `Sbn::store_source`. The store fit equals the in-memory fit for the same seeds, and one image
//! added or removed moves every released block by at most its bound through the store path
//! (as `tests/sbn_end_to_end.rs`, the release at the initial parameters, noise off, rate 1).

mod common;

use std::path::Path;

use dp_core::{ContributionBuffer, PrivacyWall, SamplingScheme};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::{Batching, Privacy, Stop, SviConfig, VipsModel, fit, fit_source};
use vips_models::sbn::{BinaryImage, Sbn, SbnConfig, SyntheticSbn, load_idx_images};
use vips_models::store::{RecordStore, convert_idx};

const J: usize = 16; // 4 x 4 images
const K: usize = 3;
const PUBLIC_N: usize = 200;

fn dir(name: &str) -> tempfile::TempDir {
    common::dir("sbn-store", name)
}

fn idx_file(path: &Path, images: &[Vec<u8>]) {
    let mut bytes = vec![0, 0, 8, 3];
    for n in [images.len(), 4, 4] {
        bytes.extend((n as u32).to_be_bytes());
    }
    for im in images {
        bytes.extend(im);
    }
    std::fs::write(path, bytes).unwrap();
}

/// Grey-level images (0, 100 or 255: the threshold 128 binarises them) of data from a known SBN.
fn raw_images(n: usize) -> Vec<Vec<u8>> {
    SyntheticSbn::random(J, K, 4)
        .sample(n, 5)
        .into_iter()
        .enumerate()
        .map(|(i, im)| {
            im.pixels
                .iter()
                .map(|&p| {
                    if p == 1 {
                        255
                    } else if i % 2 == 0 {
                        100
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect()
}

fn model() -> Sbn {
    Sbn::new(SbnConfig::builder(J, K).build().unwrap()).unwrap()
}

#[test]
fn store_fit_is_identical_to_in_memory_fit() {
    let tmp = dir("identity");
    let d = tmp.path();
    let idx = d.join("images-idx3-ubyte");
    idx_file(&idx, &raw_images(300));
    let store = d.join("images.store");
    assert_eq!(convert_idx(&idx, &store, 128).unwrap(), 300);
    let images = load_idx_images(&idx, 128).unwrap();
    let sbn = model();
    for privacy in [
        Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        },
        Privacy::NonPrivate,
    ] {
        for batching in [
            Batching::poisson(50).unwrap(),
            Batching::FixedSize { batch_size: 50 },
        ] {
            let svi = SviConfig::builder()
                .batching(batching)
                .stop(Stop::Iterations { iterations: 3 })
                .privacy(privacy)
                .noise_seed(Some(3))
                .population(Some(300))
                .build()
                .unwrap();
            let a = fit(&sbn, images.clone(), &svi, |_, _| {}).unwrap();
            let source = sbn
                .store_source(RecordStore::open(&store).unwrap())
                .unwrap();
            let b = fit_source(&sbn, source, &svi, |_, _| {}).unwrap();
            let (ja, jb) = (
                serde_json::to_string(&a.result.global).unwrap(),
                serde_json::to_string(&b.result.global).unwrap(),
            );
            assert_eq!(ja, jb, "{privacy:?} {batching:?}");
            assert_eq!(a.result.privacy.ledger, b.result.privacy.ledger);
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

fn released(model: &Sbn, store: &Path) -> Vec<Vec<f64>> {
    let (spec, blocks) = model.release_spec().unwrap();
    let global = model
        .init_global(&mut ChaCha8Rng::seed_from_u64(7))
        .unwrap();
    let natural = model.expected_natural(&global).unwrap();
    let source = model
        .store_source(RecordStore::open(store).unwrap())
        .unwrap();
    let mut wall = PrivacyWall::from_source(source)
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .public_population_size(PUBLIC_N)
        .seed(1)
        .build()
        .unwrap();
    let r = wall
        .release(&spec, |im: &BinaryImage, buf: &mut ContributionBuffer| {
            let mut scratch = model.new_scratch();
            if model
                .record_statistic(&blocks, &natural, im, &mut scratch, buf)
                .is_err()
            {
                buf.reject_record("rejected");
            }
        })
        .unwrap();
    r.blocks()
        .iter()
        .map(|b| b.value.as_slice().to_vec())
        .collect()
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

#[test]
fn one_image_moves_every_store_block_by_at_most_its_bound() {
    let tmp = dir("neighbours");
    let d = tmp.path();
    let sbn = model();
    let bounds: Vec<f64> = sbn
        .spec()
        .blocks()
        .iter()
        .map(|b| b.bound() / PUBLIC_N as f64)
        .collect();
    let base = raw_images(40);
    let (idx0, store0) = (d.join("d.idx"), d.join("d.store"));
    idx_file(&idx0, &base);
    convert_idx(&idx0, &store0, 128).unwrap();
    let r0 = released(&sbn, &store0);
    let checker: Vec<u8> = (0..J).map(|i| if i % 2 == 0 { 255 } else { 0 }).collect();
    let mut neighbours = vec![("remove first".to_string(), base[1..].to_vec())];
    for (name, adv) in [
        ("all on", vec![255u8; J]),
        ("all off", vec![0u8; J]),
        ("checkerboard", checker),
    ] {
        let mut images = vec![adv];
        images.extend(base.iter().cloned());
        neighbours.push((format!("add {name}"), images));
    }
    for (name, images) in neighbours {
        let (idx1, store1) = (d.join("n.idx"), d.join("n.store"));
        idx_file(&idx1, &images);
        convert_idx(&idx1, &store1, 128).unwrap();
        let r1 = released(&sbn, &store1);
        let mut any = false;
        for (b, &bound) in bounds.iter().enumerate() {
            let moved = dist(&r0[b], &r1[b]);
            assert!(
                moved <= bound * (1.0 + 1e-9),
                "{name}: block {b} moved {moved} > {bound}"
            );
            any |= moved > 0.0;
        }
        assert!(any, "{name}: nothing moved");
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn a_bad_idx_file_or_a_wrong_store_is_a_typed_error() {
    let tmp = dir("bad");
    let d = tmp.path();
    let idx = d.join("short.idx");
    let mut bytes = vec![0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 4];
    bytes.extend([0u8; 20]); // 3 images of 16 pixels need 48 bytes
    std::fs::write(&idx, bytes).unwrap();
    let out = d.join("short.store");
    let e = convert_idx(&idx, &out, 128).unwrap_err();
    assert!(e.to_string().contains("short.idx"), "{e}");
    assert!(!out.exists());
    // A store of 16-pixel images does not fit a model of 9 visible units.
    let good = d.join("good.idx");
    idx_file(&good, &raw_images(5));
    let store = d.join("good.store");
    convert_idx(&good, &store, 128).unwrap();
    let small = Sbn::new(SbnConfig::builder(9, 2).build().unwrap()).unwrap();
    assert!(
        small
            .store_source(RecordStore::open(&store).unwrap())
            .is_err()
    );
    std::fs::remove_dir_all(d).unwrap();
}
