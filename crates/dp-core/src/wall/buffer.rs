//! The reusable per-thread buffer a per-record statistic writes its contribution into.

use super::spec::{
    BlockHandle, BlockShape, EntryHandle, MatrixHandle, RawBlock, ReleaseSpec, RunHandle,
    SymmetricHandle, packed_index,
};
use crate::clip::clip_scale;
use crate::error::CoreError;

/// Scratch for one block's entry writes: a dense array that is zero between records, plus the
/// list of entries touched by sparse pushes so that resetting costs `O(nnz)`, not `O(len)`.
/// Allocated on the first entry write (a block written only as runs never allocates it).
#[derive(Debug)]
struct BlockScratch {
    shape: BlockShape,
    len: usize,
    values: Vec<f64>,
    marked: Vec<bool>,
    touched: Vec<usize>,
    dense_used: bool,
}

impl BlockScratch {
    fn new(shape: BlockShape) -> Self {
        Self {
            shape,
            len: shape.stored_len(),
            values: Vec::new(),
            marked: Vec::new(),
            touched: Vec::new(),
            dense_used: false,
        }
    }

    fn ensure(&mut self) {
        if self.values.len() != self.len {
            self.values = vec![0.0; self.len];
            self.marked = vec![false; self.len];
        }
    }

    /// Whether the current record wrote entries into the block.
    fn written(&self) -> bool {
        self.dense_used || !self.touched.is_empty()
    }

    fn add(&mut self, index: usize, value: f64) {
        self.ensure();
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

/// The values of a run: `f64`, or `f32` ([`ContributionBuffer::segment32`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunKind {
    F64,
    F32,
}

/// The runs written into one block: those of the sealed records, in the order they were
/// sealed, followed by the current record's. A store holds runs of one kind, `f64` or `f32`
/// (set by its first run after [`Self::clear`]); an `f32` value is widened to `f64` exactly
/// wherever it is read, so it counts as that `f64`.
#[derive(Debug, Default, Clone)]
pub(crate) struct RunStore {
    /// Start of every run held.
    starts: Vec<usize>,
    /// Offset in the values of every run held; a run ends where the next one begins.
    offsets: Vec<usize>,
    /// The values of `f64` runs.
    values: Vec<f64>,
    /// The values of `f32` runs ([`ContributionBuffer::segment32`]): half the bytes to write,
    /// hand over and read back.
    values32: Vec<f32>,
    /// The kind of the runs held (`None`: no run since the last clear).
    kind: Option<RunKind>,
    /// Index in `starts` of the current record's first run.
    record_first_run: usize,
    /// Offset in the values of the current record's first value.
    record_first_value: usize,
    /// For each sealed record with runs here: one past the index of its last run.
    sealed_run_ends: Vec<usize>,
    /// For each sealed record with runs here: its clipping factor (`1` if it was not clipped),
    /// applied to each value as it is added (the product the sum adds either way).
    sealed_scales: Vec<f64>,
    /// Where the current record's next run may start.
    next_free: usize,
}

impl RunStore {
    /// Whether a run of `len` at `start` is valid next: inside the block, at or after the end of
    /// the current record's previous run.
    fn accepts(&self, start: usize, len: usize, block_len: usize) -> bool {
        start
            .checked_add(len)
            .is_some_and(|end| start >= self.next_free && end <= block_len)
    }

    /// Whether a run of `kind` may be added (the store holds no run of the other kind).
    fn holds_kind(&self, kind: RunKind) -> bool {
        self.kind.is_none_or(|k| k == kind)
    }

    /// Number of values held.
    fn values_len(&self) -> usize {
        if self.kind == Some(RunKind::F32) {
            self.values32.len()
        } else {
            self.values.len()
        }
    }

    /// Appends a (valid) `f64` run and returns it, zeroed (the store holds `f64` runs or none).
    fn open(&mut self, start: usize, len: usize) -> &mut [f64] {
        self.kind = Some(RunKind::F64);
        self.next_free = start + len;
        let offset = self.values.len();
        self.starts.push(start);
        self.offsets.push(offset);
        self.values.resize(offset + len, 0.0);
        &mut self.values[offset..]
    }

    /// Appends a (valid) `f32` run and returns it, zeroed (the store holds `f32` runs or none).
    fn open32(&mut self, start: usize, len: usize) -> &mut [f32] {
        self.kind = Some(RunKind::F32);
        self.next_free = start + len;
        let offset = self.values32.len();
        self.starts.push(start);
        self.offsets.push(offset);
        self.values32.resize(offset + len, 0.0);
        &mut self.values32[offset..]
    }

    /// Whether the current record wrote runs here.
    fn current_has_runs(&self) -> bool {
        self.starts.len() > self.record_first_run
    }

    /// Whether sealed records hold runs here.
    pub(crate) fn has_sealed(&self) -> bool {
        !self.sealed_run_ends.is_empty()
    }

    /// The L2 norm of the current record's runs: one pass, with a rescaled second pass only if
    /// the sum of squares overflows. `None` if a value is not finite.
    fn current_norm(&self) -> Option<f64> {
        if self.kind == Some(RunKind::F32) {
            norm_of(&self.values32[self.record_first_value..])
        } else {
            norm_of(&self.values[self.record_first_value..])
        }
    }

    /// Seals the current record's runs with the clipping factor `scale` (applied, if `< 1`, as
    /// they are added: each value `v` is added as `v * scale`, the product that scaling in place
    /// would have stored).
    fn seal(&mut self, scale: f64) {
        self.sealed_run_ends.push(self.starts.len());
        self.sealed_scales
            .push(if scale < 1.0 { scale } else { 1.0 });
        self.record_first_run = self.starts.len();
        self.record_first_value = self.values_len();
        self.next_free = 0;
    }

    /// Drops the current (unsealed) record's runs; the sealed records are kept.
    fn drop_current(&mut self) {
        self.starts.truncate(self.record_first_run);
        self.offsets.truncate(self.record_first_run);
        self.values.truncate(self.record_first_value);
        self.values32.truncate(self.record_first_value);
        if self.starts.is_empty() {
            self.kind = None;
        }
        self.next_free = 0;
    }

    /// Forgets every record, keeping the capacity.
    pub(crate) fn clear(&mut self) {
        self.starts.clear();
        self.offsets.clear();
        self.values.clear();
        self.values32.clear();
        self.kind = None;
        self.record_first_run = 0;
        self.record_first_value = 0;
        self.sealed_run_ends.clear();
        self.sealed_scales.clear();
        self.next_free = 0;
    }

    /// Adds the sealed records' entries that fall in `lo..lo + out.len()` of the block into
    /// `out`, record by record in the order they were sealed (each record's runs are sorted and
    /// disjoint, so a binary search finds the first run that reaches into the span).
    pub(crate) fn add_sealed(&self, lo: usize, out: &mut [f64]) {
        let hi = lo + out.len();
        let mut first_run = 0;
        let end_of_values = self.values_len();
        for (&run_end, &scale) in self.sealed_run_ends.iter().zip(&self.sealed_scales) {
            let starts = &self.starts[first_run..run_end];
            // Runs starting before `lo`; the last of them may still reach into the span.
            let mut r = starts.partition_point(|&s| s < lo).saturating_sub(1);
            while r < starts.len() && starts[r] < hi {
                let i = first_run + r;
                let offset = self.offsets[i];
                let end = self.offsets.get(i + 1).copied().unwrap_or(end_of_values);
                let (start, len) = (starts[r], end - offset);
                let from = start.max(lo);
                let to = (start + len).min(hi);
                if from < to {
                    let (src, dst) = (
                        offset + (from - start)..offset + (to - start),
                        from - lo..to - lo,
                    );
                    if self.kind == Some(RunKind::F32) {
                        for (o, &v) in out[dst].iter_mut().zip(&self.values32[src]) {
                            *o += f64::from(v) * scale;
                        }
                    } else {
                        for (o, &v) in out[dst].iter_mut().zip(&self.values[src]) {
                            *o += v * scale;
                        }
                    }
                }
                r += 1;
            }
            first_run = run_end;
        }
    }
}

/// The L2 norm of `values` (each widened to `f64` exactly): one pass with four partial sums of
/// squares, and a rescaled second pass only if that sum overflows. `None` if a value is not
/// finite.
fn norm_of<T: Copy + Into<f64>>(values: &[T]) -> Option<f64> {
    let mut squares = [0.0f64; 4];
    let chunks = values.chunks_exact(4);
    let tail: f64 = chunks
        .remainder()
        .iter()
        .map(|&v| {
            let v: f64 = v.into();
            v * v
        })
        .sum();
    for c in chunks {
        for i in 0..4 {
            let v: f64 = c[i].into();
            squares[i] += v * v;
        }
    }
    let sum = (squares[0] + squares[1]) + (squares[2] + squares[3]) + tail;
    if sum.is_finite() {
        return Some(sum.sqrt());
    }
    let wide = || values.iter().map(|&v| -> f64 { v.into() });
    if wide().any(|v| !v.is_finite()) {
        return None;
    }
    let max = wide().fold(0.0f64, |m, v| m.max(v.abs()));
    let scaled: f64 = wide().map(|v| (v / max) * (v / max)).sum();
    Some(max * scaled.sqrt())
}

/// Per-block dense sums of entry writes, allocated on first use, with a mark per block that was
/// added to since the last reduction.
#[derive(Debug, Default)]
pub(crate) struct EntrySums {
    pub(crate) sums: Vec<Vec<f64>>,
    pub(crate) touched: Vec<bool>,
}

impl EntrySums {
    pub(crate) fn new(spec: &ReleaseSpec) -> Self {
        Self {
            sums: vec![Vec::new(); spec.len()],
            touched: vec![false; spec.len()],
        }
    }

    /// Block `b`'s sum (zeroed on first use), marked touched.
    fn block(&mut self, b: usize, len: usize) -> &mut [f64] {
        let s = &mut self.sums[b];
        if s.len() != len {
            *s = vec![0.0; len];
        }
        self.touched[b] = true;
        s
    }
}

/// Where a per-record statistic writes one record's contribution, addressed by the typed block
/// handles of its [`ReleaseSpec`].
///
/// The wall hands each worker thread one buffer and reuses it for every record, so the hot loop
/// does not allocate. A block can be written
/// * **sparsely** ([`Self::push`] on vector blocks, [`Self::push_matrix`],
///   [`Self::add_symmetric`]: cost `O(entries written)`, duplicates are summed);
/// * **densely** ([`Self::dense`], [`Self::add_outer_product`]: a zeroed slice of the block's
///   stored length; cost `O(block length)` per record); sparse and dense writes may be mixed;
/// * **as runs** ([`Self::segment`], [`Self::push_segment`] on vector and matrix blocks):
///   disjoint runs of entries in increasing order of position, stored compactly and summed
///   record by record in batch order (LDA's one run of `K` topic weights per distinct word). A block
///   takes either runs or entry writes from one record (not both); different blocks, and
///   different records, may use different kinds of writes.
///
/// The buffer starts every record at zero.
///
/// Invalid writes (an index or run outside its block, runs out of order, a handle from another
/// spec, a non-finite value, runs and entry writes mixed in one block) do not panic. In a
/// private release the record is replaced by zero (it contributes nothing), counted in the
/// release's non-private [`crate::wall::ReleaseDiagnostics`], and the release goes ahead and is
/// charged; in a non-private release they fail it with [`CoreError::InvalidContribution`]
/// (nothing released). Neither carries a value derived from the record. The slice a write
/// returns is valid scratch even for an invalid write, so the caller need not check.
///
/// # Example
/// ```
/// use dp_core::{ContributionBuffer, ReleaseSpec};
/// let mut b = ReleaseSpec::builder("example");
/// let topics = b.matrix("topics", 2, 1000, 1.0)?;
/// let xx = b.symmetric("xx", 3, 0.25)?;
/// let spec = b.build()?;
/// let mut buf = ContributionBuffer::new(&spec);
/// buf.push_matrix(topics, 1, 997, 0.5);               // sparse: one entry of a 2 x 1000 block
/// buf.add_outer_product(xx, 0.25, &[1.0, 0.0, 0.0]);  // 0.25 x x^T into the symmetric block
/// assert_eq!(buf.block_len(xx), 6);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Debug)]
pub struct ContributionBuffer {
    spec_id: u64,
    blocks: Vec<BlockScratch>,
    pub(crate) runs: Vec<RunStore>,
    norms: Vec<f64>,
    scales: Vec<f64>,
    error: Option<(usize, &'static str)>,
    junk: Vec<f64>,
    junk32: Vec<f32>,
}

/// What became of one record in [`ContributionBuffer::finish_record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordOutcome {
    /// Added within every bound.
    Added,
    /// Added after clipping at least one group.
    Clipped,
    /// Malformed or non-finite: replaced by zero (nothing added; private releases only).
    Replaced,
}

/// Position reported for a write through a handle of another spec.
const FOREIGN: usize = usize::MAX;

/// Position reported for a record the statistic itself rejected ([`ContributionBuffer::reject_record`]).
const REJECTED: usize = usize::MAX - 1;

impl ContributionBuffer {
    /// A zeroed buffer for the blocks of `spec`.
    pub fn new(spec: &ReleaseSpec) -> Self {
        Self {
            spec_id: spec.id(),
            blocks: spec
                .blocks()
                .iter()
                .map(|b| BlockScratch::new(b.shape()))
                .collect(),
            runs: vec![RunStore::default(); spec.len()],
            norms: Vec::with_capacity(spec.len()),
            scales: Vec::with_capacity(spec.groups().len()),
            error: None,
            junk: Vec::new(),
            junk32: Vec::new(),
        }
    }

    /// Makes the buffer take the handles of spec `id` (a spec of the same block shapes).
    pub(crate) fn rebind(&mut self, id: u64) {
        self.spec_id = id;
    }

    /// Number of blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Stored length of a block (`0` for a handle of another spec).
    pub fn block_len(&self, block: impl BlockHandle) -> usize {
        self.resolve(block.raw()).map_or(0, |b| self.blocks[b].len)
    }

    fn resolve(&self, raw: RawBlock) -> Option<usize> {
        (raw.spec == self.spec_id && !raw.group && raw.index < self.blocks.len())
            .then_some(raw.index)
    }

    /// Records the first invalid write of the current record. The reason is a fixed text: it
    /// never carries a value derived from the record (index, entry, length), so that an error
    /// message cannot leak one.
    fn fail(&mut self, block: usize, reason: &'static str) {
        if self.error.is_none() {
            self.error = Some((block, reason));
        }
    }

    /// Declares that the statistic could not be computed for the current record (its E-step met
    /// a value outside the model's domain, a factorisation failed, ...). The record is handled
    /// exactly like one with an invalid write: in a private release it is replaced by zero
    /// (contributes nothing; counted in the non-private [`crate::wall::ReleaseDiagnostics`])
    /// and the release goes ahead and is charged; in a non-private release the release fails
    /// with [`CoreError::InvalidContribution`] naming the statistic and `reason`.
    ///
    /// # Privacy
    /// `reason` must be a fixed text: it may reach an error message, so it must never carry a
    /// value derived from the record. Whether a sampled record was rejected changes a private
    /// release only as removing that record would, which the noise covers.
    ///
    /// # Example
    /// ```
    /// use dp_core::{ContributionBuffer, ReleaseSpec};
    /// let mut b = ReleaseSpec::builder("example");
    /// let s = b.vector("s", 3, 1.0)?;
    /// let spec = b.build()?;
    /// let mut buf = ContributionBuffer::new(&spec);
    /// buf.push(s, 0, 0.5);
    /// buf.reject_record("the E-step did not converge");
    /// # Ok::<(), dp_core::CoreError>(())
    /// ```
    pub fn reject_record(&mut self, reason: &'static str) {
        self.fail(REJECTED, reason);
    }

    /// Scratch handed out for an invalid write (never read).
    fn junk(&mut self, len: usize) -> &mut [f64] {
        self.junk.clear();
        self.junk.resize(len, 0.0);
        &mut self.junk
    }

    fn junk32(&mut self, len: usize) -> &mut [f32] {
        self.junk32.clear();
        self.junk32.resize(len, 0.0);
        &mut self.junk32
    }

    /// Adds `value` to entry `index` of a vector block (sparse write; repeated indices add up).
    pub fn push(&mut self, block: impl EntryHandle, index: usize, value: f64) {
        let Some(b) = self.resolve(block.raw()) else {
            return self.fail(FOREIGN, "a block handle from another spec");
        };
        if index < self.blocks[b].len {
            self.blocks[b].add(index, value);
        } else {
            self.fail(b, "an index outside the block");
        }
    }

    /// Adds `value` to entry `(row, col)` of a matrix block (sparse write).
    pub fn push_matrix(&mut self, block: impl MatrixHandle, row: usize, col: usize, value: f64) {
        let Some(b) = self.resolve(block.raw()) else {
            return self.fail(FOREIGN, "a block handle from another spec");
        };
        match self.blocks[b].shape {
            BlockShape::Matrix { rows, cols } if row < rows && col < cols => {
                self.blocks[b].add(col * rows + row, value)
            }
            _ => self.fail(
                b,
                "an entry outside a matrix block (or into a block that is not a matrix)",
            ),
        }
    }

    /// Adds `value` to entries `(i, j)` and `(j, i)` of a symmetric block (once if `i == j`).
    pub fn add_symmetric(&mut self, block: impl SymmetricHandle, i: usize, j: usize, value: f64) {
        let Some(b) = self.resolve(block.raw()) else {
            return self.fail(FOREIGN, "a block handle from another spec");
        };
        match self.blocks[b].shape {
            BlockShape::Symmetric { dim } if i < dim && j < dim => {
                self.blocks[b].add(packed_index(i, j), value)
            }
            _ => self.fail(
                b,
                "an entry outside a symmetric block (or into a block that is not symmetric)",
            ),
        }
    }

    /// Adds `weight * x x^T` to a symmetric block (dense write, `O(dim^2)`).
    pub fn add_outer_product(&mut self, block: impl SymmetricHandle, weight: f64, x: &[f64]) {
        let Some(b) = self.resolve(block.raw()) else {
            return self.fail(FOREIGN, "a block handle from another spec");
        };
        match self.blocks[b].shape {
            BlockShape::Symmetric { dim } if x.len() == dim => {
                let values = self.dense_at(b);
                for j in 0..dim {
                    let wxj = weight * x[j];
                    let col = &mut values[j * (j + 1) / 2..j * (j + 1) / 2 + j + 1];
                    for (v, xi) in col.iter_mut().zip(&x[..=j]) {
                        *v += wxj * xi;
                    }
                }
            }
            _ => self.fail(
                b,
                "an outer product of the wrong length (or into a block that is not symmetric)",
            ),
        }
    }

    fn dense_at(&mut self, b: usize) -> &mut [f64] {
        let b = &mut self.blocks[b];
        b.ensure();
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

    /// The whole stored block as a mutable slice (dense write), zero at the start of each record.
    /// A handle of another spec is an invalid write (the record is replaced or the release
    /// fails, see the type's documentation); the slice returned is then scratch of the handle's
    /// length.
    pub fn dense(&mut self, block: impl BlockHandle) -> &mut [f64] {
        let raw = block.raw();
        match self.resolve(raw) {
            Some(b) => self.dense_at(b),
            None => {
                self.fail(FOREIGN, "a block handle from another spec");
                self.junk(raw.len)
            }
        }
    }

    /// Appends a run of `len` entries of a vector or matrix block starting at stored index
    /// `start` (column-major for a matrix: a run down a column is contiguous) and returns it,
    /// zeroed, to be filled.
    ///
    /// A record's runs in one block must lie inside the block, must not overlap and must come
    /// in increasing order (`start` at or after the end of the previous run); otherwise the
    /// write is invalid (the returned slice is still valid scratch).
    pub fn segment(&mut self, block: impl RunHandle, start: usize, len: usize) -> &mut [f64] {
        let Some(b) = self.resolve(block.raw()) else {
            self.fail(FOREIGN, "a block handle from another spec");
            return self.junk(len);
        };
        self.segment_at(b, start, len)
    }

    /// [`Self::segment`] into the block at position `b` (a vector or matrix block).
    pub(crate) fn segment_at(&mut self, b: usize, start: usize, len: usize) -> &mut [f64] {
        if self.run_is_valid(b, start, len, RunKind::F64) {
            self.runs[b].open(start, len)
        } else {
            self.junk(len)
        }
    }

    /// Whether a run of `kind` of `len` entries at `start` may go into the block at position
    /// `b` (a vector or matrix block whose store holds no run of the other kind, inside the
    /// block, after the record's previous run); records the invalid write if not.
    fn run_is_valid(&mut self, b: usize, start: usize, len: usize, kind: RunKind) -> bool {
        let reason = if b >= self.blocks.len()
            || matches!(self.blocks[b].shape, BlockShape::Symmetric { .. })
        {
            "runs into a block that is not a vector or matrix block"
        } else if !self.runs[b].holds_kind(kind) {
            "f64 and f32 runs mixed in one block"
        } else if !self.runs[b].accepts(start, len, self.blocks[b].len) {
            "a run outside the block, or starting before the previous run ended"
        } else {
            return true;
        };
        self.fail(b, reason);
        false
    }

    /// [`Self::segment`] with `f32` values: appends a run of `len` entries starting at stored
    /// index `start` and returns it, zeroed, to be filled. Each value counts as the `f64` it
    /// widens to exactly (clipping, sums and release are those of the same run written through
    /// [`Self::segment`] as `f64::from(value)`, bit for bit), but the run takes half the memory
    /// to write, hand over between threads and read back: LDA's E-step, whose values are `f32`
    /// products, writes its runs this way.
    ///
    /// A record's runs in one block must be all `f64` or all `f32` (and, on the sums' paths
    /// that keep a chunk of records' runs together, so must those records'); a run of the
    /// other kind is an invalid write, like a run [`Self::segment`] refuses.
    ///
    /// ```
    /// use dp_core::{ContributionBuffer, ReleaseSpec};
    /// let mut b = ReleaseSpec::builder("counts");
    /// let topics = b.matrix("topics", 2, 3, 1.0)?;
    /// let spec = b.build()?;
    /// let mut buf = ContributionBuffer::new(&spec);
    /// // Word 1's column of the column-major 2 x 3 block: stored entries 2 and 3.
    /// buf.segment32(topics, 2, 2).copy_from_slice(&[0.25, 0.5]);
    /// # Ok::<(), dp_core::CoreError>(())
    /// ```
    pub fn segment32(&mut self, block: impl RunHandle, start: usize, len: usize) -> &mut [f32] {
        let Some(b) = self.resolve(block.raw()) else {
            self.fail(FOREIGN, "a block handle from another spec");
            return self.junk32(len);
        };
        if self.run_is_valid(b, start, len, RunKind::F32) {
            self.runs[b].open32(start, len)
        } else {
            self.junk32(len)
        }
    }

    /// Appends a run with the given values (see [`Self::segment`]).
    pub fn push_segment(&mut self, block: impl RunHandle, start: usize, values: &[f64]) {
        self.segment(block, start, values.len())
            .copy_from_slice(values);
    }

    /// Clips the record held in the buffer group by group: entry writes are added, scaled, to
    /// `sums`; runs are scaled in place and sealed in the run stores. Resets the record. A
    /// malformed or non-finite record is replaced by zero (nothing added, its runs dropped)
    /// when `replace_invalid`, else it is an error; either way the record is reset.
    ///
    /// # Privacy
    /// Each group's blocks are scaled by one factor so that the L2 norm of their concatenation
    /// (symmetric off-diagonals twice) is at most the group's bound.
    pub(crate) fn finish_record(
        &mut self,
        spec: &ReleaseSpec,
        sums: &mut EntrySums,
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
        let mut norms = std::mem::take(&mut self.norms);
        norms.clear();
        for (j, (b, r)) in self.blocks.iter().zip(&self.runs).enumerate() {
            let norm = match (r.current_has_runs(), b.written()) {
                (true, true) => {
                    self.norms = norms;
                    return reject(self, j, "runs and entry writes mixed in one block");
                }
                (true, false) => r.current_norm(),
                (false, _) => b.norm(),
            };
            match norm {
                Some(n) => norms.push(n),
                None => {
                    self.norms = norms;
                    return reject(self, j, "a non-finite value written");
                }
            }
        }
        let mut scales = std::mem::take(&mut self.scales);
        scales.clear();
        let mut clipped = false;
        for g in spec.groups() {
            let norm = match g.blocks() {
                [b] => norms[*b],
                blocks => joint_norm(blocks.iter().map(|&b| norms[b])),
            };
            let scale = clip_scale(norm, g.bound());
            clipped |= scale < 1.0;
            scales.push(scale);
        }
        for (j, (b, r)) in self.blocks.iter_mut().zip(&mut self.runs).enumerate() {
            let scale = spec.group_of(j).map_or(0.0, |g| scales[g]);
            if r.current_has_runs() {
                r.seal(scale);
            } else if b.written() {
                let len = b.len;
                b.drain_into(sums.block(j, len), scale);
            }
        }
        self.norms = norms;
        self.scales = scales;
        Ok(if clipped {
            RecordOutcome::Clipped
        } else {
            RecordOutcome::Added
        })
    }

    /// Zeroes every block, drops the current record's runs and forgets any recorded error.
    pub(crate) fn reset(&mut self) {
        self.blocks.iter_mut().for_each(BlockScratch::reset);
        self.runs.iter_mut().for_each(RunStore::drop_current);
        self.error = None;
    }
}

/// `sqrt(sum n_i^2)`, scaled by the largest so that norms near `1e200` do not overflow.
fn joint_norm(norms: impl Iterator<Item = f64> + Clone) -> f64 {
    let max = norms.clone().fold(0.0f64, f64::max);
    if max == 0.0 {
        return 0.0;
    }
    max * norms.map(|n| (n / max) * (n / max)).sum::<f64>().sqrt()
}

/// The error of a malformed record in a non-private release: the block's declared name (or
/// `"(no such block)"`) and a fixed reason, never a value derived from the record.
fn invalid(spec: &ReleaseSpec, block: usize, reason: &'static str) -> CoreError {
    let name = match block {
        REJECTED => "(rejected by the statistic)".to_string(),
        _ => spec
            .blocks()
            .get(block)
            .map_or_else(|| "(no such block)".to_string(), |b| b.name().to_string()),
    };
    CoreError::InvalidContribution {
        block: name,
        reason: reason.to_string(),
    }
}
