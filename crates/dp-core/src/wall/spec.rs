//! What a release contains: named blocks, each with a shape and a declared norm bound.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, check_positive};

/// The shape of one statistic block.
///
/// Storage inside the wall is flat: a vector as is; a matrix column-major (nalgebra's order,
/// entry `(r, c)` at `c * rows + r`); a symmetric matrix as its packed upper triangle including
/// the diagonal, column-major (entry `(i, j)`, `i <= j`, at `j (j + 1) / 2 + i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum BlockShape {
    /// A vector of `len` entries; bound in L2 norm; iid Gaussian noise.
    Vector {
        /// Number of entries.
        len: usize,
    },
    /// A `rows x cols` matrix; bound in Frobenius norm; iid Gaussian noise on every entry.
    Matrix {
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
    },
    /// A symmetric `dim x dim` matrix; bound in Frobenius norm; Analyze-Gauss noise (upper
    /// triangle incl. diagonal iid, mirrored), optionally projected onto `lambda_min >= floor`.
    Symmetric {
        /// Side length.
        dim: usize,
    },
}

impl BlockShape {
    /// Number of stored (free) entries.
    pub fn stored_len(&self) -> usize {
        match *self {
            Self::Vector { len } => len,
            Self::Matrix { rows, cols } => rows * cols,
            Self::Symmetric { dim } => dim * (dim + 1) / 2,
        }
    }

    /// Whether the packed entry `index` of a symmetric block lies on the diagonal.
    pub(crate) fn packed_is_diagonal(index: usize) -> bool {
        // index = j (j + 1) / 2 + i with 0 <= i <= j; diagonal iff i == j.
        let mut j = ((((8 * index + 1) as f64).sqrt() - 1.0) / 2.0) as usize;
        while j * (j + 1) / 2 > index {
            j -= 1;
        }
        while (j + 1) * (j + 2) / 2 <= index {
            j += 1;
        }
        index - j * (j + 1) / 2 == j
    }
}

/// Packed index of entry `(i, j)` of a symmetric matrix (either order).
pub(crate) fn packed_index(i: usize, j: usize) -> usize {
    let (i, j) = if i <= j { (i, j) } else { (j, i) };
    j * (j + 1) / 2 + i
}

/// One block of a release: a name, a shape and the declared per-record norm bound (its group's
/// bound). Made by [`ReleaseSpecBuilder`]; read with [`ReleaseSpec::blocks`].
///
/// # Example
/// ```
/// use dp_core::ReleaseSpec;
/// let mut b = ReleaseSpec::builder("blr e-step");
/// b.vector("s1", 10, 0.5)?;
/// let s2 = b.symmetric("s2", 10, 0.25)?;
/// b.eigenvalue_floor(s2, 1e-6)?;
/// let spec = b.build()?;
/// let block = &spec.blocks()[s2.index()];
/// assert_eq!((block.name(), block.stored_len()), ("s2", 55));
/// assert_eq!(block.eigenvalue_floor(), Some(1e-6));
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSpec {
    name: String,
    shape: BlockShape,
    bound: f64,
    eigenvalue_floor: Option<f64>,
}

impl BlockSpec {
    fn new(name: impl Into<String>, shape: BlockShape, bound: f64) -> Result<Self, CoreError> {
        check_positive("block norm bound", bound)?;
        if shape.stored_len() == 0 {
            return Err(CoreError::Empty("a block needs at least one entry"));
        }
        Ok(Self {
            name: name.into(),
            shape,
            bound,
            eigenvalue_floor: None,
        })
    }

    /// Projects the released (normalised) matrix onto `{A : lambda_min(A) >= floor}`.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for a non-symmetric block or a floor that is not finite
    /// and `> 0`.
    fn with_eigenvalue_floor(mut self, floor: f64) -> Result<Self, CoreError> {
        if !matches!(self.shape, BlockShape::Symmetric { .. }) {
            return Err(CoreError::InvalidParameter {
                name: "eigenvalue floor",
                value: floor,
                reason: "only symmetric blocks can be projected",
            });
        }
        self.eigenvalue_floor = Some(check_positive("eigenvalue floor", floor)?);
        Ok(self)
    }

    /// The block's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The block's shape.
    pub fn shape(&self) -> BlockShape {
        self.shape
    }

    /// The declared per-record norm bound (L2 or Frobenius).
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The eigenvalue floor of a projected symmetric block.
    pub fn eigenvalue_floor(&self) -> Option<f64> {
        self.eigenvalue_floor
    }

    /// Number of stored entries.
    pub fn stored_len(&self) -> usize {
        self.shape.stored_len()
    }
}

/// Source of spec identities: every [`ReleaseSpec::builder`] (and every deserialised spec) gets
/// a fresh one, so that a handle from another spec is recognised.
static NEXT_SPEC_ID: AtomicU64 = AtomicU64::new(1);

fn fresh_id() -> u64 {
    NEXT_SPEC_ID.fetch_add(1, Ordering::Relaxed)
}

pub(crate) mod sealed {
    /// What a handle says about the block it names.
    #[derive(Clone, Copy, Debug)]
    pub struct RawBlock {
        /// The identity of the spec that made the handle.
        pub spec: u64,
        /// The block's position in the spec (or the group's, for a group handle).
        pub index: usize,
        /// Whether `index` is a group's position rather than a block's.
        pub group: bool,
        /// Stored length of the block (`0` for groups).
        pub len: usize,
    }

    pub trait Sealed: Copy {
        fn raw(self) -> RawBlock;
    }
}

pub(crate) use sealed::RawBlock;

/// Any block handle ([`VectorBlock`], [`MatrixBlock`], [`SymmetricBlock`]): what
/// [`crate::ContributionBuffer::dense`] and [`crate::Release::released`] take. Sealed.
pub trait BlockHandle: sealed::Sealed {}
/// Handles whose blocks take entry writes by stored index ([`crate::ContributionBuffer::push`]):
/// [`VectorBlock`]. Sealed.
pub trait EntryHandle: BlockHandle {}
/// Handles of matrix blocks ([`crate::ContributionBuffer::push_matrix`]). Sealed.
pub trait MatrixHandle: BlockHandle {}
/// Handles of symmetric blocks ([`crate::ContributionBuffer::add_symmetric`],
/// [`crate::ContributionBuffer::add_outer_product`]). Sealed.
pub trait SymmetricHandle: BlockHandle {}
/// Handles of blocks that take runs ([`crate::ContributionBuffer::segment`]): vector and matrix
/// blocks. Sealed.
///
/// Runs into a symmetric block do not compile:
/// ```compile_fail
/// use dp_core::{ContributionBuffer, ReleaseSpec};
/// let mut b = ReleaseSpec::builder("no runs");
/// let s = b.symmetric("s", 3, 1.0)?;
/// let spec = b.build()?;
/// ContributionBuffer::new(&spec).push_segment(s, 0, &[1.0]);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub trait RunHandle: BlockHandle {}
/// What a noise weight is set on ([`ReleaseSpecBuilder::weight`]): a group, or a block (its
/// group). Sealed.
pub trait WeightTarget: sealed::Sealed {}

/// Handle of a vector block of one [`ReleaseSpec`], returned by [`ReleaseSpecBuilder::vector`].
/// `Copy`; carries the block's position and its spec's identity, so a handle used with another
/// spec is detected (an invalid write, or [`CoreError::UnknownBlock`] when reading a release).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VectorBlock {
    spec: u64,
    index: usize,
    len: usize,
}

/// Handle of a matrix block (column-major storage), returned by [`ReleaseSpecBuilder::matrix`];
/// see [`VectorBlock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixBlock {
    spec: u64,
    index: usize,
    rows: usize,
    cols: usize,
}

/// Handle of a symmetric block (packed upper triangle), returned by
/// [`ReleaseSpecBuilder::symmetric`]; see [`VectorBlock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SymmetricBlock {
    spec: u64,
    index: usize,
    dim: usize,
}

/// Handle of a group of blocks sharing one joint per-record bound, returned by
/// [`ReleaseSpecBuilder::group`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockGroup {
    spec: u64,
    index: usize,
}

impl VectorBlock {
    /// The block's position in its spec.
    pub fn index(self) -> usize {
        self.index
    }
    /// Number of entries.
    pub fn len(self) -> usize {
        self.len
    }
    /// Always `false` (a block has at least one entry).
    pub fn is_empty(self) -> bool {
        self.len == 0
    }
}

impl MatrixBlock {
    /// The block's position in its spec.
    pub fn index(self) -> usize {
        self.index
    }
    /// Number of rows.
    pub fn rows(self) -> usize {
        self.rows
    }
    /// Number of columns.
    pub fn cols(self) -> usize {
        self.cols
    }
    /// Stored index of entry `(row, col)` (column-major), for [`RunHandle`] writes such as a
    /// run down column `col` starting at `row`.
    pub fn stored_index(self, row: usize, col: usize) -> usize {
        col.saturating_mul(self.rows).saturating_add(row)
    }
}

impl SymmetricBlock {
    /// The block's position in its spec.
    pub fn index(self) -> usize {
        self.index
    }
    /// Side length.
    pub fn dim(self) -> usize {
        self.dim
    }
}

impl BlockGroup {
    /// The group's position in its spec ([`ReleaseSpec::groups`]).
    pub fn index(self) -> usize {
        self.index
    }
}

macro_rules! handle_impls {
    ($t:ty, $len:expr) => {
        impl sealed::Sealed for $t {
            fn raw(self) -> RawBlock {
                RawBlock {
                    spec: self.spec,
                    index: self.index,
                    group: false,
                    len: $len(self),
                }
            }
        }
        impl BlockHandle for $t {}
        impl WeightTarget for $t {}
    };
}
handle_impls!(VectorBlock, |h: VectorBlock| h.len);
handle_impls!(MatrixBlock, |h: MatrixBlock| h.rows * h.cols);
handle_impls!(SymmetricBlock, |h: SymmetricBlock| h.dim * (h.dim + 1) / 2);
impl EntryHandle for VectorBlock {}
impl MatrixHandle for MatrixBlock {}
impl SymmetricHandle for SymmetricBlock {}
impl RunHandle for VectorBlock {}
impl RunHandle for MatrixBlock {}

impl sealed::Sealed for BlockGroup {
    fn raw(self) -> RawBlock {
        RawBlock {
            spec: self.spec,
            index: self.index,
            group: true,
            len: 0,
        }
    }
}
impl WeightTarget for BlockGroup {}

/// Blocks sharing one joint per-record bound, and the group's noise weight.
///
/// A record's contribution to the group (the concatenation of its blocks, symmetric blocks
/// weighted as in their Frobenius norm: off-diagonal entries count twice) is clipped to
/// [`Self::bound`] in L2 norm. An ungrouped block is a group of one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupSpec {
    name: String,
    bound: f64,
    #[serde(default = "one")]
    weight: f64,
    blocks: Vec<usize>,
}

fn one() -> f64 {
    1.0
}

impl GroupSpec {
    /// The group's name (the block's name for an ungrouped block).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The joint per-record bound of the group's blocks.
    pub fn bound(&self) -> f64 {
        self.bound
    }
    /// The noise weight `a_g` (default `1`; see the [module documentation](super)).
    pub fn weight(&self) -> f64 {
        self.weight
    }
    /// Positions of the group's blocks in the spec.
    pub fn blocks(&self) -> &[usize] {
        &self.blocks
    }
}

/// The blocks of one release, noised together by rescale-noise-rescale (003 Eq. 63), with their
/// groups (joint bounds) and noise weights, and a name that labels the release's ledger entries
/// (`"<name> #<release number>"`).
///
/// Built with [`ReleaseSpec::builder`], which hands out typed block handles; a handle carries
/// its spec's identity (shared by clones of the spec, fresh for a deserialised one).
///
/// # Example
/// ```
/// use dp_core::ReleaseSpec;
/// let mut b = ReleaseSpec::builder("blr e-step");
/// let s1 = b.vector("s1", 3, 0.5)?;
/// let s2 = b.symmetric("s2", 3, 0.25)?;
/// b.eigenvalue_floor(s2, 1e-6)?;
/// let spec = b.build()?;
/// assert_eq!(spec.len(), 2);
/// assert_eq!(spec.vector_block("s1")?, s1);
/// assert_eq!(spec.rescaled_sensitivity(), 2f64.sqrt());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "SpecJson", try_from = "SpecJson")]
pub struct ReleaseSpec {
    name: String,
    id: u64,
    blocks: Vec<BlockSpec>,
    groups: Vec<GroupSpec>,
    /// The group of every block.
    group_of: Vec<usize>,
}

/// Two specs are equal when they describe the same release (name, blocks, groups, weights),
/// whatever their identities.
impl PartialEq for ReleaseSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.blocks == other.blocks && self.groups == other.groups
    }
}

/// The serialised form of a [`ReleaseSpec`] (without its identity).
#[derive(Serialize, Deserialize)]
struct SpecJson {
    #[serde(default = "default_name")]
    name: String,
    blocks: Vec<BlockSpec>,
    #[serde(default)]
    groups: Vec<GroupSpec>,
}

fn default_name() -> String {
    "release".into()
}

impl From<ReleaseSpec> for SpecJson {
    fn from(s: ReleaseSpec) -> Self {
        Self {
            name: s.name,
            blocks: s.blocks,
            groups: s.groups,
        }
    }
}

impl TryFrom<SpecJson> for ReleaseSpec {
    type Error = CoreError;
    fn try_from(j: SpecJson) -> Result<Self, CoreError> {
        let groups = if j.groups.is_empty() {
            singleton_groups(&j.blocks)
        } else {
            j.groups
        };
        ReleaseSpec::assemble(j.name, fresh_id(), j.blocks, groups)
    }
}

fn singleton_groups(blocks: &[BlockSpec]) -> Vec<GroupSpec> {
    blocks
        .iter()
        .enumerate()
        .map(|(i, b)| GroupSpec {
            name: b.name.clone(),
            bound: b.bound,
            weight: 1.0,
            blocks: vec![i],
        })
        .collect()
}

/// Builder of a [`ReleaseSpec`]: each block added returns its typed handle.
///
/// # Example: a mixture model's `K` covariance statistics sharing one bound
/// ```
/// use dp_core::ReleaseSpec;
/// let mut b = ReleaseSpec::builder("gmm m-step");
/// let counts = b.vector("counts", 3, 1.0)?;
/// let covs = b.group("covariances", 1.0)?;      // one joint per-record bound for all K
/// let cov: Vec<_> = (0..3)
///     .map(|k| b.symmetric_in(covs, format!("cov{k}"), 2))
///     .collect::<Result<_, _>>()?;
/// b.weight(covs, 2.0)?;                           // less noise on the covariances
/// let spec = b.build()?;
/// assert_eq!(spec.groups().len(), 2);             // two units: sensitivity sqrt(1 + 2^2)
/// assert!((spec.rescaled_sensitivity() - 5f64.sqrt()).abs() < 1e-15);
/// assert_eq!(cov[2].index(), 3);
/// # let _ = counts;
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Debug)]
pub struct ReleaseSpecBuilder {
    name: String,
    id: u64,
    blocks: Vec<BlockSpec>,
    groups: Vec<GroupSpec>,
}

impl ReleaseSpec {
    /// Starts a spec called `name` (the label of its releases in the ledger).
    pub fn builder(name: impl Into<String>) -> ReleaseSpecBuilder {
        ReleaseSpecBuilder {
            name: name.into(),
            id: fresh_id(),
            blocks: Vec::new(),
            groups: Vec::new(),
        }
    }

    fn assemble(
        name: String,
        id: u64,
        blocks: Vec<BlockSpec>,
        groups: Vec<GroupSpec>,
    ) -> Result<Self, CoreError> {
        if blocks.is_empty() {
            return Err(CoreError::Empty("a release needs at least one block"));
        }
        for (i, b) in blocks.iter().enumerate() {
            if blocks[..i].iter().any(|o| o.name == b.name) {
                return Err(CoreError::InvalidContribution {
                    block: b.name.clone(),
                    reason: "block names must be unique within a release".into(),
                });
            }
        }
        let mut group_of = vec![usize::MAX; blocks.len()];
        for (g, group) in groups.iter().enumerate() {
            check_positive("group norm bound", group.bound)?;
            check_positive("group noise weight", group.weight)?;
            if group.blocks.is_empty() {
                return Err(CoreError::Empty("a block group has no blocks"));
            }
            for &b in &group.blocks {
                match group_of.get_mut(b) {
                    Some(slot) if *slot == usize::MAX => *slot = g,
                    _ => {
                        return Err(CoreError::Misconfigured(
                            "every block must belong to exactly one group",
                        ));
                    }
                }
            }
        }
        if group_of.contains(&usize::MAX) {
            return Err(CoreError::Misconfigured(
                "every block must belong to exactly one group",
            ));
        }
        Ok(Self {
            name,
            id,
            blocks,
            groups,
            group_of,
        })
    }

    /// The spec's name (labels its releases in the ledger: `"<name> #<release number>"`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The spec's identity (shared by its clones and its handles).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The blocks, in release order.
    pub fn blocks(&self) -> &[BlockSpec] {
        &self.blocks
    }

    /// The groups (an ungrouped block is a group of one), in order of creation.
    pub fn groups(&self) -> &[GroupSpec] {
        &self.groups
    }

    /// The group of block `block` (a position in [`Self::groups`]).
    pub fn group_of(&self, block: usize) -> Option<usize> {
        self.group_of.get(block).copied()
    }

    /// Number of blocks `k`.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Always `false` (a spec has at least one block).
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Position of the block called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.blocks.iter().position(|b| b.name == name)
    }

    fn lookup(&self, name: &str) -> Result<(usize, BlockShape), CoreError> {
        let i = self.index_of(name).ok_or(CoreError::UnknownBlock {
            reason: "no block of that name in the spec",
        })?;
        Ok((i, self.blocks[i].shape))
    }

    /// The handle of the vector block called `name` (for a spec built elsewhere).
    ///
    /// # Errors
    /// [`CoreError::UnknownBlock`] if there is no such vector block.
    pub fn vector_block(&self, name: &str) -> Result<VectorBlock, CoreError> {
        match self.lookup(name)? {
            (index, BlockShape::Vector { len }) => Ok(VectorBlock {
                spec: self.id,
                index,
                len,
            }),
            _ => Err(CoreError::UnknownBlock {
                reason: "the block is not a vector block",
            }),
        }
    }

    /// The handle of the matrix block called `name`.
    ///
    /// # Errors
    /// [`CoreError::UnknownBlock`] if there is no such matrix block.
    pub fn matrix_block(&self, name: &str) -> Result<MatrixBlock, CoreError> {
        match self.lookup(name)? {
            (index, BlockShape::Matrix { rows, cols }) => Ok(MatrixBlock {
                spec: self.id,
                index,
                rows,
                cols,
            }),
            _ => Err(CoreError::UnknownBlock {
                reason: "the block is not a matrix block",
            }),
        }
    }

    /// The handle of the symmetric block called `name`.
    ///
    /// # Errors
    /// [`CoreError::UnknownBlock`] if there is no such symmetric block.
    pub fn symmetric_block(&self, name: &str) -> Result<SymmetricBlock, CoreError> {
        match self.lookup(name)? {
            (index, BlockShape::Symmetric { dim }) => Ok(SymmetricBlock {
                spec: self.id,
                index,
                dim,
            }),
            _ => Err(CoreError::UnknownBlock {
                reason: "the block is not a symmetric block",
            }),
        }
    }

    /// L2 sensitivity, under add/remove-one, of the concatenation of the groups each scaled by
    /// `a_g / B_g`: `sqrt(sum_g a_g^2)`, i.e. `sqrt(G)` with default weights (003 Eq. 63, a
    /// group counting as one unit). Multiply by the scheme's sensitivity factor for
    /// replace-one.
    pub fn rescaled_sensitivity(&self) -> f64 {
        self.groups
            .iter()
            .map(|g| g.weight * g.weight)
            .sum::<f64>()
            .sqrt()
    }

    /// `B_g / a_g` of block `block`'s group: the noise std on the block's sum is this times
    /// `sigma x relation factor x` [`Self::rescaled_sensitivity`]. `None` for no such block.
    pub fn noise_bound(&self, block: usize) -> Option<f64> {
        let g = &self.groups[*self.group_of.get(block)?];
        Some(g.bound / g.weight)
    }
}

impl ReleaseSpecBuilder {
    fn push_block(
        &mut self,
        group: Option<BlockGroup>,
        name: String,
        shape: BlockShape,
        bound: Option<f64>,
    ) -> Result<usize, CoreError> {
        if self.blocks.iter().any(|b| b.name == name) {
            return Err(CoreError::InvalidContribution {
                block: name,
                reason: "block names must be unique within a release".into(),
            });
        }
        let index = self.blocks.len();
        match group {
            Some(g) => {
                let g = self.own_group(g)?;
                let block = BlockSpec::new(name, shape, self.groups[g].bound)?;
                self.groups[g].blocks.push(index);
                self.blocks.push(block);
            }
            None => {
                let block = BlockSpec::new(name, shape, bound.unwrap_or(f64::NAN))?;
                self.groups.push(GroupSpec {
                    name: block.name.clone(),
                    bound: block.bound,
                    weight: 1.0,
                    blocks: vec![index],
                });
                self.blocks.push(block);
            }
        }
        Ok(index)
    }

    fn own_group(&self, g: BlockGroup) -> Result<usize, CoreError> {
        if g.spec != self.id || g.index >= self.groups.len() {
            return Err(CoreError::UnknownBlock {
                reason: "a group handle from another spec",
            });
        }
        Ok(g.index)
    }

    /// Adds a vector block of `len` entries whose per-record contribution is clipped to L2 norm
    /// `bound` (its own group, weight 1).
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless `bound` is finite and `> 0`; [`CoreError::Empty`]
    /// for `len == 0`; [`CoreError::InvalidContribution`] for a repeated name.
    pub fn vector(
        &mut self,
        name: impl Into<String>,
        len: usize,
        bound: f64,
    ) -> Result<VectorBlock, CoreError> {
        let index = self.push_block(None, name.into(), BlockShape::Vector { len }, Some(bound))?;
        Ok(VectorBlock {
            spec: self.id,
            index,
            len,
        })
    }

    /// Adds a `rows x cols` matrix block clipped per record to Frobenius norm `bound`.
    ///
    /// # Errors
    /// As [`Self::vector`].
    pub fn matrix(
        &mut self,
        name: impl Into<String>,
        rows: usize,
        cols: usize,
        bound: f64,
    ) -> Result<MatrixBlock, CoreError> {
        let shape = BlockShape::Matrix { rows, cols };
        let index = self.push_block(None, name.into(), shape, Some(bound))?;
        Ok(MatrixBlock {
            spec: self.id,
            index,
            rows,
            cols,
        })
    }

    /// Adds a symmetric `dim x dim` block clipped per record to Frobenius norm `bound`,
    /// released with Analyze-Gauss noise (see [`Self::eigenvalue_floor`]).
    ///
    /// # Errors
    /// As [`Self::vector`].
    pub fn symmetric(
        &mut self,
        name: impl Into<String>,
        dim: usize,
        bound: f64,
    ) -> Result<SymmetricBlock, CoreError> {
        let shape = BlockShape::Symmetric { dim };
        let index = self.push_block(None, name.into(), shape, Some(bound))?;
        Ok(SymmetricBlock {
            spec: self.id,
            index,
            dim,
        })
    }

    /// Adds a group: blocks added with [`Self::vector_in`], [`Self::matrix_in`] and
    /// [`Self::symmetric_in`] share its joint per-record bound `bound` (the L2 norm of the
    /// concatenation of a record's contributions to them is clipped to `bound`) and count as
    /// **one** unit of the rescale-noise-rescale sensitivity.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless `bound` is finite and `> 0`. A group left without
    /// blocks fails [`Self::build`].
    pub fn group(&mut self, name: impl Into<String>, bound: f64) -> Result<BlockGroup, CoreError> {
        check_positive("group norm bound", bound)?;
        self.groups.push(GroupSpec {
            name: name.into(),
            bound,
            weight: 1.0,
            blocks: Vec::new(),
        });
        Ok(BlockGroup {
            spec: self.id,
            index: self.groups.len() - 1,
        })
    }

    /// Adds a vector block to `group` (bounded jointly with the group's other blocks).
    ///
    /// # Errors
    /// [`CoreError::UnknownBlock`] for a group of another builder; otherwise as
    /// [`Self::vector`].
    pub fn vector_in(
        &mut self,
        group: BlockGroup,
        name: impl Into<String>,
        len: usize,
    ) -> Result<VectorBlock, CoreError> {
        let index = self.push_block(Some(group), name.into(), BlockShape::Vector { len }, None)?;
        Ok(VectorBlock {
            spec: self.id,
            index,
            len,
        })
    }

    /// Adds a matrix block to `group`.
    ///
    /// # Errors
    /// As [`Self::vector_in`].
    pub fn matrix_in(
        &mut self,
        group: BlockGroup,
        name: impl Into<String>,
        rows: usize,
        cols: usize,
    ) -> Result<MatrixBlock, CoreError> {
        let shape = BlockShape::Matrix { rows, cols };
        let index = self.push_block(Some(group), name.into(), shape, None)?;
        Ok(MatrixBlock {
            spec: self.id,
            index,
            rows,
            cols,
        })
    }

    /// Adds a symmetric block to `group` (it counts in the group's norm as in its Frobenius
    /// norm: off-diagonal entries twice).
    ///
    /// # Errors
    /// As [`Self::vector_in`].
    pub fn symmetric_in(
        &mut self,
        group: BlockGroup,
        name: impl Into<String>,
        dim: usize,
    ) -> Result<SymmetricBlock, CoreError> {
        let shape = BlockShape::Symmetric { dim };
        let index = self.push_block(Some(group), name.into(), shape, None)?;
        Ok(SymmetricBlock {
            spec: self.id,
            index,
            dim,
        })
    }

    /// Projects symmetric block `block`'s released (normalised) matrix onto
    /// `{A : lambda_min(A) >= floor}`.
    ///
    /// # Errors
    /// [`CoreError::UnknownBlock`] for a handle of another builder;
    /// [`CoreError::InvalidParameter`] for a floor that is not finite and `> 0`.
    pub fn eigenvalue_floor(&mut self, block: SymmetricBlock, floor: f64) -> Result<(), CoreError> {
        if block.spec != self.id || block.index >= self.blocks.len() {
            return Err(CoreError::UnknownBlock {
                reason: "a block handle from another spec",
            });
        }
        let b = &mut self.blocks[block.index];
        *b = b.clone().with_eigenvalue_floor(floor)?;
        Ok(())
    }

    /// Sets the noise weight `a_g > 0` of a group (or of a block's group; default `1`): the
    /// group is scaled by `a_g / B_g` in rescale-noise-rescale, so a larger weight means less
    /// noise on this group and more on the others (see the [module documentation](super)).
    ///
    /// # Errors
    /// [`CoreError::UnknownBlock`] for a handle of another builder;
    /// [`CoreError::InvalidParameter`] for a weight that is not finite and `> 0`.
    pub fn weight(&mut self, target: impl WeightTarget, weight: f64) -> Result<(), CoreError> {
        let raw = sealed::Sealed::raw(target);
        let unknown = CoreError::UnknownBlock {
            reason: "a handle from another spec",
        };
        if raw.spec != self.id {
            return Err(unknown);
        }
        let group = if raw.group {
            (raw.index < self.groups.len()).then_some(raw.index)
        } else {
            self.groups
                .iter()
                .position(|g| g.blocks.contains(&raw.index))
        }
        .ok_or(unknown)?;
        self.groups[group].weight = check_positive("group noise weight", weight)?;
        Ok(())
    }

    /// The spec.
    ///
    /// # Errors
    /// [`CoreError::Empty`] for no blocks or a group without blocks.
    pub fn build(self) -> Result<ReleaseSpec, CoreError> {
        ReleaseSpec::assemble(self.name, self.id, self.blocks, self.groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_diagonal_detection() {
        for j in 0..200usize {
            for i in 0..=j {
                assert_eq!(BlockShape::packed_is_diagonal(packed_index(i, j)), i == j);
            }
        }
    }

    #[test]
    fn rejects_bad_specs() {
        let mut b = ReleaseSpec::builder("bad");
        assert!(b.vector("a", 0, 1.0).is_err());
        assert!(b.vector("a", 3, 0.0).is_err());
        assert!(b.vector("a", 3, f64::INFINITY).is_err());
        let a = BlockSpec::new("a", BlockShape::Vector { len: 3 }, 1.0).unwrap();
        assert!(a.clone().with_eigenvalue_floor(1.0).is_err());
        let s = b.symmetric("s", 3, 1.0).unwrap();
        assert!(b.eigenvalue_floor(s, -1.0).is_err());
        assert!(b.vector("s", 3, 1.0).is_err(), "a repeated name");
        assert!(ReleaseSpec::builder("empty").build().is_err());
        // The path of a deserialised spec.
        let blocks = vec![a.clone(), a];
        let groups = singleton_groups(&blocks);
        assert!(ReleaseSpec::assemble("dup".into(), fresh_id(), blocks, groups).is_err());
    }
}
