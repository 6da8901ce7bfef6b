//! Issue 22: a DP-SEP run takes any accountant (`WallPlanBuilder::accountant`,
//! `PbpPrivacyBuilder::accountant`): the wall calibrates with it (dp-core's calibration, the VIPS
//! engine's), the spent epsilon is within the budget and is that accountant's answer for the run's
//! event, the ledger records the accountant and `dp-accountant replay` reproduces the epsilon; PLD
//! is refused, typed, for the replace-one samplers it cannot express.

use dp_accountant::cli::{CliCommand, execute};
use dp_accountant::{Accountant, AccountantConfig, AccountantKind, epsilon_for_event};
use dp_core::RngPolicy;
use dp_sep::mog::{Family, MogModel, generate};
use dp_sep::pbp::{PbpConfig, PbpPrivacy};
use dp_sep::{
    Batching, DpSepConfig, FactorWall, SamplingScheme, SepError, SepState, WallPlan, run_dp_sep,
};
use rand::SeedableRng;

const N: usize = 200;
const EPSILON: f64 = 1.0;
const DELTA: f64 = 1e-5;

fn setup() -> (MogModel, SepState, Vec<Vec<f64>>) {
    let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(3);
    let data = generate(N, 2, 2, 0.5, &mut rng);
    let model = MogModel::new(2, 2, 0.5, Family::Diagonal).unwrap();
    let prior = model.prior();
    let mut factor = vec![0.0; prior.len()];
    factor[0] = -1.0 / N as f64;
    factor[4] = 1.0 / N as f64;
    let state = SepState::new(prior, factor, N).unwrap();
    (model, state, data.points)
}

fn plan(sampling: SamplingScheme, steps: u64, kind: AccountantKind) -> Result<WallPlan, SepError> {
    WallPlan::builder()
        .population(N)
        .dim(8)
        .budget(EPSILON, DELTA)
        .clip(0.5)
        .steps(steps)
        .sampling(sampling)
        .rng(RngPolicy::Seeded { seed: 9 })
        .accountant(kind)
        .build()
}

/// `dp-accountant replay`'s epsilon for a ledger's JSON.
fn replay(ledger: &Accountant) -> f64 {
    let out = execute(&CliCommand::Replay {
        ledger_json: ledger.to_json().unwrap(),
        source: "test".into(),
        delta: DELTA,
    })
    .unwrap();
    assert_eq!(out.json["accountant"], ledger.config().accountant().name());
    out.json["epsilon"].as_f64().unwrap()
}

#[test]
fn every_accountant_calibrates_a_poisson_run_within_budget_and_replays() {
    let batching = Batching::poisson(20).unwrap();
    let epochs = 3;
    let steps = dp_sep::planned_steps(batching, epochs, N, false).unwrap();
    let sampling = batching.sampling_for(N).unwrap();
    let mut sigmas = Vec::new();
    for kind in AccountantKind::ALL {
        let (mut model, mut state, points) = setup();
        let plan = plan(sampling, steps, kind).unwrap();
        assert_eq!(plan.accountant(), kind);
        let mut wall = FactorWall::new(points, &plan).unwrap();
        assert_eq!(wall.accountant(), kind);
        let config = DpSepConfig::builder()
            .gamma(N as f64)
            .epochs(epochs)
            .batching(batching)
            .build()
            .unwrap();
        let (report, _) = run_dp_sep(&mut model, &mut state, &mut wall, &config).unwrap();
        assert_eq!(report.accountant, kind);
        assert_eq!(report.releases, steps);
        let sigma = report.noise_multiplier;
        // within the budget, and the accountant's own answer for the run's event
        let own = AccountantConfig::default().with_accountant(kind);
        let run = sampling.run_event(sigma, N, steps).unwrap();
        let reference = epsilon_for_event(&run, DELTA, &own).unwrap().epsilon;
        assert!(
            report.epsilon <= EPSILON,
            "{kind}: spent {}",
            report.epsilon
        );
        assert!(
            (report.epsilon - reference).abs() <= 1e-9 * reference,
            "{kind}: wall {} vs accountant {reference}",
            report.epsilon
        );
        // the smallest such multiplier: 0.1% less noise is over budget under the same accountant
        let less = sampling.run_event(sigma * (1.0 - 1e-3), N, steps).unwrap();
        let over = epsilon_for_event(&less, DELTA, &own).unwrap().epsilon;
        assert!(over > EPSILON, "{kind}: {over}");
        // the ledger names the accountant (RDP implicit in its JSON), and replay reproduces it
        let ledger = wall.core().ledger();
        assert_eq!(ledger.config().accountant(), kind);
        let json = ledger.to_json().unwrap();
        assert_eq!(
            json.contains(&format!("\"accountant\": \"{}\"", kind.name()))
                || json.contains(&format!("\"accountant\":\"{}\"", kind.name())),
            kind != AccountantKind::Rdp,
            "{kind}: {json}"
        );
        let back = Accountant::from_json(&json).unwrap();
        assert_eq!(back.config().accountant(), kind);
        assert_eq!(replay(&back), report.epsilon, "{kind}");
        // the report's JSON keeps RDP implicit and names the others
        let report_json = serde_json::to_value(&report).unwrap();
        match kind {
            AccountantKind::Rdp => assert!(report_json.get("accountant").is_none()),
            _ => assert_eq!(report_json["accountant"], kind.name()),
        }
        sigmas.push(sigma);
    }
    // PLD needs the least noise for the same budget; every other accountant at least RDP's
    assert!(sigmas[1] < sigmas[0], "{sigmas:?}");
    assert!(sigmas[2..].iter().all(|&s| s > sigmas[0]), "{sigmas:?}");
}

#[test]
fn every_accountant_accounts_replace_one_subsampling_and_pld_needs_the_least_noise() {
    let fixed = SamplingScheme::fixed_size(10).unwrap();
    for sampling in [SamplingScheme::uniform_single(), fixed] {
        let mut sigmas = Vec::new();
        for kind in AccountantKind::ALL {
            let plan = plan(sampling, 40, kind).unwrap();
            let wall = FactorWall::new(setup().2, &plan).unwrap();
            let spent = wall.epsilon_spent().unwrap();
            assert!(spent <= EPSILON, "{kind} {sampling:?}: {spent}");
            assert_eq!(replay(wall.core().ledger()), spent, "{kind} {sampling:?}");
            sigmas.push((kind, wall.noise_multiplier()));
        }
        let pld = sigmas
            .iter()
            .find(|(k, _)| *k == AccountantKind::Pld)
            .unwrap()
            .1;
        for (kind, s) in &sigmas {
            assert!(pld <= *s, "{sampling:?}: PLD {pld} above {kind} {s}");
        }
    }
    // A shuffled epoch is a (replace-one) Gaussian per epoch, which PLD expresses.
    let plan = plan(
        SamplingScheme::ShuffledEpoch,
        2 * N as u64,
        AccountantKind::Pld,
    )
    .unwrap();
    let wall = FactorWall::new(setup().2, &plan).unwrap();
    let spent = wall.epsilon_spent().unwrap();
    assert!(spent <= EPSILON, "{spent}");
    assert_eq!(replay(wall.core().ledger()), spent);
}

#[test]
fn pbp_config_accepts_pld_with_one_record_draws_and_fixed_size_batches() {
    let privacy = |kind| {
        PbpPrivacy::builder()
            .budget(EPSILON, DELTA)
            .population(1000)
            .accountant(kind)
            .build()
            .unwrap()
    };
    let config = |kind, batching| {
        PbpConfig::builder()
            .clip(1.0)
            .sampling(SamplingScheme::uniform_single())
            .batching(batching)
            .privacy(privacy(kind))
            .build()
    };
    for batching in [
        Batching::OneRecord,
        Batching::fixed_size(10).unwrap(),
        Batching::poisson(10).unwrap(),
    ] {
        let ok = config(AccountantKind::Pld, batching).unwrap();
        assert_eq!(ok.privacy().unwrap().accountant(), AccountantKind::Pld);
    }
    assert!(config(AccountantKind::Moments, Batching::OneRecord).is_ok());
}
