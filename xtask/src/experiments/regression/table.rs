//! Aggregation over splits (mean and standard error) and the goals at epsilon = 1.

/// Mean and standard error of one cell over the splits that ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Summary {
    /// Mean over the splits.
    pub mean: f64,
    /// Standard error: sample standard deviation (n - 1) over sqrt(n); `None` for one split.
    pub se: Option<f64>,
    /// Number of splits.
    pub n: usize,
}

/// Summarises per-split values; `None` when there are none.
pub(crate) fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let se = (n > 1).then(|| {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (var / n as f64).sqrt()
    });
    Some(Summary { mean, se, n })
}

/// A number with about four significant figures (scientific beyond 1e4 or below 1e-3).
pub(crate) fn number(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e4).contains(&a) {
        format!("{v:.2e}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// `mean ± se`, with the number of splits when it is not `expected`; "—" when absent.
pub(crate) fn cell(s: Option<Summary>, expected: usize) -> String {
    let Some(s) = s else {
        return "—".into();
    };
    let mut text = match s.se {
        Some(se) => format!("{} ± {}", number(s.mean), number(se)),
        None => number(s.mean),
    };
    if s.n != expected {
        text.push_str(&format!(" (n = {})", s.n));
    }
    text
}

/// One goal of the issue, measured.
pub(crate) struct Goal {
    /// What is compared.
    pub what: String,
    /// The measured value (mean over splits), or why it is missing.
    pub measured: String,
    /// The bar.
    pub bar: String,
    /// Met / not met / not measured.
    pub verdict: &'static str,
}

/// "met" when `value <= bar`, "not met" otherwise; strict when `strict`.
pub(crate) fn verdict(value: f64, bar: f64, strict: bool) -> &'static str {
    let ok = if strict { value < bar } else { value <= bar };
    if ok { "met" } else { "not met" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_standard_error_over_splits() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.n, 4);
        assert!((s.mean - 2.5).abs() < 1e-12);
        // sample variance 5/3, se = sqrt(5/3 / 4)
        assert!((s.se.unwrap() - (5.0f64 / 12.0).sqrt()).abs() < 1e-12);
        let one = summarize(&[0.7]).unwrap();
        assert_eq!((one.mean, one.se, one.n), (0.7, None, 1));
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn cells_show_missing_splits_and_absent_values() {
        let s = summarize(&[0.2, 0.4]);
        assert_eq!(cell(s, 2), "0.3000 ± 0.1000");
        assert_eq!(cell(s, 5), "0.3000 ± 0.1000 (n = 2)");
        assert_eq!(cell(summarize(&[4.5]), 1), "4.500");
        assert_eq!(cell(None, 5), "—");
        assert_eq!(number(4.5e8), "4.50e8");
        assert_eq!(number(0.00236), "0.0024");
        assert_eq!(number(-2.846), "-2.846");
    }

    #[test]
    fn verdicts_follow_the_bar() {
        assert_eq!(verdict(0.14, 0.15, false), "met");
        assert_eq!(verdict(0.15, 0.15, false), "met");
        assert_eq!(verdict(0.15, 0.15, true), "not met");
        assert_eq!(verdict(0.2021, 0.201, true), "not met");
    }
}
