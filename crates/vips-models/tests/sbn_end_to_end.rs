//! End-to-end add/remove-one neighbouring test for the SBN, from the public entry points a user
//! calls: an IDX image file written to a temporary directory -> `load_idx_images` (binarised at
//! the public threshold) -> the records check the engine runs before the wall -> the privacy wall's
//! release of every statistic at the data-independent initial parameters, with the noise off
//! (non-private mode: the same sampling, clipping and normalisation), Poisson rate 1 and the same
//! public population and seeds for both datasets. This is the test-only seam: the SBN M-step
//! post-processes the release (floors, Wiener filter), so the release itself is compared.
//!
//! Removing or adding one image (adversarial ones: all pixels on, all off, a checkerboard) must
//! move every released block by at most its declared bound divided by the public `S`, and the
//! blocks jointly as the wall clips them: `sum_b (|d_b| / (B_b / S))^2 <= number of blocks`.

mod common;
use common::TempPath;

use dp_core::{ContributionBuffer, PrivacyWall, SamplingScheme};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::VipsModel;
use vips_models::sbn::{
    BinaryImage, GRelease, Sbn, SbnConfig, SbnStatistics, SyntheticSbn, load_idx_images,
};

const J: usize = 16; // 4 x 4 images
const K: usize = 3;
const PUBLIC_N: usize = 200;

fn idx_file(name: &str, images: &[Vec<u8>]) -> TempPath {
    let mut bytes = vec![0, 0, 8, 3];
    for n in [images.len(), 4, 4] {
        bytes.extend((n as u32).to_be_bytes());
    }
    for im in images {
        bytes.extend(im);
    }
    TempPath::file("vips-sbn-e2e", name, &bytes)
}

/// Raw grey-level images (0 or 255) of data from a known SBN.
fn raw_images(n: usize) -> Vec<Vec<u8>> {
    SyntheticSbn::random(J, K, 4)
        .sample(n, 5)
        .into_iter()
        .map(|im| im.pixels.iter().map(|&p| p * 255).collect())
        .collect()
}

fn released(model: &Sbn, path: &std::path::Path) -> Vec<Vec<f64>> {
    let images: Vec<BinaryImage> = load_idx_images(path, 128).unwrap();
    model.check_records(&images).unwrap();
    let (spec, blocks) = model.release_spec().unwrap();
    let global = model
        .init_global(&mut ChaCha8Rng::seed_from_u64(7))
        .unwrap();
    let natural = model.expected_natural(&global).unwrap();
    let mut wall = PrivacyWall::builder(images)
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

fn check_model(model: &Sbn, tag: &str) {
    let bounds: Vec<f64> = model
        .spec()
        .blocks()
        .iter()
        .map(|b| b.bound() / PUBLIC_N as f64)
        .collect();
    let base = raw_images(40);
    let r0 = released(model, &idx_file(&format!("{tag}-d.idx"), &base));
    let checker: Vec<u8> = (0..J).map(|i| if i % 2 == 0 { 255 } else { 0 }).collect();
    let mut neighbours = vec![("remove first".to_string(), base[1..].to_vec())];
    for (name, adv) in [
        ("all on", vec![255u8; J]),
        ("all off", vec![0u8; J]),
        ("checkerboard", checker),
    ] {
        let mut d = vec![adv];
        d.extend(base.iter().cloned());
        neighbours.push((format!("add {name}"), d));
    }
    for (name, images) in neighbours {
        let r1 = released(model, &idx_file(&format!("{tag}-n.idx"), &images));
        let mut joint = 0.0;
        let mut any = false;
        for (b, &bound) in bounds.iter().enumerate() {
            let moved = dist(&r0[b], &r1[b]);
            assert!(
                moved <= bound * (1.0 + 1e-9),
                "{tag} {name}: block {b} moved {moved} > {bound}"
            );
            joint += (moved / bound).powi(2);
            any |= moved > 0.0;
        }
        let k = bounds.len() as f64;
        assert!(
            joint <= k * (1.0 + 1e-9),
            "{tag} {name}: joint {joint} > {k}"
        );
        assert!(any, "{tag} {name}: nothing moved");
    }
}

#[test]
fn images_removed_or_added_move_every_block_by_at_most_its_bound() {
    for (tag, statistics, g, clip) in [
        ("paper-unit", SbnStatistics::Paper, GRelease::PerUnit, 1.0),
        (
            "residual-pooled",
            SbnStatistics::Residual,
            GRelease::Pooled,
            0.25,
        ),
    ] {
        let mut cfg = SbnConfig::builder(J, K);
        cfg = cfg.statistics(statistics);
        cfg = cfg.g_release(g);
        cfg = cfg.clip_fraction(clip);
        check_model(&Sbn::new(cfg.build().unwrap()).unwrap(), tag);
    }
}

#[test]
fn a_wrong_size_image_is_refused_before_any_release() {
    let model = Sbn::new(SbnConfig::builder(J, K).build().unwrap()).unwrap();
    let bad = vec![BinaryImage {
        pixels: vec![0; J + 1],
    }];
    assert!(matches!(
        model.check_records(&bad),
        Err(vips_models::engine::EngineError::InvalidRecords { .. })
    ));
}
