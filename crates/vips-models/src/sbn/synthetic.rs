//! Data from a known sigmoid belief network (the embedded default data set), and its exact
//! likelihood for small `K`.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Bernoulli, Distribution, Normal};

use super::{BinaryImage, SbnNatural};
use expfam::sigmoid;

/// A sigmoid belief network with known parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticSbn {
    /// `J x K` weights, row-major.
    pub w: Vec<f64>,
    /// Hidden biases (`K`).
    pub b: Vec<f64>,
    /// Visible biases (`J`).
    pub c: Vec<f64>,
}

impl SyntheticSbn {
    /// A random network with `J` visible and `K` hidden units: `W_jk ~ N(0, 3^2)` on a random
    /// half of the entries (sparse, as the TPBN prior favours), `b_k ~ N(0, 1)`,
    /// `c_j ~ N(-1, 1)`.
    pub fn random(visible: usize, hidden: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let big = Normal::new(0.0, 3.0).expect("std > 0");
        let unit = Normal::new(0.0, 1.0).expect("std > 0");
        let coin = Bernoulli::new(0.5).expect("p in [0, 1]");
        let w = (0..visible * hidden)
            .map(|_| {
                if coin.sample(&mut rng) {
                    big.sample(&mut rng)
                } else {
                    0.0
                }
            })
            .collect();
        let b = (0..hidden).map(|_| unit.sample(&mut rng)).collect();
        let c = (0..visible).map(|_| unit.sample(&mut rng) - 1.0).collect();
        Self { w, b, c }
    }

    /// Number of visible units.
    pub fn visible(&self) -> usize {
        self.c.len()
    }

    /// Number of hidden units.
    pub fn hidden(&self) -> usize {
        self.b.len()
    }

    /// `n` images drawn from the network (ancestral sampling, seeded).
    pub fn sample(&self, n: usize, seed: u64) -> Vec<BinaryImage> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (j_dim, k_dim) = (self.visible(), self.hidden());
        let mut z = vec![0.0; k_dim];
        (0..n)
            .map(|_| {
                for k in 0..k_dim {
                    z[k] = f64::from(u8::from(
                        Bernoulli::new(sigmoid(self.b[k]))
                            .expect("p")
                            .sample(&mut rng),
                    ));
                }
                let pixels = (0..j_dim)
                    .map(|j| {
                        let psi: f64 = self.c[j]
                            + (0..k_dim)
                                .map(|k| self.w[j * k_dim + k] * z[k])
                                .sum::<f64>();
                        u8::from(Bernoulli::new(sigmoid(psi)).expect("p").sample(&mut rng))
                    })
                    .collect();
                BinaryImage { pixels }
            })
            .collect()
    }

    /// The posterior-mean network of a fitted model.
    pub fn from_natural(nat: &SbnNatural) -> Self {
        Self {
            w: nat.mu_w.clone(),
            b: nat.mu_b.clone(),
            c: nat.mu_c.clone(),
        }
    }

    /// Exact average `log p(y)` per image by summing over all `2^K` hidden states (`K <= 20`;
    /// `None` above).
    pub fn mean_log_likelihood(&self, images: &[BinaryImage]) -> Option<f64> {
        let (j_dim, k_dim) = (self.visible(), self.hidden());
        if k_dim > 20 || images.is_empty() {
            return None;
        }
        // ln sigma(x) = -softplus(-x), stable in both tails.
        let log_sig = |x: f64| -expfam::softplus(-x);
        let states: Vec<(f64, Vec<f64>)> = (0..1usize << k_dim)
            .map(|s| {
                let z: Vec<f64> = (0..k_dim).map(|k| ((s >> k) & 1) as f64).collect();
                let prior: f64 = (0..k_dim)
                    .map(|k| {
                        if z[k] > 0.5 {
                            log_sig(self.b[k])
                        } else {
                            log_sig(-self.b[k])
                        }
                    })
                    .sum();
                let psi = (0..j_dim)
                    .map(|j| {
                        self.c[j]
                            + (0..k_dim)
                                .map(|k| self.w[j * k_dim + k] * z[k])
                                .sum::<f64>()
                    })
                    .collect();
                (prior, psi)
            })
            .collect();
        let mut total = 0.0;
        let mut terms = vec![0.0; states.len()];
        for im in images {
            for (t, (prior, psi)) in terms.iter_mut().zip(&states) {
                *t = prior
                    + psi
                        .iter()
                        .zip(&im.pixels)
                        .map(|(&x, &y)| if y == 1 { log_sig(x) } else { log_sig(-x) })
                        .sum::<f64>();
            }
            let m = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            total += m + terms.iter().map(|t| (t - m).exp()).sum::<f64>().ln();
        }
        Some(total / images.len() as f64)
    }
}
