//! Output (atomic file writes, JSON on stdout without `null`) and the feature CSV of `predict`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::{CliError, usage};

/// A number as JSON: finite values as numbers, infinities as `"inf"` / `"-inf"` (JSON has
/// neither infinity nor NaN; `null` is never written). NaN is refused by [`check_no_null`].
pub fn num(x: f64) -> Value {
    dp_accountant::cli::num(x)
}

/// `Err(NonFinite(path))` for the first `null` or `"nan"` in `value`.
pub fn check_no_null(value: &Value) -> Result<(), CliError> {
    fn find(v: &Value, at: &str) -> Option<String> {
        match v {
            Value::Null => Some(if at.is_empty() {
                "(root)".into()
            } else {
                at.into()
            }),
            Value::String(s) if s == "nan" => Some(at.into()),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .find_map(|(i, x)| find(x, &format!("{at}[{i}]"))),
            Value::Object(m) => m.iter().find_map(|(k, x)| {
                find(
                    x,
                    &if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    },
                )
            }),
            _ => None,
        }
    }
    match find(value, "") {
        Some(at) => Err(CliError::NonFinite(at)),
        None => Ok(()),
    }
}

/// Prints `value` (compact with `--json`, else pretty) and a newline. A closed stdout ends
/// quietly with success; other write errors are [`CliError::Output`].
pub fn emit(value: &Value, compact: bool) -> Result<(), CliError> {
    check_no_null(value)?;
    let text = if compact {
        value.to_string()
    } else {
        serde_json::to_string_pretty(value).map_err(|e| CliError::Output(e.into()))?
    };
    emit_text(&text)
}

/// Prints `text` and a newline (see [`emit`]).
pub fn emit_text(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Output(e)),
    }
}

/// Creates the output directory (and its parents) if needed.
pub fn out_dir(dir: &Path) -> Result<PathBuf, CliError> {
    if dir.exists() && !dir.is_dir() {
        return Err(usage(
            "--out",
            format!("{} exists and is not a directory", dir.display()),
        ));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| usage("--out", format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir.to_path_buf())
}

/// Writes `text` to `dir/name` atomically: a temporary file in the same directory, flushed to
/// disk, then renamed over the target, so a reader sees the old file or the new one whole,
/// never a part. The temporary file is removed on failure.
pub fn write_atomic(dir: &Path, name: &str, text: &str) -> Result<PathBuf, CliError> {
    let target = dir.join(name);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.tmp-{}-{nanos}", std::process::id()));
    let fail = |source: std::io::Error| {
        let _ = std::fs::remove_file(&tmp);
        CliError::Write {
            path: target.display().to_string(),
            source,
        }
    };
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        Ok(())
    };
    write().map_err(fail)?;
    std::fs::rename(&tmp, &target).map_err(fail)?;
    // Make the rename itself durable where directories can be synced (best effort).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(target)
}

/// Removes `dir/name` if present: an output of an earlier run that this run does not write
/// (a ledger next to a non-private model would describe another fit).
pub fn remove_stale(dir: &Path, name: &str) -> Result<(), CliError> {
    let path = dir.join(name);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(CliError::Write {
            path: path.display().to_string(),
            source,
        }),
    }
}

/// Largest CSV read by `predict`.
const MAX_CSV_BYTES: u64 = 1 << 30;

/// Reads a file as UTF-8 text (bounded).
pub fn read_text(path: &Path, flag: &'static str) -> Result<String, CliError> {
    use std::io::Read;
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| CliError::Io {
        path: name.clone(),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_CSV_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| CliError::Io {
            path: name.clone(),
            source,
        })?;
    if bytes.len() as u64 > MAX_CSV_BYTES {
        return Err(usage(
            flag,
            format!("{name} is larger than {MAX_CSV_BYTES} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| CliError::File {
        path: name,
        reason: format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
    })
}

/// Rows of a CSV with a header whose columns include every name of `features` (picked by name,
/// in that order). Columns named in `ignored` (the model's label or target) are skipped; any
/// other column is an error, so that a misspelt name is never silently dropped. Blank lines are
/// skipped; every value must be a finite number. Errors name the file and the line.
pub fn read_feature_csv(
    path: &Path,
    features: &[&str],
    ignored: &str,
) -> Result<Vec<Vec<f64>>, CliError> {
    let text = read_text(path, "--csv")?;
    let name = path.display().to_string();
    let err = |line: usize, reason: String| CliError::File {
        path: name.clone(),
        reason: format!("line {line}: {reason}"),
    };
    let excerpt = vips_models::limits::excerpt;
    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty());
    let (hline, header) = lines
        .next()
        .ok_or_else(|| err(1, "no header line".into()))?;
    let columns: Vec<&str> = header.split(',').map(str::trim).collect();
    let mut pick = Vec::with_capacity(features.len());
    for f in features {
        match columns.iter().position(|c| c == f) {
            Some(i) => pick.push(i),
            None => {
                return Err(err(
                    hline,
                    format!("no column `{}`, a feature of the model", excerpt(f)),
                ));
            }
        }
    }
    for (i, c) in columns.iter().enumerate() {
        if columns[..i].contains(c) {
            return Err(err(hline, format!("column `{}` appears twice", excerpt(c))));
        }
        if !features.contains(c) && *c != ignored {
            return Err(err(
                hline,
                format!(
                    "column `{}` is not a feature of the model (features: {})",
                    excerpt(c),
                    excerpt(&features.join(", "))
                ),
            ));
        }
    }
    let mut rows = Vec::new();
    for (line, text) in lines {
        let fields: Vec<&str> = text.split(',').collect();
        if fields.len() != columns.len() {
            return Err(err(
                line,
                format!("{} fields, the header has {}", fields.len(), columns.len()),
            ));
        }
        let mut row = Vec::with_capacity(pick.len());
        for &i in &pick {
            let v = fields[i].trim();
            match v.parse::<f64>() {
                Ok(x) if x.is_finite() => row.push(x),
                _ => {
                    return Err(err(
                        line,
                        format!(
                            "column `{}`: `{}` is not a finite number",
                            excerpt(columns[i]),
                            excerpt(v)
                        ),
                    ));
                }
            }
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(err(hline, "a header but no rows".into()));
    }
    Ok(rows)
}
