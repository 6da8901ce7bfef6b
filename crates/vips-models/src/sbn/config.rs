//! Settings of the sigmoid belief network.

use serde::{Deserialize, Serialize};

use super::SbnError;

/// How the `J` second-moment statistics `G_j = sum_n <xi0_nj> <z_n z_n^T>` (000 Eq. 68) cross
/// the privacy wall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GRelease {
    /// As in the paper: `J` symmetric `K x K` blocks, each with its own bound `K/4`, each noised
    /// by Analyze-Gauss and projected onto the positive-definite cone. A record writes
    /// `J K (K+1)/2` numbers and every release costs `J` eigendecompositions of `K x K`:
    /// for MNIST (`J = 784`, `K = 100`) that is 4 M numbers (32 MB) per record and 784
    /// eigendecompositions per iteration, about 0.1 G flops per record. Use for small `J K^2`.
    PerUnit,
    /// One symmetric `K x K` block `Z = sum_n <z_n z_n^T>` (bound `K`), and
    /// `G_j ~ (sum_n <xi0_nj>) Z / S` formed after the release from the released `s4` and `Z`
    /// (a mean-field decoupling of `xi0_nj` from `z_n` across the batch). Cost per record
    /// `K (K+1)/2`; one eigendecomposition per iteration. The default for MNIST-sized models.
    Pooled,
}

/// Which statistics carry `W` and `c` across the privacy wall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SbnStatistics {
    /// The paper's seven statistics (000 Eq. 61-68): `s3 = y - 1/2`, `s5 = <xi0> p^T` and
    /// `s6 = (y - 1/2) p^T`, combined after the release into the shifts of `q(c)` and `q(w_j)`
    /// (Appendix C). The noise on `s5` reaches `q(w_j)` multiplied by `<c_j>` (about 10 on the
    /// always-off border pixels of MNIST).
    Paper,
    /// The same M-step from six blocks: the shifts' statistics are formed per record with the
    /// current (public) `<c>` and `<W>` and released directly:
    /// `u_n = y_n - 1/2 - <xi0_n> . (<W> p_n)` (length `J`, replaces `s3` and the `s5 <W>` term
    /// of the `c` shift, Eq. 72) and `r_n = (y_n - 1/2 - <c> . <xi0_n>) p_n^T` (`J x K`, replaces
    /// `s5` and `s6`, Appendix C). Since `<xi0> psi ~ tanh(psi/2)/2`, the entries of `u` and `r`
    /// are residual-like, `y - sigma(psi)` in `(-1, 1)`, and shrink as the model fits; one
    /// `J x K` block fewer and no `<c>`-amplified noise. Declared bounds `sqrt(J)` and
    /// `sqrt(JK)` (entries in `[-1, 1]`; the wall clips the rare larger record).
    Residual,
}

/// Checked settings of [`crate::sbn::Sbn`]; build with [`SbnConfig::builder`].
///
/// # Example
/// ```
/// use vips_models::sbn::{GRelease, SbnConfig, SbnStatistics};
/// let cfg = SbnConfig::builder(784, 100).build()?;
/// assert_eq!(cfg.g_release(), GRelease::Pooled);
/// let small = SbnConfig::builder(16, 4)
///     .statistics(SbnStatistics::Residual)
///     .clip_fraction(0.25)
///     .build()?;
/// assert_eq!(small.g_release(), GRelease::PerUnit);
/// assert!(SbnConfig::builder(16, 4).clip_fraction(2.0).build().is_err());
/// # Ok::<(), vips_models::sbn::SbnError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SbnConfig {
    /// Number of visible units `J` (pixels).
    pub(crate) visible: usize,
    /// Number of hidden units `K`.
    pub(crate) hidden: usize,
    /// Prior variance `nu_b` of each hidden bias `b_k ~ N(0, nu_b)`.
    pub(crate) prior_var_b: f64,
    /// Prior variance `nu_c` of each visible bias `c_j ~ N(0, nu_c)`.
    pub(crate) prior_var_c: f64,
    /// Coordinate-ascent sweeps over `(q(xi0_n), q(z_n))` per record in the E-step.
    pub(crate) estep_sweeps: usize,
    /// How the `G_j` statistics are released.
    pub(crate) g_release: GRelease,
    /// Eigenvalue floor of the PSD projection of the noised symmetric blocks.
    pub(crate) eigenvalue_floor: f64,
    /// Standard deviation of the random initial means of `W` (public randomness).
    pub(crate) init_scale: f64,
    /// Declared bound of the three large blocks (`s5`, `s6` and `G_j` / `Z`) as a fraction of
    /// their worst case ([`crate::sbn::SbnBounds`]); the wall clips every record's block to it.
    /// `1` releases the paper's worst-case sensitivities. A typical record uses a quarter to a
    /// half of them (`||<z_n>||` is far below `sqrt(K)` unless every hidden unit is on), so a
    /// fraction below 1 trades a small clipping bias for proportionally less noise on the
    /// blocks that carry `W`; the guarantee is unchanged (clipping enforces the bound).
    pub(crate) clip_fraction: f64,
    /// Which statistics are released ([`SbnStatistics::Paper`] by default).
    pub(crate) statistics: SbnStatistics,
}

/// Unchecked SBN settings; [`SbnConfigBuilder::build`] validates them.
#[derive(Clone, Debug)]
pub struct SbnConfigBuilder {
    cfg: SbnConfig,
    /// `None`: chosen from `J K^2` at build time.
    g_release: Option<GRelease>,
}

impl SbnConfig {
    /// Starts a builder for `J` visible and `K` hidden units with the defaults: `nu_b = nu_c = 10`
    /// (broad), 3 E-step sweeps, [`GRelease::PerUnit`] when `J K^2 <= 200,000`, otherwise
    /// [`GRelease::Pooled`]; eigenvalue floor `1e-6`; initial `W` means with std `0.1`;
    /// worst-case bounds (`clip_fraction = 1`); the paper's statistics.
    pub fn builder(visible: usize, hidden: usize) -> SbnConfigBuilder {
        SbnConfigBuilder {
            cfg: Self {
                visible,
                hidden,
                prior_var_b: 10.0,
                prior_var_c: 10.0,
                estep_sweeps: 3,
                g_release: GRelease::Pooled,
                eigenvalue_floor: 1e-6,
                init_scale: 0.1,
                clip_fraction: 1.0,
                statistics: SbnStatistics::Paper,
            },
            g_release: None,
        }
    }

    /// Number of visible units `J` (pixels).
    pub fn visible(&self) -> usize {
        self.visible
    }
    /// Number of hidden units `K`.
    pub fn hidden(&self) -> usize {
        self.hidden
    }
    /// Prior variance `nu_b` of each hidden bias.
    pub fn prior_var_b(&self) -> f64 {
        self.prior_var_b
    }
    /// Prior variance `nu_c` of each visible bias.
    pub fn prior_var_c(&self) -> f64 {
        self.prior_var_c
    }
    /// Coordinate-ascent sweeps per record in the E-step.
    pub fn estep_sweeps(&self) -> usize {
        self.estep_sweeps
    }
    /// How the `G_j` statistics are released.
    pub fn g_release(&self) -> GRelease {
        self.g_release
    }
    /// Eigenvalue floor of the PSD projection of the noised symmetric blocks.
    pub fn eigenvalue_floor(&self) -> f64 {
        self.eigenvalue_floor
    }
    /// Standard deviation of the random initial means of `W`.
    pub fn init_scale(&self) -> f64 {
        self.init_scale
    }
    /// Declared bound of the large blocks as a fraction of their worst case.
    pub fn clip_fraction(&self) -> f64 {
        self.clip_fraction
    }
    /// Which statistics are released.
    pub fn statistics(&self) -> SbnStatistics {
        self.statistics
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`SbnError::InvalidParameter`] for a zero dimension, a variance that is not finite and
    /// `> 0`, zero sweeps, a floor outside `(0, 1)`, a clip fraction outside `(0, 1]` or a
    /// negative initial scale; [`SbnError::Limit`] if the `J x K x K` state would not fit in
    /// memory.
    pub(crate) fn check(&self) -> Result<(), SbnError> {
        if self.visible == 0 {
            return Err(SbnError::invalid("visible", 0.0, "must be >= 1"));
        }
        if self.hidden == 0 {
            return Err(SbnError::invalid("hidden", 0.0, "must be >= 1"));
        }
        // q(w_j) keeps a K x K covariance per visible unit (and its precision, the released G_j
        // for per-unit release): J K^2 entries, a few copies.
        let (j, k) = (self.visible as f64, self.hidden as f64);
        crate::limits::check_memory(
            "hidden (--hidden) and visible units",
            format!(
                "J x K x K = {} x {} x {} = {} entries",
                self.visible,
                self.hidden,
                self.hidden,
                crate::limits::count(j * k * k)
            ),
            8.0 * (4.0 * j * k * k + 16.0 * j * k + 4.0 * k * k),
        )?;
        for (name, v) in [
            ("prior_var_b", self.prior_var_b),
            ("prior_var_c", self.prior_var_c),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(SbnError::invalid(name, v, "must be finite and > 0"));
            }
        }
        if self.estep_sweeps == 0 {
            return Err(SbnError::invalid("estep_sweeps", 0.0, "must be >= 1"));
        }
        if !(self.eigenvalue_floor > 0.0 && self.eigenvalue_floor < 1.0) {
            return Err(SbnError::invalid(
                "eigenvalue_floor",
                self.eigenvalue_floor,
                "must be in (0, 1)",
            ));
        }
        if !(self.clip_fraction > 0.0 && self.clip_fraction <= 1.0) {
            return Err(SbnError::invalid(
                "clip_fraction",
                self.clip_fraction,
                "must be in (0, 1]",
            ));
        }
        if !(self.init_scale >= 0.0 && self.init_scale.is_finite()) {
            return Err(SbnError::invalid(
                "init_scale",
                self.init_scale,
                "must be finite and >= 0",
            ));
        }
        Ok(())
    }
}

impl SbnConfigBuilder {
    /// Prior variance `nu_b` of each hidden bias `b_k ~ N(0, nu_b)` (default 10).
    pub fn prior_var_b(mut self, v: f64) -> Self {
        self.cfg.prior_var_b = v;
        self
    }
    /// Prior variance `nu_c` of each visible bias `c_j ~ N(0, nu_c)` (default 10).
    pub fn prior_var_c(mut self, v: f64) -> Self {
        self.cfg.prior_var_c = v;
        self
    }
    /// Coordinate-ascent sweeps over `(q(xi0_n), q(z_n))` per record (default 3).
    pub fn estep_sweeps(mut self, n: usize) -> Self {
        self.cfg.estep_sweeps = n;
        self
    }
    /// How the `G_j` statistics are released (default: by size, see [`SbnConfig::builder`]).
    pub fn g_release(mut self, g: GRelease) -> Self {
        self.g_release = Some(g);
        self
    }
    /// Eigenvalue floor of the PSD projection, in `(0, 1)` (default `1e-6`).
    pub fn eigenvalue_floor(mut self, floor: f64) -> Self {
        self.cfg.eigenvalue_floor = floor;
        self
    }
    /// Standard deviation of the random initial means of `W` (public randomness; default 0.1).
    pub fn init_scale(mut self, s: f64) -> Self {
        self.cfg.init_scale = s;
        self
    }
    /// Declared bound of the three large blocks (`s5`, `s6` and `G_j` / `Z`) as a fraction of
    /// their worst case, in `(0, 1]` (default 1). A typical record uses a quarter to a half of
    /// them, so a fraction below 1 trades a small clipping bias for proportionally less noise;
    /// the guarantee is unchanged (clipping enforces the bound).
    pub fn clip_fraction(mut self, f: f64) -> Self {
        self.cfg.clip_fraction = f;
        self
    }
    /// Which statistics are released (default [`SbnStatistics::Paper`]).
    pub fn statistics(mut self, s: SbnStatistics) -> Self {
        self.cfg.statistics = s;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`SbnError::InvalidParameter`] for a zero dimension, a variance that is not finite and
    /// `> 0`, zero sweeps, a floor outside `(0, 1)`, a clip fraction outside `(0, 1]` or a
    /// negative initial scale; [`SbnError::Limit`] if the `J x K x K` state would not fit in
    /// memory.
    pub fn build(self) -> Result<SbnConfig, SbnError> {
        let mut cfg = self.cfg;
        let small = cfg
            .visible
            .saturating_mul(cfg.hidden)
            .saturating_mul(cfg.hidden)
            <= 200_000;
        cfg.g_release = self.g_release.unwrap_or(if small {
            GRelease::PerUnit
        } else {
            GRelease::Pooled
        });
        cfg.check()?;
        Ok(cfg)
    }
}
