//! 002's Theorem 4.1 (the privacy-accuracy trade-off): the KL divergence between the SEP and the
//! DP-SEP Gaussian posteriors, the bound as printed, and a corrected bound that holds.
//!
//! # The noise model (002 Thm. 4.1)
//! `q = N(mu_q, Sigma_q)` is the SEP posterior, `p = N(mu_q + e, Sigma_q + E)` the DP-SEP one,
//! with `e_i ~ N(0, s1^2)` iid and `E` symmetric with its upper triangle (diagonal included)
//! iid `N(0, s2^2)`. Write `P = Sigma_q^{-1}` and `W = P^{1/2} E P^{1/2}` (symmetric; its
//! eigenvalues are those of `Z = Sigma_q^{-1} E`, which is similar to it). Then
//!
//! ```text
//! KL[q || p] = 1/2 sum_i h(1 + lambda_i(W)) + 1/2 e^T (Sigma_q + E)^{-1} e,
//! h(x) = log x + 1/x - 1 >= 0,
//! ```
//!
//! when `Sigma_q + E` is positive definite, and `p` is not a distribution otherwise (002's
//! proof: "Otherwise, infinity"). That happens with positive probability for every `s2 > 0`,
//! because `E` has unbounded Gaussian entries.
//!
//! # What is wrong with the printed theorem
//! (`docs/dp-sep.md`, "Theorem 4.1 (002): what holds", has the evidence.)
//! - Its hypothesis "`tau < 1 + lambda_min(Sigma_q^{-1} E) < A`" is on a Gaussian random matrix
//!   whose smallest eigenvalue has unbounded support: no constants `0 < tau < A` satisfy it
//!   almost surely, so read literally the theorem is vacuous.
//! - Read as "for any `0 < tau < A`", it is false: its right-hand side is `C(tau, A) / a`, which
//!   tends to 0 as `a` grows, while `P(KL >= a) >= P(Sigma_q + E not PD) > 0` for every `a`
//!   (`E[KL] = infinity`, so the Markov step (5) gives nothing).
//! - Step (14), `E lambda_max(Z) <= sqrt(2 v(Z) log(2d))`, does hold: `Z` is not symmetric, but
//!   its eigenvalues are real and at most `||Z||`, and Tropp (2015) Thm. 4.1.1 (the rectangular
//!   series, `v = max(||sum B B^T||, ||sum B^T B||)`) bounds `E ||Z||`; the printed
//!   `v(Z) = s2^2 d lambda_max(P)^2` is that maximum (see [`variance_statistic_as_printed`]).
//! - Step (17) cites positive definiteness of `(I + Sigma_q^{-1} E)^{-1}`, which is not symmetric;
//!   the inequality survives because `(I + Z)^{-1} P = P^{1/2} (I + W)^{-1} P^{1/2}` has the trace
//!   of `(I + W)^{-1} P`, a product of two PSD matrices, on the event that `I + W` is PD.
//!
//! # The corrected statement ([`theorem_4_1_corrected`])
//! For `0 < tau < 1` and `a > 0`, with `v = ||sum_k H_k^2||` the variance statistic of the
//! symmetric series `W = sum_k g_k H_k` ([`variance_statistic_symmetric`]),
//!
//! ```text
//! P(KL[q||p] >= a) <= d exp(-(1 - tau)^2 / (2 v)) + T(2 tau a),
//! ```
//!
//! where `KL` counts as `+inf` when `Sigma_q + E` is not PD and `T(u)` bounds
//! `P(||W||_F^2 + e^T P e >= u)`, a weighted chi-square with mean
//! `mu = s2^2 (Tr[P]^2 + Tr[P^2] - sum_i P_ii^2) + s1^2 Tr[P]`:
//! `T(u) = min(1, mu / u, exp(-y^2))`, `y` solving `2 b y + 2 c y^2 = u - mu` (Laurent & Massart
//! 2000, Lemma 1; only when `u > mu`) with `c = max(min(2 s2^2 lambda_max(P)^2, mu_W), s1^2
//! lambda_max(P))`, `b^2 = c_W mu_W + s1^4 Tr[P^2]` (`mu_W`, `c_W` the `W` parts of `mu`, `c`).
//!
//! Proof. On `G = {lambda_min(W) >= tau - 1}`, `I + W >= tau I`, so `Sigma_q + E` is PD,
//! `h(1 + x) = log(1 + x) - x / (1 + x) <= x^2 / (1 + x) <= x^2 / tau` for each eigenvalue and
//! `e^T (Sigma_q + E)^{-1} e = e^T P^{1/2} (I + W)^{-1} P^{1/2} e <= e^T P e / tau`; hence
//! `KL <= (||W||_F^2 + e^T P e) / (2 tau)` on `G`. `P(G^c) = P(lambda_max(-W) > 1 - tau)` is
//! bounded by Tropp (2015), Thm. 4.6.1 (`-W` has the law of `W`). [`kl_tail_bound`] picks
//! `tau`.
//!
//! # Beside a measured KL (the `mog` and `pbp` examples' `--compare-sep`)
//! [`posterior_noise_std`] turns DP-SEP's per-step noise into the noise on the final posterior's
//! natural parameters; [`delta_method_noise_full`] / [`delta_method_noise_diagonal`] map it to
//! the theorem's `(s1, s2)` (first order, an approximation); [`kl_tail_bound`] and
//! [`theorem_4_1_as_printed`] (or their `_diagonal` forms, `O(d)` for a diagonal `Sigma_q`)
//! then give the bounds, and [`gaussian_kl`] / [`gaussian_kl_diagonal`] the measured KL.

use nalgebra::{DMatrix, DVector};

use crate::SepError;
use crate::error::{check_nonnegative, check_positive};

/// The corrected bound on `P(KL[q||p] >= a)` and its parts ([`theorem_4_1_corrected`],
/// [`kl_tail_bound`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KlTailBound {
    /// The bound on `P(KL[q||p] >= a)`, in `[0, 1]`.
    pub probability: f64,
    /// The part for `1 + lambda_min(Sigma_q^{-1} E) < tau` (includes every draw where
    /// `Sigma_q + E` is not positive definite).
    pub outside: f64,
    /// The part for `KL >= a` when `1 + lambda_min >= tau`.
    pub inside: f64,
    /// The `tau` used.
    pub tau: f64,
}

/// The quantities of `Sigma_q` the bounds need, computed once.
#[derive(Debug, Clone)]
struct Precision {
    d: usize,
    /// Eigenvalues of `P = Sigma_q^{-1}` (for a diagonal `Sigma_q`: its diagonal, in order).
    eig_p: DVector<f64>,
    /// `P^{1/2}` and `P`; `None` when `Sigma_q` is diagonal (then `P = diag(eig_p)` and every
    /// quantity below has an `O(d)` closed form).
    dense: Option<(DMatrix<f64>, DMatrix<f64>)>,
}

impl Precision {
    fn new(sigma_q: &DMatrix<f64>) -> Result<Self, SepError> {
        let (vals, vecs) = checked_spd(sigma_q, "sigma_q")?;
        let eig_p = vals.map(|l| 1.0 / l);
        let sqrt_p = &vecs * DMatrix::from_diagonal(&eig_p.map(f64::sqrt)) * vecs.transpose();
        let p = &vecs * DMatrix::from_diagonal(&eig_p) * vecs.transpose();
        if !p.iter().all(|x| x.is_finite()) {
            return Err(SepError::InvalidParameter {
                name: "sigma_q",
                value: vals.min(),
                reason: "too close to singular: its inverse overflows f64 (value is its \
                         smallest eigenvalue)",
            });
        }
        Ok(Self {
            d: sigma_q.nrows(),
            eig_p,
            dense: Some((sqrt_p, p)),
        })
    }

    /// `Sigma_q = diag(var_q)`.
    fn diagonal(var_q: &[f64]) -> Result<Self, SepError> {
        let var = checked_variances(var_q, "var_q")?;
        let eig_p = var.map(|v| 1.0 / v);
        if let Some(i) = eig_p.iter().position(|x| !x.is_finite()) {
            return Err(SepError::InvalidParameter {
                name: "var_q",
                value: var[i],
                reason: "too close to zero: its inverse overflows f64",
            });
        }
        Ok(Self {
            d: var.len(),
            eig_p,
            dense: None,
        })
    }

    fn trace_p(&self) -> f64 {
        self.eig_p.sum()
    }

    fn max_eig_p(&self) -> f64 {
        self.eig_p.max()
    }

    /// `sum_i P_ii^2`.
    fn diag_sq(&self) -> f64 {
        match &self.dense {
            Some((_, p)) => (0..self.d).map(|i| p[(i, i)].powi(2)).sum(),
            None => self.eig_p.iter().map(|l| l * l).sum(),
        }
    }

    /// `s2^2 d lambda_max(P)^2`.
    fn v_printed(&self, s2: f64) -> f64 {
        s2 * s2 * self.d as f64 * self.max_eig_p().powi(2)
    }

    /// `s2^2 lambda_max(P^{1/2} (Tr[P] I + P - diag P) P^{1/2})`; for a diagonal `P` the inner
    /// matrix is `Tr[P] P`, so this is `s2^2 Tr[P] lambda_max(P)`.
    fn v_symmetric(&self, s2: f64) -> f64 {
        let tr = self.trace_p();
        let Some((sqrt_p, p)) = &self.dense else {
            return s2 * s2 * tr * self.max_eig_p();
        };
        let mut m = p.clone();
        for i in 0..self.d {
            m[(i, i)] = tr;
        }
        let inner = sqrt_p * m * sqrt_p;
        let inner = (&inner + inner.transpose()) * 0.5;
        s2 * s2 * inner.symmetric_eigenvalues().max().max(0.0)
    }
}

/// Checks `v` is non-empty, finite and positive (variances of a diagonal covariance).
fn checked_variances(v: &[f64], name: &'static str) -> Result<DVector<f64>, SepError> {
    if v.is_empty() {
        return Err(SepError::Empty("a diagonal covariance with no entries"));
    }
    for (i, x) in v.iter().enumerate() {
        if !x.is_finite() {
            return Err(SepError::NonFinite {
                context: name.to_string(),
                row: i,
                column: 0,
            });
        }
        if *x <= 0.0 {
            return Err(SepError::InvalidParameter {
                name,
                value: *x,
                reason: "every variance must be > 0 (value is the first that is not)",
            });
        }
    }
    Ok(DVector::from_column_slice(v))
}

/// `||w||_1`, `||w||_2`, `||w||_inf` (or upper bounds on the last two) for the weights `w` of
/// `||W||_F^2 + e^T P e` as a sum of squared independent standard normals.
fn chi_square_weights(prec: &Precision, s1: f64, s2: f64) -> (f64, f64, f64) {
    let (s1sq, s2sq) = (s1 * s1, s2 * s2);
    let tr = prec.trace_p();
    let tr_sq: f64 = prec.eig_p.iter().map(|l| l * l).sum();
    let diag_sq = prec.diag_sq();
    // E||W||_F^2 = s2^2 Tr[(Tr[P] I + P - diag P) P].
    let mean_w = s2sq * (tr * tr + tr_sq - diag_sq).max(0.0);
    // ||K||_2 <= 2 s2^2 lambda_max(P)^2 (and <= Tr K); ||K||_F^2 <= ||K||_2 Tr K.
    let max_w = (2.0 * s2sq * prec.max_eig_p().powi(2)).min(mean_w);
    let mean = mean_w + s1sq * tr;
    let l2 = (max_w * mean_w + s1sq * s1sq * tr_sq).sqrt();
    let linf = max_w.max(s1sq * prec.max_eig_p());
    (mean, l2, linf)
}

/// Checks `m` is a non-empty, square, finite, symmetric, positive definite matrix; returns its
/// eigenvalues and eigenvectors (of the exactly symmetrised matrix).
fn checked_spd(
    m: &DMatrix<f64>,
    name: &'static str,
) -> Result<(DVector<f64>, DMatrix<f64>), SepError> {
    let vals_vecs = checked_symmetric(m, name)?;
    let min = vals_vecs.0.min();
    if min > 0.0 {
        Ok(vals_vecs)
    } else {
        Err(SepError::InvalidParameter {
            name,
            value: min,
            reason: "must be positive definite (value is its smallest eigenvalue)",
        })
    }
}

/// As [`checked_spd`] without the positivity check.
fn checked_symmetric(
    m: &DMatrix<f64>,
    name: &'static str,
) -> Result<(DVector<f64>, DMatrix<f64>), SepError> {
    if m.nrows() == 0 {
        return Err(SepError::Empty("a covariance matrix with no rows"));
    }
    if m.ncols() != m.nrows() {
        return Err(SepError::DimensionMismatch {
            what: "covariance matrix columns (it must be square)",
            expected: m.nrows(),
            found: m.ncols(),
        });
    }
    for (j, col) in m.column_iter().enumerate() {
        for (i, x) in col.iter().enumerate() {
            if !x.is_finite() {
                return Err(SepError::NonFinite {
                    context: name.to_string(),
                    row: i,
                    column: j,
                });
            }
        }
    }
    let scale = m.amax();
    let asym = (m - m.transpose()).amax();
    if asym > 1e-12 * scale {
        return Err(SepError::InvalidParameter {
            name,
            value: asym,
            reason: "must be symmetric (value is the largest |m_ij - m_ji|)",
        });
    }
    let sym = (m + m.transpose()) * 0.5;
    let eig = sym.symmetric_eigen();
    Ok((eig.eigenvalues, eig.eigenvectors))
}

fn check_vector(v: &DVector<f64>, d: usize, name: &'static str) -> Result<(), SepError> {
    if v.len() != d {
        return Err(SepError::DimensionMismatch {
            what: name,
            expected: d,
            found: v.len(),
        });
    }
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(SepError::NonFinite {
            context: name.to_string(),
            row: i,
            column: 0,
        });
    }
    Ok(())
}

/// `KL[q || p]` between `q = N(mu_q, sigma_q)` and `p = N(mu_p, sigma_p)`, in closed form:
///
/// ```text
/// 1/2 (Tr[sigma_p^{-1} sigma_q] + (mu_p - mu_q)^T sigma_p^{-1} (mu_p - mu_q) - d
///      + log det sigma_p - log det sigma_q)
/// ```
///
/// computed from the eigendecompositions of both covariances.
///
/// A `sigma_p` that is not positive definite is an error, not `+inf`: `N(mu_p, sigma_p)` is then
/// not a distribution, so the divergence is undefined rather than large. (002's proof of Thm.
/// 4.1, and the tests of this module, count such a draw of the DP-SEP noise as `KL = +inf`, i.e.
/// as exceeding every threshold; [`theorem_4_1_corrected`] accounts for it.)
///
/// # Errors
/// [`SepError::Empty`] for `d = 0`; [`SepError::DimensionMismatch`] for sizes that disagree or a
/// non-square matrix; [`SepError::NonFinite`] for a NaN or infinite entry;
/// [`SepError::InvalidParameter`] (`name` `"sigma_q"` or `"sigma_p"`) for a matrix that is not
/// symmetric (relative tolerance `1e-12`) or not positive definite (`value` is its smallest
/// eigenvalue), or so close to singular that the KL overflows `f64`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::gaussian_kl;
/// use nalgebra::{DMatrix, DVector};
///
/// // 1-D: KL[N(0, 1) || N(1, 2)] = 1/2 (1/2 + 1/2 - 1 + ln 2).
/// let kl = gaussian_kl(
///     &DVector::from_element(1, 0.0),
///     &DMatrix::from_element(1, 1, 1.0),
///     &DVector::from_element(1, 1.0),
///     &DMatrix::from_element(1, 1, 2.0),
/// )?;
/// assert!((kl - 0.5 * 2f64.ln()).abs() < 1e-12);
///
/// // A covariance that is not positive definite is a typed error.
/// let bad = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
/// let zero = DVector::zeros(2);
/// assert!(gaussian_kl(&zero, &DMatrix::identity(2, 2), &zero, &bad).is_err());
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn gaussian_kl(
    mu_q: &DVector<f64>,
    sigma_q: &DMatrix<f64>,
    mu_p: &DVector<f64>,
    sigma_p: &DMatrix<f64>,
) -> Result<f64, SepError> {
    let (vq, _) = checked_spd(sigma_q, "sigma_q")?;
    let d = sigma_q.nrows();
    if sigma_p.nrows() != d {
        return Err(SepError::DimensionMismatch {
            what: "sigma_p rows (must match sigma_q)",
            expected: d,
            found: sigma_p.nrows(),
        });
    }
    let (vp, up) = checked_spd(sigma_p, "sigma_p")?;
    check_vector(mu_q, d, "mu_q")?;
    check_vector(mu_p, d, "mu_p")?;
    // sigma_p^{-1} = U diag(1/l) U^T; Tr[sigma_p^{-1} sigma_q] = sum_i u_i^T sigma_q u_i / l_i.
    let sq = (sigma_q + sigma_q.transpose()) * 0.5;
    let rotated_q = up.transpose() * sq * &up;
    let delta = up.transpose() * (mu_p - mu_q);
    let mut trace = 0.0;
    let mut quad = 0.0;
    for i in 0..d {
        trace += rotated_q[(i, i)] / vp[i];
        quad += delta[i] * delta[i] / vp[i];
    }
    let logdet_p: f64 = vp.iter().map(|l| l.ln()).sum();
    let logdet_q: f64 = vq.iter().map(|l| l.ln()).sum();
    let kl = 0.5 * (trace + quad - d as f64 + logdet_p - logdet_q);
    if kl.is_finite() {
        // Rounding can leave -1e-16 for identical distributions.
        Ok(kl.max(0.0))
    } else {
        Err(SepError::InvalidParameter {
            name: "sigma_p",
            value: vp.min(),
            reason: "too close to singular: the KL overflows f64 (value is its smallest \
                     eigenvalue)",
        })
    }
}

/// The matrix variance statistic as 002 prints it,
/// `v(Z) = ||sum_k s2^2 A_k A_k^T||` for `Z = Sigma_q^{-1} E = sum_k g_k s2 A_k`, in closed form:
/// with `A_{ij} = P S_{ij}`, `S_{ij} = e_i e_j^T + e_j e_i^T` (`S_{ii} = e_i e_i^T`) and
/// `sum_{i<=j} S_{ij} S_{ij}^T = d I`,
///
/// ```text
/// v(Z) = s2^2 d lambda_max(Sigma_q^{-1})^2.
/// ```
///
/// This is also Tropp's (2015, Thm. 4.1.1) `max(||sum B B^T||, ||sum B^T B||)` for the
/// rectangular series, because `sum_k A_k^T A_k = Tr[P^2] I + P^2 - diag(P^2)` has norm at most
/// `d lambda_max(P)^2` (for PSD `Q` and unit `x`,
/// `Tr Q + x^T (Q - diag Q) x = sum_i Q_ii (1 - x_i^2) + x^T Q x <= d lambda_max(Q)`). So step
/// (14) of 002's proof, `E lambda_max(Z) <= E||Z|| <= sqrt(2 v(Z) log(2d))`, holds.
///
/// # Errors
/// As [`gaussian_kl`] for `sigma_q`; [`SepError::InvalidParameter`] for `s2` not finite and
/// `>= 0`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::variance_statistic_as_printed;
/// use nalgebra::DMatrix;
///
/// let sigma_q = DMatrix::from_diagonal(&nalgebra::dvector![1.0, 0.5]);
/// // P = diag(1, 2): v = s2^2 * 2 * 2^2.
/// let v = variance_statistic_as_printed(&sigma_q, 0.1)?;
/// assert!((v - 0.01 * 8.0).abs() < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn variance_statistic_as_printed(sigma_q: &DMatrix<f64>, s2: f64) -> Result<f64, SepError> {
    let s2 = check_nonnegative("s2", s2)?;
    Ok(Precision::new(sigma_q)?.v_printed(s2))
}

/// The variance statistic of the symmetric series `W = P^{1/2} E P^{1/2} = sum_k g_k H_k`,
/// `H_{ij} = s2 P^{1/2} S_{ij} P^{1/2}`, which has the eigenvalues of `Z = Sigma_q^{-1} E`:
///
/// ```text
/// v = ||sum_k H_k^2|| = s2^2 lambda_max(P^{1/2} (Tr[P] I + P - diag(P)) P^{1/2}),
/// ```
///
/// using `sum_{i<=j} S_{ij} M S_{ij} = Tr[M] I + M - diag(M)`. It is at most
/// [`variance_statistic_as_printed`] (by the inequality shown there) and gives Tropp's (2015,
/// Thm. 4.6.1) `P(lambda_max(W) >= t) <= d exp(-t^2 / (2v))`, the same for `-lambda_min(W)`.
///
/// # Errors
/// As [`variance_statistic_as_printed`].
///
/// # Example
/// ```
/// use dp_sep::kl_bound::{variance_statistic_as_printed, variance_statistic_symmetric};
/// use nalgebra::DMatrix;
///
/// // For Sigma_q = c I both equal s2^2 d / c^2.
/// let sigma_q = DMatrix::identity(3, 3) * 2.0;
/// let v = variance_statistic_symmetric(&sigma_q, 0.5)?;
/// assert!((v - 0.25 * 3.0 / 4.0).abs() < 1e-12);
/// assert!((variance_statistic_as_printed(&sigma_q, 0.5)? - v).abs() < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn variance_statistic_symmetric(sigma_q: &DMatrix<f64>, s2: f64) -> Result<f64, SepError> {
    let s2 = check_nonnegative("s2", s2)?;
    Ok(Precision::new(sigma_q)?.v_symmetric(s2))
}

/// The right-hand side of 002's Theorem 4.1 exactly as printed:
///
/// ```text
/// d/(2a) log(1 + r) - d/(2a) + d/(2a) (s1^2 Tr[Sigma_q^{-1}] + 1) (A + tau + r - 1) / (A tau),
/// r = sqrt(2 v(Z) log(2d)),  v(Z) = s2^2 d lambda_max(Sigma_q^{-1})^2
/// ```
///
/// ([`variance_statistic_as_printed`]), returned unclamped so that values above 1 (vacuous)
/// are visible. `tau` and `upper` (`A`) are the theorem's constants; its hypothesis
/// `tau < 1 + lambda_min(Sigma_q^{-1} E) < A` cannot hold almost surely (the module
/// documentation says why) and is not checked. **This is not a valid bound**: for any fixed
/// `tau`, `A` it decays like `1/a`, while `P(KL >= a) >= P(Sigma_q + E not PD) > 0`; use
/// [`theorem_4_1_corrected`] or [`kl_tail_bound`].
///
/// # Errors
/// As [`gaussian_kl`] for `sigma_q`; [`SepError::InvalidParameter`] for `s1`, `s2` not finite
/// and `>= 0`, or `a`, `tau`, `upper` not finite and `> 0`, or `tau >= upper`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::theorem_4_1_as_printed;
/// use nalgebra::DMatrix;
///
/// let sigma_q = DMatrix::identity(2, 2);
/// let rhs = theorem_4_1_as_printed(0.1, 0.1, &sigma_q, 0.5, 0.5, 1.5)?;
/// assert!(rhs > 1.0); // vacuous at a = 1/2
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn theorem_4_1_as_printed(
    s1: f64,
    s2: f64,
    sigma_q: &DMatrix<f64>,
    a: f64,
    tau: f64,
    upper: f64,
) -> Result<f64, SepError> {
    let s1 = check_nonnegative("s1", s1)?;
    let s2 = check_nonnegative("s2", s2)?;
    let a = check_positive("a", a)?;
    let tau = check_positive("tau", tau)?;
    let upper = check_positive("upper", upper)?;
    if tau >= upper {
        return Err(SepError::InvalidParameter {
            name: "tau",
            value: tau,
            reason: "must be < upper (the theorem's A)",
        });
    }
    printed(s1, s2, &Precision::new(sigma_q)?, a, tau, upper)
}

/// [`theorem_4_1_as_printed`] for a diagonal `Sigma_q = diag(var_q)` in `O(d)` (no `d x d`
/// matrix): the same value as the dense call on the diagonal matrix. The noise model is still
/// 002's (`E` dense symmetric).
///
/// # Errors
/// As [`theorem_4_1_as_printed`], with `sigma_q`'s checks replaced by: [`SepError::Empty`] for
/// no variances, [`SepError::NonFinite`] (`"var_q"`, the index as `row`) for a NaN or infinite
/// one, [`SepError::InvalidParameter`] (`name` `"var_q"`) for one `<= 0` or so small that its
/// inverse overflows.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::{theorem_4_1_as_printed, theorem_4_1_as_printed_diagonal};
/// use nalgebra::DMatrix;
///
/// let var = [1.0, 0.5];
/// let dense = DMatrix::from_diagonal(&nalgebra::DVector::from_column_slice(&var));
/// let a = theorem_4_1_as_printed(0.1, 0.1, &dense, 0.5, 0.5, 1.5)?;
/// let b = theorem_4_1_as_printed_diagonal(0.1, 0.1, &var, 0.5, 0.5, 1.5)?;
/// assert!((a - b).abs() <= 1e-12 * a.abs());
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn theorem_4_1_as_printed_diagonal(
    s1: f64,
    s2: f64,
    var_q: &[f64],
    a: f64,
    tau: f64,
    upper: f64,
) -> Result<f64, SepError> {
    let s1 = check_nonnegative("s1", s1)?;
    let s2 = check_nonnegative("s2", s2)?;
    let a = check_positive("a", a)?;
    let tau = check_positive("tau", tau)?;
    let upper = check_positive("upper", upper)?;
    if tau >= upper {
        return Err(SepError::InvalidParameter {
            name: "tau",
            value: tau,
            reason: "must be < upper (the theorem's A)",
        });
    }
    printed(s1, s2, &Precision::diagonal(var_q)?, a, tau, upper)
}

/// The printed right-hand side, inputs checked.
fn printed(
    s1: f64,
    s2: f64,
    prec: &Precision,
    a: f64,
    tau: f64,
    upper: f64,
) -> Result<f64, SepError> {
    let d = prec.d as f64;
    let r = (2.0 * prec.v_printed(s2) * (2.0 * d).ln()).sqrt();
    let k = d / (2.0 * a);
    let rhs = k * (1.0 + r).ln() - k
        + k * (s1 * s1 * prec.trace_p() + 1.0) * (upper + tau + r - 1.0) / (upper * tau);
    finite_or_overflow(rhs)
}

fn finite_or_overflow(x: f64) -> Result<f64, SepError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(SepError::InvalidParameter {
            name: "sigma_q",
            value: x,
            reason: "the bound overflows f64 (sigma_q too close to singular or noise too large)",
        })
    }
}

/// `P(sum_j w_j zeta_j^2 >= u)` for iid standard normal `zeta`, bounded by Markov and by
/// Laurent & Massart (2000, Lemma 1) from `(||w||_1, ||w||_2, ||w||_inf)`; 1 for `u <= 0`.
fn chi_square_tail((mean, l2, linf): (f64, f64, f64), u: f64) -> f64 {
    if u.is_nan() || u <= 0.0 {
        return 1.0;
    }
    if mean == 0.0 {
        return 0.0;
    }
    let markov = mean / u;
    let excess = u - mean;
    let lm = if excess > 0.0 && linf > 0.0 {
        // 2 l2 y + 2 linf y^2 = excess, y = sqrt(x); P(...) <= exp(-x).
        let y = (-l2 + (l2 * l2 + 2.0 * linf * excess).sqrt()) / (2.0 * linf);
        (-y * y).exp()
    } else {
        1.0
    };
    markov.min(lm).min(1.0)
}

fn corrected(d: usize, weights: (f64, f64, f64), v: f64, a: f64, tau: f64) -> KlTailBound {
    let t = 1.0 - tau;
    let outside = if v == 0.0 {
        0.0
    } else {
        (d as f64 * (-t * t / (2.0 * v)).exp()).min(1.0)
    };
    let inside = chi_square_tail(weights, 2.0 * tau * a);
    KlTailBound {
        probability: (outside + inside).min(1.0),
        outside,
        inside,
        tau,
    }
}

/// The corrected Theorem 4.1 (module documentation): for `0 < tau < 1` and `a > 0`, under
/// 002's noise model,
///
/// ```text
/// P(KL[q||p] >= a) <= d exp(-(1 - tau)^2 / (2 v)) + T(2 tau a),
/// ```
///
/// `v` = [`variance_statistic_symmetric`], `T(u)` the smaller of the Markov and the
/// Laurent-Massart bounds on `P(||W||_F^2 + e^T Sigma_q^{-1} e >= u)` (1 for `u <= 0`), with
/// `W = Sigma_q^{-1/2} E Sigma_q^{-1/2}`. `KL` is `+inf` when `Sigma_q + E` is not positive
/// definite; those draws are inside the first term. Assumes only the noise model: `e` and `E`
/// independent, `e ~ N(0, s1^2 I)`, `E`'s upper triangle (with diagonal) iid `N(0, s2^2)`.
///
/// # Errors
/// As [`gaussian_kl`] for `sigma_q`; [`SepError::InvalidParameter`] for `s1`, `s2` not finite
/// and `>= 0`, `a` not finite and `> 0`, or `tau` outside `(0, 1)`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::theorem_4_1_corrected;
/// use nalgebra::DMatrix;
///
/// let sigma_q = DMatrix::identity(2, 2);
/// let b = theorem_4_1_corrected(0.1, 0.05, &sigma_q, 1.0, 0.5)?;
/// assert!(b.probability < 0.01 && b.probability >= b.outside);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn theorem_4_1_corrected(
    s1: f64,
    s2: f64,
    sigma_q: &DMatrix<f64>,
    a: f64,
    tau: f64,
) -> Result<KlTailBound, SepError> {
    let s1 = check_nonnegative("s1", s1)?;
    let s2 = check_nonnegative("s2", s2)?;
    let a = check_positive("a", a)?;
    if !(tau > 0.0 && tau < 1.0) {
        return Err(SepError::InvalidParameter {
            name: "tau",
            value: tau,
            reason: "must be in (0, 1)",
        });
    }
    let prec = Precision::new(sigma_q)?;
    let v = prec.v_symmetric(s2);
    let b = corrected(prec.d, chi_square_weights(&prec, s1, s2), v, a, tau);
    finite_or_overflow(b.probability)?;
    Ok(b)
}

/// [`theorem_4_1_corrected`] with `tau` chosen to minimise the bound, from only the noise
/// levels, the SEP covariance and the threshold: `1 - tau` over 400 log-spaced values in
/// `[1e-8, 1)` and 200 multiples `sqrt(v) * [0.1, 100]` below 1 (the result is a valid bound
/// whichever candidate wins). This is the call for printing the bound next to a measured KL.
///
/// # Errors
/// As [`theorem_4_1_corrected`] (`tau` is not an input).
///
/// # Example
/// ```
/// use dp_sep::kl_bound::kl_tail_bound;
/// use nalgebra::DMatrix;
///
/// let sigma_q = DMatrix::from_diagonal(&nalgebra::dvector![1.0, 0.1]);
/// let b = kl_tail_bound(0.05, 0.005, &sigma_q, 0.5)?;
/// assert!(b.probability < 0.05);
/// assert!(b.tau > 0.0 && b.tau < 1.0);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn kl_tail_bound(
    s1: f64,
    s2: f64,
    sigma_q: &DMatrix<f64>,
    a: f64,
) -> Result<KlTailBound, SepError> {
    let s1 = check_nonnegative("s1", s1)?;
    let s2 = check_nonnegative("s2", s2)?;
    let a = check_positive("a", a)?;
    best_tail_bound(&Precision::new(sigma_q)?, s1, s2, a)
}

/// [`kl_tail_bound`] for a diagonal `Sigma_q = diag(var_q)` (e.g. PBP's factorised posterior over
/// thousands of weights) in `O(d)`: the same bound as the dense call on the diagonal matrix,
/// under the same noise model (`E` dense symmetric, as in 002's theorem; a noise that is
/// itself diagonal has smaller `||W||_F`, so the bound covers it too, loosely).
///
/// # Errors
/// As [`kl_tail_bound`], with `sigma_q`'s checks replaced by those of `var_q` listed at
/// [`theorem_4_1_as_printed_diagonal`].
///
/// # Example
/// ```
/// use dp_sep::kl_bound::{kl_tail_bound, kl_tail_bound_diagonal};
/// use nalgebra::{DMatrix, DVector};
///
/// let var = [1.0, 0.1];
/// let dense = DMatrix::from_diagonal(&DVector::from_column_slice(&var));
/// let a = kl_tail_bound(0.05, 0.005, &dense, 0.5)?;
/// let b = kl_tail_bound_diagonal(0.05, 0.005, &var, 0.5)?;
/// assert!((a.probability - b.probability).abs() <= 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn kl_tail_bound_diagonal(
    s1: f64,
    s2: f64,
    var_q: &[f64],
    a: f64,
) -> Result<KlTailBound, SepError> {
    let s1 = check_nonnegative("s1", s1)?;
    let s2 = check_nonnegative("s2", s2)?;
    let a = check_positive("a", a)?;
    best_tail_bound(&Precision::diagonal(var_q)?, s1, s2, a)
}

/// The `tau` search of [`kl_tail_bound`], inputs checked.
fn best_tail_bound(prec: &Precision, s1: f64, s2: f64, a: f64) -> Result<KlTailBound, SepError> {
    let v = prec.v_symmetric(s2);
    let weights = chi_square_weights(prec, s1, s2);
    let geom = |lo: f64, hi: f64, n: usize| {
        (0..n).map(move |i| lo * (hi / lo).powf(i as f64 / (n - 1) as f64))
    };
    let root_v = v.sqrt();
    let mut best: Option<KlTailBound> = None;
    for t in geom(1e-8, 1.0, 400)
        .chain(geom(0.1, 100.0, 200).map(|c| c * root_v))
        .filter(|t| *t > 0.0 && *t < 1.0)
    {
        let b = corrected(prec.d, weights, v, a, 1.0 - t);
        if best.is_none_or(|x| b.probability < x.probability) {
            best = Some(b);
        }
    }
    let b = best.ok_or(SepError::Empty("the grid of tau"))?;
    finite_or_overflow(b.probability)?;
    Ok(b)
}

/// [`gaussian_kl`] for factorised Gaussians `q = N(mu_q, diag(var_q))`, `p = N(mu_p,
/// diag(var_p))` in `O(d)`: `1/2 sum_i (r_i - 1 - ln r_i + (mu_p,i - mu_q,i)^2 / var_p,i)`,
/// `r_i = var_q,i / var_p,i`.
///
/// # Errors
/// [`SepError::Empty`] for `d = 0`; [`SepError::DimensionMismatch`] for lengths that disagree;
/// [`SepError::NonFinite`] (the slice's name, the index as `row`) for a NaN or infinite entry;
/// [`SepError::InvalidParameter`] (`"var_q"` or `"var_p"`) for a variance `<= 0`, or when the KL
/// overflows `f64`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::{gaussian_kl, gaussian_kl_diagonal};
/// use nalgebra::{DMatrix, DVector};
///
/// let (mq, vq, mp, vp) = ([0.0, 1.0], [1.0, 0.5], [1.0, 0.0], [2.0, 0.25]);
/// let diag = |v: &[f64]| DMatrix::from_diagonal(&DVector::from_column_slice(v));
/// let dense = gaussian_kl(
///     &DVector::from_column_slice(&mq),
///     &diag(&vq),
///     &DVector::from_column_slice(&mp),
///     &diag(&vp),
/// )?;
/// assert!((gaussian_kl_diagonal(&mq, &vq, &mp, &vp)? - dense).abs() < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn gaussian_kl_diagonal(
    mu_q: &[f64],
    var_q: &[f64],
    mu_p: &[f64],
    var_p: &[f64],
) -> Result<f64, SepError> {
    let vq = checked_variances(var_q, "var_q")?;
    let d = vq.len();
    if var_p.len() != d {
        return Err(SepError::DimensionMismatch {
            what: "var_p (must match var_q)",
            expected: d,
            found: var_p.len(),
        });
    }
    let vp = checked_variances(var_p, "var_p")?;
    check_vector(&DVector::from_column_slice(mu_q), d, "mu_q")?;
    check_vector(&DVector::from_column_slice(mu_p), d, "mu_p")?;
    let mut kl = 0.0;
    for i in 0..d {
        let r = vq[i] / vp[i];
        let delta = mu_p[i] - mu_q[i];
        kl += (r - 1.0 - r.ln()).max(0.0) + delta * delta / vp[i];
    }
    let kl = 0.5 * kl;
    if kl.is_finite() {
        Ok(kl)
    } else {
        Err(SepError::InvalidParameter {
            name: "var_p",
            value: vp.min(),
            reason: "the KL overflows f64 (value is the smallest variance of p)",
        })
    }
}

/// `lambda_min(Sigma_q^{-1} Sigma_p) = 1 + lambda_min(Sigma_q^{-1} E)` for the realised
/// `E = Sigma_p - Sigma_q`: the quantity 002's hypothesis `tau < 1 + lambda_min < A` is about.
///
/// # Errors
/// As [`gaussian_kl`] for the two covariances.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::one_plus_lambda_min;
/// use nalgebra::DMatrix;
///
/// let q = DMatrix::identity(2, 2) * 2.0;
/// let p = DMatrix::from_diagonal(&nalgebra::dvector![1.0, 4.0]);
/// assert!((one_plus_lambda_min(&q, &p)? - 0.5).abs() < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn one_plus_lambda_min(
    sigma_q: &DMatrix<f64>,
    sigma_p: &DMatrix<f64>,
) -> Result<f64, SepError> {
    let prec = Precision::new(sigma_q)?;
    if sigma_p.nrows() != prec.d {
        return Err(SepError::DimensionMismatch {
            what: "sigma_p rows (must match sigma_q)",
            expected: prec.d,
            found: sigma_p.nrows(),
        });
    }
    checked_spd(sigma_p, "sigma_p")?;
    let Some((sqrt_p, _)) = &prec.dense else {
        return Err(SepError::Empty("a dense precision"));
    };
    let m = sqrt_p * sigma_p * sqrt_p;
    Ok(((&m + m.transpose()) * 0.5).symmetric_eigenvalues().min())
}

/// The effective noise levels `(s1, s2)` of 002's noise model ([`delta_method_noise_full`],
/// [`delta_method_noise_diagonal`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseLevels {
    /// Std of each coordinate of the mean perturbation `e`.
    pub s1: f64,
    /// Std of each upper-triangle entry of the covariance perturbation `E`.
    pub s2: f64,
    /// The first-order expected KL both noise models share:
    /// `E||W||_F^2 / 4 + E[e^T P e] / 2`.
    pub first_order_kl: f64,
}

/// The noise std on each natural parameter of the DP-SEP posterior after `steps` noised steps.
///
/// The posterior `theta = theta_0 + N theta_f` is an AR(1) process: each step keeps
/// `1 - damping` of the factor (`damping = S gamma / N^2`, `S = 1` for one record per step) and
/// adds fresh noise of std `step_std` (`DpSepReport::theta_noise_std`). Ignoring the clip of the
/// written-back factor and the repair of an improper posterior (both projections), the noise
/// on each coordinate has std `step_std sqrt((1 - (1 - damping)^(2 steps)) / (damping (2 -
/// damping)))`, which tends to `step_std / sqrt(damping (2 - damping))`.
///
/// # Errors
/// [`SepError::InvalidParameter`] for `step_std` not finite and `>= 0` or `damping` outside
/// `(0, 1]`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::posterior_noise_std;
///
/// // One step: the step's own noise.
/// assert!((posterior_noise_std(0.3, 0.5, 1)? - 0.3).abs() < 1e-15);
/// // Many steps: the stationary std.
/// let s = posterior_noise_std(0.3, 0.01, 1_000_000)?;
/// assert!((s - 0.3 / (0.01f64 * 1.99).sqrt()).abs() < 1e-9);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn posterior_noise_std(step_std: f64, damping: f64, steps: u64) -> Result<f64, SepError> {
    let step_std = check_nonnegative("step_std", step_std)?;
    if !(damping > 0.0 && damping <= 1.0) {
        return Err(SepError::InvalidParameter {
            name: "damping",
            value: damping,
            reason: "must be in (0, 1] (S gamma / N^2)",
        });
    }
    // 1 - rho^(2T) with rho = 1 - damping, accurate for damping near 0.
    let log_rho_sq = 2.0 * (-damping).ln_1p();
    let kept = -(steps as f64 * log_rho_sq).exp_m1();
    let var = step_std * step_std * kept / (damping * (2.0 - damping));
    finite_or_overflow(var.sqrt())
}

/// 002's `(s1, s2)` for a Gaussian posterior made of independent full-covariance blocks
/// `(mean_k, cov_k)` (the SEP posterior, the theorem's `q`; e.g. the mixture's component means),
/// whose natural parameters carry iid `N(0, theta_std^2)` noise in the layout `(h_k = Lambda_k
/// m_k, B_k)` with `Lambda_k = -(B_k + B_k^T)` (every entry of the `d x d` block `B_k` noised,
/// as `MogModel`'s full family stores it).
///
/// **A first-order (delta-method) approximation.** DP-SEP perturbs natural parameters; the
/// theorem perturbs the mean by `e ~ N(0, s1^2 I)` and the covariance by a symmetric `E` with iid
/// `N(0, s2^2)` entries. To first order, with `G` the symmetric part of the noise on `B`,
/// `dSigma = 2 Sigma G Sigma` and `dmu = Sigma (dh + 2 G mu)`, and
/// `KL ~= ||W||_F^2 / 4 + e^T P e / 2` (`P = Sigma^{-1}`, `W = P^{1/2} dSigma P^{1/2}`). The
/// levels are chosen so both expectations match the theorem's: with `s = theta_std`, summed
/// over blocks,
///
/// ```text
/// s1^2 Tr[P]                             = E[dmu^T P dmu] = s^2 sum_k ((1 + 2|mu_k|^2) Tr[Sigma_k] + 2 mu_k^T Sigma_k mu_k)
/// s2^2 (Tr[P]^2 + Tr[P^2] - sum_i P_ii^2) = E||W||_F^2   = 2 s^2 sum_k (Tr[Sigma_k^2] + Tr[Sigma_k]^2)
/// ```
///
/// (`P` the joint, block-diagonal precision). So the theorem's noise model has, to first order,
/// the DP-SEP noise's expected KL; its shape differs (the theorem's noise is isotropic and
/// couples blocks, DP-SEP's is neither), and second-order effects (a noised precision near zero)
/// are ignored.
///
/// # Errors
/// [`SepError::Empty`] for no blocks; as [`gaussian_kl`] for each `cov_k`;
/// [`SepError::DimensionMismatch`] or [`SepError::NonFinite`] for a mean that does not fit;
/// [`SepError::InvalidParameter`] for `theta_std` not finite and `>= 0`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::delta_method_noise_full;
/// use nalgebra::{DMatrix, DVector};
///
/// // One 1-D block N(0, 1): s1 = s, s2^2 = 2 s^2 (1 + 1) / 1 = 4 s^2.
/// let levels = delta_method_noise_full(&[(DVector::zeros(1), DMatrix::identity(1, 1))], 0.1)?;
/// assert!((levels.s1 - 0.1).abs() < 1e-12 && (levels.s2 - 0.2).abs() < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn delta_method_noise_full(
    blocks: &[(DVector<f64>, DMatrix<f64>)],
    theta_std: f64,
) -> Result<NoiseLevels, SepError> {
    let s = check_nonnegative("theta_std", theta_std)?;
    if blocks.is_empty() {
        return Err(SepError::Empty("no Gaussian blocks"));
    }
    let (mut num1, mut num_w) = (0.0, 0.0);
    let (mut tr_p, mut tr_p_sq, mut diag_sq) = (0.0, 0.0, 0.0);
    for (mean, cov) in blocks {
        let prec = Precision::new(cov)?;
        check_vector(mean, prec.d, "mean")?;
        let sym = (cov + cov.transpose()) * 0.5;
        let tr = sym.trace();
        num1 += (1.0 + 2.0 * mean.norm_squared()) * tr + 2.0 * (mean.transpose() * &sym * mean)[0];
        num_w += 2.0 * ((&sym * &sym).trace() + tr * tr);
        tr_p += prec.trace_p();
        tr_p_sq += prec.eig_p.iter().map(|l| l * l).sum::<f64>();
        diag_sq += prec.diag_sq();
    }
    levels(s, num1, num_w, tr_p, tr_p * tr_p + tr_p_sq - diag_sq)
}

/// [`delta_method_noise_full`] for a factorised Gaussian `N(mean, diag(var))` (PBP's weights,
/// the mixture's diagonal family) whose natural parameters `(h_i, b_i) = (mean_i / var_i, -1 /
/// (2 var_i))` carry iid `N(0, theta_std^2)` noise. First order: `dLambda_i = -2 db_i`,
/// `dvar_i = 2 var_i^2 db_i`, `dmu_i = var_i (dh_i + 2 mean_i db_i)`, `W_ii = 2 var_i db_i`, so
///
/// ```text
/// s1^2 Tr[P] = s^2 sum_i var_i (1 + 4 mean_i^2),   s2^2 Tr[P]^2 = 4 s^2 sum_i var_i^2,
/// ```
///
/// with `Tr[P] = sum_i 1 / var_i` (the theorem's `E` is dense, DP-SEP's diagonal: the match is
/// of `E||W||_F^2` only). An approximation, as there.
///
/// # Errors
/// As [`kl_tail_bound_diagonal`] for `var`; [`SepError::DimensionMismatch`] or
/// [`SepError::NonFinite`] for a `mean` that does not fit; [`SepError::InvalidParameter`] for
/// `theta_std` not finite and `>= 0`.
///
/// # Example
/// ```
/// use dp_sep::kl_bound::delta_method_noise_diagonal;
///
/// // N(0, 1): s1 = s, s2 = 2 s (as the full form in 1-D).
/// let levels = delta_method_noise_diagonal(&[0.0], &[1.0], 0.1)?;
/// assert!((levels.s1 - 0.1).abs() < 1e-12 && (levels.s2 - 0.2).abs() < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn delta_method_noise_diagonal(
    mean: &[f64],
    var: &[f64],
    theta_std: f64,
) -> Result<NoiseLevels, SepError> {
    let s = check_nonnegative("theta_std", theta_std)?;
    let prec = Precision::diagonal(var)?;
    check_vector(&DVector::from_column_slice(mean), prec.d, "mean")?;
    let num1: f64 = mean
        .iter()
        .zip(var)
        .map(|(m, v)| v * (1.0 + 4.0 * m * m))
        .sum();
    let num_w: f64 = var.iter().map(|v| 4.0 * v * v).sum();
    let tr_p = prec.trace_p();
    levels(s, num1, num_w, tr_p, tr_p * tr_p)
}

fn levels(s: f64, num1: f64, num_w: f64, tr_p: f64, den_w: f64) -> Result<NoiseLevels, SepError> {
    let s1 = finite_or_overflow(s * (num1 / tr_p).sqrt())?;
    let s2 = finite_or_overflow(s * (num_w / den_w).sqrt())?;
    let first_order_kl = finite_or_overflow(s * s * (num_w / 4.0 + num1 / 2.0))?;
    Ok(NoiseLevels {
        s1,
        s2,
        first_order_kl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed forms behind `chi_square_weights` against the explicit Gram matrix
    /// `K_kl = Tr[H_k H_l]` of the series `W = sum_k g_k H_k` (so `||W||_F^2 = g^T K g`).
    #[test]
    fn chi_square_weights_match_the_explicit_gram_matrix() {
        // L L^T with L lower triangular: PD, condition number ~ 1e4.
        let l = DMatrix::from_row_slice(3, 3, &[1.4, 0.0, 0.0, 0.2, 0.6, 0.0, -0.05, 0.01, 0.03]);
        let sigma_q = &l * l.transpose();
        let sigma_q = (&sigma_q + sigma_q.transpose()) * 0.5;
        let (s1, s2) = (0.0, 0.7);
        let prec = Precision::new(&sigma_q).unwrap();
        let d = prec.d;
        let (sqrt_p, _) = prec.dense.as_ref().unwrap();
        let mut hs = Vec::new();
        for j in 0..d {
            for i in 0..=j {
                let mut s = DMatrix::zeros(d, d);
                s[(i, j)] = 1.0;
                s[(j, i)] = 1.0;
                hs.push(s2 * sqrt_p * s * sqrt_p);
            }
        }
        let k = DMatrix::from_fn(hs.len(), hs.len(), |a, b| (&hs[a] * &hs[b]).trace());
        let eig = k.symmetric_eigenvalues();
        let (mean, l2, linf) = chi_square_weights(&prec, s1, s2);
        assert!((mean - k.trace()).abs() < 1e-9 * mean);
        assert!(linf >= eig.max() * (1.0 - 1e-9));
        assert!(l2 >= eig.norm() * (1.0 - 1e-9));
    }
}
