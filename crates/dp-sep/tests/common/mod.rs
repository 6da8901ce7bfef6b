//! Shared fixtures for the integration tests.
#![allow(dead_code)]

use dp_sep::SepState;
use dp_sep::mog::{Family, MogModel};

/// A small mixture model and a valid SEP state with a random-ish factor.
pub fn mog_state(n: usize, offsets: &[f64], family: Family) -> (MogModel, SepState) {
    let model = MogModel::new(2, 2, 0.5, family).unwrap();
    let prior = model.prior();
    let block = prior.len() / 2;
    let mut factor = vec![0.0; prior.len()];
    for j in 0..2 {
        for i in 0..2 {
            factor[j * block + i] = offsets[(2 * j + i) % offsets.len()] / n as f64;
        }
        // factor precision 2/N on the diagonal (posterior precision 1 + 2 = 3)
        let diag = |i: usize| match family {
            Family::Full => j * block + 2 + i * 2 + i,
            Family::Diagonal => j * block + 2 + i,
        };
        factor[diag(0)] = -1.0 / n as f64;
        factor[diag(1)] = -1.0 / n as f64;
    }
    let state = SepState::new(prior, factor, n).unwrap();
    (model, state)
}
