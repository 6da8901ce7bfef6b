//! LDA perplexity against epsilon (003 Sec. 4, Fig. 3): the held-out per-word perplexity bound
//! and document-completion perplexity of private LDA at several budgets, next to non-private LDA.
//!
//! Every fit calls `vips_models::engine::fit` in-process on the corpus prepared by
//! `vips_models::lda::corpus::Preparation` (the `lda` example's and `dp-bayes fit lda`'s
//! preparation) with the example's settings; the report lists the equivalent example command
//! lines. A renamed output key cannot become NaN here: every number is a field of a library type.

use serde_json::json;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::lda::corpus::{Corpus, Document, Preparation, SyntheticConfig, load_uci_dir};
use vips_models::lda::evaluate;

use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, command_list, epsilon_label, markdown_table};

const SEED: u64 = 1;
/// Training documents of the news corpus as published (the `D` line of `docword.train.txt.gz`).
const NEWS_TRAIN_DOCS: usize = 3441;
/// Quick mode's synthetic corpus: training documents (10% more are drawn as the test set, as the
/// example's `--synthetic` does), vocabulary, tokens per document (also the fixed length).
const QUICK_DOCS: usize = 2000;
const QUICK_VOCAB: usize = 300;
const QUICK_LENGTH: usize = 100;
const DELTA: f64 = 1e-5;
const TAU0: f64 = 1024.0;
const KAPPA: f64 = 0.7;

/// The corpus and the settings that differ between the news corpus and the synthetic one.
struct Setting {
    train: Corpus,
    test: Vec<Document>,
    /// The public population (the published size, or the generator's configured size).
    population: usize,
    topics: usize,
    batch_size: f64,
    passes: f64,
    /// `--doc-length`: `None` for the default (500 private, none non-private).
    doc_length: Option<usize>,
    /// The example's flags for this corpus (the command lines the report lists).
    args: Vec<String>,
}

fn setting(news: Option<&std::path::Path>) -> anyhow::Result<Setting> {
    Ok(match news {
        Some(dir) => {
            let s = load_uci_dir(dir)?;
            Setting {
                train: s.train,
                test: s.test.into_docs(),
                // The public population: the published corpus's training size (the header of
                // docword.train, 3,441 documents), declared as a public figure.
                population: NEWS_TRAIN_DOCS,
                topics: 50,
                batch_size: 256.0,
                passes: 1.0,
                doc_length: None,
                args: vec![
                    "--corpus".into(),
                    dir.display().to_string(),
                    "--topics".into(),
                    "50".into(),
                    "--batch-size".into(),
                    "256".into(),
                    "--population".into(),
                    NEWS_TRAIN_DOCS.to_string(),
                ],
            }
        }
        None => {
            // The example's `--synthetic` corpus: drawn with seed `--seed + 1`, the first
            // QUICK_DOCS documents train, the rest (10% more) are the test set.
            let topics = 10;
            let cfg = SyntheticConfig::builder()
                .num_docs(QUICK_DOCS + QUICK_DOCS.div_ceil(10))
                .vocab_size(QUICK_VOCAB)
                .num_topics(topics)
                .doc_length(QUICK_LENGTH)
                .seed(SEED + 1)
                .build()?;
            let generated = cfg.generate()?;
            let v = generated.corpus.vocab_size();
            let mut docs = generated.corpus.into_docs();
            let test = docs.split_off(QUICK_DOCS);
            Setting {
                train: Corpus::new(docs, v)?,
                test,
                population: QUICK_DOCS,
                topics,
                batch_size: 400.0,
                passes: 1.0,
                doc_length: Some(QUICK_LENGTH),
                args: [
                    "--synthetic",
                    "--synthetic-docs",
                    &QUICK_DOCS.to_string(),
                    "--synthetic-vocab",
                    &QUICK_VOCAB.to_string(),
                    "--synthetic-length",
                    &QUICK_LENGTH.to_string(),
                    "--doc-length",
                    &QUICK_LENGTH.to_string(),
                    "--topics",
                    &topics.to_string(),
                    "--batch-size",
                    "400",
                    "--passes",
                    "1",
                ]
                .map(String::from)
                .to_vec(),
            }
        }
    })
}

/// The library's corpus preparation for this setting, with the public resampling seed [`SEED`]
/// wherever documents are resampled, so that a rerun redraws the same numbers (the guarantee
/// holds for every key value, see `resample_document`).
fn preparation(s: &Setting, private: bool) -> Preparation {
    let mut p = Preparation {
        doc_length: s.doc_length,
        ..Preparation::default()
    };
    if p.doc_length(private).is_some() {
        p.resample_seed = Some(SEED);
    }
    p
}

/// What one fit gives the report.
struct Outcome {
    /// Spent epsilon (`None` for a non-private fit).
    epsilon: Option<f64>,
    perplexity_bound: f64,
    completion_perplexity: f64,
    /// Non-private diagnostics.
    clipped_fraction: f64,
    docs_per_second: Option<f64>,
    noise_multiplier: Option<f64>,
    iterations: u64,
}

/// One fit as the `lda` example runs it with `--noise-seed SEED`, and `--resample-seed SEED`
/// wherever there is a fixed document length: the library's preparation, Poisson batches of the
/// expected size, Robbins-Monro steps, the default accountant, batches (and noise, when private)
/// seeded on purpose, scored on the test documents (bound with `r = 1`, as the example's
/// `perplexity_bound`).
fn fit_one(s: &Setting, eps: Option<f64>) -> anyhow::Result<Outcome> {
    let private = eps.is_some();
    let preparation = preparation(s, private);
    let prepared = preparation.prepare(s.topics, &s.train, private)?;
    let cfg = prepared.model.config().clone();
    let privacy = match eps {
        Some(epsilon) => Privacy::Target {
            epsilon,
            delta: DELTA,
        },
        None => Privacy::NonPrivate,
    };
    let svi = SviConfig::builder()
        .expected_batch_size(s.batch_size)
        .step(StepSize::robbins_monro(TAU0, KAPPA)?)
        .stop(Stop::Passes { passes: s.passes })
        .privacy(privacy)
        .noise_seed(Some(SEED))
        .init_seed(SEED)
        .population(Some(s.population))
        .build()?;
    let fitted = fit(&prepared.model, prepared.records, &svi, |_, _| {})?;
    let (result, diagnostics) = (fitted.result, fitted.diagnostics);
    let held = evaluate(&result.global, &cfg, &s.test, None)?;
    Ok(Outcome {
        epsilon: result.privacy.epsilon,
        perplexity_bound: held.perplexity_bound,
        completion_perplexity: held.completion_perplexity,
        clipped_fraction: diagnostics.clipped_fraction(),
        docs_per_second: diagnostics.records_per_second(),
        noise_multiplier: result.privacy.noise_multiplier,
        iterations: result.iterations,
    })
}

/// Runs LDA over the epsilon grid (synthetic corpus in quick mode; news when present otherwise).
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let news = if ctx.quick {
        None
    } else {
        ctx.data_set("news")
    };
    let s = setting(news.as_deref())?;
    let mut base = s.args.clone();
    base.extend(
        [
            "--tau0",
            &TAU0.to_string(),
            "--kappa",
            &KAPPA.to_string(),
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
    let mut nonprivate = None;
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
            ]);
        }
        // The seed drives the Poisson batches too, so the non-private run gets it as well
        // (reproducible batches; no run here takes the whole population at once).
        args.extend(["--noise-seed".into(), SEED.to_string()]);
        if let Some(seed) = preparation(&s, eps.is_some()).resample_seed {
            args.extend(["--resample-seed".into(), seed.to_string()]);
        }
        args.push("--diagnostics".into());
        let o = fit_one(&s, eps)?;
        let (bound, completion) = (o.perplexity_bound, o.completion_perplexity);
        match eps {
            Some(e) => {
                bound_pts.push((e, bound));
                completion_pts.push((e, completion));
            }
            None => nonprivate = Some((bound, completion)),
        }
        rows.push(vec![
            epsilon_label(eps),
            format!("{:.4}", o.epsilon.unwrap_or(f64::INFINITY)),
            format!("{bound:.1}"),
            format!("{completion:.1}"),
            format!("{:.3}", o.clipped_fraction),
            o.docs_per_second
                .map_or_else(|| "not measured".into(), |r| format!("{r:.0}")),
        ]);
        commands.push(format!(
            "cargo run --release -p vips-models --example lda -- {} --json",
            args.join(" ")
        ));
        runs.push(json!({
            "target_epsilon": eps,
            "epsilon": o.epsilon,
            "noise_multiplier": o.noise_multiplier,
            "iterations": o.iterations,
            "perplexity_bound": bound,
            "completion_perplexity": completion,
            "diagnostics": {
                "private": false,
                "clipped_fraction": o.clipped_fraction,
                "docs_per_second": o.docs_per_second,
            },
        }));
    }
    let (np_bound, np_completion) =
        nonprivate.ok_or_else(|| anyhow::anyhow!("the grid has no non-private run"))?;
    let max_eps = 4.0;
    let series = vec![
        Series::new("perplexity bound (private)", bound_pts),
        Series::new("completion perplexity (private)", completion_pts),
        Series::new(
            "perplexity bound (non-private)",
            vec![(0.5, np_bound), (max_eps, np_bound)],
        ),
        Series::new(
            "completion perplexity (non-private)",
            vec![(0.5, np_completion), (max_eps, np_completion)],
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
        if ctx.quick {
            "cargo xtask bench --quick --only lda --no-criterion"
        } else {
            "cargo xtask bench --only lda --no-criterion"
        },
    );
    section.seed = format!("{SEED} (data, init, resampling and noise)");
    section.data = match &news {
        Some(dir) => format!("news bag-of-words at {}", dir.display()),
        None => "synthetic corpus from the LDA generative model (2,000 train docs, V = 300, 10 topics, 100 tokens, one pass)".into(),
    };
    section.body = format!(
        "{}\n\nEach fit calls `vips_models::engine::fit` in-process on the corpus prepared by \
         `vips_models::lda::corpus::Preparation`, with the `lda` example's settings; the \
         equivalent example command lines, one per row:\n\n{}\n",
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
