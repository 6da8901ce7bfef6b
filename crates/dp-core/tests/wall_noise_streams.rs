//! Large releases draw their noise from per-span streams in parallel: the released values do
//! not depend on the number of threads, the spans are independent draws of the declared std,
//! and the seed still decides everything.

mod common;

use common::in_pool;
use dp_core::{ContributionBuffer, PrivacyWall, Release, ReleaseSpec, SamplingScheme};

/// An LDA-shaped matrix block (50 x 2,000 = 100,000 entries, four noise spans), a vector and an
/// unfloored symmetric block (d = 300: 45,150 packed entries): well above the serial threshold.
fn spec() -> (ReleaseSpec, dp_core::MatrixBlock) {
    let mut b = ReleaseSpec::builder("large");
    let m = b.matrix("topics", 50, 2000, 1.0).unwrap();
    b.vector("v", 10, 1.0).unwrap();
    b.symmetric("s", 300, 1.0).unwrap();
    (b.build().unwrap(), m)
}

fn release(threads: usize, seed: u64) -> Vec<Release> {
    let (spec, m) = spec();
    in_pool(threads, || {
        let records: Vec<usize> = (0..400).collect();
        let mut wall = PrivacyWall::builder(records)
            .sampling(SamplingScheme::poisson(0.5).unwrap())
            .epsilon_delta(1e6, 1e-5)
            .noise_multiplier(1.0)
            .public_population_size(400)
            .seed(seed)
            .build()
            .unwrap();
        (0..2)
            .map(|_| {
                wall.release(&spec, |r: &usize, buf: &mut ContributionBuffer| {
                    buf.push_matrix(m, r % 50, (r * 7) % 2000, 0.5);
                })
                .unwrap()
            })
            .collect()
    })
}

#[test]
fn large_releases_are_bit_identical_at_any_thread_count() {
    let one = release(1, 11);
    for threads in [2, 4] {
        let other = release(threads, 11);
        for (a, b) in one.iter().zip(&other) {
            for (x, y) in a.blocks().iter().zip(b.blocks()) {
                let same = x
                    .value
                    .as_slice()
                    .iter()
                    .zip(y.value.as_slice())
                    .all(|(p, q)| p.to_bits() == q.to_bits());
                assert!(same, "block {} differs at {threads} threads", x.name);
            }
        }
    }
    // Another seed, other noise; two releases of one wall, other noise.
    let seeded = release(1, 12);
    assert_ne!(one[0].blocks()[0].value, seeded[0].blocks()[0].value);
    assert_ne!(one[0].blocks()[0].value, one[1].blocks()[0].value);
}

/// The noise on the matrix block, span by span: mean about 0 and std about the declared one
/// in every span (4 sigma bands for 25,000 draws), and no two spans alike (a stream reused
/// across spans would repeat its draws).
#[test]
fn every_span_is_noise_of_the_declared_std() {
    let releases = release(2, 5);
    let block = &releases[0].blocks()[0];
    let std = block.noise_std;
    let values = block.value.as_slice();
    // The statistic touches at most 200 of the 100,000 entries per release; the rest is noise.
    let spans: Vec<&[f64]> = values.chunks(1 << 15).collect();
    assert_eq!(spans.len(), 4);
    for (i, span) in spans.iter().enumerate() {
        let n = span.len() as f64;
        let mean = span.iter().sum::<f64>() / n;
        let var = span.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        assert!(mean.abs() < 4.0 * std / n.sqrt(), "span {i}: mean {mean}");
        let rel = (var.sqrt() / std - 1.0).abs();
        assert!(
            rel < 4.0 / (2.0 * n).sqrt(),
            "span {i}: std ratio off by {rel}"
        );
    }
    for i in 0..spans.len() {
        for j in i + 1..spans.len() {
            let equal = spans[i]
                .iter()
                .zip(spans[j])
                .filter(|(a, b)| a.to_bits() == b.to_bits())
                .count();
            assert!(equal < 10, "spans {i} and {j} share {equal} values");
        }
    }
}
