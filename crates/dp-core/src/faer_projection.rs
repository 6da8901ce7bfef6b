//! The positive-definite projection's linear algebra for large `d`, on `faer` (pure Rust, blocked
//! and SIMD: a Householder tridiagonalisation with level-3 updates and a divide-and-conquer
//! tridiagonal eigensolver, the same algorithm family as LAPACK's `dsyevd`). nalgebra's
//! `SymmetricEigen` and `Cholesky` are unblocked and some 6-8 times slower at `d = 1000`.
//!
//! Everything here runs on the caller's rayon pool ([`parallelism`]: all of its threads, or
//! sequentially with one), and works in place: the Cholesky test uses one `d x d` scratch, the
//! eigendecomposition one `d x d` for the eigenvectors plus faer's workspace, and the projected
//! matrix is rebuilt in the input's own memory.

use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::linalg::evd::{ComputeEigenvectors, self_adjoint_evd, self_adjoint_evd_scratch};
use faer::linalg::matmul::triangular::{BlockStructure, matmul};
use faer::{Accum, MatMut, MatRef, Par};
use nalgebra::DMatrix;

/// faer's parallelism: every thread of the current rayon pool, sequential with one thread.
pub(crate) fn parallelism() -> Par {
    match rayon::current_num_threads() {
        0 | 1 => Par::Seq,
        n => Par::rayon(n),
    }
}

/// A column-major nalgebra matrix seen as a faer matrix (no copy).
fn view(m: &DMatrix<f64>) -> MatRef<'_, f64> {
    MatRef::from_column_major_slice(m.as_slice(), m.nrows(), m.ncols())
}

/// A zeroed `d x d` column-major buffer, or `None` if it cannot be allocated.
fn try_square(d: usize) -> Option<Vec<f64>> {
    let len = d.checked_mul(d)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).ok()?;
    v.resize(len, 0.0);
    Some(v)
}

/// Whether the Cholesky factorisation `L L^T` of `matrix - floor I` (its lower triangle is read)
/// succeeds, i.e. `matrix - floor I` is numerically positive definite; `None` if the scratch
/// cannot be allocated. The factorisation works on one `d x d` copy of the lower triangle.
pub(crate) fn cholesky_above_floor(matrix: &DMatrix<f64>, floor: f64) -> Option<bool> {
    let d = matrix.nrows();
    let mut a = try_square(d)?;
    let src = matrix.as_slice();
    for j in 0..d {
        a[j * d + j..(j + 1) * d].copy_from_slice(&src[j * d + j..(j + 1) * d]);
        a[j * d + j] -= floor;
    }
    let par = parallelism();
    let mut mem =
        MemBuffer::try_new(cholesky_in_place_scratch::<f64>(d, par, Default::default())).ok()?;
    Some(
        cholesky_in_place(
            MatMut::from_column_major_slice_mut(&mut a, d, d),
            Default::default(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .is_ok(),
    )
}

/// Result of the eigenvalue projection of an exactly symmetric matrix.
pub(crate) struct EigenProjection {
    /// Number of eigenvalues below the floor (`0`: the matrix was left unchanged).
    pub(crate) raised: usize,
    /// Smallest eigenvalue.
    pub(crate) smallest: f64,
}

/// Replaces the exactly symmetric `matrix = V Lambda V^T` by `V max(Lambda, floor) V^T` in place;
/// `None` (matrix unchanged) if faer's eigensolver reports no convergence or its workspace cannot
/// be allocated (the caller then falls back to nalgebra).
///
/// With eigenvalues sorted (`faer` returns them non-decreasing), the first `r` are below the floor.
/// The projection is rebuilt as a rank-`min(r, d - r)` update, whichever is cheaper (both equal
/// `V max(Lambda, floor) V^T` in exact arithmetic):
/// * `r <= d - r`: `A + V_r diag(floor - lambda_r) V_r^T` (only the raised directions move);
/// * otherwise: `floor I + V_k diag(lambda_k - floor) V_k^T` over the kept eigenpairs.
///
/// Only the lower triangle of the update is computed, then mirrored: the result is exactly
/// symmetric.
pub(crate) fn project_in_place(matrix: &mut DMatrix<f64>, floor: f64) -> Option<EigenProjection> {
    let d = matrix.nrows();
    let par = parallelism();
    let mut u = try_square(d)?;
    let mut s = Diag::<f64>::zeros(d);
    {
        let req =
            self_adjoint_evd_scratch::<f64>(d, ComputeEigenvectors::Yes, par, Default::default());
        let mut mem = MemBuffer::try_new(req).ok()?;
        self_adjoint_evd(
            view(matrix),
            s.as_mut(),
            Some(MatMut::from_column_major_slice_mut(&mut u, d, d)),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .ok()?;
    }
    let values = s.column_vector();
    let vectors = MatRef::from_column_major_slice(&u, d, d);
    let raised = (0..d).take_while(|&i| values[i] < floor).count();
    let smallest = values[0];
    // faer sorts; a NaN would break `take_while`'s count, so check it agrees with a full count.
    if (0..d).filter(|&i| values[i] < floor).count() != raised || !smallest.is_finite() {
        return None;
    }
    if raised == 0 {
        return Some(EigenProjection { raised, smallest });
    }
    // Only the raised directions move, or the kept eigenpairs are added to `floor I`.
    let update_raised = raised <= d - raised;
    let range = if update_raised { 0..raised } else { raised..d };
    let scale = |lambda: f64| {
        if update_raised {
            floor - lambda
        } else {
            lambda - floor
        }
    };
    let basis = vectors.subcols(range.start, range.len());
    let mut scaled = basis.to_owned();
    for (c, i) in range.enumerate() {
        let s = scale(values[i]);
        scaled.col_mut(c).iter_mut().for_each(|x| *x *= s);
    }
    if !update_raised {
        matrix.fill(0.0);
        matrix.fill_diagonal(floor);
    }
    {
        let dst = MatMut::from_column_major_slice_mut(matrix.as_mut_slice(), d, d);
        matmul(
            dst,
            BlockStructure::TriangularLower,
            Accum::Add,
            scaled.as_ref(),
            BlockStructure::Rectangular,
            basis.transpose(),
            BlockStructure::Rectangular,
            1.0,
            par,
        );
    }
    crate::analyze_gauss::mirror_lower_to_upper(matrix);
    Some(EigenProjection { raised, smallest })
}
