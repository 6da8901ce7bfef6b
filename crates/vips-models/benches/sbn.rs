//! SBN E-step speed: one record's coordinate-ascent E-step and its statistic at MNIST size
//! (`J = 784`, `K = 100`), and the moments (`expected_natural`, 784 Cholesky factorisations).
//!
//! `cargo bench -p vips-models --bench sbn`

use criterion::{Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::VipsModel;
use vips_models::sbn::{Sbn, SbnConfig, SyntheticSbn};

fn bench(c: &mut Criterion) {
    let (j, k) = (784, 100);
    let model = Sbn::new(SbnConfig::builder(j, k).build().expect("config")).expect("model");
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let global = model.init_global(&mut rng).expect("init");
    let natural = model.expected_natural(&global).expect("moments");
    let images = SyntheticSbn::random(j, 8, 3).sample(16, 4);
    let mut i = 0;
    c.bench_function("sbn_estep_record_784x100", |b| {
        b.iter(|| {
            i = (i + 1) % images.len();
            model.local_posterior(&natural, &images[i])
        })
    });
    let mut group = c.benchmark_group("sbn_moments");
    group.sample_size(10);
    group.bench_function("expected_natural_784x100", |b| {
        b.iter(|| model.expected_natural(&global))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
