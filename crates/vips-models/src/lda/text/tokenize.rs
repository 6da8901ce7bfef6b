//! The tokenizer: UAX #29 words, lower-cased, runs of letters of at least three characters,
//! English stop words removed.

use std::collections::HashSet;

use unicode_segmentation::UnicodeSegmentation;

/// The committed English stop-word list (`crates/vips-models/data/english_stop_words.txt`):
/// scikit-learn's `ENGLISH_STOP_WORDS` (318 words, BSD-3-Clause), the list that built the
/// project's news corpus. Lines starting with `#` are comments.
pub const ENGLISH_STOP_WORDS: &str = include_str!("../../../data/english_stop_words.txt");

/// The default minimum token length in characters (grapheme clusters), as the news corpus's
/// `[a-z]{3,}` pattern.
pub const DEFAULT_MIN_CHARS: usize = 3;

/// Splits text into lower-case word tokens.
///
/// The rule, applied to each word of the Unicode word segmentation (UAX #29, through the
/// `unicode-segmentation` crate's `unicode_words`):
/// 1. a word containing a numeric character is dropped (`covid19`, `2017`), as the news corpus's
///    `\b[a-z]{3,}\b` pattern drops it;
/// 2. the word is split into runs of letters: a grapheme cluster whose first character is
///    alphabetic continues a run, anything else (an apostrophe, an underscore, a middle dot) ends
///    it, so `don't` gives `don` and `t`, and a combining accent stays with its letter;
/// 3. each run is lower-cased (`str::to_lowercase`, full Unicode case mapping) and kept if it has
///    at least `min_chars` grapheme clusters and is not a stop word.
///
/// Unlike scikit-learn's ASCII pattern, letters outside `a-z` are kept (`café`, `naïve`,
/// `москва`). Text is not Unicode-normalised: `café` written with a combining accent and with a
/// precomposed `é` are different tokens.
///
/// # Example
/// ```
/// use vips_models::lda::text::Tokenizer;
/// let t = Tokenizer::english();
/// assert_eq!(t.tokenize("The CAFÉ's naïve owners, in 2017: don't!"), ["café", "naïve", "owners", "don"]);
/// ```
#[derive(Clone, Debug)]
pub struct Tokenizer {
    stop_words: HashSet<String>,
    min_chars: usize,
}

impl Tokenizer {
    /// The default tokenizer: [`ENGLISH_STOP_WORDS`] and tokens of at least
    /// [`DEFAULT_MIN_CHARS`] characters.
    pub fn english() -> Self {
        Self::new(parse_stop_words(ENGLISH_STOP_WORDS), DEFAULT_MIN_CHARS)
    }

    /// A tokenizer with the given stop words (lower-cased here) and minimum token length in
    /// characters (0 is treated as 1).
    pub fn new(stop_words: impl IntoIterator<Item = String>, min_chars: usize) -> Self {
        Self {
            stop_words: stop_words.into_iter().map(|w| w.to_lowercase()).collect(),
            min_chars: min_chars.max(1),
        }
    }

    /// Whether `word` (lower-case) is a stop word.
    pub fn is_stop_word(&self, word: &str) -> bool {
        self.stop_words.contains(word)
    }

    /// The minimum token length in characters.
    pub fn min_chars(&self) -> usize {
        self.min_chars
    }

    /// The tokens of `text`, in order.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.tokenize_into(text, &mut out);
        out
    }

    /// Appends the tokens of `text` to `out` (see [`Tokenizer`] for the rule).
    pub fn tokenize_into(&self, text: &str, out: &mut Vec<String>) {
        for word in text.unicode_words() {
            if word.chars().any(char::is_numeric) {
                continue;
            }
            let mut start = None;
            let mut chars = 0usize;
            for (at, g) in word.grapheme_indices(true) {
                let letter = g.chars().next().is_some_and(char::is_alphabetic);
                match (letter, start) {
                    (true, None) => {
                        start = Some(at);
                        chars = 1;
                    }
                    (true, Some(_)) => chars += 1,
                    (false, Some(s)) => {
                        self.push_run(&word[s..at], chars, out);
                        start = None;
                    }
                    (false, None) => {}
                }
            }
            if let Some(s) = start {
                self.push_run(&word[s..], chars, out);
            }
        }
    }

    fn push_run(&self, run: &str, chars: usize, out: &mut Vec<String>) {
        if chars < self.min_chars {
            return;
        }
        let token = run.to_lowercase();
        if !self.stop_words.contains(&token) {
            out.push(token);
        }
    }
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self::english()
    }
}

/// The words of a stop-word file: one per line, blank lines and lines starting with `#` skipped,
/// surrounding whitespace trimmed.
pub fn parse_stop_words(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}
