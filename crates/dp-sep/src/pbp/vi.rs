//! Non-private mean-field Gaussian variational inference (VI) for PBP's network: the "VI"
//! column of 002 Tables 2-3 (Graves 2011, as run by Hernández-Lobato & Adams 2015, Table 1).
//!
//! # Model
//! The network of [`super::Architecture`] with one hidden layer of ReLU units: layer `l` has
//! weights `n_out x (n_in + 1)` (last column the bias) and pre-activations divided by
//! `sqrt(n_in + 1)`, exactly as PBP's forward pass (`network.rs`). Prior `w_k ~ N(0, 1)` on every
//! weight (PBP's weight precision has prior mean `E[lambda] = 1`), Gaussian noise of precision
//! `gamma` with PBP's prior `gamma ~ Gamma(a0, b0)` ([`GAMMA_PRIOR`]).
//!
//! # Approximation
//! `q(w) = prod_k N(m_k, sigma_k^2)` with `sigma_k = softplus(rho_k)`, and on the log noise
//! precision `tau = ln gamma` a Gaussian `q(tau) = N(mu, s^2)`, `s = softplus(rho_tau)`. The
//! evidence lower bound
//!
//! `ELBO = sum_n E_q[ln N(y_n | f(x_n; w), e^-tau)] - KL(q(w) || p(w)) + E_q[ln p(tau)] + H[q(tau)]`
//!
//! is estimated on a minibatch `B` with one reparameterised weight draw `w = m + sigma * eps`,
//! `eps ~ N(0, I)` (Blundell et al. 2015, "Bayes by backprop"), the data term scaled by
//! `N / |B|`. Everything in `tau` is in closed form: with `E[gamma] = exp(mu + s^2 / 2)`,
//! `E[ln N(y | f, e^-tau)] = -ln(2 pi)/2 + mu/2 - E[gamma] (y - f)^2 / 2`,
//! `E[ln p(tau)] = a0 ln b0 - ln Gamma(a0) + a0 mu - b0 E[gamma]` (the density of `tau` when
//! `gamma ~ Gamma(a0, b0)`) and `H[q(tau)] = ln(2 pi e)/2 + ln s`; the KL of the weights is the
//! closed form `sum_k (sigma_k^2 + m_k^2 - 1)/2 - ln sigma_k`. Gradients are computed by hand
//! (backpropagation through the sampled network, then the chain rule through the
//! reparameterisation and the softplus; checked against finite differences in the tests) and
//! followed by Adam (Kingma & Ba 2015).
//!
//! # Prediction
//! `S` weight draws from `q(w)`, shared by all test inputs: the predictive mean is the average
//! output, the variance the outputs' variance plus `E_q[1/gamma] = exp(-mu + s^2 / 2)`. Test
//! metrics go through [`super::evaluate_predictive`], PBP's own metric code.
//!
//! # Example
//! ```
//! use dp_sep::data::Dataset;
//! use dp_sep::pbp::Scaling;
//! use dp_sep::pbp::vi::{ViConfig, run_vi};
//! // y = x0 - 2 x1 on a small grid.
//! let (mut x, mut y) = (Vec::new(), Vec::new());
//! for i in 0..200 {
//!     let (a, b) = ((i % 20) as f64 / 10.0 - 1.0, (i / 20) as f64 / 5.0 - 1.0);
//!     x.extend([a, b]);
//!     y.push(a - 2.0 * b);
//! }
//! let data = Dataset::new(x, y, 2)?;
//! let config = ViConfig::builder().hidden(10).epochs(20).seed(1).build()?;
//! let out = run_vi(&data, &data, &config, &Scaling::FitOnTraining)?;
//! assert!(out.metrics.rmse < 0.5, "rmse {}", out.metrics.rmse);
//! # Ok::<(), dp_sep::pbp::vi::ViError>(())
//! ```

use std::time::Instant;

use rand::rngs::ChaCha20Rng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::evaluate::{Metrics, evaluate_predictive};
use super::experiment::Scaling;
use super::model::GAMMA_PRIOR;
use super::network::Architecture;
use crate::data::{Dataset, Standardizer};
use crate::error::SepError;
use crate::limits::{MAX_MODEL_BYTES, check_bytes, f64_bytes};

/// What can go wrong in a VI fit.
#[derive(Debug, Error)]
pub enum ViError {
    /// Bad settings, bad data or a network too large (the crate's error).
    #[error(transparent)]
    Sep(#[from] SepError),
    /// The stochastic optimisation left the finite numbers (too large a learning rate).
    #[error("VI diverged in epoch {epoch}: the {what} is not finite (try a smaller learning rate)")]
    Diverged {
        /// Epoch (1-based) in which it happened.
        epoch: usize,
        /// What became non-finite.
        what: &'static str,
    },
}

/// Settings of a VI fit; build with [`ViConfig::builder`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViConfig {
    hidden: usize,
    epochs: usize,
    batch_size: usize,
    learning_rate: f64,
    init_std: f64,
    predict_samples: usize,
    seed: u64,
}

/// Unchecked [`ViConfig`].
#[derive(Clone, Debug)]
pub struct ViConfigBuilder {
    cfg: ViConfig,
}

impl ViConfig {
    /// A builder with: 50 hidden units, 40 epochs, minibatches of 32, Adam with learning rate
    /// 0.01, initial weight standard deviations 0.01, 100 predictive draws, seed 0. (Chosen
    /// a priori, not tuned on any UCI split; epochs and width are those of the PBP runs.)
    pub fn builder() -> ViConfigBuilder {
        ViConfigBuilder {
            cfg: ViConfig {
                hidden: 50,
                epochs: 40,
                batch_size: 32,
                learning_rate: 0.01,
                init_std: 0.01,
                predict_samples: 100,
                seed: 0,
            },
        }
    }
    /// Hidden ReLU units (one hidden layer).
    pub fn hidden(&self) -> usize {
        self.hidden
    }
    /// Passes over the training data.
    pub fn epochs(&self) -> usize {
        self.epochs
    }
    /// Records per minibatch (the last one of an epoch may be smaller).
    pub fn batch_size(&self) -> usize {
        self.batch_size
    }
    /// Adam's step size.
    pub fn learning_rate(&self) -> f64 {
        self.learning_rate
    }
    /// Initial `sigma_k` of every weight.
    pub fn init_std(&self) -> f64 {
        self.init_std
    }
    /// Weight draws of the Monte Carlo predictive.
    pub fn predict_samples(&self) -> usize {
        self.predict_samples
    }
    /// Seed of the initialisation, the minibatch order and every draw.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

impl ViConfigBuilder {
    /// Hidden ReLU units (default 50; 100 for protein in the PBP protocol).
    pub fn hidden(mut self, hidden: usize) -> Self {
        self.cfg.hidden = hidden;
        self
    }
    /// Passes over the data (default 40).
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.cfg.epochs = epochs;
        self
    }
    /// Records per minibatch (default 32).
    pub fn batch_size(mut self, batch_size: usize) -> Self {
        self.cfg.batch_size = batch_size;
        self
    }
    /// Adam's step size (default 0.01).
    pub fn learning_rate(mut self, learning_rate: f64) -> Self {
        self.cfg.learning_rate = learning_rate;
        self
    }
    /// Initial standard deviation of every weight's `q` (default 0.01).
    pub fn init_std(mut self, init_std: f64) -> Self {
        self.cfg.init_std = init_std;
        self
    }
    /// Weight draws of the predictive (default 100).
    pub fn predict_samples(mut self, samples: usize) -> Self {
        self.cfg.predict_samples = samples;
        self
    }
    /// Seed of every random choice (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.cfg.seed = seed;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for zero hidden units, epochs, batch size or predictive
    /// draws, and a learning rate or initial standard deviation that is not finite and `> 0`.
    pub fn build(self) -> Result<ViConfig, SepError> {
        let c = self.cfg;
        for (name, v) in [
            ("hidden", c.hidden),
            ("epochs", c.epochs),
            ("batch_size", c.batch_size),
            ("predict_samples", c.predict_samples),
        ] {
            if v == 0 {
                return Err(SepError::InvalidParameter {
                    name,
                    value: 0.0,
                    reason: "must be >= 1",
                });
            }
        }
        crate::error::check_positive("learning_rate", c.learning_rate)?;
        crate::error::check_positive("init_std", c.init_std)?;
        Ok(c)
    }
}

/// `ln(1 + e^x)` without overflow.
fn softplus(x: f64) -> f64 {
    if x > 30.0 { x } else { x.exp().ln_1p() }
}

/// Inverse of [`softplus`] for `y > 0`.
fn softplus_inv(y: f64) -> f64 {
    if y > 30.0 { y } else { y.exp_m1().ln() }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The variational parameters: `[m (W), rho (W), mu, rho_tau]` for `W` weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViPosterior {
    d: usize,
    hidden: usize,
    params: Vec<f64>,
}

impl ViPosterior {
    /// Checks the size of a network with `d` inputs and `hidden` units (`copies` parameter
    /// vectors in memory) before anything is allocated, and returns its number of weights.
    fn checked_weights(d: usize, hidden: usize, copies: u128) -> Result<usize, SepError> {
        if d == 0 {
            return Err(SepError::InvalidParameter {
                name: "input dimension",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        let w = (hidden as u128)
            .saturating_mul(d as u128 + 1)
            .saturating_add(hidden as u128 + 1);
        check_bytes(
            &format!("a VI network with {d} inputs and {hidden} hidden units"),
            "its variational parameters, gradients, Adam moments and predictive draws",
            f64_bytes(w.saturating_mul(copies)),
            MAX_MODEL_BYTES,
        )?;
        Ok(Architecture::new(d, &[hidden]).n_weights())
    }

    /// The initial `q`: means `N(0, 1/(n_in + 1))` per layer (PBP's initialisation), every
    /// `sigma_k = init_std`, and `q(tau)` centred on the prior mean of `gamma`.
    fn initial<R: Rng + ?Sized>(d: usize, hidden: usize, init_std: f64, rng: &mut R) -> Self {
        let w = Architecture::new(d, &[hidden]).n_weights();
        let mut params = Vec::with_capacity(2 * w + 2);
        let first = hidden * (d + 1);
        for k in 0..w {
            let n_in = if k < first { d + 1 } else { hidden + 1 };
            let z: f64 = StandardNormal.sample(rng);
            params.push(z / (n_in as f64).sqrt());
        }
        params.extend(std::iter::repeat_n(softplus_inv(init_std), w));
        let (a0, b0) = GAMMA_PRIOR;
        params.push((a0 / b0).ln());
        params.push(softplus_inv(init_std));
        Self { d, hidden, params }
    }

    fn n_weights(&self) -> usize {
        (self.params.len() - 2) / 2
    }

    /// Input dimension.
    pub fn input_dim(&self) -> usize {
        self.d
    }

    /// Hidden units.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Means `m_k` of the weights (layout of [`super::Architecture`]).
    pub fn means(&self) -> &[f64] {
        &self.params[..self.n_weights()]
    }

    /// Standard deviations `sigma_k` of the weights.
    pub fn stds(&self) -> Vec<f64> {
        let w = self.n_weights();
        self.params[w..2 * w].iter().map(|&r| softplus(r)).collect()
    }

    /// `E_q[1/gamma]`, the expected noise variance (standardised units).
    pub fn noise_variance(&self) -> f64 {
        let (mu, s) = self.tau();
        (-mu + 0.5 * s * s).exp()
    }

    fn tau(&self) -> (f64, f64) {
        let n = self.params.len();
        (self.params[n - 2], softplus(self.params[n - 1]))
    }

    /// Writes the weights `m + sigma * eps` into `w`.
    fn draw(&self, eps: &[f64], w: &mut [f64]) {
        let nw = self.n_weights();
        for k in 0..nw {
            w[k] = self.params[k] + softplus(self.params[nw + k]) * eps[k];
        }
    }
}

/// The network's output for weights `w` and input `x`; `h` receives the hidden pre-activations.
fn forward(d: usize, hidden: usize, w: &[f64], x: &[f64], h: &mut [f64]) -> f64 {
    let s0 = 1.0 / ((d + 1) as f64).sqrt();
    let s1 = 1.0 / ((hidden + 1) as f64).sqrt();
    let out = hidden * (d + 1);
    let mut f = w[out + hidden];
    for j in 0..hidden {
        let row = &w[j * (d + 1)..(j + 1) * (d + 1)];
        let a = (row[..d].iter().zip(x).map(|(a, b)| a * b).sum::<f64>() + row[d]) * s0;
        h[j] = a;
        f += w[out + j] * a.max(0.0);
    }
    f * s1
}

/// Adds `df * d f / d w` to `g` (for the forward pass that left `h`).
fn backward(d: usize, hidden: usize, w: &[f64], x: &[f64], h: &[f64], df: f64, g: &mut [f64]) {
    let s0 = 1.0 / ((d + 1) as f64).sqrt();
    let s1 = 1.0 / ((hidden + 1) as f64).sqrt();
    let out = hidden * (d + 1);
    g[out + hidden] += df * s1;
    for j in 0..hidden {
        if h[j] > 0.0 {
            g[out + j] += df * s1 * h[j];
            let da = df * s1 * w[out + j] * s0;
            let row = &mut g[j * (d + 1)..(j + 1) * (d + 1)];
            for (gi, xi) in row[..d].iter_mut().zip(x) {
                *gi += da * xi;
            }
            row[d] += da;
        }
    }
}

/// Scratch space of [`objective`].
struct Scratch {
    w: Vec<f64>,
    gw: Vec<f64>,
    h: Vec<f64>,
}

impl Scratch {
    fn new(q: &ViPosterior) -> Self {
        Self {
            w: vec![0.0; q.n_weights()],
            gw: vec![0.0; q.n_weights()],
            h: vec![0.0; q.hidden],
        }
    }
}

/// The ELBO estimate of `q` on `batch` (rows of `data`, standardised) with the weight noise
/// `eps`, the data term scaled by `n / |batch|`; writes its gradient in `q`'s parameters into
/// `grad`. Includes every constant, so with `batch` = all rows and `eps` = 0 it is the ELBO of
/// the network at the means (a lower bound on nothing; used only to test the gradient).
fn objective(
    q: &ViPosterior,
    data: &Dataset,
    batch: &[usize],
    n: f64,
    eps: &[f64],
    grad: &mut [f64],
    s: &mut Scratch,
) -> f64 {
    let (d, hidden) = (q.d, q.hidden);
    let nw = q.n_weights();
    let (a0, b0) = GAMMA_PRIOR;
    let (mu, sd) = q.tau();
    let e_gamma = (mu + 0.5 * sd * sd).exp();
    q.draw(eps, &mut s.w);
    s.gw.iter_mut().for_each(|g| *g = 0.0);
    let scale = n / batch.len() as f64;
    let mut sq = 0.0;
    for &i in batch {
        let x = data.row(i);
        let f = forward(d, hidden, &s.w, x, &mut s.h);
        let r = data.target(i) - f;
        sq += r * r;
        backward(d, hidden, &s.w, x, &s.h, scale * e_gamma * r, &mut s.gw);
    }
    let half_ln_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
    let data_term = scale * (batch.len() as f64 * (0.5 * mu - half_ln_2pi) - 0.5 * e_gamma * sq);
    let mut kl = 0.0;
    for k in 0..nw {
        let (m, rho) = (q.params[k], q.params[nw + k]);
        let sigma = softplus(rho);
        kl += 0.5 * (sigma * sigma + m * m - 1.0) - sigma.ln();
        grad[k] = s.gw[k] - m;
        grad[nw + k] = (s.gw[k] * eps[k] - sigma + 1.0 / sigma) * sigmoid(rho);
    }
    let ln_gamma_a0 = expfam::ln_gamma(a0).unwrap_or(f64::NAN);
    let prior_tau = a0 * b0.ln() - ln_gamma_a0 + a0 * mu - b0 * e_gamma;
    let entropy_tau = 0.5 * (2.0 * std::f64::consts::PI * std::f64::consts::E).ln() + sd.ln();
    let m_tau = batch.len() as f64 * scale;
    grad[2 * nw] = 0.5 * m_tau - 0.5 * scale * e_gamma * sq + a0 - b0 * e_gamma;
    let d_sd = -0.5 * scale * e_gamma * sq * sd - b0 * e_gamma * sd + 1.0 / sd;
    grad[2 * nw + 1] = d_sd * sigmoid(q.params[2 * nw + 1]);
    data_term - kl + prior_tau + entropy_tau
}

/// Adam (ascent) on a parameter vector.
struct Adam {
    lr: f64,
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl Adam {
    const BETA1: f64 = 0.9;
    const BETA2: f64 = 0.999;
    const EPS: f64 = 1e-8;

    fn new(lr: f64, n: usize) -> Self {
        Self {
            lr,
            m: vec![0.0; n],
            v: vec![0.0; n],
            t: 0,
        }
    }

    fn ascend(&mut self, params: &mut [f64], grad: &[f64]) {
        self.t = self.t.saturating_add(1);
        let c1 = 1.0 - Self::BETA1.powi(self.t);
        let c2 = 1.0 - Self::BETA2.powi(self.t);
        for k in 0..params.len() {
            self.m[k] = Self::BETA1 * self.m[k] + (1.0 - Self::BETA1) * grad[k];
            self.v[k] = Self::BETA2 * self.v[k] + (1.0 - Self::BETA2) * grad[k] * grad[k];
            params[k] += self.lr * (self.m[k] / c1) / ((self.v[k] / c2).sqrt() + Self::EPS);
        }
    }
}

/// A fitted `q` with its training trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViFit {
    /// The variational posterior.
    pub posterior: ViPosterior,
    /// Per epoch, the average over its minibatches of the ELBO estimate divided by `N`.
    pub elbo_per_epoch: Vec<f64>,
}

/// A Monte Carlo predictive: `S` weight draws from `q(w)` shared by every input.
#[derive(Clone, Debug)]
pub struct ViPredictive {
    d: usize,
    hidden: usize,
    draws: Vec<Vec<f64>>,
    noise_variance: f64,
}

impl ViPredictive {
    /// Predictive mean and variance (weights plus noise) at `x` (standardised units).
    ///
    /// # Errors
    /// [`SepError::DimensionMismatch`] for an input of the wrong length.
    pub fn predict(&self, x: &[f64]) -> Result<(f64, f64), SepError> {
        if x.len() != self.d {
            return Err(SepError::DimensionMismatch {
                what: "ViPredictive::predict input",
                expected: self.d,
                found: x.len(),
            });
        }
        let mut h = vec![0.0; self.hidden];
        let (mut s1, mut s2) = (0.0, 0.0);
        for w in &self.draws {
            let f = forward(self.d, self.hidden, w, x, &mut h);
            s1 += f;
            s2 += f * f;
        }
        let n = self.draws.len() as f64;
        let mean = s1 / n;
        let var = (s2 / n - mean * mean).max(0.0);
        Ok((mean, var + self.noise_variance))
    }
}

impl ViFit {
    /// The Monte Carlo predictive with `samples` weight draws from `rng`.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for `samples == 0`; [`SepError::TooLarge`] for draws above
    /// [`MAX_MODEL_BYTES`].
    pub fn predictive<R: Rng + ?Sized>(
        &self,
        samples: usize,
        rng: &mut R,
    ) -> Result<ViPredictive, SepError> {
        if samples == 0 {
            return Err(SepError::InvalidParameter {
                name: "predict_samples",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        let q = &self.posterior;
        let nw = q.n_weights();
        check_bytes(
            &format!("{samples} predictive draws"),
            "the sampled weights",
            f64_bytes((samples as u128).saturating_mul(nw as u128)),
            MAX_MODEL_BYTES,
        )?;
        let mut eps = vec![0.0; nw];
        let draws = (0..samples)
            .map(|_| {
                eps.iter_mut().for_each(|e| *e = StandardNormal.sample(rng));
                let mut w = vec![0.0; nw];
                q.draw(&eps, &mut w);
                w
            })
            .collect();
        Ok(ViPredictive {
            d: q.d,
            hidden: q.hidden,
            draws,
            noise_variance: q.noise_variance(),
        })
    }
}

/// Fits `q` to `train` (already standardised: the model's units) by stochastic ELBO ascent.
///
/// # Errors
/// [`SepError::Empty`] for no records; [`SepError::TooLarge`] for a network above
/// [`MAX_MODEL_BYTES`]; [`ViError::Diverged`] if the ELBO or a parameter becomes non-finite.
pub fn fit_vi(train: &Dataset, config: &ViConfig) -> Result<ViFit, ViError> {
    if train.is_empty() {
        return Err(SepError::Empty("VI needs at least one training record").into());
    }
    // Parameters, gradient, two Adam moments, the draw and its gradient, and the predictive's
    // draws: checked before anything is allocated.
    let copies = 2 * 4 + 2 + config.predict_samples as u128;
    ViPosterior::checked_weights(train.dim(), config.hidden, copies)?;
    let mut rng = ChaCha20Rng::seed_from_u64(config.seed);
    let mut q = ViPosterior::initial(train.dim(), config.hidden, config.init_std, &mut rng);
    let nw = q.n_weights();
    let mut grad = vec![0.0; q.params.len()];
    let mut eps = vec![0.0; nw];
    let mut scratch = Scratch::new(&q);
    let mut adam = Adam::new(config.learning_rate, q.params.len());
    let n = train.len();
    let mut trace = Vec::with_capacity(config.epochs);
    for epoch in 1..=config.epochs {
        let order = crate::sep::shuffled_epoch(n, &mut rng);
        let (mut total, mut batches) = (0.0, 0usize);
        for batch in order.chunks(config.batch_size) {
            eps.iter_mut()
                .for_each(|e| *e = StandardNormal.sample(&mut rng));
            let elbo = objective(&q, train, batch, n as f64, &eps, &mut grad, &mut scratch);
            if !elbo.is_finite() || grad.iter().any(|g| !g.is_finite()) {
                return Err(ViError::Diverged {
                    epoch,
                    what: "ELBO estimate or its gradient",
                });
            }
            adam.ascend(&mut q.params, &grad);
            total += elbo;
            batches += 1;
        }
        if q.params.iter().any(|p| !p.is_finite()) {
            return Err(ViError::Diverged {
                epoch,
                what: "variational parameters",
            });
        }
        trace.push(total / batches as f64 / n as f64);
    }
    Ok(ViFit {
        posterior: q,
        elbo_per_epoch: trace,
    })
}

/// The result of [`run_vi`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViOutcome {
    /// Test RMSE and test log-likelihood in original units (PBP's metric code).
    pub metrics: Metrics,
    /// ELBO per record, per epoch (see [`ViFit::elbo_per_epoch`]).
    pub elbo_per_epoch: Vec<f64>,
    /// `E_q[1/gamma]` in standardised units.
    pub noise_variance: f64,
    /// Wall-clock seconds of fitting and evaluation.
    pub seconds: f64,
}

/// Scales `train` as PBP does (`scaling`: declared public ranges, or the training split's mean
/// and standard deviation), fits VI and evaluates on `test` in original units.
///
/// # Errors
/// [`SepError::DimensionMismatch`] for train and test (or declared ranges) of different widths;
/// as [`fit_vi`] and [`ViFit::predictive`].
pub fn run_vi(
    train: &Dataset,
    test: &Dataset,
    config: &ViConfig,
    scaling: &Scaling,
) -> Result<ViOutcome, ViError> {
    let start = Instant::now();
    if train.dim() != test.dim() {
        return Err(SepError::DimensionMismatch {
            what: "train vs test features",
            expected: train.dim(),
            found: test.dim(),
        }
        .into());
    }
    let scaler = match scaling {
        Scaling::FitOnTraining => Standardizer::fit(train),
        Scaling::Declared(ranges) => {
            if ranges.features().len() != train.dim() {
                return Err(SepError::DimensionMismatch {
                    what: "declared feature ranges vs features",
                    expected: train.dim(),
                    found: ranges.features().len(),
                }
                .into());
            }
            Standardizer::from_public_ranges(ranges)
        }
    };
    let fit = fit_vi(&scaler.transform(train), config)?;
    // The predictive's draws come from their own stream, so they do not depend on how many
    // draws training made.
    let mut rng = ChaCha20Rng::seed_from_u64(config.seed ^ 0x5eed_5eed_5eed_5eed);
    let predictive = fit.predictive(config.predict_samples, &mut rng)?;
    let metrics = evaluate_predictive(&scaler, test, |x| predictive.predict(x))?;
    Ok(ViOutcome {
        metrics,
        noise_variance: fit.posterior.noise_variance(),
        elbo_per_epoch: fit.elbo_per_epoch,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` inputs uniform in `[-1, 1]^d` and targets `teacher(x) + noise * N(0, 1)`.
    fn data(n: usize, d: usize, noise: f64, seed: u64, teacher: impl Fn(&[f64]) -> f64) -> Dataset {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let mut x = Vec::with_capacity(n * d);
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            let row: Vec<f64> = (0..d)
                .map(|_| rand::RngExt::random_range(&mut rng, -1.0..1.0))
                .collect();
            let z: f64 = StandardNormal.sample(&mut rng);
            y.push(teacher(&row) + noise * z);
            x.extend(row);
        }
        Dataset::new(x, y, d).unwrap()
    }

    fn linear(x: &[f64]) -> f64 {
        0.8 * x[0] - 0.5 * x[1] + 0.3 * x[2]
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let train = data(40, 3, 0.1, 3, linear);
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let mut q = ViPosterior::initial(3, 6, 0.3, &mut rng);
        // Move tau and the sigmas away from their initial values so every term is exercised.
        let len = q.params.len();
        q.params[len - 2] = 0.7;
        q.params[len - 1] = -0.4;
        let nw = q.n_weights();
        for k in 0..nw {
            q.params[nw + k] += 0.05 * (k % 7) as f64 - 0.1;
        }
        let eps: Vec<f64> = (0..nw).map(|_| StandardNormal.sample(&mut rng)).collect();
        let batch: Vec<usize> = (0..40).step_by(3).collect();
        let mut s = Scratch::new(&q);
        let mut grad = vec![0.0; len];
        objective(&q, &train, &batch, 40.0, &eps, &mut grad, &mut s);
        let mut scratch_grad = vec![0.0; len];
        let h = 1e-6;
        let mut worst: f64 = 0.0;
        for (k, &g) in grad.iter().enumerate() {
            let mut plus = q.clone();
            plus.params[k] += h;
            let mut minus = q.clone();
            minus.params[k] -= h;
            let fp = objective(&plus, &train, &batch, 40.0, &eps, &mut scratch_grad, &mut s);
            let fm = objective(
                &minus,
                &train,
                &batch,
                40.0,
                &eps,
                &mut scratch_grad,
                &mut s,
            );
            let fd = (fp - fm) / (2.0 * h);
            let err = (fd - g).abs() / (1.0 + g.abs());
            worst = worst.max(err);
        }
        assert!(worst < 1e-5, "worst relative gradient error {worst}");
    }

    #[test]
    fn fits_a_noiseless_linear_teacher() {
        let train = data(2000, 3, 0.0, 1, linear);
        let test = data(500, 3, 0.0, 2, linear);
        let config = ViConfig::builder()
            .hidden(20)
            .epochs(30)
            .seed(5)
            .build()
            .unwrap();
        let out = run_vi(&train, &test, &config, &Scaling::FitOnTraining).unwrap();
        // Target std is about 0.57; the mean predictor's RMSE would be that.
        assert!(out.metrics.rmse < 0.06, "rmse {}", out.metrics.rmse);
        // The learned noise is small in standardised units (the prior alone would give 1.2).
        assert!(out.noise_variance < 0.05, "noise {}", out.noise_variance);
    }

    #[test]
    fn the_elbo_increases_during_training() {
        let train = data(500, 3, 0.1, 4, |x| (2.0 * x[0]).sin() + x[1] * x[2]);
        let scaler = Standardizer::fit(&train);
        let z = scaler.transform(&train);
        let config = ViConfig::builder()
            .hidden(20)
            .epochs(25)
            .seed(9)
            .build()
            .unwrap();
        let fit = fit_vi(&z, &config).unwrap();
        let t = &fit.elbo_per_epoch;
        assert_eq!(t.len(), 25);
        assert!(t[t.len() - 1] > t[0] + 0.5, "trace {t:?}");
        // The full-data ELBO at the same weight draws (common random numbers), before and after.
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let q0 = ViPosterior::initial(3, 20, 0.01, &mut rng);
        let all: Vec<usize> = (0..z.len()).collect();
        let mut grad = vec![0.0; q0.params.len()];
        let mut s = Scratch::new(&q0);
        let mut draws = ChaCha20Rng::seed_from_u64(77);
        let (mut before, mut after) = (0.0, 0.0);
        for _ in 0..20 {
            let eps: Vec<f64> = (0..q0.n_weights())
                .map(|_| StandardNormal.sample(&mut draws))
                .collect();
            before += objective(&q0, &z, &all, z.len() as f64, &eps, &mut grad, &mut s);
            after += objective(
                &fit.posterior,
                &z,
                &all,
                z.len() as f64,
                &eps,
                &mut grad,
                &mut s,
            );
        }
        assert!(after > before, "ELBO before {before}, after {after}");
    }

    #[test]
    fn the_predictive_is_deterministic_under_a_seed_and_checks_its_input() {
        let train = data(300, 3, 0.1, 6, linear);
        let config = ViConfig::builder()
            .hidden(8)
            .epochs(3)
            .seed(2)
            .build()
            .unwrap();
        let a = run_vi(&train, &train, &config, &Scaling::FitOnTraining).unwrap();
        let b = run_vi(&train, &train, &config, &Scaling::FitOnTraining).unwrap();
        assert_eq!(a.metrics, b.metrics);
        assert_eq!(a.elbo_per_epoch, b.elbo_per_epoch);
        let fit = fit_vi(&train, &config).unwrap();
        let p = fit
            .predictive(10, &mut ChaCha20Rng::seed_from_u64(1))
            .unwrap();
        assert!(matches!(
            p.predict(&[0.0, 0.0]),
            Err(SepError::DimensionMismatch { .. })
        ));
        let (_, var) = p.predict(&[0.1, 0.2, 0.3]).unwrap();
        assert!(var >= fit.posterior.noise_variance());
    }

    #[test]
    fn bad_settings_and_sizes_are_typed_errors() {
        assert!(ViConfig::builder().epochs(0).build().is_err());
        assert!(ViConfig::builder().batch_size(0).build().is_err());
        assert!(ViConfig::builder().learning_rate(f64::NAN).build().is_err());
        assert!(ViConfig::builder().init_std(-1.0).build().is_err());
        let train = data(10, 3, 0.1, 7, linear);
        let huge = ViConfig::builder().hidden(usize::MAX / 4).build().unwrap();
        assert!(matches!(
            fit_vi(&train, &huge),
            Err(ViError::Sep(SepError::TooLarge { .. }))
        ));
        let test = data(10, 2, 0.1, 7, |x| x[0]);
        let ok = ViConfig::builder().hidden(4).epochs(1).build().unwrap();
        assert!(matches!(
            run_vi(&train, &test, &ok, &Scaling::FitOnTraining),
            Err(ViError::Sep(SepError::DimensionMismatch { .. }))
        ));
        let wild = ViConfig::builder()
            .hidden(4)
            .epochs(5)
            .learning_rate(1e12)
            .build()
            .unwrap();
        assert!(matches!(
            fit_vi(&train, &wild),
            Err(ViError::Diverged { .. })
        ));
    }
}
