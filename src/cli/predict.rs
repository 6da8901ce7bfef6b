//! `dp-bayes predict --model FILE --csv FILE`: predictions of a saved model on new raw rows
//! (linreg and pbp: predictive mean and variance; blr: the probability of label 1).

use std::path::PathBuf;

use dp_sep::pbp::saved::SavedPbp;
use serde_json::{Value, json};
use vips_models::blr::SavedBlr;
use vips_models::linreg::{SavedLinreg, model_file_kind, read_model_file};

use super::error::CliError;
use super::io::{check_no_null, emit, emit_text, num, read_feature_csv};

/// Arguments of `predict`.
#[derive(clap::Args, Debug)]
pub struct PredictArgs {
    /// The saved model (a fit's model.json).
    #[arg(long)]
    model: PathBuf,
    /// CSV file with a header naming every feature column of the model (the label or target
    /// column may be present and is ignored; any other column is an error).
    #[arg(long)]
    csv: PathBuf,
    /// Print one JSON object (default: CSV, one line per input row).
    #[arg(long)]
    json: bool,
}

/// A saved model of any kind `predict` knows.
enum Saved {
    Linreg(SavedLinreg),
    Blr(SavedBlr),
    Pbp(SavedPbp),
}

fn load(path: &std::path::Path) -> Result<Saved, CliError> {
    let text = read_model_file(path)?;
    let name = path.display().to_string();
    match model_file_kind(&text, &name)?.as_str() {
        "linreg" => Ok(Saved::Linreg(SavedLinreg::from_json(&text, &name)?)),
        "blr" => Ok(Saved::Blr(SavedBlr::from_json(&text, &name)?)),
        "pbp" => Ok(Saved::Pbp(SavedPbp::from_json(&text, &name)?)),
        "sbn" => Err(CliError::File {
            path: name,
            reason: "an sbn model scores images, not CSV rows: use `dp-bayes reconstruct \
                     --model FILE --idx IMAGES`"
                .into(),
        }),
        other => Err(CliError::File {
            path: name,
            reason: format!(
                "model `{}` has no predictions in this build (linreg, blr, pbp)",
                vips_models::limits::excerpt(other)
            ),
        }),
    }
}

/// Runs `predict`.
pub fn run(args: &PredictArgs) -> Result<(), CliError> {
    let model = load(&args.model)?;
    let csv_name = args.csv.display().to_string();
    // Data lines are numbered from the header; errors from the model name the row.
    let at_row = |i: usize, e: String| CliError::File {
        path: csv_name.clone(),
        reason: format!("data row {}: {e}", i + 1),
    };
    let (kind, columns, rows): (&str, Vec<&str>, Vec<Vec<f64>>) = match &model {
        Saved::Linreg(m) => {
            let raw = read_feature_csv(&args.csv, &m.feature_names(), m.target_name())?;
            let mut out = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                let p = m.predict(r).map_err(|e| at_row(i, e.to_string()))?;
                out.push(vec![p.mean, p.variance]);
            }
            ("linreg", vec!["mean", "variance"], out)
        }
        Saved::Blr(m) => {
            let raw = read_feature_csv(&args.csv, &m.feature_names(), m.label())?;
            let mut out = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                out.push(vec![m.predict(r).map_err(|e| at_row(i, e.to_string()))?]);
            }
            ("blr", vec!["probability"], out)
        }
        Saved::Pbp(m) => {
            let raw = read_feature_csv(&args.csv, &m.feature_names(), m.target_name())?;
            let mut out = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                let (mean, variance) = m.predict(r).map_err(|e| at_row(i, e.to_string()))?;
                out.push(vec![mean, variance]);
            }
            ("pbp", vec!["mean", "variance"], out)
        }
    };
    let predictions: Vec<Value> = rows
        .iter()
        .map(|r| {
            Value::Object(
                columns
                    .iter()
                    .zip(r)
                    .map(|(k, &v)| ((*k).to_string(), num(v)))
                    .collect(),
            )
        })
        .collect();
    let out = json!({
        "command": "predict",
        "model": kind,
        "model_file": args.model.display().to_string(),
        "csv": csv_name,
        "rows": rows.len(),
        "columns": columns,
        "predictions": predictions,
    });
    check_no_null(&out)?;
    if args.json {
        return emit(&out, true);
    }
    // CSV: f64 Display is the shortest text that reads back to the same bits.
    let mut text = columns.join(",");
    for r in &rows {
        text.push('\n');
        let cells: Vec<String> = r
            .iter()
            .map(|v| match num(*v) {
                Value::String(s) => s,
                v => v.to_string(),
            })
            .collect();
        text.push_str(&cells.join(","));
    }
    emit_text(&text)
}
