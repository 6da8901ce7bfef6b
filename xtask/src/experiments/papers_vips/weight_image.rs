//! The posterior mean weights of an SBN as a grey-scale PNG (000 Fig. 9): one tile per hidden
//! unit, its weights on the visible pixels reshaped to the image. A minimal PNG writer
//! (uncompressed deflate blocks) keeps the dependency list as it is.

use std::path::Path;

use vips_models::sbn::SbnNatural;

/// Tiles per row, pixel magnification and the gap between tiles.
const TILES_PER_ROW: usize = 10;
const GAP: usize = 2;

/// Writes the `K` columns of `<W>` as `side x side` tiles; grey 128 = 0, scaled so that the
/// largest `|w|` of the panel is black or white.
pub fn write_weight_png(path: &Path, natural: &SbnNatural, side: usize) -> anyhow::Result<()> {
    let (j_dim, k_dim) = (natural.visible, natural.hidden);
    anyhow::ensure!(
        side * side == j_dim,
        "{j_dim} pixels are not a {side} x {side} image"
    );
    let zoom = (56 / side).max(1);
    let tile = side * zoom + GAP;
    let cols = TILES_PER_ROW.min(k_dim);
    let rows = k_dim.div_ceil(cols);
    let (width, height) = (cols * tile + GAP, rows * tile + GAP);
    let scale = natural.mu_w.iter().fold(1e-12_f64, |m, w| m.max(w.abs()));
    let mut pixels = vec![255u8; width * height];
    for k in 0..k_dim {
        let (x0, y0) = (GAP + (k % cols) * tile, GAP + (k / cols) * tile);
        for j in 0..j_dim {
            let w = natural.mu_w[j * k_dim + k];
            let grey = (128.0 + 127.0 * w / scale).round().clamp(0.0, 255.0) as u8;
            let (r, c) = (j / side, j % side);
            for dy in 0..zoom {
                for dx in 0..zoom {
                    pixels[(y0 + r * zoom + dy) * width + x0 + c * zoom + dx] = grey;
                }
            }
        }
    }
    std::fs::write(path, png_grey(width, height, &pixels))?;
    Ok(())
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn adler32(bytes: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in bytes {
        a = (a + u32::from(x)) % 65_521;
        b = (b + a) % 65_521;
    }
    (b << 16) | a
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// An 8-bit grey-scale PNG of `pixels` (row-major), zlib with stored blocks.
fn png_grey(width: usize, height: usize, pixels: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity((width + 1) * height);
    for row in pixels.chunks(width) {
        raw.push(0); // filter: none
        raw.extend_from_slice(row);
    }
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    zlib.extend_from_slice(&adler32(&raw).to_be_bytes());
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&(width as u32).to_be_bytes());
    ihdr.extend_from_slice(&(height as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksums_match_known_values() {
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }
}
