//! `PolyaGamma`: the `rand` distribution `PG(b, z)` for one `(b, z)`.

use rand::Rng;
use rand::distr::Distribution;

use crate::error::{Error, check_shape, check_tilt};
use crate::moments::{cumulant_unchecked, mean_unchecked, variance_unchecked};
use crate::shape::{Plan, Tilted};

/// The Pólya-Gamma distribution `PG(b, z)`, `b > 0`, `z` real (Polson, Scott & Windle 2013):
/// the law of `(1 / (2 pi^2)) sum_{k>=1} g_k / ((k - 1/2)^2 + z^2 / (4 pi^2))` with
/// `g_k ~ Gamma(b, 1)` independent. Its density is
/// `cosh^b(z/2) e^{-z^2 x / 2} f(x | b, 0)` and its Laplace transform
/// `E[e^{-t X}] = cosh^b(z/2) / cosh^b(sqrt(z^2/4 + t/2))`.
///
/// Every draw is exact (no truncated sums, no normal or saddle-point approximation):
/// Devroye's method for `b = 1`, sums of it for `b = 2, 3, 4`, the alternate method with the
/// corrected `(pi/2)^h` constant for other `b >= 1` (in exact pieces of shape `<= 4`), a
/// new exact method for `b < 1`, and for `b >= 24` an O(1)-in-`b` rejection sampler from a
/// log-concave tangent envelope with acceptance against the Fourier density; see
/// docs/polya-gamma.md.
///
/// # Example
/// ```
/// use polya_gamma::PolyaGamma;
/// use rand::distr::Distribution;
/// use rand::SeedableRng;
/// let pg = PolyaGamma::new(1.0, 2.0).unwrap();
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(1);
/// let x: f64 = pg.sample(&mut rng);
/// assert!(x > 0.0);
/// assert!((pg.mean() - (1.0f64).tanh() / 4.0).abs() < 1e-16);
/// ```
#[derive(Debug, Clone)]
pub struct PolyaGamma {
    b: f64,
    z: f64,
    plan: Plan,
    tilted: Tilted,
}

impl PolyaGamma {
    /// `PG(b, z)`. `z = +-inf` is allowed: every draw is then the limit 0.
    ///
    /// The setup is sized for many draws of this `(b, z)`: for `b >= 24` it builds the
    /// large-shape envelope (a table of Fourier terms, 61 tangents and 254 rectangles, about
    /// 0.4 M instructions). When `z` changes with
    /// every draw, use [`crate::PolyaGammaShape`] instead.
    ///
    /// # Errors
    /// [`Error::InvalidShape`] unless `b` is finite and `> 0`; [`Error::NanTilt`] if `z` is NaN.
    pub fn new(b: f64, z: f64) -> Result<Self, Error> {
        let b = check_shape(b)?;
        let z = check_tilt(z)?;
        let plan = Plan::new(b);
        let tilted = plan.tilted(z, true);
        Ok(PolyaGamma { b, z, plan, tilted })
    }

    /// The shape `b`.
    pub fn shape(&self) -> f64 {
        self.b
    }

    /// The tilt `|z|` (the law is even in `z`).
    pub fn tilt(&self) -> f64 {
        self.z
    }

    /// Exact mean `b tanh(z/2) / (2z)` (see [`crate::mean`]).
    pub fn mean(&self) -> f64 {
        mean_unchecked(self.b, self.z)
    }

    /// Exact variance (see [`crate::variance`]).
    pub fn variance(&self) -> f64 {
        variance_unchecked(self.b, self.z)
    }

    /// Exact `n`-th cumulant (see [`crate::cumulant`]).
    ///
    /// # Errors
    /// [`Error::InvalidOrder`] for `n` outside `1..=MAX_CUMULANT_ORDER`.
    pub fn cumulant(&self, n: u32) -> Result<f64, Error> {
        crate::moments::cumulant(n, self.b, self.z)?;
        Ok(cumulant_unchecked(n, self.b, self.z))
    }

    /// Fills `out` with independent draws of `PG(b, z)`; the setup is shared by all draws.
    ///
    /// # Example
    /// ```
    /// use polya_gamma::PolyaGamma;
    /// use rand::SeedableRng;
    /// let pg = PolyaGamma::new(2.5, 0.0).unwrap();
    /// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(3);
    /// let mut buf = vec![0.0; 1000];
    /// pg.fill(&mut rng, &mut buf);
    /// let m = buf.iter().sum::<f64>() / 1000.0;
    /// assert!((m - 2.5 / 4.0).abs() < 0.05);
    /// ```
    pub fn fill<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f64]) {
        for o in out.iter_mut() {
            *o = self.plan.sample(rng, &self.tilted);
        }
    }
}

impl Distribution<f64> for PolyaGamma {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        self.plan.sample(rng, &self.tilted)
    }
}
