//! LDA's fused M-step (`blend_release`: target and blend in one pass over `K x V`) against the
//! engine's two-step path (`global_target`, then `blend`): the same topics bit for bit from a
//! private release, and the same refusal of a target that is not finite.

mod common;

use dp_core::{PrivacyWall, SamplingScheme};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::VipsModel;
use vips_models::lda::corpus::{ResamplingKey, SyntheticConfig};
use vips_models::lda::{Lda, LdaConfig, Topics};

const V: usize = 300;
const K: usize = 6;

#[test]
fn fused_m_step_equals_target_then_blend() {
    let model = Lda::new(
        LdaConfig::builder(K, V)
            .doc_length(Some(40))
            .build()
            .unwrap(),
    );
    assert!(model.fuses_m_step());
    let corpus = SyntheticConfig::builder()
        .num_docs(200)
        .vocab_size(V)
        .num_topics(K)
        .doc_length(50)
        .seed(3)
        .build()
        .unwrap()
        .generate()
        .unwrap()
        .corpus;
    let docs = model
        .prepare(&corpus, &ResamplingKey::public_seed(1))
        .unwrap();
    let (spec, blocks) = model.release_spec().unwrap();
    let global: Topics = model
        .init_global(&mut ChaCha8Rng::seed_from_u64(5))
        .unwrap();
    let natural = model.expected_natural(&global).unwrap();
    let mut wall = PrivacyWall::builder(docs)
        .sampling(SamplingScheme::poisson(0.3).unwrap())
        .epsilon_delta(10.0, 1e-5)
        .noise_multiplier(2.0)
        .public_population_size(200)
        .seed(9)
        .build()
        .unwrap();
    let release = wall
        .release(&spec, common::lda_statistic(&model, &blocks, &natural))
        .unwrap();
    // Noised: some released entries are negative (clamped to 0 by the target).
    assert!(
        release.blocks()[0]
            .value
            .as_slice()
            .iter()
            .any(|&s| s < 0.0)
    );
    for rho in [1.0, 0.37, 1e-3] {
        let mut two_step = global.clone();
        let target = model
            .global_target(&blocks, &release, &natural, 200.0)
            .unwrap();
        model.blend(&mut two_step, &target, rho);
        let mut fused = global.clone();
        model
            .blend_release(&mut fused, &blocks, &release, &natural, 200.0, rho)
            .unwrap();
        let same = two_step
            .lambda()
            .iter()
            .zip(fused.lambda())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "rho {rho}: the fused M-step differs");
    }
    // A population so large that `eta + D s~` overflows: both refuse it.
    let huge = f64::MAX;
    assert!(
        model
            .global_target(&blocks, &release, &natural, huge)
            .is_err()
    );
    let mut fused = global.clone();
    assert!(
        model
            .blend_release(&mut fused, &blocks, &release, &natural, huge, 0.5)
            .is_err()
    );
}
