//! The PBP network: moments propagated forward through linear and ReLU layers, and exact
//! derivatives of the resulting `log Z` propagated backward (Hernández-Lobato & Adams 2015,
//! Sec. 3.1-3.2).
//!
//! Layer `l` has weights `W_l` of shape `n_out x (n_in + 1)` (the last column multiplies a constant
//! 1, the bias) with independent Gaussian posteriors `N(M_ij, V_ij)`. With input moments `(mz, vz)`
//! (`vz = 0` for the data, and the bias has moments `(1, 0)`), and `s = n_in + 1`:
//! `ma_i = sum_j M_ij mz_j / sqrt(s)`,
//! `va_i = sum_j [V_ij (mz_j^2 + vz_j) + M_ij^2 vz_j] / s`,
//! followed by the rectified-Gaussian moments on hidden layers (see `relu`). The output layer is
//! linear.

use super::relu::Relu;

/// Layer sizes `[d, hidden_1, ..., 1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Architecture {
    sizes: Vec<usize>,
    offsets: Vec<usize>,
    n_weights: usize,
}

impl Architecture {
    /// `d` inputs, the given hidden layers, one output.
    pub fn new(d: usize, hidden: &[usize]) -> Self {
        let mut sizes = vec![d];
        sizes.extend_from_slice(hidden);
        sizes.push(1);
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut total = 0;
        for w in sizes.windows(2) {
            offsets.push(total);
            total += w[1] * (w[0] + 1);
        }
        Self {
            sizes,
            offsets,
            n_weights: total,
        }
    }

    /// Total number of weights (biases included).
    pub fn n_weights(&self) -> usize {
        self.n_weights
    }

    /// Number of inputs.
    pub fn input_dim(&self) -> usize {
        self.sizes[0]
    }

    /// Layer sizes `[d, hidden..., 1]`.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    fn n_layers(&self) -> usize {
        self.sizes.len() - 1
    }
}

/// Intermediate moments of one forward pass, kept for the backward pass.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tape {
    /// Input moments of each layer (bias included as the last entry).
    mz: Vec<Vec<f64>>,
    vz: Vec<Vec<f64>>,
    /// ReLU moments of each hidden layer.
    relu: Vec<Vec<Relu>>,
}

/// Forward pass: mean and variance of the network output for input `x` under the factorised
/// Gaussian weights `(m, v)`.
pub(crate) fn forward(
    arch: &Architecture,
    m: &[f64],
    v: &[f64],
    x: &[f64],
    tape: &mut Tape,
) -> (f64, f64) {
    let nl = arch.n_layers();
    tape.mz.resize(nl, Vec::new());
    tape.vz.resize(nl, Vec::new());
    tape.relu.resize(nl.saturating_sub(1), Vec::new());
    tape.mz[0].clear();
    tape.mz[0].extend_from_slice(x);
    tape.mz[0].push(1.0);
    tape.vz[0].clear();
    tape.vz[0].resize(x.len() + 1, 0.0);
    let mut out = (0.0, 0.0);
    for l in 0..nl {
        let (n_in, n_out) = (arch.sizes[l] + 1, arch.sizes[l + 1]);
        let off = arch.offsets[l];
        let scale = 1.0 / (n_in as f64).sqrt();
        let inv_s = 1.0 / n_in as f64;
        let mut ma = vec![0.0; n_out];
        let mut va = vec![0.0; n_out];
        {
            let (mz, vz) = (&tape.mz[l], &tape.vz[l]);
            for i in 0..n_out {
                let row_m = &m[off + i * n_in..off + (i + 1) * n_in];
                let row_v = &v[off + i * n_in..off + (i + 1) * n_in];
                let (mut sm, mut sv) = (0.0, 0.0);
                for j in 0..n_in {
                    sm += row_m[j] * mz[j];
                    sv += row_v[j] * (mz[j] * mz[j] + vz[j]) + row_m[j] * row_m[j] * vz[j];
                }
                ma[i] = sm * scale;
                va[i] = sv * inv_s;
            }
        }
        if l + 1 < nl {
            let relu: Vec<Relu> = ma.iter().zip(&va).map(|(&a, &b)| Relu::new(a, b)).collect();
            let next_m = &mut tape.mz[l + 1];
            next_m.clear();
            next_m.extend(relu.iter().map(|r| r.mean));
            // The bias unit: mean 1, variance 0.
            next_m.push(1.0);
            let next_v = &mut tape.vz[l + 1];
            next_v.clear();
            next_v.extend(relu.iter().map(|r| r.var).chain([0.0]));
            tape.relu[l] = relu;
        } else {
            out = (ma[0], va[0]);
        }
    }
    out
}

/// Backward pass: given `dlogZ/d m_out` and `dlogZ/d v_out`, writes `dlogZ/dM` into `gm` and
/// `dlogZ/dV` into `gv` (exact derivatives of the forward moment computation).
#[allow(clippy::too_many_arguments)]
pub(crate) fn backward(
    arch: &Architecture,
    m: &[f64],
    v: &[f64],
    tape: &Tape,
    g_out_m: f64,
    g_out_v: f64,
    gm: &mut [f64],
    gv: &mut [f64],
) {
    let nl = arch.n_layers();
    let mut g_ma = vec![g_out_m];
    let mut g_va = vec![g_out_v];
    for l in (0..nl).rev() {
        let (n_in, n_out) = (arch.sizes[l] + 1, arch.sizes[l + 1]);
        let off = arch.offsets[l];
        let scale = 1.0 / (n_in as f64).sqrt();
        let inv_s = 1.0 / n_in as f64;
        let (mz, vz) = (&tape.mz[l], &tape.vz[l]);
        let mut g_mz = vec![0.0; n_in];
        let mut g_vz = vec![0.0; n_in];
        for i in 0..n_out {
            let (a, b) = (g_ma[i] * scale, g_va[i] * inv_s);
            let base = off + i * n_in;
            for j in 0..n_in {
                let (mij, vij) = (m[base + j], v[base + j]);
                gm[base + j] = a * mz[j] + 2.0 * b * mij * vz[j];
                gv[base + j] = b * (mz[j] * mz[j] + vz[j]);
                if l > 0 {
                    g_mz[j] += a * mij + 2.0 * b * vij * mz[j];
                    g_vz[j] += b * (vij + mij * mij);
                }
            }
        }
        if l > 0 {
            let relu = &tape.relu[l - 1];
            let k = relu.len();
            g_ma = vec![0.0; k];
            g_va = vec![0.0; k];
            for u in 0..k {
                let (a, b) = relu[u].backward(g_mz[u], g_vz[u]);
                g_ma[u] = a;
                g_va[u] = b;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_z(arch: &Architecture, m: &[f64], v: &[f64], x: &[f64], y: f64, noise: f64) -> f64 {
        let (mo, vo) = forward(arch, m, v, x, &mut Tape::default());
        let var = vo + noise;
        -0.5 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * (y - mo) * (y - mo) / var
    }

    #[test]
    fn gradients_of_log_z_match_finite_differences() {
        let arch = Architecture::new(3, &[4]);
        let w = arch.n_weights();
        let m: Vec<f64> = (0..w).map(|i| ((i * 37 % 11) as f64 - 5.0) / 5.0).collect();
        let v: Vec<f64> = (0..w).map(|i| 0.05 + (i % 7) as f64 * 0.03).collect();
        let (x, y, noise) = ([0.4, -1.2, 0.8], 0.7, 0.3);
        let mut tape = Tape::default();
        let (mo, vo) = forward(&arch, &m, &v, &x, &mut tape);
        let var = vo + noise;
        let gmo = (y - mo) / var;
        let gvo = -0.5 / var + 0.5 * (y - mo) * (y - mo) / (var * var);
        let (mut gm, mut gv) = (vec![0.0; w], vec![0.0; w]);
        backward(&arch, &m, &v, &tape, gmo, gvo, &mut gm, &mut gv);
        let h = 1e-6;
        for k in 0..w {
            let (mut mp, mut mm) = (m.clone(), m.clone());
            mp[k] += h;
            mm[k] -= h;
            let fd = (log_z(&arch, &mp, &v, &x, y, noise) - log_z(&arch, &mm, &v, &x, y, noise))
                / (2.0 * h);
            assert!((fd - gm[k]).abs() < 1e-6, "dM[{k}]: {fd} vs {}", gm[k]);
            let (mut vp, mut vm) = (v.clone(), v.clone());
            vp[k] += h;
            vm[k] -= h;
            let fd = (log_z(&arch, &m, &vp, &x, y, noise) - log_z(&arch, &m, &vm, &x, y, noise))
                / (2.0 * h);
            assert!((fd - gv[k]).abs() < 1e-6, "dV[{k}]: {fd} vs {}", gv[k]);
        }
    }
}
