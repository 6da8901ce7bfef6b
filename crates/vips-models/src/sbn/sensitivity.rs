//! Per-record bounds of the seven SBN statistics (000 Eq. 61-68), derived for *sums* under
//! add/remove-one neighbouring.
//!
//! Adding or removing one record changes a sum by that record's contribution, so a sum's L2
//! sensitivity is the largest L2 (Frobenius) norm one record's contribution can have. With
//! `p = <z_n>` in `[0, 1]^K` (Bernoulli means), `y_n` in `{0, 1}^J` and
//! `xi0_nj = E[PG(1, c)] = tanh(c/2)/(2c)` in `(0, 1/4]`:
//!
//! | block | per-record contribution | bound |
//! |---|---|---|
//! | s1 | `p - 1/2` (entries in `[-1/2, 1/2]`) | `sqrt(K)/2` |
//! | s2 | `<xi1>` (entries in `(0, 1/4]`) | `sqrt(K)/4` |
//! | s3 | `y - 1/2` (entries `+-1/2`) | `sqrt(J)/2` |
//! | s4 | `<xi0_n>` | `sqrt(J)/4` |
//! | s5 | `<xi0_n> p^T` (`J x K`, entries in `[0, 1/4]`) | `sqrt(JK)/4` |
//! | s6 | `(y - 1/2) p^T` (`J x K`, entries in `[-1/2, 1/2]`) | `sqrt(JK)/2` |
//! | s7 = G_j | `xi0_nj <z z^T>`, `<z z^T> = p p^T + diag(p(1-p))` (entries in `[0, 1]`) | `K/4` each |
//! | Z (pooled) | `<z z^T>` | `K` |
//! | u (residual) | `y - 1/2 - <xi0_n> . (<W> p)` | `sqrt(J)` declared, clipped |
//! | r (residual) | `(y - 1/2 - <c> . <xi0_n>) p^T` | `sqrt(JK)` declared, clipped |
//!
//! `u` and `r` ([`crate::sbn::SbnStatistics::Residual`]) depend on the public `<W>`, `<c>`; their
//! entries are residual-like (`y - sigma(psi)`, in `(-1, 1)` for a fitted model) but not bounded
//! for arbitrary parameters, so their bounds are declared and enforced by the wall's clipping.
//! [`SbnBounds::with_clip_fraction`] scales the bounds of the large blocks below the worst case
//! (clipping again enforces them).
//!
//! The paper's bounds (Eq. 61-68) are for averages over `N` records and use the uncentred `y`
//! and `<z>`; centring at `1/2` halves the bounds of s1, s3 and s6 (the authors' MATLAB divides
//! all but one of them by the batch size; here nothing is divided: these are sums, and the
//! release is divided by the public expected batch size afterwards). Every bound holds by
//! construction; the wall still clips each block to it, so the claim does not depend on this
//! derivation being right.

/// The declared per-record bounds for `J` visible and `K` hidden units.
///
/// # Example
/// ```
/// use vips_models::sbn::SbnBounds;
/// let b = SbnBounds::new(784, 100);
/// assert_eq!(b.s3, 14.0);
/// assert_eq!(b.g_per_unit, 25.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SbnBounds {
    /// `s1 = sum (p - 1/2)`: `sqrt(K)/2`.
    pub s1: f64,
    /// `s2 = sum <xi1>`: `sqrt(K)/4`.
    pub s2: f64,
    /// `s3 = sum (y - 1/2)`: `sqrt(J)/2`.
    pub s3: f64,
    /// `s4 = sum <xi0>`: `sqrt(J)/4`.
    pub s4: f64,
    /// `s5 = sum <xi0> p^T`: `sqrt(JK)/4`.
    pub s5: f64,
    /// `s6 = sum (y - 1/2) p^T`: `sqrt(JK)/2`.
    pub s6: f64,
    /// Each `G_j = sum <xi0_j> <z z^T>`: `K/4`.
    pub g_per_unit: f64,
    /// `Z = sum <z z^T>` (pooled release): `K`.
    pub g_pooled: f64,
    /// `u = sum (y - 1/2 - <xi0> . (<W> p))` ([`crate::sbn::SbnStatistics::Residual`]):
    /// `sqrt(J)`, declared and enforced by clipping.
    pub u: f64,
    /// `r = sum (y - 1/2 - <c> . <xi0>) p^T` ([`crate::sbn::SbnStatistics::Residual`]):
    /// `sqrt(JK)`, declared and enforced by clipping.
    pub r: f64,
}

impl SbnBounds {
    /// The bounds for `J` visible and `K` hidden units.
    pub fn new(visible: usize, hidden: usize) -> Self {
        let (j, k) = (visible as f64, hidden as f64);
        Self {
            s1: k.sqrt() / 2.0,
            s2: k.sqrt() / 4.0,
            s3: j.sqrt() / 2.0,
            s4: j.sqrt() / 4.0,
            s5: (j * k).sqrt() / 4.0,
            s6: (j * k).sqrt() / 2.0,
            g_per_unit: k / 4.0,
            g_pooled: k,
            u: j.sqrt(),
            r: (j * k).sqrt(),
        }
    }

    /// The bounds with `s5`, `s6`, `r` and the `G` blocks scaled by `fraction` (clipping bounds below
    /// the worst case; the wall enforces them by clipping). `fraction` is taken in `(0, 1]`.
    ///
    /// # Example
    /// ```
    /// use vips_models::sbn::SbnBounds;
    /// let b = SbnBounds::new(784, 100).with_clip_fraction(0.5);
    /// assert_eq!((b.s3, b.s6, b.g_pooled), (14.0, 70.0, 50.0));
    /// ```
    pub fn with_clip_fraction(mut self, fraction: f64) -> Self {
        let f = if fraction > 0.0 && fraction <= 1.0 {
            fraction
        } else {
            1.0
        };
        self.s5 *= f;
        self.s6 *= f;
        self.r *= f;
        self.g_per_unit *= f;
        self.g_pooled *= f;
        self
    }
}
