//! The constants and the header of the store format (module docs of [`super`]).

use super::StoreError;
use std::path::Path;

/// The file's first 8 bytes.
pub(super) const MAGIC: [u8; 8] = *b"DPBSTOR\0";
/// The format version this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes of the header.
pub(super) const HEADER_LEN: u64 = 64;
/// Most bytes one record may take (any kind): 64 MiB.
pub(super) const MAX_RECORD_BYTES: u64 = 64 << 20;

/// What the records of a store are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// A document as `(word id, count)` pairs (LDA).
    BagOfWords,
    /// A labelled sparse row (BLR).
    LabelledSparseRow,
    /// A packed binary vector (SBN).
    BinaryVector,
    /// A labelled dense row (BLR from a CSV file: every feature stored, as the CSV loader
    /// makes it).
    LabelledDenseRow,
}

impl RecordKind {
    pub(super) fn code(self) -> u32 {
        match self {
            Self::BagOfWords => 1,
            Self::LabelledSparseRow => 2,
            Self::BinaryVector => 3,
            Self::LabelledDenseRow => 4,
        }
    }

    pub(super) fn from_code(code: u32) -> Option<Self> {
        match code {
            1 => Some(Self::BagOfWords),
            2 => Some(Self::LabelledSparseRow),
            3 => Some(Self::BinaryVector),
            4 => Some(Self::LabelledDenseRow),
            _ => None,
        }
    }

    /// The most payload bytes one record of this kind can take in dimension `dim`.
    pub(super) fn max_record_bytes(self, dim: u64) -> u64 {
        let by_kind = match self {
            // one pair per distinct word
            Self::BagOfWords => dim.saturating_mul(8),
            // a label and one (index, value) pair per feature
            Self::LabelledSparseRow => dim.saturating_mul(12).saturating_add(8),
            Self::BinaryVector => dim.div_ceil(8),
            // a label and every feature
            Self::LabelledDenseRow => dim.saturating_mul(8).saturating_add(1),
        };
        by_kind.min(MAX_RECORD_BYTES)
    }
}

/// The parsed header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Header {
    pub(super) kind: RecordKind,
    pub(super) count: u64,
    pub(super) dim: u64,
    pub(super) payload_len: u64,
    pub(super) table_sum: u64,
    pub(super) payload_sum: u64,
}

impl Header {
    pub(super) fn encode(&self) -> [u8; HEADER_LEN as usize] {
        let mut h = [0u8; HEADER_LEN as usize];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&self.kind.code().to_le_bytes());
        h[16..24].copy_from_slice(&self.count.to_le_bytes());
        h[24..32].copy_from_slice(&self.dim.to_le_bytes());
        h[32..40].copy_from_slice(&self.payload_len.to_le_bytes());
        h[40..48].copy_from_slice(&self.table_sum.to_le_bytes());
        h[48..56].copy_from_slice(&self.payload_sum.to_le_bytes());
        let sum = fnv1a(FNV_OFFSET, &h[0..56]);
        h[56..64].copy_from_slice(&sum.to_le_bytes());
        h
    }

    pub(super) fn decode(path: &Path, h: &[u8; HEADER_LEN as usize]) -> Result<Self, StoreError> {
        let corrupt = |reason| StoreError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        if h[0..8] != MAGIC {
            return Err(StoreError::NotAStore {
                path: path.to_path_buf(),
            });
        }
        let version = u32_at(h, 8);
        if version > FORMAT_VERSION {
            return Err(StoreError::NewerVersion {
                path: path.to_path_buf(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if version == 0 {
            return Err(corrupt("format version 0"));
        }
        if fnv1a(FNV_OFFSET, &h[0..56]) != u64_at(h, 56) {
            return Err(corrupt("the header checksum does not match"));
        }
        let kind = RecordKind::from_code(u32_at(h, 12)).ok_or(corrupt("unknown record kind"))?;
        let header = Self {
            kind,
            count: u64_at(h, 16),
            dim: u64_at(h, 24),
            payload_len: u64_at(h, 32),
            table_sum: u64_at(h, 40),
            payload_sum: u64_at(h, 48),
        };
        if header.dim == 0 || header.dim > u64::from(u32::MAX) {
            return Err(corrupt("dimension zero or larger than u32"));
        }
        Ok(header)
    }

    /// The file length the header implies (`None` past `u64`).
    pub(super) fn file_len(&self) -> Option<u64> {
        let table = self.count.checked_add(1)?.checked_mul(8)?;
        HEADER_LEN.checked_add(self.payload_len)?.checked_add(table)
    }

    /// Where the offsets table starts.
    pub(super) fn table_start(&self) -> u64 {
        HEADER_LEN + self.payload_len
    }
}

fn u32_at(h: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&h[at..at + 4]);
    u32::from_le_bytes(b)
}

fn u64_at(h: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[at..at + 8]);
    u64::from_le_bytes(b)
}

/// The FNV-1a 64 offset basis (the hash of nothing).
pub(super) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64 of `bytes`, continuing from `state`.
pub(super) fn fnv1a(mut state: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        state ^= u64::from(b);
        state = state.wrapping_mul(0x0000_0100_0000_01b3);
    }
    state
}
