//! `PolyaGammaShape`: the setup for one shape `b`, reused across many tilts `z`
//! (the Gibbs workload, where every observation has its own `z`).

use rand::Rng;

use crate::error::{Error, check_shape, check_tilt};
use crate::fourier::Fourier;
use crate::jstar::{ShapeSampler, Tilt};
use crate::large::LargeSampler;
use crate::moments::{mean_unchecked, variance_unchecked};
use crate::proposals::normal;

/// Largest shape of one exact piece (the alternate method's range).
const MAX_CHUNK_SHAPE: f64 = 4.0;
/// From this shape on, one `(b, z)` with many draws uses the O(1) large-shape sampler.
pub(crate) const LARGE_SHAPE_FIXED_TILT: f64 = 24.0;
/// From this shape on, a fresh tilt per draw also uses it (its setup costs ~7 Fourier sums).
pub(crate) const LARGE_SHAPE_PER_DRAW: f64 = 4096.0;
/// The large-shape sampler is used only while `mean / sd` is below this (its density loses
/// about `1e-16 * mean / sd` relative accuracy).
const LARGE_MAX_MEAN_OVER_SD: f64 = 1e5;
/// Beyond this many exact pieces a draw would take too long; see [`Plan::tilted`].
const MAX_PIECES: u64 = 1 << 20;

/// How `PG(b, .)` is assembled from `J*` draws: `count` independent `J*(h)` with
/// `h = b / count`.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    b: f64,
    count: u64,
    piece: ShapeSampler,
}

/// Everything needed to draw `PG(b, z)` for one tilt.
#[derive(Debug, Clone)]
#[allow(
    clippy::large_enum_variant,
    reason = "kept inline: no allocation per draw"
)]
pub(crate) enum Tilted {
    /// `z = +-inf`: the point mass at 0.
    Zero,
    /// Sum of `count` exact `J*(h)` draws.
    Pieces(Tilt),
    /// The O(1) large-shape sampler.
    Large(LargeSampler),
    /// `sd / mean < 1e-14`: every exact draw rounds to within a few ulp of the mean, so a
    /// normal draw with the exact mean and sd is exact to rounding.
    Degenerate { mean: f64, sd: f64 },
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
            ((b / MAX_CHUNK_SHAPE).ceil()).min(u64::MAX as f64) as u64
        };
        let h = if count as f64 == b {
            1.0
        } else {
            b / count as f64
        };
        Plan {
            b,
            count,
            piece: ShapeSampler::new(h.clamp(f64::MIN_POSITIVE, MAX_CHUNK_SHAPE)),
        }
    }

    /// Setup for `PG(b, z)`, `z = |z|`. `amortized` says many draws will share it.
    pub(crate) fn tilted(&self, z: f64, amortized: bool) -> Tilted {
        if z.is_infinite() {
            return Tilted::Zero;
        }
        let b = self.b;
        let threshold = if amortized {
            LARGE_SHAPE_FIXED_TILT
        } else {
            LARGE_SHAPE_PER_DRAW
        };
        if b >= threshold || self.count > MAX_PIECES {
            let mean = mean_unchecked(b, z);
            let sd = variance_unchecked(b, z).sqrt();
            if sd < 1e-14 * mean || sd.is_nan() || sd <= 0.0 {
                return Tilted::Degenerate { mean, sd };
            }
            if mean <= LARGE_MAX_MEAN_OVER_SD * sd || self.count > MAX_PIECES {
                let fourier = Fourier::new(b, z, mean, sd);
                if let Some(large) = LargeSampler::new(fourier, mean, sd) {
                    return Tilted::Large(large);
                }
            }
        }
        Tilted::Pieces(self.piece.tilt(0.5 * z))
    }

    /// One draw of `PG(b, z)` with a setup made for this draw only (`z = |z|`). The common
    /// case (exact pieces) avoids building the large [`Tilted`] value.
    #[inline]
    pub(crate) fn sample_fresh<R: Rng + ?Sized>(&self, rng: &mut R, z: f64) -> f64 {
        if z.is_finite() && self.b < LARGE_SHAPE_PER_DRAW && self.count <= MAX_PIECES {
            let tilt = self.piece.tilt_per_draw(0.5 * z);
            let mut total = 0.0;
            for _ in 0..self.count {
                total += self.piece.sample(rng, &tilt);
            }
            return 0.25 * total;
        }
        let tilted = self.tilted(z, false);
        self.sample(rng, &tilted)
    }

    /// One draw of `PG(b, z)` given its setup.
    #[inline]
    pub(crate) fn sample<R: Rng + ?Sized>(&self, rng: &mut R, tilted: &Tilted) -> f64 {
        match tilted {
            Tilted::Zero => 0.0,
            Tilted::Pieces(tilt) => {
                let mut total = 0.0;
                for _ in 0..self.count {
                    total += self.piece.sample(rng, tilt);
                }
                0.25 * total
            }
            Tilted::Large(large) => large.sample(rng),
            Tilted::Degenerate { mean, sd } => (mean + sd * normal(rng)).max(0.0),
        }
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
        self.plan.sample_fresh(rng, z)
    }

    /// Writes one draw of `PG(b, z[i])` into `out[i]` for every `i`.
    ///
    /// All tilts are validated before anything is drawn, so on error `out` is untouched.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] if the slices differ in length; [`Error::NanTilt`] if any `z`
    /// is NaN.
    pub fn fill_for_tilts<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        z: &[f64],
        out: &mut [f64],
    ) -> Result<(), Error> {
        if z.len() != out.len() {
            return Err(Error::DimensionMismatch {
                what: "output slots (one per tilt)",
                expected: z.len(),
                found: out.len(),
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
