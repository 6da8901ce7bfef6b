//! Opening a store and reading its records by positional reads (no memory map: the workspace
//! forbids `unsafe`).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use dp_core::SourceError;

use super::format::{FNV_OFFSET, HEADER_LEN, Header, fnv1a};
use super::{RecordKind, StoreError};

/// An opened record store (read-only; module docs of [`super`] for the format).
///
/// Reads are positional (`pread`), so one store is shared by every thread of a fit without a
/// lock or a cursor. Memory: the header and a file handle; the offsets table stays on disk.
///
/// # Privacy
/// [`Self::len`] is the realised record count: **private** under add/remove-one. A fit
/// declares its public `N` instead ([`crate::engine::SviConfigBuilder::population`]).
///
/// # Example
/// ```
/// use vips_models::lda::corpus::Document;
/// use vips_models::store::{RecordKind, RecordStore, write_documents};
/// let dir = std::env::temp_dir().join(format!("store-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("tiny.store");
/// let docs = vec![Document::new(vec![(0, 2), (3, 1)])?, Document::new(vec![(1, 5)])?];
/// write_documents(&path, 4, docs.iter().cloned().map(Ok))?;
/// let store = RecordStore::open(&path)?;
/// assert_eq!((store.kind(), store.len(), store.dim()), (RecordKind::BagOfWords, 2, 4));
/// let mut buf = Vec::new();
/// assert_eq!(vips_models::store::decode_document(&store, 1, &mut buf)?, docs[1]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RecordStore {
    path: PathBuf,
    file: File,
    header: Header,
}

impl RecordStore {
    /// Opens `path` and checks it (module docs, "Checks"): one streaming pass over the
    /// offsets table (8 bytes per record), constant memory.
    ///
    /// # Errors
    /// [`StoreError::Io`] if unreadable; [`StoreError::NotAStore`] without the magic;
    /// [`StoreError::NewerVersion`] for a newer format; [`StoreError::Corrupt`] for a
    /// truncated or inconsistent file (wrong length, bad checksum, offsets out of order or a
    /// record over its kind's size).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| StoreError::Io {
            path: path.clone(),
            source,
        };
        let corrupt = |reason| StoreError::Corrupt {
            path: path.clone(),
            reason,
        };
        let file = File::open(&path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        if file_len < HEADER_LEN {
            return Err(if file_len >= 8 && starts_with_magic(&file) {
                corrupt("shorter than the header")
            } else {
                StoreError::NotAStore { path }
            });
        }
        let mut raw = [0u8; HEADER_LEN as usize];
        read_exact_at(&file, &mut raw, 0).map_err(io)?;
        let header = Header::decode(&path, &raw)?;
        // Sizes before anything is allocated or read: the file must be exactly as long as the
        // header says.
        match header.file_len() {
            Some(len) if len == file_len => {}
            Some(len) if len > file_len => {
                return Err(corrupt("truncated: shorter than its header says"));
            }
            Some(_) => return Err(corrupt("longer than its header says")),
            None => return Err(corrupt("the header's sizes overflow")),
        }
        let store = Self { path, file, header };
        store.check_table()?;
        Ok(store)
    }

    /// Streams the offsets table: order, end, record sizes, checksum.
    fn check_table(&self) -> Result<(), StoreError> {
        let corrupt = |reason| StoreError::Corrupt {
            path: self.path.clone(),
            reason,
        };
        let io = |source| StoreError::Io {
            path: self.path.clone(),
            source,
        };
        let mut file = self.file.try_clone().map_err(io)?;
        std::io::Seek::seek(
            &mut file,
            std::io::SeekFrom::Start(self.header.table_start()),
        )
        .map_err(io)?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let cap = self.header.kind.max_record_bytes(self.header.dim);
        let mut sum = FNV_OFFSET;
        let mut previous: Option<u64> = None;
        let mut entry = [0u8; 8];
        for _ in 0..=self.header.count {
            reader.read_exact(&mut entry).map_err(io)?;
            sum = fnv1a(sum, &entry);
            let off = u64::from_le_bytes(entry);
            match previous {
                None if off != 0 => return Err(corrupt("the first offset is not 0")),
                Some(p) if off <= p => return Err(corrupt("offsets are not increasing")),
                Some(p) if off - p > cap => {
                    return Err(corrupt("a record is larger than its kind allows"));
                }
                _ => {}
            }
            if off > self.header.payload_len {
                return Err(corrupt("an offset points past the payloads"));
            }
            previous = Some(off);
        }
        if previous != Some(self.header.payload_len) {
            return Err(corrupt("the last offset is not the payload length"));
        }
        if sum != self.header.table_sum {
            return Err(corrupt("the offsets table checksum does not match"));
        }
        Ok(())
    }

    /// Checks the payload checksum: one sequential pass over the payloads (constant memory).
    ///
    /// # Errors
    /// [`StoreError::Io`], or [`StoreError::Corrupt`] if the checksum does not match.
    pub fn verify_payloads(&self) -> Result<(), StoreError> {
        let io = |source| StoreError::Io {
            path: self.path.clone(),
            source,
        };
        let mut file = self.file.try_clone().map_err(io)?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(HEADER_LEN)).map_err(io)?;
        let mut reader = BufReader::with_capacity(1 << 20, file).take(self.header.payload_len);
        let mut buf = vec![0u8; 1 << 20];
        let mut sum = FNV_OFFSET;
        loop {
            let n = reader.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            sum = fnv1a(sum, &buf[..n]);
        }
        if sum != self.header.payload_sum {
            return Err(StoreError::Corrupt {
                path: self.path.clone(),
                reason: "the payload checksum does not match",
            });
        }
        Ok(())
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the wall is told when record `index` cannot be read: a failed read is
    /// [`SourceError::Io`] naming this file (the release aborts, charged); any other fault is an
    /// unusable record with the fixed `reason` (replaced by zero in a private release).
    pub(crate) fn source_error(&self, error: StoreError, reason: &'static str) -> SourceError {
        match error {
            StoreError::Io { source, .. } => SourceError::Io {
                file: self.path.clone(),
                kind: source.kind(),
            },
            _ => SourceError::Record { reason },
        }
    }

    /// The kind of record stored.
    pub fn kind(&self) -> RecordKind {
        self.header.kind
    }

    /// Number of records: the realised count (private under add/remove-one; see the type's
    /// docs).
    pub fn len(&self) -> usize {
        // Fits: the file holds 8 bytes per record.
        usize::try_from(self.header.count).unwrap_or(usize::MAX)
    }

    /// Whether the store holds no record.
    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The dimension (vocabulary size, features or pixels).
    pub fn dim(&self) -> u64 {
        self.header.dim
    }

    /// Reads record `index`'s payload into `buf` (resized to it).
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] for an index past the end; [`StoreError::Io`] if a read fails
    /// (a file changed since [`Self::open`] reads short).
    pub fn read_payload(&self, index: usize, buf: &mut Vec<u8>) -> Result<(), StoreError> {
        let io = |source| StoreError::Io {
            path: self.path.clone(),
            source,
        };
        if index as u64 >= self.header.count {
            return Err(StoreError::Corrupt {
                path: self.path.clone(),
                reason: "record index past the end",
            });
        }
        let mut pair = [0u8; 16];
        read_exact_at(
            &self.file,
            &mut pair,
            self.header.table_start() + 8 * index as u64,
        )
        .map_err(io)?;
        let (start, end) = split_pair(&pair);
        let cap = self.header.kind.max_record_bytes(self.header.dim);
        if end <= start || end - start > cap || end > self.header.payload_len {
            // Checked at open; the file changed since.
            return Err(StoreError::Corrupt {
                path: self.path.clone(),
                reason: "the offsets table changed since the store was opened",
            });
        }
        buf.resize((end - start) as usize, 0);
        read_exact_at(&self.file, buf, HEADER_LEN + start).map_err(io)
    }
}

fn split_pair(pair: &[u8; 16]) -> (u64, u64) {
    let mut a = [0u8; 8];
    let mut b = [0u8; 8];
    a.copy_from_slice(&pair[..8]);
    b.copy_from_slice(&pair[8..]);
    (u64::from_le_bytes(a), u64::from_le_bytes(b))
}

fn starts_with_magic(file: &File) -> bool {
    let mut m = [0u8; 8];
    read_exact_at(file, &mut m, 0).is_ok() && m == super::format::MAGIC
}

/// Fills `buf` from `offset` of `file` without moving a shared cursor.
#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

/// Fills `buf` from `offset` of `file` (Windows: `seek_read` in a loop).
#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
