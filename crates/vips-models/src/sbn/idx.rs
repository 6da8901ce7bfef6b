//! Binary images and the IDX (MNIST) loader.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SbnError;
use crate::limits::{BoundedReader, MAX_INPUT_BYTES, human_bytes};

/// One binary image: `J` pixels in `{0, 1}`, row by row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinaryImage {
    /// The pixels (`0` or `1`).
    pub pixels: Vec<u8>,
}

fn open_err(path: &Path, source: std::io::Error) -> SbnError {
    SbnError::IdxIo {
        path: path.display().to_string(),
        context: "",
        source,
    }
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
/// [`SbnError::IdxIo`] for a bad gzip stream; [`SbnError::Idx`] for a wrong magic number, a
/// truncated body or trailing bytes, a header whose size exceeds [`MAX_INPUT_BYTES`];
/// [`SbnError::IdxLimit`] for one over the machine's memory (both checked before the body is
/// read); [`SbnError::InvalidParameter`] for `threshold = 0` (every pixel would be 1).
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
    if bytes.starts_with(&[0x1f, 0x8b]) {
        read_idx(
            BoundedReader::new(flate2::read::GzDecoder::new(bytes), MAX_INPUT_BYTES + 16),
            threshold,
            path,
            true,
        )
    } else {
        read_idx(bytes, threshold, path, false)
    }
}

/// Reads an IDX image stream: the header first, then (after checking the size it implies against
/// [`MAX_INPUT_BYTES`] and the machine's memory) exactly the body, then checks that nothing
/// follows (for gzip this also verifies the checksum).
fn read_idx(
    reader: impl Read,
    threshold: u8,
    path: &Path,
    gzip: bool,
) -> Result<Vec<BinaryImage>, SbnError> {
    let mut images = Vec::new();
    read_idx_into(reader, threshold, path, gzip, true, &mut |image| {
        images.push(image);
        true
    })?;
    Ok(images)
}

/// Reads an IDX image file image by image into `sink` (binarised at `threshold`); with
/// `in_memory` the header's size is checked against the input and memory limits first (the
/// images will be kept), without it only one image is held at a time. `sink` returns `false` to
/// stop. Returns the number of pixels per image.
fn read_idx_into(
    mut reader: impl Read,
    threshold: u8,
    path: &Path,
    gzip: bool,
    in_memory: bool,
    sink: &mut dyn FnMut(BinaryImage) -> bool,
) -> Result<usize, SbnError> {
    let io_err = |source: std::io::Error| SbnError::IdxIo {
        path: path.display().to_string(),
        context: if gzip {
            "bad gzip stream: "
        } else {
            "cannot read: "
        },
        source,
    };
    let mut header = [0u8; 16];
    let got = read_fully(&mut reader, &mut header).map_err(io_err)?;
    if got < 16 {
        return Err(idx_err(
            path,
            format!("{got} bytes, shorter than the 16-byte header"),
        ));
    }
    let word = |i: usize| {
        u32::from_be_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]) as usize
    };
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
    if n == 0 {
        return Err(SbnError::Empty("IDX file with no images"));
    }
    let implied = n as f64 * j as f64;
    if in_memory {
        if implied > MAX_INPUT_BYTES as f64 {
            return Err(idx_err(
                path,
                format!(
                    "the header's n x rows x cols = {n} x {rows} x {cols} = {} bytes is over the \
                     input limit of {} (MAX_INPUT_BYTES)",
                    crate::limits::count(implied),
                    human_bytes(MAX_INPUT_BYTES as f64)
                ),
            ));
        }
        // The pixels are stored once as bytes and once binarised.
        crate::limits::check_memory(
            format!("IDX header of {}", path.display()),
            format!("n x rows x cols = {n} x {rows} x {cols} pixels"),
            implied * 2.0 + n as f64 * 24.0,
        )
        .map_err(|source| SbnError::IdxLimit {
            path: path.display().to_string(),
            source,
        })?;
    }
    let expected = (n as u64).saturating_mul(j as u64);
    let mut image = vec![0u8; j];
    let mut read = 0u64;
    for _ in 0..n {
        let got = read_fully(&mut reader, &mut image).map_err(io_err)?;
        read += got as u64;
        if got < j {
            return Err(idx_err(
                path,
                format!("body has {read} bytes, header says {n} x {rows} x {cols} = {expected}"),
            ));
        }
        let binary = BinaryImage {
            pixels: image.iter().map(|&v| u8::from(v >= threshold)).collect(),
        };
        if !sink(binary) {
            return Ok(j);
        }
    }
    let mut rest = [0u8; 1];
    match reader.read(&mut rest) {
        Ok(0) => {}
        Ok(_) => {
            return Err(idx_err(
                path,
                format!("trailing bytes after the {expected} the header declares"),
            ));
        }
        Err(e) => return Err(io_err(e)),
    }
    Ok(j)
}

/// Reads until `buf` is full or the input ends; the number of bytes read.
fn read_fully(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads an IDX image file (plain or gzip) as [`load_idx_images`] does (the same checks and
/// errors, binarised at `threshold`) but hands each image to `sink` as soon as it is read
/// instead of keeping them: memory is one image, and the size limits of the in-memory loader
/// do not apply. `sink` returns `false` to stop. Returns the number of pixels per image.
///
/// # Errors
/// As [`load_idx_images`].
///
/// # Example
/// ```
/// # let dir = std::env::temp_dir().join(format!("stream-idx-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("images-idx3-ubyte");
/// let mut bytes = vec![0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2];
/// bytes.extend_from_slice(&[0, 200, 255, 3]); // two 1 x 2 images
/// std::fs::write(&path, bytes)?;
/// let mut images = Vec::new();
/// let pixels = vips_models::sbn::stream_idx_images(&path, 128, |im| { images.push(im.pixels); true })?;
/// assert_eq!((pixels, images), (2, vec![vec![0, 1], vec![1, 0]]));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn stream_idx_images(
    path: &Path,
    threshold: u8,
    mut sink: impl FnMut(BinaryImage) -> bool,
) -> Result<usize, SbnError> {
    if threshold == 0 {
        return Err(SbnError::invalid(
            "threshold",
            0.0,
            "must be >= 1 (0 would make every pixel 1)",
        ));
    }
    let mut file = std::fs::File::open(path).map_err(|e| open_err(path, e))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(|e| open_err(path, e))?;
    let file = std::io::BufReader::new(std::fs::File::open(path).map_err(|e| open_err(path, e))?);
    if n == 2 && magic == [0x1f, 0x8b] {
        read_idx_into(
            flate2::read::GzDecoder::new(file),
            threshold,
            path,
            true,
            false,
            &mut sink,
        )
    } else {
        read_idx_into(file, threshold, path, false, false, &mut sink)
    }
}

/// Reads and binarises an IDX image file (see [`parse_idx_images`]).
///
/// # Errors
/// [`SbnError::IdxIo`] if the file cannot be read, [`SbnError::Idx`] if it is malformed.
pub fn load_idx_images(path: &Path, threshold: u8) -> Result<Vec<BinaryImage>, SbnError> {
    if threshold == 0 {
        return Err(SbnError::invalid(
            "threshold",
            0.0,
            "must be >= 1 (0 would make every pixel 1)",
        ));
    }
    let mut file = std::fs::File::open(path).map_err(|e| open_err(path, e))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(|e| open_err(path, e))?;
    let file = std::io::BufReader::new(std::fs::File::open(path).map_err(|e| open_err(path, e))?);
    if n == 2 && magic == [0x1f, 0x8b] {
        read_idx(
            BoundedReader::new(flate2::read::GzDecoder::new(file), MAX_INPUT_BYTES + 16),
            threshold,
            path,
            true,
        )
    } else {
        read_idx(file, threshold, path, false)
    }
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
/// [`SbnError::IdxIo`] for a missing or unreadable file; [`SbnError::Idx`] for a malformed one,
/// or train and test of different sizes.
pub fn load_mnist_dir(
    dir: &Path,
    threshold: u8,
) -> Result<(Vec<BinaryImage>, Vec<BinaryImage>), SbnError> {
    let train = load_idx_images(&find(dir, "train-images-idx3-ubyte")?, threshold)?;
    let test = load_idx_images(&find(dir, "t10k-images-idx3-ubyte")?, threshold)?;
    let (a, b) = (train[0].pixels.len(), test[0].pixels.len());
    if a != b {
        return Err(idx_err(
            dir,
            format!("training images have {a} pixels, test images {b}: they must be the same size"),
        ));
    }
    Ok((train, test))
}
