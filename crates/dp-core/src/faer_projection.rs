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
use faer::linalg::evd::{ComputeEigenvectors, self_adjoint_evd_scratch};
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

/// faer's `self_adjoint_evd` of the exactly symmetric `matrix` (eigenvalues into `s`,
/// non-decreasing; eigenvectors into the column-major `d x d` `u`), the same steps on the same
/// numbers, but tridiagonalising `matrix` itself instead of a `d x d` copy: `self_adjoint_evd`
/// holds the input, its copy, the eigenvectors and the divide-and-conquer's two `d x d`
/// temporaries (five `d x d` at `d = 4,146`, 655 MiB); this holds four.
///
/// The tridiagonalisation reads and writes only the lower triangle, so the strict upper one
/// still holds the input; the input is restored from it and from its saved diagonal before
/// returning (also on failure: `None`, the matrix unchanged, when the eigensolver does not
/// converge or its workspace cannot be allocated).
fn evd_in_place(
    matrix: &mut DMatrix<f64>,
    s: faer::diag::DiagMut<'_, f64>,
    u: &mut [f64],
    par: Par,
) -> Option<()> {
    use faer::linalg::evd::{tridiag, tridiagonal_self_adjoint_evd};
    use faer::linalg::householder::{
        apply_block_householder_sequence_on_the_left_in_place_scratch,
        apply_block_householder_sequence_on_the_left_in_place_with_conj,
    };
    use faer::linalg::temp_mat_scratch;
    use faer::{Conj, dyn_stack::StackReq};
    let n = matrix.nrows();
    if n < 2 {
        return None;
    }
    let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n, n);
    // The workspace of `self_adjoint_evd` after its prologue (the copy, the Householder factors,
    // the tridiagonalisation) bounds what the tridiagonal solver and the back-transformation use;
    // the solver's two length-n temporaries are added.
    let full =
        self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::Yes, par, Default::default());
    let prologue =
        self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::No, par, Default::default());
    let after = StackReq::new_aligned::<u8>(
        full.size_bytes().saturating_sub(prologue.size_bytes()) + 4096,
        full.align_bytes(),
    );
    let req = StackReq::all_of(&[
        temp_mat_scratch::<f64>(bs, n - 1),
        StackReq::any_of(&[
            tridiag::tridiag_in_place_scratch::<f64>(n, par, Default::default()),
            StackReq::all_of(&[temp_mat_scratch::<f64>(n, 1).array(2), after]),
            apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(n - 1, bs, n),
        ]),
    ]);
    let mut mem = MemBuffer::try_new(req).ok()?;
    let stack = MemStack::new(&mut mem);
    let mut householder = faer::Mat::<f64>::zeros(bs, n - 1);
    let diagonal: Vec<f64> = (0..n).map(|i| matrix[(i, i)]).collect();
    let a = MatMut::from_column_major_slice_mut(matrix.as_mut_slice(), n, n);
    tridiag::tridiag_in_place(a, householder.as_mut(), par, stack, Default::default());
    let trid = MatRef::from_column_major_slice(matrix.as_slice(), n, n);
    let diag: Vec<f64> = (0..n).map(|i| trid[(i, i)]).collect();
    let offdiag: Vec<f64> = (0..n)
        .map(|i| if i + 1 < n { trid[(i + 1, i)] } else { 0.0 })
        .collect();
    let mut vectors = MatMut::from_column_major_slice_mut(u, n, n);
    let solved = tridiagonal_self_adjoint_evd(
        faer::ColRef::from_slice(&diag).as_diagonal(),
        faer::ColRef::from_slice(&offdiag).as_diagonal(),
        s,
        Some(vectors.as_mut()),
        par,
        stack,
        Default::default(),
    )
    .is_ok();
    if solved {
        apply_block_householder_sequence_on_the_left_in_place_with_conj(
            trid.submatrix(1, 0, n - 1, n - 1),
            householder.as_ref(),
            Conj::No,
            vectors.subrows_mut(1, n - 1),
            par,
            stack,
        );
    }
    crate::analyze_gauss::mirror_upper_to_lower(matrix);
    for (i, v) in diagonal.into_iter().enumerate() {
        matrix[(i, i)] = v;
    }
    solved.then_some(())
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
    evd_in_place(matrix, s.as_mut(), &mut u, par)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use faer::linalg::evd::self_adjoint_evd;

    /// The in-place eigendecomposition is faer's `self_adjoint_evd` bit for bit (QR below faer's
    /// recursion threshold of 128, divide and conquer above; one and two threads), and leaves
    /// the input as it found it.
    #[test]
    fn in_place_evd_is_faers_bit_for_bit() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(8);
        for d in [2, 60, 200] {
            let mut a = DMatrix::<f64>::zeros(d, d);
            crate::add_symmetric_noise(&mut a, 1.0, &mut rng).unwrap();
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    let par = parallelism();
                    let mut want_u = vec![0.0; d * d];
                    let mut want_s = Diag::<f64>::zeros(d);
                    let req = self_adjoint_evd_scratch::<f64>(
                        d,
                        ComputeEigenvectors::Yes,
                        par,
                        Default::default(),
                    );
                    let mut mem = MemBuffer::new(req);
                    self_adjoint_evd(
                        MatRef::from_column_major_slice(a.as_slice(), d, d),
                        want_s.as_mut(),
                        Some(MatMut::from_column_major_slice_mut(&mut want_u, d, d)),
                        par,
                        MemStack::new(&mut mem),
                        Default::default(),
                    )
                    .unwrap();
                    let mut m = a.clone();
                    let mut u = vec![0.0; d * d];
                    let mut s = Diag::<f64>::zeros(d);
                    evd_in_place(&mut m, s.as_mut(), &mut u, par).unwrap();
                    assert_eq!(m, a, "d = {d}: input restored");
                    assert_eq!(u, want_u, "d = {d}, {threads} threads: eigenvectors");
                    for i in 0..d {
                        let (x, y) = (s.column_vector()[i], want_s.column_vector()[i]);
                        assert_eq!(x.to_bits(), y.to_bits(), "d = {d}: eigenvalue {i}");
                    }
                });
            }
        }
    }
}
