//! Planned accounting (one ledger entry for a whole planned run) and the cheap release path for
//! tiny batches ([`PrivacyWall::release_into`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use dp_accountant::LedgerEntry;

use super::{
    BlockShape, ContributionBuffer, Mode, PrivacyWall, ReleaseDiagnostics, ReleaseRecord,
    ReleaseSpec, accumulate, source::Records,
};
use crate::error::CoreError;
use crate::gaussian::{NoiseSource, spans_of};

impl<R> PrivacyWall<R> {
    /// The error of a refused release.
    pub(super) fn exhausted(&self) -> CoreError {
        match &self.mode {
            Mode::Private { budget, .. } => CoreError::BudgetExhausted {
                total_epsilon: budget.epsilon(),
                total_delta: budget.delta(),
            },
            Mode::NonPrivate => CoreError::BudgetExhausted {
                total_epsilon: f64::INFINITY,
                total_delta: 1.0,
            },
        }
    }

    /// Charges the planned run (see [`super::WallBuilder::planned_run`]) as one ledger entry
    /// within the budget and opens its one log record. Called once, by the builder.
    pub(super) fn charge_plan(&mut self, label: String, releases: u64) -> Result<(), CoreError> {
        let public_n = self.public_population.unwrap_or(self.records.len());
        let steps = self.scheme.accounted_steps(public_n, releases)?;
        let sigma = self.noise_multiplier();
        let mut notes = BTreeMap::new();
        notes.insert(
            "mechanism".into(),
            match sigma {
                Some(_) => "Gaussian on the clipped sum of each release, rescale-noise-rescale \
                            over the release's blocks (VIPS 003 Eq. 63)"
                    .to_string(),
                None => "non-private (epsilon = infinity): clipped sums, no noise".into(),
            },
        );
        notes.insert(
            "accounting".into(),
            format!(
                "planned: {releases} releases charged up front as one entry \
                 (the per-release event composed {steps} times)"
            ),
        );
        notes.append(&mut self.common_notes(sigma));
        let notes = Arc::new(notes);
        if let Mode::Private { budget, .. } = &self.mode {
            let event = self.scheme.run_event(
                sigma.expect("private mode has a noise multiplier"),
                public_n,
                releases,
            )?;
            if self.ledger.would_exceed(&event, budget)? {
                return Err(self.exhausted());
            }
            self.ledger.record_entry(LedgerEntry {
                label,
                event,
                notes: Arc::clone(&notes),
            })?;
        }
        self.log.push(ReleaseRecord {
            index: 0,
            private: sigma.is_some(),
            notes,
            clipped_records: 0,
            replaced_records: 0,
        });
        self.planned = Some(releases);
        Ok(())
    }

    /// Adds one release's diagnostics to the planned run's log record.
    pub(super) fn add_to_plan_log(&mut self, diagnostics: ReleaseDiagnostics) {
        if let Some(record) = self.log.first_mut() {
            record.clipped_records += diagnostics.clipped_records;
            record.replaced_records += diagnostics.replaced_records;
        }
    }

    /// The number of releases charged up front by planned accounting
    /// ([`super::WallBuilder::planned_run`]); `None` under per-release accounting.
    pub fn planned_releases(&self) -> Option<u64> {
        self.planned
    }

    /// The cheap release path for **tiny batches** (DP-SEP's one record per step): the same
    /// release as [`Self::release`] (same sampling, clipping, replacement of failing records,
    /// noise and normalisation, the same draws from the same streams), written into `out`
    /// instead of a [`super::Release`]: the blocks' entries concatenated in spec order
    /// (column-major for matrices). The statistic runs on the calling thread (no rayon), the
    /// wall's buffers are reused (no allocation per release once the spec's shapes are known),
    /// and no notes are formatted per release: under planned accounting nothing is written to
    /// the ledger or the log per release (the diagnostics are summed into the plan's log
    /// record); under per-release accounting the notes are built once per spec (and shared by
    /// the log records) and the ledger entry is labelled `"<spec name> #<release number>"`.
    ///
    /// The clipped sums are those of [`Self::release`] (the same internals, on one thread), so
    /// the output is bit-identical to [`Self::release`]'s at the same seed.
    ///
    /// # Privacy
    /// As [`Self::release`]: one release costs [`Self::event_per_release`] (or one of the
    /// planned releases). The returned diagnostics are **not private**.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for a spec with a symmetric block (use
    /// [`Self::release`]); [`CoreError::DimensionMismatch`] if `out` is not as long as the
    /// spec's entries; [`CoreError::BudgetExhausted`] as [`Self::release`] (nothing sampled,
    /// `out` unchanged); in non-private mode, [`CoreError::InvalidContribution`].
    ///
    /// # Example
    /// ```
    /// use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};
    /// let records: Vec<f64> = (0..100).map(f64::from).collect();
    /// let mut wall = PrivacyWall::builder(records)
    ///     .sampling(SamplingScheme::uniform_single())
    ///     .epsilon_delta(1.0, 1e-5)
    ///     .planned_run("DP-SEP run", 200)   // one ledger entry for all 200 releases
    ///     .seed(3)
    ///     .build()?;
    /// let mut spec = ReleaseSpec::builder("dp-sep step");
    /// let factor = spec.vector("factor", 2, 1.0)?;
    /// let spec = spec.build()?;
    /// let mut out = [0.0; 2];
    /// for _ in 0..200 {
    ///     wall.release_into(&spec, |x: &f64, buf| buf.dense(factor).copy_from_slice(&[*x, 1.0]), &mut out)?;
    /// }
    /// assert_eq!(wall.ledger().len(), 1);
    /// assert!(wall.release_into(&spec, |_: &f64, _| {}, &mut out).is_err()); // release 201
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release_into<F>(
        &mut self,
        spec: &ReleaseSpec,
        statistic: F,
        out: &mut [f64],
    ) -> Result<ReleaseDiagnostics, CoreError>
    where
        F: FnMut(&R, &mut ContributionBuffer),
    {
        let mut len = 0;
        for block in spec.blocks() {
            if let BlockShape::Symmetric { .. } = block.shape() {
                return Err(CoreError::InvalidParameter {
                    name: "release_into spec",
                    value: block.stored_len() as f64,
                    reason: "symmetric blocks are released by release(), not release_into()",
                });
            }
            len += block.stored_len();
        }
        if out.len() != len {
            return Err(CoreError::DimensionMismatch {
                what: "release_into output",
                expected: len,
                found: out.len(),
            });
        }
        self.check_budget(self.event_per_release(), 1)?;
        self.sample_batch()?;
        let mut fast = std::mem::take(&mut self.fast);
        let replace = self.replaces_invalid();
        let mut statistic = statistic;
        let summed = match &mut self.records {
            Records::Memory(records) => accumulate::sequential_sums(
                records,
                &self.batch,
                spec,
                statistic,
                &mut fast.sums,
                replace,
            ),
            Records::Source(sourced) => {
                let summed = match sourced.fetch(&self.batch) {
                    Ok((fetched, positions)) => accumulate::sequential_sums(
                        fetched,
                        positions,
                        spec,
                        |record: &Option<R>, buffer: &mut ContributionBuffer| match record {
                            Some(r) => statistic(r, buffer),
                            None => buffer.reject_record(super::source::UNREADABLE),
                        },
                        &mut fast.sums,
                        replace,
                    ),
                    Err(e) => Err(e.into()),
                };
                sourced.clear();
                summed
            }
        };
        self.batch.clear();
        if let Err(e @ CoreError::Source(_)) = &summed {
            let e = e.clone();
            self.fast = fast;
            self.charge_aborted(format!("{} #{}", spec.name(), self.releases), spec)?;
            return Err(e);
        }
        // After an error the scratch is dropped (its sums may hold part of a batch).
        let diagnostics = summed?;
        let sigma = self.noise_multiplier();
        let expected = self.normaliser;
        // The same noise, drawn the same way, as `release` (`NoiseSource`).
        let drawn: Vec<f64> = (0..spec.len())
            .map(|b| self.drawn_std(self.sum_noise_std(spec, b, sigma)))
            .collect();
        let mut source = NoiseSource::for_release(&mut self.noise_rng, len);
        let (mut offset, mut first_span) = (0, 0);
        for (sum, &drawn) in fast.sums.sums().zip(&drawn) {
            let dst = &mut out[offset..offset + sum.len()];
            source.noised_normalised(dst, Some(sum), first_span, drawn, expected);
            offset += sum.len();
            first_span += spans_of(sum.len());
        }
        if self.planned.is_some() {
            self.add_to_plan_log(diagnostics);
        } else {
            let notes = self.interned_notes(spec);
            let index = self.releases;
            if let Mode::Private { event, .. } = &self.mode {
                let event = event.clone();
                self.ledger.record_entry(LedgerEntry {
                    label: format!("{} #{index}", spec.name()),
                    event,
                    notes: Arc::clone(&notes),
                })?;
            }
            self.log.push(ReleaseRecord {
                index,
                private: sigma.is_some(),
                notes,
                clipped_records: diagnostics.clipped_records,
                replaced_records: diagnostics.replaced_records,
            });
        }
        self.releases += 1;
        self.fast = fast;
        Ok(diagnostics)
    }
}
