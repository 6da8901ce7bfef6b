//! LDA over a corpus larger than memory: write a synthetic corpus into a record store
//! (streaming), then fit privately reading only the sampled documents from disk; or fit the same
//! store's documents held in memory, for the side-by-side throughput.
//!
//! ```text
//! # 10 million documents, V = 10,000, K = 50, 200 tokens each (about 10 GB on disk)
//! cargo run --release -p vips-models --example lda_store -- generate --out /tmp/lda10m.store \
//!     --docs 10000000 --vocab 10000 --topics 50 --length 200
//! # a private fit from the store (peak memory: /usr/bin/time -v)
//! cargo run --release -p vips-models --example lda_store -- fit --store /tmp/lda10m.store \
//!     --population 10000000 --topics 50 --length 200 --batch 20000 --iterations 20 --epsilon 1
//! # the same fit with the documents loaded into memory first (a store that fits in memory)
//! cargo run --release -p vips-models --example lda_store -- fit --store /tmp/lda400k.store \
//!     --population 400000 --topics 50 --length 200 --batch 20000 --iterations 20 --epsilon 1 --in-memory
//! ```
//! `fit` prints one JSON line: the private result's public facts (epsilon spent, iterations)
//! and, marked `"private": false`, the diagnostics: documents processed, the fit loop's
//! seconds and documents per second (E-step, release and M-step; for `--in-memory` the load
//! and the resampling before the loop are timed apart), and the process's peak resident memory
//! (`VmHWM`, Linux). The population is the declared public `N` (`--population`), never the
//! store's count.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use serde_json::json;
use vips_models::engine::{Privacy, Stop, SviConfig, fit, fit_source, process_peak_rss_kib};
use vips_models::lda::corpus::{Corpus, ResamplingKey, SyntheticConfig};
use vips_models::lda::{Lda, LdaConfig};
use vips_models::store::{RecordStore, decode_document, write_synthetic};

#[derive(Parser, Debug)]
#[command(about = "LDA over a record store on disk (issue 21)")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Draw a synthetic LDA corpus straight into a store.
    Generate {
        /// The store to write.
        #[arg(long)]
        out: PathBuf,
        /// Documents.
        #[arg(long)]
        docs: usize,
        /// Vocabulary size V.
        #[arg(long, default_value_t = 10_000)]
        vocab: usize,
        /// True topics.
        #[arg(long, default_value_t = 50)]
        topics: usize,
        /// Tokens per document.
        #[arg(long, default_value_t = 200)]
        length: usize,
        /// Generator seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Fit LDA (private unless --epsilon is omitted) from a store.
    Fit {
        /// The store to read.
        #[arg(long)]
        store: PathBuf,
        /// The declared public number of documents N.
        #[arg(long)]
        population: usize,
        /// Topics K.
        #[arg(long, default_value_t = 50)]
        topics: usize,
        /// Fixed document length (resampling; the clipping bound is a x length).
        #[arg(long, default_value_t = 200)]
        length: usize,
        /// Expected batch size S (Poisson rate S / N).
        #[arg(long, default_value_t = 20_000.0)]
        batch: f64,
        /// Iterations.
        #[arg(long, default_value_t = 20)]
        iterations: u64,
        /// Total epsilon (omit: non-private).
        #[arg(long)]
        epsilon: Option<f64>,
        /// Noise and sampling seed (reproducible: no privacy against its holder).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Load every document into memory first (the in-memory path).
        #[arg(long)]
        in_memory: bool,
    },
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    match args.command {
        Command::Generate {
            out,
            docs,
            vocab,
            topics,
            length,
            seed,
        } => {
            let cfg = SyntheticConfig::builder()
                .num_docs(docs)
                .vocab_size(vocab)
                .num_topics(topics)
                .doc_length(length)
                .seed(seed)
                .build()?;
            let start = Instant::now();
            let (written, _) = write_synthetic(&out, &cfg)?;
            let bytes = std::fs::metadata(&out)?.len();
            println!(
                "{}",
                json!({
                    "store": out, "documents": written, "bytes": bytes,
                    "seconds": start.elapsed().as_secs_f64(), "peak_rss_kib": process_peak_rss_kib(),
                })
            );
        }
        Command::Fit {
            store,
            population,
            topics,
            length,
            batch,
            iterations,
            epsilon,
            seed,
            in_memory,
        } => {
            let opened = RecordStore::open(&store)?;
            let vocab = usize::try_from(opened.dim())?;
            let lda = Lda::new(
                LdaConfig::builder(topics, vocab)
                    .doc_length(Some(length))
                    .build()?,
            );
            let privacy = match epsilon {
                Some(epsilon) => Privacy::Target {
                    epsilon,
                    delta: 1e-5,
                },
                None => Privacy::NonPrivate,
            };
            let svi = SviConfig::builder()
                .expected_batch_size(batch)
                .stop(Stop::Iterations { iterations })
                .privacy(privacy)
                .noise_seed(Some(seed))
                .population(Some(population))
                .build()?;
            let key = ResamplingKey::public_seed(seed);
            let (fitted, load_seconds) = if in_memory {
                let start = Instant::now();
                let mut buf = Vec::new();
                let docs = (0..opened.len())
                    .map(|i| decode_document(&opened, i, &mut buf))
                    .collect::<Result<Vec<_>, _>>()?;
                let corpus = Corpus::new(docs, vocab)?;
                let prepared = lda.prepare(&corpus, &key)?;
                drop(corpus);
                let load = start.elapsed().as_secs_f64();
                (fit(&lda, prepared, &svi, |_, _| {})?, Some(load))
            } else {
                let source = lda.store_source(opened, key)?;
                (fit_source(&lda, source, &svi, |_, _| {})?, None)
            };
            let d = &fitted.diagnostics;
            println!(
                "{}",
                json!({
                    "path": if in_memory { "in-memory" } else { "store" },
                    "epsilon": fitted.result.privacy.epsilon,
                    "iterations": fitted.result.iterations,
                    "diagnostics": {
                        "private": false,
                        "documents_processed": d.records_processed,
                        "fit_seconds": d.seconds,
                        "fit_cpu_seconds": d.cpu_seconds,
                        "documents_per_second": d.records_processed as f64 / d.seconds,
                        "load_and_prepare_seconds": load_seconds,
                        "peak_rss_kib": process_peak_rss_kib(),
                    },
                })
            );
        }
    }
    Ok(())
}
