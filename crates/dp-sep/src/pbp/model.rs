//! PBP as a [`SepModel`]: factorised Gaussian weights, a Gamma posterior on the noise precision
//! inside the natural-parameter vector, and a Gamma prior on the weight precision refined by EP
//! (Hernández-Lobato & Adams 2015, Sec. 3).
//!
//! Natural-parameter layout (length `2W + 2`): for weight `i`, `(m_i / v_i, -1 / (2 v_i))` at
//! `2i, 2i + 1`; then the noise-precision Gamma `(alpha - 1, -beta)`.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use super::network::{Architecture, Tape, backward, forward};
use crate::data::Dataset;
use crate::error::SepError;
use crate::model::SepModel;
use crate::sep::SepState;

/// One regression record: features and target (standardised).
#[derive(Clone, Debug, PartialEq)]
pub struct Labelled {
    /// Features.
    pub x: Vec<f64>,
    /// Target.
    pub y: f64,
}

/// The records of a data set.
pub fn records(data: &Dataset) -> Vec<Labelled> {
    (0..data.len())
        .map(|i| Labelled {
            x: data.row(i).to_vec(),
            y: data.target(i),
        })
        .collect()
}

/// Prior shape and rate of both Gamma priors (noise and weight precision), as in PBP.
pub const GAMMA_PRIOR: (f64, f64) = (6.0, 6.0);

/// A weight whose precision [`PbpModel`]'s repair resets to the floor keeps its mean within this
/// many standard deviations at that precision (post-processing; see `SepModel::repair`).
pub const REPAIR_MEAN_BOUND: f64 = 3.0;

/// The PBP Bayesian neural network.
///
/// # Example
/// ```
/// use dp_sep::pbp::PbpModel;
/// let model = PbpModel::new(3, &[5]);
/// assert_eq!(model.architecture().n_weights(), 5 * 4 + 6);
/// ```
#[derive(Clone, Debug)]
pub struct PbpModel {
    arch: Architecture,
    /// Posterior Gamma on the weight precision `lambda` (shape, rate).
    lambda: (f64, f64),
    /// Per-weight EP factors on `lambda`: their contribution `(d shape, d rate)`.
    lambda_hat: Vec<(f64, f64)>,
    /// Floor on posterior precisions used to repair a noised posterior.
    min_precision: f64,
}

/// A weight's mean and variance from its natural parameters.
#[inline]
fn mv(h: f64, k: f64) -> (f64, f64) {
    let v = -0.5 / k;
    (h * v, v)
}

impl PbpModel {
    /// A network with `d` inputs and the given hidden ReLU layers, with its sizes checked first.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for `d == 0` or a hidden layer of 0 units;
    /// [`SepError::TooLarge`] if the weights' natural parameters would exceed
    /// [`crate::limits::MAX_MODEL_BYTES`].
    ///
    /// # Example
    /// ```
    /// use dp_sep::pbp::PbpModel;
    /// assert!(PbpModel::try_new(3, &[5]).is_ok());
    /// assert!(PbpModel::try_new(3, &[0]).is_err());
    /// assert!(PbpModel::try_new(11, &[1_000_000_000]).is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn try_new(d: usize, hidden: &[usize]) -> Result<Self, SepError> {
        if d == 0 {
            return Err(SepError::InvalidParameter {
                name: "input dimension",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        if hidden.contains(&0) {
            return Err(SepError::InvalidParameter {
                name: "hidden",
                value: 0.0,
                reason: "every hidden layer needs >= 1 unit",
            });
        }
        let mut sizes = vec![d as u128];
        sizes.extend(hidden.iter().map(|&h| h as u128));
        sizes.push(1);
        let weights = sizes.windows(2).fold(0u128, |acc, w| {
            acc.saturating_add(w[1].saturating_mul(w[0] + 1))
        });
        // Two natural parameters per weight, one EP factor on lambda per weight, in the
        // engine's copies.
        crate::limits::check_bytes(
            &format!("hidden layers {hidden:?} with {d} inputs"),
            "the network's natural parameters",
            crate::limits::f64_bytes(weights.saturating_mul(4))
                .saturating_mul(u128::from(crate::limits::PARAMETER_COPIES)),
            crate::limits::MAX_MODEL_BYTES,
        )?;
        Ok(Self::new(d, hidden))
    }

    /// A network with `d` inputs and the given hidden ReLU layers (unchecked: see
    /// [`PbpModel::try_new`] for sizes from user input).
    pub fn new(d: usize, hidden: &[usize]) -> Self {
        let arch = Architecture::new(d, hidden);
        let w = arch.n_weights();
        Self {
            arch,
            lambda: GAMMA_PRIOR,
            lambda_hat: vec![(0.0, 0.0); w],
            min_precision: 1.0,
        }
    }

    /// The architecture.
    pub fn architecture(&self) -> &Architecture {
        &self.arch
    }

    /// Current posterior Gamma `(shape, rate)` on the weight precision.
    pub fn weight_precision(&self) -> (f64, f64) {
        self.lambda
    }

    /// The prior natural parameters `theta_0`: weights `N(0, 1/E[lambda])`, noise Gamma(6, 6).
    pub fn prior(&self) -> Vec<f64> {
        let w = self.arch.n_weights();
        let prec = self.lambda.0 / self.lambda.1;
        let mut p = Vec::with_capacity(2 * w + 2);
        for _ in 0..w {
            // Natural parameters of N(0, 1/prec): (mean * prec, -prec / 2).
            p.extend([0.0, -0.5 * prec]);
        }
        p.push(GAMMA_PRIOR.0 - 1.0);
        p.push(-GAMMA_PRIOR.1);
        p
    }

    /// The initial SEP state for `n` records: the factor carries random means
    /// `N(0, 1/(n_in + 1))` (PBP's initialisation, to break the symmetry between hidden units),
    /// so that the initial posterior is `N(m_rand, 1)` per weight. The factor is public
    /// (data-independent) randomness.
    ///
    /// # Errors
    /// [`SepError::Empty`] for `n == 0`.
    pub fn initial_state<R: Rng + ?Sized>(
        &self,
        n: usize,
        rng: &mut R,
    ) -> Result<SepState, SepError> {
        let prior = self.prior();
        let mut factor = vec![0.0; prior.len()];
        let sizes = self.arch.sizes();
        let mut i = 0;
        let nf = n.max(1) as f64;
        for l in 0..sizes.len() - 1 {
            let n_in = sizes[l] + 1;
            for _ in 0..sizes[l + 1] * n_in {
                let z: f64 = StandardNormal.sample(rng);
                let m = z / (n_in as f64).sqrt();
                // posterior precision = prior precision (-2 * prior[2i+1]); h = m * precision.
                factor[2 * i] = m * (-2.0 * prior[2 * i + 1]) / nf;
                i += 1;
            }
        }
        SepState::new(prior, factor, n)
    }

    fn noise_var(theta: &[f64], w: usize) -> (f64, f64) {
        (theta[2 * w] + 1.0, -theta[2 * w + 1])
    }

    /// Predictive mean, variance from the weights, and expected noise variance
    /// `beta / (alpha - 1)` for input `x` (standardised units).
    ///
    /// # Errors
    /// [`SepError::InvalidNaturalParameters`] if `posterior` is improper;
    /// [`SepError::DimensionMismatch`] for a wrong input length.
    pub fn predict(&self, posterior: &[f64], x: &[f64]) -> Result<(f64, f64, f64), SepError> {
        if !self.is_valid(posterior) {
            return Err(SepError::InvalidNaturalParameters("improper PBP posterior"));
        }
        if x.len() != self.arch.input_dim() {
            return Err(SepError::DimensionMismatch {
                what: "PbpModel::predict input",
                expected: self.arch.input_dim(),
                found: x.len(),
            });
        }
        let w = self.arch.n_weights();
        let (m, v) = self.moments(posterior);
        let (mo, vo) = forward(&self.arch, &m, &v, x, &mut Tape::default());
        let (a, b) = Self::noise_var(posterior, w);
        Ok((mo, vo, b / (a - 1.0)))
    }

    fn moments(&self, theta: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let w = self.arch.n_weights();
        let mut m = Vec::with_capacity(w);
        let mut v = Vec::with_capacity(w);
        for i in 0..w {
            let (mi, vi) = mv(theta[2 * i], theta[2 * i + 1]);
            m.push(mi);
            v.push(vi);
        }
        (m, v)
    }
}

fn log_norm(r: f64, var: f64) -> f64 {
    -0.5 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * r * r / var
}

/// Moment matching of a Gamma(a, b) tilted by `Z_k = E_{Gamma(a + k, b)}[t]` (PBP Eq. 21-22).
fn gamma_update(a: f64, b: f64, log_z: [f64; 3]) -> Option<(f64, f64)> {
    let a_new = 1.0 / ((log_z[2] - 2.0 * log_z[1] + log_z[0]).exp() * (a + 1.0) / a - 1.0);
    let b_new =
        1.0 / ((log_z[2] - log_z[1]).exp() * (a + 1.0) / b - (log_z[1] - log_z[0]).exp() * a / b);
    (a_new.is_finite() && b_new.is_finite() && a_new > 1.0 && b_new > 0.0).then_some((a_new, b_new))
}

/// The lower Cholesky factor `(l11, l21, l22)` of a Gamma(`alpha`, `beta`) distribution's Fisher
/// information in its natural parameters `(alpha - 1, -beta)`:
/// `[[psi'(alpha), 1 / beta], [1 / beta, alpha / beta^2]]` (for `alpha > 1`, `beta > 0`, which a
/// valid PBP state guarantees).
fn gamma_fisher_cholesky(alpha: f64, beta: f64) -> (f64, f64, f64) {
    // psi'(alpha) > 1 / alpha for every alpha > 0; the fallback is never taken for a valid state.
    let a = expfam::trigamma(alpha).unwrap_or(1.0 / alpha);
    let l11 = a.sqrt();
    let l21 = 1.0 / (beta * l11);
    let l22 = ((alpha - 1.0 / a).max(0.0)).sqrt() / beta;
    (l11, l21, l22)
}

impl SepModel for PbpModel {
    type Record = Labelled;

    fn dim(&self) -> usize {
        2 * self.arch.n_weights() + 2
    }

    fn tilted(&self, cavity: &[f64], record: &Labelled, out: &mut [f64]) -> bool {
        let w = self.arch.n_weights();
        if record.x.len() != self.arch.input_dim() || !self.is_valid(cavity) {
            return false;
        }
        let (m, v) = self.moments(cavity);
        let mut tape = Tape::default();
        let (mo, vo) = forward(&self.arch, &m, &v, &record.x, &mut tape);
        let (a, b) = Self::noise_var(cavity, w);
        let r = record.y - mo;
        let log_z = [0.0, 1.0, 2.0].map(|k| log_norm(r, vo + b / (a + k - 1.0)));
        let var = vo + b / (a - 1.0);
        let g_m = r / var;
        let g_v = -0.5 / var + 0.5 * r * r / (var * var);
        let (mut gm, mut gv) = (vec![0.0; w], vec![0.0; w]);
        backward(&self.arch, &m, &v, &tape, g_m, g_v, &mut gm, &mut gv);
        for i in 0..w {
            let m_new = m[i] + v[i] * gm[i];
            let v_new = v[i] - v[i] * v[i] * (gm[i] * gm[i] - 2.0 * gv[i]);
            if v_new > 1e-100 && v_new.is_finite() && m_new.is_finite() {
                out[2 * i] = m_new / v_new;
                out[2 * i + 1] = -0.5 / v_new;
            } else {
                out[2 * i] = cavity[2 * i];
                out[2 * i + 1] = cavity[2 * i + 1];
            }
        }
        let (a_new, b_new) = gamma_update(a, b, log_z).unwrap_or((a, b));
        out[2 * w] = a_new - 1.0;
        out[2 * w + 1] = -b_new;
        true
    }

    fn is_valid(&self, theta: &[f64]) -> bool {
        let w = self.arch.n_weights();
        theta.len() == 2 * w + 2
            && theta.iter().all(|t| t.is_finite())
            && (0..w).all(|i| theta[2 * i + 1] < 0.0)
            && theta[2 * w] > 0.0
            && theta[2 * w + 1] < 0.0
    }

    fn repair(&self, theta: &mut [f64]) {
        let w = self.arch.n_weights();
        let k_max = -0.5 * self.min_precision;
        for i in 0..w {
            if !theta[2 * i].is_finite() {
                theta[2 * i] = 0.0;
            }
            if theta[2 * i + 1].is_nan() || theta[2 * i + 1] > k_max {
                theta[2 * i + 1] = k_max;
                // The precision is reset to the floor: keep the mean (eta / precision) within
                // REPAIR_MEAN_BOUND prior standard deviations instead of letting the old eta,
                // which belonged to a much larger precision, become a huge mean.
                let bound = REPAIR_MEAN_BOUND * self.min_precision.sqrt();
                theta[2 * i] = theta[2 * i].clamp(-bound, bound);
            }
        }
        if theta[2 * w].is_nan() || theta[2 * w] < 1.0 {
            theta[2 * w] = 1.0;
        }
        if theta[2 * w + 1].is_nan() || theta[2 * w + 1] > -1e-3 {
            theta[2 * w + 1] = -1e-3;
        }
    }

    fn has_metric(&self) -> bool {
        true
    }

    /// Per weight `(m, v)`: `L^T d = (sqrt(v) (d_h + 2 m d_k), sqrt(2) v d_k)`, the Cholesky
    /// factor of the Gaussian's Fisher information `[[v, 2 m v], [2 m v, 2 v^2 + 4 m^2 v]]` in
    /// the natural parameters `(m / v, -1 / (2 v))`; the noise-precision Gamma block likewise
    /// with `[[psi'(alpha), 1 / beta], [1 / beta, alpha / beta^2]]`. Each weight's `(m, v, sd)`
    /// and the Gamma block's factor are computed once here.
    fn metric<'a>(&'a self, at: &'a [f64]) -> crate::model::Metric<'a> {
        let w = self.arch.n_weights();
        let weights: Vec<(f64, f64, f64)> = (0..w)
            .map(|i| {
                let (m, var) = mv(at[2 * i], at[2 * i + 1]);
                (m, var, var.sqrt())
            })
            .collect();
        let gamma = gamma_fisher_cholesky(at[2 * w] + 1.0, -at[2 * w + 1]);
        let weights_back = weights.clone();
        crate::model::Metric::new(
            move |v: &mut [f64]| {
                for (i, &(m, var, sd)) in weights.iter().enumerate() {
                    (v[2 * i], v[2 * i + 1]) =
                        crate::natural::whiten_gaussian_1d(m, var, sd, v[2 * i], v[2 * i + 1]);
                }
                let (l11, l21, l22) = gamma;
                let (d1, d2) = (v[2 * w], v[2 * w + 1]);
                v[2 * w] = l11 * d1 + l21 * d2;
                v[2 * w + 1] = l22 * d2;
            },
            move |v: &mut [f64]| {
                for (i, &(m, var, sd)) in weights_back.iter().enumerate() {
                    (v[2 * i], v[2 * i + 1]) =
                        crate::natural::unwhiten_gaussian_1d(m, var, sd, v[2 * i], v[2 * i + 1]);
                }
                let (l11, l21, l22) = gamma;
                let d2 = v[2 * w + 1] / l22;
                v[2 * w] = (v[2 * w] - l21 * d2) / l11;
                v[2 * w + 1] = d2;
            },
        )
    }

    /// One EP sweep over the prior factors `N(w_i | 0, 1/lambda) Gamma(lambda)` (PBP Sec. 3.3).
    fn refine_prior(&mut self, prior: &mut [f64], posterior: &[f64]) {
        let w = self.arch.n_weights();
        let mut post = posterior.to_vec();
        for i in 0..w {
            let prec_q = -2.0 * post[2 * i + 1];
            let prec_hat = -2.0 * prior[2 * i + 1];
            let prec_cav = prec_q - prec_hat;
            let h_cav = post[2 * i] - prior[2 * i];
            let (a_hat, b_hat) = self.lambda_hat[i];
            let a_cav = self.lambda.0 - a_hat;
            let b_cav = self.lambda.1 - b_hat;
            if !(prec_cav > 1e-6 && b_cav > 0.0 && a_cav > 1.0) {
                continue;
            }
            let v_cav = 1.0 / prec_cav;
            let m_cav = h_cav * v_cav;
            let vs = [0.0, 1.0, 2.0].map(|k| v_cav + b_cav / (a_cav + k - 1.0));
            let log_z = [0, 1, 2].map(|k| log_norm(m_cav, vs[k]));
            let g_m = -m_cav / vs[0];
            let g_v = -0.5 / vs[0] + 0.5 * m_cav * m_cav / (vs[0] * vs[0]);
            let m_new = m_cav + v_cav * g_m;
            let v_new = v_cav - v_cav * v_cav * (g_m * g_m - 2.0 * g_v);
            let Some((a_new, b_new)) = gamma_update(a_cav, b_cav, log_z) else {
                continue;
            };
            if !(v_new > 0.0 && v_new.is_finite() && m_new.is_finite()) {
                continue;
            }
            prior[2 * i] = m_new / v_new - h_cav;
            prior[2 * i + 1] = -0.5 * (1.0 / v_new - prec_cav);
            post[2 * i] = m_new / v_new;
            post[2 * i + 1] = -0.5 / v_new;
            self.lambda_hat[i] = (a_new - a_cav, b_new - b_cav);
            self.lambda = (a_new, b_new);
        }
    }
}

#[cfg(test)]
mod repair_tests {
    use super::*;
    use crate::model::SepModel;

    #[test]
    fn a_repaired_precision_keeps_the_mean_within_the_bound() {
        let model = PbpModel::try_new(2, &[3]).unwrap();
        let w = model.arch.n_weights();
        let mut theta = vec![0.0; 2 * w + 2];
        for i in 0..w {
            theta[2 * i] = 50.0 * (i as f64 + 1.0); // eta of a once-precise weight
            theta[2 * i + 1] = if i % 2 == 0 { 0.3 } else { -50.0 }; // every other precision improper
        }
        theta[2 * w] = 2.0;
        theta[2 * w + 1] = -1.0;
        assert!(!model.is_valid(&theta));
        let before = theta.clone();
        model.repair(&mut theta);
        assert!(model.is_valid(&theta));
        for i in 0..w {
            let precision = -2.0 * theta[2 * i + 1];
            let mean = theta[2 * i] / precision;
            if i % 2 == 0 {
                assert!(
                    mean.abs() <= REPAIR_MEAN_BOUND / precision.sqrt() + 1e-12,
                    "{i}: {mean}"
                );
            } else {
                // proper weights are untouched
                assert_eq!(
                    (theta[2 * i], theta[2 * i + 1]),
                    (before[2 * i], before[2 * i + 1])
                );
            }
        }
    }

    /// The log-partition of PBP's family at `theta` (Gaussians in `(m / v, -1 / (2 v))`, the
    /// noise-precision Gamma in `(alpha - 1, -beta)`), written independently of the metric.
    fn log_partition(theta: &[f64]) -> f64 {
        let w = (theta.len() - 2) / 2;
        let gaussians: f64 = (0..w)
            .map(|i| {
                let (h, k) = (theta[2 * i], theta[2 * i + 1]);
                -h * h / (4.0 * k) - 0.5 * (-2.0 * k).ln()
            })
            .sum();
        let (a1, nb) = (theta[2 * w], theta[2 * w + 1]);
        gaussians + expfam::ln_gamma(a1 + 1.0).unwrap() - (a1 + 1.0) * (-nb).ln()
    }

    /// `||L^T v||^2 = v^T F v` with `F` the Hessian of the log-partition (the Fisher
    /// information), by central differences; and `unwhiten` inverts `whiten`.
    #[test]
    fn whitening_is_the_fisher_metric_and_inverts() {
        let model = PbpModel::new(1, &[1]); // 1 x (1 + 1) + (1 + 1) = 4 weights
        let w = model.arch.n_weights();
        let mut at = vec![0.0; 2 * w + 2];
        for i in 0..w {
            let (m, var) = (0.7 * i as f64 - 1.1, 0.05 + 0.3 * i as f64);
            at[2 * i] = m / var;
            at[2 * i + 1] = -0.5 / var;
        }
        at[2 * w] = 7.5 - 1.0;
        at[2 * w + 1] = -2.5;
        assert!(model.is_valid(&at));
        let v: Vec<f64> = (0..at.len())
            .map(|j| ((j * 7 + 3) % 5) as f64 - 2.1)
            .collect();
        // v^T H v = d^2/dt^2 A(at + t v) at t = 0.
        let quad = crate::natural::second_derivative_along(log_partition, &at, &v, 1e-4);
        let mut white = v.clone();
        model.metric(&at).whiten(&mut white);
        let norm2: f64 = white.iter().map(|x| x * x).sum();
        assert!(
            (norm2 - quad).abs() <= 1e-5 * quad.abs().max(1.0),
            "||L^T v||^2 = {norm2}, v^T F v = {quad}"
        );
        model.metric(&at).unwhiten(&mut white);
        for (a, b) in white.iter().zip(&v) {
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
        }
    }
}
