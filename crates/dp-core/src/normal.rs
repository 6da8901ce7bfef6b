//! The standard normal CDF in log space (private helpers for calibration and audits).

use special::Error as _;

const FRAC_1_SQRT_2: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// `0.5 ln(2 pi)`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_7;

/// `ln Phi(x)` for the standard normal CDF, accurate to a few ulp over the whole real line.
///
/// For `x >= 0` uses `ln1p(-erfc(x/sqrt2)/2)`; for `-30 < x < 0` `ln(erfc(-x/sqrt2)/2)` (libm's
/// `erfc` keeps full relative accuracy in the tail); below `-30` the asymptotic series
/// `ln Phi(x) = -x^2/2 - ln(-x) - ln(2 pi)/2 + ln(1 - 1/x^2 + 3/x^4 - ...)`, whose truncation
/// error there is below `1e-20`.
pub(crate) fn ln_ndtr(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x >= 0.0 {
        (-0.5 * (x * FRAC_1_SQRT_2).compl_error()).ln_1p()
    } else if x > -30.0 {
        (0.5 * (-x * FRAC_1_SQRT_2).compl_error()).ln()
    } else if x == f64::NEG_INFINITY {
        f64::NEG_INFINITY
    } else {
        let inv_x2 = 1.0 / (x * x);
        // sum_{k>=0} (-1)^k (2k-1)!! / x^(2k)
        let mut term = 1.0;
        let mut series = 1.0;
        for k in 1..=12 {
            term *= -((2 * k - 1) as f64) * inv_x2;
            series += term;
        }
        -0.5 * x * x - (-x).ln() - HALF_LN_2PI + series.ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_known_values() {
        // Phi(0) = 1/2, Phi(-1.959963984540054) = 0.025
        assert!((ln_ndtr(0.0) - 0.5f64.ln()).abs() < 1e-15);
        assert!((ln_ndtr(-1.959_963_984_540_054).exp() - 0.025).abs() < 1e-15);
        // ln Phi(-40) from mpmath: -804.608442013754...
        let reference = -804.608_442_013_754_5;
        assert!((ln_ndtr(-40.0) - reference).abs() / reference.abs() < 1e-14);
    }

    #[test]
    fn accurate_on_both_sides_of_the_series_switch() {
        // mpmath (60 digits): ln Phi(-30.5), ln Phi(-29.5)
        for (x, reference) in [
            (-30.5, -469.462_737_322_912_1),
            (-29.5, -439.429_474_609_150_25),
        ] {
            let got: f64 = ln_ndtr(x);
            assert!(
                (got - reference).abs() / reference.abs() < 1e-14,
                "{x}: {got}"
            );
        }
    }
}
