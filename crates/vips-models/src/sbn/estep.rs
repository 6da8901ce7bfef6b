//! The per-record E-step: `q(xi0_n)` Pólya-Gamma (000 Eq. 53) and `q(z_n)` Bernoulli by
//! coordinate updates (000 Eq. 55-56).

use super::params::SbnNatural;
use crate::blr::expected_xi as pg1_mean;
use expfam::sigmoid;

/// The local posterior of one record: `p_k = q(z_nk = 1)` and `xi_j = <xi0_nj>`.
#[derive(Clone, Debug, Default)]
pub struct LocalPosterior {
    /// Bernoulli means of the hidden units (length `K`).
    pub p: Vec<f64>,
    /// Pólya-Gamma means of the visible units (length `J`).
    pub xi: Vec<f64>,
    /// Scratch: `<psi_nj> = <w_j>^T p + <c_j>` (length `J`).
    pub(crate) psi_mean: Vec<f64>,
}

impl LocalPosterior {
    /// `<psi_nj^2>` under the E-step's factorisation (independent `w_jk`, independent `z_nk`):
    /// `<psi>^2 + sum_k (<w_jk^2> p_k - <w_jk>^2 p_k^2) + var(c_j)`.
    fn psi_second_moment(nat: &SbnNatural, p: &[f64], psi_mean: f64, j: usize) -> f64 {
        let k_dim = nat.hidden;
        let row = &nat.mu_w[j * k_dim..(j + 1) * k_dim];
        let w2 = &nat.w2[j * k_dim..(j + 1) * k_dim];
        let mut var = nat.c2[j] - nat.mu_c[j] * nat.mu_c[j];
        for k in 0..k_dim {
            var += w2[k] * p[k] - row[k] * row[k] * p[k] * p[k];
        }
        psi_mean * psi_mean + var.max(0.0)
    }

    fn update_psi_mean(&mut self, nat: &SbnNatural) {
        let k_dim = nat.hidden;
        for j in 0..nat.visible {
            let row = &nat.mu_w[j * k_dim..(j + 1) * k_dim];
            self.psi_mean[j] =
                nat.mu_c[j] + row.iter().zip(&self.p).map(|(w, p)| w * p).sum::<f64>();
        }
    }

    fn update_xi(&mut self, nat: &SbnNatural) {
        for j in 0..nat.visible {
            let m2 = Self::psi_second_moment(nat, &self.p, self.psi_mean[j], j);
            self.xi[j] = pg1_mean(m2.sqrt());
        }
    }

    /// Runs the E-step for the binary image `y` (`J` entries in `{0, 1}`): `p` starts at the
    /// prior `sigma(<b>)`, then `sweeps` times: `q(xi0_n)` given `q(z_n)` (Eq. 53), then each
    /// `q(z_nk)` in turn given the rest (Eq. 55-56); a final `q(xi0_n)` update.
    ///
    /// The E-step uses the posterior means and variances of `W` (its within-row posterior
    /// covariances are left out of `<psi^{\k} w_jk>` and `<psi^2>`), so a sweep costs `O(JK)`
    /// instead of `O(JK^2)`; the M-step keeps the full covariance of each `w_j`.
    pub fn fit(&mut self, nat: &SbnNatural, y: &[u8], sweeps: usize) {
        let (j_dim, k_dim) = (nat.visible, nat.hidden);
        self.p.clear();
        self.p.extend(nat.mu_b.iter().map(|&b| sigmoid(b)));
        self.xi.clear();
        self.xi.resize(j_dim, 0.25);
        self.psi_mean.clear();
        self.psi_mean.resize(j_dim, 0.0);
        self.update_psi_mean(nat);
        for _ in 0..sweeps {
            self.update_xi(nat);
            for k in 0..k_dim {
                let col = &nat.mu_wt[k * j_dim..(k + 1) * j_dim];
                let w2 = &nat.w2t[k * j_dim..(k + 1) * j_dim];
                let pk = self.p[k];
                let mut d = nat.mu_b[k];
                for j in 0..j_dim {
                    let w = col[j];
                    let rest = self.psi_mean[j] - w * pk;
                    d += (f64::from(y[j]) - 0.5) * w - self.xi[j] * (w * rest + 0.5 * w2[j]);
                }
                let new = sigmoid(d);
                let delta = new - pk;
                if delta != 0.0 {
                    for j in 0..j_dim {
                        self.psi_mean[j] += col[j] * delta;
                    }
                }
                self.p[k] = new;
            }
        }
        self.update_xi(nat);
    }

    /// The Jaakkola-Jordan / Pólya-Gamma lower bound on `log p(y_n)` for this local posterior,
    /// with the exact `<psi_nj^2>` under the full posterior covariances `cov[j]` of `w_j`
    /// (000 Eq. 50-51 with `q(xi0)` at its optimum): a valid bound for any local posterior.
    pub(crate) fn lower_bound(&self, nat: &SbnNatural, y: &[u8]) -> f64 {
        let (j_dim, k_dim) = (nat.visible, nat.hidden);
        let mut total = 0.0;
        let mut diag_z = vec![0.0; k_dim];
        for j in 0..j_dim {
            let row = &nat.mu_w[j * k_dim..(j + 1) * k_dim];
            let cov = &nat.cov[j];
            // E[(w^T z)^2] = p^T E[ww^T] p + sum_k E[w_k^2] p_k (1 - p_k).
            let mut quad = 0.0;
            for a in 0..k_dim {
                diag_z[a] = self.p[a] * (1.0 - self.p[a]);
                let mut s = 0.0;
                for bb in 0..k_dim {
                    s += cov[(a, bb)] * self.p[bb];
                }
                quad += self.p[a] * s;
            }
            let mean_wz: f64 = row.iter().zip(&self.p).map(|(w, p)| w * p).sum();
            let mut m2 = quad + mean_wz * mean_wz;
            for a in 0..k_dim {
                m2 += (cov[(a, a)] + row[a] * row[a]) * diag_z[a];
            }
            let mean = mean_wz + nat.mu_c[j];
            m2 += 2.0 * mean_wz * nat.mu_c[j] + nat.c2[j];
            total += jj_bound(f64::from(y[j]), mean, m2);
        }
        for k in 0..k_dim {
            total += jj_bound(self.p[k], nat.mu_b[k], nat.b2[k]);
            let p = self.p[k].clamp(1e-300, 1.0);
            let q = (1.0 - self.p[k]).clamp(1e-300, 1.0);
            total -= self.p[k] * p.ln() + (1.0 - self.p[k]) * q.ln();
        }
        total
    }
}

/// `E[(t - 1/2) psi] - log(2 cosh(omega/2))` at `omega = sqrt(E[psi^2])`, a lower bound on
/// `E[log sigma(psi)^t (1 - sigma(psi))^(1-t)]`.
fn jj_bound(t: f64, mean: f64, second: f64) -> f64 {
    let omega = second.max(0.0).sqrt();
    (t - 0.5) * mean - log_2cosh_half(omega)
}

/// `log(2 cosh(x/2))`, stable for large `x` (expfam's one log-cosh).
fn log_2cosh_half(x: f64) -> f64 {
    expfam::ln_2cosh(x / 2.0)
}
