//! LDA perplexity against epsilon (003 Sec. 4, Fig. 3): the held-out per-word perplexity bound
//! and document-completion perplexity of private LDA at several budgets, next to non-private LDA.

use serde_json::json;

use crate::context::Context;
use crate::example_runner::{number, run_example};
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, command_list, epsilon_label, markdown_table};

const SEED: u64 = 1;
/// Training documents of the news corpus as published (the `D` line of `docword.train.txt.gz`).
const NEWS_TRAIN_DOCS: usize = 3441;

/// Runs LDA over the epsilon grid (synthetic corpus in quick mode; news when present otherwise).
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let news = if ctx.quick {
        None
    } else {
        ctx.data_set("news")
    };
    let mut base: Vec<String> = match &news {
        Some(dir) => vec![
            "--corpus".into(),
            dir.display().to_string(),
            "--topics".into(),
            "50".into(),
            "--batch-size".into(),
            "256".into(),
            // The public population: the published corpus's training size (the header of
            // docword.train, 3,441 documents), declared as a public figure.
            "--population".into(),
            NEWS_TRAIN_DOCS.to_string(),
        ],
        None => [
            "--synthetic",
            "--synthetic-docs",
            "2000",
            "--synthetic-vocab",
            "300",
            "--synthetic-length",
            "100",
            "--doc-length",
            "100",
            "--topics",
            "10",
            "--batch-size",
            "400",
            "--passes",
            "1",
        ]
        .map(String::from)
        .to_vec(),
    };
    base.extend(
        [
            "--tau0",
            "1024",
            "--kappa",
            "0.7",
            "--seed",
            &SEED.to_string(),
        ]
        .map(String::from),
    );
    let epsilons: [Option<f64>; 5] = [Some(0.5), Some(1.0), Some(2.0), Some(4.0), None];
    let mut rows = Vec::new();
    let mut runs = Vec::new();
    let mut bound_pts = Vec::new();
    let mut completion_pts = Vec::new();
    let mut nonprivate = (f64::NAN, f64::NAN);
    let mut commands = Vec::new();
    for eps in epsilons {
        let mut args = base.clone();
        if let Some(e) = eps {
            if news.is_some() {
                // The news corpus's vocab.txt is published with it, independently of any one
                // private run: declared public.
                args.push("--vocab-public".into());
            }
            args.extend([
                "--epsilon".into(),
                e.to_string(),
                "--delta".into(),
                "1e-5".into(),
                "--noise-seed".into(),
                SEED.to_string(),
            ]);
        }
        args.push("--diagnostics".into());
        let run = run_example(ctx, "vips-models", "lda", &args)?;
        let o = &run.output;
        let (bound, completion) = (
            number(o, "perplexity_bound")?,
            number(o, "completion_perplexity")?,
        );
        match eps {
            Some(e) => {
                bound_pts.push((e, bound));
                completion_pts.push((e, completion));
            }
            None => nonprivate = (bound, completion),
        }
        rows.push(vec![
            epsilon_label(eps),
            format!("{:.4}", number(o, "epsilon")?),
            format!("{bound:.1}"),
            format!("{completion:.1}"),
            format!("{:.3}", number(o, "diagnostics.clipped_fraction")?),
            format!("{:.0}", number(o, "diagnostics.docs_per_second")?),
        ]);
        commands.push(run.command);
        runs.push(o.clone());
    }
    let max_eps = 4.0;
    let series = vec![
        Series::new("perplexity bound (private)", bound_pts),
        Series::new("completion perplexity (private)", completion_pts),
        Series::new(
            "perplexity bound (non-private)",
            vec![(0.5, nonprivate.0), (max_eps, nonprivate.0)],
        ),
        Series::new(
            "completion perplexity (non-private)",
            vec![(0.5, nonprivate.1), (max_eps, nonprivate.1)],
        ),
    ];
    let plot_file = "lda_perplexity_vs_epsilon.svg";
    line_plot(
        &ctx.output(plot_file),
        &LinePlot {
            title: "private LDA: held-out perplexity against epsilon (delta = 1e-5)",
            x_label: "epsilon",
            y_label: "perplexity",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        },
        &series,
    )?;
    let mut section = Section::new(
        "lda",
        "Private LDA: perplexity against epsilon (003 Sec. 4)",
        commands.first().map_or("", String::as_str),
    );
    section.seed = format!("{SEED} (data, init and noise)");
    section.data = match &news {
        Some(dir) => format!("news bag-of-words at {}", dir.display()),
        None => "synthetic corpus from the LDA generative model (2,000 train docs, V = 300, 10 topics, 100 tokens, one pass)".into(),
    };
    section.body = format!(
        "{}\n\nCommands, one per row:\n\n{}\n",
        markdown_table(
            &[
                "target eps",
                "spent eps",
                "perplexity bound",
                "completion perplexity",
                "clipped fraction (diagnostic)",
                "docs/s (diagnostic)"
            ],
            &rows
        ),
        command_list(&commands)
    );
    section.figures = json!({"runs": runs});
    section.plots.push(plot_file.into());
    Ok(section)
}
