//! Writing a store, streaming, atomically (a temporary file renamed when complete).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::format::{FNV_OFFSET, HEADER_LEN, Header, fnv1a};
use super::{RecordKind, StoreError};

/// Writes a record store one record at a time (module docs of [`super`] for the format).
///
/// The records go to `FILE.tmp-<pid>`, their offsets to `FILE.offsets.tmp-<pid>`; [`Self::finish`]
/// appends the table, writes the header, syncs and renames the file to `FILE`. Dropped without
/// `finish` (an error, a panic), it removes its temporary files and `FILE` is untouched.
/// Memory: two write buffers, whatever the number of records.
#[derive(Debug)]
pub struct StoreWriter {
    path: PathBuf,
    temp: PathBuf,
    offsets_temp: PathBuf,
    payloads: Option<BufWriter<File>>,
    offsets: Option<BufWriter<File>>,
    header: Header,
    table_sum: u64,
}

impl StoreWriter {
    /// Starts a store of `kind` records of dimension `dim` at `path`.
    ///
    /// # Errors
    /// [`StoreError::Io`] if the temporary files cannot be created; [`StoreError::Corrupt`]
    /// for a dimension of zero or over `u32::MAX`.
    pub fn create(path: impl AsRef<Path>, kind: RecordKind, dim: u64) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        if dim == 0 || dim > u64::from(u32::MAX) {
            return Err(StoreError::Corrupt {
                path,
                reason: "dimension zero or larger than u32",
            });
        }
        let pid = std::process::id();
        let temp = sibling(&path, &format!("tmp-{pid}"));
        let offsets_temp = sibling(&path, &format!("offsets.tmp-{pid}"));
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| StoreError::Io { path: p, source }
        };
        let mut payloads =
            BufWriter::with_capacity(1 << 20, File::create(&temp).map_err(io(&temp))?);
        // The header is written last, over this placeholder.
        payloads
            .write_all(&[0u8; HEADER_LEN as usize])
            .map_err(io(&temp))?;
        let offsets = match File::create(&offsets_temp) {
            Ok(f) => BufWriter::with_capacity(1 << 16, f),
            Err(source) => {
                let _ = std::fs::remove_file(&temp);
                return Err(StoreError::Io {
                    path: offsets_temp,
                    source,
                });
            }
        };
        let mut writer = Self {
            path,
            temp,
            offsets_temp,
            payloads: Some(payloads),
            offsets: Some(offsets),
            header: Header {
                kind,
                count: 0,
                dim,
                payload_len: 0,
                table_sum: 0,
                payload_sum: FNV_OFFSET,
            },
            table_sum: FNV_OFFSET,
        };
        writer.push_offset(0)?;
        Ok(writer)
    }

    /// The store's final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records written so far.
    pub fn len(&self) -> u64 {
        self.header.count
    }

    /// Whether no record was written yet.
    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// Appends one record's payload (already encoded for the store's kind).
    ///
    /// # Errors
    /// [`StoreError::BadRecord`] for an empty payload or one over the kind's size;
    /// [`StoreError::Io`] if the write fails.
    pub fn push_payload(&mut self, payload: &[u8]) -> Result<(), StoreError> {
        let cap = self.header.kind.max_record_bytes(self.header.dim);
        if payload.is_empty() || payload.len() as u64 > cap {
            return Err(StoreError::BadRecord {
                path: self.path.clone(),
                record: self.header.count,
                reason: "an empty record, or one larger than its kind allows",
            });
        }
        let temp = self.temp.clone();
        let payloads = self.payloads.as_mut().ok_or(StoreError::Corrupt {
            path: self.path.clone(),
            reason: "written after finish",
        })?;
        payloads
            .write_all(payload)
            .map_err(|source| StoreError::Io { path: temp, source })?;
        self.header.payload_sum = fnv1a(self.header.payload_sum, payload);
        self.header.payload_len += payload.len() as u64;
        self.header.count += 1;
        self.push_offset(self.header.payload_len)
    }

    fn push_offset(&mut self, off: u64) -> Result<(), StoreError> {
        let bytes = off.to_le_bytes();
        self.table_sum = fnv1a(self.table_sum, &bytes);
        let path = self.offsets_temp.clone();
        let offsets = self.offsets.as_mut().ok_or(StoreError::Corrupt {
            path: self.path.clone(),
            reason: "written after finish",
        })?;
        offsets
            .write_all(&bytes)
            .map_err(|source| StoreError::Io { path, source })
    }

    /// Completes the store: appends the offsets table, writes the header, syncs, renames the
    /// temporary file to the store's path. Returns the number of records.
    ///
    /// # Errors
    /// [`StoreError::Io`] if a write, the sync or the rename fails (the temporary files are
    /// removed and the store's path is untouched).
    pub fn finish(mut self) -> Result<u64, StoreError> {
        let (Some(payloads), Some(offsets)) = (self.payloads.take(), self.offsets.take()) else {
            return Err(StoreError::Corrupt {
                path: self.path.clone(),
                reason: "finished twice",
            });
        };
        self.header.table_sum = self.table_sum;
        let temp = self.temp.clone();
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |source| StoreError::Io { path: p, source }
        };
        let offsets = offsets
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io(&self.offsets_temp))?;
        drop(offsets);
        let mut payloads = payloads
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io(&temp))?;
        let mut table = BufReader::with_capacity(
            1 << 16,
            File::open(&self.offsets_temp).map_err(io(&self.offsets_temp))?,
        );
        let mut out = BufWriter::with_capacity(1 << 16, &mut payloads);
        let copied =
            std::io::copy(&mut (&mut table).take(u64::MAX), &mut out).map_err(io(&temp))?;
        out.flush().map_err(io(&temp))?;
        drop(out);
        if copied != (self.header.count + 1) * 8 {
            return Err(StoreError::Corrupt {
                path: self.offsets_temp.clone(),
                reason: "the offsets file is not as long as written",
            });
        }
        payloads.seek(SeekFrom::Start(0)).map_err(io(&temp))?;
        payloads
            .write_all(&self.header.encode())
            .map_err(io(&temp))?;
        payloads.sync_all().map_err(io(&temp))?;
        drop(payloads);
        std::fs::rename(&temp, &self.path).map_err(io(&self.path))?;
        let _ = std::fs::remove_file(&self.offsets_temp);
        Ok(self.header.count)
    }
}

impl Drop for StoreWriter {
    fn drop(&mut self) {
        // Unfinished (or failed): leave nothing behind. After a successful finish the
        // temporary store was renamed and removing it fails harmlessly.
        let _ = std::fs::remove_file(&self.temp);
        let _ = std::fs::remove_file(&self.offsets_temp);
    }
}

/// `path` with `.suffix` appended to its file name.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".");
    name.push(suffix);
    path.with_file_name(name)
}
