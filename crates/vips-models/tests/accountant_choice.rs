//! Issue 22: the fit takes any accountant (`SviConfigBuilder::accountant`), calibrates with it,
//! records it in the ledger and the result JSON, and replay reproduces the epsilon under it; the
//! examples take `--accountant`.

use dp_accountant::{
    Accountant, AccountantConfig, AccountantKind, PrivacyEvent, epsilon_for_event,
};
use vips_models::engine::{Privacy, Stop, SviConfig, fit};
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

fn config(kind: AccountantKind, privacy: Privacy, stop: Stop) -> SviConfig {
    SviConfig::builder()
        .expected_batch_size(30.0)
        .stop(stop)
        .privacy(privacy)
        .accountant(kind)
        .noise_seed(Some(5))
        .population(Some(300))
        .build()
        .unwrap()
}

const TARGET: Privacy = Privacy::Target {
    epsilon: 1.0,
    delta: 1e-5,
};

#[test]
fn every_accountant_calibrates_records_and_replays_the_fit() {
    let (model, docs) = small();
    let mut sigmas = Vec::new();
    for kind in AccountantKind::ALL {
        let svi = config(kind, TARGET, Stop::Iterations { iterations: 12 });
        assert_eq!(svi.accountant(), kind);
        let result = fit(&model, docs.clone(), &svi, |_, _| {}).unwrap().result;
        let p = &result.privacy;
        let (eps, sigma) = (p.epsilon.unwrap(), p.noise_multiplier.unwrap());
        assert_eq!(p.accountant, kind);
        assert!(eps <= 1.0, "{kind}: spent {eps}");
        // the spent epsilon is that accountant's answer for the run's event
        let event = PrivacyEvent::poisson_subsampled_gaussian(sigma, 0.1)
            .unwrap()
            .self_composed(12)
            .unwrap();
        let own = AccountantConfig::default().with_accountant(kind);
        let reference = epsilon_for_event(&event, 1e-5, &own).unwrap().epsilon;
        assert!(
            (eps - reference).abs() <= 1e-9 * reference,
            "{kind}: ledger {eps} vs accountant {reference}"
        );
        // the result JSON names the accountant (RDP, the default, is implicit) and carries the
        // ledger, which replays to the same epsilon under it
        let json = serde_json::to_value(p).unwrap();
        if kind == AccountantKind::Rdp {
            assert!(json.get("accountant").is_none());
        } else {
            assert_eq!(json["accountant"], kind.name());
        }
        let ledger = Accountant::from_json(&json["ledger"].to_string()).unwrap();
        assert_eq!(ledger.config().accountant(), kind);
        assert_eq!(ledger.epsilon(1e-5).unwrap(), eps);
        let back: vips_models::engine::PrivacySummary = serde_json::from_value(json).unwrap();
        assert_eq!(back.accountant, kind);
        sigmas.push(sigma);
    }
    // PLD needs the least noise for the same target; the others at least RDP's
    let (rdp, pld) = (sigmas[0], sigmas[1]);
    assert!(pld < rdp, "{sigmas:?}");
    assert!(sigmas[2..].iter().all(|&s| s > rdp), "{sigmas:?}");
}

#[test]
fn stopping_by_budget_stops_where_the_chosen_accountant_says() {
    // a fixed noise multiplier: the looser the accountant, the fewer iterations fit
    let (model, docs) = small();
    let privacy = Privacy::NoiseMultiplier {
        noise_multiplier: 2.0,
        epsilon: 1.0,
        delta: 1e-5,
    };
    let mut iterations = Vec::new();
    for kind in [
        AccountantKind::Pld,
        AccountantKind::Rdp,
        AccountantKind::Linear,
    ] {
        let svi = config(
            kind,
            privacy,
            Stop::Budget {
                max_iterations: 1000,
            },
        );
        let result = fit(&model, docs.clone(), &svi, |_, _| {}).unwrap().result;
        assert!(result.privacy.epsilon.unwrap() <= 1.0, "{kind}");
        iterations.push(result.iterations);
    }
    assert!(
        iterations[0] > iterations[1] && iterations[1] > iterations[2],
        "{iterations:?}"
    );
}

#[test]
fn config_json_keeps_rdp_implicit_and_names_the_others() {
    let rdp = config(
        AccountantKind::Rdp,
        TARGET,
        Stop::Iterations { iterations: 3 },
    );
    let json = serde_json::to_value(&rdp).unwrap();
    assert!(json.get("accountant").is_none(), "{json}");
    let pld = config(
        AccountantKind::Pld,
        TARGET,
        Stop::Iterations { iterations: 3 },
    );
    let json = serde_json::to_value(&pld).unwrap();
    assert_eq!(json["accountant"], "pld");
    let back: SviConfig = serde_json::from_value(json).unwrap();
    assert_eq!(back.accountant(), AccountantKind::Pld);
}
