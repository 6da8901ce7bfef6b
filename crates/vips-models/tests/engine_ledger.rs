//! The engine's privacy bookkeeping: the ledger's epsilon equals the accountant's for the same
//! event (what `dp-accountant epsilon --noise-multiplier s --sampling-rate q --steps T --delta d`
//! computes), replaying the serialised ledger gives the same number, the budget is never exceeded,
//! stopping by budget stops, and bad settings are typed errors.

use dp_accountant::{Accountant, AccountantConfig, PrivacyEvent, epsilon_for_event};
use vips_models::engine::{EngineError, Privacy, Stop, SviConfig, fit};
use vips_models::lda::corpus::SyntheticConfig;
use vips_models::lda::{Lda, LdaConfig};

fn small() -> (Lda, Vec<vips_models::lda::corpus::Document>) {
    let data = SyntheticConfig::builder()
        .num_docs(300)
        .vocab_size(40)
        .num_topics(3)
        .doc_length(20)
        .build()
        .unwrap()
        .generate()
        .unwrap();
    let cfg = LdaConfig::builder(3, 40)
        .doc_length(Some(20))
        .clip_scale(0.2)
        .build()
        .unwrap();
    (Lda::new(cfg), data.corpus.into_docs())
}

#[test]
fn ledger_epsilon_equals_the_accountants_for_the_same_event() {
    let (model, docs) = small();
    let svi = SviConfig::builder()
        .expected_batch_size(30.0)
        .stop(Stop::Iterations { iterations: 12 })
        .privacy(Privacy::Target {
            epsilon: 2.0,
            delta: 1e-5,
        })
        .noise_seed(Some(5))
        .population(Some(300))
        .build()
        .unwrap();
    let result = fit(&model, docs, &svi, |_, _| {}).unwrap().result;
    let p = &result.privacy;
    let (eps, sigma) = (p.epsilon.unwrap(), p.noise_multiplier.unwrap());
    assert_eq!(result.iterations, 12);
    assert!(eps <= 2.0 + 1e-12, "spent {eps} > budget");
    assert!(
        eps > 1.9,
        "calibration should use most of the budget, got {eps}"
    );
    let q = 30.0 / 300.0;
    assert_eq!(p.sampling_rate, q);
    let event = PrivacyEvent::poisson_subsampled_gaussian(sigma, q)
        .unwrap()
        .self_composed(12)
        .unwrap();
    let reference = epsilon_for_event(&event, 1e-5, &AccountantConfig::default())
        .unwrap()
        .epsilon;
    assert!(
        (eps - reference).abs() <= 1e-9 * reference,
        "ledger {eps} vs accountant {reference}"
    );
    // The serialised summary carries the accountant's own JSON: replayable as is, and read back
    // into the same typed ledger.
    let json = serde_json::to_value(p).unwrap();
    let replayed = Accountant::from_json(&json["ledger"].to_string())
        .unwrap()
        .epsilon(1e-5)
        .unwrap();
    assert_eq!(replayed, eps);
    assert_eq!(p.ledger.as_ref().unwrap().epsilon(1e-5).unwrap(), eps);
    let back: vips_models::engine::PrivacySummary = serde_json::from_value(json).unwrap();
    assert_eq!(
        back.ledger.as_ref().unwrap().entries(),
        p.ledger.as_ref().unwrap().entries()
    );
    assert_eq!(back.epsilon, p.epsilon);
    // Per-iteration trace: epsilon non-decreasing, ending at the total.
    let spent: Vec<f64> = result
        .trace
        .iter()
        .map(|r| r.epsilon_spent.unwrap())
        .collect();
    assert!(spent.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*spent.last().unwrap(), eps);
    // The result serialises.
    let json = serde_json::to_string(&result).unwrap();
    assert!(json.contains("\"lambda\"") && json.contains("\"trace\""));
}

#[test]
fn stopping_by_budget_stops_before_the_budget_is_exceeded() {
    let (model, docs) = small();
    let svi = SviConfig::builder()
        .expected_batch_size(30.0)
        .stop(Stop::Budget {
            max_iterations: 10_000,
        })
        .privacy(Privacy::NoiseMultiplier {
            noise_multiplier: 1.5,
            epsilon: 1.0,
            delta: 1e-5,
        })
        .noise_seed(Some(1))
        .population(Some(300))
        .build()
        .unwrap();
    let result = fit(&model, docs, &svi, |_, _| {}).unwrap().result;
    let eps = result.privacy.epsilon.unwrap();
    assert!(result.iterations >= 1 && result.iterations < 10_000);
    assert!(eps <= 1.0);
    // One more release would have exceeded the budget.
    let event = PrivacyEvent::poisson_subsampled_gaussian(1.5, 0.1)
        .unwrap()
        .self_composed(result.iterations + 1)
        .unwrap();
    let next = epsilon_for_event(&event, 1e-5, &AccountantConfig::default())
        .unwrap()
        .epsilon;
    assert!(next > 1.0, "one more step ({next}) would still fit");
}

/// A fixed-iteration run past its budget fails with the wall's own `BudgetExhausted`, still
/// matchable through the engine's typed error (not flattened into a string).
#[test]
fn a_run_past_its_budget_fails_with_a_matchable_budget_exhausted() {
    let (model, docs) = small();
    let svi = SviConfig::builder()
        .expected_batch_size(30.0)
        .stop(Stop::Iterations { iterations: 10_000 })
        .privacy(Privacy::NoiseMultiplier {
            noise_multiplier: 1.5,
            epsilon: 1.0,
            delta: 1e-5,
        })
        .noise_seed(Some(1))
        .population(Some(300))
        .build()
        .unwrap();
    assert!(matches!(
        fit(&model, docs, &svi, |_, _| {}),
        Err(EngineError::Wall(
            dp_core::CoreError::BudgetExhausted { .. }
        ))
    ));
}

#[test]
fn non_private_runs_have_no_ledger_and_private_runs_need_a_bound() {
    let (model, docs) = small();
    let svi = SviConfig::builder()
        .expected_batch_size(30.0)
        .stop(Stop::Iterations { iterations: 3 })
        .build()
        .unwrap();
    let result = fit(&model, docs.clone(), &svi, |_, _| {}).unwrap().result;
    assert_eq!(result.privacy.epsilon, None);
    assert!(result.privacy.ledger.is_none());
    let unbounded = Lda::new(LdaConfig::builder(3, 40).build().unwrap());
    let private = SviConfig::builder()
        .expected_batch_size(30.0)
        .stop(Stop::Iterations { iterations: 3 })
        .privacy(Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        })
        .population(Some(300))
        .build()
        .unwrap();
    assert!(matches!(
        fit(&unbounded, docs, &private, |_, _| {}),
        Err(EngineError::UnboundedBlock { .. })
    ));
}

#[test]
fn bad_settings_are_typed_errors() {
    let bad = |b: vips_models::engine::SviConfigBuilder| b.build().unwrap_err();
    let base = SviConfig::builder;
    assert!(matches!(
        bad(base().expected_batch_size(f64::NAN)),
        EngineError::InvalidParameter { .. }
    ));
    assert!(matches!(
        bad(base().privacy(Privacy::Target {
            epsilon: 0.0,
            delta: 1e-5
        })),
        EngineError::InvalidParameter { .. }
    ));
    assert!(matches!(
        bad(base().privacy(Privacy::Target {
            epsilon: 1.0,
            delta: 1.0
        })),
        EngineError::InvalidParameter { .. }
    ));
    assert!(matches!(
        bad(base().stop(Stop::Iterations { iterations: 0 })),
        EngineError::InvalidParameter { .. }
    ));
    assert!(matches!(
        bad(base().stop(Stop::Budget { max_iterations: 5 })),
        EngineError::InvalidParameter { .. }
    ));
    assert!(vips_models::engine::StepSize::robbins_monro(1.0, 0.4).is_err());
    let (model, docs) = small();
    let too_big = base().expected_batch_size(1e6).build().unwrap();
    assert!(fit(&model, docs, &too_big, |_, _| {}).is_err());
    assert!(fit(&model, Vec::new(), &base().build().unwrap(), |_, _| {}).is_err());
}

#[test]
fn a_private_run_needs_a_declared_population_and_never_outputs_the_count() {
    let (model, docs) = small();
    let private = || {
        SviConfig::builder()
            .expected_batch_size(30.0)
            .stop(Stop::Iterations { iterations: 2 })
            .privacy(Privacy::Target {
                epsilon: 1.0,
                delta: 1e-5,
            })
            .noise_seed(Some(2))
    };
    let undeclared = private().build().unwrap();
    let err = fit(&model, docs.clone(), &undeclared, |_, _| {}).unwrap_err();
    assert!(matches!(err, EngineError::PopulationNotDeclared));
    assert!(err.to_string().contains("--population"));
    // A declared population below the batch size, or zero, is refused when building.
    assert!(private().population(Some(0)).build().is_err());
    assert!(private().population(Some(29)).build().is_err());
    // Declared 1000 (not the 300 records): q = S / 1000, and 300 appears nowhere in the result.
    let declared = private().population(Some(1000)).build().unwrap();
    let fitted = fit(&model, docs, &declared, |_, _| {}).unwrap();
    let p = &fitted.result.privacy;
    assert_eq!(p.sampling_rate, 30.0 / 1000.0);
    assert_eq!((p.public_population, p.population_declared), (1000, true));
    let json = serde_json::to_value(&fitted.result).unwrap();
    for key in [
        "records_clipped",
        "realised_population",
        "seconds",
        "cpu_seconds",
    ] {
        assert!(json.get(key).is_none(), "{key} in the private result");
    }
    let row = json["trace"][0].as_object().unwrap();
    assert!(
        row.keys()
            .all(|k| ["iteration", "rho", "epsilon_spent"].contains(&k.as_str()))
    );
    assert!(!json.to_string().contains(":300,") && !json.to_string().contains(":300}"));
    // The count and the clip counts are in the diagnostics, marked non-private.
    assert_eq!(fitted.diagnostics.realised_population, 300);
    let diag = serde_json::to_value(&fitted.diagnostics).unwrap();
    assert_eq!(diag["private"], serde_json::json!(false));
    assert_eq!(diag["realised_population"], serde_json::json!(300));
    assert_eq!(diag["trace"].as_array().unwrap().len(), 2);
}

/// A fit preceded by earlier releases of the same records: its ledger starts with them, its
/// epsilon covers both, and a configuration that would calibrate the fit alone is refused.
#[test]
fn a_fit_preceded_by_earlier_releases_accounts_them() {
    let (model, docs) = small();
    let earlier = {
        let mut l = Accountant::new();
        l.record(
            "earlier",
            PrivacyEvent::poisson_subsampled_gaussian(30.0, 1.0).unwrap(),
        )
        .unwrap();
        l.entries().to_vec()
    };
    let base = || {
        SviConfig::builder()
            .expected_batch_size(30.0)
            .stop(Stop::Iterations { iterations: 3 })
            .population(Some(300))
            .noise_seed(Some(2))
    };
    assert!(matches!(
        base()
            .privacy(Privacy::Target {
                epsilon: 1.0,
                delta: 1e-5
            })
            .preceded_by(earlier.clone())
            .build(),
        Err(EngineError::InvalidParameter { .. })
    ));
    let privacy = Privacy::NoiseMultiplier {
        noise_multiplier: 2.0,
        epsilon: 5.0,
        delta: 1e-5,
    };
    let alone = fit(
        &model,
        docs.clone(),
        &base().privacy(privacy).build().unwrap(),
        |_, _| {},
    )
    .unwrap()
    .result;
    let cfg = base()
        .privacy(privacy)
        .preceded_by(earlier)
        .build()
        .unwrap();
    let after = fit(&model, docs, &cfg, |_, _| {}).unwrap().result;
    let ledger = after.privacy.ledger.as_ref().unwrap();
    assert_eq!(ledger.len(), 4);
    assert_eq!(ledger.entries()[0].label, "earlier");
    assert!(after.privacy.epsilon.unwrap() > alone.privacy.epsilon.unwrap());
    assert_eq!(
        after.privacy.epsilon.unwrap(),
        ledger.epsilon(1e-5).unwrap()
    );
}
