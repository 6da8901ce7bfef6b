//! `PolyaGammaShape`: the setup for one shape `b`, reused across many tilts `z`
//! (the Gibbs workload, where every observation has its own `z`).

use rand::Rng;

use crate::error::{Error, check_shape, check_tilt};
use crate::jstar::{ShapeSampler, Tilt};

/// Largest number of exact pieces a draw is split into before the shape counts as "large".
const MAX_CHUNK_SHAPE: f64 = 4.0;

/// How `PG(b, .)` is assembled from `J*` draws: `count` independent `J*(h)` with
/// `h = b / count`.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) count: u64,
    pub(crate) piece: ShapeSampler,
}

impl Plan {
    pub(crate) fn new(b: f64) -> Self {
        let count = if b < 1.0 {
            1
        } else if b <= MAX_CHUNK_SHAPE && b.fract() == 0.0 {
            // Small integer b: sums of Devroye draws.
            b as u64
        } else if b <= MAX_CHUNK_SHAPE {
            1
        } else {
            (b / MAX_CHUNK_SHAPE).ceil() as u64
        };
        let h = if count as f64 == b {
            1.0
        } else {
            b / count as f64
        };
        Plan {
            count,
            piece: ShapeSampler::new(h),
        }
    }

    /// Tilt constants for `PG(b, z)`, `z = |z| < inf` (the `J*` tilt is `z / 2`).
    pub(crate) fn tilt(&self, z: f64) -> Tilt {
        self.piece.tilt(0.5 * z)
    }

    /// One draw of `PG(b, z)` given the tilt constants.
    #[inline]
    pub(crate) fn sample<R: Rng + ?Sized>(&self, rng: &mut R, tilt: &Tilt) -> f64 {
        let mut total = 0.0;
        for _ in 0..self.count {
            total += self.piece.sample(rng, tilt);
        }
        0.25 * total
    }
}

/// Sampler setup for a fixed shape `b`, drawing `PG(b, z)` for any tilt `z` supplied per draw.
///
/// Use it when `z` changes from draw to draw (a Gibbs sweep over observations): the shape-only
/// work (method choice, truncation point, envelopes) is done once in [`PolyaGammaShape::new`];
/// each draw then costs only the tilt-dependent constants (a few `exp`/`erfc`) plus the draw.
/// No allocation happens per draw.
///
/// # Example
/// ```
/// use polya_gamma::PolyaGammaShape;
/// use rand::SeedableRng;
/// let shape = PolyaGammaShape::new(1.0).unwrap();
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(7);
/// let z = [0.0, 1.5, -3.0, 40.0];
/// let mut omega = [0.0; 4];
/// shape.fill_for_tilts(&mut rng, &z, &mut omega).unwrap();
/// assert!(omega.iter().all(|w| *w > 0.0));
/// ```
#[derive(Debug, Clone)]
pub struct PolyaGammaShape {
    b: f64,
    plan: Plan,
}

impl PolyaGammaShape {
    /// Prepares sampling of `PG(b, .)`.
    ///
    /// # Errors
    /// [`Error::InvalidShape`] unless `b` is finite and `> 0`.
    pub fn new(b: f64) -> Result<Self, Error> {
        let b = check_shape(b)?;
        Ok(PolyaGammaShape {
            b,
            plan: Plan::new(b),
        })
    }

    /// The shape `b`.
    pub fn shape(&self) -> f64 {
        self.b
    }

    /// One draw of `PG(b, z)`.
    ///
    /// # Errors
    /// [`Error::NanTilt`] if `z` is NaN (`z = +-inf` returns the limit 0).
    pub fn sample_with_tilt<R: Rng + ?Sized>(&self, rng: &mut R, z: f64) -> Result<f64, Error> {
        let z = check_tilt(z)?;
        Ok(self.sample_unchecked(rng, z))
    }

    /// Draw for a validated `z = |z|`.
    #[inline]
    pub(crate) fn sample_unchecked<R: Rng + ?Sized>(&self, rng: &mut R, z: f64) -> f64 {
        if z.is_infinite() {
            return 0.0;
        }
        let tilt = self.plan.tilt(z);
        self.plan.sample(rng, &tilt)
    }

    /// Writes one draw of `PG(b, z[i])` into `out[i]` for every `i`.
    ///
    /// All tilts are validated before anything is drawn, so on error `out` is untouched.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if the slices differ in length; [`Error::NanTilt`] if any `z`
    /// is NaN.
    pub fn fill_for_tilts<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        z: &[f64],
        out: &mut [f64],
    ) -> Result<(), Error> {
        if z.len() != out.len() {
            return Err(Error::LengthMismatch {
                z_len: z.len(),
                out_len: out.len(),
            });
        }
        if z.iter().any(|v| v.is_nan()) {
            return Err(Error::NanTilt);
        }
        for (o, &zi) in out.iter_mut().zip(z) {
            *o = self.sample_unchecked(rng, zi.abs());
        }
        Ok(())
    }
}
