//! `dp-bayes reconstruct --model FILE --idx FILE`: new binary images scored by a saved sigmoid
//! belief network (a `fit sbn` model.json): per image the variational lower bound on
//! `log p(y)`, the fraction of pixels the reconstruction gets right and, with `--hidden-means`,
//! the hidden units' posterior means `q(z_k = 1)`.

use std::path::PathBuf;

use serde_json::{Value, json};
use vips_models::sbn::{SavedSbn, SbnError, load_idx_images};

use super::error::CliError;
use super::io::{check_no_null, emit, emit_text, num};

/// Arguments of `reconstruct`.
#[derive(clap::Args, Debug)]
pub struct ReconstructArgs {
    /// The saved SBN model (a `fit sbn` model.json).
    #[arg(long)]
    model: PathBuf,
    /// The images: an IDX image file (gzip-compressed or not) with the model's pixel count.
    #[arg(long)]
    idx: PathBuf,
    /// Binarisation threshold (IDX pixel >= threshold is 1). Default: the model's (the fit's).
    #[arg(long, value_parser = super::fit::threshold)]
    threshold: Option<u8>,
    /// Also print each image's hidden-unit posterior means q(z_k = 1).
    #[arg(long)]
    hidden_means: bool,
    /// Print one JSON object (default: CSV `image,lower_bound,pixel_accuracy[,hidden_0,...]`).
    #[arg(long)]
    json: bool,
}

/// Runs `reconstruct`.
///
/// # Privacy
/// The model is public (post-processing of the private fit); the images are the caller's and
/// their scores are not covered by the fit's guarantee.
pub fn run(args: &ReconstructArgs) -> Result<(), CliError> {
    let model = SavedSbn::load(&args.model)?;
    let bin = args.threshold.unwrap_or(model.threshold());
    let images = load_idx_images(&args.idx, bin).map_err(|e| match e {
        SbnError::Empty(what) => CliError::File {
            path: args.idx.display().to_string(),
            reason: what.to_string(),
        },
        e => e.into(),
    })?;
    let idx_name = args.idx.display().to_string();
    let scores = model.reconstruct(&images).map_err(|e| CliError::File {
        path: idx_name.clone(),
        reason: format!("{e} (model {})", args.model.display()),
    })?;
    // As `SavedSbn::evaluate` (and the fit's held-out scores): sums in image order.
    let n = scores.len();
    let mean_bound = scores.iter().map(|r| r.lower_bound).sum::<f64>() / n as f64;
    let correct: usize = scores.iter().map(|r| r.correct_pixels).sum();
    let j = model.config().visible() as f64;
    let k = model.config().hidden();
    let mut csv = String::from("image,lower_bound,pixel_accuracy");
    if args.hidden_means {
        for h in 0..k {
            csv.push_str(&format!(",hidden_{h}"));
        }
    }
    let mut rows = Vec::with_capacity(scores.len());
    for (i, r) in scores.iter().enumerate() {
        let accuracy = r.correct_pixels as f64 / j;
        let mut row = json!({
            "image": i + 1,
            "lower_bound": num(r.lower_bound),
            "pixel_accuracy": num(accuracy),
        });
        // f64 Display is the shortest text that reads back to the same bits.
        csv.push_str(&format!("\n{},{},{}", i + 1, r.lower_bound, accuracy));
        if args.hidden_means {
            row["hidden_means"] =
                Value::from(r.hidden_means.iter().map(|&v| num(v)).collect::<Vec<_>>());
            for v in &r.hidden_means {
                csv.push_str(&format!(",{v}"));
            }
        }
        rows.push(row);
    }
    let out = json!({
        "command": "reconstruct",
        "model": "sbn",
        "model_file": args.model.display().to_string(),
        "idx": idx_name,
        "threshold": bin,
        "visible": model.config().visible(),
        "hidden": k,
        "images": n,
        "mean_lower_bound": num(mean_bound),
        "pixel_accuracy": num(correct as f64 / (n as f64 * j)),
        "results": rows,
    });
    check_no_null(&out)?;
    if args.json {
        return emit(&out, true);
    }
    emit_text(&csv)
}
