//! The per-document E-step (003 Eq. 21 and the `gamma_d` update of Sec. 4.1; Hoffman et al. 2010,
//! Algorithm 2): a fixed point on `gamma_d` and `phi_d` given `exp(E[log beta])`.
//!
//! With `theta~_k = exp(E[log theta_dk])` and `beta~_kw = exp(E[log beta_kw])`, the optimal
//! `phi_dwk = theta~_k beta~_kw / Z_w` with `Z_w = sum_k theta~_k beta~_kw`, so `phi` is never stored:
//! one iteration is `gamma_k = alpha + theta~_k sum_w (c_w / Z_w) beta~_kw`. The loop stops when the
//! mean absolute change of `gamma` falls below the tolerance (as gensim and Hoffman's code do).
//!
//! All buffers live in a [`DocScratch`] that a thread reuses across documents: the hot loop does
//! not allocate. The two inner loops (the norms `Z_w` and the `gamma` accumulation) run in `f32`
//! over an `f32` copy of `exp(E[log beta])`, as gensim's default `float32` does; `gamma` and the
//! digamma calls stay in `f64`.

use super::special_fns::{digamma_fast, digamma32, exp32};
use super::{ExpectedTopics, LdaConfig};
use crate::data::Document;

/// Per-thread buffers of the E-step (sized for `K` topics; grown on demand for long documents).
#[derive(Clone, Debug)]
pub struct DocScratch {
    /// `gamma_d`, the Dirichlet parameters of `q(theta_d)` after [`infer_document`].
    pub gamma: Vec<f64>,
    /// `exp(E[log theta_d])` consistent with `gamma` (zero-padded to a multiple of 8).
    pub exp_elog_theta: Vec<f32>,
    /// `c_w / Z_w` per distinct word of the document.
    pub ratio: Vec<f32>,
    /// `Z_w = sum_k exp(E[log theta_dk] + E[log beta_kw])` per distinct word.
    pub phinorm: Vec<f32>,
    acc: Vec<f32>,
}

impl DocScratch {
    /// Buffers for `num_topics` topics.
    pub fn new(num_topics: usize) -> Self {
        let stride = num_topics.div_ceil(8) * 8;
        Self {
            gamma: vec![0.0; num_topics],
            exp_elog_theta: vec![0.0; stride],
            ratio: Vec::with_capacity(512),
            phinorm: Vec::with_capacity(512),
            acc: vec![0.0; stride],
        }
    }
}

/// Dot product with eight independent accumulators (lets the compiler vectorise).
#[inline]
pub(crate) fn dot32(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut s = [0.0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            s[i] += x[i] * y[i];
        }
    }
    let mut tail = 0.0;
    for (x, y) in ra.iter().zip(rb) {
        tail += x * y;
    }
    ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + tail
}

/// `f64` dot product (evaluation code).
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `exp(E[log theta])` from `gamma` into `out`.
///
/// For `gamma` up to `1e5` (documents up to ~1e5 tokens) the digammas run in `f32` over the
/// slice, branch-free so the loop vectorises; otherwise in `f64`.
#[inline]
pub(crate) fn exp_dirichlet_expectation(gamma: &[f64], out: &mut [f32]) {
    let total: f64 = gamma.iter().sum();
    let d_total = digamma_fast(total);
    if total <= 1e5 {
        for (o, &g) in out.iter_mut().zip(gamma) {
            *o = g as f32;
        }
        let dt = d_total as f32;
        for o in out.iter_mut() {
            *o = exp32(digamma32(*o) - dt);
        }
    } else {
        for (o, &g) in out.iter_mut().zip(gamma) {
            *o = exp32((digamma_fast(g) - d_total) as f32);
        }
    }
}

/// Runs the E-step for `doc`, leaving `gamma_d`, `exp(E[log theta_d])`, `Z_w` and `c_w / Z_w` in
/// `scratch`. Returns the number of iterations.
///
/// `gamma` starts at `alpha + N_d / K` (Blei et al. 2003). Words with ids `>= V` must have been
/// rejected before (the corpus types guarantee it).
pub fn infer_document(
    expected: &ExpectedTopics,
    cfg: &LdaConfig,
    doc: &Document,
    scratch: &mut DocScratch,
) -> usize {
    let k = expected.num_topics;
    let stride = expected.stride;
    let eeb = &expected.exp_elog_beta32;
    let alpha = cfg.alpha();
    let n = doc.num_distinct();
    let DocScratch {
        gamma,
        exp_elog_theta,
        ratio,
        phinorm,
        acc,
    } = scratch;
    gamma.resize(k, 0.0);
    exp_elog_theta.resize(stride, 0.0);
    exp_elog_theta[k..].iter_mut().for_each(|t| *t = 0.0);
    acc.resize(stride, 0.0);
    ratio.resize(n, 0.0);
    phinorm.resize(n, 0.0);
    let start = alpha + doc.len() as f64 / k as f64;
    gamma.iter_mut().for_each(|g| *g = start);
    exp_dirichlet_expectation(gamma, &mut exp_elog_theta[..k]);
    let words = doc.words();
    let counts = doc.counts();
    let update_norms = |t: &[f32], phinorm: &mut [f32], ratio: &mut [f32]| {
        for ((&w, &c), (z, r)) in words
            .iter()
            .zip(counts)
            .zip(phinorm.iter_mut().zip(ratio.iter_mut()))
        {
            let row = &eeb[w as usize * stride..w as usize * stride + stride];
            *z = dot32(t, row) + 1e-30;
            *r = c as f32 / *z;
        }
    };
    update_norms(exp_elog_theta, phinorm, ratio);
    let tol = cfg.estep_tol();
    let mut iters = 0;
    while iters < cfg.max_estep_iters() {
        iters += 1;
        acc.iter_mut().for_each(|a| *a = 0.0);
        for (&w, &r) in words.iter().zip(ratio.iter()) {
            let row = &eeb[w as usize * stride..w as usize * stride + stride];
            for (a, &b) in acc.iter_mut().zip(row) {
                *a += r * b;
            }
        }
        let mut change = 0.0;
        for ((g, &t), &a) in gamma.iter_mut().zip(exp_elog_theta.iter()).zip(acc.iter()) {
            let new = alpha + f64::from(t) * f64::from(a);
            change += (new - *g).abs();
            *g = new;
        }
        exp_dirichlet_expectation(gamma, &mut exp_elog_theta[..k]);
        update_norms(exp_elog_theta, phinorm, ratio);
        if change / (k as f64) < tol {
            break;
        }
    }
    iters
}

/// Writes the document's expected sufficient statistic `s_d[w, k] = c_w phi_dwk` for each distinct
/// word (row `j` of `out` = word `doc.words()[j]`, `K` values) after [`infer_document`], and returns
/// its Frobenius norm. Each row sums to the word's count, so the norm is at most `N_d`.
pub fn document_statistic(
    expected: &ExpectedTopics,
    doc: &Document,
    scratch: &DocScratch,
    out: &mut [f64],
) -> f64 {
    let k = expected.num_topics;
    let stride = expected.stride;
    let eeb = &expected.exp_elog_beta32;
    let mut sq = 0.0;
    for ((&w, &r), dst) in doc
        .words()
        .iter()
        .zip(&scratch.ratio)
        .zip(out.chunks_exact_mut(k))
    {
        let row = &eeb[w as usize * stride..w as usize * stride + k];
        for ((d, &t), &b) in dst.iter_mut().zip(&scratch.exp_elog_theta).zip(row) {
            *d = f64::from(t * b * r);
            sq += *d * *d;
        }
    }
    sq.sqrt()
}
