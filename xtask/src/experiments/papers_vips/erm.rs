//! The ERM baselines of 003 Fig. 5 (= 000 Fig. 5): L2-regularised logistic regression fitted by
//! Newton's method, and its private version by objective perturbation (Chaudhuri, Monteleoni &
//! Sarwate 2011, Algorithm 2), the paper's "pERM".
//!
//! No maintained Rust crate offers objective perturbation (OpenDP's Rust library has no private
//! ERM), so it is implemented here, small and tested.
//!
//! # Privacy
//! [`objective_perturbation`] is `epsilon`-DP (pure) under replace-one neighbouring for a public
//! number of records `n`, when every `||x_i||_2 <= 1` and `y_i` is in `{-1, +1}` (Chaudhuri et
//! al. 2011, Theorem 9 with the logistic loss, `c = 1/4`). The regularisation constant must be
//! public: 003 chose it by 5-fold cross-validation on the training data, which is not private;
//! the experiments here do the same and say so. The noise comes from the generator the caller
//! passes: [`noise_rng`] gives ChaCha20 from OS entropy, or a seeded one on purpose.

use nalgebra::{DMatrix, DVector};
use rand::rngs::{ChaCha20Rng, SysRng};
use rand::{Rng, RngExt, SeedableRng};
use rand_distr::StandardNormal;

/// The bound on the logistic loss's second derivative (Chaudhuri et al.'s `c`).
const LOSS_CURVATURE: f64 = 0.25;

/// Labelled rows for ERM: features with `||x|| <= 1`, labels in `{-1, +1}`.
pub struct ErmData {
    pub x: Vec<DVector<f64>>,
    pub y: Vec<f64>,
}

impl ErmData {
    fn dim(&self) -> usize {
        self.x.first().map_or(0, DVector::len)
    }
}

/// ChaCha20 seeded from OS entropy (`None`: a CSPRNG, the private default), or from `seed` on
/// purpose (reproducible; no privacy against whoever knows the seed).
pub fn noise_rng(seed: Option<u64>) -> anyhow::Result<ChaCha20Rng> {
    Ok(match seed {
        Some(s) => ChaCha20Rng::seed_from_u64(s),
        None => ChaCha20Rng::try_from_rng(&mut SysRng)?,
    })
}

fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// `ln(1 + exp(-z))`, stable.
fn logistic_loss(z: f64) -> f64 {
    if z > 0.0 {
        (-z).exp().ln_1p()
    } else {
        -z + z.exp().ln_1p()
    }
}

/// Minimises `(1/n) sum ln(1 + exp(-y_i f'x_i)) + (ridge/2) ||f||^2 + linear'f / n` by Newton's
/// method with backtracking (the objective is `ridge`-strongly convex, so the minimiser is
/// unique).
pub fn fit_regularised(data: &ErmData, ridge: f64, linear: Option<&DVector<f64>>) -> DVector<f64> {
    let d = data.dim();
    let n = data.x.len() as f64;
    let objective = |f: &DVector<f64>| -> f64 {
        let loss: f64 = data
            .x
            .iter()
            .zip(&data.y)
            .map(|(x, y)| logistic_loss(y * f.dot(x)))
            .sum();
        loss / n + 0.5 * ridge * f.norm_squared() + linear.map_or(0.0, |b| b.dot(f) / n)
    };
    let mut f = DVector::zeros(d);
    let mut value = objective(&f);
    for _ in 0..100 {
        let mut grad = &f * ridge;
        let mut hess = DMatrix::identity(d, d) * ridge;
        if let Some(b) = linear {
            grad += b / n;
        }
        for (x, &y) in data.x.iter().zip(&data.y) {
            let p = sigmoid(-y * f.dot(x));
            grad -= x * (y * p / n);
            hess.ger(p * (1.0 - p) / n, x, x, 1.0);
        }
        if grad.norm() < 1e-10 {
            break;
        }
        let Some(step) = hess.cholesky().map(|c| c.solve(&grad)) else {
            break;
        };
        let mut t = 1.0;
        loop {
            let candidate = &f - &step * t;
            let v = objective(&candidate);
            if v <= value - 1e-4 * t * grad.dot(&step) || t < 1e-10 {
                f = candidate;
                value = v;
                break;
            }
            t *= 0.5;
        }
    }
    f
}

/// How objective perturbation splits `epsilon` (Chaudhuri et al. 2011, Algorithm 2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PerturbationPlan {
    /// The epsilon the noise is drawn at (`epsilon'`).
    pub noise_epsilon: f64,
    /// The extra ridge `Delta` added when `epsilon'` would be non-positive.
    pub extra_ridge: f64,
}

/// Algorithm 2's `epsilon'` and `Delta` for `n` records, ridge `lambda`, total `epsilon`.
pub fn perturbation_plan(epsilon: f64, n: usize, ridge: f64) -> PerturbationPlan {
    let (c, n) = (LOSS_CURVATURE, n as f64);
    let slack = (1.0 + 2.0 * c / (n * ridge) + c * c / (n * n * ridge * ridge)).ln();
    if epsilon - slack > 0.0 {
        PerturbationPlan {
            noise_epsilon: epsilon - slack,
            extra_ridge: 0.0,
        }
    } else {
        PerturbationPlan {
            noise_epsilon: epsilon / 2.0,
            extra_ridge: c / (n * ((epsilon / 4.0).exp() - 1.0)) - ridge,
        }
    }
}

/// A draw of `b` with density proportional to `exp(-eps' ||b|| / 2)` in `d` dimensions:
/// `||b|| ~ Gamma(d, 2 / eps')` (a sum of `d` exponentials), direction uniform.
fn perturbation<R: Rng + ?Sized>(d: usize, noise_epsilon: f64, rng: &mut R) -> DVector<f64> {
    let norm: f64 = (0..d)
        .map(|_| -(1.0 - rng.random::<f64>()).ln())
        .sum::<f64>()
        * 2.0
        / noise_epsilon;
    let direction = DVector::from_fn(d, |_, _| rng.sample::<f64, _>(StandardNormal));
    direction.normalize() * norm
}

/// Objective perturbation (Chaudhuri et al. 2011, Algorithm 2): `epsilon`-DP (see the module's
/// privacy statement) L2-regularised logistic regression.
pub fn objective_perturbation<R: Rng + ?Sized>(
    data: &ErmData,
    ridge: f64,
    epsilon: f64,
    rng: &mut R,
) -> DVector<f64> {
    let plan = perturbation_plan(epsilon, data.x.len(), ridge);
    let b = perturbation(data.dim(), plan.noise_epsilon, rng);
    fit_regularised(data, ridge + plan.extra_ridge, Some(&b))
}

/// The ridge of `grid` with the best mean validation AUC over `folds` contiguous folds of
/// `data` (003: "5-fold cross-validation to set the regularisation constant"; not private).
pub fn cross_validated_ridge(
    data: &ErmData,
    grid: &[f64],
    folds: usize,
    fit: &mut dyn FnMut(&ErmData, f64) -> DVector<f64>,
) -> f64 {
    let n = data.x.len();
    let mut best = (f64::NEG_INFINITY, grid[0]);
    for &ridge in grid {
        let mut total = 0.0;
        for k in 0..folds {
            let (lo, hi) = (k * n / folds, (k + 1) * n / folds);
            let pick = |keep: &dyn Fn(usize) -> bool| ErmData {
                x: (0..n)
                    .filter(|&i| keep(i))
                    .map(|i| data.x[i].clone())
                    .collect(),
                y: (0..n).filter(|&i| keep(i)).map(|i| data.y[i]).collect(),
            };
            let train = pick(&|i| i < lo || i >= hi);
            let valid = pick(&|i| i >= lo && i < hi);
            let f = fit(&train, ridge);
            total += auc_of(&f, &valid);
        }
        if total > best.0 {
            best = (total, ridge);
        }
    }
    best.1
}

/// AUC of the scores `f'x` on `data` (ties count one half; 0.5 when a class is missing).
pub fn auc_of(f: &DVector<f64>, data: &ErmData) -> f64 {
    let scores: Vec<f64> = data.x.iter().map(|x| f.dot(x)).collect();
    let labels: Vec<bool> = data.y.iter().map(|&y| y > 0.0).collect();
    vips_models::blr::auc(&scores, &labels).unwrap_or(0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn separable_data(n: usize) -> ErmData {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let mut data = ErmData {
            x: Vec::new(),
            y: Vec::new(),
        };
        for _ in 0..n {
            let x = DVector::from_fn(2, |_, _| rng.random::<f64>() - 0.5);
            let y = if x[0] + 0.5 * x[1] + 0.1 * (rng.random::<f64>() - 0.5) > 0.0 {
                1.0
            } else {
                -1.0
            };
            data.x.push(x);
            data.y.push(y);
        }
        data
    }

    #[test]
    fn newton_reaches_a_stationary_point() {
        let data = separable_data(300);
        let ridge = 1e-3;
        let f = fit_regularised(&data, ridge, None);
        let mut grad = &f * ridge;
        for (x, &y) in data.x.iter().zip(&data.y) {
            grad -= x * (y * sigmoid(-y * f.dot(x)) / data.x.len() as f64);
        }
        assert!(grad.norm() < 1e-8, "gradient {}", grad.norm());
        assert!(auc_of(&f, &data) > 0.95);
    }

    #[test]
    fn plan_follows_algorithm_2() {
        // large n: epsilon' = epsilon - ln(1 + 2c/(n lambda) + ...) > 0, no extra ridge
        let p = perturbation_plan(1.0, 10_000, 0.01);
        let slack = (1.0_f64 + 0.5 / 100.0 + 0.0625 / 10_000.0).ln();
        assert!((p.noise_epsilon - (1.0 - slack)).abs() < 1e-12);
        assert_eq!(p.extra_ridge, 0.0);
        // tiny n lambda: epsilon / 2 and Delta = c / (n (e^{eps/4} - 1)) - lambda
        let p = perturbation_plan(0.5, 10, 1e-3);
        assert_eq!(p.noise_epsilon, 0.25);
        let delta = 0.25 / (10.0 * ((0.125_f64).exp() - 1.0)) - 1e-3;
        assert!((p.extra_ridge - delta).abs() < 1e-12);
    }

    #[test]
    fn perturbation_norm_has_mean_two_d_over_epsilon() {
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let (d, eps, draws) = (5, 0.5, 20_000);
        let mean: f64 = (0..draws)
            .map(|_| perturbation(d, eps, &mut rng).norm())
            .sum::<f64>()
            / draws as f64;
        // Gamma(5, 4): mean 20, std 8.94, so the mean of 20,000 draws has std 0.063
        assert!((mean - 20.0).abs() < 0.3, "mean norm {mean}");
    }

    #[test]
    fn large_epsilon_approaches_the_non_private_fit() {
        let data = separable_data(2000);
        let exact = fit_regularised(&data, 0.01, None);
        let mut rng = noise_rng(Some(1)).expect("seeded");
        let private = objective_perturbation(&data, 0.01, 1e4, &mut rng);
        assert!((exact - private).norm() < 1e-2);
    }
}
