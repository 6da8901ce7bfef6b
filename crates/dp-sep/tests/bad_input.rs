//! Issue 17: one test per class of bad input, for the loaders, the model configs and the two
//! examples (run as the built binaries `target/<profile>/examples/{mog,pbp}`, which `cargo test`
//! builds).

mod common;
use common::TempDirPath;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use dp_sep::SepError;
use dp_sep::data::csv_loader::load_csv;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{Dataset, PublicRanges, Standardizer};
use dp_sep::limits;
use dp_sep::mog::{Family, MogModel, try_generate};
use dp_sep::pbp::{PbpConfig, PbpModel, run_pbp};
use rand::SeedableRng;

fn temp_dir(tag: &str) -> TempDirPath {
    TempDirPath::new(&format!("dp_sep_bad_{tag}"))
}

fn folder(tag: &str, data: &str, train: &str, test: &str) -> TempDirPath {
    let dir = temp_dir(tag);
    fs::write(dir.join("data.txt"), data).unwrap();
    fs::write(dir.join("index_features.txt"), "0\n1\n").unwrap();
    fs::write(dir.join("index_target.txt"), "2\n").unwrap();
    fs::write(dir.join("n_splits.txt"), "1\n").unwrap();
    fs::write(dir.join("index_train_0.txt"), train).unwrap();
    fs::write(dir.join("index_test_0.txt"), test).unwrap();
    dir
}

const DATA: &str = "1 2 3\n4 5 6\n7 8 9\n10 11 12\n";

fn split_err(tag: &str, train: &str, test: &str) -> String {
    let dir = folder(tag, DATA, train, test);
    let err = SplitFolder::load(&dir).unwrap().split(0).unwrap_err();
    assert!(matches!(err, SepError::Corrupt { .. }), "{err}");
    err.to_string()
}

#[test]
fn splits_refuse_duplicates_out_of_range_and_overlap_naming_file_and_line() {
    let e = split_err("dup", "0\n1\n1\n", "2\n");
    assert!(
        e.contains("index_train_0.txt") && e.contains("line 3") && e.contains("twice"),
        "{e}"
    );
    let e = split_err("range", "0\n1000000000000\n", "2\n");
    assert!(
        e.contains("index_train_0.txt") && e.contains("line 2") && e.contains("out of range"),
        "{e}"
    );
    let e = split_err("overlap", "0\n1\n", "3\n1\n");
    assert!(
        e.contains("index_test_0.txt") && e.contains("line 2") && e.contains("both"),
        "{e}"
    );
    let e = split_err("test_range", "0\n1\n", "9\n");
    assert!(
        e.contains("index_test_0.txt") && e.contains("line 1"),
        "{e}"
    );
    let e = split_err("empty_test", "0\n1\n", "\n");
    assert!(
        e.contains("index_test_0.txt") && e.contains("no rows"),
        "{e}"
    );
}

#[test]
fn constant_target_and_bad_cells_are_typed_errors_naming_file_and_line() {
    let dir = folder("const", "1 2 5\n4 5 5\n7 8 5\n", "0\n1\n", "2\n");
    let e = SplitFolder::load(&dir)
        .unwrap()
        .split(0)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("index_train_0.txt") && e.contains("same value"),
        "{e}"
    );
    for (tag, cell) in [("nan", "NaN"), ("inf", "inf"), ("big", "1e400")] {
        let dir = folder(tag, &format!("1 2 3\n\n4 {cell} 6\n"), "0\n", "1\n");
        let e = SplitFolder::load(&dir).unwrap_err();
        assert!(
            matches!(
                e,
                SepError::NonFinite {
                    row: 1,
                    column: 1,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("data.txt line 3"), "{e}");
    }
    // A finite cell near f64::MAX neither overflows standardisation nor yields NaN.
    let train = Dataset::new(vec![1e308, -1e308, 1e308], vec![1.0, 2.0, 3.0], 1).unwrap();
    let z = Standardizer::fit(&train).transform(&train);
    assert!((0..3).all(|i| z.row(i)[0].is_finite()));
}

#[test]
fn a_long_line_or_a_large_file_is_refused_with_the_limit() {
    let long = format!("1 2 {}\n", "3".repeat(limits::MAX_LINE_BYTES + 10));
    let dir = folder("long", &long, "0\n", "0\n");
    let e = SplitFolder::load(&dir).unwrap_err();
    assert!(matches!(e, SepError::TooLarge { .. }), "{e}");
    assert!(e.to_string().contains("data.txt line 1"), "{e}");
    let csv = dir.join("long.csv");
    fs::write(
        &csv,
        format!("a,b\n1,{}\n", "2".repeat(limits::MAX_LINE_BYTES + 10)),
    )
    .unwrap();
    let e = load_csv(&csv, 1, true).unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
    // File size: a sparse file larger than the limit is refused from its metadata.
    let big = dir.join("big.csv");
    let f = fs::File::create(&big).unwrap();
    f.set_len(limits::MAX_FILE_BYTES + 1).unwrap();
    let e = load_csv(&big, 0, false).unwrap_err();
    assert!(matches!(e, SepError::TooLarge { .. }), "{e}");
}

#[test]
fn messages_quote_only_a_short_excerpt_of_bad_input() {
    let junk = "x".repeat(10_000);
    let dir = folder("excerpt", &format!("1 2 {junk}\n"), "0\n", "0\n");
    let e = SplitFolder::load(&dir).unwrap_err().to_string();
    assert!(e.contains("line 1") && e.len() < 300, "{} chars", e.len());
    let csv = dir.join("junk.csv");
    fs::write(&csv, format!("1,{junk}\n")).unwrap();
    let e = load_csv(&csv, 0, false).unwrap_err().to_string();
    assert!(e.contains("line 1") && e.len() < 300, "{} chars", e.len());
}

#[test]
fn ranges_files_must_match_columns_by_name() {
    let dir = temp_dir("ranges");
    let path = dir.join("r.json");
    let write = |ranges: &str| {
        fs::write(
            &path,
            format!(r#"{{"columns": ["a", "b", "y"], "ranges": {{{ranges}}}}}"#),
        )
        .unwrap();
    };
    let ok = r#""a": {"lower": 0, "upper": 1}, "b": {"lower": 0, "upper": 2}, "y": {"lower": 0, "upper": 3}"#;
    write(ok);
    let r = PublicRanges::from_file_by_index(&path, 3, &[1, 0], 2).unwrap();
    assert_eq!(
        r.features()[0].upper,
        2.0,
        "matched by name, not by position"
    );
    write(&format!(r#"{ok}, "zz": {{"lower": 0, "upper": 1}}"#));
    let e = PublicRanges::from_file_by_index(&path, 3, &[0, 1], 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"zz\"") && e.contains("r.json"), "{e}");
    write(r#""a": {"lower": 0, "upper": 1}, "y": {"lower": 0, "upper": 3}"#);
    let e = PublicRanges::from_file_by_index(&path, 3, &[0, 1], 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"b\""), "{e}");
    let names = ["a".to_string(), "b".to_string()];
    write(&format!(r#"{ok}, "c": {{"lower": 0, "upper": 1}}"#));
    let e = PublicRanges::from_file(&path, &names, "y")
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"c\""), "{e}");
}

#[test]
fn model_configs_refuse_zero_and_huge_sizes_before_allocating() {
    assert!(matches!(
        MogModel::new(0, 4, 0.5, Family::Full),
        Err(SepError::InvalidParameter { .. })
    ));
    let e = MogModel::new(4, 100_000, 0.5, Family::Full).unwrap_err();
    assert!(
        matches!(e, SepError::TooLarge { .. }) && e.to_string().contains("TB"),
        "{e}"
    );
    assert!(MogModel::new(usize::MAX, usize::MAX, 0.5, Family::Diagonal).is_err());
    let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(0);
    assert!(try_generate(10, 0, 2, 0.5, &mut rng).is_err());
    assert!(matches!(
        try_generate(usize::MAX, 2, 2, 0.5, &mut rng),
        Err(SepError::TooLarge { .. })
    ));
    assert!(matches!(
        PbpModel::try_new(3, &[0]),
        Err(SepError::InvalidParameter { .. })
    ));
    assert!(matches!(
        PbpModel::try_new(11, &[1_000_000]),
        Err(SepError::TooLarge { .. })
    ));
    assert!(PbpModel::try_new(usize::MAX, &[usize::MAX]).is_err());
    let train = Dataset::new(vec![0.0, 1.0, 2.0, 3.0], vec![0.0, 1.0, 0.5, 2.0], 1).unwrap();
    assert!(matches!(
        PbpConfig::builder().epochs(0).build(),
        Err(SepError::InvalidParameter { name: "epochs", .. })
    ));
    let zero_hidden = PbpConfig::builder().hidden(vec![0]).build().unwrap();
    assert!(matches!(
        run_pbp(&train, &train, &zero_hidden),
        Err(SepError::InvalidParameter { .. })
    ));
    // Test rows of another width than the training rows.
    let wide = Dataset::new(vec![0.0, 1.0], vec![0.0], 2).unwrap();
    assert!(matches!(
        run_pbp(&train, &wide, &PbpConfig::builder().build().unwrap()),
        Err(SepError::DimensionMismatch { .. })
    ));
}

#[test]
fn step_counts_and_tiny_budgets_are_bounded() {
    assert!(limits::check_steps("--epochs", 100, 1000, false).is_ok());
    let e = limits::check_steps("--epochs", 1_000_000_000_000, 1000, false).unwrap_err();
    assert!(e.to_string().contains("--allow-long-run"), "{e}");
    assert!(limits::check_steps("--epochs", 1_000_000_000_000, 1000, true).is_ok());
    assert!(limits::check_steps("--epochs", usize::MAX, usize::MAX, true).is_err());
    let plan = dp_sep::WallPlan::builder()
        .population(10)
        .dim(2)
        .budget(1e-300, 1e-5)
        .clip(1.0)
        .steps(10)
        .sampling(dp_sep::SamplingScheme::UniformSingle)
        .rng(dp_core::RngPolicy::Seeded { seed: 1 })
        .build();
    let e = plan.unwrap_err();
    assert!(
        matches!(
            e,
            SepError::InvalidParameter {
                name: "epsilon",
                ..
            }
        ),
        "{e}"
    );
    let huge = dp_sep::WallPlan::builder()
        .population(usize::MAX)
        .dim(2)
        .budget(1.0, 1e-5)
        .clip(1.0)
        .steps(10)
        .build();
    assert!(matches!(huge, Err(SepError::TooLarge { .. })));
}

/// A fixed-size batch scheme is accepted by the wall plan (DP-SEP's `Batching::FixedSize`,
/// issue 18) and refused by the non-private runner, with the scheme kept in the error.
#[test]
fn batch_sampling_schemes_are_refused() {
    let fixed_plan = dp_sep::SamplingScheme::fixed_size(3).unwrap();
    let plan = dp_sep::WallPlan::builder()
        .population(10)
        .dim(2)
        .budget(1.0, 1e-5)
        .clip(1.0)
        .steps(10)
        .sampling(fixed_plan)
        .rng(dp_core::RngPolicy::Seeded { seed: 1 })
        .build();
    assert_eq!(plan.unwrap().sampling(), fixed_plan);
    let mut model = MogModel::new(1, 1, 0.5, Family::Diagonal).unwrap();
    let prior = model.prior();
    let mut state = dp_sep::SepState::new(prior.clone(), vec![0.0; prior.len()], 3).unwrap();
    let fixed = dp_sep::SamplingScheme::fixed_size(2).unwrap();
    let e = dp_sep::sep::run_sep(
        &mut model,
        &mut state,
        &[vec![0.0], vec![1.0], vec![2.0]],
        &dp_sep::SepConfig::builder().build().unwrap(),
        1,
        fixed,
        &mut rand::rngs::ChaCha20Rng::seed_from_u64(0),
    )
    .unwrap_err();
    assert!(
        matches!(e, SepError::UnsupportedSampling { scheme } if scheme == fixed),
        "{e}"
    );
}

// ---- the examples ----

fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let path = profile_dir.join("examples").join(name);
    assert!(
        path.exists(),
        "{} not built (cargo test builds examples)",
        path.display()
    );
    path
}

fn run(name: &str, args: &[&str]) -> Output {
    Command::new(example(name)).args(args).output().unwrap()
}

fn assert_usage(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert!(err.contains(needle), "{needle:?} not in {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn examples_refuse_bad_flags_with_status_2_naming_the_flag() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("mog", &["--dim", "100000"], "--dim 100000"),
        ("mog", &["--components", "1000000000"], "--components"),
        ("mog", &["--components", "0"], "--components 0"),
        ("mog", &["--epsilon", "-1"], "must be > 0"),
        ("mog", &["--epsilon", "1e-300"], "--epsilon 1e-300"),
        ("mog", &["--delta", "1e-6"], "--delta"),
        ("mog", &["--noise-seed", "3"], "--noise-seed"),
        ("mog", &["--epochs", "1000000000000"], "--allow-long-run"),
        ("mog", &["--n", "100000000000"], "--n 100000000000"),
        ("mog", &["--family", "x"], "--family"),
        ("mog", &["--s", "NaN"], "--s"),
        ("mog", &["--bogus"], "--bogus"),
        ("mog", &["--batch-size", "8"], "--batch-size"),
        ("mog", &["--one-record"], "--one-record"),
        (
            "mog",
            &["--epsilon", "1", "--one-record", "--batch-size", "8"],
            "--one-record",
        ),
        (
            "mog",
            &["--epsilon", "1", "--batch-size", "0"],
            "--batch-size 0",
        ),
        (
            "mog",
            &["--epsilon", "1", "--n", "100", "--batch-size", "101"],
            "--batch-size 101",
        ),
        ("mog", &["--clipping", "whitened"], "--clipping"),
        (
            "mog",
            &["--epsilon", "1", "--one-record", "--clipping", "value"],
            "--clipping",
        ),
        (
            "mog",
            &["--epsilon", "1", "--clipping", "gradient"],
            "--clipping \"gradient\"",
        ),
        (
            "mog",
            &["--epsilon", "1", "--clipping", "whitened", "--compare-sep"],
            "--compare-sep",
        ),
        ("mog", &["--epsilon", "1", "--compare-sep"], "--compare-sep"),
        ("pbp", &["--uci", "/x", "--batch-size", "8"], "--batch-size"),
        ("pbp", &["--uci", "/x", "--one-record"], "--one-record"),
        (
            "pbp",
            &["--uci", "/x", "--clipping", "innovation"],
            "--clipping",
        ),
        (
            "pbp",
            &["--uci", "/x", "--average-tail", "0.5"],
            "--average-tail",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--population",
                "50",
                "--clipping",
                "gradient",
            ],
            "--clipping \"gradient\"",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--population",
                "50",
                "--one-record",
                "--clipping",
                "innovation",
            ],
            "--clipping",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--population",
                "50",
                "--clipping",
                "whitened",
                "--compare-sep",
            ],
            "--compare-sep",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--population",
                "50",
                "--one-record",
                "--batch-size",
                "5",
            ],
            "--one-record",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--population",
                "50",
                "--sampling",
                "shuffled",
            ],
            "--sampling",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--clip",
                "1",
                "--population",
                "50",
                "--batch-size",
                "0",
            ],
            "--batch-size 0",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--clip",
                "1",
                "--population",
                "50",
                "--batch-size",
                "51",
            ],
            "--batch-size 51",
        ),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--epsilon",
                "1",
                "--clip",
                "1",
                "--population",
                "50",
                "--batch-size",
                "5",
                "--sampling",
                "uniform",
            ],
            "--sampling",
        ),
        (
            "pbp",
            &["--uci", "/nonexistent", "--epsilon", "-1"],
            "must be > 0",
        ),
        ("pbp", &["--uci", "/nonexistent"], "--uci /nonexistent"),
        ("pbp", &["--uci", "/x", "--population", "5"], "--population"),
        ("pbp", &["--uci", "/x", "--noise-seed", "5"], "--noise-seed"),
        ("pbp", &["--uci", "/x", "--hidden", "0"], "--hidden 0"),
        (
            "pbp",
            &[
                "--uci",
                "/x",
                "--ranges",
                "r.json",
                "--feature-range",
                "0:1",
            ],
            "--ranges",
        ),
        (
            "pbp",
            &["--uci", "/x", "--epsilon", "1", "--clip", "1"],
            "--population",
        ),
        (
            "pbp",
            &["--uci", "/x", "--method", "ep", "--clip", "1"],
            "--clip",
        ),
    ];
    for (name, args, needle) in cases {
        assert_usage(&run(name, args), needle);
    }
}

#[test]
fn pbp_example_names_the_file_and_line_of_bad_folders() {
    let dir = folder("ex_dup", DATA, "0\n1\n1\n", "2\n");
    let d = dir.to_str().unwrap();
    assert_usage(&run("pbp", &["--uci", d]), "index_train_0.txt");
    let dir = folder("ex_big", "1 2 3\n4 5 6\n7 8 9\n", "0\n1\n", "2\n");
    let d = dir.to_str().unwrap();
    assert_usage(
        &run("pbp", &["--uci", d, "--hidden", "100000000"]),
        "--hidden 100000000",
    );
    assert_usage(
        &run("pbp", &["--uci", d, "--split", "1000000000000"]),
        "--split",
    );
}

fn piped(name: &str, args: &[&str], reader: &str) -> Output {
    let mut child = Command::new(example(name))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // The reader closes the pipe at once (`| true`) or after one byte (`| head -c 1`).
    if reader == "one byte" {
        use std::io::Read;
        let mut b = [0u8; 1];
        let mut s = stdout;
        let _ = s.read(&mut b);
        drop(s);
    } else {
        drop(stdout);
    }
    child.wait_with_output().unwrap()
}

#[test]
fn examples_exit_quietly_on_a_closed_pipe_and_fail_typed_on_a_full_disk() {
    let args = ["--epochs", "1", "--n", "40"];
    for reader in ["none", "one byte"] {
        let out = piped("mog", &args, reader);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{reader}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    if Path::new("/dev/full").exists() {
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(example("mog"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("writing the result") && !err.contains("panicked"),
            "{err}"
        );
    }
}

#[test]
fn a_mog_run_prints_no_null_or_nan() {
    let out = run(
        "mog",
        &[
            "--epochs",
            "1",
            "--n",
            "40",
            "--diagnostics",
            "--gibbs-samples",
            "10",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("null") && !text.contains("NaN"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for key in [
        "posterior_means",
        "f_norm_vs_generating_means",
        "epsilon",
        "diagnostics",
    ] {
        assert!(v.get(key).is_some(), "{key} missing");
    }
}

/// Ctrl-C (SIGINT) stops a long run after its current epoch: exit 130, no result on stdout, no
/// panic. (Unix only: the signal is sent with `kill -INT`.)
#[cfg(unix)]
#[test]
fn ctrl_c_stops_a_long_run_cleanly() {
    let child = Command::new(example("mog"))
        .args(["--epochs", "1000000", "--allow-long-run", "--n", "200"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Give the example time to install its handler (a signal before that would kill it, which
    // the assertion below reports rather than hides).
    std::thread::sleep(std::time::Duration::from_secs(2));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "stderr: {err}");
    assert!(
        err.contains("interrupted") && !err.contains("panicked"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// Parameters that are not a distribution, and empty inputs, come back as typed errors with
/// fixed reasons (no value of the vector); only the former is not the caller's input.
#[test]
fn improper_natural_parameters_and_empty_inputs_are_typed() {
    let model = MogModel::new(2, 2, 0.5, Family::Diagonal).unwrap();
    let mut theta = model.prior();
    theta.iter_mut().for_each(|v| *v = -*v); // every precision negative
    let e = model.moments(&theta).unwrap_err();
    assert!(
        matches!(e, SepError::InvalidNaturalParameters(reason) if !reason.contains('-')),
        "{e}"
    );
    assert!(!e.is_input_error());
    assert!(matches!(
        dp_sep::SepState::new(vec![f64::NAN, 1.0], vec![0.0, 0.0], 3),
        Err(SepError::InvalidNaturalParameters(
            "non-finite prior or factor"
        ))
    ));
    let e = Dataset::new(vec![], vec![], 2).unwrap_err();
    assert!(matches!(e, SepError::Empty(_)), "{e}");
    assert!(e.is_input_error());
}
