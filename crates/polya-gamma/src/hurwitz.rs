//! Scaled Hurwitz zeta `q^s zeta(s, q) = sum_{j>=0} (1 + j/q)^{-s}` for the cumulant tails.

/// `B_{2j} / (2j)!` for `j = 1..=10`.
const BERNOULLI_OVER_FACTORIAL: [f64; 10] = [
    1.0 / 12.0,
    -1.0 / 720.0,
    1.0 / 30_240.0,
    -1.0 / 1_209_600.0,
    1.0 / 47_900_160.0,
    -691.0 / 1_307_674_368_000.0,
    1.0 / 74_724_249_600.0,
    -3617.0 / 10_670_622_842_880_000.0,
    43_867.0 / 5_109_094_217_170_944_000.0,
    -174_611.0 / 802_857_662_698_291_200_000.0,
];

/// `Z(s) = sum_{j>=0} (1 + j/q)^{-s}` for `s > 1`, `q > 0`.
///
/// Direct summation while terms matter, then Euler-Maclaurin from `Q = q + N` with
/// `Q >= s + 20`, where the Bernoulli terms shrink by at least `(s + 20)^2 / (2 pi Q)^2 <= 1/(4 pi^2)`
/// per step, so ten of them reach below 1e-16. The direct loop stops early once the
/// integral bound on the remainder, `term * (q + j) / (s - 1)`, is below 1e-18 of the sum,
/// and never runs more than `s + 21` steps.
pub(crate) fn scaled_hurwitz_zeta(s: f64, q: f64) -> f64 {
    let n_direct = (s + 20.0 - q).max(0.0).ceil() as u64;
    let mut sum = 0.0;
    let mut j = 0u64;
    while j < n_direct {
        let jf = j as f64;
        let term = (1.0 + jf / q).powf(-s);
        sum += term;
        if j > 0 && term * (1.0 + (q + jf) / (s - 1.0)) < 1e-18 * sum {
            return sum;
        }
        j += 1;
    }
    let big_q = q + j as f64;
    let rho = big_q / q;
    let mut em = big_q / (s - 1.0) + 0.5;
    // rising factorial s (s+1) ... (s + 2i - 2), times Q^{1 - 2i}
    let mut rising = s;
    let mut qpow = 1.0 / big_q;
    for (i, bf) in BERNOULLI_OVER_FACTORIAL.iter().enumerate() {
        if i > 0 {
            let m = 2.0 * i as f64;
            rising *= (s + m - 1.0) * (s + m);
            qpow /= big_q * big_q;
        }
        em += bf * rising * qpow;
    }
    sum + rho.powf(-s) * em
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_zeta_values() {
        // zeta(2, 1) = pi^2 / 6, zeta(4, 1) = pi^4 / 90.
        let pi = core::f64::consts::PI;
        assert!((scaled_hurwitz_zeta(2.0, 1.0) - pi * pi / 6.0).abs() < 1e-15);
        assert!((scaled_hurwitz_zeta(4.0, 1.0) - pi.powi(4) / 90.0).abs() < 1e-15);
        // zeta(2, 1/2) = pi^2 / 2, scaled by (1/2)^2.
        assert!((scaled_hurwitz_zeta(2.0, 0.5) - 0.25 * pi * pi / 2.0).abs() < 1e-15);
    }
}
