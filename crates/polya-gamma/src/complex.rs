//! Minimal complex arithmetic for the characteristic function of `PG(b, z)`.

/// A complex number `re + i im`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Complex {
    pub(crate) re: f64,
    pub(crate) im: f64,
}

impl Complex {
    pub(crate) const fn new(re: f64, im: f64) -> Self {
        Complex { re, im }
    }

    pub(crate) fn mul(self, o: Complex) -> Complex {
        Complex::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }

    pub(crate) fn scale(self, s: f64) -> Complex {
        Complex::new(self.re * s, self.im * s)
    }

    pub(crate) fn exp(self) -> Complex {
        let m = self.re.exp();
        let (s, c) = self.im.sin_cos();
        Complex::new(m * c, m * s)
    }

    /// Principal square root (`re >= 0`), computed without cancellation.
    pub(crate) fn sqrt(self) -> Complex {
        if self.re == 0.0 && self.im == 0.0 {
            return self;
        }
        let m = self.re.hypot(self.im);
        if self.re >= 0.0 {
            let r = (0.5 * (m + self.re)).sqrt();
            Complex::new(r, self.im / (2.0 * r))
        } else {
            let i = (0.5 * (m - self.re)).sqrt().copysign(self.im);
            Complex::new(self.im / (2.0 * i), i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqrt_squares_back() {
        let w = Complex::new(-3.0, -4.0).sqrt();
        let back = w.mul(w);
        assert!((back.re + 3.0).abs() < 1e-14 && (back.im + 4.0).abs() < 1e-14);
        assert!(w.re >= 0.0);
    }
}
