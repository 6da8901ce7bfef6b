//! Self-composition by repeated squaring and composition of different mechanisms, under a hard
//! cap on the FFT length (the grid coarsens automatically when the cap would be exceeded).

use super::convolve::Convolver;
use super::discrete::{Bound, DiscretePld};
use super::discretise::discretise;
use super::loss::{Direction, SubsampledGaussian};

/// Builds the composed PLD of `(mechanism, count)` parts in one direction and bound.
pub(crate) struct Composer {
    conv: Convolver,
    /// Longest FFT allowed (the memory cap).
    max_fft_len: usize,
    /// Mass truncated per convolution (into `+inf` when pessimistic).
    tail_mass: f64,
    /// Current grid spacing (only ever doubles).
    step: f64,
}

impl Composer {
    /// A composer starting at grid spacing `step`.
    pub(crate) fn new(step: f64, max_fft_len: usize, tail_mass: f64) -> Self {
        Self {
            conv: Convolver::new(),
            max_fft_len,
            tail_mass,
            step,
        }
    }

    fn fits(&self, la: usize, lb: usize) -> bool {
        Convolver::len_for(la, lb) <= self.max_fft_len
    }

    /// Brings both PLDs to the same (coarsest) grid and coarsens both until their convolution
    /// fits under the cap.
    fn align(&mut self, a: &mut DiscretePld, b: &mut DiscretePld) {
        while a.step < b.step {
            a.coarsen();
        }
        while b.step < a.step {
            b.coarsen();
        }
        while !self.fits(a.mass.len(), b.mass.len()) {
            a.coarsen();
            b.coarsen();
        }
        self.step = self.step.max(a.step);
    }

    /// The PLD of `count` independent runs of `mechanism`.
    pub(crate) fn self_composed(
        &mut self,
        mechanism: &SubsampledGaussian,
        direction: Direction,
        bound: Bound,
        count: u64,
    ) -> DiscretePld {
        let (lo, hi) = mechanism.loss_range(direction);
        // The single-step grid must itself leave room for one convolution.
        while (hi - lo) / self.step + 3.0 > (self.max_fft_len / 2) as f64 {
            self.step *= 2.0;
        }
        let mut base = discretise(mechanism, direction, self.step, bound);
        base.truncate(self.tail_mass);
        let mut result: Option<DiscretePld> = None;
        let mut k = count;
        loop {
            if k & 1 == 1 {
                result = Some(match result {
                    None => base.clone(),
                    Some(mut r) => {
                        self.align(&mut r, &mut base);
                        self.conv.compose(&r, &base, self.tail_mass)
                    }
                });
            }
            k >>= 1;
            if k == 0 {
                break;
            }
            while !self.fits(base.mass.len(), base.mass.len()) {
                base.coarsen();
            }
            self.step = self.step.max(base.step);
            base = self.conv.compose(&base, &base, self.tail_mass);
        }
        result.unwrap_or_else(|| DiscretePld::identity(self.step, bound))
    }

    /// The composition of all `parts` (each a mechanism run `count` times).
    pub(crate) fn composed(
        &mut self,
        parts: &[(SubsampledGaussian, u64)],
        direction: Direction,
        bound: Bound,
    ) -> DiscretePld {
        let mut acc: Option<DiscretePld> = None;
        for (mechanism, count) in parts {
            let mut p = self.self_composed(mechanism, direction, bound, *count);
            acc = Some(match acc {
                None => p,
                Some(mut a) => {
                    self.align(&mut a, &mut p);
                    self.conv.compose(&a, &p, self.tail_mass)
                }
            });
        }
        acc.unwrap_or_else(|| DiscretePld::identity(self.step, bound))
    }
}
