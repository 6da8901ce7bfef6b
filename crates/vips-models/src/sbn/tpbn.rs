//! The three-parameter-beta-normal shrinkage prior on `W` and its variational updates
//! (000 Appendix C; Gan et al. 2015, Armagan et al. 2011).
//!
//! `W_jk ~ N(0, zeta_jk)`, `zeta_jk ~ Gam(1/2, xi_jk)`, `xi_jk ~ Gam(1/2, phi_k)`,
//! `phi_k ~ Gam(1/2, omega)`, `omega ~ Gam(1/2, 1)` (shape, rate). Mean-field updates:
//! `q(zeta_jk) = GIG(0, 2<xi_jk>, <W_jk^2>)`, `q(xi_jk) = Gam(1, <zeta_jk> + <phi_k>)` (the
//! paper omits `<phi_k>` in the rate; it belongs there by conjugacy),
//! `q(phi_k) = Gam(J/2 + 1/2, <omega> + sum_j <xi_jk>)`, `q(omega) = Gam(K/2 + 1/2, 1 + sum_k <phi_k>)`.

use expfam::Gig;
use serde::Serialize;

/// The TPBN hyper-posterior moments.
#[derive(Clone, Debug, Serialize)]
pub struct Tpbn {
    /// `<1/zeta_jk>`, the prior precision of `W_jk` (row-major `j * K + k`).
    pub zeta_inv: Vec<f64>,
    /// `<xi_jk>` (row-major).
    pub xi: Vec<f64>,
    /// `<phi_k>`.
    pub phi: Vec<f64>,
    /// `<omega>`.
    pub omega: f64,
    hidden: usize,
}

impl Tpbn {
    /// Data-independent initial moments: `<1/zeta> = 1`, `<xi> = <phi> = <omega> = 1`.
    pub fn new(visible: usize, hidden: usize) -> Self {
        Self {
            zeta_inv: vec![1.0; visible * hidden],
            xi: vec![1.0; visible * hidden],
            phi: vec![1.0; hidden],
            omega: 1.0,
            hidden,
        }
    }

    /// One round of the coordinate updates given `<W_jk^2>` (row-major).
    pub fn update(&mut self, w2: &[f64]) {
        let k_dim = self.hidden;
        if k_dim == 0 || w2.len() != self.xi.len() {
            return;
        }
        let j_dim = w2.len() / k_dim;
        for (i, &second) in w2.iter().enumerate() {
            let k = i % k_dim;
            let a = (2.0 * self.xi[i]).clamp(1e-12, 1e12);
            let b = second.clamp(1e-12, 1e12);
            let (zeta_mean, zeta_inv) = match Gig::new(0.0, a, b) {
                Ok(g) => (g.mean(), g.expected_inverse()),
                Err(_) => (b.sqrt() / a.sqrt(), a.sqrt() / b.sqrt()),
            };
            if zeta_inv.is_finite() && zeta_mean.is_finite() {
                self.zeta_inv[i] = zeta_inv.clamp(1e-8, 1e8);
                self.xi[i] = 1.0 / (zeta_mean + self.phi[k]).max(1e-12);
            }
        }
        for k in 0..k_dim {
            let sum_xi: f64 = (0..j_dim).map(|j| self.xi[j * k_dim + k]).sum();
            self.phi[k] = (j_dim as f64 / 2.0 + 0.5) / (self.omega + sum_xi);
        }
        self.omega = (k_dim as f64 / 2.0 + 0.5) / (1.0 + self.phi.iter().sum::<f64>());
    }
}
