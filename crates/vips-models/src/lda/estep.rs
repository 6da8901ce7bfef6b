//! The per-document E-step (003 Eq. 21 and the `gamma_d` update of Sec. 4.1; Hoffman et al. 2010,
//! Algorithm 2): a fixed point on `gamma_d` and `phi_d` given `exp(E[log beta])`.
//!
//! With `theta~_k = exp(E[log theta_dk])` and `beta~_kw = exp(E[log beta_kw])`, the optimal
//! `phi_dwk = theta~_k beta~_kw / Z_w` with `Z_w = sum_k theta~_k beta~_kw`, so `phi` is never stored:
//! one iteration is `gamma_k = alpha + theta~_k sum_w (c_w / Z_w) beta~_kw`. The loop stops when the
//! mean absolute change of `gamma` falls below the tolerance (as gensim and Hoffman's code do).
//!
//! One pass over the document's distinct words per iteration computes both `Z_w` (a dot product
//! with `theta~`) and the accumulation `sum_w (c_w / Z_w) beta~_w` (an axpy), on `K`-lane `f32`
//! vectors held in registers when `K` is small. The kernels are written once over `pulp`'s safe
//! SIMD types and dispatched at run time to the widest instruction set the CPU has (AVX2 + FMA on
//! x86-64; plain scalar code otherwise). `gamma`, the norms and `exp(E[log theta])` are `f32`, as
//! gensim's default `float32`; the digamma of `sum_k gamma_k` is `f64`.
//!
//! All buffers live in a [`DocScratch`] that a thread reuses across documents: the hot loop does
//! not allocate.

use pulp::{Arch, Simd, WithSimd};

use super::special_fns::exp32;
use super::{ExpectedTopics, LdaConfig};
use crate::lda::corpus::Document;
use expfam::digamma_f32 as digamma32;
use expfam::digamma_fast;

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
    /// `sum_w (c_w / Z_w) beta~_kw` (padded like `exp_elog_theta`).
    acc: Vec<f32>,
    /// `gamma` in `f32` (padding lanes 0).
    gamma32: Vec<f32>,
    /// `alpha` in the first `K` lanes, 1 in the padding.
    alpha: Vec<f32>,
    /// 1 in the first `K` lanes, 0 in the padding.
    mask: Vec<f32>,
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
            gamma32: vec![0.0; stride],
            alpha: vec![0.0; stride],
            mask: vec![0.0; stride],
        }
    }
}

/// `f64` dot product (evaluation code).
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `exp(E[log theta])` from `gamma` (`sum_k gamma_k = total`) into `theta`, all lanes at once:
/// the padding lanes (where `mask` is 0; `gamma` is 1 there) come out 0.
///
/// For `total <= 1e5` (documents up to ~1e5 tokens) the digammas run in `f32`, branch-free so
/// the loop vectorises; otherwise in `f64` over the first `K` lanes.
#[inline(always)]
fn theta_from_gamma<S: Simd>(
    simd: S,
    gamma: &[S::f32s],
    mask: &[S::f32s],
    total: f64,
    k: usize,
    theta: &mut [S::f32s],
) {
    let d_total = digamma_fast(total);
    if total <= 1e5 {
        let dt = d_total as f32;
        {
            let out = pulp::bytemuck::cast_slice_mut::<S::f32s, f32>(theta);
            let gamma = pulp::bytemuck::cast_slice::<S::f32s, f32>(gamma);
            for (o, &g) in out.iter_mut().zip(gamma) {
                *o = exp32(digamma32(g) - dt);
            }
        }
        for (t, &m) in theta.iter_mut().zip(mask) {
            *t = simd.mul_f32s(*t, m);
        }
    } else {
        let out = pulp::bytemuck::cast_slice_mut::<S::f32s, f32>(theta);
        let gamma = pulp::bytemuck::cast_slice::<S::f32s, f32>(gamma);
        for (i, (o, &g)) in out.iter_mut().zip(gamma).enumerate() {
            *o = if i < k {
                exp32((digamma_fast(f64::from(g)) - d_total) as f32)
            } else {
                0.0
            };
        }
    }
}

/// Dot product of `f32` slices with eight independent accumulators, so that the compiler
/// vectorises it at the baseline width (the scalar fallback of [`dot_lanes`]).
#[inline(always)]
fn dot32(a: &[f32], b: &[f32]) -> f32 {
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

/// `sum_i a_i b_i` over SIMD vectors, two accumulators (eight for the scalar fallback, where a
/// vector is one `f32`).
#[inline(always)]
fn dot_lanes<S: Simd>(simd: S, a: &[S::f32s], b: &[S::f32s]) -> f32 {
    if S::IS_SCALAR {
        return dot32(
            pulp::bytemuck::cast_slice::<S::f32s, f32>(a),
            pulp::bytemuck::cast_slice::<S::f32s, f32>(b),
        );
    }
    let zero = simd.splat_f32s(0.0);
    let (mut s0, mut s1) = (zero, zero);
    let mut pairs_a = a.chunks_exact(2);
    let mut pairs_b = b.chunks_exact(2);
    for (x, y) in (&mut pairs_a).zip(&mut pairs_b) {
        s0 = simd.mul_add_e_f32s(x[0], y[0], s0);
        s1 = simd.mul_add_e_f32s(x[1], y[1], s1);
    }
    for (&x, &y) in pairs_a.remainder().iter().zip(pairs_b.remainder()) {
        s0 = simd.mul_add_e_f32s(x, y, s0);
    }
    simd.reduce_sum_f32s(simd.add_f32s(s0, s1))
}

/// The document-level inputs of one E-step.
struct Job<'a> {
    eeb: &'a [f32],
    stride: usize,
    num_topics: usize,
    tol: f64,
    max_iters: usize,
    /// `sum_k gamma_k` at the start.
    start_total: f64,
    doc: &'a Document,
}

impl Job<'_> {
    /// Word `w`'s row of `exp(E[log beta])` as `nv` SIMD vectors (`stride = nv * lanes`).
    #[inline(always)]
    fn row<S: Simd>(eeb: &[S::f32s], w: u32, nv: usize) -> &[S::f32s] {
        let start = w as usize * nv;
        &eeb[start..start + nv]
    }

    /// `Z_w` and `c_w / Z_w` for every distinct word, given `theta~`.
    #[inline(always)]
    fn norms<S: Simd>(&self, simd: S, theta: &[S::f32s], phinorm: &mut [f32], ratio: &mut [f32]) {
        let words = self.doc.words();
        let counts = self.doc.counts();
        let eeb = S::as_simd_f32s(self.eeb).0;
        let nv = theta.len();
        for ((&w, &c), (z, r)) in words
            .iter()
            .zip(counts)
            .zip(phinorm.iter_mut().zip(ratio.iter_mut()))
        {
            *z = dot_lanes(simd, theta, Self::row::<S>(eeb, w, nv)) + 1e-30;
            *r = c as f32 / *z;
        }
    }

    /// The fixed point on vectors `theta`, `acc`, `gamma` (all `stride` lanes) from the start
    /// `gamma` (whose first `K` lanes sum to `total`). `mask` is 1 in the first `K` lanes and 0
    /// in the padding; `alpha` holds `alpha` in the first `K` lanes and 1 in the padding, where
    /// `gamma` must start at 1 (and stays 1: `theta` is 0 there, and so is `exp(E[log beta])`).
    /// Leaves `gamma`, `theta`, `Z_w` and `c_w / Z_w` consistent. Returns the iterations.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fixed_point<S: Simd>(
        &self,
        simd: S,
        theta: &mut [S::f32s],
        acc: &mut [S::f32s],
        gamma: &mut [S::f32s],
        alpha: &[S::f32s],
        mask: &[S::f32s],
        total: f64,
        phinorm: &mut [f32],
        ratio: &mut [f32],
    ) -> usize {
        let k = self.num_topics;
        let words = self.doc.words();
        let counts = self.doc.counts();
        let zero = simd.splat_f32s(0.0);
        let mut total = total;
        let eeb = S::as_simd_f32s(self.eeb).0;
        let nv = theta.len();
        let mut iters = 0;
        loop {
            iters += 1;
            // One pass over the words: Z_w from the current theta~, then acc += (c_w / Z_w) beta~_w.
            acc.iter_mut().for_each(|a| *a = zero);
            theta_from_gamma(simd, gamma, mask, total, k, theta);
            let theta: &[S::f32s] = theta;
            for ((&w, &c), (z, r)) in words
                .iter()
                .zip(counts)
                .zip(phinorm.iter_mut().zip(ratio.iter_mut()))
            {
                let row = Self::row::<S>(eeb, w, nv);
                *z = dot_lanes(simd, theta, row) + 1e-30;
                *r = c as f32 / *z;
                let rv = simd.splat_f32s(*r);
                for (a, &b) in acc.iter_mut().zip(row) {
                    *a = simd.mul_add_e_f32s(rv, b, *a);
                }
            }
            let mut change = zero;
            let mut sum = zero;
            for ((((g, &t), &a), &al), &m) in gamma
                .iter_mut()
                .zip(theta)
                .zip(acc.iter())
                .zip(alpha)
                .zip(mask)
            {
                let new = simd.mul_add_e_f32s(t, a, al);
                change = simd.add_f32s(change, simd.abs_f32s(simd.sub_f32s(new, *g)));
                sum = simd.mul_add_e_f32s(new, m, sum);
                *g = new;
            }
            total = f64::from(simd.reduce_sum_f32s(sum));
            let change = f64::from(simd.reduce_sum_f32s(change));
            if change / (k as f64) < self.tol || iters >= self.max_iters {
                break;
            }
        }
        theta_from_gamma(simd, gamma, mask, total, k, theta);
        self.norms(simd, theta, phinorm, ratio);
        iters
    }
}

/// Runs the E-step with `N` vectors per topic row held in local arrays (registers).
#[inline(always)]
fn run_fixed<S: Simd, const N: usize>(simd: S, job: &Job<'_>, scratch: &mut DocScratch) -> usize {
    let zero = simd.splat_f32s(0.0);
    let mut theta = [zero; N];
    let mut acc = [zero; N];
    let mut gamma = [zero; N];
    let mut alpha = [zero; N];
    let mut mask = [zero; N];
    alpha.copy_from_slice(&S::as_simd_f32s(&scratch.alpha).0[..N]);
    mask.copy_from_slice(&S::as_simd_f32s(&scratch.mask).0[..N]);
    gamma.copy_from_slice(&S::as_simd_f32s(&scratch.gamma32).0[..N]);
    let iters = job.fixed_point(
        simd,
        &mut theta,
        &mut acc,
        &mut gamma,
        &alpha,
        &mask,
        job.start_total,
        &mut scratch.phinorm,
        &mut scratch.ratio,
    );
    S::as_mut_simd_f32s(&mut scratch.exp_elog_theta).0[..N].copy_from_slice(&theta);
    S::as_mut_simd_f32s(&mut scratch.gamma32).0[..N].copy_from_slice(&gamma);
    iters
}

/// Runs the E-step on the scratch buffers (any `K`).
#[inline(always)]
fn run_slices<S: Simd>(simd: S, job: &Job<'_>, scratch: &mut DocScratch) -> usize {
    let DocScratch {
        exp_elog_theta,
        ratio,
        phinorm,
        acc,
        gamma32,
        alpha,
        mask,
        ..
    } = scratch;
    job.fixed_point(
        simd,
        S::as_mut_simd_f32s(exp_elog_theta).0,
        S::as_mut_simd_f32s(acc).0,
        S::as_mut_simd_f32s(gamma32).0,
        S::as_simd_f32s(alpha).0,
        S::as_simd_f32s(mask).0,
        job.start_total,
        phinorm,
        ratio,
    )
}

/// One document's E-step as a `pulp` SIMD job.
struct Infer<'a> {
    job: Job<'a>,
    scratch: &'a mut DocScratch,
}

impl WithSimd for Infer<'_> {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> usize {
        let lanes = core::mem::size_of::<S::f32s>() / core::mem::size_of::<f32>();
        let Infer { job, scratch } = self;
        if job.stride % lanes != 0 {
            // Wider vectors than the row padding (not the case for AVX2's 8 lanes): scalar code.
            return run_slices(pulp::Scalar::new(), &job, scratch);
        }
        match job.stride / lanes {
            1 => run_fixed::<S, 1>(simd, &job, scratch),
            2 => run_fixed::<S, 2>(simd, &job, scratch),
            3 => run_fixed::<S, 3>(simd, &job, scratch),
            4 => run_fixed::<S, 4>(simd, &job, scratch),
            5 => run_fixed::<S, 5>(simd, &job, scratch),
            6 => run_fixed::<S, 6>(simd, &job, scratch),
            7 => run_fixed::<S, 7>(simd, &job, scratch),
            8 => run_fixed::<S, 8>(simd, &job, scratch),
            _ => run_slices(simd, &job, scratch),
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
    infer_document_on(expected, cfg, doc, scratch, false)
}

/// [`infer_document`] on the detected instruction set, or on plain scalar code when `scalar`
/// (the fallback for CPUs without AVX2; tests compare the two).
fn infer_document_on(
    expected: &ExpectedTopics,
    cfg: &LdaConfig,
    doc: &Document,
    scratch: &mut DocScratch,
    scalar: bool,
) -> usize {
    let k = expected.num_topics;
    let stride = expected.stride;
    let alpha = cfg.alpha();
    let n = doc.num_distinct();
    let start = alpha + doc.len() as f64 / k as f64;
    {
        let DocScratch {
            exp_elog_theta,
            ratio,
            phinorm,
            acc,
            gamma32,
            alpha: alpha_lanes,
            mask,
            ..
        } = &mut *scratch;
        for buf in [
            &mut *exp_elog_theta,
            &mut *acc,
            &mut *gamma32,
            &mut *alpha_lanes,
            &mut *mask,
        ] {
            buf.resize(stride, 0.0);
        }
        for (i, ((t, a), ((g, al), m))) in exp_elog_theta
            .iter_mut()
            .zip(acc.iter_mut())
            .zip(
                gamma32
                    .iter_mut()
                    .zip(alpha_lanes.iter_mut())
                    .zip(mask.iter_mut()),
            )
            .enumerate()
        {
            let real = i < k;
            *t = 0.0;
            *a = 0.0;
            *g = if real { start as f32 } else { 1.0 };
            *al = if real { alpha as f32 } else { 1.0 };
            *m = if real { 1.0 } else { 0.0 };
        }
        ratio.resize(n, 0.0);
        phinorm.resize(n, 0.0);
    }
    let job = Job {
        eeb: expected.exp_elog_beta(),
        stride,
        num_topics: k,
        tol: cfg.estep_tol(),
        max_iters: cfg.max_estep_iters(),
        start_total: f64::from(start as f32) * k as f64,
        doc,
    };
    let infer = Infer {
        job,
        scratch: &mut *scratch,
    };
    let iters = if scalar {
        infer.with_simd(pulp::Scalar::new())
    } else {
        Arch::new().dispatch(infer)
    };
    scratch.gamma.resize(k, 0.0);
    for (g, &g32) in scratch.gamma.iter_mut().zip(&scratch.gamma32) {
        *g = f64::from(g32);
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
    let eeb = expected.exp_elog_beta();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lda::Topics;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    /// The dispatched kernels (AVX2 + FMA here, with the register-held path for `K <= 64` and the
    /// slice path above) agree with the scalar fallback, and both with a plain `f64` reference
    /// of the same fixed point.
    #[test]
    fn dispatched_and_scalar_e_steps_agree_with_a_reference() {
        for &k in &[3usize, 8, 50, 70] {
            let v = 300;
            let topics =
                Topics::random_init(k, v, 1.0 / k as f64, &mut ChaCha8Rng::seed_from_u64(3));
            let expected = topics.expected();
            let cfg = LdaConfig::builder(k, v)
                .estep_tol(1e-4)
                .max_estep_iters(100)
                .build()
                .unwrap();
            let pairs: Vec<(u32, u32)> = (0..40).map(|i| (i * 7 % v as u32, 1 + i % 5)).collect();
            let doc = Document::new(pairs).unwrap();
            let mut a = DocScratch::new(k);
            let mut b = DocScratch::new(k);
            let iters = infer_document_on(&expected, &cfg, &doc, &mut a, false);
            let iters_scalar = infer_document_on(&expected, &cfg, &doc, &mut b, true);
            assert!(
                iters.abs_diff(iters_scalar) <= 2,
                "K={k}: {iters} vs {iters_scalar}"
            );
            // f64 reference: the same iteration from the same start, as many iterations.
            let eeb = expected.exp_elog_beta();
            let stride = expected.stride();
            let alpha = cfg.alpha();
            let mut gamma = vec![alpha + doc.len() as f64 / k as f64; k];
            for _ in 0..iters {
                let total: f64 = gamma.iter().sum();
                let dt = super::super::special_fns::digamma(total);
                let theta: Vec<f64> = gamma
                    .iter()
                    .map(|&g| (super::super::special_fns::digamma(g) - dt).exp())
                    .collect();
                let mut acc = vec![0.0; k];
                for (&w, &c) in doc.words().iter().zip(doc.counts()) {
                    let row = &eeb[w as usize * stride..w as usize * stride + k];
                    let z: f64 = theta.iter().zip(row).map(|(t, &b)| t * f64::from(b)).sum();
                    for (a, &b) in acc.iter_mut().zip(row) {
                        *a += f64::from(c) / z * f64::from(b);
                    }
                }
                for ((g, t), a) in gamma.iter_mut().zip(&theta).zip(&acc) {
                    *g = alpha + t * a;
                }
            }
            for (j, ((&ga, &gb), &g)) in a.gamma.iter().zip(&b.gamma).zip(&gamma).enumerate() {
                let tol = 1e-3 * g.max(1.0);
                assert!((ga - g).abs() < tol, "K={k} dispatched {j}: {ga} vs {g}");
                assert!((gb - g).abs() < tol, "K={k} scalar {j}: {gb} vs {g}");
            }
            let sum: f64 = a.gamma.iter().sum();
            assert!((sum - (k as f64 * alpha + doc.len() as f64)).abs() < 1e-3 * sum);
            assert!(
                a.exp_elog_theta[k..].iter().all(|&t| t == 0.0),
                "padding stays 0"
            );
            for (za, zb) in a.phinorm.iter().zip(&b.phinorm) {
                assert!(
                    (za - zb).abs() <= 1e-4 * za.abs(),
                    "K={k}: Z_w {za} vs {zb}"
                );
            }
        }
    }
}
