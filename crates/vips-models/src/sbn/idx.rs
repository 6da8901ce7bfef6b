//! Binary images and the IDX (MNIST) loader.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SbnError;

/// One binary image: `J` pixels in `{0, 1}`, row by row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryImage {
    /// The pixels (`0` or `1`).
    pub pixels: Vec<u8>,
}

fn idx_err(path: &Path, reason: impl Into<String>) -> SbnError {
    SbnError::Idx {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Parses an IDX image file's bytes (`0x00000803`, `n`, `rows`, `cols`, then `n rows cols`
/// unsigned bytes; gzip-compressed or not) and binarises: pixel `>= threshold` becomes 1.
///
/// # Errors
/// [`SbnError::Idx`] for a bad gzip stream, a wrong magic number, a truncated body or trailing
/// bytes; [`SbnError::InvalidParameter`] for `threshold = 0` (every pixel would be 1).
///
/// # Example
/// ```
/// use vips_models::sbn::parse_idx_images;
/// let mut bytes = vec![0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2];
/// bytes.extend([10, 200]);
/// let images = parse_idx_images(&bytes, 128, std::path::Path::new("inline"))?;
/// assert_eq!(images[0].pixels, vec![0, 1]);
/// # Ok::<(), vips_models::sbn::SbnError>(())
/// ```
pub fn parse_idx_images(
    bytes: &[u8],
    threshold: u8,
    path: &Path,
) -> Result<Vec<BinaryImage>, SbnError> {
    if threshold == 0 {
        return Err(SbnError::invalid(
            "threshold",
            0.0,
            "must be >= 1 (0 would make every pixel 1)",
        ));
    }
    let raw;
    let data: &[u8] = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .map_err(|e| idx_err(path, format!("bad gzip stream: {e}")))?;
        raw = out;
        &raw
    } else {
        bytes
    };
    if data.len() < 16 {
        return Err(idx_err(
            path,
            format!("{} bytes, shorter than the 16-byte header", data.len()),
        ));
    }
    let word =
        |i: usize| u32::from_be_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]) as usize;
    if word(0) != 0x0803 {
        return Err(idx_err(
            path,
            format!(
                "magic {:#010x}, expected 0x00000803 (unsigned bytes, 3 dimensions)",
                word(0)
            ),
        ));
    }
    let (n, rows, cols) = (word(4), word(8), word(12));
    let j = rows
        .checked_mul(cols)
        .filter(|&j| j > 0)
        .ok_or_else(|| idx_err(path, format!("bad image shape {rows} x {cols}")))?;
    let expected = n
        .checked_mul(j)
        .ok_or_else(|| idx_err(path, "header sizes overflow"))?;
    let body = &data[16..];
    if body.len() != expected {
        return Err(idx_err(
            path,
            format!(
                "body has {} bytes, header says {n} x {rows} x {cols} = {expected}",
                body.len()
            ),
        ));
    }
    if n == 0 {
        return Err(SbnError::Empty("IDX file with no images"));
    }
    Ok(body
        .chunks_exact(j)
        .map(|c| BinaryImage {
            pixels: c.iter().map(|&v| u8::from(v >= threshold)).collect(),
        })
        .collect())
}

/// Reads and binarises an IDX image file (see [`parse_idx_images`]).
///
/// # Errors
/// [`SbnError::Idx`] if the file cannot be read or is malformed.
pub fn load_idx_images(path: &Path, threshold: u8) -> Result<Vec<BinaryImage>, SbnError> {
    let bytes = std::fs::read(path).map_err(|e| idx_err(path, e.to_string()))?;
    parse_idx_images(&bytes, threshold, path)
}

fn find(dir: &Path, stem: &str) -> Result<PathBuf, SbnError> {
    for name in [format!("{stem}.gz"), stem.to_string()] {
        let p = dir.join(name);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(idx_err(&dir.join(stem), "not found (with or without .gz)"))
}

/// Loads `train-images-idx3-ubyte[.gz]` and `t10k-images-idx3-ubyte[.gz]` from an MNIST-style
/// directory, binarised at `threshold`.
///
/// # Errors
/// [`SbnError::Idx`] for a missing or malformed file, or train and test of different sizes.
pub fn load_mnist_dir(
    dir: &Path,
    threshold: u8,
) -> Result<(Vec<BinaryImage>, Vec<BinaryImage>), SbnError> {
    let train = load_idx_images(&find(dir, "train-images-idx3-ubyte")?, threshold)?;
    let test = load_idx_images(&find(dir, "t10k-images-idx3-ubyte")?, threshold)?;
    if train[0].pixels.len() != test[0].pixels.len() {
        return Err(idx_err(dir, "train and test images differ in size"));
    }
    Ok((train, test))
}
