//! The wall's release on neighbouring datasets moves by at most the declared sensitivity.
//!
//! 10^4 proptest cases over random block layouts (vector, symmetric with and without a floor,
//! sparse matrix), bounds, sampling schemes and adversarial records (huge, at the bound, tiny).
//! For each case four walls are built with the **same seed**: non-private on `D` and `D'`
//! (the pre-noise clipped sum divided by the public expected batch size) and private on `D` and
//! `D'` (the released value: identical noise, so the difference is the sum's difference, then the
//! 1-Lipschitz PD projection). Sampling is coupled by the seed: under Poisson sampling the extra
//! record is appended at the end (the draws for the others are unchanged) or, with rate 1, put
//! anywhere; under fixed-size / single draws the same indices are drawn and one record is
//! replaced.

use dp_core::{
    ContributionBuffer, MatrixBlock, PrivacyWall, Release, ReleaseSpec, SamplingScheme,
    SymmetricBlock, VectorBlock,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Rec {
    v: Vec<f64>,
    x: Vec<f64>,
    w: f64,
    sparse: Vec<(usize, usize, f64)>,
}

const VLEN: usize = 3;
const SDIM: usize = 3;
const ROWS: usize = 2;
const COLS: usize = 5;

/// The handles of the spec's three blocks.
#[derive(Clone, Copy)]
struct Blocks {
    vec: VectorBlock,
    sym: SymmetricBlock,
    mat: MatrixBlock,
}

fn statistic(h: Blocks) -> impl Fn(&Rec, &mut ContributionBuffer) + Sync {
    move |r: &Rec, buf: &mut ContributionBuffer| {
        buf.dense(h.vec).copy_from_slice(&r.v);
        buf.add_outer_product(h.sym, r.w, &r.x);
        for &(i, j, val) in &r.sparse {
            buf.push_matrix(h.mat, i, j, val);
        }
    }
}

fn scaled(values: Vec<f64>, mode: u8, bound: f64) -> Vec<f64> {
    let n = values.iter().map(|v| v * v).sum::<f64>().sqrt();
    match mode {
        0 => values,                                                    // as drawn
        1 => values.iter().map(|v| v * 1e3).collect(),                  // far over the bound
        2 if n > 0.0 => values.iter().map(|v| v * bound / n).collect(), // at the bound
        _ => values.iter().map(|v| v * 1e-6).collect(),                 // tiny
    }
}

fn record(bounds: [f64; 3]) -> impl Strategy<Value = Rec> {
    (
        prop::collection::vec(-2.0f64..2.0, VLEN),
        prop::collection::vec(-2.0f64..2.0, SDIM),
        -1.0f64..1.0,
        prop::collection::vec((0..ROWS, 0..COLS, -2.0f64..2.0), 0..6),
        0u8..4,
    )
        .prop_map(move |(v, x, w, sparse, mode)| {
            let v = scaled(v, mode, bounds[0]);
            let x = scaled(x, mode, bounds[1].sqrt());
            let sparse = if mode == 1 {
                sparse
                    .into_iter()
                    .map(|(i, j, s)| (i, j, s * 1e3))
                    .collect()
            } else {
                sparse
            };
            Rec { v, x, w, sparse }
        })
}

#[derive(Clone, Debug)]
enum Scheme {
    Poisson(f64),
    Fixed(usize),
    Single,
}

type Case = ([f64; 3], Option<f64>, Scheme, Vec<Rec>, Rec, usize, u64);

fn case() -> impl Strategy<Value = Case> {
    (
        [0.05f64..3.0, 0.05f64..3.0, 0.05f64..3.0],
        prop::option::of(1e-4f64..0.5),
        prop_oneof![
            (0.05f64..1.0).prop_map(Scheme::Poisson),
            Just(Scheme::Poisson(1.0)),
            (1usize..6).prop_map(Scheme::Fixed),
            Just(Scheme::Single),
        ],
        any::<u64>(),
    )
        .prop_flat_map(|(bounds, floor, scheme, seed)| {
            (
                Just(bounds),
                Just(floor),
                Just(scheme),
                prop::collection::vec(record(bounds), 6..14),
                record(bounds),
                any::<prop::sample::Index>(),
                Just(seed),
            )
        })
        .prop_map(|(b, f, s, recs, extra, idx, seed)| {
            let k = idx.index(recs.len());
            (b, f, s, recs, extra, k, seed)
        })
}

fn spec(bounds: [f64; 3], floor: Option<f64>) -> (ReleaseSpec, Blocks) {
    let mut b = ReleaseSpec::builder("neighbouring");
    let vec = b.vector("vec", VLEN, bounds[0]).unwrap();
    let sym = b.symmetric("sym", SDIM, bounds[1]).unwrap();
    if let Some(f) = floor {
        b.eigenvalue_floor(sym, f).unwrap();
    }
    let mat = b.matrix("mat", ROWS, COLS, bounds[2]).unwrap();
    (b.build().unwrap(), Blocks { vec, sym, mat })
}

fn release(
    records: Vec<Rec>,
    scheme: SamplingScheme,
    public_n: usize,
    private: bool,
    seed: u64,
    (spec, blocks): (&ReleaseSpec, Blocks),
) -> Release {
    let builder = PrivacyWall::builder(records)
        .sampling(scheme)
        .public_population_size(public_n)
        .seed(seed);
    let builder = if private {
        builder.epsilon_delta(1e6, 1e-5).noise_multiplier(0.8)
    } else {
        builder.non_private()
    };
    let mut wall = builder.build().unwrap();
    wall.release(spec, statistic(blocks)).unwrap()
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt()
}

fn check(a: &Release, b: &Release) -> Result<(), TestCaseError> {
    for (x, y) in a.blocks().iter().zip(b.blocks()) {
        prop_assert_eq!(x.sensitivity, y.sensitivity);
        let moved = distance(x.value.as_slice(), y.value.as_slice());
        // the full-matrix Frobenius distance of a symmetric block is what its bound is stated in
        prop_assert!(
            moved <= x.sensitivity * (1.0 + 1e-9) + 1e-12,
            "block {} moved {} > sensitivity {}",
            x.name,
            moved,
            x.sensitivity
        );
    }
    Ok(())
}

fn neighbouring_case(
    (bounds, floor, scheme, records, extra, k, seed): Case,
) -> Result<(), TestCaseError> {
    let (spec, blocks) = spec(bounds, floor);
    let n = records.len();
    let (scheme, d, d_prime, public_n) = match scheme {
        Scheme::Poisson(rate) => {
            let mut bigger = records.clone();
            if rate >= 1.0 {
                bigger.insert(k, extra); // any position: every record is in the batch
            } else {
                bigger.push(extra); // coupled draws: the others keep their coins
            }
            (SamplingScheme::poisson(rate).unwrap(), records, bigger, n)
        }
        Scheme::Fixed(m) => {
            let mut replaced = records.clone();
            replaced[k] = extra;
            (SamplingScheme::fixed_size(m).unwrap(), records, replaced, n)
        }
        Scheme::Single => {
            let mut replaced = records.clone();
            replaced[k] = extra;
            (SamplingScheme::uniform_single(), records, replaced, n)
        }
    };
    for private in [false, true] {
        let a = release(d.clone(), scheme, public_n, private, seed, (&spec, blocks));
        let b = release(
            d_prime.clone(),
            scheme,
            public_n,
            private,
            seed,
            (&spec, blocks),
        );
        prop_assert_eq!(a.is_private(), private);
        check(&a, &b)?;
    }
    Ok(())
}

proptest! {
    // The bar: 10^4 cases. Heavy in a debug build, so it runs with the ignored release-mode tests
    // (`cargo test -p dp-core --release -- --ignored`, a few seconds there).
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]
    #[test]
    #[ignore = "10^4 cases: run in release with --ignored"]
    fn release_moves_by_at_most_the_declared_sensitivity_10k(c in case()) {
        neighbouring_case(c)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
    #[test]
    fn release_moves_by_at_most_the_declared_sensitivity(c in case()) {
        neighbouring_case(c)?;
    }
}
