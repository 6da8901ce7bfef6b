//! Shared fixtures for the integration tests.
#![allow(dead_code)]

use std::path::Path;

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

/// A fresh temporary directory `PREFIX-*`, removed with everything in it when the guard is
/// dropped (at the end of the test, passing or failing). Dereferences to the directory's path.
#[derive(Debug)]
pub struct TempDirPath(tempfile::TempDir);

impl TempDirPath {
    /// A new empty directory `PREFIX-*` under the system's temporary directory.
    pub fn new(prefix: &str) -> Self {
        Self(
            tempfile::Builder::new()
                .prefix(&format!("{prefix}-"))
                .tempdir()
                .unwrap(),
        )
    }
}

impl std::ops::Deref for TempDirPath {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for TempDirPath {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}
