//! 002 Prop. 1 as a property: when the drawn record changes, `theta_new` moves by at most
//! `2 gamma C / N` (and the refreshed factor by at most `2 gamma C / N^2`), for any state and any
//! pair of records, including absurd ones.

mod common;

use dp_core::RngPolicy;
use dp_sep::dpsep::dp_sep_step;
use dp_sep::mog::Family;
use dp_sep::natural::l2_norm;
use dp_sep::pbp::{Labelled, PbpModel};
use dp_sep::sep::{intermediate_factor, posterior_update};
use dp_sep::{DpSepConfig, FactorWall, SepModel, StepCounts, WallPlan};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

fn record() -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        prop::collection::vec(-3.0..3.0f64, 2),
        prop::collection::vec(-1e6..1e6f64, 2),
        Just(vec![f64::NAN, 0.0]),
        Just(vec![f64::INFINITY, 1.0]),
    ]
}

fn theta_new<M: SepModel>(
    model: &M,
    state: &dp_sep::SepState,
    rec: &M::Record,
    gamma: f64,
    c: f64,
) -> Vec<f64> {
    let cavity = state.cavity();
    let mut counts = StepCounts::default();
    let f = intermediate_factor(model, &cavity, state.factor(), rec, Some(c), &mut counts);
    posterior_update(state, &f, gamma)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn mog_theta_new_moves_at_most_2_gamma_c_over_n(
        offsets in prop::collection::vec(-2.0..2.0f64, 4),
        x in record(),
        y in record(),
        gamma in 0.5..500.0f64,
        c in 0.01..10.0f64,
        n in 10usize..2000,
        full in any::<bool>(),
    ) {
        let family = if full { Family::Full } else { Family::Diagonal };
        let (model, state) = common::mog_state(n, &offsets, family);
        prop_assume!(gamma <= (n * n) as f64);
        let a = theta_new(&model, &state, &x, gamma, c);
        let b = theta_new(&model, &state, &y, gamma, c);
        let moved = l2_norm(&a.iter().zip(&b).map(|(p, q)| p - q).collect::<Vec<_>>());
        let bound = 2.0 * gamma * c / n as f64;
        prop_assert!(moved <= bound * (1.0 + 1e-9), "moved {moved} > bound {bound}");
    }

    #[test]
    fn pbp_theta_new_moves_at_most_2_gamma_c_over_n(
        x1 in prop::collection::vec(-5.0..5.0f64, 3),
        x2 in prop::collection::vec(-500.0..500.0f64, 3),
        y1 in -3.0..3.0f64,
        y2 in -1e4..1e4f64,
        c in 0.01..5.0f64,
        seed in 0u64..1000,
    ) {
        let model = PbpModel::new(3, &[4]);
        let n = 100;
        let state = model.initial_state(n, &mut ChaCha20Rng::seed_from_u64(seed)).unwrap();
        let gamma = n as f64;
        let a = theta_new(&model, &state, &Labelled { x: x1, y: y1 }, gamma, c);
        let b = theta_new(&model, &state, &Labelled { x: x2, y: y2 }, gamma, c);
        let moved = l2_norm(&a.iter().zip(&b).map(|(p, q)| p - q).collect::<Vec<_>>());
        prop_assert!(moved <= 2.0 * gamma * c / n as f64 * (1.0 + 1e-9));
    }
}

/// End to end through the wall: two neighbouring datasets (record 3 replaced), the same noise
/// seed (so the same draw and the same noise), one DP-SEP step each from the same state. The
/// posteriors differ by at most `2 gamma C / N`; they differ only when record 3 was drawn.
#[test]
fn neighbouring_datasets_through_the_wall() {
    let n = 8;
    let (mut max_moved, mut differing) = (0.0f64, 0);
    for seed in 0..40u64 {
        let (model, state) = common::mog_state(n, &[0.5, -0.3, 1.0, 0.2], Family::Full);
        let base: Vec<Vec<f64>> = (0..n).map(|i| vec![i as f64 * 0.1, -0.2]).collect();
        let mut other = base.clone();
        other[3] = vec![40.0, -70.0];
        let config = DpSepConfig::builder().gamma(4.0).epochs(1).build().unwrap();
        let mut out = Vec::new();
        for data in [base, other] {
            let mut wall = FactorWall::new(
                data,
                &WallPlan::builder()
                    .population(n)
                    .dim(model.dim())
                    .budget(1.0, 1e-5)
                    .clip(0.5)
                    .steps(1)
                    .sampling(dp_sep::SamplingScheme::UniformSingle)
                    .rng(RngPolicy::Seeded { seed })
                    .build()
                    .unwrap(),
            )
            .unwrap();
            let mut s = state.clone();
            dp_sep_step(
                &model,
                &mut s,
                &mut wall,
                &config,
                &mut StepCounts::default(),
            )
            .unwrap();
            out.push((s.posterior(), s.factor().to_vec()));
        }
        let moved = l2_norm(
            &out[0]
                .0
                .iter()
                .zip(&out[1].0)
                .map(|(a, b)| a - b)
                .collect::<Vec<_>>(),
        );
        let factor_moved = l2_norm(
            &out[0]
                .1
                .iter()
                .zip(&out[1].1)
                .map(|(a, b)| a - b)
                .collect::<Vec<_>>(),
        );
        let bound = 2.0 * config.gamma_for(n) * 0.5 / n as f64;
        assert!(
            moved <= bound * (1.0 + 1e-9),
            "posterior moved {moved} > {bound}"
        );
        assert!(factor_moved <= bound / n as f64 * (1.0 + 1e-9));
        max_moved = max_moved.max(moved);
        if moved > 0.0 {
            differing += 1;
        }
    }
    // Record 3 is drawn with probability 1/8 per seed: over 40 seeds it is drawn at least once
    // except with probability (7/8)^40 < 0.5%; when drawn the outputs must actually differ.
    assert!(differing > 0 && max_moved > 0.0);
}
