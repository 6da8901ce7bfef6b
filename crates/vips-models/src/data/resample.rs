//! Fixed document length (003 Sec. 4.2): each document's tokens are resampled with replacement to
//! exactly `N`, so every document carries the same weight and the per-document statistic has a
//! fixed scale.

use rand::{Rng, RngExt};

use super::synthetic::tokens_to_document;
use super::{DataError, Document};

/// Draws `length` tokens with replacement from `doc`'s empirical word distribution.
///
/// # Errors
/// [`DataError::InvalidParameter`] if `length == 0` or does not fit in `u32`.
///
/// # Example
/// ```
/// use rand::SeedableRng;
/// use vips_models::data::{resample_fixed_length, Document};
/// let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(0);
/// let doc = Document::new(vec![(1, 3), (4, 1)])?;
/// let fixed = resample_fixed_length(&doc, 500, &mut rng)?;
/// assert_eq!(fixed.len(), 500);
/// assert!(fixed.words().iter().all(|w| [1, 4].contains(w)));
/// # Ok::<(), vips_models::data::DataError>(())
/// ```
pub fn resample_fixed_length<R: Rng + ?Sized>(
    doc: &Document,
    length: usize,
    rng: &mut R,
) -> Result<Document, DataError> {
    if length == 0 || length > u32::MAX as usize {
        return Err(DataError::InvalidParameter {
            name: "length",
            value: length as f64,
            reason: "must be in 1..=u32::MAX",
        });
    }
    let mut cumulative: Vec<u64> = Vec::with_capacity(doc.num_distinct());
    let mut acc = 0u64;
    for &c in doc.counts() {
        acc += u64::from(c);
        cumulative.push(acc);
    }
    let mut tokens: Vec<u32> = Vec::with_capacity(length);
    for _ in 0..length {
        let u = rng.random_range(0..acc);
        let i = cumulative.partition_point(|&c| c <= u);
        tokens.push(doc.words()[i]);
    }
    Ok(tokens_to_document(&mut tokens))
}
