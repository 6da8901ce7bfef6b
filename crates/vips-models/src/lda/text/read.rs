//! Reading raw text: one document per line of a file, or one document per `.txt` file of a
//! directory, tokenised as it is read.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use super::{TextError, Tokenizer};
use crate::limits::{MAX_INPUT_BYTES, MAX_LINE_BYTES};

/// Size caps of [`read_text`], all checked before the memory they guard is allocated.
///
/// # Example
/// ```
/// use vips_models::lda::text::TextLimits;
/// let limits = TextLimits { max_documents: 1000, ..TextLimits::default() };
/// assert_eq!(limits.max_document_bytes, 1 << 20);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextLimits {
    /// Most documents (lines of a file, or `.txt` files of a directory; blank lines count).
    /// Default 5,000,000.
    pub max_documents: usize,
    /// Most tokens in total, after stop words are removed. Default 20,000,000 (about 0.6 GB of
    /// token strings).
    pub max_tokens: u64,
    /// Longest document (one line, or one file) in bytes. Default `MAX_LINE_BYTES` (1 MiB).
    pub max_document_bytes: usize,
    /// Largest input (the file, or the directory's `.txt` files together) in bytes, checked from
    /// the file sizes before reading. Default `MAX_INPUT_BYTES` (2 GiB).
    pub max_total_bytes: u64,
}

impl Default for TextLimits {
    fn default() -> Self {
        Self {
            max_documents: 5_000_000,
            max_tokens: 20_000_000,
            max_document_bytes: MAX_LINE_BYTES,
            max_total_bytes: MAX_INPUT_BYTES,
        }
    }
}

/// Tokenised documents with where each came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextCorpus {
    files: Vec<PathBuf>,
    docs: Vec<Vec<String>>,
    /// `(index into files, 1-based line)` per document.
    origins: Vec<(usize, usize)>,
}

impl TextCorpus {
    /// A corpus of already tokenised documents (no file of origin; [`TextCorpus::origin`] is
    /// `None`).
    ///
    /// # Example
    /// ```
    /// use vips_models::lda::text::TextCorpus;
    /// let c = TextCorpus::from_tokens(vec![vec!["apple".into()], vec![]]);
    /// assert_eq!(c.len(), 2);
    /// assert_eq!(c.num_tokens(), 1);
    /// ```
    pub fn from_tokens(docs: Vec<Vec<String>>) -> Self {
        Self {
            files: Vec::new(),
            docs,
            origins: Vec::new(),
        }
    }

    /// The documents' tokens, in input order (blank documents included).
    pub fn docs(&self) -> &[Vec<String>] {
        &self.docs
    }

    /// Consumes the corpus, returning the documents' tokens.
    pub fn into_docs(self) -> Vec<Vec<String>> {
        self.docs
    }

    /// Number of documents (blank ones included).
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// `true` if there are no documents.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Total number of tokens.
    pub fn num_tokens(&self) -> u64 {
        self.docs.iter().map(|d| d.len() as u64).sum()
    }

    /// The file and 1-based line document `i` was read from (line 1 for a whole-file document).
    pub fn origin(&self, i: usize) -> Option<(&Path, usize)> {
        let &(f, line) = self.origins.get(i)?;
        Some((self.files.get(f)?.as_path(), line))
    }
}

/// Reads and tokenises raw text: if `path` is a directory, every file in it (not recursively)
/// whose name ends in `.txt` (any case) is one document, in file-name order; otherwise every
/// line of the file is one document (`\n` or `\r\n` line ends; blank lines are kept as empty
/// documents so that outputs line up with input lines).
///
/// # Example
/// ```
/// use vips_models::lda::text::{TextLimits, Tokenizer, read_text};
/// let dir = std::env::temp_dir().join(format!("vips-read-text-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let file = dir.join("docs.txt");
/// std::fs::write(&file, "Apples and pears.\n\nThe river flows.\n")?;
/// let corpus = read_text(&file, &Tokenizer::english(), &TextLimits::default())?;
/// assert_eq!(corpus.docs(), &[vec!["apples".to_string(), "pears".into()], vec![], vec!["river".into(), "flows".into()]]);
/// assert_eq!(corpus.origin(2).unwrap().1, 3);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`TextError::Io`] for a missing or unreadable path; [`TextError::InputTooLarge`] (from the
/// file sizes, before reading); [`TextError::NotUtf8`] and [`TextError::DocumentTooLong`] naming
/// the file and line; [`TextError::TooManyDocuments`] and [`TextError::TooManyTokens`] naming the
/// document that crossed the cap; [`TextError::EmptyCorpus`] if no document has a token.
pub fn read_text(
    path: &Path,
    tokenizer: &Tokenizer,
    limits: &TextLimits,
) -> Result<TextCorpus, TextError> {
    let mut docs = Vec::new();
    let mut origins = Vec::new();
    let files = visit(path, tokenizer, limits, &mut |tokens, file, line| {
        docs.push(tokens);
        origins.push((file, line));
        true
    })?;
    Ok(TextCorpus {
        files,
        docs,
        origins,
    })
}

/// Reads and tokenises raw text exactly as [`read_text`] does (the same documents, in the same
/// order, blank ones included; the same caps and errors) but hands each document's tokens to
/// `sink` as soon as it is read instead of keeping the corpus: memory is one document (and,
/// for a directory, the list of its `.txt` files). `sink` returns `false` to stop. Returns the
/// number of documents handed to `sink`.
///
/// # Privacy
/// Reads the private documents; the count is the data owner's, not a release.
///
/// # Errors
/// As [`read_text`] (checked before the memory they guard is allocated; an empty corpus only
/// when `sink` did not stop the reading).
///
/// # Example
/// ```
/// use vips_models::lda::text::{TextLimits, Tokenizer, stream_text};
/// # let dir = std::env::temp_dir().join(format!("vips-stream-text-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let file = dir.join("docs.txt");
/// std::fs::write(&file, "Apples and pears.\n\nThe river flows.\n")?;
/// let mut lengths = Vec::new();
/// let n = stream_text(&file, &Tokenizer::english(), &TextLimits::default(), |tokens| {
///     lengths.push(tokens.len());
///     true
/// })?;
/// assert_eq!((n, lengths), (3, vec![2, 0, 2]));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn stream_text(
    path: &Path,
    tokenizer: &Tokenizer,
    limits: &TextLimits,
    mut sink: impl FnMut(Vec<String>) -> bool,
) -> Result<usize, TextError> {
    let mut n = 0;
    visit(path, tokenizer, limits, &mut |tokens, _, _| {
        n += 1;
        sink(tokens)
    })?;
    Ok(n)
}

/// Where [`visit`] hands a document: its tokens, the index of its file, its 1-based line;
/// `false` stops the reading.
type Sink<'a> = dyn FnMut(Vec<String>, usize, usize) -> bool + 'a;

/// The documents read so far and their tokens, against the caps.
#[derive(Default)]
struct Counts {
    documents: usize,
    tokens: u64,
    stopped: bool,
}

/// Reads `path` (a file or a directory) document by document into `sink`; returns the files
/// read. The one home of [`read_text`] and [`stream_text`].
fn visit(
    path: &Path,
    tokenizer: &Tokenizer,
    limits: &TextLimits,
    sink: &mut Sink<'_>,
) -> Result<Vec<PathBuf>, TextError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| TextError::Io { path: p, source }
    };
    let meta = std::fs::metadata(path).map_err(io(path))?;
    let mut counts = Counts::default();
    let files = if meta.is_dir() {
        read_dir(path, tokenizer, limits, &mut counts, sink)?
    } else {
        read_lines(path, meta.len(), tokenizer, limits, &mut counts, sink)?
    };
    if counts.stopped {
        return Ok(files);
    }
    if counts.documents == 0 {
        return Err(TextError::EmptyCorpus {
            path: path.to_path_buf(),
            reason: if meta.is_dir() {
                "no .txt files"
            } else {
                "no lines"
            },
        });
    }
    if counts.tokens == 0 {
        return Err(TextError::EmptyCorpus {
            path: path.to_path_buf(),
            reason: "no document has a token (blank, numbers, short words or stop words only)",
        });
    }
    Ok(files)
}

/// Hands one document to `sink`, enforcing the document and token caps (`files[file]` names
/// the file in errors).
#[allow(clippy::too_many_arguments)] // the reading's state, passed down from `visit`
fn add(
    counts: &mut Counts,
    files: &[PathBuf],
    text: &str,
    file: usize,
    line: usize,
    tokenizer: &Tokenizer,
    limits: &TextLimits,
    sink: &mut Sink<'_>,
) -> Result<(), TextError> {
    let path = || files[file].clone();
    if counts.documents >= limits.max_documents {
        return Err(TextError::TooManyDocuments {
            path: path(),
            line,
            limit: limits.max_documents,
        });
    }
    let tokens = tokenizer.tokenize(text);
    counts.tokens += tokens.len() as u64;
    if counts.tokens > limits.max_tokens {
        return Err(TextError::TooManyTokens {
            path: path(),
            line,
            limit: limits.max_tokens,
        });
    }
    counts.documents += 1;
    if !sink(tokens, file, line) {
        counts.stopped = true;
    }
    Ok(())
}

fn read_lines(
    path: &Path,
    size: u64,
    tokenizer: &Tokenizer,
    limits: &TextLimits,
    counts: &mut Counts,
    sink: &mut Sink<'_>,
) -> Result<Vec<PathBuf>, TextError> {
    let too_large = |size| TextError::InputTooLarge {
        path: path.to_path_buf(),
        size,
        limit: limits.max_total_bytes,
    };
    if size > limits.max_total_bytes {
        return Err(too_large(size));
    }
    let io = |source| TextError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    // The file may grow after the size check: read at most one byte past the cap.
    let mut reader = BufReader::new(file.take(limits.max_total_bytes.saturating_add(1)));
    let files = vec![path.to_path_buf()];
    let mut read = 0u64;
    let mut bytes = Vec::new();
    let mut line = 0usize;
    loop {
        line += 1;
        bytes.clear();
        // At most max_document_bytes + 2 (a `\r\n`) bytes are buffered for one line.
        let n = (&mut reader)
            .take(limits.max_document_bytes as u64 + 2)
            .read_until(b'\n', &mut bytes)
            .map_err(io)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        if read > limits.max_total_bytes {
            return Err(too_large(read));
        }
        let ended = bytes.last() == Some(&b'\n');
        if ended {
            bytes.pop();
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
        }
        if bytes.len() > limits.max_document_bytes
            || (!ended && n as u64 == limits.max_document_bytes as u64 + 2)
        {
            return Err(TextError::DocumentTooLong {
                path: path.to_path_buf(),
                line,
                limit: limits.max_document_bytes,
            });
        }
        let text = std::str::from_utf8(&bytes).map_err(|_| TextError::NotUtf8 {
            path: path.to_path_buf(),
            line,
        })?;
        add(counts, &files, text, 0, line, tokenizer, limits, sink)?;
        if counts.stopped {
            break;
        }
    }
    Ok(files)
}

fn read_dir(
    dir: &Path,
    tokenizer: &Tokenizer,
    limits: &TextLimits,
    counts: &mut Counts,
    sink: &mut Sink<'_>,
) -> Result<Vec<PathBuf>, TextError> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| TextError::Io { path: p, source }
    };
    let mut files: Vec<(PathBuf, u64)> = Vec::new();
    let mut total = 0u64;
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let is_txt = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("txt"));
        if !is_txt {
            continue;
        }
        let meta = std::fs::metadata(&path).map_err(io(&path))?;
        if !meta.is_file() {
            continue;
        }
        if files.len() >= limits.max_documents {
            return Err(TextError::TooManyDocuments {
                path,
                line: 1,
                limit: limits.max_documents,
            });
        }
        total = total.saturating_add(meta.len());
        if total > limits.max_total_bytes {
            return Err(TextError::InputTooLarge {
                path: dir.to_path_buf(),
                size: total,
                limit: limits.max_total_bytes,
            });
        }
        files.push((path, meta.len()));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let names: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
    let mut bytes = Vec::new();
    for (i, (path, size)) in files.iter().enumerate() {
        let too_long = || TextError::DocumentTooLong {
            path: path.clone(),
            line: 1,
            limit: limits.max_document_bytes,
        };
        if *size > limits.max_document_bytes as u64 {
            return Err(too_long());
        }
        bytes.clear();
        File::open(path)
            .map_err(io(path))?
            .take(limits.max_document_bytes as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(io(path))?;
        if bytes.len() > limits.max_document_bytes {
            return Err(too_long());
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| TextError::NotUtf8 {
            path: path.clone(),
            line: 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count(),
        })?;
        add(counts, &names, text, i, 1, tokenizer, limits, sink)?;
        if counts.stopped {
            break;
        }
    }
    Ok(names)
}
