//! A record whose intermediate factor cannot be computed is rejected inside the wall
//! (`ContributionBuffer::reject_record`): it contributes exactly what a zero factor would, is
//! counted as replaced (and in `StepCounts::failed_tilted`), and the release goes ahead.

use dp_core::RngPolicy;
use dp_sep::dpsep::dp_sep_step;
use dp_sep::{DpSepConfig, FactorWall, SamplingScheme, SepModel, SepState, StepCounts, WallPlan};

/// A two-parameter toy model: the tilted distribution adds `(x, 0.5)` to the cavity, and a
/// negative record has no tilted distribution (`fails`) or a zero intermediate factor (not
/// `fails`).
struct Toy {
    fails: bool,
}

impl SepModel for Toy {
    type Record = f64;
    fn dim(&self) -> usize {
        2
    }
    fn tilted(&self, cavity: &[f64], record: &f64, out: &mut [f64]) -> bool {
        out.copy_from_slice(cavity);
        if *record < 0.0 {
            // A failed moment match may leave junk behind: the wall must drop it.
            out[0] = 1e300;
            return !self.fails && {
                out.copy_from_slice(cavity);
                true
            };
        }
        out[0] += record;
        out[1] += 0.5;
        true
    }
    fn is_valid(&self, _: &[f64]) -> bool {
        true
    }
    fn repair(&self, _: &mut [f64]) {}
}

fn plan(n: usize, steps: u64) -> WallPlan {
    WallPlan::builder()
        .population(n)
        .dim(2)
        .budget(1.0, 1e-5)
        .clip(10.0)
        .steps(steps)
        .sampling(SamplingScheme::UniformSingle)
        .rng(RngPolicy::Seeded { seed: 11 })
        .build()
        .unwrap()
}

#[test]
fn a_rejected_record_releases_what_a_zero_factor_would() {
    let records: Vec<f64> = vec![-1.0, 2.0, -3.0, 4.0, 0.5, -0.25];
    let n = records.len();
    let steps = 300;
    let plan = plan(n, steps);
    let config = DpSepConfig::builder().gamma(1.0).build().unwrap();
    let state = SepState::new(vec![0.1, 0.2], vec![0.0, 0.0], n).unwrap();
    let (mut rejecting, mut zeroing) = (state.clone(), state);
    let mut wall_r = FactorWall::noise_free(records.clone(), &plan).unwrap();
    let mut wall_z = FactorWall::noise_free(records.clone(), &plan).unwrap();
    let (mut counts_r, mut counts_z) = (StepCounts::default(), StepCounts::default());
    for _ in 0..steps {
        dp_sep_step(
            &Toy { fails: true },
            &mut rejecting,
            &mut wall_r,
            &config,
            &mut counts_r,
        )
        .unwrap();
        dp_sep_step(
            &Toy { fails: false },
            &mut zeroing,
            &mut wall_z,
            &config,
            &mut counts_z,
        )
        .unwrap();
        assert_eq!(rejecting.posterior(), zeroing.posterior());
    }
    assert!(rejecting.posterior().iter().all(|v| v.is_finite()));
    // Half the records are negative: about 150 of 300 draws were rejected.
    assert!(
        (100..200).contains(&counts_r.failed_tilted),
        "{}",
        counts_r.failed_tilted
    );
    assert_eq!(counts_z.failed_tilted, 0);
    assert_eq!(counts_r.steps, steps);
    assert_eq!(
        wall_r.diagnostics().replaced_records,
        counts_r.failed_tilted
    );
    assert_eq!(wall_z.diagnostics().replaced_records, 0);
    assert_eq!(wall_r.releases(), steps);
}

#[test]
fn a_statistic_that_rejects_every_record_still_releases_and_charges() {
    let plan = plan(4, 20);
    let mut wall = FactorWall::new(vec![1.0, 2.0, 3.0, 4.0], &plan).unwrap();
    let factor = wall.factor();
    for _ in 0..20 {
        let (noised, diagnostics) = wall
            .release(|x: &f64, buf| {
                buf.dense(factor)[0] = *x;
                buf.reject_record("rejected by the test");
            })
            .unwrap();
        assert!(noised.iter().all(|v| v.is_finite()));
        assert_eq!(diagnostics.replaced_records, 1);
    }
    assert_eq!(wall.diagnostics().replaced_records, 20);
    assert!(wall.epsilon_spent().unwrap() <= 1.0);
    assert!(matches!(
        wall.release(|_: &f64, _| {}),
        Err(dp_sep::SepError::Wall(
            dp_core::CoreError::BudgetExhausted { .. }
        ))
    ));
}
