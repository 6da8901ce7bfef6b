#!/usr/bin/env python3
"""Instructions per draw (callgrind) of this crate and of polyagamma 2.0.2, load-independent.

Usage (from the workspace root; needs valgrind):
    python3 crates/polya-gamma/benches/instructions.py

Each workload is run twice under `valgrind --tool=callgrind`, with 1 and with 1 + N draws
(N = 100 000); instructions per draw = (difference) / N, so start-up and setup cancel.
This crate: `examples/draw_loop.rs` (one `PolyaGamma::fill` with `SmallRng`, or
`PolyaGammaShape::fill_for_tilts` for the Gibbs workload). polyagamma 2.0.2: one
`random_polyagamma(b, z, size=n, random_state=np.random.default_rng(1))` call in the venv
(PG_VENV, default /work/venv-pg, as made by compare_polyagamma.py), counting only the
instructions inside its C entry points `pgm_random_polyagamma_fill` (one z) and
`pgm_random_polyagamma_fill2` (a z per draw) (callgrind --toggle-collect:
the sampler and numpy's PCG64 it calls, not the Python interpreter, whose start-up varies by a
few million instructions from run to run). For the Gibbs workload both sides generate the `z_i`
in both runs and draw only in the second.

Instruction counts are not times (a libm `exp` and a shift both count one per instruction
executed), but they do not move with the machine's load, which on a shared machine can
change wall-clock rates several-fold within minutes.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
VENV = os.environ.get("PG_VENV", "/work/venv-pg")
PY = os.path.join(VENV, "bin", "python")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
N = 100_000

FIXED = [(1.0, z) for z in (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0)] + [
    (b, z) for b in (0.5, 2.5, 10.0, 100.0) for z in (0.0, 2.0)]

PY_FIXED = ("import sys, numpy as np; from polyagamma import random_polyagamma; "
            "b, z, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]); "
            "rng = np.random.default_rng(1); random_polyagamma(b, z, size=n, random_state=rng)")
PY_GIBBS = ("import sys, numpy as np; from polyagamma import random_polyagamma; "
            "n, draw = int(sys.argv[1]), sys.argv[2] == 'draw'; "
            "rng = np.random.default_rng(1); zs = 20 * rng.random(n) - 10\n"
            "if draw: random_polyagamma(1.0, zs, random_state=rng)")


def instructions(argv, only=None):
    """Instructions executed by `argv`; with `only`, just those inside functions matching it."""
    extra = [f"--toggle-collect={name}" for name in only or []]
    res = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + extra + argv,
                         capture_output=True, text=True, check=True)
    m = re.search(r"refs:\s+([\d,]+)", res.stderr)
    return int(m.group(1).replace(",", ""))


def per_draw(run_small, run_big, only=None):
    return (instructions(run_big, only) - instructions(run_small, only)) / N


def main():
    subprocess.run(["cargo", "build", "--release", "-p", "polya-gamma", "--example", "draw_loop"],
                   cwd=ROOT, check=True, env=dict(os.environ, CARGO_TARGET_DIR=TARGET))
    ours_bin = os.path.join(TARGET, "release", "examples", "draw_loop")
    print("| workload | this crate instr/draw | polyagamma 2.0.2 instr/draw | ratio (theirs / ours) |")
    print("|---|---:|---:|---:|")
    rows = [(f"PG({b:g}, {z:g})", [ours_bin, str(b), str(z), "1"], [ours_bin, str(b), str(z), str(1 + N)],
             [PY, "-c", PY_FIXED, str(b), str(z), "1"], [PY, "-c", PY_FIXED, str(b), str(z), str(1 + N)])
            for b, z in FIXED]
    rows.append(("PG(1, z), new z per draw, z ~ U(-10, 10)",
                 [ours_bin, "gibbs", str(N), "skip"], [ours_bin, "gibbs", str(N)],
                 [PY, "-c", PY_GIBBS, str(N), "skip"], [PY, "-c", PY_GIBBS, str(N), "draw"]))
    for label, o_small, o_big, t_small, t_big in rows:
        ours = per_draw(o_small, o_big)
        # Exact names: collection toggles on entry, so nested matches would switch it off.
        theirs = per_draw(t_small, t_big,
                          only=["pgm_random_polyagamma_fill", "pgm_random_polyagamma_fill2"])
        print(f"| {label} | {ours:.0f} | {theirs:.0f} | {theirs / ours:.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
