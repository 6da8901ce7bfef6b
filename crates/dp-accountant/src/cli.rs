//! The audit command line's logic, independent of argument parsing (the `dp-accountant` binary,
//! feature `cli`, parses arguments with clap and calls [`execute`]). Kept in the library so it
//! is tested without building the binary.

use serde_json::{Value, json};
use thiserror::Error;

use crate::accounting::{delta_for_event, epsilon_for_event};
use crate::answer::AccountantConfig;
use crate::budget::Budget;
use crate::calibrate::{Sampling, calibrate_noise_multiplier};
use crate::conversion::Conversion;
use crate::error::{AccountantError, LedgerFault};
use crate::ledger::Accountant;
use crate::orders::Orders;
use crate::zcdp::{zcdp_epsilon_bun_steinke, zcdp_epsilon_cks};

/// One audit question.
#[derive(Clone, Debug, PartialEq)]
pub enum CliCommand {
    /// Spent epsilon of `steps` steps at `delta`.
    Epsilon {
        /// Per-step sampling.
        sampling: Sampling,
        /// Noise std / L2 sensitivity.
        noise_multiplier: f64,
        /// Number of steps.
        steps: u64,
        /// Target delta.
        delta: f64,
        /// Orders and conversion.
        config: AccountantConfig,
    },
    /// Delta of `steps` steps at `epsilon`.
    Delta {
        /// Per-step sampling.
        sampling: Sampling,
        /// Noise std / L2 sensitivity.
        noise_multiplier: f64,
        /// Number of steps.
        steps: u64,
        /// The epsilon.
        epsilon: f64,
        /// Orders and conversion.
        config: AccountantConfig,
    },
    /// Smallest noise multiplier for a budget.
    Calibrate {
        /// Per-step sampling.
        sampling: Sampling,
        /// Number of steps.
        steps: u64,
        /// Target epsilon.
        epsilon: f64,
        /// Target delta.
        delta: f64,
        /// Orders and conversion.
        config: AccountantConfig,
    },
    /// zCDP `rho` to `(epsilon, delta)`.
    Zcdp {
        /// The zCDP parameter.
        rho: f64,
        /// Target delta.
        delta: f64,
    },
    /// Replay a ledger file's JSON and report its epsilon.
    Replay {
        /// The ledger's JSON text.
        ledger_json: String,
        /// Where it was read from (for the report).
        source: String,
        /// Target delta.
        delta: f64,
    },
}

/// A result in both forms.
#[derive(Clone, Debug, PartialEq)]
pub struct CliOutput {
    /// One JSON object (`--json`).
    pub json: Value,
    /// A short readable report.
    pub text: String,
}

/// Parses `--orders`: `continuous`, `default` (dp_accounting's list) or a comma-separated list.
///
/// # Errors
/// [`AccountantError::InvalidParameter`] for an unparsable or invalid order.
pub fn parse_orders(s: &str) -> Result<Orders, AccountantError> {
    match s.trim() {
        "continuous" => Ok(Orders::Continuous),
        "default" | "dp_accounting" => Ok(Orders::DpAccountingDefault),
        list => {
            let mut v = Vec::new();
            for part in list.split(',') {
                let a: f64 = part.trim().parse().map_err(|_| AccountantError::InvalidParameter {
                    name: "orders",
                    value: f64::NAN,
                    reason: "expected `continuous`, `default` or a comma-separated list of numbers",
                })?;
                v.push(a);
            }
            Orders::custom(v)
        }
    }
}

/// Why a `--steps` value was refused ([`parse_steps`]).
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StepsError {
    /// A whole number too large for the 64-bit step counter.
    #[error("more steps than a 64-bit counter holds (at most 1.8e19)")]
    TooMany,
    /// Not a whole non-negative number.
    #[error("expected a whole number of steps, e.g. 1000 or 1e12")]
    NotWhole,
}

/// `--steps`: a non-negative integer, also written as an exact float such as `1e12`.
///
/// # Example
/// ```
/// use dp_accountant::cli::{StepsError, parse_steps};
/// assert_eq!(parse_steps("1e12"), Ok(1_000_000_000_000));
/// assert_eq!(parse_steps("2.5"), Err(StepsError::NotWhole));
/// assert_eq!(parse_steps("1e20"), Err(StepsError::TooMany));
/// ```
///
/// # Errors
/// [`StepsError::TooMany`] beyond `u64::MAX`; [`StepsError::NotWhole`] for anything else that
/// is not a whole number `>= 0`.
pub fn parse_steps(s: &str) -> Result<u64, StepsError> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Ok(n);
    }
    match s.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.fract() == 0.0 && x < 18_446_744_073_709_551_616.0 => Ok(x as u64),
        Ok(x) if x.is_finite() && x >= 18_446_744_073_709_551_616.0 => Err(StepsError::TooMany),
        _ => Err(StepsError::NotWhole),
    }
}

/// Largest ledger file [`read_ledger`] reads (a ledger holds one small entry per recorded
/// event).
pub const MAX_LEDGER_BYTES: u64 = 64 << 20;

/// Reads a ledger file as text, refusing oversized and non-UTF-8 files before parsing.
///
/// # Errors
/// [`AccountantError::CorruptLedger`] naming the file, with [`LedgerFault::Unreadable`],
/// [`LedgerFault::TooLarge`] or [`LedgerFault::NotUtf8`].
pub fn read_ledger(path: &std::path::Path) -> Result<String, AccountantError> {
    let corrupt = |fault: LedgerFault| AccountantError::CorruptLedger {
        file: Some(path.display().to_string()),
        fault,
    };
    let len = std::fs::metadata(path)
        .map_err(|e| corrupt(LedgerFault::Unreadable(e.into())))?
        .len();
    if len > MAX_LEDGER_BYTES {
        return Err(corrupt(LedgerFault::TooLarge {
            bytes: len,
            limit: MAX_LEDGER_BYTES,
        }));
    }
    let bytes = std::fs::read(path).map_err(|e| corrupt(LedgerFault::Unreadable(e.into())))?;
    String::from_utf8(bytes).map_err(|e| {
        corrupt(LedgerFault::NotUtf8 {
            valid_up_to: e.utf8_error().valid_up_to(),
        })
    })
}

/// The per-step sampling from the CLI's optional flags.
///
/// # Errors
/// [`AccountantError::InconsistentFlags`] for an inconsistent combination (a rate together with a sample
/// size, or a sample size without a population).
pub fn sampling_from_flags(
    sampling_rate: Option<f64>,
    sample_size: Option<u64>,
    population: Option<u64>,
    replace_one: bool,
) -> Result<Sampling, AccountantError> {
    match (sampling_rate, sample_size, population) {
        (Some(rate), None, None) => Ok(Sampling::Poisson { rate }),
        (None, Some(sample_size), Some(population)) => Ok(Sampling::FixedSize {
            sample_size,
            population,
        }),
        (None, None, None) => Ok(Sampling::FullBatch {
            neighbouring: if replace_one {
                crate::Neighbouring::ReplaceOne
            } else {
                crate::Neighbouring::AddRemoveOne
            },
        }),
        _ => Err(AccountantError::InconsistentFlags(
            "give either --sampling-rate, or --sample-size with --population, or neither (full batch)",
        )),
    }
}

fn sampling_json(s: &Sampling) -> Value {
    serde_json::to_value(s).unwrap_or(Value::Null)
}

fn sampling_text(s: &Sampling) -> String {
    match s {
        Sampling::Poisson { rate } => format!("Poisson sampling q = {rate} (add/remove-one)"),
        Sampling::FixedSize {
            sample_size,
            population,
        } => format!(
            "fixed-size batches of {sample_size} of {population} without replacement (replace-one)"
        ),
        Sampling::FullBatch { neighbouring } => format!("full batch ({neighbouring:?})"),
    }
}

/// Answers one audit question.
///
/// # Errors
/// Every validation error of the underlying functions, a corrupt ledger, an empty ledger.
pub fn execute(cmd: &CliCommand) -> Result<CliOutput, AccountantError> {
    let version = env!("CARGO_PKG_VERSION");
    match cmd {
        CliCommand::Epsilon {
            sampling,
            noise_multiplier,
            steps,
            delta,
            config,
        } => {
            let event = sampling.run_event(*noise_multiplier, *steps)?;
            let r = epsilon_for_event(&event, *delta, config)?;
            let mut json = json!({
                "epsilon": num(r.epsilon), "delta": num(r.delta),
                "method": r.method, "accountant": config.accountant().name(),
                "noise_multiplier": noise_multiplier, "steps": steps,
                "sampling": sampling_json(sampling), "crate_version": version,
            });
            put(&mut json, "order", r.order);
            put(&mut json, "rdp", r.rdp);
            with_lower(&mut json, "epsilon_lower", r.epsilon_lower);
            with_reason(&mut json, r.epsilon, *noise_multiplier);
            Ok(CliOutput {
                json,
                text: format!(
                    "epsilon = {} at delta = {:e}\n  {} steps, noise multiplier {}, {}\n  {}",
                    fmt_eps(r.epsilon),
                    r.delta,
                    steps,
                    noise_multiplier,
                    sampling_text(sampling),
                    how(r.order, &r.method, "epsilon", r.epsilon_lower),
                ),
            })
        }
        CliCommand::Delta {
            sampling,
            noise_multiplier,
            steps,
            epsilon,
            config,
        } => {
            let event = sampling.run_event(*noise_multiplier, *steps)?;
            let r = delta_for_event(&event, *epsilon, config)?;
            let mut json = json!({
                "delta": num(r.delta), "epsilon": num(r.epsilon), "method": r.method,
                "accountant": config.accountant().name(), "noise_multiplier": noise_multiplier,
                "steps": steps, "sampling": sampling_json(sampling), "crate_version": version,
            });
            put(&mut json, "order", r.order);
            with_lower(&mut json, "delta_lower", r.delta_lower);
            Ok(CliOutput {
                json,
                text: format!(
                    "delta = {:e} at epsilon = {}\n  {} steps, noise multiplier {}, {}\n  {}",
                    r.delta,
                    r.epsilon,
                    steps,
                    noise_multiplier,
                    sampling_text(sampling),
                    how(r.order, &r.method, "delta", r.delta_lower),
                ),
            })
        }
        CliCommand::Calibrate {
            sampling,
            steps,
            epsilon,
            delta,
            config,
        } => {
            let budget = Budget::new(*epsilon, *delta)?;
            let c = calibrate_noise_multiplier(*sampling, *steps, &budget, config)?;
            let mut json = json!({
                "noise_multiplier": num(c.noise_multiplier), "epsilon": num(c.epsilon),
                "delta": delta, "target_epsilon": epsilon, "method": c.method,
                "tolerance": c.tolerance, "accountant": config.accountant().name(), "steps": steps,
                "sampling": sampling_json(sampling), "crate_version": version,
            });
            put(&mut json, "order", c.order);
            with_lower(&mut json, "epsilon_lower", c.epsilon_lower);
            Ok(CliOutput {
                json,
                text: format!(
                    "noise multiplier = {:.10} (relative tolerance {:e})\n  achieves epsilon = {} <= {} at delta = {:e}\n  {} steps, {}\n  {}",
                    c.noise_multiplier,
                    c.tolerance,
                    fmt_eps(c.epsilon),
                    fmt_eps(*epsilon),
                    delta,
                    steps,
                    sampling_text(sampling),
                    how(c.order, &c.method, "epsilon", c.epsilon_lower),
                ),
            })
        }
        CliCommand::Zcdp { rho, delta } => {
            let tight = zcdp_epsilon_cks(*rho, *delta)?;
            let bs = zcdp_epsilon_bun_steinke(*rho, *delta)?;
            Ok(CliOutput {
                json: {
                    let mut j = json!({
                        "epsilon": num(tight.epsilon), "delta": delta,
                        "method": tight.method, "epsilon_bun_steinke": num(bs), "rho": num(*rho),
                        "crate_version": version,
                    });
                    put(&mut j, "order", tight.order);
                    j
                },
                text: format!(
                    "epsilon = {} at delta = {:e} for rho = {} (CKS 2020, order {:.4})\n  Bun-Steinke Prop. 1.3: epsilon = {}",
                    fmt_eps(tight.epsilon),
                    delta,
                    rho,
                    tight.order,
                    fmt_eps(bs)
                ),
            })
        }
        CliCommand::Replay {
            ledger_json,
            source,
            delta,
        } => {
            let ledger = Accountant::from_json(ledger_json).map_err(|e| e.in_file(source))?;
            // Privacy stated outside the events (a partition selection's threshold): the
            // events are answered at what is left of delta and the extra epsilon is added.
            let extra = ledger.extra_privacy().map_err(|e| e.in_file(source))?;
            let events_delta = delta - extra.delta;
            if events_delta.is_nan() || events_delta <= 0.0 {
                return Err(AccountantError::InvalidParameter {
                    name: "delta",
                    value: *delta,
                    reason: "must exceed the ledger's extra delta (stated outside its events)",
                });
            }
            let r = ledger.epsilon_report(events_delta)?;
            let epsilon = r.epsilon + extra.epsilon;
            let hash = ledger.content_hash()?;
            let mut json = json!({
                "epsilon": num(epsilon), "delta": num(*delta),
                "method": r.method, "accountant": ledger.config().accountant().name(),
                "entries": ledger.len(), "content_hash": hash,
                "written_by": ledger.written_by().unwrap_or("unknown"),
                "crate_version": version, "ledger": source,
            });
            put(&mut json, "order", r.order);
            put(&mut json, "rdp", r.rdp);
            let mut extra_text = String::new();
            if extra.is_none() {
                with_lower(&mut json, "epsilon_lower", r.epsilon_lower);
            } else {
                with_lower(&mut json, "events_epsilon_lower", r.epsilon_lower);
                put(&mut json, "events_epsilon", r.epsilon);
                put(&mut json, "events_delta", events_delta);
                put(&mut json, "extra_epsilon", extra.epsilon);
                put(&mut json, "extra_delta", extra.delta);
                if let Some(map) = json.as_object_mut() {
                    map.insert("note".into(), json!(EXTRA_NOTE));
                }
                extra_text = format!(
                    "\n  of which outside the events: epsilon {:e}, delta {:e} (events: epsilon \
                     {} at delta {:e})",
                    extra.epsilon,
                    extra.delta,
                    fmt_eps(r.epsilon),
                    events_delta
                );
            }
            if epsilon.is_infinite()
                && let Some(map) = json.as_object_mut()
            {
                map.insert("reason".into(), json!(INF_REASON));
            }
            Ok(CliOutput {
                json,
                text: format!(
                    "ledger {source}: {} entries, {hash} (written by dp-accountant {})\n  epsilon = {} at delta = {:e}{extra_text}\n  {}",
                    ledger.len(),
                    ledger.written_by().unwrap_or("?"),
                    fmt_eps(epsilon),
                    delta,
                    how(r.order, &r.method, "epsilon", r.epsilon_lower),
                ),
            })
        }
    }
}

/// Adds `key: lower` to a JSON object when a lower bound is known (PLD).
fn with_lower(json: &mut Value, key: &str, lower: Option<f64>) {
    if let Some(l) = lower {
        put(json, key, l);
    }
}

/// What a replay says when entries state privacy outside their events.
pub const EXTRA_NOTE: &str = "entries state privacy outside their events (a partition \
     selection's threshold): the events are replayed at delta - extra_delta and the guarantee \
     is (events_epsilon + extra_epsilon, delta)";

/// Why an epsilon is infinite (the JSON `"reason"` next to `"epsilon": "inf"`).
pub const INF_REASON: &str = "no finite epsilon is certified at this delta: the privacy loss is \
     unbounded or beyond the range of f64 (noise multiplier far too small)";

/// Adds `"reason"` when `epsilon` is infinite.
fn with_reason(json: &mut Value, epsilon: f64, noise_multiplier: f64) {
    if epsilon.is_infinite()
        && let Some(map) = json.as_object_mut()
    {
        map.insert(
            "reason".into(),
            json!(format!(
                "{INF_REASON}: 1/(2 sigma^2) = {:e} for noise multiplier {noise_multiplier:e}",
                0.5 / (noise_multiplier * noise_multiplier)
            )),
        );
    }
}

/// A number as JSON: finite values as numbers, infinities as the strings `"inf"` / `"-inf"`
/// (JSON has no infinity; `null` is never written), NaN as the string `"nan"` (never expected).
///
/// ```
/// assert_eq!(dp_accountant::cli::num(f64::INFINITY), serde_json::json!("inf"));
/// assert_eq!(dp_accountant::cli::num(1.5), serde_json::json!(1.5));
/// ```
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else if x == f64::INFINITY {
        json!("inf")
    } else if x == f64::NEG_INFINITY {
        json!("-inf")
    } else {
        json!("nan")
    }
}

/// Sets `key` to [`num`]`(x)`, or leaves it out when `x` is NaN (no such value, e.g. the Rényi
/// order of a PLD answer).
fn put(json: &mut Value, key: &str, x: f64) {
    if !x.is_nan()
        && let Some(map) = json.as_object_mut()
    {
        map.insert(key.to_string(), num(x));
    }
}

/// An epsilon for the readable report: `inf`, six decimals, or scientific when tiny.
fn fmt_eps(x: f64) -> String {
    if x.is_infinite() {
        "inf".to_string()
    } else if x != 0.0 && x.abs() < 1e-4 {
        format!("{x:e}")
    } else {
        format!("{x:.6}")
    }
}

/// The report line saying how a value was obtained.
fn how(order: f64, method: &str, what: &str, lower: Option<f64>) -> String {
    match lower {
        Some(l) => format!(
            "{method}: the exact {what} is at least {} (PLD lower bound)",
            fmt_eps(l)
        ),
        None if order.is_nan() => format!("({method})"),
        None => format!("optimal order {order:.4} ({method})"),
    }
}

/// The command-line flag of an API parameter name, for error messages.
///
/// ```
/// assert_eq!(dp_accountant::cli::flag_of("noise_multiplier"), "--noise-multiplier");
/// ```
pub fn flag_of(name: &str) -> &str {
    match name {
        "noise_multiplier" => "--noise-multiplier",
        "sampling_rate" => "--sampling-rate",
        "count" | "steps" => "--steps",
        "delta" => "--delta",
        "epsilon" => "--epsilon",
        "rho" => "--rho",
        "order" | "orders" => "--orders",
        other => other,
    }
}

/// An error as the command line reports it: parameters named by their flags.
///
/// ```
/// use dp_accountant::{PrivacyEvent, cli::describe_error};
/// let e = PrivacyEvent::poisson_subsampled_gaussian(-1.0, 0.01).unwrap_err();
/// assert!(describe_error(&e).starts_with("--noise-multiplier = -1"));
/// ```
pub fn describe_error(e: &AccountantError) -> String {
    match e {
        AccountantError::InvalidParameter {
            name,
            value,
            reason,
        } => format!("{} = {value}: {reason}", flag_of(name)),
        AccountantError::InvalidSampleSize {
            sample_size,
            population,
        } => format!(
            "--sample-size {sample_size} with --population {population}: needs 1 <= sample size <= population"
        ),
        AccountantError::ResourceLimit {
            parameter,
            value,
            reason,
        } => format!("{} = {value} is too large: {reason}", flag_of(parameter)),
        other => other.to_string(),
    }
}

/// Orders and conversion for the CLI (RDP; see [`AccountantConfig::with_accountant`] for PLD).
///
/// # Errors
/// As [`parse_orders`].
pub fn config_from_flags(orders: &str, classic: bool) -> Result<AccountantConfig, AccountantError> {
    AccountantConfig::new(
        parse_orders(orders)?,
        if classic {
            Conversion::Classic
        } else {
            Conversion::Improved
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_parse() {
        assert_eq!(parse_orders("continuous").unwrap(), Orders::Continuous);
        assert_eq!(
            parse_orders("default").unwrap(),
            Orders::DpAccountingDefault
        );
        assert_eq!(
            parse_orders("2, 4,8.5").unwrap(),
            Orders::Custom(vec![2.0, 4.0, 8.5])
        );
        assert!(parse_orders("2,x").is_err());
        assert!(parse_orders("1,2").is_err());
    }

    #[test]
    fn sampling_flags() {
        assert!(sampling_from_flags(Some(0.1), Some(3), None, false).is_err());
        assert!(sampling_from_flags(None, Some(3), None, false).is_err());
        assert_eq!(
            sampling_from_flags(None, Some(6), Some(60), false).unwrap(),
            Sampling::FixedSize {
                sample_size: 6,
                population: 60
            }
        );
    }

    #[test]
    fn epsilon_command_reports_order_and_method() {
        let out = execute(&CliCommand::Epsilon {
            sampling: Sampling::Poisson { rate: 0.01 },
            noise_multiplier: 1.1,
            steps: 1000,
            delta: 1e-5,
            config: AccountantConfig::default(),
        })
        .unwrap();
        let eps = out.json["epsilon"].as_f64().unwrap();
        assert!(eps > 1.0 && eps < 2.5);
        assert!(out.json["order"].as_f64().unwrap() > 1.0);
        assert_eq!(out.json["method"], "rdp/improved/continuous");
    }

    #[test]
    fn bad_values_are_errors() {
        let bad = execute(&CliCommand::Epsilon {
            sampling: Sampling::Poisson { rate: 1.5 },
            noise_multiplier: 1.1,
            steps: 10,
            delta: 1e-5,
            config: AccountantConfig::default(),
        });
        assert!(bad.is_err());
        assert!(
            execute(&CliCommand::Zcdp {
                rho: 0.1,
                delta: 0.0
            })
            .is_err()
        );
        let corrupt = execute(&CliCommand::Replay {
            ledger_json: "{not json".into(),
            source: "x".into(),
            delta: 1e-5,
        });
        assert!(matches!(
            corrupt,
            Err(AccountantError::CorruptLedger { .. })
        ));
    }
}
