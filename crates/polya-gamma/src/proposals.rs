//! Proposal samplers: truncated normal tail, inverse Gaussian, and the truncated
//! inverse-Gaussian / gamma pieces of the Pólya-Gamma envelopes.
//!
//! Every loop here is a rejection loop whose acceptance probability is bounded below by a
//! constant stated next to it; each is additionally capped at [`MAX_TRIES`] iterations so a
//! broken RNG cannot hang the caller (with a working RNG the cap is reached with probability
//! below `0.8^10000`). On the cap the last candidate, a valid point of the support, is returned.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp1, StandardNormal};

/// Cap on iterations of any rejection loop.
pub(crate) const MAX_TRIES: u32 = 10_000;

/// Uniform on `[0, 1)`.
#[inline]
pub(crate) fn uniform<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    rng.random::<f64>()
}

/// Standard exponential.
#[inline]
pub(crate) fn exp1<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    Exp1.sample(rng)
}

/// Standard normal.
#[inline]
pub(crate) fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    StandardNormal.sample(rng)
}

/// Standard normal conditioned on `N >= a`, `a >= 0` (Robert 1995, exponential proposal with
/// rate `alpha = (a + sqrt(a^2 + 4)) / 2`; acceptance probability >= 0.76 for every `a >= 0`).
pub(crate) fn normal_tail<R: Rng + ?Sized>(rng: &mut R, a: f64, alpha: f64) -> f64 {
    if a >= 1.0 {
        // Marsaglia (1964): x ~ Exp(a), accept if 2 E > x^2; no exp() call, acceptance
        // a sqrt(2 pi) e^{a^2/2} Phi(-a) >= 0.65 for a >= 1.
        for _ in 0..MAX_TRIES {
            let x = exp1(rng) / a;
            if 2.0 * exp1(rng) > x * x {
                return a + x;
            }
        }
        return a;
    }
    let mut n = a;
    for _ in 0..MAX_TRIES {
        n = a + exp1(rng) / alpha;
        let d = n - alpha;
        if uniform(rng) <= (-0.5 * d * d).exp() {
            return n;
        }
    }
    n
}

/// Inverse Gaussian `IG(mu, lambda)` (Michael, Schucany & Haas 1976) in the cancellation-free
/// form `x = mu / (1 + r + sqrt(r (2 + r)))`, `r = mu y / (2 lambda)`, `y ~ chi^2_1`.
#[inline]
pub(crate) fn inverse_gaussian<R: Rng + ?Sized>(rng: &mut R, mu: f64, lambda: f64) -> f64 {
    let n = normal(rng);
    let r = mu * n * n / (2.0 * lambda);
    let x = mu / (1.0 + r + (r * (2.0 + r)).sqrt());
    if uniform(rng) * (mu + x) <= mu {
        x
    } else {
        mu / x * mu
    }
}

/// `u <= e^{-w}` for `w >= 0`, trying the squeeze `e^{-w} >= 1 - w` first (no `exp` when it
/// decides, which is most of the time for the small `w` of the thinning steps). Same verdict
/// as the plain test up to the last-ulp rounding of `exp`.
#[inline]
fn keep_with_exp_neg(u: f64, w: f64) -> bool {
    u <= 1.0 - w || u <= (-w).exp()
}

/// How the left piece `x^{-3/2} exp(-h^2/(2x) - z^2 x / 2)` on `(0, t]` is drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LeftMethod {
    /// `x = h^2 / N^2` with `N >= h / sqrt(t)`, accepted with probability `exp(-z^2 x / 2)`
    /// (acceptance >= `exp(-z^2 t / 2)`).
    Levy {
        /// `h / sqrt(t)`.
        a: f64,
        /// Robert's rate for `a`.
        alpha: f64,
    },
    /// `IG(h/z, h^2)` until `x <= t` (acceptance = the IG CDF at `t`).
    InverseGaussian {
        /// `h / z`.
        mu: f64,
    },
}

impl LeftMethod {
    /// Chooses the branch with the larger guaranteed acceptance probability:
    /// Lévy when `levy_wins`, i.e. `exp(-z^2 t / 2) >= IGcdf(t)`. Both are positive for every
    /// finite `z` (the IG CDF tends to 1 as `z` grows), so each loop has a positive acceptance
    /// bound.
    pub(crate) fn new(h: f64, z: f64, t: f64, levy_wins: bool) -> Self {
        if z == 0.0 || levy_wins {
            let a = h / t.sqrt();
            LeftMethod::Levy {
                a,
                alpha: 0.5 * (a + (a * a + 4.0).sqrt()),
            }
        } else {
            LeftMethod::InverseGaussian { mu: h / z }
        }
    }

    /// Draws from the left piece.
    #[inline]
    pub(crate) fn sample<R: Rng + ?Sized>(&self, rng: &mut R, h: f64, z: f64, t: f64) -> f64 {
        let mut x = t;
        match *self {
            LeftMethod::Levy { a, alpha } => {
                let half_z2 = 0.5 * z * z;
                for _ in 0..MAX_TRIES {
                    let n = normal_tail(rng, a, alpha);
                    x = (h / n) * (h / n);
                    if half_z2 == 0.0 || keep_with_exp_neg(uniform(rng), half_z2 * x) {
                        return x;
                    }
                }
                x.min(t)
            }
            LeftMethod::InverseGaussian { mu } => {
                let lambda = h * h;
                for _ in 0..MAX_TRIES {
                    x = inverse_gaussian(rng, mu, lambda);
                    if x <= t {
                        return x;
                    }
                }
                t
            }
        }
    }
}

impl LeftMethod {
    /// One proposal without an inner loop: `None` when the thinning (Lévy) or the truncation
    /// (IG) rejects, in which case the caller restarts its whole proposal.
    #[inline]
    pub(crate) fn sample_once<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        h: f64,
        z: f64,
        t: f64,
    ) -> Option<f64> {
        match *self {
            LeftMethod::Levy { a, alpha } => {
                let n = normal_tail(rng, a, alpha);
                let x = (h / n) * (h / n);
                if z == 0.0 || keep_with_exp_neg(uniform(rng), 0.5 * z * z * x) {
                    Some(x)
                } else {
                    None
                }
            }
            LeftMethod::InverseGaussian { mu } => {
                let x = inverse_gaussian(rng, mu, h * h);
                (x <= t).then_some(x)
            }
        }
    }
}

/// Draws `x > t` with density proportional to `x^{h-1} e^{-rate x}`, `1 <= h <= 4`.
///
/// `h = 1`: exactly `t + E / rate`. If `rate t <= h`: untruncated gamma until `x > t`
/// (acceptance `Q(h, rate t) >= Q(4, 4) > 0.43`). Otherwise an exponential proposal with rate
/// `rate - (h-1)/t`, accepted with `(x/t)^{h-1} e^{-(h-1)(x-t)/t} <= 1` (acceptance >= 0.55).
pub(crate) fn right_gamma<R: Rng + ?Sized>(
    rng: &mut R,
    gamma_h: &rand_distr::Gamma<f64>,
    h: f64,
    rate: f64,
    t: f64,
) -> f64 {
    if h == 1.0 {
        return t + exp1(rng) / rate;
    }
    let mut x = t;
    if rate * t <= h {
        for _ in 0..MAX_TRIES {
            x = gamma_h.sample(rng) / rate;
            if x > t {
                return x;
            }
        }
        return x.max(t);
    }
    let hm1 = h - 1.0;
    let prop_rate = rate - hm1 / t;
    for _ in 0..MAX_TRIES {
        let y = exp1(rng) / prop_rate;
        x = t + y;
        let ln_ratio = hm1 * (y / t).ln_1p() - hm1 * y / t;
        if uniform(rng) <= ln_ratio.exp() {
            return x;
        }
    }
    x
}
