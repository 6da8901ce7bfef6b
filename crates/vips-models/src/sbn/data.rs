//! The embedded default data set of the SBN (images from a known network), shared by the
//! `sbn` example and the `dp-bayes fit sbn --synthetic` command line.

use super::{BinaryImage, SyntheticSbn};

/// Visible units `J` of the embedded synthetic data (8 x 8 images).
pub const SYNTHETIC_VISIBLE: usize = 64;
/// Hidden units `K` of the network that generates the embedded synthetic data.
pub const SYNTHETIC_HIDDEN: usize = 8;
/// Training images of the embedded synthetic data (the generator's configured size: public).
pub const SYNTHETIC_TRAIN: usize = 4000;
/// Held-out images of the embedded synthetic data.
pub const SYNTHETIC_TEST: usize = 1000;

/// Training and held-out images of the embedded synthetic data set: [`SYNTHETIC_TRAIN`] and
/// [`SYNTHETIC_TEST`] images drawn from `SyntheticSbn::random(64, 8, 11)` with sampling seeds 1
/// and 2 (always the same images).
///
/// # Privacy
/// Synthetic and public: the sizes are the generator's settings, not counts of private data.
///
/// # Example
/// ```
/// use vips_models::sbn::{SYNTHETIC_TEST, SYNTHETIC_TRAIN, SYNTHETIC_VISIBLE, synthetic_images};
/// let (train, test) = synthetic_images();
/// assert_eq!((train.len(), test.len()), (SYNTHETIC_TRAIN, SYNTHETIC_TEST));
/// assert_eq!(train[0].pixels.len(), SYNTHETIC_VISIBLE);
/// ```
pub fn synthetic_images() -> (Vec<BinaryImage>, Vec<BinaryImage>) {
    let truth = SyntheticSbn::random(SYNTHETIC_VISIBLE, SYNTHETIC_HIDDEN, 11);
    (
        truth.sample(SYNTHETIC_TRAIN, 1),
        truth.sample(SYNTHETIC_TEST, 2),
    )
}
