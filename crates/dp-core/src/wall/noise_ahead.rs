//! A large release's noise drawn while its sums are computed.
//!
//! The noise does not depend on the data, so on a pool of several threads a release whose
//! noise comes from per-span streams ([`NoiseStreams`]) can draw it alongside the E-step: the
//! calling thread starts on the records while the noise spans wait as one more job, which an
//! idle thread takes (and the threads that run out of records help with). Before, the noise
//! was a pass of its own after the sums, and at the end of the sums one thread often waited
//! for the other's last chunk of records. The values are the same bit for bit: each entry is
//! `std z` drawn from the same span stream in the same order, then `(sum + std z) / expected`
//! is formed after the sums, the same arithmetic as the fused pass of one thread
//! ([`crate::gaussian::NoiseSource::noised_normalised`]).
//!
//! Not for symmetric blocks (Analyze-Gauss noises the packed sum in place) nor for a pool of one
//! thread (nothing to overlap): those keep the fused pass.

use nalgebra::{DMatrix, DVector};
use rand::rngs::ChaCha20Rng;
use rayon::prelude::*;

use super::BlockValue;
use super::spec::{BlockShape, ReleaseSpec};
use crate::gaussian::{NOISE_SPAN, NoiseStreams, SERIAL_NOISE_ENTRIES, spans_of};

/// The shapes whose noise can be drawn ahead.
#[derive(Clone, Copy)]
enum Shape {
    Vector,
    Matrix { rows: usize, cols: usize },
}

/// One release's noise, drawn ahead into its value buffers (`std z` per entry).
pub(super) struct NoiseAhead {
    streams: NoiseStreams,
    shapes: Vec<Shape>,
    /// One buffer per block, in spec order: empty with room for the block until
    /// [`Self::alongside`] sizes and fills it with `std z` on the thread drawing the noise (so
    /// the calling thread does not spend a pass over the block zeroing it first).
    values: Vec<Vec<f64>>,
    /// Each block's stored entries.
    lens: Vec<usize>,
}

impl NoiseAhead {
    /// The noise of a release of `spec` with drawn sum stds `drawn`, if it is to be drawn ahead:
    /// a pool of more than one thread, a release above [`SERIAL_NOISE_ENTRIES`] entries (so its
    /// noise comes from streams), every block noised and none symmetric. The release's stream
    /// key is taken from `rng` now, where the fused pass takes it after the sums (nothing else
    /// draws from `rng` in between, so the key is the same; a release whose sums then fail has
    /// used its key). `buffer(len)` gives each block's value buffer: empty, with room for `len`
    /// entries.
    pub(super) fn plan(
        spec: &ReleaseSpec,
        drawn: &[f64],
        rng: &mut ChaCha20Rng,
        mut buffer: impl FnMut(usize) -> Vec<f64>,
    ) -> Option<Self> {
        let entries: usize = spec.blocks().iter().map(|b| b.stored_len()).sum();
        if rayon::current_num_threads() <= 1
            || entries <= SERIAL_NOISE_ENTRIES
            || drawn.iter().any(|&s| s <= 0.0)
        {
            return None;
        }
        let shapes = spec
            .blocks()
            .iter()
            .map(|b| match b.shape() {
                BlockShape::Vector { .. } => Some(Shape::Vector),
                BlockShape::Matrix { rows, cols } => Some(Shape::Matrix { rows, cols }),
                BlockShape::Symmetric { .. } => None,
            })
            .collect::<Option<Vec<Shape>>>()?;
        let lens: Vec<usize> = spec.blocks().iter().map(|b| b.stored_len()).collect();
        Some(Self {
            streams: NoiseStreams::draw(rng),
            shapes,
            values: lens.iter().map(|&len| buffer(len)).collect(),
            lens,
        })
    }

    /// Runs `sums` on the calling thread while the noise (`drawn[b] z` into block `b`'s buffer)
    /// is drawn by whichever threads are idle; returns what `sums` returned.
    pub(super) fn alongside<T>(&mut self, drawn: &[f64], sums: impl FnOnce() -> T) -> T {
        let streams = &self.streams;
        let values = &mut self.values;
        let lens = &self.lens;
        rayon::in_place_scope(|scope| {
            scope.spawn(move |_| {
                let mut first_span = 0;
                for ((buf, &len), &std) in values.iter_mut().zip(lens).zip(drawn) {
                    buf.resize(len, 0.0);
                    streams.fill_scaled(buf, first_span, std);
                    first_span += spans_of(buf.len());
                }
            });
            sums()
        })
    }

    /// The released values `(sum + std z) / expected`, block by block in spec order, from the
    /// blocks' sums.
    pub(super) fn finish<'s>(
        self,
        sums: impl Iterator<Item = &'s mut [f64]>,
        expected: f64,
    ) -> Vec<BlockValue> {
        self.shapes
            .into_iter()
            .zip(sums)
            .zip(self.values)
            .map(|((shape, sum), mut noise)| {
                noise
                    .par_chunks_mut(NOISE_SPAN)
                    .zip(sum.par_chunks(NOISE_SPAN))
                    .for_each(|(out, s)| {
                        for (o, &v) in out.iter_mut().zip(s) {
                            *o = (v + *o) / expected;
                        }
                    });
                match shape {
                    Shape::Vector => BlockValue::Vector(DVector::from_vec(noise)),
                    Shape::Matrix { rows, cols } => {
                        BlockValue::Matrix(DMatrix::from_vec(rows, cols, noise))
                    }
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::ChaCha20Rng;

    use super::NoiseAhead;
    use crate::wall::spec::ReleaseSpec;

    fn planned(spec: &ReleaseSpec, drawn: &[f64], threads: usize) -> bool {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        pool.install(|| NoiseAhead::plan(spec, drawn, &mut rng, Vec::with_capacity).is_some())
    }

    /// Drawn ahead exactly when there is a second thread, a release on streams, noise on every
    /// block and no symmetric block; the fused pass otherwise.
    #[test]
    fn drawn_ahead_only_where_it_can_overlap() {
        let mut b = ReleaseSpec::builder("large");
        b.matrix("m", 50, 1_000, 1.0).unwrap();
        b.vector("v", 3, 1.0).unwrap();
        let large = b.build().unwrap();
        assert!(planned(&large, &[1.0, 1.0], 2));
        assert!(!planned(&large, &[1.0, 1.0], 1), "one thread");
        assert!(!planned(&large, &[0.0, 0.0], 2), "no noise");
        let mut b = ReleaseSpec::builder("small");
        b.matrix("m", 10, 100, 1.0).unwrap();
        assert!(!planned(&b.build().unwrap(), &[1.0], 2), "serial noise");
        let mut b = ReleaseSpec::builder("symmetric");
        b.matrix("m", 50, 1_000, 1.0).unwrap();
        b.symmetric("s", 10, 1.0).unwrap();
        assert!(!planned(&b.build().unwrap(), &[1.0, 1.0], 2), "symmetric");
    }
}
