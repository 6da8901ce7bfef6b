//! The section's text and plots: tables per epsilon, the goals, the methods and the provenance.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::cache::Cache;
use super::data::Diffprivlib;
use super::methods::{DataSet, Method, relative};
use super::table::{self, Goal, Summary, cell, summarize, verdict};
use super::{DATASETS, DELTA, DIFFPRIVLIB_JSON, EPSILONS, LINREG_GOAL_SEEDS, MINIBATCH, Run, SEED};
use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::markdown_table;

/// Summary of `method` on `dataset` at `eps` (non-private methods ignore `eps`).
pub(super) fn summary(
    runs: &[Run],
    dataset: &str,
    method: Method,
    eps: f64,
    ll: bool,
) -> Option<Summary> {
    let values: Vec<f64> = runs
        .iter()
        .filter(|r| r.dataset == dataset && r.method == method && r.canonical())
        .filter(|r| r.eps.is_none_or(|e| e == eps))
        .filter_map(|r| if ll { r.ll } else { Some(r.rmse) })
        .collect();
    summarize(&values)
}

/// RMSE of `method` on `dataset` at `eps` over every noise seed run: the mean over splits of
/// each split's mean over its seeds (standard error over the splits), and the fewest seeds a
/// split had; `None` when nothing ran.
fn over_seeds(runs: &[Run], dataset: &str, method: Method, eps: f64) -> Option<(Summary, usize)> {
    let mut per_split: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for r in runs
        .iter()
        .filter(|r| r.dataset == dataset && r.method == method && r.eps == Some(eps))
    {
        per_split.entry(r.split).or_default().push(r.rmse);
    }
    let fewest = per_split.values().map(Vec::len).min()?;
    let means: Vec<f64> = per_split
        .values()
        .map(|v| v.iter().sum::<f64>() / v.len() as f64)
        .collect();
    summarize(&means).map(|s| (s, fewest))
}

/// The goals at epsilon = 1.
pub(super) fn goals(sets: &[DataSet], runs: &[Run]) -> Vec<Goal> {
    let at1 = |name: &str, m: Method| summary(runs, name, m, 1.0, false).map(|s| s.mean);
    let mut out = Vec::new();
    let no = |what: String, bar: String| Goal {
        what,
        measured: "not measured".into(),
        bar,
        verdict: "not measured",
    };
    for d in sets
        .iter()
        .filter(|d| d.train_rows.first().is_some_and(|&n| n >= 5000))
    {
        let what = format!(
            "{}: minibatch DP-SEP RMSE <= private linreg RMSE (N = {})",
            d.label, d.train_rows[0]
        );
        match (
            at1(&d.name, Method::MinibatchDpSep),
            at1(&d.name, Method::LinregPrivate),
        ) {
            (Some(m), Some(l)) => out.push(Goal {
                what,
                measured: table::number(m),
                bar: format!("<= {}", table::number(l)),
                verdict: verdict(m, l, false),
            }),
            _ => out.push(no(what, "<= private linreg".into())),
        }
    }
    let bars = [
        ("kin8nm", Method::MinibatchDpSep, 0.15, false),
        ("wine-quality-red", Method::LinregPrivate, 0.757, true),
        ("kin8nm", Method::LinregPrivate, 0.201, true),
        ("power-plant", Method::LinregPrivate, 4.79, true),
    ];
    for (name, method, bar, strict) in bars {
        let label = DATASETS.iter().find(|d| d.0 == name).map_or(name, |d| d.1);
        let what = format!("{label}: {} RMSE", method.label());
        let bar_text = format!("{} {bar}", if strict { "<" } else { "<=" });
        // The private-linreg bars are judged on the mean over every noise seed run (one
        // release each: cheap), the single-seed table cell shown beside it.
        let seeds = (method == Method::LinregPrivate)
            .then(|| over_seeds(runs, name, method, 1.0))
            .flatten()
            .filter(|(_, k)| *k > 1);
        match (at1(name, method), seeds) {
            (Some(v), Some((s, k))) => out.push(Goal {
                what,
                measured: format!(
                    "{} ± {} ({} splits x {k} noise seeds; noise seed = split: {})",
                    table::number(s.mean),
                    s.se.map_or("-".into(), table::number),
                    s.n,
                    table::number(v)
                ),
                bar: bar_text,
                verdict: verdict(s.mean, bar, strict),
            }),
            (Some(v), None) => out.push(Goal {
                what,
                measured: table::number(v),
                bar: bar_text,
                verdict: verdict(v, bar, strict),
            }),
            (None, _) => out.push(no(what, bar_text)),
        }
    }
    out
}

/// Per epsilon, a table of test RMSE and one of test log-likelihood (data set x method), then
/// the goals table.
pub(super) fn tables(body: &mut String, sets: &[DataSet], runs: &[Run]) {
    for eps in EPSILONS {
        for (ll, what) in [(false, "test RMSE"), (true, "test log-likelihood")] {
            let header: Vec<&str> = std::iter::once("data set")
                .chain(Method::ALL.iter().map(|m| m.label()))
                .collect();
            let rows: Vec<Vec<String>> = sets
                .iter()
                .map(|d| {
                    std::iter::once(format!("{} ({} splits)", d.label, d.splits))
                        .chain(
                            Method::ALL
                                .iter()
                                .map(|&m| cell(summary(runs, &d.name, m, eps, ll), d.splits)),
                        )
                        .collect()
                })
                .collect();
            let _ = writeln!(
                body,
                "\n### epsilon = {eps}: {what} (mean ± s.e. over splits; non-private columns repeat)\n\n{}",
                markdown_table(&header, &rows)
            );
        }
    }
    let goal_rows: Vec<Vec<String>> = goals(sets, runs)
        .into_iter()
        .map(|g| vec![g.what, g.measured, g.bar, g.verdict.into()])
        .collect();
    let _ = writeln!(
        body,
        "\n### Goals at epsilon = 1 (issue 19; mean over the splits run)\n\n{}",
        markdown_table(&["goal", "measured", "bar", "verdict"], &goal_rows)
    );
}

/// 002 Tables 2-3 as printed (mean ± std over 10 runs), columns VI, EP, SEP, SEP clipped,
/// DP-SEP (eps = 1, delta = 1e-5): (data set folder, RMSE, test log-likelihood). Year is not in
/// ../shared/data.
/// One printed row: data set folder, then `mean ± std` as printed per column, RMSE and LL.
type PrintedRow = (&'static str, [&'static str; 5], [&'static str; 5]);

const PAPER_002: [PrintedRow; 5] = [
    (
        "naval-propulsion-plant",
        [
            "0.005 ± 0.0005",
            "0.003 ± 0.0002",
            "0.002 ± 0.0001",
            "0.002 ± 0.0002",
            "0.002 ± 0.0003",
        ],
        [
            "3.734 ± 0.116",
            "4.164 ± 0.0556",
            "4.609 ± 0.0531",
            "4.710 ± 0.0746",
            "4.686 ± 0.1053",
        ],
    ),
    (
        "kin8nm",
        [
            "0.099 ± 0.0009",
            "0.088 ± 0.0044",
            "0.089 ± 0.0042",
            "0.078 ± 0.0033",
            "0.078 ± 0.0022",
        ],
        [
            "0.897 ± 0.010",
            "1.007 ± 0.0486",
            "0.999 ± 0.0479",
            "1.121 ± 0.0332",
            "1.125 ± 0.0212",
        ],
    ),
    (
        "power-plant",
        [
            "4.327 ± 0.0352",
            "4.098 ± 0.1388",
            "4.061 ± 0.1356",
            "4.013 ± 0.1246",
            "4.032 ± 0.1385",
        ],
        [
            "-2.890 ± 0.010",
            "-2.830 ± 0.0313",
            "-2.821 ± 0.0316",
            "-2.809 ± 0.0293",
            "-2.814 ± 0.0323",
        ],
    ),
    (
        "wine-quality-red",
        [
            "0.646 ± 0.0081",
            "0.614 ± 0.0382",
            "0.623 ± 0.0436",
            "0.627 ± 0.0411",
            "0.627 ± 0.0362",
        ],
        [
            "-0.980 ± 0.013",
            "-0.926 ± 0.0487",
            "-0.936 ± 0.0643",
            "-0.938 ± 0.0581",
            "-0.938 ± 0.0486",
        ],
    ),
    (
        "protein-tertiary-structure",
        [
            "4.842 ± 0.0305",
            "4.654 ± 0.0572",
            "4.602 ± 0.0649",
            "4.581 ± 0.0599",
            "4.585 ± 0.0589",
        ],
        [
            "-2.992 ± 0.006",
            "-2.957 ± 0.0121",
            "-2.945 ± 0.0139",
            "-2.941 ± 0.0128",
            "-2.941 ± 0.0130",
        ],
    ),
];

/// Our methods in 002's column order (DP-SEP at eps = 1).
const PAPER_COLUMNS: [(Method, &str); 5] = [
    (Method::Vi, "VI"),
    (Method::Ep, "EP"),
    (Method::Pbp, "SEP"),
    (Method::ClippedSep, "SEP clipped"),
    (Method::DpSep, "DP-SEP, eps 1"),
];

/// `mean ± std` over the splits (the spread 002 prints), "—" when absent.
fn with_std(s: Option<Summary>) -> String {
    match s {
        None => "—".into(),
        Some(s) => match s.se.map(|se| se * (s.n as f64).sqrt()) {
            Some(sd) => format!("{} ± {}", table::number(s.mean), table::number(sd)),
            None => table::number(s.mean),
        },
    }
}

/// 002 Tables 2-3 with our numbers beside the printed ones (the data sets both have).
pub(super) fn paper_tables(body: &mut String, sets: &[DataSet], runs: &[Run]) {
    for (ll, what, table_no) in [(false, "test RMSE", 2), (true, "test log-likelihood", 3)] {
        let mut header = vec!["data set".to_string()];
        for (_, col) in PAPER_COLUMNS {
            header.push(format!("{col}: ours"));
            header.push(format!("{col}: 002"));
        }
        let rows: Vec<Vec<String>> = PAPER_002
            .iter()
            .filter_map(|(name, rmse, lls)| {
                let d = sets.iter().find(|d| d.name == *name)?;
                let printed = if ll { lls } else { rmse };
                let mut row = vec![format!("{} ({} splits)", d.label, d.splits)];
                for ((m, _), cell) in PAPER_COLUMNS.iter().zip(printed) {
                    row.push(with_std(summary(runs, &d.name, *m, 1.0, ll)));
                    row.push((*cell).to_string());
                }
                Some(row)
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let _ = writeln!(
            body,
            "\n### 002 Table {table_no} ({what}) beside ours (mean ± std over splits; 002: 10 runs)\n\n{}",
            markdown_table(&header, &rows)
        );
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn intro(
    body: &mut String,
    ctx: &Context,
    sets: &[DataSet],
    notes: &[String],
    cache_path: &Path,
    cached_before: usize,
    cache: &Cache,
    commit: &str,
    provenance: &BTreeMap<String, usize>,
    started_load: &str,
    dpl: Option<&Diffprivlib>,
) {
    let pbp = "cargo run --release -q -p dp-sep --example pbp -- --uci <dir> --split <k> [--ranges crates/dp-sep/ranges/<set>.json]";
    let linreg = "cargo run --release -q -p vips-models --example linreg -- --uci <dir> --split <k> [--ranges ...]";
    let private = format!(
        "--epsilon <eps> --delta {DELTA} --noise-seed <k> --population <training rows of split k>"
    );
    let _ = writeln!(
        body,
        "Invocation at commit {commit}; {} cores; runs cached in `{}` ({} stored before this invocation, {} now{}).\n",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        relative(&ctx.root, cache_path).display(),
        cached_before,
        cache.len(),
        if cache.skipped_lines > 0 {
            format!(", {} unreadable lines skipped", cache.skipped_lines)
        } else {
            String::new()
        }
    );
    let made_at: Vec<String> = provenance
        .iter()
        .map(|(c, n)| format!("`{c}`: {n}"))
        .collect();
    let _ = writeln!(
        body,
        "Cells in the table, by the commit they were computed at (before issue 20 by the example binaries, since then in xtask's process by the functions the examples call): {}.\n",
        if made_at.is_empty() {
            "none".into()
        } else {
            made_at.join("; ")
        }
    );
    let _ = writeln!(
        body,
        "Methods (each cell's key in the cache file is the example command line that gives its numbers; xtask computes it in process with `dp_sep::pbp::uci::run_uci_pbp` or `vips_models::linreg::fit_mapped`, the functions the `pbp` and `linreg` examples call):\n"
    );
    let _ = writeln!(
        body,
        "- mean predictor: the split's training mean (RMSE) and a Gaussian with the training mean and standard deviation (log-likelihood); computed by xtask, non-private;"
    );
    let _ = writeln!(
        body,
        "- PBP (SEP): `{pbp} --seed {SEED} --json` (non-private; the folder's epochs and hidden units; scaled by the declared ranges when the set has a ranges file, else by the training mean and std, the published protocol);"
    );
    let _ = writeln!(
        body,
        "- PBP (EP): the same with `--method ep` (non-private EP with one factor per training record, no damping, `dp_sep::ep::run_ep`; same network, epochs and scaling as PBP (SEP));"
    );
    let _ = writeln!(
        body,
        "- VI: `dp_sep::pbp::vi::run_vi` called by xtask (non-private mean-field Gaussian VI of the same network, Bayes-by-backprop gradients with Adam, the folder's epochs and hidden units, minibatches of 32, learning rate 0.01, 100 predictive draws, seed {SEED}; same scaling as PBP (SEP); the cache key names every setting);"
    );
    let _ = writeln!(
        body,
        "- clipped SEP: the same with `--clip 1` (non-private);"
    );
    let _ = writeln!(
        body,
        "- DP-SEP (002): `... --clip 1 {private} --one-record` (one record per step: gamma = 1, uniform draws);"
    );
    let _ = writeln!(
        body,
        "- minibatch DP-SEP: `... {private}{}{} [--clipping innovation|whitened]` (the example's private defaults: Poisson batches with the recommended batch size, damping and clip, chosen on synthetic data; from 1,200 training rows whitened clipping with the clip from the budget, below innovation clipping under epsilon 2 and value clipping from 2; the clipping is spelled out in the key when it is not value; see docs/dp-sep.md);",
        if MINIBATCH.is_empty() { "" } else { " " },
        MINIBATCH.join(" ")
    );
    let _ = writeln!(
        body,
        "- linreg, private / non-private: `{linreg} [{private} --accountant pld] --radius released --json` (PLD, linreg's default accountant since session 9; the radius released privately with 5% of the budget before the one release of the statistics, the default since session 15 and spelled out in the key; cells computed before either are kept in the cache under their own keys; the three private-linreg goals at epsilon 1 also run noise seeds 0-{} on every split and are judged on their mean);",
        LINREG_GOAL_SEEDS - 1
    );
    match dpl {
        Some(d) => {
            let _ = writeln!(
                body,
                "- diffprivlib `LinearRegression` (pure eps-DP, delta = 0; raw inputs, bounds = the same declared ranges; `random_state` = split): read from the committed `{}`, produced by {}; no log-likelihood.\n",
                d.path,
                d.provenance()
            );
        }
        None => {
            let _ = writeln!(
                body,
                "- diffprivlib: not run in quick mode (its figures are read from the committed `{DIFFPRIVLIB_JSON}` in full mode only).\n"
            );
        }
    }
    let _ = writeln!(
        body,
        "Private runs declare `--population` = the split's training rows: the split files are part of the benchmark's published protocol, so that count is public. Data sets: {}.",
        sets.iter()
            .map(|d| format!(
                "{} (N = {})",
                d.label,
                d.train_rows.first().copied().unwrap_or(0)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for n in notes {
        let _ = writeln!(body, "\n- {n}");
    }
    let _ = writeln!(
        body,
        "\nLoad when this invocation started: `{started_load}`."
    );
}

/// RMSE against epsilon for `d`: private methods as curves, non-private ones as flat lines.
pub(super) fn plot(ctx: &Context, d: &DataSet, runs: &[Run]) -> anyhow::Result<Option<String>> {
    let series: Vec<Series> = Method::ALL
        .iter()
        .filter_map(|&m| {
            let points: Vec<(f64, f64)> = EPSILONS
                .iter()
                .filter_map(|&e| summary(runs, &d.name, m, e, false).map(|s| (e, s.mean)))
                .collect();
            (!points.is_empty()).then(|| Series::new(m.label(), points))
        })
        .collect();
    if series.is_empty() {
        return Ok(None);
    }
    let file = format!("regression_rmse_{}.svg", d.name);
    let title = format!("{}: test RMSE against epsilon (delta = 1e-5)", d.label);
    line_plot(
        &ctx.output(&file),
        &LinePlot {
            title: &title,
            x_label: "epsilon",
            y_label: "test RMSE (mean over splits)",
            x_scale: Scale::Log,
            y_scale: Scale::Log,
        },
        &series,
    )?;
    Ok(Some(file))
}
