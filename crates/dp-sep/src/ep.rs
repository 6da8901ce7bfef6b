//! Non-private baselines: expectation propagation with one factor per record (002 Algorithm 1;
//! Minka 2001) and assumed density filtering (one pass of moment matching without factors, the
//! original PBP of Hernández-Lobato & Adams 2015).

use rand::Rng;

use crate::error::SepError;
use crate::model::SepModel;
use crate::sep::shuffled_epoch;

/// EP state: prior, one factor per record, and the posterior `theta_0 + sum_n theta_n`.
#[derive(Clone, Debug)]
pub struct EpState {
    prior: Vec<f64>,
    factors: Vec<Vec<f64>>,
    posterior: Vec<f64>,
}

impl EpState {
    /// EP with all factors at zero (posterior = prior) for `n` records.
    ///
    /// EP keeps one factor per record, `n x dim` numbers: the size is checked against
    /// [`crate::limits::MAX_MODEL_BYTES`] before anything is allocated.
    ///
    /// # Example
    /// ```
    /// use dp_sep::ep::EpState;
    /// let ep = EpState::new(vec![0.0, -0.5], 3)?;
    /// assert_eq!(ep.posterior(), &[0.0, -0.5]);
    /// // A billion records of a 1,000-dimensional factor would need 8 TB: refused.
    /// assert!(EpState::new(vec![0.0; 1000], 1_000_000_000).is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    ///
    /// # Errors
    /// [`SepError::Empty`] for `n == 0`; [`SepError::TooLarge`] when the `n` factors (plus the
    /// prior and the posterior) would exceed [`crate::limits::MAX_MODEL_BYTES`].
    pub fn new(prior: Vec<f64>, n: usize) -> Result<Self, SepError> {
        if n == 0 {
            return Err(SepError::Empty("EP needs at least one record"));
        }
        crate::limits::check_bytes(
            &format!("EP with {n} records"),
            &format!("one factor of {} numbers per record", prior.len()),
            crate::limits::f64_bytes((n as u128 + 2).saturating_mul(prior.len() as u128)),
            crate::limits::MAX_MODEL_BYTES,
        )?;
        Ok(Self {
            factors: vec![vec![0.0; prior.len()]; n],
            posterior: prior.clone(),
            prior,
        })
    }

    /// EP starting from the posterior `theta_0 + N theta_f` with every factor equal to `factor`.
    ///
    /// # Errors
    /// As [`EpState::new`] (including [`SepError::TooLarge`]), plus a dimension mismatch.
    pub fn with_factor(prior: Vec<f64>, factor: &[f64], n: usize) -> Result<Self, SepError> {
        if factor.len() != prior.len() {
            return Err(SepError::DimensionMismatch {
                what: "EpState::with_factor",
                expected: prior.len(),
                found: factor.len(),
            });
        }
        let mut s = Self::new(prior, n)?;
        for f in &mut s.factors {
            f.copy_from_slice(factor);
        }
        for (p, f) in s.posterior.iter_mut().zip(factor) {
            *p += n as f64 * f;
        }
        Ok(s)
    }

    /// Posterior natural parameters.
    pub fn posterior(&self) -> &[f64] {
        &self.posterior
    }

    /// Prior natural parameters.
    pub fn prior(&self) -> &[f64] {
        &self.prior
    }
}

/// One EP step on record `i` with damping `damping` in `(0, 1]`. Returns `false` if the cavity
/// was improper or the tilted moments failed (the factor is then left unchanged).
pub fn ep_step<M: SepModel>(
    model: &M,
    state: &mut EpState,
    i: usize,
    record: &M::Record,
    damping: f64,
) -> bool {
    let cavity: Vec<f64> = state
        .posterior
        .iter()
        .zip(&state.factors[i])
        .map(|(q, f)| q - f)
        .collect();
    if !model.is_valid(&cavity) {
        return false;
    }
    let mut tilted = vec![0.0; cavity.len()];
    if !model.tilted(&cavity, record, &mut tilted) || tilted.iter().any(|v| !v.is_finite()) {
        return false;
    }
    let mut new_post = vec![0.0; cavity.len()];
    let mut new_factor = vec![0.0; cavity.len()];
    for k in 0..cavity.len() {
        let f = (1.0 - damping) * state.factors[i][k] + damping * (tilted[k] - cavity[k]);
        new_factor[k] = f;
        new_post[k] = cavity[k] + f;
    }
    if !model.is_valid(&new_post) {
        return false;
    }
    state.factors[i] = new_factor;
    state.posterior = new_post;
    true
}

/// Runs `epochs` sweeps of EP; returns the number of skipped updates.
///
/// # Errors
/// [`SepError::DimensionMismatch`] if records and factors disagree; [`SepError::InvalidParameter`]
/// for damping outside `(0, 1]`.
pub fn run_ep<M: SepModel, R: Rng + ?Sized>(
    model: &mut M,
    state: &mut EpState,
    records: &[M::Record],
    epochs: usize,
    damping: f64,
    rng: &mut R,
) -> Result<u64, SepError> {
    if records.len() != state.factors.len() {
        return Err(SepError::DimensionMismatch {
            what: "EP factors vs records",
            expected: state.factors.len(),
            found: records.len(),
        });
    }
    if !(damping > 0.0 && damping <= 1.0) {
        return Err(SepError::InvalidParameter {
            name: "damping",
            value: damping,
            reason: "must lie in (0, 1]",
        });
    }
    let mut skipped = 0;
    for _ in 0..epochs {
        for i in shuffled_epoch(records.len(), rng) {
            if !ep_step(&*model, state, i, &records[i], damping) {
                skipped += 1;
            }
        }
        let mut prior = state.prior.clone();
        model.refine_prior(&mut prior, &state.posterior);
        for ((q, new), old) in state.posterior.iter_mut().zip(&prior).zip(&state.prior) {
            *q += new - old;
        }
        state.prior = prior;
    }
    Ok(skipped)
}

/// Assumed density filtering: `q <- proj[q p(x_n | .)]` for each record of each epoch, with the
/// model's prior refinement after each epoch (PBP as published). Returns the skipped updates.
///
/// # Errors
/// [`SepError::Empty`] for no records; [`SepError::DimensionMismatch`] for a wrong length.
pub fn run_adf<M: SepModel, R: Rng + ?Sized>(
    model: &mut M,
    prior: &mut [f64],
    posterior: &mut [f64],
    records: &[M::Record],
    epochs: usize,
    rng: &mut R,
) -> Result<u64, SepError> {
    if records.is_empty() {
        return Err(SepError::Empty("ADF needs at least one record"));
    }
    if posterior.len() != model.dim() || prior.len() != model.dim() {
        return Err(SepError::DimensionMismatch {
            what: "ADF posterior length",
            expected: model.dim(),
            found: posterior.len(),
        });
    }
    let mut skipped = 0;
    let mut tilted = vec![0.0; posterior.len()];
    for _ in 0..epochs {
        for i in shuffled_epoch(records.len(), rng) {
            if model.tilted(posterior, &records[i], &mut tilted)
                && tilted.iter().all(|v| v.is_finite())
                && model.is_valid(&tilted)
            {
                posterior.copy_from_slice(&tilted);
            } else {
                skipped += 1;
            }
        }
        let mut new_prior = prior.to_vec();
        model.refine_prior(&mut new_prior, posterior);
        for ((q, new), old) in posterior.iter_mut().zip(&new_prior).zip(prior.iter()) {
            *q += new - old;
        }
        prior.copy_from_slice(&new_prior);
    }
    Ok(skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_beyond_the_memory_limit_are_refused_before_allocating() {
        // 300,000 records x 1,000 numbers = 2.4 GB > 2 GiB: refused, nothing allocated.
        let err = EpState::new(vec![0.0; 1000], 300_000).unwrap_err();
        assert!(matches!(err, SepError::TooLarge { .. }), "{err}");
        let err = EpState::with_factor(vec![0.0; 1000], &[0.0; 1000], usize::MAX).unwrap_err();
        assert!(matches!(err, SepError::TooLarge { .. }), "{err}");
        // A small state is accepted: posterior = prior + n x factor.
        let ep = EpState::with_factor(vec![0.0, -1.0], &[0.5, -0.25], 10_000).unwrap();
        assert_eq!(ep.posterior(), &[5000.0, -2501.0]);
        assert!(matches!(
            EpState::new(vec![0.0], 0),
            Err(SepError::Empty(_))
        ));
    }
}
