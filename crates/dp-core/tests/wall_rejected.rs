//! A statistic may reject its record ([`ContributionBuffer::reject_record`]): in a private
//! release the record is replaced by zero (bit-identical to the release without it), counted,
//! and the release is charged; in a non-private release the release fails with a typed error
//! that names the rejection and its fixed reason, nothing record-derived. Writes made before the
//! rejection, in entry, dense and run form, are discarded.

use dp_core::{ContributionBuffer, CoreError, PrivacyWall, ReleaseSpec, SamplingScheme};

/// A record: its value, or `None` for one the statistic rejects after writing to every block.
type Rec = Option<f64>;

fn wall(records: Vec<Rec>, private: bool) -> PrivacyWall<Rec> {
    let b = PrivacyWall::builder(records)
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .public_population_size(40)
        .require_public_population()
        .seed(11);
    let b = if private {
        b.epsilon_delta(1e6, 1e-5).noise_multiplier(1.0)
    } else {
        b.non_private()
    };
    b.build().unwrap()
}

fn spec() -> (ReleaseSpec, impl Fn(&Rec, &mut ContributionBuffer) + Sync) {
    let mut b = ReleaseSpec::builder("rejecting statistic");
    let v = b.vector("v", 3, 1.0).unwrap();
    let m = b.matrix("runs", 4, 2, 1.0).unwrap();
    let spec = b.build().unwrap();
    let statistic = move |r: &Rec, buf: &mut ContributionBuffer| {
        let x = r.unwrap_or(0.9);
        buf.push(v, 1, 0.1 * x);
        buf.dense(v)[2] = -0.2;
        buf.push_segment(m, m.stored_index(0, 1), &[0.3 * x, 0.1]);
        if r.is_none() {
            buf.reject_record("the E-step did not converge");
        }
    };
    (spec, statistic)
}

fn good() -> Vec<Rec> {
    (0..12).map(|i| Some(i as f64 / 12.0)).collect()
}

#[test]
fn private_release_replaces_a_rejected_record_by_zero_and_is_charged() {
    let (spec, statistic) = spec();
    let mut clean = wall(good(), true);
    let mut dirty = wall(good().into_iter().chain([None, None]).collect(), true);
    let a = clean.release(&spec, &statistic).unwrap();
    let b = dirty.release(&spec, &statistic).unwrap();
    assert_eq!(a.blocks(), b.blocks());
    assert_eq!(a.diagnostics().replaced_records, 0);
    assert_eq!(b.diagnostics().replaced_records, 2);
    assert_eq!(dirty.ledger().len(), 1, "the release is charged");
}

#[test]
fn non_private_release_fails_with_a_typed_error_naming_the_rejection() {
    let (spec, statistic) = spec();
    let mut w = wall(good().into_iter().chain([None]).collect(), false);
    match w.release(&spec, &statistic) {
        Err(CoreError::InvalidContribution { block, reason }) => {
            assert_eq!(block, "(rejected by the statistic)");
            assert_eq!(reason, "the E-step did not converge");
        }
        other => panic!("expected InvalidContribution, got {other:?}"),
    }
    // Without the rejected record the same wall releases.
    let mut ok = wall(good(), false);
    assert!(ok.release(&spec, &statistic).is_ok());
}
