//! Helpers shared by the `dp-bayes` command-line tests (`tests/cli_*.rs`): the binary run in a
//! new process, fresh temporary directories, the success / typed-error expectations and JSON
//! reading. Each test file includes it with `mod common;`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// A fresh temporary directory for one test, removed when the returned guard is dropped (at the
/// end of the test, passing or failing). Use `guard.path()` for the directory.
pub fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("dp-bayes-{name}-"))
        .tempdir()
        .unwrap()
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs the `dp-bayes` binary with `args` in a new process.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dp-bayes"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs the binary and expects success (stderr shown otherwise).
pub fn run_ok(args: &[&str]) -> Output {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs the binary, expects success and one JSON object on stdout.
pub fn ok_json(args: &[&str]) -> Value {
    serde_json::from_slice(&run_ok(args).stdout).expect("one JSON object")
}

/// Runs the binary, expects exit code 2, no panic, nothing on stdout and a stderr containing
/// every one of `needles`; returns the stderr.
#[allow(dead_code)] // not used by cli_roundtrip
pub fn fails_with(args: &[&str], needles: &[&str]) -> String {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed a result");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in: {err}");
    }
    err
}

/// A JSON file read whole.
#[allow(dead_code)] // not used by cli_errors
pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `replay LEDGER --delta 1e-5 --json` in a new process: its epsilon equals `epsilon` bit for
/// bit.
#[allow(dead_code)] // not used by cli_errors, cli_lda
pub fn replays_to(ledger: &Path, epsilon: f64) {
    let rep = ok_json(&["replay", s(ledger), "--delta", "1e-5", "--json"]);
    assert_eq!(
        rep["epsilon"].as_f64().unwrap().to_bits(),
        epsilon.to_bits(),
        "replay of {} vs the fit",
        ledger.display()
    );
}

/// Writes `n` images of `rows` x `cols` (bytes 0 or 255) in IDX format: two noisy prototypes (a bar on the
/// left or on the top), from a small linear congruential generator seeded with `seed`.
#[allow(dead_code)] // used by the SBN tests only
pub fn write_idx(path: &Path, n: usize, rows: usize, cols: usize, seed: u64) {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let mut bytes = vec![0u8, 0, 8, 3];
    for v in [n, rows, cols] {
        bytes.extend((v as u32).to_be_bytes());
    }
    for _ in 0..n {
        let left = next() % 2 == 0;
        for r in 0..rows {
            for c in 0..cols {
                let on = if left { c == 0 } else { r == 0 };
                let flip = next() % 10 == 0;
                bytes.push(if on != flip { 255 } else { 0 });
            }
        }
    }
    std::fs::write(path, bytes).unwrap();
}
