//! The privacy wall's behaviour: budget refusal with the ledger unchanged, non-private mode on
//! the same code path, RNG policy, sparse/dense equivalence, typed errors, thread-count
//! independence, and the noise std of rescale-noise-rescale.

mod common;
use common::in_pool;

use dp_core::{
    ContributionBuffer, CoreError, PrivacyWall, Release, ReleaseSpec, RngPolicy, SamplingScheme,
    SymmetricBlock, VectorBlock,
};

fn records(n: usize) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            let t = i as f64;
            vec![t.sin() * 3.0, (0.3 * t).cos(), 0.01 * t]
        })
        .collect()
}

type Triples = Vec<(usize, usize, f64)>;
type Statistic = dyn Fn(&Triples, &mut ContributionBuffer) + Sync;

/// A spec of one vector block `x` of 3 entries, and its handle.
fn vector_spec(bound: f64) -> (ReleaseSpec, VectorBlock) {
    let mut b = ReleaseSpec::builder("x");
    let x = b.vector("x", 3, bound).unwrap();
    (b.build().unwrap(), x)
}

/// The record, written densely into block `x`.
fn dense(x: VectorBlock) -> impl Fn(&Vec<f64>, &mut ContributionBuffer) + Sync {
    move |r: &Vec<f64>, buf: &mut ContributionBuffer| buf.dense(x).copy_from_slice(r)
}

#[test]
fn over_budget_release_is_refused_and_the_ledger_is_unchanged() {
    let mut wall = PrivacyWall::builder(records(200))
        .sampling(SamplingScheme::poisson(0.1).unwrap())
        .epsilon_delta(1.0, 1e-5)
        .noise_multiplier(2.0)
        .seed(1)
        .build()
        .unwrap();
    let (spec, x) = vector_spec(1.0);
    let dense = dense(x);
    let mut made = 0;
    loop {
        let before_json = wall.ledger().to_json().unwrap();
        let before_len = wall.ledger().len();
        let can = wall.can_release().unwrap();
        match wall.release(&spec, &dense) {
            Ok(_) => {
                assert!(can);
                made += 1;
                assert!(wall.spent_epsilon().unwrap() <= 1.0);
            }
            Err(CoreError::BudgetExhausted { total_epsilon, .. }) => {
                assert!(!can);
                assert_eq!(total_epsilon, 1.0);
                assert_eq!(wall.ledger().len(), before_len);
                assert_eq!(wall.ledger().to_json().unwrap(), before_json);
                assert_eq!(wall.releases_made(), made);
                break;
            }
            Err(e) => panic!("unexpected error {e}"),
        }
        assert!(made < 100_000, "budget never ran out");
    }
    assert!(made >= 1);
    // refused again, still unchanged
    let len = wall.ledger().len();
    assert!(matches!(
        wall.release(&spec, &dense),
        Err(CoreError::BudgetExhausted { .. })
    ));
    assert_eq!(wall.ledger().len(), len);
    assert_eq!(wall.release_log().len(), len);
}

#[test]
fn calibrated_wall_affords_its_planned_releases() {
    let mut wall = PrivacyWall::builder(records(500))
        .sampling(SamplingScheme::fixed_size(20).unwrap())
        .epsilon_delta(0.5, 1e-6)
        .calibrate_for_releases(25)
        .seed(2)
        .build()
        .unwrap();
    let (spec, x) = vector_spec(1.0);
    for t in 0..25 {
        wall.release_with_label(format!("iteration {t}: E-step"), &spec, dense(x))
            .unwrap();
    }
    assert_eq!(wall.ledger().entries()[24].label, "iteration 24: E-step");
    let spent = wall.spent_epsilon().unwrap();
    assert!(spent <= 0.5 && spent > 0.45, "spent {spent}");
}

fn run(policy: RngPolicy, private: bool, n: usize, rate: f64) -> (Release, PrivacyWall<Vec<f64>>) {
    let b = PrivacyWall::builder(records(n))
        .sampling(SamplingScheme::poisson(rate).unwrap())
        .rng(policy);
    let b = if private {
        b.epsilon_delta(10.0, 1e-5).noise_multiplier(2.0)
    } else {
        b.epsilon_delta(f64::INFINITY, 1e-5)
    };
    let mut wall = b.build().unwrap();
    let (spec, x) = vector_spec(1.0);
    let r = wall.release(&spec, dense(x)).unwrap();
    (r, wall)
}

#[test]
fn non_private_mode_takes_the_same_path_without_noise() {
    let (np, wall) = run(RngPolicy::Seeded { seed: 5 }, false, 50, 1.0);
    assert!(!np.is_private());
    assert!(wall.ledger().is_empty());
    assert_eq!(wall.release_log().len(), 1);
    assert!(!wall.release_log()[0].private);
    assert!(wall.release_log()[0].notes["mechanism"].contains("non-private"));
    assert_eq!(wall.spent_epsilon().unwrap(), 0.0);
    // with q = 1 every record is in: the release is the clipped mean, computed here by hand
    let mut expected = [0.0; 3];
    let mut clipped = 0;
    for r in records(50) {
        let n = r.iter().map(|v| v * v).sum::<f64>().sqrt();
        let s = if n > 1.0 {
            clipped += 1;
            1.0 / n
        } else {
            1.0
        };
        for (e, v) in expected.iter_mut().zip(&r) {
            *e += s * v / 50.0;
        }
    }
    let got = np.block("x").unwrap().as_vector().unwrap();
    for (g, e) in got.iter().zip(&expected) {
        assert!((g - e).abs() < 1e-12, "{g} vs {e}");
    }
    assert_eq!(np.clipped_records(), clipped);
    assert_eq!(np.block("x").unwrap().noise_std, 0.0);
    // the private wall with the same seed clips the same records
    let (p, wall) = run(RngPolicy::Seeded { seed: 5 }, true, 50, 1.0);
    assert_eq!(p.clipped_records(), clipped);
    assert_eq!(wall.ledger().len(), 1);
    assert!(wall.ledger().entries()[0].notes["rng"].contains("seed 5"));
    assert!(p.block("x").unwrap().noise_std > 0.0);
}

#[test]
fn seeds_reproduce_and_os_entropy_does_not() {
    let (a, _) = run(RngPolicy::Seeded { seed: 9 }, true, 300, 0.2);
    let (b, _) = run(RngPolicy::Seeded { seed: 9 }, true, 300, 0.2);
    let (c, _) = run(RngPolicy::Seeded { seed: 10 }, true, 300, 0.2);
    assert_eq!(a, b);
    assert_ne!(a, c);
    let (d, wd) = run(RngPolicy::OsEntropy, true, 300, 0.2);
    let (e, _) = run(RngPolicy::OsEntropy, true, 300, 0.2);
    assert_ne!(d, e);
    assert!(wd.ledger().entries()[0].notes["rng"].contains("OS entropy"));
}

/// A sparse statistic (pushes, with duplicates) and a dense one give the same release, with more
/// records than one chunk so the parallel path runs; and the result does not depend on the
/// number of threads.
#[test]
fn sparse_and_dense_writes_agree_and_threads_do_not_matter() {
    let mut b = ReleaseSpec::builder("sparse and dense");
    let m = b.matrix("m", 4, 50, 2.0).unwrap();
    let s = b.symmetric("s", 4, 0.5).unwrap();
    let spec = b.build().unwrap();
    let recs: Vec<Vec<(usize, usize, f64)>> = (0..700)
        .map(|i| {
            (0..(i % 9))
                .map(|k| ((i + k) % 4, (i * 7 + k * 13) % 50, ((i * k) as f64).sin()))
                .collect()
        })
        .collect();
    let sparse = move |r: &Vec<(usize, usize, f64)>, buf: &mut ContributionBuffer| {
        for &(i, j, v) in r {
            buf.push_matrix(m, i, j, 0.5 * v);
            buf.push_matrix(m, i, j, 0.5 * v); // duplicate: adds up
            buf.add_symmetric(s, i, j % 4, v);
        }
    };
    let dense = move |r: &Vec<(usize, usize, f64)>, buf: &mut ContributionBuffer| {
        for &(i, j, v) in r {
            buf.dense(m)[j * 4 + i] += v;
            let (a, b) = if i <= j % 4 { (i, j % 4) } else { (j % 4, i) };
            buf.dense(s)[b * (b + 1) / 2 + a] += v;
        }
    };
    let go = |threads: usize, f: &Statistic| {
        in_pool(threads, || {
            let mut wall = PrivacyWall::builder(recs.clone())
                .sampling(SamplingScheme::poisson(0.9).unwrap())
                .epsilon_delta(5.0, 1e-5)
                .noise_multiplier(1.0)
                .seed(77)
                .build()
                .unwrap();
            wall.release(&spec, f).unwrap()
        })
    };
    let s1 = go(1, &sparse);
    let s4 = go(4, &sparse);
    assert_eq!(s1, s4, "thread count changed the release");
    let d3 = go(3, &dense);
    assert_eq!(s1.clipped_records(), d3.clipped_records());
    assert!(s1.clipped_records() > 0);
    for (a, b) in s1.blocks().iter().zip(d3.blocks()) {
        for (x, y) in a.value.as_slice().iter().zip(b.value.as_slice()) {
            assert!((x - y).abs() <= 1e-12 * (1.0 + x.abs()), "{x} vs {y}");
        }
    }
}

/// Non-private mode: a malformed contribution is a typed error that charges nothing. (Private
/// mode replaces such records by zero and charges the release: `tests/wall_failures.rs`.)
#[test]
fn bad_contributions_are_typed_errors_in_non_private_mode() {
    let mut wall = PrivacyWall::builder(records(100))
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .seed(3)
        .build()
        .unwrap();
    let (spec, x) = vector_spec(1.0);
    let foreign = foreign_symmetric();
    let out_of_range = wall.release(&spec, |_: &Vec<f64>, buf| buf.push(x, 3, 1.0));
    assert!(matches!(
        out_of_range,
        Err(CoreError::InvalidContribution { .. })
    ));
    let nan = wall.release(&spec, |_: &Vec<f64>, buf| buf.push(x, 1, f64::NAN));
    assert!(matches!(nan, Err(CoreError::InvalidContribution { .. })));
    let inf = wall.release(&spec, |_: &Vec<f64>, buf| buf.dense(x)[2] = f64::INFINITY);
    assert!(matches!(inf, Err(CoreError::InvalidContribution { .. })));
    let wrong_block = wall.release(&spec, |_: &Vec<f64>, buf| {
        buf.add_symmetric(foreign, 0, 0, 1.0)
    });
    assert!(matches!(
        wrong_block,
        Err(CoreError::InvalidContribution { .. })
    ));
    assert!(wall.release_log().is_empty());
    assert_eq!(wall.releases_made(), 0);
    assert!(wall.release(&spec, dense(x)).is_ok());
    assert_eq!(wall.release_log().len(), 1);
}

/// Private mode: every malformed contribution is replaced by zero, counted, and charged.
#[test]
fn bad_contributions_are_replaced_and_charged_in_private_mode() {
    let mut wall = PrivacyWall::builder(records(100))
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .epsilon_delta(50.0, 1e-5)
        .noise_multiplier(1.0)
        .seed(3)
        .build()
        .unwrap();
    let (spec, x) = vector_spec(1.0);
    let foreign = foreign_symmetric();
    let faults: [&Statistic3; 4] = [
        &move |_, buf| buf.push(x, 3, 1.0),
        &move |_, buf| buf.push(x, 1, f64::NAN),
        &move |_, buf| buf.dense(x)[2] = f64::INFINITY,
        &move |_, buf| buf.add_symmetric(foreign, 0, 0, 1.0),
    ];
    for (k, f) in faults.into_iter().enumerate() {
        let r = wall.release(&spec, f).unwrap();
        assert_eq!(r.diagnostics().replaced_records, 100, "fault {k}");
        assert_eq!(wall.ledger().len(), k + 1);
    }
}

type Statistic3 = dyn Fn(&Vec<f64>, &mut ContributionBuffer) + Sync;

/// A symmetric block of another spec: a write into it is a write outside the release's blocks
/// (a symmetric write into the release's vector block no longer compiles: the handles are
/// typed).
fn foreign_symmetric() -> SymmetricBlock {
    let mut b = ReleaseSpec::builder("elsewhere");
    let s = b.symmetric("s", 3, 1.0).unwrap();
    b.build().unwrap();
    s
}

#[test]
fn builder_refuses_incomplete_or_contradictory_settings() {
    let ok = || {
        PrivacyWall::builder(records(10))
            .sampling(SamplingScheme::poisson(0.5).unwrap())
            .epsilon_delta(1.0, 1e-5)
            .noise_multiplier(1.0)
    };
    assert!(ok().build().is_ok());
    assert!(matches!(
        PrivacyWall::builder(records(10))
            .epsilon_delta(1.0, 1e-5)
            .noise_multiplier(1.0)
            .build(),
        Err(CoreError::Misconfigured(_))
    ));
    assert!(matches!(
        PrivacyWall::builder(records(10))
            .sampling(SamplingScheme::uniform_single())
            .noise_multiplier(1.0)
            .build(),
        Err(CoreError::Misconfigured(_))
    ));
    assert!(matches!(
        PrivacyWall::builder(records(10))
            .sampling(SamplingScheme::uniform_single())
            .epsilon_delta(1.0, 1e-5)
            .build(),
        Err(CoreError::Misconfigured(_))
    ));
    assert!(ok().non_private().build().is_err());
    assert!(ok().noise_multiplier(0.0).build().is_err());
    assert!(ok().noise_multiplier(f64::NAN).build().is_err());
    assert!(ok().epsilon_delta(0.0, 1e-5).build().is_err());
    assert!(ok().epsilon_delta(1.0, 1.0).build().is_err());
    assert!(ok().epsilon_delta(f64::NAN, 1e-5).build().is_err());
    assert!(ok().calibrate_for_releases(0).build().is_err());
    assert!(ok().public_population_size(0).build().is_err());
    assert!(matches!(
        PrivacyWall::<Vec<f64>>::builder(vec![])
            .sampling(SamplingScheme::uniform_single())
            .non_private()
            .build(),
        Err(CoreError::Empty(_))
    ));
    assert!(
        PrivacyWall::builder(records(10))
            .sampling(SamplingScheme::fixed_size(11).unwrap())
            .non_private()
            .build()
            .is_err()
    );
}

/// Rescale-noise-rescale (003 Eq. 63): with k = 3 blocks of bounds B_j, noise multiplier sigma
/// and replace-one sampling (factor 2), block j's per-entry noise std on the released value is
/// `B_j sigma 2 sqrt(3) / m`. The empirical noise (private minus non-private release, same seed)
/// over 300 releases passes a chi-square test per block against the reported std
/// (Wilson-Hilferty, |z| < 5.33 each: family-wise false alarm < 4e-7).
#[test]
fn rescale_noise_rescale_noise_std_matches_the_declaration() {
    let mut b = ReleaseSpec::builder("three blocks");
    let a = b.vector("a", 4, 0.5).unwrap();
    let sb = b.symmetric("b", 3, 0.25).unwrap();
    let c = b.matrix("c", 2, 3, 4.0).unwrap();
    let spec = b.build().unwrap();
    let stat = |r: &Vec<f64>, buf: &mut ContributionBuffer| {
        buf.dense(a)[..3].copy_from_slice(r);
        buf.add_outer_product(sb, 0.1, r);
        buf.push_matrix(c, 1, 2, r[0]);
    };
    let (sigma, m, releases) = (0.7, 10usize, 300);
    let build = |private: bool| {
        let b = PrivacyWall::builder(records(40))
            .sampling(SamplingScheme::fixed_size(m).unwrap())
            .seed(4242);
        if private {
            b.epsilon_delta(1e6, 1e-5)
                .noise_multiplier(sigma)
                .build()
                .unwrap()
        } else {
            b.non_private().build().unwrap()
        }
    };
    let (mut private, mut plain) = (build(true), build(false));
    let mut sums = [0.0f64; 3];
    let mut counts = [0usize; 3];
    for _ in 0..releases {
        let p = private.release(&spec, stat).unwrap();
        let q = plain.release(&spec, stat).unwrap();
        for (j, (bp, bq)) in p.blocks().iter().zip(q.blocks()).enumerate() {
            let expected = bp.bound * sigma * 2.0 * 3f64.sqrt() / m as f64;
            assert!((bp.noise_std - expected).abs() < 1e-12 * expected);
            assert_eq!(bp.sensitivity, 2.0 * bp.bound / m as f64);
            let (vp, vq) = (bp.value.as_slice(), bq.value.as_slice());
            if j == 1 {
                // symmetric: the free entries are the upper triangle incl. diagonal
                for c in 0..3 {
                    for r in 0..=c {
                        let z = (vp[c * 3 + r] - vq[c * 3 + r]) / bp.noise_std;
                        sums[j] += z * z;
                        counts[j] += 1;
                    }
                }
            } else {
                for (x, y) in vp.iter().zip(vq) {
                    let z = (x - y) / bp.noise_std;
                    sums[j] += z * z;
                    counts[j] += 1;
                }
            }
        }
    }
    for j in 0..3 {
        let k = counts[j] as f64;
        let h = 2.0 / (9.0 * k);
        let z = ((sums[j] / k).cbrt() - (1.0 - h)) / h.sqrt();
        assert!(z.abs() < 5.33, "block {j}: chi-square z = {z}");
    }
}

/// Debug output of the wall shows public facts only, never a record.
#[test]
fn debug_output_does_not_print_records() {
    let secret = vec![vec![123_456.789, 0.0, 0.0]];
    let wall = PrivacyWall::builder(secret)
        .sampling(SamplingScheme::uniform_single())
        .non_private()
        .seed(1);
    assert!(!format!("{wall:?}").contains("123456"));
    let wall = wall.build().unwrap();
    let shown = format!("{wall:?}");
    assert!(!shown.contains("123456"), "{shown}");
    // Replace-one: the record count is public and shown; never the records.
    assert!(shown.contains("population: Some(1)"), "{shown}");
}

/// Many blocks (an SBN-like release: a vector plus 20 symmetric K x K blocks `G_j`): one event,
/// `sqrt(k)` in every block's noise, each block clipped to its own bound.
#[test]
fn many_blocks_share_one_event() {
    let k_dim = 3;
    let mut b = ReleaseSpec::builder("sbn-like");
    let z = b.vector("z", k_dim, 3f64.sqrt()).unwrap();
    let g: Vec<_> = (0..20)
        .map(|j| {
            let gj = b
                .symmetric(format!("G{j}"), k_dim, 0.25 * (j + 1) as f64)
                .unwrap();
            b.eigenvalue_floor(gj, 1e-8).unwrap();
            gj
        })
        .collect();
    let spec = b.build().unwrap();
    let mut wall = PrivacyWall::builder(records(300))
        .sampling(SamplingScheme::poisson(0.2).unwrap())
        .epsilon_delta(3.0, 1e-5)
        .noise_multiplier(1.2)
        .seed(8)
        .build()
        .unwrap();
    let release = wall
        .release(&spec, |r: &Vec<f64>, buf| {
            buf.dense(z).copy_from_slice(r);
            for &gj in &g {
                buf.add_outer_product(gj, 10.0, r); // far over every bound: all clipped
            }
        })
        .unwrap();
    assert_eq!(wall.ledger().len(), 1);
    assert_eq!(release.blocks().len(), 21);
    let e = 0.2 * 300.0;
    for b in release.blocks() {
        let expected = b.bound * 1.2 * 21f64.sqrt() / e;
        assert!(
            (b.noise_std - expected).abs() < 1e-12 * expected,
            "{}",
            b.name
        );
        if let Some(m) = b.as_matrix() {
            assert!(m.clone().cholesky().is_some());
        }
    }
    assert!(release.clipped_records() > 0);
}

/// Releases are divided by the public expected batch size `qN`, never by the realised one:
/// with identical records `c`, a non-private Poisson release equals `c x (realised / qN)`, so
/// `value / c x qN` is the (hidden) realised count, an integer that varies between releases.
#[test]
fn releases_are_normalised_by_the_expected_batch_size() {
    let c = [0.3, -0.4, 0.0];
    let mut wall = PrivacyWall::builder(vec![c.to_vec(); 1000])
        .sampling(SamplingScheme::poisson(0.1).unwrap())
        .non_private()
        .seed(12)
        .build()
        .unwrap();
    assert_eq!(wall.expected_batch_size(), 100.0);
    let mut counts = Vec::new();
    for _ in 0..5 {
        let (spec, x) = vector_spec(1.0);
        let r = wall.release(&spec, dense(x)).unwrap();
        assert_eq!(r.expected_batch_size(), 100.0);
        let v = r.block("x").unwrap().as_vector().unwrap();
        let realised = v[0] / c[0] * 100.0;
        assert!((realised - realised.round()).abs() < 1e-9, "{realised}");
        assert!((v[1] / c[1] * 100.0 - realised).abs() < 1e-9);
        counts.push(realised.round() as i64);
    }
    assert!(counts.iter().any(|&n| n != 100), "{counts:?}");
    assert!(counts.iter().any(|&n| n != counts[0]), "{counts:?}");
}

/// The general path with a block longer than one reduction span (so the per-wave reduction runs
/// in parallel over spans), two releases per wall (the second reuses the wall's worker sums):
/// bit-for-bit the same at 1, 2 and 3 threads.
#[test]
fn general_path_reuses_its_sums_and_threads_still_do_not_matter() {
    let len = 70_001;
    let mut b = ReleaseSpec::builder("big and small");
    let big = b.vector("big", len, 1.5).unwrap();
    let small = b.vector("small", 3, 0.5).unwrap();
    let spec = b.build().unwrap();
    let recs: Vec<usize> = (0..300).collect();
    let statistic = |&i: &usize, buf: &mut ContributionBuffer| {
        for k in 0..(i % 13) {
            buf.push(
                big,
                (i * 7919 + k * 5381) % len,
                ((i + k) as f64).cos() * [0.2, 3.0][i % 2],
            );
        }
        buf.push(small, i % 3, 0.1 * i as f64);
    };
    let go = |threads: usize| {
        in_pool(threads, || {
            let mut wall = PrivacyWall::builder(recs.clone())
                .sampling(SamplingScheme::poisson(0.8).unwrap())
                .epsilon_delta(50.0, 1e-5)
                .noise_multiplier(1.0)
                .seed(78)
                .build()
                .unwrap();
            let first = wall.release(&spec, statistic).unwrap();
            let second = wall.release(&spec, statistic).unwrap();
            (first, second)
        })
    };
    let one = go(1);
    assert!(one.0.clipped_records() > 0);
    assert_ne!(one.0, one.1);
    assert_eq!(one, go(2), "2 threads changed the release");
    assert_eq!(one, go(3), "3 threads changed the release");
}
