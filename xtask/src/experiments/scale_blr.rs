//! Issue 21, goal 1: one private BLR iteration at the stroke data's dimension (d = 4,146, 10,000
//! sparse rows) under 25 s wall and 600 MB peak, against the before-figure. The `blr` example
//! writes the stroke-shaped LIBSVM file into the output directory (removed afterwards) and runs
//! the one iteration of docs/benchmarks.md as a child process: whole-process wall clock, and the
//! peak resident memory the child reports (`VmHWM`). Full mode: 3 repetitions (median), each
//! followed by numpy's `eigh` at the same d (`benches/eigh_numpy.py`, when python3 has numpy)
//! and dp-core's PSD projection alone (faer's eigensolver, in xtask's process). Quick mode: one
//! iteration, nothing else.

use std::path::Path;
use std::time::Instant;

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde_json::{Value, json};

use super::child::{self, Cleanup};
use super::papers_vips::blr_setting::median;
use super::regression::{commit, load_average};
use crate::context::Context;
use crate::report::{Section, markdown_table};

const DIM: usize = 4146;
/// The public radius `sqrt(80)` the example prints for the stroke-shaped rows.
const RADIUS: &str = "8.94427190999916";
const REPS_FULL: usize = 3;
/// Issue 21's goal: wall seconds and peak bytes (MB, 10^6).
const GOAL_SECONDS: f64 = 25.0;
const GOAL_BYTES: f64 = 600e6;
/// The before-figure (docs/benchmarks.md, "Scale: the stroke data's dimension").
const BEFORE: &str = "49.5 s wall, 1,691 MiB peak (740a464, load 3.0)";
const NUMPY_SCRIPT: &str = "crates/vips-models/benches/eigh_numpy.py";

/// The iteration's arguments after `--libsvm FILE`.
fn iteration_args(file: &Path) -> Vec<String> {
    let mut a = vec!["--libsvm".to_string(), file.display().to_string()];
    a.extend(
        [
            "--dim",
            "4146",
            "--radius",
            RADIUS,
            "--population",
            "10000",
            "--iterations",
            "1",
            "--epsilon",
            "1",
            "--delta",
            "1e-5",
            "--noise-seed",
            "1",
            "--json",
            "--diagnostics",
        ]
        .map(String::from),
    );
    a
}

/// numpy's `eigh` at `DIM`, one timing, or why there is none.
fn numpy_eigh(ctx: &Context) -> Result<(f64, String), String> {
    let python = Path::new("python3");
    child::run(python, &["-c".into(), "import numpy".into()])
        .map_err(|_| "python3 with numpy is not available on this machine".to_string())?;
    let script = ctx.root.join(NUMPY_SCRIPT).display().to_string();
    let args = [
        script,
        "--dim".into(),
        DIM.to_string(),
        "--repeats".into(),
        "1".into(),
    ];
    let out = child::run(python, &args).map_err(|e| format!("{NUMPY_SCRIPT} failed: {e:#}"))?;
    let seconds = out.json["runs"][0]["seconds"]
        .as_f64()
        .ok_or_else(|| format!("{NUMPY_SCRIPT} printed no timing"))?;
    let about = format!("numpy {}, {}", out.json["numpy"], out.json["blas"]).replace('"', "");
    Ok((seconds, about))
}

/// dp-core's Analyze-Gauss projection (faer's eigendecomposition and the rebuild) of a dense
/// symmetric Gaussian `DIM x DIM` matrix: seconds and eigenvalues raised.
fn faer_projection(seed: u64) -> anyhow::Result<(f64, usize)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut m = DMatrix::<f64>::zeros(DIM, DIM);
    for j in 0..DIM {
        for i in 0..=j {
            let v: f64 = StandardNormal.sample(&mut rng);
            m[(i, j)] = v;
            m[(j, i)] = v;
        }
    }
    let started = Instant::now();
    let p = dp_core::project_to_positive_definite(&mut m, 1e-9)?;
    Ok((started.elapsed().as_secs_f64(), p.eigenvalues_raised))
}

fn mib(kib: f64) -> String {
    format!("{:.0} MiB ({:.0} MB)", kib / 1024.0, kib * 1.024e-3)
}

/// Runs the section.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let load_before = load_average();
    let bin = child::build_example(ctx, "vips-models", "blr")?;
    let tmp = ctx.output("scale_blr_tmp");
    std::fs::create_dir_all(&tmp)?;
    let mut cleanup = Cleanup::default();
    cleanup.add(&tmp);
    let file = tmp.join("stroke.libsvm");
    let written = child::run(
        &bin,
        &["--synthetic-stroke".into(), file.display().to_string()],
    )?;
    let args = iteration_args(&file);
    let reps = if ctx.quick { 1 } else { REPS_FULL };
    let (mut rows, mut runs, mut walls, mut peaks) = (vec![], vec![], vec![], vec![]);
    let (mut numpy_note, mut numpy_times, mut faer_times) = (None, vec![], vec![]);
    for rep in 1..=reps {
        let load = load_average();
        let out = child::run(&bin, &args)?;
        let d = &out.json["diagnostics"];
        // The goal is this process's peak: an example that cannot report it fails the section.
        let peak = child::number(d, "peak_rss_kib")?;
        walls.push(out.wall);
        peaks.push(peak);
        let mut row = vec![
            rep.to_string(),
            load.split_whitespace().next().unwrap_or("?").to_string(),
            format!("{:.1} s", out.wall),
            format!("{:.1} s", child::number(d, "seconds")?),
            d["process_cpu_seconds"]
                .as_f64()
                .map_or("- (not reported here)".to_string(), |c| format!("{c:.1} s")),
            mib(peak),
            out.json["eigenvalues_raised_last_release"].to_string(),
        ];
        let mut record =
            json!({ "load_before": load, "wall_seconds": out.wall, "output": out.json });
        if !ctx.quick {
            match numpy_eigh(ctx) {
                Ok((s, about)) => {
                    numpy_times.push(s);
                    numpy_note = Some(about);
                    row.push(format!("{s:.1} s"));
                    record["numpy_eigh_seconds"] = json!(s);
                }
                Err(why) => {
                    numpy_note.get_or_insert(why);
                    row.push("-".into());
                }
            }
            let (s, raised) = faer_projection(rep as u64)?;
            faer_times.push(s);
            row.push(format!("{s:.1} s ({raised} raised)"));
            record["faer_projection_seconds"] = json!(s);
        }
        rows.push(row);
        runs.push(record);
    }
    drop(cleanup);
    let load_after = load_average();
    let wall = median(&walls);
    let peak_kib = median(&peaks);
    let peak_bytes = peak_kib * 1024.0;
    let verdict = |ok: bool| if ok { "met" } else { "not met" };
    let mut header = vec![
        "run",
        "load (1 min) before",
        "wall (whole process)",
        "fit",
        "process CPU",
        "peak RSS",
        "eigenvalues raised",
    ];
    if !ctx.quick {
        header.extend([
            "numpy `eigh` alone",
            "faer projection alone (evd + rebuild)",
        ]);
    }
    let numpy_line = match (&numpy_note, ctx.quick) {
        (_, true) => {
            "Quick mode: numpy's `eigh` and the projection alone are run in full mode only."
                .to_string()
        }
        (Some(n), false) if numpy_times.is_empty() => format!("numpy's `eigh` was not timed: {n}."),
        (Some(n), false) => format!(
            "numpy's `eigh` ({n}; `python3 {NUMPY_SCRIPT} --dim {DIM} --repeats 1`, a dense \
             symmetric Gaussian matrix) median {:.1} s; dp-core's projection alone (faer \
             `self_adjoint_evd` and the rebuild, in xtask's process, the same kind of matrix) \
             median {:.1} s.",
            median(&numpy_times),
            median(&faer_times)
        ),
        (None, false) => String::new(),
    };
    let command = format!(
        "{} --synthetic-stroke FILE; {} {}",
        bin.display(),
        bin.display(),
        iteration_args(Path::new("FILE")).join(" ")
    );
    let mut section = Section::new(
        "scale_blr",
        "BLR at the stroke data's dimension: one private iteration (issue 21, goal 1)",
        if ctx.quick {
            "cargo xtask bench --quick --only scale_blr --no-criterion"
        } else {
            "cargo xtask bench --only scale_blr --no-criterion"
        },
    );
    section.seed = "1 (rows, noise); numpy matrix seed 0, faer matrix seed = run".into();
    section.data = format!(
        "synthetic stroke-shaped LIBSVM rows (10,000 x d = {DIM}, ~39 active features), written \
         by the example ({:.2} s) and removed afterwards",
        written.wall
    );
    section.body = format!(
        "Goal (issue 21): one private iteration at d = 4,146 (load, 80/20 split, E-step, \
         Analyze-Gauss release with PSD projection, M-step, held-out metrics) under \
         {GOAL_SECONDS} s wall and under 600 MB peak. Before: {BEFORE}. Machine: {}; commit {}; \
         load average {load_before} before, {load_after} after. {} run(s), the example as a child \
         process; peak RSS is the child's own `VmHWM`.\n\n{}\n\nMedian: **{wall:.1} s wall** \
         (goal < {GOAL_SECONDS} s: {}), **peak {}** (goal < 600 MB: {}). {numpy_line}\n\nCommand: \
         `{command}`\n",
        child::machine(),
        commit(&ctx.root),
        reps,
        markdown_table(&header, &rows),
        verdict(wall < GOAL_SECONDS),
        mib(peak_kib),
        verdict(peak_bytes < GOAL_BYTES),
    );
    section.figures = json!({
        "dim": DIM, "runs": runs, "median_wall_seconds": wall, "median_peak_rss_kib": peak_kib,
        "goal_wall_seconds": GOAL_SECONDS, "goal_peak_bytes": GOAL_BYTES, "before": BEFORE,
        "numpy_eigh_seconds": numpy_times, "faer_projection_seconds": faer_times,
        "numpy": numpy_note.map_or(Value::Null, Value::from),
        "load_before": load_before, "load_after": load_after, "machine": child::machine(),
    });
    Ok(section)
}
