//! `dp-accountant`: the audit command-line tool (built with `--features cli`).
//!
//! ```text
//! dp-accountant epsilon   --noise-multiplier 1.1 --sampling-rate 0.01 --steps 1000 --delta 1e-5 --json
//! dp-accountant epsilon   --noise-multiplier 0.8 --sample-size 6 --population 60000 --steps 100 --delta 1e-5
//! dp-accountant delta     --noise-multiplier 1.1 --sampling-rate 0.01 --steps 1000 --epsilon 2
//! dp-accountant calibrate --epsilon 1 --delta 1e-5 --sampling-rate 0.01 --steps 1000
//! dp-accountant epsilon   --noise-multiplier 1.1 --sampling-rate 0.01 --steps 1000 --delta 1e-5 --accountant pld
//! dp-accountant zcdp      --rho 0.1 --delta 1e-5
//! dp-accountant replay    LEDGER.json --delta 1e-5
//! ```
//! Bad arguments or input: exit status 2 and a one-line message on stderr that names the flag
//! or file (long values are cut to a short excerpt). A closed stdout (`... | true`) ends the
//! program quietly (status 0); any other write error (`> /dev/full`) is reported with status 1.
//! Infinite answers are written as the string `"inf"` in JSON, with a `"reason"`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use dp_accountant::cli::{
    CliCommand, config_from_flags, describe_error, execute, parse_steps, read_ledger,
    sampling_from_flags,
};

/// Audit a differential-privacy budget (RDP accountant, or another with --accountant).
#[derive(Parser, Debug)]
#[command(name = "dp-accountant", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The accounting method.
#[derive(ValueEnum, Clone, Copy, Debug, Default)]
enum AccountantKind {
    /// Rényi-DP composition with the chosen orders and conversion (the default).
    #[default]
    Rdp,
    /// Privacy-loss distribution (tighter; reports a lower bound too; Poisson or full batch only).
    Pld,
    /// The moments accountant of 003 (integer orders, classic conversion).
    Moments,
    /// 000's zCDP with amplification (Table 1), capped below by RDP (--orders/--classic apply to
    /// that RDP bound).
    Zcdp,
    /// Advanced composition of amplified (eps, delta) steps.
    Advanced,
    /// Linear composition of amplified (eps, delta) steps.
    Linear,
}

impl Common {
    fn config(&self) -> Result<dp_accountant::AccountantConfig, dp_accountant::AccountantError> {
        use dp_accountant::AccountantKind as K;
        let kind = match self.accountant.unwrap_or_default() {
            AccountantKind::Rdp => K::Rdp,
            AccountantKind::Zcdp => K::Zcdp,
            AccountantKind::Pld => K::Pld,
            AccountantKind::Moments => K::Moments,
            AccountantKind::Advanced => K::Advanced,
            AccountantKind::Linear => K::Linear,
        };
        // flags that would be silently ignored are refused
        if !matches!(kind, K::Rdp | K::Zcdp) && (self.orders.is_some() || self.classic) {
            return Err(dp_accountant::AccountantError::IgnoredFlags {
                flags: "--orders and --classic",
                accountant: kind,
            });
        }
        let orders = self.orders.as_deref().unwrap_or("continuous");
        Ok(config_from_flags(orders, self.classic)?.with_accountant(kind))
    }
}

#[derive(Args, Debug)]
struct Common {
    /// Orders: `continuous` (the default), `default` (dp_accounting's 156) or a comma-separated
    /// list (RDP only).
    #[arg(long)]
    orders: Option<String>,
    /// Use the classic Mironov conversion instead of the improved (CKS/Balle) one (RDP only).
    #[arg(long)]
    classic: bool,
    /// The accountant: `rdp` (default), `pld`, `moments`, `zcdp`, `advanced` or `linear`.
    #[arg(long, value_enum)]
    accountant: Option<AccountantKind>,
    /// Print one JSON object instead of a readable report.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct SamplingArgs {
    /// Poisson sampling rate q in (0, 1] (add/remove-one).
    #[arg(long)]
    sampling_rate: Option<f64>,
    /// Fixed batch size m (without replacement, replace-one); needs --population.
    #[arg(long)]
    sample_size: Option<u64>,
    /// Dataset size n for --sample-size.
    #[arg(long)]
    population: Option<u64>,
    /// For a full batch (no sampling flag): state the sensitivity under replace-one.
    #[arg(long)]
    replace_one: bool,
    /// Number of steps (an integer; `1e12` style is accepted when exact).
    #[arg(long, value_parser = parse_steps)]
    steps: u64,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Spent epsilon at a delta.
    #[command(allow_negative_numbers = true)]
    Epsilon {
        /// Noise std / L2 sensitivity.
        #[arg(long)]
        noise_multiplier: f64,
        #[command(flatten)]
        sampling: SamplingArgs,
        /// Target delta in (0, 1).
        #[arg(long)]
        delta: f64,
        #[command(flatten)]
        common: Common,
    },
    /// Delta at an epsilon.
    #[command(allow_negative_numbers = true)]
    Delta {
        /// Noise std / L2 sensitivity.
        #[arg(long)]
        noise_multiplier: f64,
        #[command(flatten)]
        sampling: SamplingArgs,
        /// The epsilon (> 0).
        #[arg(long)]
        epsilon: f64,
        #[command(flatten)]
        common: Common,
    },
    /// Smallest noise multiplier for a target (epsilon, delta).
    #[command(allow_negative_numbers = true)]
    Calibrate {
        /// Target epsilon.
        #[arg(long)]
        epsilon: f64,
        /// Target delta.
        #[arg(long)]
        delta: f64,
        #[command(flatten)]
        sampling: SamplingArgs,
        #[command(flatten)]
        common: Common,
    },
    /// zCDP rho to (epsilon, delta).
    #[command(allow_negative_numbers = true)]
    Zcdp {
        /// zCDP parameter rho (> 0).
        #[arg(long)]
        rho: f64,
        /// Target delta.
        #[arg(long)]
        delta: f64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Replay a ledger file and report its epsilon.
    #[command(allow_negative_numbers = true)]
    Replay {
        /// The ledger JSON file.
        ledger: std::path::PathBuf,
        /// Target delta.
        #[arg(long)]
        delta: f64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// Longest run of non-space characters echoed back in an error message.
const MAX_ECHO: usize = 80;

/// Cuts every long word of `line` to a short excerpt (bad input is never echoed in full).
fn excerpt(line: &str) -> String {
    line.split(' ')
        .map(|w| {
            if w.chars().count() > MAX_ECHO {
                let head: String = w.chars().take(MAX_ECHO).collect();
                format!("{head}... ({} bytes in all)", w.len())
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn fail(message: impl std::fmt::Display) -> ! {
    let text = message.to_string();
    let line: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    let line = line.join(" ");
    let line = excerpt(line.trim_start_matches("error: "));
    eprintln!("dp-accountant: error: {line}");
    std::process::exit(2);
}

fn to_command(cli: Cli) -> Result<(CliCommand, bool), dp_accountant::AccountantError> {
    let sampling = |s: &SamplingArgs| {
        if s.replace_one && (s.sampling_rate.is_some() || s.sample_size.is_some()) {
            return Err(dp_accountant::AccountantError::InconsistentFlags(
                "--replace-one has no effect with a sampling flag (Poisson sampling is \
                 add/remove-one, fixed-size batches are replace-one): give it only for a full batch",
            ));
        }
        sampling_from_flags(s.sampling_rate, s.sample_size, s.population, s.replace_one)
    };
    Ok(match cli.command {
        Command::Epsilon {
            noise_multiplier,
            sampling: s,
            delta,
            common,
        } => (
            CliCommand::Epsilon {
                sampling: sampling(&s)?,
                noise_multiplier,
                steps: s.steps,
                delta,
                config: common.config()?,
            },
            common.json,
        ),
        Command::Delta {
            noise_multiplier,
            sampling: s,
            epsilon,
            common,
        } => (
            CliCommand::Delta {
                sampling: sampling(&s)?,
                noise_multiplier,
                steps: s.steps,
                epsilon,
                config: common.config()?,
            },
            common.json,
        ),
        Command::Calibrate {
            epsilon,
            delta,
            sampling: s,
            common,
        } => (
            CliCommand::Calibrate {
                sampling: sampling(&s)?,
                steps: s.steps,
                epsilon,
                delta,
                config: common.config()?,
            },
            common.json,
        ),
        Command::Zcdp { rho, delta, json } => (CliCommand::Zcdp { rho, delta }, json),
        Command::Replay {
            ledger,
            delta,
            json,
        } => {
            let text = read_ledger(&ledger)?;
            (
                CliCommand::Replay {
                    ledger_json: text,
                    source: ledger.display().to_string(),
                    delta,
                },
                json,
            )
        }
    })
}

/// Writes the answer; a closed pipe ends the program quietly, any other error is reported.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("dp-accountant: error: cannot write the answer to stdout: {e}");
            std::process::exit(1);
        }
    }
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => fail(e.render()),
        },
    };
    let (command, json) = to_command(cli).unwrap_or_else(|e| fail(describe_error(&e)));
    let out = execute(&command).unwrap_or_else(|e| fail(describe_error(&e)));
    if json {
        emit(&out.json.to_string());
    } else {
        emit(&out.text);
    }
}
