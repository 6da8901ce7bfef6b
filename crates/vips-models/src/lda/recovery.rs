//! Matching learned topics to true ones (for synthetic-data checks).

use serde::{Deserialize, Serialize};

/// A matching of learned to true topics by total-variation distance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopicMatch {
    /// `pairs[i] = (true topic, learned topic, TV distance)`, one per true topic.
    pub pairs: Vec<(usize, usize, f64)>,
    /// Mean TV distance over the pairs.
    pub mean_tv: f64,
    /// Largest TV distance over the pairs.
    pub max_tv: f64,
}

fn tv(a: &[f64], b: &[f64]) -> f64 {
    0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>()
}

/// Matches each true topic to a distinct learned topic, greedily by smallest total-variation
/// distance `TV(p, q) = 1/2 sum_v |p_v - q_v|` (topic-major rows of `V` probabilities).
///
/// Returns `None` if the shapes disagree or there are more true than learned topics.
///
/// # Example
/// ```
/// use vips_models::lda::match_topics;
/// let truth = [1.0, 0.0, 0.0, 1.0];
/// let learned = [0.0, 1.0, 0.9, 0.1];
/// let m = match_topics(&truth, &learned, 2).unwrap();
/// assert_eq!(m.pairs[0].1, 1);
/// assert!((m.mean_tv - 0.05).abs() < 1e-12);
/// ```
pub fn match_topics(truth: &[f64], learned: &[f64], vocab_size: usize) -> Option<TopicMatch> {
    if vocab_size == 0
        || !truth.len().is_multiple_of(vocab_size)
        || !learned.len().is_multiple_of(vocab_size)
    {
        return None;
    }
    let kt = truth.len() / vocab_size;
    let kl = learned.len() / vocab_size;
    if kt == 0 || kt > kl {
        return None;
    }
    let mut dist: Vec<(f64, usize, usize)> = Vec::with_capacity(kt * kl);
    for (i, t) in truth.chunks_exact(vocab_size).enumerate() {
        for (j, l) in learned.chunks_exact(vocab_size).enumerate() {
            dist.push((tv(t, l), i, j));
        }
    }
    dist.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut used_t = vec![false; kt];
    let mut used_l = vec![false; kl];
    let mut pairs = Vec::with_capacity(kt);
    for (d, i, j) in dist {
        if !used_t[i] && !used_l[j] {
            used_t[i] = true;
            used_l[j] = true;
            pairs.push((i, j, d));
        }
    }
    pairs.sort_by_key(|p| p.0);
    let mean_tv = pairs.iter().map(|p| p.2).sum::<f64>() / kt as f64;
    let max_tv = pairs.iter().map(|p| p.2).fold(0.0, f64::max);
    Some(TopicMatch {
        pairs,
        mean_tv,
        max_tv,
    })
}
