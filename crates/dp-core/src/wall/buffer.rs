//! The reusable per-thread buffer a per-record statistic writes its contribution into.

use super::spec::{BlockShape, ReleaseSpec, packed_index};
use crate::clip::clip_scale;
use crate::error::CoreError;

/// Scratch for one block: a dense array that is zero between records, plus the list of entries
/// touched by sparse pushes so that resetting costs `O(nnz)`, not `O(len)`.
#[derive(Debug)]
struct BlockScratch {
    shape: BlockShape,
    values: Vec<f64>,
    marked: Vec<bool>,
    touched: Vec<usize>,
    dense_used: bool,
}

impl BlockScratch {
    fn new(shape: BlockShape) -> Self {
        let len = shape.stored_len();
        Self {
            shape,
            values: vec![0.0; len],
            marked: vec![false; len],
            touched: Vec::new(),
            dense_used: false,
        }
    }

    fn add(&mut self, index: usize, value: f64) {
        if !self.dense_used && !self.marked[index] {
            self.marked[index] = true;
            self.touched.push(index);
        }
        self.values[index] += value;
    }

    /// Weight of an entry in the squared norm: 2 for off-diagonal entries of a symmetric block
    /// (each stands for two matrix entries), else 1.
    fn weight(&self, index: usize) -> f64 {
        match self.shape {
            BlockShape::Symmetric { .. } if !BlockShape::packed_is_diagonal(index) => 2.0,
            _ => 1.0,
        }
    }

    /// Calls `visit(value, weight)` for every entry that may be non-zero: all entries after a
    /// dense write (symmetric blocks walked column by column, so no index arithmetic per entry),
    /// else the touched ones.
    fn for_each_weighted(&self, mut visit: impl FnMut(f64, f64)) {
        match (self.dense_used, self.shape) {
            (true, BlockShape::Symmetric { dim }) => {
                for j in 0..dim {
                    let start = j * (j + 1) / 2;
                    for &v in &self.values[start..start + j] {
                        visit(v, 2.0);
                    }
                    visit(self.values[start + j], 1.0);
                }
            }
            (true, _) => self.values.iter().for_each(|&v| visit(v, 1.0)),
            (false, _) => {
                for &i in &self.touched {
                    visit(self.values[i], self.weight(i));
                }
            }
        }
    }

    /// The record's norm in this block (L2 / Frobenius), `None` if a value is not finite.
    /// Scaled by the largest entry, so entries near `1e200` do not overflow.
    fn norm(&self) -> Option<f64> {
        let mut max = 0.0f64;
        let mut finite = true;
        self.for_each_weighted(|v, _| {
            finite &= v.is_finite();
            max = max.max(v.abs());
        });
        if !finite {
            return None;
        }
        if max == 0.0 {
            return Some(0.0);
        }
        let mut sum = 0.0;
        self.for_each_weighted(|v, w| {
            let r = v / max;
            sum += w * r * r;
        });
        Some(max * sum.sqrt())
    }

    /// Adds `scale * values` into `sum` and resets the scratch to zero.
    fn drain_into(&mut self, sum: &mut [f64], scale: f64) {
        if self.dense_used {
            for (s, v) in sum.iter_mut().zip(self.values.iter_mut()) {
                *s += scale * *v;
                *v = 0.0;
            }
            self.dense_used = false;
        } else {
            for &i in &self.touched {
                sum[i] += scale * self.values[i];
                self.values[i] = 0.0;
                self.marked[i] = false;
            }
        }
        self.touched.clear();
    }

    fn reset(&mut self) {
        if self.dense_used {
            self.values.iter_mut().for_each(|v| *v = 0.0);
            self.dense_used = false;
        }
        for &i in &self.touched {
            self.values[i] = 0.0;
            self.marked[i] = false;
        }
        self.touched.clear();
    }
}

/// Where a per-record statistic writes one record's contribution.
///
/// The wall hands each worker thread one buffer and reuses it for every record, so the hot loop
/// does not allocate. Each block can be written **sparsely** ([`Self::push`],
/// [`Self::push_matrix`], [`Self::add_symmetric`]: cost `O(entries written)`, duplicates are
/// summed) or **densely** ([`Self::dense`]: a zeroed slice of the block's stored length; cost
/// `O(block length)` per record). Both may be mixed within a block. The buffer starts every
/// record at zero.
///
/// Invalid writes (an index outside its block, a non-finite value) do not panic. In a private
/// release the record is replaced by zero (it contributes nothing), counted in the release's
/// non-private [`crate::wall::ReleaseDiagnostics`], and the release goes ahead and is charged;
/// in a non-private release they fail it with [`CoreError::InvalidContribution`] (nothing
/// released). Neither carries a value derived from the record.
///
/// # Example
/// ```
/// use dp_core::{BlockSpec, ContributionBuffer, ReleaseSpec};
/// let spec = ReleaseSpec::new(vec![
///     BlockSpec::matrix("topics", 2, 1000, 1.0)?,
///     BlockSpec::symmetric("xx", 3, 0.25)?,
/// ])?;
/// let mut buf = ContributionBuffer::new(&spec);
/// buf.push_matrix(0, 1, 997, 0.5);          // sparse: one entry of a 2 x 1000 block
/// buf.add_outer_product(1, 0.25, &[1.0, 0.0, 0.0]); // 0.25 x x^T into the symmetric block
/// assert_eq!(buf.block_len(1), 6);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Debug)]
pub struct ContributionBuffer {
    blocks: Vec<BlockScratch>,
    scales: Vec<f64>,
    error: Option<(usize, &'static str)>,
}

/// What became of one record in [`ContributionBuffer::finish_record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordOutcome {
    /// Added within every bound.
    Added,
    /// Added after clipping at least one block.
    Clipped,
    /// Malformed or non-finite: replaced by zero (nothing added; private releases only).
    Replaced,
}

impl ContributionBuffer {
    /// A zeroed buffer for the blocks of `spec`.
    pub fn new(spec: &ReleaseSpec) -> Self {
        Self {
            blocks: spec
                .blocks()
                .iter()
                .map(|b| BlockScratch::new(b.shape()))
                .collect(),
            scales: Vec::with_capacity(spec.len()),
            error: None,
        }
    }

    /// Number of blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Stored length of block `block` (`0` for a block that does not exist).
    pub fn block_len(&self, block: usize) -> usize {
        self.blocks.get(block).map_or(0, |b| b.values.len())
    }

    /// Records the first invalid write of the current record. The reason is a fixed text: it
    /// never carries a value derived from the record (index, entry, length), so that an error
    /// message cannot leak one.
    fn fail(&mut self, block: usize, reason: &'static str) {
        if self.error.is_none() {
            self.error = Some((block, reason));
        }
    }

    /// Adds `value` to stored entry `index` of `block` (sparse write; repeated indices add up).
    /// For a matrix block the index is column-major; for a symmetric block it is the packed
    /// upper-triangle index (prefer [`Self::add_symmetric`]).
    pub fn push(&mut self, block: usize, index: usize, value: f64) {
        match self.blocks.get_mut(block) {
            Some(b) if index < b.values.len() => b.add(index, value),
            Some(_) => self.fail(block, "an index outside the block"),
            None => self.fail(block, "a block that does not exist"),
        }
    }

    /// Adds `value` to entry `(row, col)` of a matrix block (sparse write).
    pub fn push_matrix(&mut self, block: usize, row: usize, col: usize, value: f64) {
        match self.blocks.get(block).map(|b| b.shape) {
            Some(BlockShape::Matrix { rows, cols }) if row < rows && col < cols => {
                self.push(block, col * rows + row, value)
            }
            Some(_) => self.fail(
                block,
                "an entry outside a matrix block (or into a block that is not a matrix)",
            ),
            None => self.fail(block, "a block that does not exist"),
        }
    }

    /// Adds `value` to entries `(i, j)` and `(j, i)` of a symmetric block (once if `i == j`).
    pub fn add_symmetric(&mut self, block: usize, i: usize, j: usize, value: f64) {
        match self.blocks.get(block).map(|b| b.shape) {
            Some(BlockShape::Symmetric { dim }) if i < dim && j < dim => {
                self.push(block, packed_index(i, j), value)
            }
            Some(_) => self.fail(
                block,
                "an entry outside a symmetric block (or into a block that is not symmetric)",
            ),
            None => self.fail(block, "a block that does not exist"),
        }
    }

    /// Adds `weight * x x^T` to a symmetric block (dense write, `O(dim^2)`).
    pub fn add_outer_product(&mut self, block: usize, weight: f64, x: &[f64]) {
        match self.blocks.get(block).map(|b| b.shape) {
            Some(BlockShape::Symmetric { dim }) if x.len() == dim => {
                let values = self.dense(block);
                for j in 0..dim {
                    let wxj = weight * x[j];
                    let col = &mut values[j * (j + 1) / 2..j * (j + 1) / 2 + j + 1];
                    for (v, xi) in col.iter_mut().zip(&x[..=j]) {
                        *v += wxj * xi;
                    }
                }
            }
            Some(_) => self.fail(
                block,
                "an outer product of the wrong length (or into a block that is not symmetric)",
            ),
            None => self.fail(block, "a block that does not exist"),
        }
    }

    /// The whole stored block as a mutable slice (dense write), zero at the start of each record.
    ///
    /// # Panics
    /// If `block` is not a block of the release (a programming error, like an out-of-range slice
    /// index). Index-carrying writes ([`Self::push`] and friends) never panic.
    pub fn dense(&mut self, block: usize) -> &mut [f64] {
        let n = self.blocks.len();
        let b = self
            .blocks
            .get_mut(block)
            .unwrap_or_else(|| panic!("block {block} does not exist (the release has {n})"));
        if !b.dense_used {
            // Entries pushed sparsely so far stay in `values`; switch to a full scan.
            for &i in &b.touched {
                b.marked[i] = false;
            }
            b.touched.clear();
            b.dense_used = true;
        }
        &mut b.values
    }

    /// Clips the record held in the buffer block by block, adds it to `sums` and resets the
    /// buffer. A malformed or non-finite record is replaced by zero (nothing added) when
    /// `replace_invalid`, else it is an error; either way the buffer is reset.
    pub(crate) fn finish_record(
        &mut self,
        spec: &ReleaseSpec,
        sums: &mut [Vec<f64>],
        replace_invalid: bool,
    ) -> Result<RecordOutcome, CoreError> {
        let reject = |this: &mut Self, block: usize, reason: &'static str| {
            this.reset();
            if replace_invalid {
                Ok(RecordOutcome::Replaced)
            } else {
                Err(invalid(spec, block, reason))
            }
        };
        if let Some((block, reason)) = self.error.take() {
            return reject(self, block, reason);
        }
        let mut scales = std::mem::take(&mut self.scales);
        scales.clear();
        for (j, (b, s)) in self.blocks.iter().zip(spec.blocks()).enumerate() {
            match b.norm() {
                Some(norm) => scales.push(clip_scale(norm, s.bound())),
                None => {
                    self.scales = scales;
                    return reject(self, j, "a non-finite value written");
                }
            }
        }
        let mut clipped = false;
        for ((b, sum), &scale) in self
            .blocks
            .iter_mut()
            .zip(sums.iter_mut())
            .zip(scales.iter())
        {
            clipped |= scale < 1.0;
            b.drain_into(sum, scale);
        }
        self.scales = scales;
        Ok(if clipped {
            RecordOutcome::Clipped
        } else {
            RecordOutcome::Added
        })
    }

    /// Zeroes every block and forgets any recorded error.
    pub(crate) fn reset(&mut self) {
        self.blocks.iter_mut().for_each(BlockScratch::reset);
        self.error = None;
    }
}

/// The error of a malformed record in a non-private release: the block's declared name (or
/// `"(no such block)"`) and a fixed reason, never a value derived from the record.
fn invalid(spec: &ReleaseSpec, block: usize, reason: &'static str) -> CoreError {
    CoreError::InvalidContribution {
        block: spec
            .blocks()
            .get(block)
            .map_or_else(|| "(no such block)".to_string(), |b| b.name().to_string()),
        reason: reason.to_string(),
    }
}
