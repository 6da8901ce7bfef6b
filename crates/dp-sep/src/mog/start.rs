//! The mixture's public starting point: one home for the initialisation that the `mog` example,
//! the `dp-bayes fit mog` command and xtask's experiments share.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use crate::error::{SepError, check_positive};
use crate::sep::SepState;

use super::model::{Family, MogModel};

/// The public initial state of a mixture run over `n` records: the prior `N(0, I)` on each mean
/// plus a shared factor that moves component `j`'s posterior to `N(u_j, I / p)` with
/// `u_j ~ N(0, I)` drawn from `rng` and `p = init_precision`: factor `h = p u_j / n` and factor
/// precision `(p - 1) / n` on top of the prior's `1` (nothing is written when `p = 1`).
///
/// Draws exactly `J d` standard normals from `rng`, component by component and coordinate by
/// coordinate, so a caller that continues with the same stream (visiting orders, Gibbs sweeps)
/// sees the same stream as before this function existed.
///
/// # Privacy
/// Reads no record: the state depends on `n` (the declared public population), the model's
/// public shape, `init_precision` and the public stream `rng` only, so it is public and needs no
/// budget. Pass a stream seeded by the caller's public seed, not the wall's noise stream.
///
/// # Errors
/// [`SepError::InvalidParameter`] if `init_precision` is not finite and positive;
/// [`SepError::Empty`] for `n == 0` (from [`SepState::new`]).
///
/// # Example
/// ```
/// use dp_sep::mog::{Family, MogModel, public_start};
/// use rand::{SeedableRng, rngs::ChaCha20Rng};
///
/// let model = MogModel::new(4, 2, 0.5, Family::Full)?;
/// let mut rng = ChaCha20Rng::seed_from_u64(7);
/// let state = public_start(&model, 1000, 1.0, &mut rng)?;
/// assert_eq!(state.posterior().len(), model.prior().len());
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub fn public_start<R: Rng + ?Sized>(
    model: &MogModel,
    n: usize,
    init_precision: f64,
    rng: &mut R,
) -> Result<SepState, SepError> {
    check_positive("init_precision", init_precision)?;
    let (j_count, d) = (model.components(), model.dimension());
    let prior = model.prior();
    let block = prior.len() / j_count;
    let mut factor = vec![0.0; prior.len()];
    let scale = n.max(1) as f64;
    for j in 0..j_count {
        for i in 0..d {
            let z: f64 = StandardNormal.sample(rng);
            factor[j * block + i] = init_precision * z / scale;
            if init_precision != 1.0 {
                let diag = match model.family() {
                    Family::Full => j * block + d + i * d + i,
                    Family::Diagonal => j * block + d + i,
                };
                factor[diag] = -0.5 * (init_precision - 1.0) / scale;
            }
        }
    }
    SepState::new(prior, factor, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha20Rng;

    #[test]
    fn unit_precision_moves_only_the_means() {
        let model = MogModel::new(3, 2, 0.5, Family::Full).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let state = public_start(&model, 100, 1.0, &mut rng).unwrap();
        let mut expect = ChaCha20Rng::seed_from_u64(1);
        let moments = model.moments(&state.posterior()).unwrap();
        for m in &moments {
            for i in 0..2 {
                let z: f64 = StandardNormal.sample(&mut expect);
                assert!((m.mean[i] - z).abs() < 1e-12);
                assert!((m.cov[(i, i)] - 1.0).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn precision_scales_the_covariance_in_both_families() {
        for family in [Family::Full, Family::Diagonal] {
            let model = MogModel::new(2, 3, 0.5, family).unwrap();
            let mut rng = ChaCha20Rng::seed_from_u64(2);
            let state = public_start(&model, 50, 4.0, &mut rng).unwrap();
            for m in model.moments(&state.posterior()).unwrap() {
                for i in 0..3 {
                    assert!((m.cov[(i, i)] - 0.25).abs() < 1e-12, "{family:?}");
                }
            }
        }
    }

    /// The loop the six call sites had before this function existed (the example's, with the
    /// diagonal written at every precision), drawn from the same stream: `public_start` gives
    /// the same factor, number for number (`-0.0` where the old loop wrote `-0.5 (1 - 1) / n`
    /// compares equal to the `0.0` left now), and leaves the stream at the same place.
    #[test]
    fn same_factor_and_stream_as_the_inline_initialisation() {
        for family in [Family::Full, Family::Diagonal] {
            for p in [1.0, 0.5, 3.0] {
                for seed in 0..4 {
                    let (j_count, d, n) = (4, 3, 1000);
                    let model = MogModel::new(j_count, d, 0.5, family).unwrap();
                    let mut rng = ChaCha20Rng::seed_from_u64(seed);
                    let state = public_start(&model, n, p, &mut rng).unwrap();
                    let mut old_rng = ChaCha20Rng::seed_from_u64(seed);
                    let prior = model.prior();
                    let block = prior.len() / j_count;
                    let mut factor = vec![0.0; prior.len()];
                    for j in 0..j_count {
                        for i in 0..d {
                            let z: f64 = StandardNormal.sample(&mut old_rng);
                            factor[j * block + i] = p * z / n as f64;
                            let diag = match family {
                                Family::Full => j * block + d + i * d + i,
                                Family::Diagonal => j * block + d + i,
                            };
                            factor[diag] = -0.5 * (p - 1.0) / n as f64;
                        }
                    }
                    assert_eq!(
                        state.factor(),
                        factor.as_slice(),
                        "{family:?} p {p} seed {seed}"
                    );
                    assert_eq!(state.prior(), prior.as_slice());
                    assert_eq!(rng.next_u64(), old_rng.next_u64(), "stream position");
                }
            }
        }
    }

    #[test]
    fn refuses_a_non_positive_precision() {
        let model = MogModel::new(2, 2, 0.5, Family::Full).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        for p in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                public_start(&model, 10, p, &mut rng),
                Err(SepError::InvalidParameter { .. })
            ));
        }
    }
}
