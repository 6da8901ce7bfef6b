//! Top-word tables of fitted topics (003 Table 1, 000 Table 2 = 004 Table 1, 001 Table 1) and
//! the epsilon of a run by any of the papers' accountants.

use dp_accountant::{AccountantConfig, AccountantKind, PrivacyEvent, epsilon_for_event};
use vips_models::lda::Topics;

use super::setting::{DELTA, Setting};

/// Words shown per topic, as in the papers' tables.
pub const TOP_WORDS: usize = 10;

/// Epsilon at [`DELTA`] of `steps` Poisson-subsampled Gaussian releases (noise multiplier
/// `sigma`, rate `q`) by the accountant `kind`.
pub fn epsilon_of(kind: AccountantKind, sigma: f64, q: f64, steps: u64) -> anyhow::Result<f64> {
    let event = PrivacyEvent::poisson_subsampled_gaussian(sigma, q)?.self_composed(steps)?;
    let config = AccountantConfig::default().with_accountant(kind);
    Ok(epsilon_for_event(&event, DELTA, &config)?.epsilon)
}

/// The `n` topics of `topics` whose ten most probable words carry the most probability mass
/// (the most concentrated, the papers' "example topics"), most concentrated first.
pub fn most_concentrated(topics: &Topics, n: usize) -> Vec<usize> {
    let mut mass: Vec<(usize, f64)> = (0..topics.num_topics())
        .map(|k| (k, topics.top_words(k, TOP_WORDS).iter().map(|w| w.1).sum()))
        .collect();
    mass.sort_by(|a, b| b.1.total_cmp(&a.1));
    mass.into_iter().take(n).map(|m| m.0).collect()
}

/// A Markdown table with one column per `(label, topics, topic index)`: the topic's ten most
/// probable words with their posterior-mean probabilities.
pub fn top_words_table(setting: &Setting, columns: &[(String, &Topics, usize)]) -> String {
    let header: Vec<String> = columns
        .iter()
        .map(|(label, _, k)| format!("{label}: topic {k}"))
        .collect();
    let words: Vec<Vec<(u32, f64)>> = columns
        .iter()
        .map(|(_, t, k)| t.top_words(*k, TOP_WORDS))
        .collect();
    let rows: Vec<Vec<String>> = (0..TOP_WORDS)
        .map(|i| {
            words
                .iter()
                .map(|w| {
                    w.get(i).map_or(String::new(), |&(id, p)| {
                        format!("{} {p:.4}", setting.word(id))
                    })
                })
                .collect()
        })
        .collect();
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    crate::report::markdown_table(&header, &rows)
}
