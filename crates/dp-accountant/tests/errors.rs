//! Every typed error variant is reachable (or, for `Serialise`, constructible from the
//! serialiser's error) and says what went wrong; configurations are valid by construction and
//! by deserialisation.

use std::error::Error as _;

use dp_accountant::baselines::optimal_composition_epsilon;
use dp_accountant::cli::{
    MAX_LEDGER_BYTES, StepsError, parse_steps, read_ledger, sampling_from_flags,
};
use dp_accountant::{
    Accountant, AccountantConfig, AccountantError, AccountantKind, Budget, Conversion, LedgerFault,
    Orders, PrivacyEvent, Sampling, Unreachable, calibrate_noise_multiplier,
};

fn ledger_json(config: AccountantConfig) -> String {
    let mut ledger = Accountant::with_config(config).unwrap();
    ledger
        .record(
            "step",
            PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01).unwrap(),
        )
        .unwrap();
    ledger.to_json().unwrap()
}

fn fault(e: AccountantError) -> (Option<String>, LedgerFault) {
    match e {
        AccountantError::CorruptLedger { file, fault } => (file, fault),
        other => panic!("not a corrupt ledger: {other:?}"),
    }
}

#[test]
fn accountant_config_is_valid_by_construction_and_deserialisation() {
    for (orders, empty) in [
        (Orders::Custom(vec![]), true),
        (Orders::Custom(vec![2.0, 1.0]), false),
        (Orders::Custom(vec![f64::NAN]), false),
    ] {
        let built = AccountantConfig::builder().orders(orders.clone()).build();
        let new = AccountantConfig::new(orders, Conversion::Classic);
        for e in [built.unwrap_err(), new.unwrap_err()] {
            if empty {
                assert!(matches!(e, AccountantError::Empty(_)), "{e:?}");
            } else {
                assert!(
                    matches!(e, AccountantError::InvalidParameter { name: "order", .. }),
                    "{e:?}"
                );
            }
        }
    }
    let config = AccountantConfig::builder()
        .orders(Orders::custom(vec![2.0, 8.0]).unwrap())
        .conversion(Conversion::Classic)
        .accountant(AccountantKind::Moments)
        .build()
        .unwrap();
    assert_eq!(config.orders(), &Orders::Custom(vec![2.0, 8.0]));
    assert_eq!(config.conversion(), Conversion::Classic);
    assert_eq!(config.accountant(), AccountantKind::Moments);
    assert_eq!(
        config
            .clone()
            .with_conversion(Conversion::Improved)
            .conversion(),
        Conversion::Improved
    );
    // the JSON form is unchanged (`accountant` always written, optional when read)
    let json = serde_json::to_string(&config).unwrap();
    assert_eq!(
        json,
        r#"{"orders":{"kind":"custom","orders":[2.0,8.0]},"conversion":"classic","accountant":"moments"}"#
    );
    assert_eq!(
        serde_json::from_str::<AccountantConfig>(&json).unwrap(),
        config
    );
    let rdp: AccountantConfig =
        serde_json::from_str(r#"{"orders":{"kind":"continuous"},"conversion":"improved"}"#)
            .unwrap();
    assert_eq!(rdp, AccountantConfig::default());
    // an invalid deserialised configuration is an error, never a panic or an unchecked value
    for bad in [
        r#"{"orders":{"kind":"custom","orders":[]},"conversion":"improved"}"#,
        r#"{"orders":{"kind":"custom","orders":[0.5]},"conversion":"improved"}"#,
    ] {
        let e = serde_json::from_str::<AccountantConfig>(bad).unwrap_err();
        assert!(
            e.to_string().contains("order"),
            "{bad}: the message names the orders: {e}"
        );
    }
}

#[test]
fn ledger_with_invalid_orders_is_a_typed_error() {
    // a ledger whose orders were edited: the hash catches it first ...
    let json = ledger_json(
        AccountantConfig::new(Orders::custom(vec![2.0]).unwrap(), Conversion::Improved).unwrap(),
    );
    let edited = json.replace("2.0", "0.5");
    assert_ne!(edited, json);
    let (file, f) = fault(Accountant::from_json(&edited).unwrap_err());
    assert_eq!(file, None);
    assert!(matches!(f, LedgerFault::HashMismatch { .. }), "{f:?}");
    assert!(
        f.to_string()
            .starts_with("content hash mismatch: file says sha256:")
    );
    // ... and orders under a correct hash are `InvalidConfig` (unit test in ledger.rs)
}

#[test]
fn corrupt_ledger_faults_and_messages() {
    let json = ledger_json(AccountantConfig::default());
    // not JSON: the serialiser's error is the source
    let e = Accountant::from_json("{not json").unwrap_err();
    assert!(
        e.to_string().starts_with("corrupt ledger: not a ledger: "),
        "{e}"
    );
    let (_, f) = fault(e.clone());
    match &f {
        LedgerFault::NotJson(json_error) => {
            assert_eq!(json_error.get().line(), 1);
            assert!(json_error.get().is_syntax());
        }
        other => panic!("{other:?}"),
    }
    assert!(f.source().is_some());
    // naming the file keeps the fault
    let named = e.in_file("run.json");
    assert!(
        named
            .to_string()
            .starts_with("corrupt ledger: run.json: not a ledger: "),
        "{named}"
    );
    // unknown format
    let other = json.replace("dp-accountant-ledger/1", "dp-accountant-ledger/9");
    let (_, f) = fault(Accountant::from_json(&other).unwrap_err());
    assert_eq!(
        f,
        LedgerFault::UnknownFormat {
            found: "dp-accountant-ledger/9".into()
        }
    );
    assert_eq!(f.to_string(), r#"unknown format "dp-accountant-ledger/9""#);
    // the hash
    let tampered = json.replace("\"step\"", "\"stop\"");
    let (_, f) = fault(Accountant::from_json(&tampered).unwrap_err());
    match &f {
        LedgerFault::HashMismatch { stated, computed } => {
            assert_ne!(stated, computed);
            assert!(f.to_string().contains(computed.as_str()));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn reading_a_ledger_file_names_the_file() {
    let json = ledger_json(AccountantConfig::default());
    // Removed, with everything in it, when the test ends.
    let dir = tempfile::Builder::new()
        .prefix("dp-accountant-errors-")
        .tempdir()
        .unwrap();
    let temp_file = |name: &str| dir.path().join(name);
    let good = temp_file("good.json");
    std::fs::write(&good, &json).unwrap();
    assert_eq!(read_ledger(&good).unwrap(), json);

    let missing = temp_file("missing.json");
    let e = read_ledger(&missing).unwrap_err();
    let (file, f) = fault(e.clone());
    assert_eq!(file, Some(missing.display().to_string()));
    match &f {
        LedgerFault::Unreadable(io) => assert_eq!(io.get().kind(), std::io::ErrorKind::NotFound),
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string().starts_with(&format!(
            "corrupt ledger: {}: cannot read: ",
            missing.display()
        )),
        "{e}"
    );

    let huge = temp_file("huge.json");
    let file = std::fs::File::create(&huge).unwrap();
    file.set_len(MAX_LEDGER_BYTES + 1).unwrap(); // sparse: nothing is written
    drop(file);
    let (_, f) = fault(read_ledger(&huge).unwrap_err());
    assert_eq!(
        f,
        LedgerFault::TooLarge {
            bytes: MAX_LEDGER_BYTES + 1,
            limit: MAX_LEDGER_BYTES
        }
    );
    assert_eq!(
        f.to_string(),
        "67108865 bytes is more than a ledger may hold (67108864)"
    );
    std::fs::remove_file(&huge).unwrap();

    let binary = temp_file("binary.json");
    std::fs::write(&binary, b"{\"a\": \xff}").unwrap();
    let (_, f) = fault(read_ledger(&binary).unwrap_err());
    assert_eq!(f, LedgerFault::NotUtf8 { valid_up_to: 6 });
    assert_eq!(f.to_string(), "not UTF-8 text (byte 6)");
}

#[test]
fn unreachable_targets_are_typed() {
    let budget = Budget::new(1e-9, 1e-12).unwrap();
    let e = calibrate_noise_multiplier(
        Sampling::Poisson { rate: 1.0 },
        1_000_000,
        &budget,
        &AccountantConfig::default(),
    )
    .unwrap_err();
    match &e {
        AccountantError::Unreachable(Unreachable::NoiseMultiplier {
            epsilon,
            delta,
            steps,
            max_noise_multiplier,
        }) => {
            assert_eq!((*epsilon, *delta, *steps), (1e-9, 1e-12, 1_000_000));
            assert!(*max_noise_multiplier >= 1e6);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string()
            .starts_with("no admissible value: no noise multiplier up to ")
            && e.to_string()
                .ends_with("reaches epsilon = 1e-9 at delta = 1e-12 within 1000000 steps"),
        "{e}"
    );
    let e = optimal_composition_epsilon(1.0, 0.01, 10, 0.05).unwrap_err();
    assert_eq!(
        e,
        AccountantError::Unreachable(Unreachable::CompositionDelta {
            delta_total: 0.05,
            delta: 0.01,
            k: 10
        })
    );
    assert_eq!(
        e.to_string(),
        "no admissible value: delta_total 0.05 is below 1 - (1 - delta)^k (delta = 0.01, k = 10)"
    );
}

#[test]
fn flag_errors_are_typed() {
    let e = sampling_from_flags(Some(0.01), Some(10), None, false).unwrap_err();
    assert!(matches!(e, AccountantError::InconsistentFlags(_)));
    assert!(
        e.to_string().starts_with("give either --sampling-rate"),
        "{e}"
    );
    let e = AccountantError::IgnoredFlags {
        flags: "--orders and --classic",
        accountant: AccountantKind::Pld,
    };
    assert_eq!(
        e.to_string(),
        "--orders and --classic have no effect with --accountant pld (they configure the RDP accountant)"
    );
    let e = "renyi".parse::<AccountantKind>().unwrap_err();
    assert_eq!(
        e,
        AccountantError::UnknownAccountant {
            given: "renyi".into()
        }
    );
    assert_eq!(parse_steps(" 1000 "), Ok(1000));
    assert_eq!(parse_steps("-1"), Err(StepsError::NotWhole));
    assert_eq!(parse_steps("1e30"), Err(StepsError::TooMany));
    assert_eq!(
        StepsError::TooMany.to_string(),
        "more steps than a 64-bit counter holds (at most 1.8e19)"
    );
}

#[test]
fn serialise_error_keeps_the_serialiser_error() {
    // unreachable for validated ledgers (every value serialises); its form, from a real error
    let json_error = serde_json::from_str::<u8>("300").unwrap_err();
    let message = json_error.to_string();
    let e = AccountantError::Serialise(json_error.into());
    assert_eq!(e.to_string(), format!("cannot serialise ledger: {message}"));
    assert!(e.source().is_some());
    assert_eq!(e.clone(), e);
}
