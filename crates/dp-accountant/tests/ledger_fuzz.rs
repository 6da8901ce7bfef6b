//! Ledger JSON from untrusted hands: arbitrary bytes, byte-level mutations of valid ledgers,
//! and valid ledgers of extreme events. Every input gives a typed error or a valid result,
//! never a panic, a NaN or a finite value below what the event spends (issue 17).

use dp_accountant::{Accountant, AccountantError, PrivacyEvent};
use proptest::prelude::*;

fn valid_ledger() -> String {
    let mut ledger = Accountant::new();
    let step = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01).unwrap();
    ledger
        .record("training", step.self_composed(1000).unwrap())
        .unwrap();
    let full = PrivacyEvent::gaussian(3.0, dp_accountant::Neighbouring::AddRemoveOne).unwrap();
    ledger.record("release", full).unwrap();
    ledger.to_json().unwrap()
}

/// Replays `text`: a typed error, or a ledger whose epsilon is a number (possibly +inf).
fn replay(text: &str) -> Result<(), TestCaseError> {
    match Accountant::from_json(text) {
        Err(e @ AccountantError::CorruptLedger { .. }) => {
            prop_assert!(e.to_string().len() > "corrupt ledger: ".len())
        }
        Err(other) => prop_assert!(false, "untyped failure {other:?}"),
        Ok(ledger) => {
            for delta in [1e-5, 0.5] {
                match ledger.epsilon(delta) {
                    Ok(e) => prop_assert!(e >= 0.0, "epsilon {e}"),
                    Err(AccountantError::Empty(_) | AccountantError::ResourceLimit { .. }) => {}
                    Err(other) => prop_assert!(false, "unexpected {other:?}"),
                }
            }
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Mutation {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Digit(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Replace(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), b'0'..=b'9').prop_map(|(i, b)| Mutation::Digit(i, b)),
    ]
}

fn apply(mut bytes: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let n = bytes.len().max(1);
        match *m {
            Mutation::Replace(i, b) if !bytes.is_empty() => bytes[i % n] = b,
            Mutation::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
            Mutation::Delete(i) if !bytes.is_empty() => {
                bytes.remove(i % n);
            }
            Mutation::Digit(i, d) => {
                // change a digit in place (numbers stay numbers: reaches the validation)
                let digits: Vec<usize> = (0..bytes.len())
                    .filter(|&k| bytes[k].is_ascii_digit())
                    .collect();
                if !digits.is_empty() {
                    bytes[digits[i % digits.len()]] = d;
                }
            }
            _ => {}
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        replay(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn mutated_ledgers_never_panic(mutations in proptest::collection::vec(mutation(), 1..8)) {
        let bytes = apply(valid_ledger().into_bytes(), &mutations);
        replay(&String::from_utf8_lossy(&bytes))?;
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    /// Valid ledgers of extreme events replay bit for bit.
    #[test]
    fn extreme_events_replay_bit_for_bit(
        sigma_bits in 1u64..0x7fef_ffff_ffff_ffff,
        q in prop_oneof![Just(1.0), 1e-12f64..1.0],
        steps in 1u64..1_000_000_000_000,
    ) {
        let sigma = f64::from_bits(sigma_bits);
        let event = PrivacyEvent::poisson_subsampled_gaussian(sigma, q).unwrap().self_composed(steps).unwrap();
        let mut ledger = Accountant::new();
        ledger.record("run", event).unwrap();
        let eps = ledger.epsilon(1e-5).unwrap();
        prop_assert!(eps >= 0.0);
        let back = Accountant::from_json(&ledger.to_json().unwrap()).unwrap();
        prop_assert_eq!(back.epsilon(1e-5).unwrap().to_bits(), eps.to_bits());
    }
}
