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

/// The matrix and the vector without the symmetric block: on a pool of several threads its
/// noise is drawn alongside the sums (dp-core's `NoiseAhead`), on one thread after them.
fn spec_without_symmetric() -> (ReleaseSpec, dp_core::MatrixBlock) {
    let mut b = ReleaseSpec::builder("large, no symmetric block");
    let m = b.matrix("topics", 50, 2000, 1.0).unwrap();
    b.vector("v", 10, 1.0).unwrap();
    (b.build().unwrap(), m)
}

fn release(threads: usize, seed: u64) -> Vec<Release> {
    releases_of(spec(), threads, seed, 1e6)
}

fn releases_of(
    (spec, m): (ReleaseSpec, dp_core::MatrixBlock),
    threads: usize,
    seed: u64,
    epsilon: f64,
) -> Vec<Release> {
    in_pool(threads, || {
        let records: Vec<usize> = (0..400).collect();
        let builder = PrivacyWall::builder(records)
            .sampling(SamplingScheme::poisson(0.5).unwrap())
            .public_population_size(400)
            .seed(seed);
        let builder = if epsilon.is_finite() {
            builder.epsilon_delta(epsilon, 1e-5).noise_multiplier(1.0)
        } else {
            builder.non_private()
        };
        let mut wall = builder.build().unwrap();
        (0..3)
            .map(|_| {
                wall.release(&spec, |r: &usize, buf: &mut ContributionBuffer| {
                    buf.push_matrix(m, r % 50, (r * 7) % 2000, 0.5);
                })
                .unwrap()
            })
            .collect()
    })
}

/// Every block of every release equal bit for bit.
fn assert_same_bits(one: &[Release], other: &[Release], what: &str) {
    assert_eq!(one.len(), other.len());
    for (a, b) in one.iter().zip(other) {
        for (x, y) in a.blocks().iter().zip(b.blocks()) {
            let same = x
                .value
                .as_slice()
                .iter()
                .zip(y.value.as_slice())
                .all(|(p, q)| p.to_bits() == q.to_bits());
            assert!(same, "block {} differs: {what}", x.name);
        }
    }
}

#[test]
fn large_releases_are_bit_identical_at_any_thread_count() {
    let one = release(1, 11);
    for threads in [2, 4] {
        assert_same_bits(&one, &release(threads, 11), &format!("{threads} threads"));
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

/// Noise drawn alongside the sums (several threads, no symmetric block) against the one-thread
/// pass that draws it after them, fused with the normalisation: the same values bit for bit,
/// release after release (each release's stream key taken in the same order), private and
/// non-private (no noise: nothing is drawn ahead). A wrong span numbering or a key taken out of
/// order would change every value.
#[test]
fn noise_drawn_alongside_the_sums_equals_the_fused_pass() {
    for epsilon in [1e6, f64::INFINITY] {
        let one = releases_of(spec_without_symmetric(), 1, 21, epsilon);
        for threads in [2, 3] {
            let other = releases_of(spec_without_symmetric(), threads, 21, epsilon);
            assert_same_bits(
                &one,
                &other,
                &format!("{threads} threads, epsilon {epsilon}"),
            );
        }
    }
    let private = releases_of(spec_without_symmetric(), 2, 21, 1e6);
    let exact = releases_of(spec_without_symmetric(), 2, 21, f64::INFINITY);
    assert_ne!(private[0].blocks()[0].value, exact[0].blocks()[0].value);
    assert_ne!(private[0].blocks()[0].value, private[1].blocks()[0].value);
}
