//! SBN fitting: the held-out bound increases, a known SBN is recovered, private runs spend one
//! accountant event per iteration, bad input gets typed errors.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::sbn::{
    BinaryImage, Sbn, SbnConfig, SbnError, SbnNatural, SbnStatistics, SyntheticSbn,
    baseline_pixel_accuracy, heldout_lower_bound, load_mnist_dir, parse_idx_images, pixel_accuracy,
};

/// Batch VB: every record in every batch (rate 1), step 1.
fn batch(n: usize, iterations: u64) -> SviConfig {
    SviConfig::builder()
        .expected_batch_size(n as f64)
        .stop(Stop::Iterations { iterations })
        .step(StepSize::Constant { rho: 1.0 })
        .init_seed(3)
        .build()
        .unwrap()
}

/// Non-private batch VB (rate 1, step 1): the held-out lower bound after the last iteration is
/// well above the one after the first, and it rises over the first iterations.
#[test]
fn heldout_bound_increases_over_iterations() {
    let truth = SyntheticSbn::random(16, 3, 5);
    let train = truth.sample(400, 1);
    let test = truth.sample(200, 2);
    let model = Sbn::new(SbnConfig::builder(16, 3).build().unwrap()).unwrap();
    let bounds = RefCell::new(Vec::new());
    fit(&model, train, &batch(400, 12), |_, g| {
        let nat = SbnNatural::from_global(g);
        bounds
            .borrow_mut()
            .push(heldout_lower_bound(&model, &nat, &test));
    })
    .unwrap();
    let b = bounds.into_inner();
    assert!(b.iter().all(|x| x.is_finite()));
    assert!(b[11] > b[0] + 0.5, "bound did not increase: {b:?}");
    assert!(b[4] > b[0] && b[11] >= b[4] - 0.05, "{b:?}");
}

/// On data from a known SBN, the learned network's exact held-out log-likelihood (2^K states)
/// approaches the true network's and beats the independent-pixel model by far.
#[test]
fn learns_a_known_sbn() {
    let truth = SyntheticSbn::random(16, 3, 7);
    let train = truth.sample(1500, 1);
    let test = truth.sample(500, 2);
    let model = Sbn::new(SbnConfig::builder(16, 3).build().unwrap()).unwrap();
    // Independent pixels at the training means (the K = 0 model).
    let mut mean = [0.0; 16];
    for im in &train {
        for (m, &v) in mean.iter_mut().zip(&im.pixels) {
            *m += f64::from(v) / train.len() as f64;
        }
    }
    let independent: f64 = test
        .iter()
        .map(|im| {
            im.pixels
                .iter()
                .zip(&mean)
                .map(|(&v, &m)| if v == 1 { m.ln() } else { (1.0 - m).ln() })
                .sum::<f64>()
        })
        .sum::<f64>()
        / test.len() as f64;
    let result = fit(&model, train, &batch(1500, 40), |_, _| {})
        .unwrap()
        .result;
    let nat = SbnNatural::from_global(&result.global);
    let learned = SyntheticSbn::from_natural(&nat)
        .mean_log_likelihood(&test)
        .unwrap();
    let true_ll = truth.mean_log_likelihood(&test).unwrap();
    println!("true {true_ll:.3} learned {learned:.3} independent {independent:.3}");
    let gap = true_ll - independent;
    assert!(gap > 0.5, "test data too easy: {gap}");
    // Recover at least 80% of the true model's advantage over independent pixels.
    assert!(
        learned > independent + 0.8 * gap,
        "learned {learned} true {true_ll} independent {independent}"
    );
    assert!(
        learned < true_ll + 0.2,
        "learned beats the truth by too much: {learned} vs {true_ll}"
    );
    let acc = pixel_accuracy(&model, &nat, &test);
    let base = baseline_pixel_accuracy(&truth.sample(1500, 1), &test);
    assert!(acc > base, "accuracy {acc} baseline {base}");
}

/// A private run: epsilon within the target, a noise multiplier and a ledger reported, and the
/// result is finite.
#[test]
fn private_run_stays_within_budget() {
    let truth = SyntheticSbn::random(16, 3, 9);
    let train = truth.sample(600, 1);
    let model = Sbn::new(SbnConfig::builder(16, 3).build().unwrap()).unwrap();
    let svi = SviConfig::builder()
        .expected_batch_size(150.0)
        .step(StepSize::robbins_monro(1.0, 0.6).unwrap())
        .stop(Stop::Iterations { iterations: 4 })
        .privacy(Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        })
        .noise_seed(Some(1))
        .population(Some(600))
        .build()
        .unwrap();
    let result = fit(&model, train, &svi, |_, _| {}).unwrap().result;
    assert!(result.privacy.epsilon.unwrap() <= 1.0);
    assert!(result.privacy.noise_multiplier.unwrap() > 0.0);
    assert_eq!(result.iterations, 4);
    assert!(result.privacy.ledger.is_some());
    let nat = SbnNatural::from_global(&result.global);
    assert!(nat.mu_w.iter().chain(&nat.mu_c).all(|x| x.is_finite()));
}

/// `../shared/data/mnist10k` relative to the workspace, or `None` with a printed note.
fn mnist_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/mnist10k");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "skipped: {} is absent (MNIST test needs mnist10k)",
            dir.display()
        );
        None
    }
}

/// Non-private SBN on mnist10k (K = 100, one expected pass, S = 1600, 5 iterations): test pixel
/// accuracy clearly above the per-pixel-mean baseline, and the held-out lower bound (on 200 test
/// images) higher after the last iteration than after the first and rising over the first
/// half. Skips with a message when the data is absent. Heavy (under a minute in release):
/// `cargo test --release -p vips-models --test sbn_fit -- --ignored`.
#[test]
#[ignore]
fn mnist_nonprivate_beats_baseline_and_bound_rises() {
    let Some(dir) = mnist_dir() else { return };
    let (train, test) = load_mnist_dir(&dir, 128).unwrap();
    let model = Sbn::new(SbnConfig::builder(784, 100).build().unwrap()).unwrap();
    let svi = SviConfig::builder()
        .expected_batch_size(1600.0)
        .step(StepSize::robbins_monro(1.0, 0.6).unwrap())
        .stop(Stop::Passes { passes: 1.0 })
        .noise_seed(Some(1))
        .init_seed(1)
        .build()
        .unwrap();
    let base = baseline_pixel_accuracy(&train, &test);
    let bound_set = &test[..200];
    let bounds = RefCell::new(Vec::new());
    let result = fit(&model, train, &svi, |_, g| {
        let nat = SbnNatural::from_global(g);
        bounds
            .borrow_mut()
            .push(heldout_lower_bound(&model, &nat, bound_set));
    })
    .unwrap()
    .result;
    let nat = SbnNatural::from_global(&result.global);
    let acc = pixel_accuracy(&model, &nat, &test);
    let b = bounds.into_inner();
    println!("mnist10k non-private: accuracy {acc:.4} baseline {base:.4} bounds {b:?}");
    assert!(acc > base + 0.02, "accuracy {acc} baseline {base}");
    let last = b.len() - 1;
    assert!(b.iter().all(|x| x.is_finite()), "{b:?}");
    assert!(b[last] > b[0] + 5.0, "bound did not increase: {b:?}");
    assert!(b[last / 2] > b[0], "{b:?}");
}

/// Private SBN on mnist10k (eps = 1, delta = 1e-5, S = 3200, one expected pass = 3 releases,
/// residual statistics clipped at 0.25, seeded noise): test pixel accuracy above the per-pixel
/// baseline and below what the non-private model reaches (0.96 in docs/benchmarks.md). Before the
/// noise-level floor, the clipping and the Wiener filter this setting gave 0.526. Skips when the
/// data is absent; heavy (about 40 s in release).
#[test]
#[ignore]
fn mnist_private_lands_between_baseline_and_nonprivate() {
    let Some(dir) = mnist_dir() else { return };
    let (train, test) = load_mnist_dir(&dir, 128).unwrap();
    let mut cfg = SbnConfig::builder(784, 100);
    cfg = cfg.statistics(SbnStatistics::Residual);
    cfg = cfg.clip_fraction(0.25);
    let model = Sbn::new(cfg.build().unwrap()).unwrap();
    let svi = SviConfig::builder()
        .expected_batch_size(3200.0)
        .step(StepSize::robbins_monro(1.0, 0.6).unwrap())
        .stop(Stop::Passes { passes: 1.0 })
        .privacy(Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        })
        .noise_seed(Some(1))
        .population(Some(train.len()))
        .build()
        .unwrap();
    let base = baseline_pixel_accuracy(&train, &test);
    let result = fit(&model, train, &svi, |_, _| {}).unwrap().result;
    assert!(result.privacy.epsilon.unwrap() <= 1.0);
    let nat = SbnNatural::from_global(&result.global);
    let acc = pixel_accuracy(&model, &nat, &test);
    println!("mnist10k eps = 1, S = 3200: accuracy {acc:.4} baseline {base:.4}");
    assert!(acc > base, "accuracy {acc} not above the baseline {base}");
    assert!(acc < 0.95, "accuracy {acc} above the non-private model's");
}

#[test]
fn bad_images_are_refused() {
    let model = Sbn::new(SbnConfig::builder(4, 2).build().unwrap()).unwrap();
    assert!(matches!(model.check_images(&[]), Err(SbnError::Empty(_))));
    let short = BinaryImage { pixels: vec![0, 1] };
    assert!(matches!(
        model.check_images(&[short]),
        Err(SbnError::DimensionMismatch { .. })
    ));
    let grey = BinaryImage {
        pixels: vec![0, 1, 7, 0],
    };
    assert!(matches!(
        model.check_images(&[grey]),
        Err(SbnError::NotBinary { value: 7, .. })
    ));
    assert!(SbnConfig::builder(0, 3).build().is_err());
}

fn idx_bytes(n: u32, rows: u32, cols: u32, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for w in [0x0803u32, n, rows, cols] {
        v.extend(w.to_be_bytes());
    }
    v.extend(body);
    v
}

#[test]
fn idx_loader_plain_gzip_and_corrupt() {
    use std::io::Write;
    let p = std::path::Path::new("test");
    let bytes = idx_bytes(2, 1, 3, &[0, 127, 128, 255, 1, 200]);
    let plain = parse_idx_images(&bytes, 128, p).unwrap();
    assert_eq!(plain[0].pixels, vec![0, 0, 1]);
    assert_eq!(plain[1].pixels, vec![1, 0, 1]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes).unwrap();
    let zipped = gz.finish().unwrap();
    assert_eq!(parse_idx_images(&zipped, 128, p).unwrap(), plain);
    // Truncated body, trailing bytes, bad magic, short header, bad gzip, threshold 0.
    assert!(matches!(
        parse_idx_images(&bytes[..20], 128, p),
        Err(SbnError::Idx { .. })
    ));
    let mut long = bytes.clone();
    long.push(0);
    assert!(matches!(
        parse_idx_images(&long, 128, p),
        Err(SbnError::Idx { .. })
    ));
    let mut magic = bytes.clone();
    magic[3] = 1;
    assert!(matches!(
        parse_idx_images(&magic, 128, p),
        Err(SbnError::Idx { .. })
    ));
    assert!(matches!(
        parse_idx_images(&bytes[..10], 128, p),
        Err(SbnError::Idx { .. })
    ));
    assert!(matches!(
        parse_idx_images(&zipped[..zipped.len() / 2], 128, p),
        Err(SbnError::IdxIo {
            context: "bad gzip stream: ",
            ..
        })
    ));
    assert!(parse_idx_images(&bytes, 0, p).is_err());
}
