//! A record store on disk: corpora larger than memory, read record by record (issue 21).
//!
//! A fit over a [`RecordStore`] reads only the records its Poisson batches draw
//! ([`dp_core::PrivacyWall::from_source`]), so its memory is the batch plus the model, not the
//! corpus. A store is written once, streaming, by a converter ([`convert_uci_bow`],
//! [`write_documents`], [`write_synthetic`], [`convert_libsvm`], [`convert_csv`], [`convert_idx`], [`write_images`],
//! [`convert_text`]) and then opened read-only by any number of fits.
//!
//! # File format, version 1
//! All integers little-endian. One file:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `DPBSTOR\0` |
//! | 8 | 4 | format version (`1`; a larger one is refused as newer) |
//! | 12 | 4 | record kind ([`RecordKind`]: 1 bag of words, 2 labelled sparse row, 3 binary vector, 4 labelled dense row) |
//! | 16 | 8 | record count `n` |
//! | 24 | 8 | dimension `d` (vocabulary size / features / pixels) |
//! | 32 | 8 | payload length `P` in bytes |
//! | 40 | 8 | FNV-1a 64 of the offsets table |
//! | 48 | 8 | FNV-1a 64 of the payloads |
//! | 56 | 8 | FNV-1a 64 of bytes `0..56` (the header) |
//! | 64 | `P` | the records' payloads, one after the other |
//! | `64 + P` | `8 (n + 1)` | offsets table: record `i` is payload bytes `off[i]..off[i + 1]`; `off[0] = 0`, strictly increasing, `off[n] = P` |
//!
//! Payload of one record, by kind:
//! - **bag of words**: `(word id u32, count u32)` pairs, word ids strictly increasing and
//!   `< d`, counts `>= 1`, at least one pair (a [`crate::lda::corpus::Document`]);
//! - **labelled sparse row**: the label byte (`0` / `1`), then `(index u32, value f64)` pairs,
//!   indices strictly increasing and `< d`, values finite, L2 norm at most 1 (a
//!   [`crate::blr::BlrRecord`] as the LIBSVM loader makes it);
//! - **labelled dense row** (kind 4, added after the first release of version 1: a build
//!   without it refuses such a store as an unknown kind, never misreads it): the label byte
//!   (`0` / `1`), then exactly `d` values `f64`, finite, L2 norm at most 1 (a
//!   [`crate::blr::BlrRecord`] as the CSV loader makes it, [`convert_csv`]);
//! - **binary vector**: `ceil(d / 8)` bytes, pixel `i` in bit `i % 8` (least significant
//!   first) of byte `i / 8`, padding bits zero (a [`crate::sbn::BinaryImage`]).
//!
//! The table follows the payloads so that a writer can stream records without knowing their
//! number in advance. The checksums detect corruption, not tampering (FNV is not
//! cryptographic).
//!
//! # Checks
//! [`RecordStore::open`] checks the magic, the version, the header checksum, the kind, that the
//! file is exactly `64 + P + 8 (n + 1)` bytes long (so a header claiming `10^18` records fails
//! before anything is allocated), and streams the offsets table once (constant memory) to
//! check its order, its end, each record's length against the kind's cap and the table's
//! checksum. Each read then decodes and checks its record; [`RecordStore::verify_payloads`]
//! checks the payload checksum (one pass over the file). Writers write `FILE.tmp-<pid>` and
//! rename it to `FILE` when complete, so a store is never seen half-written.

/// `RecordSource` for a store's source type whose `read_with(index, buf)` reads and decodes one
/// record into a reusable byte buffer: `len` is the store's, a batch is read in parallel (rayon,
/// one buffer per worker), in order.
macro_rules! buffered_record_source {
    ($source:ty, $record:ty) => {
        impl dp_core::RecordSource for $source {
            type Record = $record;

            fn len(&self) -> usize {
                self.store.len()
            }

            fn read(&self, index: usize) -> Result<$record, dp_core::SourceError> {
                self.read_with(index, &mut Vec::new())
            }

            /// Reads and decodes the batch in parallel (rayon), in order.
            fn read_batch(
                &self,
                indices: &[usize],
                out: &mut Vec<Result<$record, dp_core::SourceError>>,
            ) {
                use rayon::prelude::*;
                indices
                    .par_iter()
                    .map_init(Vec::new, |buf, &i| self.read_with(i, buf))
                    .collect_into_vec(out);
            }
        }
    };
}

mod bow;
mod error;
mod format;
mod image;
mod reader;
mod row;
mod writer;

pub use bow::{
    LdaStoreSource, TextConversion, convert_text, convert_uci_bow, decode_document,
    write_documents, write_synthetic,
};
pub use error::StoreError;
pub use format::{FORMAT_VERSION, RecordKind};
pub use image::{SbnStoreSource, convert_idx, write_images};
pub use reader::RecordStore;
pub use row::{BlrStoreSource, convert_csv, convert_libsvm};
pub use writer::StoreWriter;
