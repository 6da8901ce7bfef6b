//! The PLD accountant as an option of the library front door, the CLI logic and the ledger:
//! `AccountantConfig::with_accountant(AccountantKind::Pld)`, serialised in the ledger and
//! replayed bit for bit.

use dp_accountant::calibrate::Sampling;
use dp_accountant::cli::{CliCommand, execute};
use dp_accountant::pld::{self, PldConfig};
use dp_accountant::{
    Accountant, AccountantConfig, AccountantError, AccountantKind, Budget, PrivacyEvent,
    calibrate_noise_multiplier, delta_for_event, epsilon_for_event,
};

fn pld_config() -> AccountantConfig {
    AccountantConfig::default().with_accountant(AccountantKind::Pld)
}

#[test]
fn front_door_matches_the_pld_module() {
    let run = PrivacyEvent::poisson_subsampled_gaussian(0.8, 0.004)
        .unwrap()
        .self_composed(2500)
        .unwrap();
    let r = epsilon_for_event(&run, 1e-5, &pld_config()).unwrap();
    let direct = pld::epsilon(&run, 1e-5, &PldConfig::default()).unwrap();
    assert_eq!(r.epsilon.to_bits(), direct.upper.to_bits());
    assert_eq!(r.epsilon_lower, Some(direct.lower));
    assert_eq!(r.method, "pld/connect-the-dots");
    let rdp = epsilon_for_event(&run, 1e-5, &AccountantConfig::default()).unwrap();
    assert!(r.epsilon <= rdp.epsilon && rdp.epsilon_lower.is_none());
    let d = delta_for_event(&run, r.epsilon, &pld_config()).unwrap();
    assert!(d.delta <= 1e-5 * (1.0 + 1e-9) && d.delta_lower.unwrap() <= d.delta);
}

#[test]
fn execute_answers_with_pld() {
    let out = execute(&CliCommand::Epsilon {
        sampling: Sampling::Poisson { rate: 1e-4 },
        noise_multiplier: 0.5,
        steps: 1,
        delta: 1e-5,
        config: pld_config(),
    })
    .unwrap();
    // issue 11: RDP gives 2.04 here, the PLD 0.0044
    let eps = out.json["epsilon"].as_f64().unwrap();
    assert!((eps - 0.0044).abs() < 5e-4, "{}", out.json);
    assert!(out.json["epsilon_lower"].as_f64().unwrap() <= eps);
    assert_eq!(out.json["accountant"], "pld");
    let fixed = execute(&CliCommand::Epsilon {
        sampling: Sampling::FixedSize {
            sample_size: 6,
            population: 60,
        },
        noise_multiplier: 1.0,
        steps: 3,
        delta: 1e-5,
        config: pld_config(),
    });
    // Fixed-size (replace-one) runs are covered too (docs/pld.md section 9), below RDP.
    let fixed = fixed.unwrap();
    let rdp_fixed = execute(&CliCommand::Epsilon {
        sampling: Sampling::FixedSize {
            sample_size: 6,
            population: 60,
        },
        noise_multiplier: 1.0,
        steps: 3,
        delta: 1e-5,
        config: AccountantConfig::default(),
    })
    .unwrap();
    let (p, r) = (
        fixed.json["epsilon"].as_f64().unwrap(),
        rdp_fixed.json["epsilon"].as_f64().unwrap(),
    );
    assert!(p > 0.0 && p < r, "PLD {p} vs RDP {r}");
    assert_eq!(fixed.json["accountant"], "pld");
}

#[test]
fn calibration_with_pld_lands_at_or_below_the_target() {
    let budget = Budget::new(1.0, 1e-5).unwrap();
    let sampling = Sampling::Poisson { rate: 0.01 };
    let fixed = Sampling::FixedSize {
        sample_size: 6,
        population: 60,
    };
    // Poisson and fixed-size batches (docs/pld.md, section 9): the PLD run certifies the
    // target with less noise than RDP's.
    for (s, steps) in [(sampling, 1000), (fixed, 10)] {
        let c = calibrate_noise_multiplier(s, steps, &budget, &pld_config()).unwrap();
        let check = pld::epsilon(
            &s.run_event(c.noise_multiplier, steps).unwrap(),
            1e-5,
            &PldConfig::default(),
        )
        .unwrap();
        assert!(check.upper <= 1.0 && c.epsilon == check.upper, "{s:?}");
        let rdp =
            calibrate_noise_multiplier(s, steps, &budget, &AccountantConfig::default()).unwrap();
        assert!(c.noise_multiplier < rdp.noise_multiplier, "{s:?}");
    }
    let fixed_steps = dp_accountant::max_steps(fixed, 1.0, &budget, &pld_config()).unwrap();
    assert!(fixed_steps.epsilon <= 1.0);
    let steps = dp_accountant::max_steps(sampling, 1.5, &budget, &pld_config()).unwrap();
    let rdp_steps =
        dp_accountant::max_steps(sampling, 1.5, &budget, &AccountantConfig::default()).unwrap();
    assert!(steps.steps > rdp_steps.steps && steps.epsilon <= 1.0);
}

#[test]
fn pld_ledger_round_trips_and_replays_bit_for_bit() {
    let mut ledger = Accountant::with_config(pld_config()).unwrap();
    let step = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01).unwrap();
    let budget = Budget::new(2.5, 1e-5).unwrap();
    let chunk = step.clone().self_composed(250).unwrap();
    let fill = |ledger: &mut Accountant| {
        for _ in 0..1000 {
            ledger.record("sgd step", step.clone()).unwrap();
        }
        let mut chunks = 0;
        while ledger
            .record_within("250 steps", chunk.clone(), &budget)
            .is_ok()
        {
            chunks += 1;
            assert!(chunks < 40, "budget never exhausted");
        }
        chunks
    };
    let pld_chunks = fill(&mut ledger);
    let spent = ledger.epsilon_report(1e-5).unwrap();
    assert!(spent.epsilon <= 2.5 && spent.epsilon_lower.unwrap() <= spent.epsilon);
    // PLD is tighter than RDP: more steps fit in the same budget
    let mut rdp_ledger = Accountant::new();
    let rdp_chunks = fill(&mut rdp_ledger);
    assert!(pld_chunks > rdp_chunks, "{pld_chunks} vs {rdp_chunks}");

    let json = ledger.to_json().unwrap();
    assert!(json.contains("\"accountant\": \"pld\""), "{json}");
    assert!(!rdp_ledger.to_json().unwrap().contains("\"accountant\""));
    let back = Accountant::from_json(&json).unwrap();
    assert_eq!(back.config().accountant(), AccountantKind::Pld);
    let again = back.epsilon_report(1e-5).unwrap();
    assert_eq!(again.epsilon.to_bits(), spent.epsilon.to_bits());
    assert_eq!(again.epsilon_lower, spent.epsilon_lower);

    // the CLI's replay reports the PLD answer and its lower bound
    let out = execute(&CliCommand::Replay {
        ledger_json: json.clone(),
        source: "mem".into(),
        delta: 1e-5,
    })
    .unwrap();
    assert_eq!(out.json["accountant"], "pld");
    assert_eq!(
        out.json["epsilon"].as_f64().unwrap().to_bits(),
        spent.epsilon.to_bits()
    );
    assert!(out.json["epsilon_lower"].is_f64());

    // the accountant kind is covered by the content hash
    let tampered = json.replace("\"accountant\": \"pld\",", "");
    assert!(matches!(
        Accountant::from_json(&tampered),
        Err(AccountantError::CorruptLedger { .. })
    ));
    // a PLD ledger of fixed-size events replays to the same epsilon
    let mut l2 = Accountant::with_config(pld_config()).unwrap();
    let fixed = PrivacyEvent::fixed_size_subsampled_gaussian(1.0, 6, 60).unwrap();
    l2.record("x", fixed.clone()).unwrap();
    l2.record("y", fixed).unwrap();
    let back = Accountant::from_json(&l2.to_json().unwrap()).unwrap();
    assert_eq!(back.epsilon(1e-5).unwrap(), l2.epsilon(1e-5).unwrap());
}
