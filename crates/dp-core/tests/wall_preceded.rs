//! A wall preceded by earlier releases of the same data (`WallBuilder::preceded_by`): the
//! ledger starts with them, every budget check covers them, and the settings that would ignore
//! them are refused.

use dp_accountant::{Accountant, AccountantConfig, AccountantKind, LedgerEntry, PrivacyEvent};
use dp_core::{CoreError, PrivacyWall, ReleaseSpec, SamplingScheme};

fn gaussian(sigma: f64) -> PrivacyEvent {
    PrivacyEvent::poisson_subsampled_gaussian(sigma, 1.0).unwrap()
}

fn earlier(sigma: f64) -> Vec<LedgerEntry> {
    let mut ledger = Accountant::new();
    ledger.record("earlier release", gaussian(sigma)).unwrap();
    ledger.entries().to_vec()
}

fn wall(entries: Vec<LedgerEntry>, sigma: f64) -> Result<PrivacyWall<f64>, CoreError> {
    PrivacyWall::builder(vec![0.5; 100])
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .public_population_size(100)
        .epsilon_delta(1.0, 1e-5)
        .noise_multiplier(sigma)
        .preceded_by(entries)
        .seed(3)
        .build()
}

#[test]
fn the_ledger_starts_with_the_earlier_releases_and_covers_both() {
    let (s1, s2) = (20.0, 5.0);
    let mut w = wall(earlier(s1), s2).unwrap();
    assert_eq!(w.ledger().len(), 1);
    assert_eq!(w.ledger().entries()[0].label, "earlier release");
    let before = w.spent_epsilon().unwrap();
    let mut spec = ReleaseSpec::builder("x");
    let b = spec.vector("x", 1, 1.0).unwrap();
    let spec = spec.build().unwrap();
    w.release(&spec, |x: &f64, buf| buf.push(b, 0, *x)).unwrap();
    assert_eq!(w.ledger().len(), 2);
    // The spent epsilon is the composition of both (RDP: the two Gaussians' orders add), and
    // it exceeds either release alone.
    let mut both = Accountant::new();
    both.record("a", gaussian(s1)).unwrap();
    both.record("b", gaussian(s2)).unwrap();
    let spent = w.spent_epsilon().unwrap();
    assert_eq!(spent, both.epsilon(1e-5).unwrap());
    assert!(spent > before);
    let mut alone = Accountant::new();
    alone.record("b", gaussian(s2)).unwrap();
    assert!(spent > alone.epsilon(1e-5).unwrap());
}

#[test]
fn a_release_that_fits_alone_but_not_after_the_earlier_ones_is_refused() {
    // sigma 5 alone fits eps 1; after an earlier release at sigma 5 it does not.
    let mut alone = Accountant::new();
    alone.record("b", gaussian(5.0)).unwrap();
    assert!(alone.epsilon(1e-5).unwrap() <= 1.0);
    let mut w = wall(earlier(5.0), 5.0).unwrap();
    let mut spec = ReleaseSpec::builder("x");
    let b = spec.vector("x", 1, 1.0).unwrap();
    let spec = spec.build().unwrap();
    assert!(!w.can_release().unwrap());
    assert!(matches!(
        w.release(&spec, |x: &f64, buf| buf.push(b, 0, *x)),
        Err(CoreError::BudgetExhausted { .. })
    ));
    assert_eq!(w.ledger().len(), 1);
}

#[test]
fn settings_that_would_ignore_the_earlier_releases_are_refused() {
    // Earlier releases alone beyond the budget.
    assert!(matches!(
        wall(earlier(0.5), 5.0),
        Err(CoreError::BudgetExhausted { .. })
    ));
    // Calibrating this run alone would ignore them.
    let calibrated = PrivacyWall::builder(vec![0.5; 100])
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .public_population_size(100)
        .epsilon_delta(1.0, 1e-5)
        .calibrate_for_releases(1)
        .preceded_by(earlier(20.0))
        .build();
    assert!(matches!(calibrated, Err(CoreError::Misconfigured(_))));
    // A non-private wall after private releases.
    let non_private = PrivacyWall::builder(vec![0.5; 100])
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .preceded_by(earlier(20.0))
        .build();
    assert!(matches!(non_private, Err(CoreError::Misconfigured(_))));
    // Entries under another neighbouring relation than this wall's releases: refused at build.
    let replace_one = PrivacyEvent::fixed_size_subsampled_gaussian(20.0, 1, 100).unwrap();
    let mut other = Accountant::with_config(AccountantConfig::default()).unwrap();
    other.record("replace-one", replace_one).unwrap();
    let mixed = PrivacyWall::builder(vec![0.5; 100])
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .public_population_size(100)
        .epsilon_delta(1.0, 1e-5)
        .noise_multiplier(5.0)
        .accountant_config(AccountantConfig::default().with_accountant(AccountantKind::Rdp))
        .preceded_by(other.entries().to_vec())
        .build();
    assert!(matches!(mixed, Err(CoreError::Accountant(_))), "{mixed:?}");
}
