//! The generalised inverse Gaussian `GIG(p, a, b)`.

use crate::bessel::{BesselKValues, bessel_k_values};
use crate::check;
use crate::error::{ExpFamError, Result};
use crate::families::generic;
use crate::traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};
use nalgebra::{DVector, Matrix3, Vector3};
use rand::Rng;
use rand::RngExt;
use rand_distr::Distribution;
use std::f64::consts::LN_2;

/// `GIG(p, a, b)`: density
/// `(a/b)^(p/2) / (2 K_p(sqrt(ab))) x^(p-1) exp(-(a x + b / x) / 2)` on `x > 0`, with `a, b > 0`.
///
/// In the sigmoid belief network's TPBN shrinkage prior the variational factor of each weight's
/// variance is `q(zeta_jk) = GIG(0, 2 <xi_jk>, <w_jk^2>)` (000 Appendix C, after Gan et al. 2015).
///
/// As an exponential family: `T(x) = (ln x, x, 1/x)`, `eta = (p - 1, -a/2, -b/2)`,
/// `A = ln 2 + ln K_p(w) + (p/2) ln(b/a)` with `w = sqrt(ab)`. With `s = sqrt(b/a)`, the moments
/// are Bessel ratios: `E[x] = s K_{p+1}(w)/K_p(w)`, `E[1/x] = K_{p-1}(w)/(s K_p(w))` and
/// `E[ln x] = ln s + d/dp ln K_p(w)` (computed by the crate-private Bessel quadrature, `bessel.rs`).
///
/// The limits `a -> 0` (inverse Gamma) and `b -> 0` (Gamma) are not members: use [`Gamma`](crate::Gamma).
///
/// # Example
/// ```
/// use expfam::Gig;
/// // GIG(1/2, a, b) has E[x] = s (1 + 1/w)
/// let g = Gig::new(0.5, 2.0, 8.0).unwrap(); // w = 4, s = 2
/// assert!((g.mean() - 2.0 * 1.25).abs() < 1e-14);
/// assert!(Gig::new(0.0, 0.0, 1.0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gig {
    p: f64,
    a: f64,
    b: f64,
    w: f64,
    ln_s: f64,
    k: BesselKValues,
}

impl Gig {
    /// `GIG(p, a, b)` with `p` finite and `a, b` finite and `> 0`.
    ///
    /// # Errors
    /// [`ExpFamError::NonFinite`] / [`ExpFamError::OutOfDomain`].
    pub fn new(p: f64, a: f64, b: f64) -> Result<Self> {
        check::finite("p", p)?;
        check::positive("a", a)?;
        check::positive("b", b)?;
        let w = check::positive("sqrt(ab)", a.sqrt() * b.sqrt())?;
        let k = bessel_k_values(p, w)?;
        Ok(Self {
            p,
            a,
            b,
            w,
            ln_s: 0.5 * (b.ln() - a.ln()),
            k,
        })
    }

    /// The order `p`.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// The parameter `a` (coefficient of `x`).
    pub fn a(&self) -> f64 {
        self.a
    }

    /// The parameter `b` (coefficient of `1/x`).
    pub fn b(&self) -> f64 {
        self.b
    }

    /// `E[x] = sqrt(b/a) K_{p+1}(w) / K_p(w)`.
    pub fn mean(&self) -> f64 {
        self.ln_s.exp() * self.k.ratio_up
    }

    /// `E[1/x] = sqrt(a/b) K_{p-1}(w) / K_p(w)`.
    pub fn expected_inverse(&self) -> f64 {
        (-self.ln_s).exp() * self.k.ratio_down
    }

    /// `E[ln x] = ln sqrt(b/a) + d/dp ln K_p(w)`.
    pub fn expected_log(&self) -> f64 {
        self.ln_s + self.k.d_ln_dnu
    }

    /// `Var[x] = (b/a) (K_{p+2}/K_p - (K_{p+1}/K_p)^2)`, using
    /// `K_{p+2} = K_p + 2 (p+1) K_{p+1} / w`.
    pub fn variance(&self) -> f64 {
        let r = self.k.ratio_up;
        let s2 = (2.0 * self.ln_s).exp();
        (s2 * (1.0 + 2.0 * (self.p + 1.0) * r / self.w - r * r)).max(0.0)
    }

    /// A sampler with its bounds precomputed (use for many draws).
    pub fn sampler(&self) -> GigSampler {
        GigSampler::new(self.p, self.w, self.ln_s)
    }
}

impl ExponentialFamily for Gig {
    type Natural = DVector<f64>;
    type Mean = DVector<f64>;

    /// `(p - 1, -a/2, -b/2)`.
    fn natural(&self) -> DVector<f64> {
        DVector::from_vec(vec![self.p - 1.0, -0.5 * self.a, -0.5 * self.b])
    }

    fn from_natural(eta: &DVector<f64>) -> Result<Self> {
        check::same_len("GIG natural parameters", 3, eta.len())?;
        check::all_finite("eta", eta.as_slice())?;
        Self::new(eta[0] + 1.0, -2.0 * eta[1], -2.0 * eta[2])
    }

    /// `ln 2 + ln K_p(w) + p ln sqrt(b/a)`.
    fn log_partition(&self) -> f64 {
        LN_2 + self.k.ln_k(self.w) + self.p * self.ln_s
    }

    /// `(E[ln x], E[x], E[1/x])`.
    fn mean_parameters(&self) -> DVector<f64> {
        DVector::from_vec(vec![
            self.expected_log(),
            self.mean(),
            self.expected_inverse(),
        ])
    }

    /// Minimises the convex function `F(eta) = A(eta) - <eta, mu>` (whose gradient is
    /// `E_eta[T] - mu`) by Newton's method with backtracking, the Hessian `Cov[T]` formed by central
    /// differences of the analytic mean map. Requires `E[ln x] < ln E[x]` and
    /// `-E[ln x] < ln E[1/x]` (Jensen). Round trips reach about `1e-12` where the inverse is well
    /// conditioned; when `sqrt(ab)` is small and `|p|` large the mean parameters barely depend on one
    /// of `a, b` and the recovered value is correspondingly less precise.
    fn from_mean_parameters(mu: &DVector<f64>) -> Result<Self> {
        check::same_len("GIG mean parameters", 3, mu.len())?;
        check::all_finite("mu", mu.as_slice())?;
        let m1 = check::positive("E[x]", mu[1])?;
        let m2 = check::positive("E[1/x]", mu[2])?;
        let (l1, l2) = (m1.ln(), m2.ln());
        if !(mu[0] < l1 && -mu[0] < l2) {
            return Err(ExpFamError::OutOfDomain {
                name: "E[ln x]",
                value: mu[0],
                requirement: "in (-ln E[1/x], ln E[x]) (Jensen)",
            });
        }
        solve_gig_mean(mu[0], m1, m2)
    }
}

/// Newton on the convex dual objective; see [`Gig::from_mean_parameters`].
fn solve_gig_mean(m_log: f64, m1: f64, m2: f64) -> Result<Gig> {
    let target = Vector3::new(m_log, m1, m2);
    let scale = Vector3::new(1.0 + m_log.abs(), m1, m2);
    let member = |eta: &Vector3<f64>| -> Option<Gig> {
        if !(eta[1] < 0.0 && eta[2] < 0.0) {
            return None;
        }
        Gig::new(eta[0] + 1.0, -2.0 * eta[1], -2.0 * eta[2]).ok()
    };
    let mean_of = |g: &Gig| Vector3::new(g.expected_log(), g.mean(), g.expected_inverse());
    let objective = |g: &Gig, eta: &Vector3<f64>| g.log_partition() - eta.dot(&target);
    let scaled = |r: &Vector3<f64>| r.component_div(&scale).amax();
    // Start: for large w, E[x] E[1/x] ~ 1 + 1/w and E[ln x] - ln s ~ p / w.
    let ln_s0 = 0.5 * (m1.ln() - m2.ln());
    let gap = (m1.ln() + m2.ln()).exp_m1().max(1e-12);
    let w0 = (1.0 / gap).clamp(1e-3, 1e8);
    let p0 = ((m_log - ln_s0) * w0).clamp(-20.0, 20.0);
    let mut eta = Vector3::new(
        p0 - 1.0,
        -0.5 * w0 * (-ln_s0).exp(),
        -0.5 * w0 * ln_s0.exp(),
    );
    let no_start = ExpFamError::NoConvergence {
        what: "GIG mean -> natural (start)",
        iterations: 0,
        residual: f64::INFINITY,
    };
    let mut g = member(&eta).ok_or(no_start)?;
    let mut grad = mean_of(&g) - target;
    let mut f = objective(&g, &eta);
    let mut it = 0;
    while it < 300 && scaled(&grad) > 1e-15 {
        it += 1;
        let mut hess = Matrix3::zeros();
        for j in 0..3 {
            let h = 1e-5 * eta[j].abs().max(1e-3);
            let (mut hi, mut lo) = (eta, eta);
            hi[j] += h;
            lo[j] -= h;
            match (member(&hi), member(&lo)) {
                (Some(a), Some(b)) => {
                    hess.set_column(j, &((mean_of(&a) - mean_of(&b)) / (2.0 * h)))
                }
                _ => break,
            }
        }
        let hess = (hess + hess.transpose()) * 0.5;
        let delta = match hess.cholesky() {
            Some(c) => c.solve(&grad),
            None => match hess.lu().solve(&grad) {
                Some(d) => d,
                None => break,
            },
        };
        if !delta.iter().all(|v| v.is_finite()) {
            break;
        }
        let decrement = grad.dot(&delta);
        let mut t = 1.0;
        let mut accepted = false;
        while t > 1e-12 {
            let trial = eta - delta * t;
            if let Some(gt) = member(&trial) {
                let ft = objective(&gt, &trial);
                let grad_t = mean_of(&gt) - target;
                let armijo = ft <= f - 1e-4 * t * decrement;
                // Near the optimum F is flat to rounding: accept a smaller gradient instead.
                if armijo || scaled(&grad_t) < scaled(&grad) {
                    eta = trial;
                    g = gt;
                    grad = grad_t;
                    f = ft;
                    accepted = true;
                    break;
                }
            }
            t *= 0.5;
        }
        if !accepted {
            break;
        }
    }
    let residual = scaled(&grad);
    if residual > 1e-12 {
        return Err(ExpFamError::NoConvergence {
            what: "GIG mean -> natural",
            iterations: it,
            residual,
        });
    }
    Ok(g)
}

impl SufficientStatistics for Gig {
    type Sample = f64;
    fn sufficient_statistics(x: &f64) -> DVector<f64> {
        DVector::from_vec(vec![x.ln(), *x, 1.0 / x])
    }
}

impl Entropy for Gig {
    fn entropy(&self) -> f64 {
        generic::entropy(
            self.log_partition(),
            &self.natural(),
            &self.mean_parameters(),
        )
    }
}

impl KlDivergence for Gig {
    fn kl_divergence(&self, other: &Self) -> Result<f64> {
        Ok(generic::kl(
            self.log_partition(),
            other.log_partition(),
            &self.natural(),
            &other.natural(),
            &self.mean_parameters(),
        ))
    }
}

/// Exact GIG sampler: ratio-of-uniforms with mode shift on `y = ln(x / sqrt(b/a))`, whose density
/// `exp(p y - w cosh y)` is log-concave for every `p` and `w > 0`, so the minimal bounding
/// rectangle of the ratio-of-uniforms region gives an acceptance rate bounded away from zero
/// uniformly in the parameters (Leydold 2000, "Automatic sampling with the ratio-of-uniforms
/// method", ACM TOMS 26; the same idea as Dagpunar 1989 and Hoermann & Leydold 2014 for GIG).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GigSampler {
    p: f64,
    w: f64,
    ln_s: f64,
    mode: f64,
    v_lo: f64,
    v_hi: f64,
}

impl GigSampler {
    fn new(p: f64, w: f64, ln_s: f64) -> Self {
        let mode = (p / w).asinh();
        let mut s = Self {
            p,
            w,
            ln_s,
            mode,
            v_lo: 0.0,
            v_hi: 0.0,
        };
        s.v_hi = s.v_bound(1.0);
        s.v_lo = -s.v_bound(-1.0);
        s
    }

    /// `ln f(mode + z) - ln f(mode)`, formed without cancellation.
    fn log_ratio(&self, z: f64) -> f64 {
        let y = self.mode + z;
        self.p * z - self.w * 2.0 * (0.5 * (y + self.mode)).sinh() * (0.5 * z).sinh()
    }

    /// `max_{z dir > 0} |z| exp(log_ratio(z) / 2)` by bisection on the stationarity condition.
    fn v_bound(&self, dir: f64) -> f64 {
        // d/dz [ln|z| + log_ratio(z)/2] = 1/z + (p - w sinh(mode + z)) / 2.
        let d = |z: f64| 1.0 / z + 0.5 * (self.p - self.w * (self.mode + z).sinh());
        let mut hi = dir;
        for _ in 0..2000 {
            if d(hi) * dir < 0.0 {
                break;
            }
            hi *= 2.0;
        }
        let mut lo = 0.0_f64;
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid == lo || mid == hi {
                break;
            }
            if d(mid) * dir > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let z = 0.5 * (lo + hi);
        // Inflate by a hair so rounding never cuts the region.
        z.abs() * (0.5 * self.log_ratio(z)).exp() * (1.0 + 1e-12)
    }
}

impl Distribution<f64> for GigSampler {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        loop {
            let u: f64 = rng.random::<f64>();
            if u == 0.0 {
                continue;
            }
            let v = self.v_lo + (self.v_hi - self.v_lo) * rng.random::<f64>();
            let z = v / u;
            if 2.0 * u.ln() <= self.log_ratio(z) {
                return (self.ln_s + self.mode + z).exp();
            }
        }
    }
}

impl Distribution<f64> for Gig {
    /// Builds a [`GigSampler`] per call; for many draws use [`Gig::sampler`].
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.sampler().sample(rng)
    }
}
