//! Moments of a rectified Gaussian and their derivatives (Hernández-Lobato & Adams 2015, Sec. 3.1,
//! Eq. 7 and the derivatives used by the backward pass).
//!
//! For `a ~ N(m, v)`, `b = max(0, a)`, `s = sqrt(v)`, `alpha = m / s`:
//! `E[b] = Phi(alpha) (m + s gamma)`, `gamma = phi(alpha) / Phi(alpha)`,
//! `Var[b] = E[b] (m + s gamma) Phi(-alpha) + Phi(alpha) v (1 - gamma (gamma + alpha))`.
//! Derivatives (from `E[b] = m Phi + s phi`, `E[b^2] = (m^2 + v) Phi + m s phi`):
//! `dE[b]/dm = Phi`, `dE[b]/dv = phi / (2 s)`, `dE[b^2]/dm = 2 E[b]`, `dE[b^2]/dv = Phi`.

const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;

/// Standard normal CDF, accurate in both tails: the workspace's one implementation,
/// [`dp_accountant::normal::normal_cdf`].
pub(crate) use dp_accountant::normal::normal_cdf as norm_cdf;

/// Standard normal density.
pub(crate) fn norm_pdf(x: f64) -> f64 {
    INV_SQRT_2PI * (-0.5 * x * x).exp()
}

/// Moments of `max(0, a)`, `a ~ N(m, v)`, with what the backward pass needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Relu {
    pub mean: f64,
    pub var: f64,
    cdf: f64,
    pdf_over_2s: f64,
}

impl Relu {
    pub(crate) fn new(m: f64, v: f64) -> Self {
        let v = v.max(1e-300);
        let s = v.sqrt();
        let alpha = m / s;
        let cdf = norm_cdf(alpha);
        let pdf = norm_pdf(alpha);
        // gamma = phi / Phi; its asymptotic form for very negative alpha (Mills ratio).
        let gamma = if alpha < -30.0 {
            -alpha - 1.0 / alpha + 2.0 / (alpha * alpha * alpha)
        } else {
            pdf / cdf
        };
        let vp = m + s * gamma;
        let mean = cdf * vp;
        let var =
            (mean * vp * norm_cdf(-alpha) + cdf * v * (1.0 - gamma * (gamma + alpha))).max(0.0);
        Self {
            mean,
            var,
            cdf,
            pdf_over_2s: pdf / (2.0 * s),
        }
    }

    /// Chain rule: gradients w.r.t. the input mean and variance from those w.r.t. the output's.
    pub(crate) fn backward(&self, g_mean: f64, g_var: f64) -> (f64, f64) {
        let g_first = g_mean - 2.0 * self.mean * g_var;
        (
            g_first * self.cdf + 2.0 * self.mean * g_var,
            g_first * self.pdf_over_2s + g_var * self.cdf,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_match_numerical_integration() {
        for &(m, v) in &[(0.3, 2.0), (-1.5, 0.4), (4.0, 0.01), (-6.0, 1.0)] {
            let r = Relu::new(m, v);
            let s: f64 = f64::sqrt(v);
            let (mut e1, mut e2) = (0.0, 0.0);
            let h = 1e-4;
            let mut a = 0.0;
            while a < m + 12.0 * s {
                let w = (-(a - m) * (a - m) / (2.0 * v)).exp()
                    / (2.0 * std::f64::consts::PI * v).sqrt()
                    * h;
                e1 += a * w;
                e2 += a * a * w;
                a += h;
            }
            assert!(
                (r.mean - e1).abs() < 1e-4 * (1.0 + e1),
                "{m} {v}: {} {e1}",
                r.mean
            );
            assert!(
                (r.var - (e2 - e1 * e1)).abs() < 1e-4 * (1.0 + e2),
                "{m} {v}"
            );
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        for &(m, v) in &[(0.3, 2.0), (-1.5, 0.4), (2.0, 0.3)] {
            let (gm, gv) = (0.7, -1.3);
            let f = |m: f64, v: f64| {
                let r = Relu::new(m, v);
                gm * r.mean + gv * r.var
            };
            let (dm, dv) = Relu::new(m, v).backward(gm, gv);
            let h = 1e-6;
            let fdm = (f(m + h, v) - f(m - h, v)) / (2.0 * h);
            let fdv = (f(m, v + h) - f(m, v - h)) / (2.0 * h);
            assert!((dm - fdm).abs() < 1e-6, "{dm} {fdm}");
            assert!((dv - fdv).abs() < 1e-6, "{dv} {fdv}");
        }
    }
}
