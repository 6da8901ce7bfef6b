//! The UCI "Bag of Words" format: `docword.*.txt[.gz]` (header `D`, `W`, `NNZ`, then
//! `docID wordID count` lines, 1-based ids, sorted by document then word) and `vocab.*.txt`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use crate::limits::{
    BoundedReader, LimitError, MAX_INPUT_BYTES, MAX_LINE_BYTES, ReadLineError, check_memory, count,
    excerpt, read_line_bounded,
};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use super::{Corpus, CorpusError, Document};

/// Opens a file, decompressing gzip (detected from the content) through a reader bounded by
/// [`MAX_INPUT_BYTES`]. Returns the reader and whether it is gzip.
fn open(path: &Path) -> Result<(Box<dyn BufRead>, bool), CorpusError> {
    let io = |source| CorpusError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(io)?;
    let file = File::open(path).map_err(io)?;
    if n == 2 && magic == [0x1f, 0x8b] {
        Ok((
            Box::new(BufReader::new(BoundedReader::new(
                MultiGzDecoder::new(file),
                MAX_INPUT_BYTES,
            ))),
            true,
        ))
    } else {
        Ok((
            Box::new(BufReader::new(BoundedReader::new(file, MAX_INPUT_BYTES))),
            false,
        ))
    }
}

/// An I/O error while reading `path`: over the input limit, a corrupt gzip stream, or plain I/O.
fn read_error(path: &Path, gzip: bool, source: std::io::Error) -> CorpusError {
    if source.to_string().contains("MAX_INPUT_BYTES") {
        return CorpusError::InFile {
            path: path.to_path_buf(),
            source: Box::new(CorpusError::Limit(LimitError::Input {
                what: if gzip {
                    "the decompressed stream".into()
                } else {
                    "the file".into()
                },
                limit: MAX_INPUT_BYTES,
            })),
        };
    }
    if gzip && source.kind() != std::io::ErrorKind::NotFound {
        CorpusError::Gzip {
            path: path.to_path_buf(),
            source,
        }
    } else {
        CorpusError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Reads line `line` (bounded by [`MAX_LINE_BYTES`]) into `buf`; `Ok(false)` at the end.
fn next_line(
    reader: &mut dyn BufRead,
    buf: &mut String,
    line: usize,
    path: &Path,
    gzip: bool,
) -> Result<bool, CorpusError> {
    let mut r = reader;
    read_line_bounded(&mut r, buf, MAX_LINE_BYTES, line).map_err(|e| match e {
        ReadLineError::Io(source) => read_error(path, gzip, source),
        ReadLineError::Limit(l) => CorpusError::Limit(l),
    })
}

fn parse_int(field: Option<&str>, line: usize, what: &str) -> Result<i64, CorpusError> {
    let field = field.ok_or_else(|| CorpusError::Parse {
        line,
        reason: format!("missing {what}"),
    })?;
    field.parse::<i64>().map_err(|_| CorpusError::Parse {
        line,
        reason: if !field.is_empty()
            && field
                .strip_prefix('-')
                .unwrap_or(field)
                .bytes()
                .all(|b| b.is_ascii_digit())
        {
            format!(
                "{what} `{}` is too large: at most {}",
                excerpt(field),
                i64::MAX
            )
        } else {
            format!("{what} `{}` is not an integer", excerpt(field))
        },
    })
}

fn header_value(
    reader: &mut dyn BufRead,
    buf: &mut String,
    line: usize,
    what: &str,
    path: &Path,
    gzip: bool,
) -> Result<usize, CorpusError> {
    if !next_line(reader, buf, line, path, gzip)? {
        return Err(CorpusError::Parse {
            line,
            reason: format!("file ends before the header's {what}"),
        });
    }
    let v = parse_int(Some(buf.trim()), line, what)?;
    usize::try_from(v).map_err(|_| CorpusError::Parse {
        line,
        reason: format!("{what} {v} is negative"),
    })
}

/// Reads a UCI bag-of-words `docword` file (gzipped or plain; detected from the content).
///
/// Word ids become 0-based. Every document `1..=D` must have at least one entry.
///
/// # Errors
/// [`CorpusError::InFile`] naming the file around a [`CorpusError`] naming the line for: a malformed line, a word or document id out of range, a
/// count that is not positive, entries out of order or repeated, an empty document, a file with
/// fewer or more entries than its header's `NNZ`, a header whose `D` exceeds `NNZ` or whose sizes
/// would need more memory than the machine has ([`CorpusError::Limit`]), a line longer than
/// [`MAX_LINE_BYTES`]; [`CorpusError::Io`] if the file cannot be read; [`CorpusError::Gzip`] for a
/// corrupt gzip stream (reported in preference to the parse error the garbled text caused); an
/// input over [`MAX_INPUT_BYTES`] after decompression.
///
/// # Example
/// ```
/// use vips_models::lda::corpus::load_uci_bow;
/// let dir = std::env::temp_dir().join("vips_models_doc_uci");
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("docword.txt");
/// std::fs::write(&path, "2\n3\n3\n1 1 2\n1 3 1\n2 2 5\n").unwrap();
/// let corpus = load_uci_bow(&path)?;
/// assert_eq!(corpus.len(), 2);
/// assert_eq!(corpus.docs()[1].words(), &[1]);
/// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
/// ```
pub fn load_uci_bow(path: impl AsRef<Path>) -> Result<Corpus, CorpusError> {
    let mut docs = Vec::new();
    let vocab_size = read_uci_bow(path.as_ref(), true, &mut |_, doc| {
        docs.push(doc);
        true
    })?;
    Corpus::new(docs, vocab_size)
}

/// Reads a UCI bag-of-words `docword` file as [`load_uci_bow`] does (the same checks and
/// errors) but hands each document to `sink(W, document)` as soon as it is complete instead
/// of keeping the corpus: memory is one document. `sink` returns `false` to stop reading
/// (the caller then knows why). No memory limit is applied to the header's `D` and `NNZ`.
///
/// # Errors
/// As [`load_uci_bow`].
///
/// # Example
/// ```
/// # let dir = std::env::temp_dir().join(format!("stream-bow-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let path = dir.join("docword.txt");
/// std::fs::write(&path, "2\n3\n3\n1 1 2\n1 3 1\n2 2 4\n")?;
/// let mut lengths = Vec::new();
/// vips_models::lda::corpus::stream_uci_bow(&path, |w, doc| {
///     assert_eq!(w, 3);
///     lengths.push(doc.len());
///     true
/// })?;
/// assert_eq!(lengths, vec![3, 4]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn stream_uci_bow(
    path: impl AsRef<Path>,
    mut sink: impl FnMut(usize, Document) -> bool,
) -> Result<(), CorpusError> {
    read_uci_bow(path.as_ref(), false, &mut sink).map(|_| ())
}

/// Opens and parses `path`, handing documents to `sink`; returns `W`.
fn read_uci_bow(
    path: &Path,
    in_memory: bool,
    sink: &mut dyn FnMut(usize, Document) -> bool,
) -> Result<usize, CorpusError> {
    let (mut reader, gzip) = open(path)?;
    match parse_docword(&mut *reader, path, gzip, in_memory, sink) {
        Ok(vocab_size) => Ok(vocab_size),
        Err(
            e @ (CorpusError::Io { .. } | CorpusError::Gzip { .. } | CorpusError::InFile { .. }),
        ) => Err(e),
        Err(e) => {
            // A garbled gzip stream decodes to text that fails to parse before the decoder
            // reaches its checksum: report the gzip error, not the parse error it caused.
            if gzip && let Err(source) = std::io::copy(&mut reader, &mut std::io::sink()) {
                return Err(read_error(path, gzip, source));
            }
            Err(CorpusError::InFile {
                path: path.to_path_buf(),
                source: Box::new(e),
            })
        }
    }
}

/// Bytes a document of the corpus costs at least (the `Document` struct and its vectors).
const BYTES_PER_DOC: f64 = 72.0;
/// Bytes per non-zero entry once loaded (a word id and a count).
const BYTES_PER_ENTRY: f64 = 8.0;

fn parse_docword(
    reader: &mut dyn BufRead,
    path: &Path,
    gzip: bool,
    in_memory: bool,
    sink: &mut dyn FnMut(usize, Document) -> bool,
) -> Result<usize, CorpusError> {
    let mut buf = String::new();
    let num_docs = header_value(reader, &mut buf, 1, "D", path, gzip)?;
    let vocab_size = header_value(reader, &mut buf, 2, "W", path, gzip)?;
    let nnz = header_value(reader, &mut buf, 3, "NNZ", path, gzip)?;
    if vocab_size == 0 {
        return Err(CorpusError::Parse {
            line: 2,
            reason: "W must be positive".into(),
        });
    }
    if vocab_size > u32::MAX as usize {
        return Err(CorpusError::Parse {
            line: 2,
            reason: format!("W = {vocab_size} is too large: at most {}", u32::MAX),
        });
    }
    if num_docs > nnz {
        return Err(CorpusError::Parse {
            line: 1,
            reason: format!(
                "the header declares D = {num_docs} documents but only NNZ = {nnz} entries \
                 (every document needs one)"
            ),
        });
    }
    if in_memory {
        check_memory(
            "the docword header (D, NNZ)",
            format!(
                "D = {} documents with NNZ = {} entries",
                count(num_docs as f64),
                count(nnz as f64)
            ),
            num_docs as f64 * BYTES_PER_DOC + nnz as f64 * BYTES_PER_ENTRY,
        )?;
    }
    let mut cur_doc: usize = 0; // 1-based id of the document being read; 0 = none yet
    let mut words: Vec<u32> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    let mut found = 0usize;
    let mut line_no = 3usize;
    let mut finish =
        |words: &mut Vec<u32>, counts: &mut Vec<u32>, line: usize| -> Result<bool, CorpusError> {
            let doc = Document::from_sorted(std::mem::take(words), std::mem::take(counts))
                .map_err(|e| CorpusError::Parse {
                    line,
                    reason: e.to_string(),
                })?;
            Ok(sink(vocab_size, doc))
        };
    loop {
        line_no += 1;
        if !next_line(reader, &mut buf, line_no, path, gzip)? {
            line_no -= 1;
            break;
        }
        let trimmed = buf.trim();
        if trimmed.is_empty() {
            continue;
        }
        if found == nnz {
            return Err(CorpusError::TooManyEntries {
                line: line_no,
                expected: nnz,
            });
        }
        let mut fields = trimmed.split_ascii_whitespace();
        let doc = parse_int(fields.next(), line_no, "docID")?;
        let word = parse_int(fields.next(), line_no, "wordID")?;
        let count = parse_int(fields.next(), line_no, "count")?;
        if fields.next().is_some() {
            return Err(CorpusError::Parse {
                line: line_no,
                reason: "more than three fields".into(),
            });
        }
        if doc < 1 || doc as u64 > num_docs as u64 {
            return Err(CorpusError::DocOutOfRange {
                line: line_no,
                doc,
                num_docs,
            });
        }
        if word < 1 || word as u64 > vocab_size as u64 {
            return Err(CorpusError::WordOutOfRange {
                line: line_no,
                word,
                vocab_size,
            });
        }
        if count < 1 || count > i64::from(u32::MAX) {
            return Err(CorpusError::BadCount {
                line: line_no,
                count,
            });
        }
        let (doc, word, count) = (doc as usize, (word - 1) as u32, count as u32);
        if doc < cur_doc || (doc == cur_doc && words.last().is_some_and(|&w| w >= word)) {
            return Err(CorpusError::Unsorted { line: line_no });
        }
        if doc > cur_doc {
            if cur_doc > 0 && !finish(&mut words, &mut counts, line_no)? {
                return Ok(vocab_size);
            }
            if doc > cur_doc + 1 {
                return Err(CorpusError::EmptyDocument {
                    line: line_no,
                    doc: cur_doc + 1,
                });
            }
            cur_doc = doc;
        }
        words.push(word);
        counts.push(count);
        found += 1;
    }
    if found < nnz {
        return Err(CorpusError::Truncated {
            line: line_no,
            expected: nnz,
            found,
        });
    }
    if cur_doc < num_docs {
        return Err(CorpusError::EmptyDocument {
            line: line_no,
            doc: cur_doc + 1,
        });
    }
    if cur_doc > 0 {
        finish(&mut words, &mut counts, line_no)?;
    }
    Ok(vocab_size)
}

/// Reads a vocabulary file: one word per line (trailing empty lines ignored).
///
/// # Errors
/// [`CorpusError::Io`] if unreadable; [`CorpusError::Parse`] for an empty line inside the list.
pub fn load_vocab(path: impl AsRef<Path>) -> Result<Vec<String>, CorpusError> {
    let path = path.as_ref();
    let (mut reader, gzip) = open(path)?;
    let in_file = |e: CorpusError| CorpusError::InFile {
        path: path.to_path_buf(),
        source: Box::new(e),
    };
    let mut vocab = Vec::new();
    let mut blank_at = None;
    let mut buf = String::new();
    let mut line = 0;
    loop {
        line += 1;
        if !next_line(&mut *reader, &mut buf, line, path, gzip).map_err(|e| match e {
            e @ (CorpusError::Io { .. } | CorpusError::Gzip { .. }) => e,
            e => in_file(e),
        })? {
            break;
        }
        let word = buf.trim();
        if word.is_empty() {
            blank_at.get_or_insert(line);
            continue;
        }
        if let Some(line) = blank_at {
            return Err(in_file(CorpusError::Parse {
                line,
                reason: "empty line inside the vocabulary".into(),
            }));
        }
        vocab.push(word.to_string());
    }
    Ok(vocab)
}

/// A train/test pair of corpora over one vocabulary.
#[derive(Clone, Debug)]
pub struct UciSplits {
    /// Training documents (private: they go behind the privacy wall).
    pub train: Corpus,
    /// Held-out documents (public, for evaluation).
    pub test: Corpus,
}

fn find(dir: &Path, stem: &str) -> Option<PathBuf> {
    [format!("{stem}.gz"), stem.to_string()]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|p| p.exists())
}

/// Loads a directory laid out as `../shared/data/news`: `docword.train.txt[.gz]`,
/// `docword.test.txt[.gz]` and `vocab.txt`.
///
/// # Errors
/// [`CorpusError::Io`] if a file is missing; any error of [`load_uci_bow`] / [`load_vocab`];
/// [`CorpusError::Mismatch`] if the files disagree on the vocabulary size.
pub fn load_uci_dir(dir: impl AsRef<Path>) -> Result<UciSplits, CorpusError> {
    let dir = dir.as_ref();
    let missing = |name: &str| CorpusError::Io {
        path: dir.join(name),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "not found"),
    };
    let train_path = find(dir, "docword.train.txt").ok_or_else(|| missing("docword.train.txt"))?;
    let test_path = find(dir, "docword.test.txt").ok_or_else(|| missing("docword.test.txt"))?;
    let vocab_path = find(dir, "vocab.txt").ok_or_else(|| missing("vocab.txt"))?;
    let vocab = load_vocab(vocab_path)?;
    let train = load_uci_bow(train_path)?.with_vocab(vocab.clone())?;
    let test = load_uci_bow(test_path)?;
    if test.vocab_size() != train.vocab_size() {
        return Err(CorpusError::Mismatch(format!(
            "train has W = {}, test has W = {}",
            train.vocab_size(),
            test.vocab_size()
        )));
    }
    let test = test.with_vocab(vocab)?;
    Ok(UciSplits { train, test })
}
