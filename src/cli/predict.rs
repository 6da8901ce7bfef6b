//! `dp-bayes predict --model FILE --csv FILE`: predictions of a saved model on new raw rows
//! (linreg and pbp: predictive mean and variance; blr: the probability of label 1). A blr model
//! fitted on LIBSVM rows also takes `--libsvm FILE --dim D` (D must be the model's dimension).

use std::path::PathBuf;

use dp_sep::pbp::saved::SavedPbp;
use serde_json::{Value, json};
use vips_models::blr::{LibsvmOptions, SavedBlr, SavedScaling};
use vips_models::linreg::{SavedLinreg, model_file_kind, read_model_file};

use super::error::{CliError, usage};
use super::io::{check_no_null, emit, emit_text, num, read_feature_csv};

/// Arguments of `predict`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["csv", "libsvm"])))]
pub struct PredictArgs {
    /// The saved model (a fit's model.json).
    #[arg(long)]
    model: PathBuf,
    /// CSV file with a header naming every feature column of the model (the label or target
    /// column may be present and is ignored; any other column is an error).
    #[arg(long)]
    csv: Option<PathBuf>,
    /// LIBSVM file of new rows for a blr model fitted on LIBSVM rows (`label id:value ...`; the
    /// label is read and ignored). Needs --dim.
    #[arg(long)]
    libsvm: Option<PathBuf>,
    /// The dimension of --libsvm: must be the model's (ids above it are refused, naming the
    /// line).
    #[arg(long, conflicts_with = "csv", value_parser = super::fit::count)]
    dim: Option<usize>,
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
    let (input_key, input_path) = match (&args.csv, &args.libsvm) {
        (Some(p), None) => ("csv", p),
        (None, Some(p)) => ("libsvm", p),
        _ => {
            return Err(usage(
                "--csv",
                "give exactly one of --csv FILE and --libsvm FILE",
            ));
        }
    };
    let csv_name = input_path.display().to_string();
    if let Some(libsvm) = &args.libsvm {
        let Saved::Blr(m) = &model else {
            return Err(usage(
                "--libsvm",
                format!(
                    "only blr models take LIBSVM rows; {} is not a blr model (use --csv)",
                    args.model.display()
                ),
            ));
        };
        let rows = libsvm_rows(m, libsvm, args.dim, &args.model)?;
        return output(args, "blr", input_key, &csv_name, &["probability"], &rows);
    }
    let csv = input_path;
    // Data lines are numbered from the header; errors from the model name the row.
    let at_row = |i: usize, e: String| CliError::File {
        path: csv_name.clone(),
        reason: format!("data row {}: {e}", i + 1),
    };
    let (kind, columns, rows): (&str, Vec<&str>, Vec<Vec<f64>>) = match &model {
        Saved::Linreg(m) => {
            let raw = read_feature_csv(csv, &m.feature_names(), m.target_name())?;
            let mut out = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                let p = m.predict(r).map_err(|e| at_row(i, e.to_string()))?;
                out.push(vec![p.mean, p.variance]);
            }
            ("linreg", vec!["mean", "variance"], out)
        }
        Saved::Blr(m) => {
            let raw = read_feature_csv(csv, &m.feature_names(), m.label())?;
            let mut out = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                out.push(vec![m.predict(r).map_err(|e| at_row(i, e.to_string()))?]);
            }
            ("blr", vec!["probability"], out)
        }
        Saved::Pbp(m) => {
            let raw = read_feature_csv(csv, &m.feature_names(), m.target_name())?;
            let mut out = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                let (mean, variance) = m.predict(r).map_err(|e| at_row(i, e.to_string()))?;
                out.push(vec![mean, variance]);
            }
            ("pbp", vec!["mean", "variance"], out)
        }
    };
    output(args, kind, input_key, &csv_name, &columns, &rows)
}

/// The probabilities of a LIBSVM file's rows under a blr model whose scaling is a division by
/// its radius (a model fitted on LIBSVM rows). `dim` must be the model's dimension.
fn libsvm_rows(
    m: &SavedBlr,
    path: &std::path::Path,
    dim: Option<usize>,
    model_path: &std::path::Path,
) -> Result<Vec<Vec<f64>>, CliError> {
    let map = m.feature_map();
    let expected = map.input_dim();
    let dim = dim.ok_or_else(|| {
        usage(
            "--dim",
            format!(
                "--libsvm needs the public dimension of its ids (the model {} has {expected})",
                model_path.display()
            ),
        )
    })?;
    if dim != expected {
        return Err(CliError::Dimension {
            flag: "--dim",
            given: dim,
            model: model_path.display().to_string(),
            expected,
        });
    }
    let plain = match m.scaling() {
        SavedScaling::Identity { .. } => true,
        SavedScaling::Ranges {
            lower,
            upper,
            intercept,
            ..
        } => !intercept && lower.iter().all(|&l| l == -1.0) && upper.iter().all(|&u| u == 1.0),
    };
    if !plain {
        return Err(usage(
            "--libsvm",
            format!(
                "the model {} maps named CSV columns through declared ranges (or an intercept): \
                 predict with --csv",
                model_path.display()
            ),
        ));
    }
    let loaded = vips_models::blr::load_libsvm(
        path,
        LibsvmOptions {
            dim: Some(dim),
            radius: map.radius(),
        },
    )?;
    Ok(loaded
        .records
        .iter()
        .map(|r| vec![m.probability(r.features())])
        .collect())
}

/// Prints the predictions (JSON with `--json`, else CSV).
fn output(
    args: &PredictArgs,
    kind: &str,
    input_key: &str,
    input_name: &str,
    columns: &[&str],
    rows: &[Vec<f64>],
) -> Result<(), CliError> {
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
        input_key: input_name,
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
    for r in rows {
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
