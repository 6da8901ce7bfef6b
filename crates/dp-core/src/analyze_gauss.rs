//! Analyze-Gauss: symmetric Gaussian noise for a `d x d` symmetric statistic, then projection onto
//! the positive-definite cone (Dwork, Talwar, Thakurta & Zhang 2014; VIPS 003 Sec. 6.2 Eq. 51,
//! 000 Eq. 45 and Appendix B Eq. 66-67).
//!
//! The noise matrix `Z` has its upper triangle *including the diagonal* drawn iid `N(0, s^2)` and
//! mirrored below. Its `d (d + 1) / 2` free entries form a Gaussian mechanism on the vector of the
//! statistic's upper-triangle entries, whose L2 norm is at most the statistic's Frobenius norm
//! (off-diagonal entries count once instead of twice). So noise `s` calibrated to the statistic's
//! **Frobenius** sensitivity gives the Gaussian mechanism's guarantee.
//!
//! The noised matrix may be indefinite. Projecting onto `{A : lambda_min(A) >= floor}` (eigenvalues
//! below `floor` raised to `floor`, eigenvectors kept) is post-processing, and is the Frobenius
//! projection onto a closed convex set, hence 1-Lipschitz: it never increases the distance between
//! two releases.

use nalgebra::{DMatrix, SymmetricEigen};
use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, check_positive};
use crate::faer_projection;
use crate::gaussian::{NoiseStreams, SERIAL_NOISE_ENTRIES, fill_standard_normal};

/// What the positive-definite projection did.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PsdProjection {
    /// How many eigenvalues were below the floor and were raised to it (0: matrix unchanged).
    pub eigenvalues_raised: usize,
    /// The smallest eigenvalue before projection, when an eigendecomposition was computed
    /// (`None` when a Cholesky factorisation of `A - floor I` already proved `A` above the floor).
    pub smallest_eigenvalue_before: Option<f64>,
}

/// Side of the square tiles the `O(d^2)` passes over both triangles walk (so that the transposed
/// accesses stay in cache); does not affect any result.
const TILE: usize = 64;

/// Calls `visit(i, j)` for every `i < j` (strict upper triangle; `(j, i)` is its mirror), tile by
/// tile.
fn for_each_upper_tiled(d: usize, mut visit: impl FnMut(usize, usize)) {
    for jb in (0..d).step_by(TILE) {
        for ib in (0..=jb).step_by(TILE) {
            for j in jb..(jb + TILE).min(d) {
                for i in ib..(ib + TILE).min(j) {
                    visit(i, j);
                }
            }
        }
    }
}

/// Largest `|a_ij - a_ji|` and largest `|a_ij|`.
fn asymmetry(m: &DMatrix<f64>) -> (f64, f64) {
    let d = m.nrows();
    let a = m.as_slice();
    let mut worst = 0.0f64;
    let scale = a.iter().fold(0.0f64, |s, v| s.max(v.abs()));
    for_each_upper_tiled(d, |i, j| {
        worst = worst.max((a[j * d + i] - a[i * d + j]).abs());
    });
    (worst, scale)
}

/// Copies the lower triangle onto the upper one (the matrix becomes exactly symmetric).
pub(crate) fn mirror_lower_to_upper(m: &mut DMatrix<f64>) {
    let d = m.nrows();
    let a = m.as_mut_slice();
    for_each_upper_tiled(d, |i, j| a[j * d + i] = a[i * d + j]);
}

/// Copies the upper triangle onto the lower one (the matrix becomes exactly symmetric).
pub(crate) fn mirror_upper_to_lower(m: &mut DMatrix<f64>) {
    let d = m.nrows();
    let a = m.as_mut_slice();
    for_each_upper_tiled(d, |i, j| a[i * d + j] = a[j * d + i]);
}

/// Checks `m` is square, finite and symmetric up to `1e-12` relative; returns whether it is
/// exactly symmetric.
fn check_symmetric(m: &DMatrix<f64>) -> Result<bool, CoreError> {
    if m.nrows() != m.ncols() {
        return Err(CoreError::DimensionMismatch {
            what: "columns of a symmetric matrix (must be square)",
            expected: m.nrows(),
            found: m.ncols(),
        });
    }
    if m.nrows() == 0 {
        return Err(CoreError::Empty("symmetric matrix"));
    }
    if !m.iter().all(|v| v.is_finite()) {
        return Err(CoreError::NonFinite("symmetric matrix"));
    }
    let (worst, scale) = asymmetry(m);
    let tolerance = 1e-12 * scale;
    if worst > tolerance {
        return Err(CoreError::NotSymmetric {
            asymmetry: worst,
            tolerance,
        });
    }
    Ok(worst == 0.0)
}

/// Adds symmetric noise in place: upper triangle incl. diagonal iid `N(0, std^2)`, mirrored
/// (003 Eq. 51, 000 Eq. 45 / 66-67). The result is exactly symmetric.
///
/// # Privacy
/// `std` must be calibrated to the statistic's **Frobenius** sensitivity (which bounds the L2
/// sensitivity of its upper-triangle entries).
///
/// # Errors
/// [`CoreError::DimensionMismatch`] for a non-square matrix, [`CoreError::Empty`] for `0 x 0`,
/// [`CoreError::NonFinite`], [`CoreError::NotSymmetric`] (beyond `1e-12` relative), or
/// [`CoreError::InvalidParameter`] for a non-positive `std`. Nothing is changed on error.
///
/// # Example
/// ```
/// use nalgebra::DMatrix;
/// use rand::{SeedableRng, rngs::ChaCha20Rng};
/// let mut m = DMatrix::<f64>::identity(3, 3);
/// let mut rng = ChaCha20Rng::seed_from_u64(1); // seeded on purpose, for the example
/// dp_core::add_symmetric_noise(&mut m, 0.1, &mut rng)?;
/// assert_eq!(m, m.transpose());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn add_symmetric_noise<R: Rng + ?Sized>(
    matrix: &mut DMatrix<f64>,
    std: f64,
    rng: &mut R,
) -> Result<(), CoreError> {
    check_positive("std", std)?;
    check_symmetric(matrix)?;
    let d = matrix.nrows();
    let mut z = vec![0.0; d * (d + 1) / 2];
    if z.len() <= SERIAL_NOISE_ENTRIES {
        fill_standard_normal(&mut z, rng);
    } else {
        // The wall's layout for large blocks: per-span streams under a key drawn from `rng`,
        // filled in parallel, the same draws at any thread count.
        NoiseStreams::draw(rng).fill_scaled(&mut z, 0, 1.0);
    }
    add_packed_symmetric(matrix, &z, std);
    Ok(())
}

/// The exactly symmetric `d x d` matrix whose upper triangle (column-major, incl. the diagonal)
/// is `packed` (entry `(i, j)`, `i <= j`, at `j (j + 1) / 2 + i`), built in parallel tiles of
/// [`TILE`] columns: each column's upper part is one contiguous copy, its lower part is read
/// row by row from the packed columns (`(i, j) = (j, i)` at `i (i + 1) / 2 + j`).
pub(crate) fn unpack_symmetric(packed: &[f64], d: usize) -> DMatrix<f64> {
    use rayon::prelude::*;
    let mut m = DMatrix::<f64>::zeros(d, d);
    m.as_mut_slice()
        .par_chunks_mut(d * TILE)
        .enumerate()
        .for_each(|(t, cols)| {
            let j0 = t * TILE;
            let width = cols.len() / d;
            for c in 0..width {
                let j = j0 + c;
                let start = j * (j + 1) / 2;
                cols[c * d..c * d + j + 1].copy_from_slice(&packed[start..start + j + 1]);
            }
            for i in j0 + 1..d {
                let row = &packed[i * (i + 1) / 2..];
                for c in 0..width.min(i - j0) {
                    cols[c * d + i] = row[j0 + c];
                }
            }
        });
    m
}

/// Adds `std * z` (packed upper triangle, column-major: entry `(i, j)`, `i <= j`, at
/// `j (j + 1) / 2 + i`) to `matrix` symmetrically; also makes the result exactly symmetric.
///
/// The upper triangle is updated column by column (contiguous in both layouts), then mirrored
/// tile by tile: the same values as updating `(i, j)` and copying it to `(j, i)` entry by entry.
fn add_packed_symmetric(matrix: &mut DMatrix<f64>, z: &[f64], std: f64) {
    let d = matrix.nrows();
    let m = matrix.as_mut_slice();
    for j in 0..d {
        let packed = j * (j + 1) / 2;
        for (v, z) in m[j * d..j * d + j + 1]
            .iter_mut()
            .zip(&z[packed..packed + j + 1])
        {
            *v += std * z;
        }
    }
    mirror_upper_to_lower(matrix);
}

/// Projects a symmetric matrix in place onto `{A : lambda_min(A) >= floor}`: eigenvalues below
/// `floor` are raised to `floor` and the matrix is rebuilt from a symmetric eigendecomposition
/// (`V diag(max(lambda, floor)) V^T`, exactly symmetric).
///
/// A matrix already above the floor (checked by a Cholesky factorisation of `A - floor I`, which
/// costs a small fraction of an eigendecomposition) is left bit-identical. After a projection the
/// smallest eigenvalue is `floor` up to rounding of order `1e-15 d ||A||`.
///
/// For `d < 48` the linear algebra is nalgebra's (`Cholesky`, `SymmetricEigen`); from `d = 48`
/// on it is faer's blocked `llt` and self-adjoint eigendecomposition (pure Rust, on every thread
/// of the caller's rayon pool, in place: an exactly symmetric input needs one `d x d` scratch for
/// the Cholesky test, then one for the eigenvectors plus faer's workspace; figures in
/// `docs/benchmarks.md`); the two agree to rounding (see `docs/dp-core.md`). If faer's
/// eigensolver ever reports no convergence, nalgebra's is used.
///
/// # Errors
/// As [`add_symmetric_noise`], and [`CoreError::InvalidParameter`] unless `floor` is finite and
/// `> 0` (a positive floor is what makes the result positive *definite*).
///
/// # Example
/// ```
/// use nalgebra::DMatrix;
/// let mut m = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]); // eigenvalues 3, -1
/// let p = dp_core::project_to_positive_definite(&mut m, 1e-6)?;
/// assert_eq!(p.eigenvalues_raised, 1);
/// assert!(m.clone().cholesky().is_some());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn project_to_positive_definite(
    matrix: &mut DMatrix<f64>,
    floor: f64,
) -> Result<PsdProjection, CoreError> {
    project_with(matrix, floor, Backend::for_dimension(matrix.nrows()))
}

/// From this dimension on, the projection uses `faer` (blocked, SIMD) instead of nalgebra
/// (unblocked). Below it small matrices keep their earlier (nalgebra) results bit for bit; the
/// value is to be checked against `benches/analyze_gauss.rs` (`project_only` vs
/// `project_only_nalgebra` at `d = 50`).
pub(crate) const FAER_MIN_DIMENSION: usize = 48;

/// Which linear-algebra library computes the Cholesky test and the eigendecomposition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// nalgebra's `Cholesky` and `SymmetricEigen` (unblocked; fine for small `d`).
    Nalgebra,
    /// faer's `llt` and self-adjoint eigendecomposition (blocked; for large `d`).
    Faer,
}

impl Backend {
    fn for_dimension(d: usize) -> Self {
        if d >= FAER_MIN_DIMENSION {
            Backend::Faer
        } else {
            Backend::Nalgebra
        }
    }
}

/// [`project_to_positive_definite`] with a chosen backend (both are tested to agree).
pub(crate) fn project_with(
    matrix: &mut DMatrix<f64>,
    floor: f64,
    backend: Backend,
) -> Result<PsdProjection, CoreError> {
    check_positive("eigenvalue floor", floor)?;
    let exactly_symmetric = check_symmetric(matrix)?;
    let d = matrix.nrows();
    let above_floor = match backend {
        Backend::Faer => faer_projection::cholesky_above_floor(matrix, floor),
        Backend::Nalgebra => None,
    };
    let above_floor = above_floor.unwrap_or_else(|| {
        let mut shifted = matrix.clone();
        for i in 0..d {
            shifted[(i, i)] -= floor;
        }
        shifted.cholesky().is_some()
    });
    if above_floor {
        return Ok(PsdProjection {
            eigenvalues_raised: 0,
            smallest_eigenvalue_before: None,
        });
    }
    if backend == Backend::Faer {
        // An exactly symmetric input (the noised statistic always is) is projected in place;
        // otherwise a symmetrised copy is, so that an input left unchanged stays bit-identical.
        let projected = if exactly_symmetric {
            faer_projection::project_in_place(matrix, floor)
        } else {
            let mut sym = matrix.clone();
            symmetrise(&mut sym);
            let result = faer_projection::project_in_place(&mut sym, floor);
            if result.as_ref().is_some_and(|r| r.raised > 0) {
                *matrix = sym;
            }
            result
        };
        if let Some(result) = projected {
            return Ok(PsdProjection {
                eigenvalues_raised: result.raised,
                smallest_eigenvalue_before: Some(result.smallest),
            });
        }
    }
    // Make the input exactly symmetric (it is within 1e-12) before decomposing.
    let mut sym = matrix.clone();
    symmetrise(&mut sym);
    // nalgebra (small d, or faer reported no convergence).
    let mut eigen = SymmetricEigen::new(sym);
    let smallest = eigen
        .eigenvalues
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let mut raised = 0;
    for lambda in eigen.eigenvalues.iter_mut() {
        if *lambda < floor {
            *lambda = floor;
            raised += 1;
        }
    }
    if raised == 0 {
        // Cholesky failed only through rounding at the floor; nothing to raise.
        return Ok(PsdProjection {
            eigenvalues_raised: 0,
            smallest_eigenvalue_before: Some(smallest),
        });
    }
    let mut rebuilt = eigen.recompose();
    symmetrise(&mut rebuilt);
    *matrix = rebuilt;
    Ok(PsdProjection {
        eigenvalues_raised: raised,
        smallest_eigenvalue_before: Some(smallest),
    })
}

/// [`project_to_positive_definite`] forced onto nalgebra's unblocked routines at any `d`: the
/// previous implementation, kept so that `benches/analyze_gauss.rs` can compare both in one run.
/// Not part of the supported API.
#[doc(hidden)]
pub fn project_to_positive_definite_nalgebra(
    matrix: &mut DMatrix<f64>,
    floor: f64,
) -> Result<PsdProjection, CoreError> {
    project_with(matrix, floor, Backend::Nalgebra)
}

/// [`project_to_positive_definite`] forced onto faer at any `d` (for
/// `examples/projection_crossover.rs`, which measures where [`FAER_MIN_DIMENSION`] should be).
/// Not part of the supported API.
#[doc(hidden)]
pub fn project_to_positive_definite_faer(
    matrix: &mut DMatrix<f64>,
    floor: f64,
) -> Result<PsdProjection, CoreError> {
    project_with(matrix, floor, Backend::Faer)
}

/// Replaces `m` by `(m + m^T) / 2`, exactly symmetric.
fn symmetrise(m: &mut DMatrix<f64>) {
    let d = m.nrows();
    let a = m.as_mut_slice();
    for_each_upper_tiled(d, |i, j| {
        let v = 0.5 * (a[j * d + i] + a[i * d + j]);
        a[j * d + i] = v;
        a[i * d + j] = v;
    });
}

/// Analyze-Gauss with a fixed noise std per upper-triangle entry and an eigenvalue floor.
///
/// # Example
/// ```
/// use dp_core::{AnalyzeGauss, GaussianMechanism};
/// use nalgebra::DMatrix;
/// use rand::{SeedableRng, rngs::ChaCha20Rng};
/// // Frobenius sensitivity 1/4 (BLR's second moment, 003 Eq. 52), (1, 1e-5)-DP for this release
/// let mech = GaussianMechanism::analytic(1.0, 1e-5, 0.25)?;
/// let ag = AnalyzeGauss::new(mech.std(), 1e-6)?;
/// let mut s2 = DMatrix::<f64>::identity(4, 4) * 0.1;
/// let mut rng = ChaCha20Rng::seed_from_u64(3); // seeded on purpose, for the example
/// let report = ag.perturb(&mut s2, &mut rng)?;
/// assert!(s2.clone().cholesky().is_some());
/// assert!(report.eigenvalues_raised <= 4);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeGauss {
    std: f64,
    floor: f64,
}

impl AnalyzeGauss {
    /// Noise std `std` per free (upper-triangle) entry, eigenvalue floor `floor`.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless both are finite and `> 0`.
    pub fn new(std: f64, eigenvalue_floor: f64) -> Result<Self, CoreError> {
        Ok(Self {
            std: check_positive("std", std)?,
            floor: check_positive("eigenvalue floor", eigenvalue_floor)?,
        })
    }

    /// The noise std per free entry.
    pub fn std(&self) -> f64 {
        self.std
    }

    /// The eigenvalue floor.
    pub fn eigenvalue_floor(&self) -> f64 {
        self.floor
    }

    /// Adds symmetric noise ([`add_symmetric_noise`]) then projects
    /// ([`project_to_positive_definite`]).
    ///
    /// # Privacy
    /// As the Gaussian mechanism with std [`Self::std`] on the statistic's upper triangle, for a
    /// statistic of Frobenius sensitivity `std / noise multiplier`; the projection is
    /// post-processing.
    ///
    /// # Errors
    /// As [`add_symmetric_noise`]; nothing is changed on error.
    pub fn perturb<R: Rng + ?Sized>(
        &self,
        matrix: &mut DMatrix<f64>,
        rng: &mut R,
    ) -> Result<PsdProjection, CoreError> {
        add_symmetric_noise(matrix, self.std, rng)?;
        project_to_positive_definite(matrix, self.floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_bad_matrices() {
        let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(0);
        use rand::SeedableRng;
        let mut non_square = DMatrix::<f64>::zeros(2, 3);
        assert!(add_symmetric_noise(&mut non_square, 1.0, &mut rng).is_err());
        let mut asym = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 0.0, 1.0]);
        assert!(matches!(
            project_to_positive_definite(&mut asym, 1e-3),
            Err(CoreError::NotSymmetric { .. })
        ));
        let mut nan = DMatrix::from_element(2, 2, f64::NAN);
        assert!(project_to_positive_definite(&mut nan, 1e-3).is_err());
        let mut ok = DMatrix::<f64>::identity(2, 2);
        assert!(project_to_positive_definite(&mut ok, 0.0).is_err());
        assert!(project_to_positive_definite(&mut DMatrix::zeros(0, 0), 1.0).is_err());
    }

    /// The faer path (d >= FAER_MIN_DIMENSION) and the nalgebra path agree on random symmetric
    /// matrices: same raised count and smallest eigenvalue (to `1e-12 ||A||_F`), projections
    /// equal entrywise to `1e-11 ||A||_F`. The projection onto a convex set is 1-Lipschitz in the
    /// Frobenius norm, so the two differ only by the eigensolvers' backward errors (`~d eps ||A||`),
    /// whatever the eigengaps. Shifts of the spectrum exercise both rank-update branches (few
    /// raised eigenvalues, most raised) and the Cholesky fast path.
    #[test]
    fn faer_and_nalgebra_paths_agree() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(11);
        for &d in &[FAER_MIN_DIMENSION, 73, 160] {
            for &shift in &[-2.0, 0.0, 1.5, 40.0] {
                let mut a = DMatrix::<f64>::identity(d, d) * (shift * (d as f64).sqrt());
                add_symmetric_noise(&mut a, 1.0, &mut rng).unwrap();
                let norm = a.norm();
                let (mut by_faer, mut by_nalgebra) = (a.clone(), a.clone());
                let pf = project_with(&mut by_faer, 1e-3, Backend::Faer).unwrap();
                let pn = project_with(&mut by_nalgebra, 1e-3, Backend::Nalgebra).unwrap();
                let case = format!("d = {d}, shift = {shift}");
                assert_eq!(pf.eigenvalues_raised, pn.eigenvalues_raised, "{case}");
                match (pf.smallest_eigenvalue_before, pn.smallest_eigenvalue_before) {
                    (Some(f), Some(n)) => assert!((f - n).abs() <= 1e-12 * norm, "{case}"),
                    (None, None) => assert!(shift >= 40.0, "{case}: fast path unexpectedly"),
                    other => panic!("{case}: fast path taken by one backend only: {other:?}"),
                }
                assert_eq!(by_faer, by_faer.transpose(), "{case}");
                let diff = (&by_faer - &by_nalgebra).amax();
                assert!(diff <= 1e-11 * norm, "{case}: max difference {diff:e}");
                if shift == -2.0 {
                    assert!(
                        pf.eigenvalues_raised > d / 2,
                        "{case}: branch not exercised"
                    );
                }
                if shift == 1.5 {
                    assert!(
                        pf.eigenvalues_raised < d / 2,
                        "{case}: branch not exercised"
                    );
                    assert!(pf.eigenvalues_raised > 0, "{case}: branch not exercised");
                }
            }
        }
    }

    /// The faer path works in place on an exactly symmetric input and on a symmetrised copy
    /// otherwise: an input within the tolerance but not exactly symmetric is projected from its
    /// symmetric part, and left bit-identical when nothing is raised; the tiled mirror after the
    /// noise gives an exactly symmetric matrix.
    #[test]
    fn faer_path_in_place_and_on_a_copy() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(5);
        let d = FAER_MIN_DIMENSION + 83; // more than one 64 x 64 tile
        let mut a = DMatrix::<f64>::zeros(d, d);
        add_symmetric_noise(&mut a, 1.0, &mut rng).unwrap();
        assert_eq!(a, a.transpose());
        let mut exact = a.clone();
        let mut nudged = a.clone();
        nudged[(3, 70)] += 1e-14;
        let mut symmetrised = nudged.clone();
        symmetrise(&mut symmetrised);
        let pe = project_with(&mut exact, 1e-3, Backend::Faer).unwrap();
        let pn = project_with(&mut nudged, 1e-3, Backend::Faer).unwrap();
        let ps = project_with(&mut symmetrised, 1e-3, Backend::Faer).unwrap();
        assert!(pe.eigenvalues_raised > 0);
        assert_eq!(pn, ps);
        assert_eq!(nudged, symmetrised);
        assert_eq!(exact, exact.transpose());
        assert_eq!(nudged, nudged.transpose());
        // Above the floor but not exactly symmetric: unchanged, bit for bit.
        let mut above = DMatrix::<f64>::identity(d, d) * 10.0;
        above[(1, 80)] = 1e-13;
        let copy = above.clone();
        let p = project_with(&mut above, 1e-3, Backend::Faer).unwrap();
        assert_eq!(p.eigenvalues_raised, 0);
        assert_eq!(above, copy);
    }

    /// The parallel unpack gives what adding the packed triangle to a zero matrix and mirroring
    /// gives, bit for bit (several tiles, a partial last tile).
    #[test]
    fn unpack_is_the_packed_add_bit_for_bit() {
        let d = 2 * TILE + 17;
        let packed: Vec<f64> = (0..d * (d + 1) / 2)
            .map(|k| ((k * 37) % 101) as f64 - 50.5)
            .collect();
        let mut want = DMatrix::<f64>::zeros(d, d);
        add_packed_symmetric(&mut want, &packed, 1.0);
        assert_eq!(unpack_symmetric(&packed, d), want);
    }

    #[test]
    fn backend_switches_at_the_threshold() {
        assert_eq!(
            Backend::for_dimension(FAER_MIN_DIMENSION - 1),
            Backend::Nalgebra
        );
        assert_eq!(Backend::for_dimension(FAER_MIN_DIMENSION), Backend::Faer);
    }

    #[test]
    fn leaves_matrices_above_the_floor_bit_identical() {
        let m = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 3.0]);
        let mut copy = m.clone();
        let p = project_to_positive_definite(&mut copy, 1e-3).unwrap();
        assert_eq!(p.eigenvalues_raised, 0);
        assert_eq!(copy, m);
    }
}
