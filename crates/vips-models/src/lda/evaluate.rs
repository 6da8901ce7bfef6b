//! Held-out evaluation: the per-word perplexity bound of Hoffman, Blei & Bach (2010, Eq. 16 and
//! their evaluation; 003 Sec. 4.3), document-completion perplexity, in parallel over documents.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::estep::{DocScratch, infer_document};
use super::special_fns::ln_gamma;
use super::{LdaConfig, LdaError, Topics};
use crate::lda::corpus::Document;

/// Held-out scores of a topic model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    /// Per-word ELBO (nats per token): the bound `b` in `perplexity <= exp(-b)`.
    pub per_word_bound: f64,
    /// `exp(-per_word_bound)`: an upper bound on the held-out perplexity.
    pub perplexity_bound: f64,
    /// Document completion: perplexity of the second half of each test document given `theta`
    /// inferred on its first half (see [`Document::split_alternate`]).
    pub completion_perplexity: f64,
    /// Test documents scored.
    pub num_docs: usize,
    /// Test tokens scored by the bound.
    pub num_tokens: u64,
}

fn check_docs(docs: &[Document], topics: &Topics) -> Result<(), LdaError> {
    if docs.is_empty() {
        return Err(LdaError::Empty("no test documents"));
    }
    if let Some(d) = docs
        .iter()
        .find(|d| d.max_word() as usize >= topics.vocab_size())
    {
        return Err(LdaError::UnknownWord {
            word: d.max_word(),
            vocab_size: topics.vocab_size(),
        });
    }
    Ok(())
}

/// The per-word ELBO of `docs` under `topics` (Hoffman et al. 2010; gensim `LdaModel.bound`):
///
/// ```text
/// L = r * sum_d [ sum_w c_dw log sum_k exp(E[log theta_dk] + E[log beta_kw])
///               + sum_k (alpha - gamma_dk) E[log theta_dk] + sum_k (lnG(gamma_dk) - lnG(alpha))
///               + lnG(K alpha) - lnG(sum_k gamma_dk) ]
///   + sum_kw (eta - lambda_kw) E[log beta_kw] + sum_kw (lnG(lambda_kw) - lnG(eta))
///   + sum_k (lnG(V eta) - lnG(sum_w lambda_kw))
/// per-word bound = L / (r * sum_dw c_dw),   r = total_docs / |docs|
/// ```
///
/// `total_docs` is the size of the corpus the topics' prior term is shared with: Hoffman's
/// `onlineldavb.py` passes the training corpus size `D`; gensim's `log_perplexity` defaults to
/// `|docs|` (so `r = 1`). `gamma_d` is inferred with the same E-step as training.
///
/// # Errors
/// [`LdaError::Empty`] for no documents, [`LdaError::UnknownWord`] for a word id `>= V`,
/// [`LdaError::InvalidParameter`] for a `total_docs` that is not finite and positive.
pub fn perplexity_bound(
    topics: &Topics,
    cfg: &LdaConfig,
    docs: &[Document],
    total_docs: Option<f64>,
) -> Result<(f64, u64), LdaError> {
    check_docs(docs, topics)?;
    let ratio = match total_docs {
        None => 1.0,
        Some(t) if t > 0.0 && t.is_finite() => t / docs.len() as f64,
        Some(t) => {
            return Err(LdaError::InvalidParameter {
                name: "total_docs",
                value: t,
                reason: "must be finite and > 0",
            });
        }
    };
    let k = topics.num_topics();
    let v = topics.vocab_size();
    let expected = topics.expected();
    let alpha = cfg.alpha();
    let eta = cfg.eta();
    let ln_gamma_alpha = ln_gamma(alpha);
    let doc_part: f64 = docs
        .par_iter()
        .map_init(
            || (DocScratch::new(k), vec![0.0; k]),
            |(s, elog_theta), doc| -> Result<f64, LdaError> {
                infer_document(&expected, cfg, doc, s);
                let total: f64 = s.gamma.iter().sum();
                expfam::dirichlet_expectation_into(&s.gamma, elog_theta)?;
                // log sum_k exp(Elogtheta_k + Elogbeta_kw) = log Z_w.
                let mut score: f64 = doc
                    .counts()
                    .iter()
                    .zip(&s.phinorm)
                    .map(|(&c, &z)| f64::from(c) * f64::from(z).ln())
                    .sum();
                for (&g, &e) in s.gamma.iter().zip(elog_theta.iter()) {
                    score += (alpha - g) * e + ln_gamma(g) - ln_gamma_alpha;
                }
                score += ln_gamma(k as f64 * alpha) - ln_gamma(total);
                Ok(score)
            },
        )
        .collect::<Result<Vec<f64>, LdaError>>()?
        // Added in document order, whatever the number of threads.
        .iter()
        .sum();
    // -sum_k KL(q(beta_k) || Dir(eta)): `lambda` is word-major, i.e. the K x V matrix in
    // column-major order.
    let lambda = nalgebra::DMatrix::from_column_slice(k, v, topics.lambda());
    let topic_part: f64 = -expfam::dirichlet_kl_rows_to_symmetric(&lambda, eta)?.sum();
    let tokens: u64 = docs.iter().map(Document::len).sum();
    let bound = (doc_part * ratio + topic_part) / (ratio * tokens as f64);
    Ok((bound, tokens))
}

/// Document-completion perplexity: for each test document, `theta_d = gamma_d / sum gamma_d` is
/// inferred on the first half of its tokens and the second half is scored by
/// `log sum_k theta_dk E[beta_kw]`. Documents with a single token are skipped.
///
/// # Errors
/// As [`perplexity_bound`]; [`LdaError::Empty`] if no document has two tokens.
pub fn completion_perplexity(
    topics: &Topics,
    cfg: &LdaConfig,
    docs: &[Document],
) -> Result<f64, LdaError> {
    check_docs(docs, topics)?;
    let k = topics.num_topics();
    let expected = topics.expected();
    let sums = topics.topic_sums();
    let lambda = topics.lambda();
    let (log_lik, tokens) = docs
        .par_iter()
        .filter_map(|d| d.split_alternate())
        .map_init(
            || (DocScratch::new(k), vec![0.0; k]),
            |(s, theta), (observed, held_out)| {
                infer_document(&expected, cfg, &observed, s);
                let total: f64 = s.gamma.iter().sum();
                for ((t, &g), &sk) in theta.iter_mut().zip(&s.gamma).zip(&sums) {
                    *t = g / total / sk;
                }
                let ll: f64 = held_out
                    .words()
                    .iter()
                    .zip(held_out.counts())
                    .map(|(&w, &c)| {
                        let row = &lambda[w as usize * k..w as usize * k + k];
                        f64::from(c) * super::estep::dot(theta, row).ln()
                    })
                    .sum();
                (ll, held_out.len())
            },
        )
        .collect::<Vec<(f64, u64)>>()
        // Added in document order, whatever the number of threads.
        .iter()
        .fold((0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if tokens == 0 {
        return Err(LdaError::Empty("no test document has two tokens"));
    }
    Ok((-log_lik / tokens as f64).exp())
}

/// Both held-out scores (see [`perplexity_bound`] and [`completion_perplexity`]).
///
/// # Errors
/// As those functions.
pub fn evaluate(
    topics: &Topics,
    cfg: &LdaConfig,
    docs: &[Document],
    total_docs: Option<f64>,
) -> Result<HeldOut, LdaError> {
    let (per_word_bound, num_tokens) = perplexity_bound(topics, cfg, docs, total_docs)?;
    let completion = completion_perplexity(topics, cfg, docs)?;
    Ok(HeldOut {
        per_word_bound,
        perplexity_bound: (-per_word_bound).exp(),
        completion_perplexity: completion,
        num_docs: docs.len(),
        num_tokens,
    })
}
