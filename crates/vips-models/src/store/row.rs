//! Labelled rows (BLR): encoding, the LIBSVM and CSV converters, and the wall's source for BLR.
//!
//! Payload of one dense record ([`RecordKind::LabelledDenseRow`], from a CSV file): the label
//! (one byte), then the `d` values `f64` in order. Payload of one sparse record: the label (one byte, `0` or `1`), then `(index u32, value f64)` pairs
//! (12 bytes each), indices strictly increasing and `< d`, values finite and non-zero, the row's
//! L2 norm at most 1 (the record as [`BlrRecord::new`] made it: scaled by the radius and
//! clipped, so reading it back gives the same record bit for bit).

use std::path::Path;

use dp_core::SourceError;

use super::{RecordKind, RecordStore, StoreError, StoreWriter};
use crate::blr::{BlrRecord, CsvOptions, Features, LibsvmOptions, stream_csv, stream_libsvm};

/// Encodes a dense record into `buf` (cleared first); `None` for a sparse one.
fn encode_dense_row(record: &BlrRecord, buf: &mut Vec<u8>) -> Option<()> {
    let Features::Dense(values) = record.features() else {
        return None;
    };
    buf.clear();
    buf.push(u8::from(record.label()));
    for v in values {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    Some(())
}

/// Decodes and checks a stored dense row of dimension `dim` (a fixed reason when refused).
fn decode_dense_row(payload: &[u8], dim: u64) -> Result<BlrRecord, &'static str> {
    let Some((&label, values)) = payload.split_first() else {
        return Err("an empty row record");
    };
    if label > 1 || values.len() as u64 != dim.saturating_mul(8) {
        return Err("a dense row record is not a label and the store's dimension of values");
    }
    let values: Vec<f64> = values
        .chunks_exact(8)
        .map(|b| {
            let mut v = [0u8; 8];
            v.copy_from_slice(b);
            f64::from_le_bytes(v)
        })
        .collect();
    if values.iter().any(|v| !v.is_finite()) {
        return Err("a non-finite feature value");
    }
    if values.iter().map(|v| v * v).sum::<f64>() > 1.0 + 1e-9 {
        return Err("a row outside the unit ball");
    }
    // Inside the unit ball already: `new` leaves the values as they are.
    BlrRecord::new(Features::Dense(values), label == 1)
        .map(|(r, _)| r)
        .map_err(|_| "not a valid record")
}

/// Encodes a sparse record into `buf` (cleared first); `None` for a dense one.
fn encode_row(record: &BlrRecord, buf: &mut Vec<u8>) -> Option<()> {
    let Features::Sparse { indices, values } = record.features() else {
        return None;
    };
    buf.clear();
    buf.push(u8::from(record.label()));
    for (&i, &v) in indices.iter().zip(values) {
        buf.extend_from_slice(&i.to_le_bytes());
        buf.extend_from_slice(&v.to_le_bytes());
    }
    Some(())
}

/// Decodes and checks a stored row of dimension `dim` (a fixed reason when refused).
fn decode_row(payload: &[u8], dim: u64) -> Result<BlrRecord, &'static str> {
    let Some((&label, pairs)) = payload.split_first() else {
        return Err("an empty row record");
    };
    if label > 1 || !pairs.len().is_multiple_of(12) {
        return Err("a row record is not a label and whole (index, value) pairs");
    }
    let mut indices = Vec::with_capacity(pairs.len() / 12);
    let mut values = Vec::with_capacity(pairs.len() / 12);
    for pair in pairs.chunks_exact(12) {
        let mut i = [0u8; 4];
        let mut v = [0u8; 8];
        i.copy_from_slice(&pair[..4]);
        v.copy_from_slice(&pair[4..]);
        let (i, v) = (u32::from_le_bytes(i), f64::from_le_bytes(v));
        if u64::from(i) >= dim {
            return Err("a feature index outside the store's dimension");
        }
        if indices.last().is_some_and(|&last| i <= last) {
            return Err("feature indices not strictly increasing");
        }
        if !v.is_finite() {
            return Err("a non-finite feature value");
        }
        indices.push(i);
        values.push(v);
    }
    if values.iter().map(|v| v * v).sum::<f64>() > 1.0 + 1e-9 {
        return Err("a row outside the unit ball");
    }
    // Inside the unit ball already: `new` leaves the values as they are.
    BlrRecord::new(Features::Sparse { indices, values }, label == 1)
        .map(|(r, _)| r)
        .map_err(|_| "not a valid record")
}

/// Converts a LIBSVM file into a store of labelled sparse rows at `store`, streaming
/// ([`stream_libsvm`]: the loader's per-line checks, scaling by `options.radius`, clipping into
/// the unit ball; `options.dim` must be declared). Each stored record is the record
/// [`crate::blr::load_libsvm`] makes from its line. Returns the rows written and how many were
/// clipped (a non-private count for the data owner).
///
/// # Errors
/// [`StoreError::Blr`] for the input's errors (file and line) or no declared dimension; the
/// writer's errors. On any error nothing is left at `store`.
///
/// # Example
/// ```
/// use vips_models::blr::LibsvmOptions;
/// use vips_models::store::{RecordStore, convert_libsvm};
/// # let dir = std::env::temp_dir().join(format!("convert-libsvm-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("rows.libsvm"), "1 1:0.5 3:0.5\n-1 2:0.25\n")?;
/// let options = LibsvmOptions { dim: Some(3), radius: 1.0 };
/// let (rows, _) = convert_libsvm(dir.join("rows.libsvm"), dir.join("rows.store"), options)?;
/// assert_eq!((rows, RecordStore::open(dir.join("rows.store"))?.dim()), (2, 3));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_libsvm(
    input: impl AsRef<Path>,
    store: impl AsRef<Path>,
    options: LibsvmOptions,
) -> Result<(u64, u64), StoreError> {
    let dim = options.dim.ok_or(crate::blr::BlrError::InvalidParameter {
        name: "dim",
        value: 0.0,
        reason: "a converted LIBSVM file needs a declared dimension",
    })?;
    let mut writer = StoreWriter::create(store, RecordKind::LabelledSparseRow, dim as u64)?;
    let mut buf = Vec::new();
    let mut failure = None;
    let (_, clipped) = stream_libsvm(input, options, |record| {
        if encode_row(&record, &mut buf).is_none() {
            failure = Some(StoreError::BadRecord {
                path: writer.path().to_path_buf(),
                record: writer.len(),
                reason: "a dense row (LIBSVM rows are sparse)",
            });
            return false;
        }
        match writer.push_payload(&buf) {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    Ok((writer.finish()?, clipped as u64))
}

/// Converts a CSV file with a header and a label column into a store of labelled dense rows at
/// `store`, streaming ([`stream_csv`]: the loader's header and per-row checks, the public
/// `options.map`, clipping into the unit ball; one line in memory). Each stored record is the
/// record [`crate::blr::load_csv`] makes from its line, bit for bit, so a fit through the store
/// equals the in-memory fit of the same rows. The store's dimension is the map's output
/// dimension (the intercept included).
///
/// Returns what [`stream_csv`] read: the rows written, how many were clipped (non-private
/// counts for the data owner) and the model's feature names (the public schema).
///
/// # Privacy
/// The map must be public (declared ranges, never fitted to the rows); the store is the data
/// owner's private copy of the rows, not a release.
///
/// # Errors
/// [`StoreError::Blr`] for the input's errors (the file and the line: a missing label column, a
/// cell that is not a number, a row of the wrong width, no rows); the writer's errors. On any
/// error nothing is left at `store`.
///
/// # Example
/// ```
/// use vips_models::blr::{CsvOptions, FeatureMap};
/// use vips_models::store::{RecordKind, RecordStore, convert_csv};
/// # let dir = std::env::temp_dir().join(format!("convert-csv-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("rows.csv"), "a,b,y\n1,5,1\n0,2,0\n")?;
/// let map = FeatureMap::from_ranges(&[0.0, 0.0], &[1.0, 10.0], true)?;
/// let options = CsvOptions { label: "y".into(), map: Some(map) };
/// let read = convert_csv(dir.join("rows.csv"), dir.join("rows.store"), &options)?;
/// let store = RecordStore::open(dir.join("rows.store"))?;
/// assert_eq!((read.rows, store.dim(), store.kind()), (2, 3, RecordKind::LabelledDenseRow));
/// assert_eq!(read.feature_names, ["a", "b", "intercept"]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_csv(
    input: impl AsRef<Path>,
    store: impl AsRef<Path>,
    options: &CsvOptions,
) -> Result<crate::blr::StreamedCsv, StoreError> {
    let dim = match &options.map {
        Some(map) => map.output_dim(),
        // The identity map's dimension is the header's feature count.
        None => crate::blr::read_csv_header(input.as_ref(), &options.label)?.len(),
    };
    let mut writer = StoreWriter::create(store, RecordKind::LabelledDenseRow, dim as u64)?;
    let mut buf = Vec::new();
    let mut failure = None;
    let read = stream_csv(input, options, |record| {
        let pushed = match encode_dense_row(&record, &mut buf) {
            Some(()) => writer.push_payload(&buf),
            None => Err(StoreError::BadRecord {
                path: writer.path().to_path_buf(),
                record: writer.len(),
                reason: "a sparse row (CSV rows are dense)",
            }),
        };
        match pushed {
            Ok(()) => true,
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    writer.finish()?;
    Ok(read)
}

/// BLR's records read from a store of labelled rows (sparse from LIBSVM, dense from CSV); built
/// by
/// [`crate::blr::Blr::store_source`].
///
/// # Privacy
/// Each record is the stored row alone (already scaled and clipped at conversion, a per-record
/// transform), so a fit through the store releases what the in-memory fit of the same records
/// releases for the same seeds. A row that does not decode is a [`SourceError::Record`]:
/// replaced by zero in a private release. [`RecordSource::len`](dp_core::RecordSource::len) is the store's record count
/// (private under add/remove-one).
#[derive(Debug)]
pub struct BlrStoreSource {
    store: RecordStore,
}

impl BlrStoreSource {
    pub(crate) fn new(store: RecordStore) -> Self {
        Self { store }
    }

    /// The store.
    pub fn store(&self) -> &RecordStore {
        &self.store
    }

    fn read_with(&self, index: usize, buf: &mut Vec<u8>) -> Result<BlrRecord, SourceError> {
        self.store
            .read_payload(index, buf)
            .map_err(|e| self.store.source_error(e, "an unreadable row record"))?;
        let decoded = match self.store.kind() {
            RecordKind::LabelledDenseRow => decode_dense_row(buf, self.store.dim()),
            _ => decode_row(buf, self.store.dim()),
        };
        decoded.map_err(|reason| SourceError::Record { reason })
    }
}

buffered_record_source!(BlrStoreSource, BlrRecord);
