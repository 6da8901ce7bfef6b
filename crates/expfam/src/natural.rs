//! Natural-parameter vectors as a value type: the algebra DP-SEP and SVI do on them.
//!
//! Every natural-parameter type of this crate (`DVector<f64>` for the flat families,
//! [`GaussianNatural`](crate::GaussianNatural), [`DiagGaussianNatural`](crate::DiagGaussianNatural))
//! implements [`NaturalParameters`]: addition (multiplying densities), subtraction (dividing them:
//! the EP cavity), scaling (powers of a factor), the Euclidean (L2) norm of the flattened
//! parameter vector, clipping to a norm bound `C` (DP-SEP, 002 Algorithm 3), and the damped
//! interpolation `(1 - rho) lambda + rho lambda_hat` of stochastic variational inference.
//!
//! These operations are pure arithmetic: whether the result is still a valid member of the family
//! is checked by the family's `from_natural` (or the Gaussians' `check_proper`).

use crate::error::{ExpFamError, Result};
use nalgebra::DVector;

/// The outcome of [`NaturalParameters::clip_to_norm`].
#[derive(Debug, Clone, PartialEq)]
pub struct Clipped<T> {
    /// The clipped parameters (`value.l2_norm() <= bound`, up to rounding).
    pub value: T,
    /// Whether the input was over the bound and had to be scaled down.
    pub was_clipped: bool,
    /// The L2 norm of the input before clipping.
    pub norm_before: f64,
}

/// Vector-space algebra on natural parameters.
///
/// Implementors provide element access and shape-checked element-wise combination; the
/// operations used by SVI and DP-SEP are provided on top.
///
/// # Example
/// ```
/// use expfam::NaturalParameters;
/// use nalgebra::DVector;
/// let a = DVector::from_vec(vec![3.0, 4.0]);
/// assert_eq!(a.l2_norm(), 5.0);
/// let c = a.clip_to_norm(1.0).unwrap();
/// assert!(c.was_clipped && (c.value.l2_norm() - 1.0).abs() < 1e-15);
/// let half = a.damped_toward(&DVector::zeros(2), 0.5).unwrap();
/// assert_eq!(half[0], 1.5);
/// ```
pub trait NaturalParameters: Clone + Sized {
    /// Number of scalar coordinates in the flattened vector.
    fn num_values(&self) -> usize;
    /// Calls `f` on every coordinate of the flattened vector (a fixed, documented order).
    fn for_each_value(&self, f: &mut dyn FnMut(f64));
    /// Applies `f` to every coordinate.
    fn map_values(&self, f: &dyn Fn(f64) -> f64) -> Self;
    /// Combines two parameter sets coordinate-wise.
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`] if the shapes differ.
    fn zip_values(&self, other: &Self, f: &dyn Fn(f64, f64) -> f64) -> Result<Self>;

    /// `self + other` (the natural parameters of the normalised product of the two densities).
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`] if the shapes differ.
    fn try_add(&self, other: &Self) -> Result<Self> {
        self.zip_values(other, &|a, b| a + b)
    }

    /// `self - other` (the natural parameters of the ratio of densities, e.g. the EP cavity).
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`] if the shapes differ.
    fn try_sub(&self, other: &Self) -> Result<Self> {
        self.zip_values(other, &|a, b| a - b)
    }

    /// `c * self` (the density raised to the power `c`).
    fn scale(&self, c: f64) -> Self {
        self.map_values(&|a| c * a)
    }

    /// Euclidean inner product of the flattened vectors.
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`] if the shapes differ.
    fn dot(&self, other: &Self) -> Result<f64> {
        let prod = self.zip_values(other, &|a, b| a * b)?;
        let mut s = 0.0;
        prod.for_each_value(&mut |x| s += x);
        Ok(s)
    }

    /// Whether every coordinate is finite.
    fn is_finite(&self) -> bool {
        let mut ok = true;
        self.for_each_value(&mut |x| ok &= x.is_finite());
        ok
    }

    /// L2 norm of the flattened vector (for a matrix block: its Frobenius norm), computed with
    /// scaling so it neither overflows nor underflows.
    fn l2_norm(&self) -> f64 {
        let mut scale = 0.0_f64;
        self.for_each_value(&mut |x| scale = scale.max(x.abs()));
        if scale == 0.0 || !scale.is_finite() {
            return scale;
        }
        let mut s = 0.0;
        self.for_each_value(&mut |x| {
            let y = x / scale;
            s += y * y;
        });
        scale * s.sqrt()
    }

    /// Scales the vector down to L2 norm `bound` if it is longer: `x * min(1, C / ||x||)`.
    ///
    /// This is the clipping of DP-SEP (002 Algorithm 3, steps 6 and 9); the norm is over the whole
    /// flattened vector, so the clipped value is a valid argument for sensitivity `2 gamma C / N`.
    ///
    /// # Errors
    /// [`ExpFamError::OutOfDomain`] / [`ExpFamError::NonFinite`] if `bound` is not finite and
    /// `> 0`, [`ExpFamError::NonFinite`] if a coordinate is not finite.
    fn clip_to_norm(&self, bound: f64) -> Result<Clipped<Self>> {
        crate::check::positive("clip bound", bound)?;
        let norm = self.l2_norm();
        if !self.is_finite() {
            return Err(ExpFamError::NonFinite {
                name: "natural parameters",
                value: f64::NAN,
            });
        }
        if norm <= bound {
            return Ok(Clipped {
                value: self.clone(),
                was_clipped: false,
                norm_before: norm,
            });
        }
        let factor = bound / norm;
        Ok(Clipped {
            value: self.scale(factor),
            was_clipped: true,
            norm_before: norm,
        })
    }

    /// The damped (SVI) step `(1 - rho) * self + rho * target`, `rho` in `[0, 1]`.
    ///
    /// With a Robbins-Monro `rho_t = (tau0 + t)^-kappa` (the VIPS engine's `StepSize`) this is the
    /// stochastic variational update `lambda <- (1 - rho_t) lambda + rho_t lambda_hat` (Hoffman et
    /// al. 2013); in DP-SEP the same
    /// convex combination with `rho = gamma / N` updates the shared factor.
    ///
    /// # Errors
    /// [`ExpFamError::OutOfDomain`] if `rho` is outside `[0, 1]` (or NaN),
    /// [`ExpFamError::DimensionMismatch`] if the shapes differ.
    fn damped_toward(&self, target: &Self, rho: f64) -> Result<Self> {
        crate::check::finite("rho", rho)?;
        if !(0.0..=1.0).contains(&rho) {
            return Err(ExpFamError::OutOfDomain {
                name: "rho",
                value: rho,
                requirement: "in [0, 1]",
            });
        }
        self.zip_values(target, &|a, b| (1.0 - rho) * a + rho * b)
    }
}

impl NaturalParameters for DVector<f64> {
    fn num_values(&self) -> usize {
        self.len()
    }
    fn for_each_value(&self, f: &mut dyn FnMut(f64)) {
        self.iter().for_each(|&x| f(x));
    }
    fn map_values(&self, f: &dyn Fn(f64) -> f64) -> Self {
        self.map(f)
    }
    fn zip_values(&self, other: &Self, f: &dyn Fn(f64, f64) -> f64) -> Result<Self> {
        crate::check::same_len("natural parameters", self.len(), other.len())?;
        Ok(self.zip_map(other, f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_short_vectors() {
        let a = DVector::from_vec(vec![0.3, 0.4]);
        let c = a.clip_to_norm(1.0).unwrap();
        assert!(!c.was_clipped);
        assert_eq!(c.value, a);
        assert!((c.norm_before - 0.5).abs() < 1e-16);
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let a = DVector::from_vec(vec![0.3, 0.4]);
        let b = DVector::from_vec(vec![0.3]);
        assert!(a.try_add(&b).is_err());
        assert!(a.clip_to_norm(0.0).is_err());
        assert!(a.clip_to_norm(f64::NAN).is_err());
        assert!(a.damped_toward(&a, 1.5).is_err());
        assert!(a.damped_toward(&a, f64::NAN).is_err());
        let n = DVector::from_vec(vec![f64::NAN, 1.0]);
        assert!(n.clip_to_norm(1.0).is_err());
    }

    #[test]
    fn norm_does_not_overflow() {
        let a = DVector::from_vec(vec![3e300, 4e300]);
        assert!((a.l2_norm() / 5e300 - 1.0).abs() < 1e-15);
    }
}
