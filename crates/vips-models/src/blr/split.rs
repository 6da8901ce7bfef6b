//! A seeded stratified train/test split.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use super::{BlrError, BlrRecord};

/// Splits `records` into `(train, test)` with `round(test_fraction x n_class)` test records of
/// each class, the records of each class shuffled with `seed` (public randomness: ChaCha8).
///
/// # Errors
/// [`BlrError::InvalidParameter`] unless `0 < test_fraction < 1`; [`BlrError::Empty`] if either
/// side would be empty; [`BlrError::DegenerateLabels`] if every label is the same, or either side
/// would hold one class only.
///
/// # Example
/// ```
/// use vips_models::blr::{BlrRecord, Features, stratified_split};
/// let recs: Vec<BlrRecord> = (0..10)
///     .map(|i| BlrRecord::new(Features::Dense(vec![0.1 * i as f64]), i < 4).unwrap().0)
///     .collect();
/// let (train, test) = stratified_split(recs, 0.5, 7)?;
/// assert_eq!((train.len(), test.len()), (5, 5));
/// assert_eq!(test.iter().filter(|r| r.label()).count(), 2);
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
pub fn stratified_split(
    records: Vec<BlrRecord>,
    test_fraction: f64,
    seed: u64,
) -> Result<(Vec<BlrRecord>, Vec<BlrRecord>), BlrError> {
    if !(test_fraction > 0.0 && test_fraction < 1.0) {
        return Err(BlrError::invalid(
            "test fraction",
            test_fraction,
            "must be in (0, 1)",
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut pos, mut neg): (Vec<BlrRecord>, Vec<BlrRecord>) =
        records.into_iter().partition(BlrRecord::label);
    if pos.is_empty() || neg.is_empty() {
        return Err(BlrError::DegenerateLabels(format!(
            "every label is {}: both classes are needed to train and to score",
            u8::from(neg.is_empty())
        )));
    }
    let mut train = Vec::new();
    let mut test = Vec::new();
    for class in [&mut neg, &mut pos] {
        class.shuffle(&mut rng);
        let k = (test_fraction * class.len() as f64).round() as usize;
        let rest = class.split_off(k.min(class.len()));
        test.append(class);
        train.extend(rest);
    }
    if train.is_empty() || test.is_empty() {
        return Err(BlrError::Empty(
            "the stratified split leaves the train or the test side empty",
        ));
    }
    for (side, rows) in [("training", &train), ("test", &test)] {
        if rows.iter().all(|r| r.label()) || rows.iter().all(|r| !r.label()) {
            return Err(BlrError::DegenerateLabels(format!(
                "the {side} side of the split holds one class only (too few rows of the other \
                 class for test fraction {test_fraction})"
            )));
        }
    }
    // Interleave classes in a seeded order so that order carries no label information.
    train.shuffle(&mut rng);
    test.shuffle(&mut rng);
    Ok((train, test))
}
