//! Identities every exponential family with base measure 1 satisfies (crate-private).

use nalgebra::DVector;

/// `H = A(eta) - <eta, mu>`.
pub(crate) fn entropy(log_partition: f64, eta: &DVector<f64>, mu: &DVector<f64>) -> f64 {
    log_partition - eta.dot(mu)
}

/// `KL(p || q) = A(eta_q) - A(eta_p) - <eta_q - eta_p, mu_p>`, clamped at 0 against round-off.
pub(crate) fn kl(
    a_p: f64,
    a_q: f64,
    eta_p: &DVector<f64>,
    eta_q: &DVector<f64>,
    mu_p: &DVector<f64>,
) -> f64 {
    let mut lin = 0.0;
    for i in 0..eta_p.len() {
        lin += (eta_q[i] - eta_p[i]) * mu_p[i];
    }
    (a_q - a_p - lin).max(0.0)
}

/// Inverse digamma: the `x > 0` with `psi(x) = y` (Minka 2000, Appendix C: initialise, then Newton).
pub(crate) fn inv_digamma(y: f64) -> f64 {
    use crate::special_fn::digamma_pos;
    const EULER: f64 = 0.577_215_664_901_532_9;
    let mut x = if y >= -2.22 {
        y.exp() + 0.5
    } else {
        -1.0 / (y + EULER)
    };
    for _ in 0..50 {
        let f = digamma_pos(x) - y;
        let step = f / crate::special_fn::trigamma_pos(x);
        let mut next = x - step;
        if next <= 0.0 {
            next = x / 2.0;
        }
        let done = (next - x).abs() <= 1e-15 * x;
        x = next;
        if done {
            break;
        }
    }
    x
}
