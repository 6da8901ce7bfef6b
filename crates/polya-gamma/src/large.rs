//! Exact sampler for large shapes, O(1) in `b`, built on the tangent lines to `ln f` (an
//! adaptive-rejection-style envelope, valid because `PG(b, z)` is log-concave for `b >= 1`: it
//! is a limit of sums of independent `Gamma(b)` variables, each log-concave for `b >= 1`, and
//! log-concavity is preserved by convolution and weak limits) and the chord squeeze between
//! the tangent points.
//!
//! Tangents are taken at `mean + sd * {-3.75, -3.625, ..., 3.75}` (61 points); their values
//! and slopes come from the Fourier series (relative accuracy ~1e-14). To absorb that error the
//! envelope is raised and the squeeze lowered by `1e-10` in log space, so both stay on the
//! right side of the true density.
//!
//! **Fast path.** `[c_0, c_last]` is cut into 254 equal bins; on each bin the envelope is
//! replaced by the constant `upper` = the hull's maximum over the bin, and the constant
//! `lower` = the chord's minimum is a squeeze (both extremes sit at bin ends or knots since hull
//! and chord are concave and piecewise linear). The region under the envelope is split into
//! 254 **lower rectangles** `[bin] x [0, lower]`, lying wholly under the density, 254 **caps**
//! `[bin] x (lower, upper]`, and the two exponential tails of the hull; a proposal picks one of
//! these 510 pieces by its area with a 512-column Walker alias table (one `u64`: 9 bits of
//! column, 55 bits of coin) and is uniform under it. A point under a lower rectangle is
//! accepted without looking at its height, so it needs only its abscissa: one more `u64`
//! (about 98.5% of proposals at `b = 100`: two `u64`s, no `exp`, `ln` or density). A point
//! in a cap draws its height `v` uniform on `(lower, upper]`, and `ln v` is compared with the
//! chord squeeze and the hull at `x`, and only in the band between them with the Fourier
//! density ([`crate::fourier::FourierTable`], the series with its `x`-free factors
//! precomputed). A rectangle-plus-cap pair is the same uniform point under `upper` as one
//! rectangle would give, so acceptance is exactly `u g(x) <= f(x)` for the envelope `g`: the
//! law produced differs from `PG(b, z)` only through the density's ~1e-14 relative rounding
//! error (and the `2^-55` resolution of the alias coin), the level of rounding in every other
//! method here.

use rand::Rng;

use crate::fourier::{Fourier, FourierTable};
use crate::proposals::{MAX_TRIES, exp1, uniform};

/// Number of tangent points.
const POINTS: usize = 61;
/// Spacing of the tangent points in standard deviations (centred on the mean).
const SPACING: f64 = 0.125;
/// Log-space safety margin on the envelope and the squeeze.
const MARGIN: f64 = 1e-10;
/// Equal-width bins covering `[c_0, c_last]`.
const BINS: usize = 254;
/// Columns of the alias table: the left tail (category 0), [`BINS`] lower rectangles
/// (`1..=BINS`), [`BINS`] caps (`BINS + 1..=2 BINS`), the right tail ([`RIGHT_TAIL`]) and two
/// empty pads. A power of two, so the top bits of one `u64` pick a column exactly uniformly.
const CATEGORIES: usize = 512;
/// Bits of the `u64` used for the column.
const CATEGORY_BITS: u32 = 9;
/// Bits of the same `u64` used for the alias coin (an integer compared with the threshold).
const COIN_BITS: u32 = 64 - CATEGORY_BITS;
/// Category of the right tail.
const RIGHT_TAIL: usize = 2 * BINS + 1;
/// `2^-53`: a `u64 >> 11` times this is uniform on `[0, 1)`.
const UNIT: f64 = 1.0 / (1u64 << 53) as f64;

/// Envelope for one `(b, z)`.
///
/// The proposal is a mixture of `BINS` rectangles on `[c_0, c_last]` (height `upper[i]` = the
/// maximum of the tangent hull over the bin), each split at `lower[i]` (the minimum of the
/// chord squeeze over the bin) into a lower rectangle and a cap, and two exponential tails
/// (the first and last tangent lines), picked with a Walker alias table. A proposal under a
/// lower rectangle is accepted at once (about 98.5% of draws at `b = 100`: one alias lookup
/// and one uniform, no `exp`/`ln`). In a cap, `ln v` is compared with the chord squeeze and
/// tangent hull at `x`, and only in the thin band between them (about 1% of proposals) with the
/// Fourier density.
#[derive(Debug, Clone)]
pub(crate) struct LargeSampler {
    fourier: FourierTable,
    c: [f64; POINTS],
    /// `ln f(c_j) - ln_ref`.
    lf: [f64; POINTS],
    /// `d ln f / dx` at `c_j`.
    slope: [f64; POINTS],
    /// Tangent intersections `z_j` between pieces `j` and `j + 1`.
    knots: [f64; POINTS - 1],
    ln_ref: f64,
    /// Bin width times `2^-53`: the abscissa in a bin is `offset + width_unit * (u64 >> 11)`.
    width_unit: f64,
    /// `e^{max hull}` over each bin (relative to `e^{ln_ref}`).
    upper: [f64; BINS],
    /// `e^{min chord}` over each bin.
    lower: [f64; BINS],
    /// Left end of the bin of each rectangle and cap category (0 for the others).
    offset: [f64; CATEGORIES],
    /// Alias-table thresholds: keep the column when the 55-bit coin is below it
    /// (`2^55` = always).
    keep: [u64; CATEGORIES],
    /// Alias-table alternatives.
    alias: [u16; CATEGORIES],
    /// `1 - e^{-s_0 c_0}` for the left tail (inversion on `(0, c_0]`).
    left_span: f64,
    /// Total envelope mass (relative to `e^{ln_ref}`).
    total: f64,
}

impl LargeSampler {
    /// Builds the envelope; `None` if the tangents are unusable or the Fourier series does not
    /// fit [`crate::fourier::TABLE_TERMS`] terms (never expected for `b >= 6`
    /// with `sd / mean > 1e-6`; callers fall back to the exact piecewise sampler).
    pub(crate) fn new(fourier: Fourier, mean: f64, sd: f64) -> Option<Self> {
        let fourier = fourier.table()?;
        let mut c = [0.0; POINTS];
        let mut lf = [0.0; POINTS];
        let mut slope = [0.0; POINTS];
        for j in 0..POINTS {
            let x = mean + sd * SPACING * (j as f64 - (POINTS - 1) as f64 / 2.0);
            if x <= 0.0 {
                return None;
            }
            let (f, df) = fourier.density_and_slope(x);
            if f.is_nan() || f <= 0.0 || !df.is_finite() {
                return None;
            }
            c[j] = x;
            lf[j] = f.ln();
            slope[j] = df / f;
        }
        if slope[0].is_nan()
            || slope[0] <= 0.0
            || slope[POINTS - 1].is_nan()
            || slope[POINTS - 1] >= 0.0
        {
            return None;
        }
        let ln_ref = lf.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        for v in lf.iter_mut() {
            *v -= ln_ref;
        }
        let mut knots = [0.0; POINTS - 1];
        for j in 0..POINTS - 1 {
            let ds = slope[j] - slope[j + 1];
            let k = if ds > 0.0 {
                (lf[j + 1] - lf[j] - slope[j + 1] * c[j + 1] + slope[j] * c[j]) / ds
            } else {
                0.5 * (c[j] + c[j + 1])
            };
            knots[j] = k.clamp(c[j], c[j + 1]);
        }
        let lo = c[0];
        let hi = c[POINTS - 1];
        let width = (hi - lo) / BINS as f64;
        let mut s = LargeSampler {
            fourier,
            c,
            lf,
            slope,
            knots,
            ln_ref,
            width_unit: width * UNIT,
            upper: [0.0; BINS],
            lower: [0.0; BINS],
            offset: [0.0; CATEGORIES],
            keep: [1 << COIN_BITS; CATEGORIES],
            alias: [0; CATEGORIES],
            left_span: -(-slope[0] * lo).exp_m1(),
            total: 0.0,
        };
        let mut mass = [0.0; CATEGORIES];
        for i in 0..BINS {
            let a = lo + width * i as f64;
            let b = if i == BINS - 1 {
                hi
            } else {
                lo + width * (i + 1) as f64
            };
            // The hull (minimum of tangents) and the chord interpolant are both concave and
            // piecewise linear: the hull's maximum over [a, b] is at an end or at a knot
            // inside, the chord's minimum at an end.
            let mut max_hull = s.hull_at(a).max(s.hull_at(b));
            for &k in s.knots.iter().filter(|&&k| k > a && k < b) {
                max_hull = max_hull.max(s.hull_at(k));
            }
            let min_chord = s.squeeze(a).min(s.squeeze(b.min(hi)));
            s.upper[i] = max_hull.exp();
            s.lower[i] = if min_chord.is_finite() {
                min_chord.exp().min(s.upper[i])
            } else {
                0.0
            };
            // The last bin's right end is `hi` itself; all bins have width `width` up to
            // rounding, and the draw uses `width` for every bin.
            mass[i + 1] = s.lower[i] * width;
            mass[i + 1 + BINS] = (s.upper[i] - s.lower[i]) * width;
            s.offset[i + 1] = a;
            s.offset[i + 1 + BINS] = a;
        }
        mass[0] = (s.lf[0] + MARGIN).exp() * s.left_span / s.slope[0];
        mass[RIGHT_TAIL] = (s.lf[POINTS - 1] + MARGIN).exp() / (-s.slope[POINTS - 1]);
        let total: f64 = mass.iter().sum();
        if total.is_nan() || total <= 0.0 || total.is_infinite() || mass.iter().any(|m| *m < 0.0) {
            return None;
        }
        s.total = total;
        build_alias(&mass, total, &mut s.keep, &mut s.alias);
        Some(s)
    }

    /// Envelope (upper hull) at `x` on piece `j`, in log space relative to `ln_ref`.
    fn hull(&self, j: usize, x: f64) -> f64 {
        self.lf[j] + self.slope[j] * (x - self.c[j]) + MARGIN
    }

    /// Envelope at any `x > 0` (the tangent piece is found from the knots).
    fn hull_at(&self, x: f64) -> f64 {
        let j = self.knots.partition_point(|&k| k < x);
        self.hull(j, x)
    }

    /// Chord squeeze at `x` (or `-inf` outside `[c_0, c_last]`).
    fn squeeze(&self, x: f64) -> f64 {
        if x < self.c[0] || x > self.c[POINTS - 1] {
            return f64::NEG_INFINITY;
        }
        let k = self.c.partition_point(|&ci| ci <= x).clamp(1, POINTS - 1) - 1;
        let w = (x - self.c[k]) / (self.c[k + 1] - self.c[k]);
        self.lf[k] + w * (self.lf[k + 1] - self.lf[k]) - MARGIN
    }

    /// Exact test `ln_v <= ln f(x) - ln_ref` for a proposal under the envelope, using the
    /// chord squeeze and the hull before the Fourier density.
    #[inline(never)]
    fn accept_slow(&self, x: f64, ln_v: f64) -> bool {
        if ln_v <= self.squeeze(x) {
            return true;
        }
        if ln_v > self.hull_at(x) {
            return false;
        }
        let f = self.fourier.density(x);
        f > 0.0 && ln_v <= f.ln() - self.ln_ref
    }

    /// One draw. The first proposal's fast path (a rectangle and its squeeze) is inlined into
    /// the caller; any proposal it cannot decide is finished, and further proposals made, out
    /// of line by [`LargeSampler::sample_rest`].
    #[inline]
    pub(crate) fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match self.propose(rng) {
            Ok(x) => x,
            Err(pending) => self.sample_rest(rng, pending),
        }
    }

    /// One proposal: `Ok(x)` if it falls under a lower rectangle (accepted), else what is
    /// needed to finish its exact test.
    #[inline(always)]
    fn propose<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<f64, Pending> {
        let r = rng.next_u64();
        let column = (r >> COIN_BITS) as usize;
        let coin = r & ((1u64 << COIN_BITS) - 1);
        let category = if coin < self.keep[column] {
            column
        } else {
            self.alias[column] as usize
        };
        // Rectangles and caps are categories 1..=2 BINS.
        let k = category.wrapping_sub(1);
        if k < 2 * BINS {
            // `>> 11` leaves 53 bits, so the signed conversion is exact and branch-free.
            let u = (rng.next_u64() >> 11) as i64 as f64;
            let x = self.offset[category] + self.width_unit * u;
            return if k < BINS {
                Ok(x)
            } else {
                Err(Pending::Cap { x, bin: k - BINS })
            };
        }
        Err(Pending::Tail {
            left: category == 0,
        })
    }

    /// Finishes the exact test of `pending`, then proposes until acceptance (at most
    /// [`MAX_TRIES`] proposals; acceptance rate `1 / 1.013` per proposal).
    #[inline(never)]
    fn sample_rest<R: Rng + ?Sized>(&self, rng: &mut R, mut pending: Pending) -> f64 {
        let mut x = self.c[POINTS / 2];
        for _ in 0..MAX_TRIES {
            let accepted = match pending {
                Pending::Cap { x: px, bin } => {
                    x = px;
                    // Height uniform on (lower, upper]: the cap part of the rectangle.
                    let (lo, up) = (self.lower[bin], self.upper[bin]);
                    let v = up - (up - lo) * uniform(rng);
                    self.accept_slow(px, v.ln()).then_some(px)
                }
                Pending::Tail { left } => self.tail(rng, left),
            };
            if let Some(t) = accepted {
                return t;
            }
            pending = match self.propose(rng) {
                Ok(t) => return t,
                Err(p) => p,
            };
        }
        x
    }

    /// One proposal from the left (`(0, c_0]`) or right (`[c_last, oo)`) exponential tail of the
    /// envelope, with its exact acceptance test; `None` when rejected. Rare (a few 1e-4 of
    /// proposals), so kept out of line.
    #[cold]
    #[inline(never)]
    fn tail<R: Rng + ?Sized>(&self, rng: &mut R, left: bool) -> Option<f64> {
        let (j, x) = if left {
            // (0, c_0] under tangent 0 (slope > 0): inversion.
            let s = self.slope[0];
            (0, self.c[0] + (-uniform(rng) * self.left_span).ln_1p() / s)
        } else {
            // [c_last, oo) under the last tangent (slope < 0).
            let s = self.slope[POINTS - 1];
            (POINTS - 1, self.c[POINTS - 1] + exp1(rng) / (-s))
        };
        if x.is_nan() || x <= 0.0 || x.is_infinite() {
            return None;
        }
        let ln_v = self.hull(j, x) - exp1(rng);
        self.accept_slow(x, ln_v).then_some(x)
    }
}

/// A proposal the rectangle squeeze could not decide.
#[derive(Debug, Clone, Copy)]
enum Pending {
    /// `x` in bin `bin`, in its cap (height between `lower` and `upper`, drawn later).
    Cap { x: f64, bin: usize },
    /// A tail category: the proposal is drawn and tested in [`LargeSampler::tail`].
    Tail { left: bool },
}

/// Walker/Vose alias table for `mass / total` over [`CATEGORIES`] columns.
/// `keep` holds integer thresholds for a [`COIN_BITS`]-bit coin.
fn build_alias(
    mass: &[f64; CATEGORIES],
    total: f64,
    keep: &mut [u64; CATEGORIES],
    alias: &mut [u16; CATEGORIES],
) {
    let full = (1u64 << COIN_BITS) as f64;
    let mut scaled = [0.0; CATEGORIES];
    let mut small = [0usize; CATEGORIES];
    let mut large = [0usize; CATEGORIES];
    let (mut ns, mut nl) = (0, 0);
    for (i, m) in mass.iter().enumerate() {
        scaled[i] = m * CATEGORIES as f64 / total;
        if scaled[i] < 1.0 {
            small[ns] = i;
            ns += 1;
        } else {
            large[nl] = i;
            nl += 1;
        }
    }
    while ns > 0 && nl > 0 {
        ns -= 1;
        let s = small[ns];
        let l = large[nl - 1];
        keep[s] = (scaled[s].clamp(0.0, 1.0) * full) as u64;
        alias[s] = l as u16;
        scaled[l] -= 1.0 - scaled[s];
        if scaled[l] < 1.0 {
            nl -= 1;
            small[ns] = l;
            ns += 1;
        }
    }
    // Leftovers are 1 up to rounding.
    for &i in large[..nl].iter().chain(small[..ns].iter()) {
        keep[i] = 1 << COIN_BITS;
        alias[i] = i as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::moments::{mean_unchecked, variance_unchecked};

    #[test]
    fn envelope_is_tight() {
        for &(b, z) in &[(100.0, 0.0), (24.0, 0.0), (1000.0, 1000.0), (50.0, 177.5)] {
            let (m, sd) = (mean_unchecked(b, z), variance_unchecked(b, z).sqrt());
            let s = LargeSampler::new(Fourier::new(b, z, m, sd), m, sd).unwrap();
            let mass = s.total * s.ln_ref.exp();
            eprintln!(
                "b={b} z={z}: envelope mass {mass} knots {:?} c {:?}",
                s.knots, s.c
            );
            assert!(mass > 1.0 && mass < 1.02, "b={b} z={z}: {mass}");
        }
    }

    #[test]
    fn rectangles_bracket_the_density() {
        for &(b, z) in &[(100.0, 0.0), (24.0, 2.0), (1000.0, 1000.0), (50.0, 177.5)] {
            let (m, sd) = (mean_unchecked(b, z), variance_unchecked(b, z).sqrt());
            let s = LargeSampler::new(Fourier::new(b, z, m, sd), m, sd).unwrap();
            let mut fast = 0.0;
            for i in 0..BINS {
                let a = s.c[0] + (s.width_unit / UNIT) * i as f64;
                for t in 0..=8 {
                    let x = a + (s.width_unit / UNIT) * t as f64 / 8.0;
                    let f = s.fourier.density(x) / s.ln_ref.exp();
                    assert!(
                        s.lower[i] <= f * (1.0 + 1e-9) && f <= s.upper[i] * (1.0 + 1e-9),
                        "b={b} z={z} bin {i} x={x}: {} <= {f} <= {}",
                        s.lower[i],
                        s.upper[i]
                    );
                }
                fast += s.lower[i] * (s.width_unit / UNIT);
            }
            // Share of proposals accepted by the rectangle squeeze alone.
            let share = fast / s.total;
            assert!(share > 0.9, "b={b} z={z}: {share}");
        }
    }

    #[test]
    fn alias_table_reproduces_the_masses() {
        let (b, z) = (100.0, 2.0);
        let (m, sd) = (mean_unchecked(b, z), variance_unchecked(b, z).sqrt());
        let s = LargeSampler::new(Fourier::new(b, z, m, sd), m, sd).unwrap();
        let mut p = [0.0; CATEGORIES];
        let full = (1u64 << COIN_BITS) as f64;
        for col in 0..CATEGORIES {
            let keep = s.keep[col] as f64 / full;
            p[col] += keep / CATEGORIES as f64;
            p[s.alias[col] as usize] += (1.0 - keep) / CATEGORIES as f64;
        }
        for i in 0..BINS {
            let want = s.lower[i] * (s.width_unit / UNIT) / s.total;
            let got = p[i + 1];
            assert!((got - want).abs() < 1e-12, "bin {i}: {got} vs {want}");
            let want = (s.upper[i] - s.lower[i]) * (s.width_unit / UNIT) / s.total;
            let got = p[i + 1 + BINS];
            assert!((got - want).abs() < 1e-12, "cap {i}: {got} vs {want}");
        }
        assert!(p[CATEGORIES - 2] == 0.0 && p[CATEGORIES - 1] == 0.0);
        let tails = (p[0], p[RIGHT_TAIL]);
        assert!(
            tails.0 > 0.0 && tails.1 > 0.0 && tails.0 + tails.1 < 1e-2,
            "{tails:?}"
        );
    }
}
