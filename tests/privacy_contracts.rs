//! Cross-crate privacy contracts: what dp-core releases is exactly what dp-accountant is told,
//! under the relation the sampler implies, and the audit CLI gives the same numbers as a run's
//! ledger.

use dp_accountant::calibrate::Sampling;
use dp_accountant::cli::{CliCommand, execute};
use dp_accountant::{Accountant, AccountantConfig, Budget, Neighbouring, epsilon_for_event};
use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};

/// Every sampling scheme states the relation of the event it yields, and its sensitivity factor
/// is 1 for add/remove-one and 2 for replace-one (DESIGN.md Sec. 3).
#[test]
fn samplers_yield_events_under_their_own_relation() {
    let schemes = [
        SamplingScheme::poisson(0.01).unwrap(),
        SamplingScheme::fixed_size(10).unwrap(),
        SamplingScheme::uniform_single(),
    ];
    for scheme in schemes {
        let event = scheme.event(1.3, 1000).unwrap();
        assert_eq!(event.neighbouring().unwrap(), scheme.neighbouring());
        let expected_factor = match scheme.neighbouring() {
            Neighbouring::AddRemoveOne => 1.0,
            Neighbouring::ReplaceOne => 2.0,
        };
        assert_eq!(scheme.sensitivity_factor(), expected_factor);
    }
}

/// A wall that made `k` Poisson releases has spent exactly what the audit CLI reports for
/// `--noise-multiplier sigma --sampling-rate q --steps k`, and its ledger replays to the same
/// number bit for bit.
#[test]
fn wall_ledger_matches_the_audit_cli_and_replays() {
    let q = 0.05;
    let releases = 7u64;
    let records: Vec<f64> = (0..200).map(|i| (i as f64 / 200.0) - 0.5).collect();
    let mut wall = PrivacyWall::builder(records)
        .sampling(SamplingScheme::poisson(q).unwrap())
        .epsilon_delta(2.0, 1e-5)
        .calibrate_for_releases(releases)
        .seed(11)
        .build()
        .unwrap();
    let mut b = ReleaseSpec::builder("x");
    let x = b.vector("x", 1, 1.0).unwrap();
    let spec = b.build().unwrap();
    for _ in 0..releases {
        wall.release(&spec, |r: &f64, out| out.push(x, 0, *r))
            .unwrap();
    }
    let sigma = wall.noise_multiplier().unwrap();
    let spent = wall.spent_epsilon().unwrap();
    assert!(spent <= 2.0, "spent {spent} exceeds the budget");

    let cli = execute(&CliCommand::Epsilon {
        sampling: Sampling::Poisson { rate: q },
        noise_multiplier: sigma,
        steps: releases,
        delta: 1e-5,
        config: AccountantConfig::default(),
    })
    .unwrap();
    let cli_eps = cli.json["epsilon"].as_f64().unwrap();
    assert!(
        (cli_eps - spent).abs() <= 1e-9 * spent,
        "ledger {spent} vs CLI {cli_eps}"
    );

    let replayed = Accountant::from_json(&wall.ledger().to_json().unwrap()).unwrap();
    assert_eq!(replayed.epsilon(1e-5).unwrap().to_bits(), spent.to_bits());
}

/// Once the budget is spent the wall refuses, and the refusal leaves the ledger untouched.
#[test]
fn an_exhausted_wall_refuses_and_keeps_its_ledger() {
    let records = vec![1.0f64; 50];
    let mut wall = PrivacyWall::builder(records)
        .sampling(SamplingScheme::poisson(0.2).unwrap())
        .budget(Budget::new(1.0, 1e-5).unwrap())
        .calibrate_for_releases(3)
        .seed(3)
        .build()
        .unwrap();
    let mut b = ReleaseSpec::builder("x");
    let x = b.vector("x", 1, 1.0).unwrap();
    let spec = b.build().unwrap();
    let mut made = 0;
    while wall.can_release().unwrap() {
        wall.release(&spec, |r: &f64, out| out.push(x, 0, *r))
            .unwrap();
        made += 1;
        assert!(made <= 1000, "the wall never stops releasing");
    }
    assert!(
        made >= 3,
        "the calibrated wall affords its planned releases"
    );
    let before = wall.ledger().to_json().unwrap();
    assert!(
        wall.release(&spec, |r: &f64, out| out.push(x, 0, *r))
            .is_err()
    );
    assert_eq!(wall.ledger().to_json().unwrap(), before);
    let event = wall.event_per_release().unwrap().clone();
    let k = wall.releases_made();
    let direct = epsilon_for_event(
        &event.self_composed(k).unwrap(),
        1e-5,
        &AccountantConfig::default(),
    )
    .unwrap()
    .epsilon;
    assert!((direct - wall.spent_epsilon().unwrap()).abs() <= 1e-9);
}
