//! Binary vectors (SBN images): encoding, the IDX converter, and the wall's source for SBN.
//!
//! Payload of one record: `ceil(d / 8)` bytes, pixel `i` in bit `i % 8` (least significant
//! first) of byte `i / 8`, the padding bits of the last byte zero.

use std::path::Path;

use dp_core::SourceError;

use super::{RecordKind, RecordStore, StoreError, StoreWriter};
use crate::sbn::{BinaryImage, stream_idx_images};

/// Packs a binary image into `buf` (cleared first); `None` for a pixel other than 0 or 1.
fn encode_image(image: &BinaryImage, buf: &mut Vec<u8>) -> Option<()> {
    buf.clear();
    buf.resize(image.pixels.len().div_ceil(8), 0);
    for (i, &p) in image.pixels.iter().enumerate() {
        match p {
            0 => {}
            1 => buf[i / 8] |= 1 << (i % 8),
            _ => return None,
        }
    }
    Some(())
}

/// Unpacks a stored image of `dim` pixels (a fixed reason when refused).
fn decode_image(payload: &[u8], dim: u64) -> Result<BinaryImage, &'static str> {
    let dim = usize::try_from(dim).map_err(|_| "a dimension past this machine's address space")?;
    if payload.len() != dim.div_ceil(8) {
        return Err("an image record of the wrong length");
    }
    if dim % 8 != 0 && payload[payload.len() - 1] >> (dim % 8) != 0 {
        return Err("an image record with padding bits set");
    }
    let pixels = (0..dim).map(|i| (payload[i / 8] >> (i % 8)) & 1).collect();
    Ok(BinaryImage { pixels })
}

/// Writes binary images of `pixels` pixels each as a store at `path`, streaming, atomically.
/// Returns the number of images.
///
/// # Errors
/// The iterator's first error; [`StoreError::BadRecord`] for an image of another size or with
/// a pixel other than 0 or 1; the writer's errors. On any error nothing is left at `path`.
pub fn write_images<I>(path: impl AsRef<Path>, pixels: usize, images: I) -> Result<u64, StoreError>
where
    I: IntoIterator<Item = Result<BinaryImage, StoreError>>,
{
    let mut writer = StoreWriter::create(path, RecordKind::BinaryVector, pixels as u64)?;
    let mut buf = Vec::new();
    for image in images {
        let image = image?;
        if image.pixels.len() != pixels || encode_image(&image, &mut buf).is_none() {
            return Err(StoreError::BadRecord {
                path: writer.path().to_path_buf(),
                record: writer.len(),
                reason: "an image of another size, or a pixel other than 0 or 1",
            });
        }
        writer.push_payload(&buf)?;
    }
    writer.finish()
}

/// Converts an IDX image file (plain or gzip; MNIST layout) into a store of binary vectors at
/// `store`, streaming ([`stream_idx_images`]: the loader's checks, binarised at `threshold`).
/// Each stored record is the image [`crate::sbn::load_idx_images`] makes. Returns the number of
/// images.
///
/// # Errors
/// [`StoreError::Sbn`] for the input's errors (naming the file); the writer's errors. On any
/// error nothing is left at `store`.
pub fn convert_idx(
    input: impl AsRef<Path>,
    store: impl AsRef<Path>,
    threshold: u8,
) -> Result<u64, StoreError> {
    let store = store.as_ref();
    let mut writer: Option<StoreWriter> = None;
    let mut buf = Vec::new();
    let mut failure = None;
    stream_idx_images(input.as_ref(), threshold, |image| {
        if writer.is_none() {
            match StoreWriter::create(store, RecordKind::BinaryVector, image.pixels.len() as u64) {
                Ok(w) => writer = Some(w),
                Err(e) => {
                    failure = Some(e);
                    return false;
                }
            }
        }
        let Some(w) = writer.as_mut() else {
            return false;
        };
        // The reader binarises: every pixel is 0 or 1 and every image has the header's size.
        let _ = encode_image(&image, &mut buf);
        match w.push_payload(&buf) {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    })
    .map_err(|e| StoreError::Sbn(Box::new(e)))?;
    if let Some(e) = failure {
        return Err(e);
    }
    match writer {
        Some(w) => w.finish(),
        None => Err(StoreError::Corrupt {
            path: store.to_path_buf(),
            reason: "the input holds no image",
        }),
    }
}

/// SBN's records read from a store of binary vectors; built by
/// [`crate::sbn::Sbn::store_source`].
///
/// # Privacy
/// Each record is the stored image alone, so a fit through the store releases what the
/// in-memory fit of the same images releases for the same seeds. An image that does not decode
/// is a [`SourceError::Record`]: replaced by zero in a private release. [`RecordSource::len`](dp_core::RecordSource::len) is
/// the store's record count (private under add/remove-one).
#[derive(Debug)]
pub struct SbnStoreSource {
    store: RecordStore,
}

impl SbnStoreSource {
    pub(crate) fn new(store: RecordStore) -> Self {
        Self { store }
    }

    /// The store.
    pub fn store(&self) -> &RecordStore {
        &self.store
    }

    fn read_with(&self, index: usize, buf: &mut Vec<u8>) -> Result<BinaryImage, SourceError> {
        self.store
            .read_payload(index, buf)
            .map_err(|e| self.store.source_error(e, "an unreadable image record"))?;
        decode_image(buf, self.store.dim()).map_err(|reason| SourceError::Record { reason })
    }
}

buffered_record_source!(SbnStoreSource, BinaryImage);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_round_trip_and_padding_is_checked() {
        for dim in [1usize, 7, 8, 9, 784] {
            let image = BinaryImage {
                pixels: (0..dim).map(|i| u8::from(i % 3 == 0)).collect(),
            };
            let mut buf = Vec::new();
            encode_image(&image, &mut buf).unwrap();
            assert_eq!(decode_image(&buf, dim as u64).unwrap(), image);
            if dim % 8 != 0 {
                let last = buf.len() - 1;
                buf[last] |= 0x80;
                assert!(decode_image(&buf, dim as u64).is_err());
            }
        }
        let bad = BinaryImage { pixels: vec![2] };
        assert!(encode_image(&bad, &mut Vec::new()).is_none());
    }
}
