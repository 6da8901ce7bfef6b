//! Issue 22: the VIPS engine's second sampling regime, fixed-size batches without replacement
//! (replace-one, paper 001), chosen with `SviConfigBuilder::batching(Batching::FixedSize { .. })`.
//!
//! Checked here, from the public entry point [`vips_models::engine::fit`]:
//! - end-to-end replace-one neighbouring: changing one record to another (an adversarial pair
//!   clipped to opposite ends of the bound) moves every release by at most its replace-one bound
//!   `2 B / S` (times `N` in the M-step), and does reach more than the add/remove-one bound
//!   `B / S`, so the factor 2 is needed;
//! - every batch has exactly `S` records;
//! - the ledger's events are the fixed-size subsampled Gaussian (`m = S` of `N`), and replaying
//!   the result's ledger (the accountant CLI's `replay`) gives the same epsilon bit for bit;
//! - calibration meets the target under every accountant that covers the event, tightly, and
//!   PLD (which does not) is refused with a typed error;
//! - the default is Poisson and its result is bit-identical to an explicit Poisson one.

use dp_accountant::cli::{CliCommand, execute};
use dp_accountant::{AccountantConfig, AccountantKind, PrivacyEvent, epsilon_for_event};
use dp_core::{ContributionBuffer, Release, ReleaseSpec, VectorBlock};
use serde::Serialize;
use vips_models::engine::{
    Batching, EngineError, FitResult, Privacy, RecordError, StepSize, Stop, SviConfig, VipsModel,
    fit,
};

/// Per-record bound on `|x|` (the wall clips to it).
const BOUND: f64 = 3.0;
/// Prior precision of the mean.
const TAU0: f64 = 1.0;
/// Records (public under replace-one) and batch size.
const N: usize = 200;
const S: usize = 20;

/// The mean of Gaussian data with known variance (as in `tests/custom_model.rs`): statistic
/// `x` clipped to `|x| <= BOUND`; target `h = N s~`, `P = TAU0 + N`. With `rho = 1` the global
/// after iteration `t` is exactly release `t`'s target, so the observer sees every release.
struct GaussianMean;

#[derive(Clone, Debug, Serialize)]
struct Posterior {
    shift: f64,
    precision: f64,
}

impl VipsModel for GaussianMean {
    type Record = f64;
    type Global = Posterior;
    type Target = Posterior;
    type Natural = ();
    type Scratch = ();
    type Blocks = VectorBlock;

    fn name(&self) -> &str {
        "gaussian-mean"
    }

    fn release_spec(&self) -> Result<(ReleaseSpec, VectorBlock), EngineError> {
        let mut spec = ReleaseSpec::builder("gaussian mean");
        let sum_x = spec.vector("sum_x", 1, BOUND)?;
        Ok((spec.build()?, sum_x))
    }

    fn init_global(&self, _rng: &mut dyn rand::Rng) -> Result<Posterior, EngineError> {
        Ok(Posterior {
            shift: 0.0,
            precision: TAU0,
        })
    }

    fn expected_natural(&self, _global: &Posterior) -> Result<(), EngineError> {
        Ok(())
    }

    fn new_scratch(&self) {}

    fn record_statistic(
        &self,
        sum_x: &VectorBlock,
        _natural: &(),
        record: &f64,
        _scratch: &mut (),
        buffer: &mut ContributionBuffer,
    ) -> Result<(), RecordError> {
        buffer.push(*sum_x, 0, *record);
        Ok(())
    }

    fn global_target(
        &self,
        sum_x: &VectorBlock,
        release: &Release,
        _natural: &(),
        population: f64,
    ) -> Result<Posterior, EngineError> {
        Ok(Posterior {
            shift: population * release.vector(*sum_x)?[0],
            precision: TAU0 + population,
        })
    }

    fn blend(&self, global: &mut Posterior, target: &Posterior, rho: f64) {
        global.shift = (1.0 - rho) * global.shift + rho * target.shift;
        global.precision = (1.0 - rho) * global.precision + rho * target.precision;
    }
}

fn data() -> Vec<f64> {
    (0..N).map(|i| 2.0 * ((i as f64) * 0.61).sin()).collect()
}

fn builder(privacy: Privacy, iterations: u64) -> vips_models::engine::SviConfigBuilder {
    SviConfig::builder()
        .expected_batch_size(S as f64)
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations { iterations })
        .privacy(privacy)
        .noise_seed(Some(17))
        .population(Some(N))
}

const TARGET: Privacy = Privacy::Target {
    epsilon: 1.0,
    delta: 1e-5,
};

/// The `h` of every iteration (= `N` x release) and the result.
fn run(records: Vec<f64>, svi: &SviConfig) -> (Vec<f64>, FitResult<Posterior>) {
    let mut shifts = Vec::new();
    let fitted = fit(&GaussianMean, records, svi, |_, g| shifts.push(g.shift)).unwrap();
    (shifts, fitted.result)
}

/// Replace-one through `fit`, private, equal seeds: the sampler draws the same `S` slots for both
/// data sets (its draws do not depend on the records) and the noise is the same, so each
/// iteration's `h` differs by `N/S` times the clipped change of the one record when it is in the
/// batch: `2 B N / S` for the adversarial pair, `0` otherwise. The record is in a batch with
/// probability `S/N = 0.1`; over 200 iterations it is never drawn with probability
/// `0.9^200 < 1e-9` (the false-alarm rate of the "reaches the bound" assertion; the seed is
/// fixed anyway).
#[test]
fn replace_one_moves_every_release_by_at_most_its_bound() {
    let svi = builder(TARGET, 200)
        .batching(Batching::fixed_size(S).unwrap())
        .build()
        .unwrap();
    let mut d = data();
    let mut neighbour = data();
    d[7] = -1e6;
    neighbour[7] = 1e6; // clipped to -B and +B: the largest change one record can make
    let (h0, r0) = run(d, &svi);
    let (h1, r1) = run(neighbour, &svi);
    assert_eq!(r0.privacy.noise_multiplier, r1.privacy.noise_multiplier);
    assert_eq!(h0.len(), 200);
    let bound = 2.0 * BOUND * N as f64 / S as f64;
    let add_remove_bound = BOUND * N as f64 / S as f64;
    let mut reached = 0;
    for (t, (a, b)) in h0.iter().zip(&h1).enumerate() {
        let moved = (a - b).abs();
        assert!(
            moved <= bound * (1.0 + 1e-9),
            "iteration {t}: moved {moved} > {bound}"
        );
        if moved > add_remove_bound * (1.0 + 1e-6) {
            reached += 1;
        }
    }
    assert!(reached > 0, "the changed record was never drawn");
    // a non-adversarial change moves by its clipped size, never more
    let mut d = data();
    let mut neighbour = data();
    d[3] = 0.5;
    neighbour[3] = 1.5;
    let (h0, _) = run(d, &svi);
    let (h1, _) = run(neighbour, &svi);
    for (a, b) in h0.iter().zip(&h1) {
        assert!((a - b).abs() <= 1.0 * N as f64 / S as f64 * (1.0 + 1e-9));
    }
}

/// Every batch has exactly `S` records: with `x = 1` for every record and no noise, each release
/// is the batch size over `S`, so `h = N` exactly at every iteration; and `S T` E-steps ran.
/// (Under Poisson the same check fails: the batch size is Binomial(N, S/N).)
#[test]
fn every_batch_has_exactly_s_records() {
    let ones = vec![1.0; N];
    let svi = builder(Privacy::NonPrivate, 50)
        .batching(Batching::fixed_size(S).unwrap())
        .build()
        .unwrap();
    let mut shifts = Vec::new();
    let fitted = fit(&GaussianMean, ones.clone(), &svi, |_, g| {
        shifts.push(g.shift)
    })
    .unwrap();
    assert!(shifts.iter().all(|&h| h == N as f64), "{shifts:?}");
    assert_eq!(fitted.diagnostics.records_processed, (S * 50) as u64);
    assert_eq!(fitted.result.privacy.expected_batch_size, S as f64);
    // the Poisson run with the same settings does not have exactly S every time
    let poisson = builder(Privacy::NonPrivate, 50).build().unwrap();
    let mut shifts = Vec::new();
    fit(&GaussianMean, ones, &poisson, |_, g| shifts.push(g.shift)).unwrap();
    assert!(shifts.iter().any(|&h| h != N as f64));
}

/// The ledger holds one fixed-size subsampled Gaussian (`m = S` of `N`) per iteration, the result
/// names the regime and replace-one, and the accountant CLI's replay of the result's JSON ledger
/// gives the reported epsilon bit for bit.
#[test]
fn ledger_records_the_fixed_size_event_and_replays_bit_for_bit() {
    let svi = builder(TARGET, 25)
        .batching(Batching::fixed_size(S).unwrap())
        .build()
        .unwrap();
    let (_, result) = run(data(), &svi);
    let p = &result.privacy;
    let sigma = p.noise_multiplier.unwrap();
    let ledger = p.ledger.as_ref().unwrap();
    let expected = PrivacyEvent::fixed_size_subsampled_gaussian(sigma, S as u64, N as u64).unwrap();
    assert_eq!(ledger.len(), 25);
    assert!(ledger.entries().iter().all(|e| e.event == expected));
    assert_eq!(
        ledger.entries()[0]
            .notes
            .get("neighbouring")
            .map(String::as_str),
        Some("ReplaceOne")
    );
    // the wall's notes state the replace-one sensitivity of the normalised release, 2 B / S
    let blocks = ledger.entries()[0].notes.get("blocks").unwrap();
    assert!(
        blocks.contains(&format!("sensitivity {:e}", 2.0 * BOUND / S as f64)),
        "{blocks}"
    );
    assert_eq!(p.neighbouring, "replace_one");
    assert_eq!(result.sampling, Batching::fixed_size(S).unwrap());
    assert_eq!(p.sampling_rate, S as f64 / N as f64);

    let json = serde_json::to_value(&result).unwrap();
    assert_eq!(json["sampling"], "fixed_size");
    let ledger_json = json["privacy"]["ledger"].to_string();
    let out = execute(&CliCommand::Replay {
        ledger_json,
        source: "fit result".into(),
        delta: 1e-5,
    })
    .unwrap();
    let replayed = out.json["epsilon"].as_f64().unwrap();
    assert_eq!(replayed.to_bits(), p.epsilon.unwrap().to_bits());
    // and it is the fixed-size run's epsilon, not a Poisson one at the same rate
    let run_event = expected.self_composed(25).unwrap();
    let by_hand = epsilon_for_event(&run_event, 1e-5, &AccountantConfig::default())
        .unwrap()
        .epsilon;
    assert_eq!(by_hand.to_bits(), replayed.to_bits());
}

/// Under every accountant (PLD included since its fixed-size pair, docs/pld.md section 9), the
/// calibrated multiplier spends at most the target and 0.1% less noise would not (the safe side,
/// and tight); PLD needs the least noise.
#[test]
fn calibration_meets_the_target_under_every_accountant() {
    let mut sigmas = Vec::new();
    for kind in AccountantKind::ALL {
        let svi = builder(TARGET, 12)
            .batching(Batching::fixed_size(S).unwrap())
            .accountant(kind)
            .build()
            .unwrap();
        let (_, result) = run(data(), &svi);
        let p = &result.privacy;
        let (eps, sigma) = (p.epsilon.unwrap(), p.noise_multiplier.unwrap());
        assert!(eps <= 1.0, "{kind}: spent {eps}");
        let config = AccountantConfig::default().with_accountant(kind);
        let less = PrivacyEvent::fixed_size_subsampled_gaussian(sigma * 0.999, S as u64, N as u64)
            .unwrap()
            .self_composed(12)
            .unwrap();
        let over = epsilon_for_event(&less, 1e-5, &config).unwrap().epsilon;
        assert!(over > 1.0, "{kind}: 0.1% less noise still fits ({over})");
        sigmas.push((kind, sigma));
    }
    let pld = sigmas
        .iter()
        .find(|(k, _)| *k == AccountantKind::Pld)
        .unwrap()
        .1;
    for (kind, s) in &sigmas {
        assert!(pld <= *s, "PLD {pld} above {kind} {s}");
    }
    // a fixed noise multiplier with PLD and fixed-size batches is accepted too
    let fixed_noise = Privacy::NoiseMultiplier {
        noise_multiplier: 2.0,
        epsilon: 5.0,
        delta: 1e-5,
    };
    assert!(
        builder(fixed_noise, 5)
            .batching(Batching::fixed_size(S).unwrap())
            .accountant(AccountantKind::Pld)
            .build()
            .is_ok()
    );
}

/// The default regime is Poisson: a default config's result is bit-identical (JSON, every
/// float) to one with an explicit `Batching::Poisson`, its JSON has no `sampling` key (as
/// before the option existed), and it is add/remove-one.
#[test]
fn default_is_poisson_and_unchanged() {
    let default = builder(TARGET, 10).build().unwrap();
    let explicit = builder(TARGET, 10)
        .batching(Batching::poisson(S).unwrap())
        .build()
        .unwrap();
    assert_eq!(default.batching(), Batching::poisson(S).unwrap());
    // (the configurations differ only in their cancel tokens, which compare by identity)
    assert_eq!(
        serde_json::to_string(&default).unwrap(),
        serde_json::to_string(&explicit).unwrap()
    );
    let (h0, r0) = run(data(), &default);
    let (h1, r1) = run(data(), &explicit);
    assert_eq!(
        h0.iter().map(|h| h.to_bits()).collect::<Vec<_>>(),
        h1.iter().map(|h| h.to_bits()).collect::<Vec<_>>()
    );
    let (j0, j1) = (
        serde_json::to_string(&r0).unwrap(),
        serde_json::to_string(&r1).unwrap(),
    );
    assert_eq!(j0, j1);
    let v0: serde_json::Value = serde_json::from_str(&j0).unwrap();
    assert!(v0.get("sampling").is_none(), "{j0}");
    assert_eq!(r0.privacy.neighbouring, "add_remove_one");
    let event =
        PrivacyEvent::poisson_subsampled_gaussian(r0.privacy.noise_multiplier.unwrap(), 0.1)
            .unwrap();
    let ledger = r0.privacy.ledger.as_ref().unwrap();
    assert!(ledger.entries().iter().all(|e| e.event == event));
    // the configuration's JSON omits the default regime too, and reads back
    let cfg_json = serde_json::to_value(&default).unwrap();
    assert!(cfg_json.get("sampling").is_none(), "{cfg_json}");
    let fixed = builder(TARGET, 10)
        .batching(Batching::fixed_size(S).unwrap())
        .build()
        .unwrap();
    let back: SviConfig = serde_json::from_str(&serde_json::to_string(&fixed).unwrap()).unwrap();
    assert_eq!(back.batching(), Batching::fixed_size(S).unwrap());
}

/// Bad input is a typed error: a fractional fixed batch, an unknown regime name, a batch over
/// the population; a private fixed-size run without a declared population uses the record count
/// (public under replace-one) and says it was not declared.
#[test]
fn bad_input_and_the_public_count_under_replace_one() {
    let e = builder(Privacy::NonPrivate, 5)
        .batching(Batching::FixedSize { batch_size: 0 })
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::InvalidParameter {
                name: "expected_batch_size",
                ..
            }
        ),
        "{e}"
    );
    // the engine refuses DP-SEP's one record per step, with a typed error naming it
    let e = builder(Privacy::NonPrivate, 5)
        .batching(Batching::OneRecord)
        .build()
        .unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::InvalidParameter {
                name: "batching",
                ..
            }
        ),
        "{e}"
    );
    let e = "bernoulli".parse::<Batching>().unwrap_err();
    assert!(
        matches!(e, dp_core::CoreError::UnknownBatching { .. }),
        "{e}"
    );
    for (s, want) in [
        ("poisson", "poisson"),
        ("fixed", "fixed_size"),
        ("Fixed_Size", "fixed_size"),
    ] {
        assert_eq!(s.parse::<Batching>().unwrap().name(), want);
    }
    assert!(Batching::fixed_size(30).unwrap().sampling_for(20).is_err());

    let svi = builder(TARGET, 5)
        .population(None)
        .batching(Batching::fixed_size(S).unwrap())
        .build()
        .unwrap();
    let (_, result) = run(data(), &svi);
    assert_eq!(result.privacy.public_population, N);
    assert!(!result.privacy.population_declared);
    // under Poisson the same run is refused: the count is private under add/remove-one
    let poisson = builder(TARGET, 5).population(None).build().unwrap();
    assert!(matches!(
        fit(&GaussianMean, data(), &poisson, |_, _| {}),
        Err(EngineError::PopulationNotDeclared)
    ));
}

/// LDA, replace-one through the public entry points (`prepare` with a public resampling key,
/// then `fit`): one private iteration (`rho = 1`, equal seeds: the same `S` slots and the same
/// noise for both corpora) gives `lambda = eta + N s~`, so replacing one document by another
/// moves `lambda` by at most `N x 2 a L / S` (the replace-one bound of the `K x V` block, `a L`
/// per document); the pair chosen moves it by `sqrt(2) a L N / S` when drawn, past the
/// add/remove-one bound. Only the first release is compared: later
/// E-steps start from different topics. Over 40 noise seeds the replaced document (slot 3 of 50,
/// drawn with probability `S/N = 0.2`) is in some batch except with probability
/// `0.8^40 < 1.4e-4` (the false-alarm rate of the "reaches beyond `a L`" check).
#[test]
fn lda_replace_one_document_moves_the_release_by_at_most_twice_the_bound() {
    use vips_models::lda::corpus::{Corpus, Document, ResamplingKey, SyntheticConfig};
    use vips_models::lda::{Lda, LdaConfig};
    const V: usize = 30;
    const K: usize = 3;
    const L: usize = 20;
    const A: f64 = 0.5;
    const DOCS: usize = 50;
    const BATCH: usize = 10;
    let model = Lda::new(
        LdaConfig::builder(K, V)
            .doc_length(Some(L))
            .clip_scale(A)
            .build()
            .unwrap(),
    );
    let corpus = SyntheticConfig::builder()
        .num_docs(DOCS)
        .vocab_size(V)
        .num_topics(K)
        .doc_length(40)
        .seed(4)
        .build()
        .unwrap()
        .generate()
        .unwrap()
        .corpus;
    // document 3 all on word 0, its replacement all on word 1: each statistic has norm at least
    // L / sqrt(K) > a L, so both are clipped to a L on disjoint columns and differ by sqrt(2) a L
    let mut docs = corpus.docs().to_vec();
    docs[3] = Document::new(vec![(0, 40)]).unwrap();
    let corpus = Corpus::new(docs.clone(), V).unwrap();
    docs[3] = Document::new(vec![(1, 40)]).unwrap();
    let neighbour = Corpus::new(docs, V).unwrap();
    let key = ResamplingKey::public_seed(42);
    let bound = DOCS as f64 * 2.0 * A * L as f64 / BATCH as f64;
    let mut beyond_add_remove = 0;
    for seed in 0..40 {
        let svi = SviConfig::builder()
            .population(Some(DOCS))
            .step(StepSize::Constant { rho: 1.0 })
            .stop(Stop::Iterations { iterations: 1 })
            .privacy(TARGET)
            .batching(Batching::fixed_size(BATCH).unwrap())
            .noise_seed(Some(seed))
            .init_seed(9)
            .build()
            .unwrap();
        let lambda = |c: &Corpus| {
            let docs = model.prepare(c, &key).unwrap();
            fit(&model, docs, &svi, |_, _| {})
                .unwrap()
                .result
                .global
                .lambda()
                .to_vec()
        };
        let (l0, l1) = (lambda(&corpus), lambda(&neighbour));
        let moved = l0
            .iter()
            .zip(&l1)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt();
        // the noise (same draws) cancels up to rounding at its scale
        assert!(
            moved <= bound * (1.0 + 1e-6),
            "seed {seed}: moved {moved} > {bound}"
        );
        if moved > 0.5 * bound * (1.0 + 1e-6) {
            beyond_add_remove += 1;
        }
    }
    assert!(
        beyond_add_remove > 0,
        "the replaced document never moved a release past a L"
    );
}

/// The noise actually drawn has the replace-one scale: with every record `0`, each `h_t` is
/// `N / S` times one Gaussian draw of std `sigma x 2 B`. Over 400 iterations the root mean square
/// of `h_t` over its expected std lies within `[0.8, 1.2]` except with probability below `1e-5`
/// (`400 rms^2 / std^2 ~ chi^2_400`: the band's ends are 5.5 and 5.8 sd from its centre by
/// Wilson-Hilferty); the add/remove-one scale (half) would give about 0.5.
#[test]
fn noise_has_the_replace_one_scale() {
    let privacy = Privacy::NoiseMultiplier {
        noise_multiplier: 1.5,
        epsilon: 1e6,
        delta: 1e-5,
    };
    let svi = builder(privacy, 400)
        .batching(Batching::fixed_size(S).unwrap())
        .build()
        .unwrap();
    let (h, result) = run(vec![0.0; N], &svi);
    assert_eq!(h.len(), 400);
    let sigma = result.privacy.noise_multiplier.unwrap();
    let std = sigma * 2.0 * BOUND * N as f64 / S as f64;
    let rms = (h.iter().map(|x| x * x).sum::<f64>() / h.len() as f64).sqrt();
    let ratio = rms / std;
    assert!(
        (0.8..=1.2).contains(&ratio),
        "rms / replace-one std = {ratio}"
    );
}
