#!/usr/bin/env python3
"""Time polyagamma 2.0.2 and this crate's criterion benches in one run, print a Markdown table.

Usage (from the workspace root):
    python3 crates/polya-gamma/benches/compare_polyagamma.py [--quick]

It creates/uses a venv (PG_VENV, default /work/venv-pg), pip-installs polyagamma==2.0.2 and
numpy there, times polyagamma (best of 5 runs of 1e6 draws per workload, numpy's default PCG64),
runs `cargo bench -p polya-gamma --bench sampler` (SmallRng = Xoshiro256++, 10_000 draws per
iteration), times polyagamma again, and reports M draws/s for both (polyagamma: the better of
the before/after timings). Both sides run single-threaded on the same machine in the same run.
It also prints the means polyagamma returns at a few points next to the exact means.
"""
import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
VENV = os.environ.get("PG_VENV", "/work/venv-pg")
PY = os.path.join(VENV, "bin", "python")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BATCH = 10_000

FIXED = [(1.0, z) for z in (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0)] + [
    (b, z) for b in (0.5, 2.5, 10.0, 100.0) for z in (0.0, 2.0)]

TIMER = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    from polyagamma import random_polyagamma
    fixed = json.loads(sys.argv[1])
    n = int(sys.argv[2])
    rng = np.random.default_rng(1)
    out = {}
    def best(f):
        f()
        ts = []
        for _ in range(5):
            t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
        return n / min(ts) / 1e6
    for b, z in fixed:
        out[f"{b}/{z}"] = best(lambda: random_polyagamma(b, z, size=n, random_state=rng))
    zs = 20 * rng.random(n) - 10
    out["gibbs"] = best(lambda: random_polyagamma(1.0, zs, random_state=rng))
    # means polyagamma returns (100k draws) at points where the issue reports problems
    checks = {}
    for b, z in [(1.0, 200.0), (1.0, 400.0), (20.0, 50.0), (2.7, 0.0), (100.0, 800.0)]:
        x = random_polyagamma(b, z, size=100_000, random_state=rng)
        checks[f"{b}/{z}"] = [float(np.mean(x)), float(np.var(x))]
    out["checks"] = checks
    print(json.dumps(out))
""")


def ensure_venv():
    if not os.path.exists(PY):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([PY, "-m", "pip", "install", "-q", "polyagamma==2.0.2", "numpy"], check=True)


def time_polyagamma(n):
    res = subprocess.run([PY, "-c", TIMER, json.dumps(FIXED), str(n)], check=True,
                         capture_output=True, text=True)
    return json.loads(res.stdout)


def criterion(quick):
    args = ["cargo", "bench", "-p", "polya-gamma", "--bench", "sampler", "--"]
    if quick:
        args += ["--warm-up-time", "1", "--measurement-time", "2"]
    subprocess.run(args, cwd=ROOT, check=True, env=dict(os.environ, CARGO_TARGET_DIR=TARGET))

    def rate(group, ident):
        path = os.path.join(TARGET, "criterion", group, ident, "new", "estimates.json")
        with open(path) as fh:
            ns = json.load(fh)["mean"]["point_estimate"]
        return BATCH / ns * 1e3

    out = {}
    for b, z in FIXED:
        if b == 1.0:
            out[f"{b}/{z}"] = rate("pg1", f"{z:g}" if z != int(z) else f"{int(z)}")
        else:
            out[f"{b}/{z}"] = rate("pg_b", os.path.join(f"b{b:g}", f"{z:g}" if z != int(z) else f"{int(z)}"))
    out["gibbs"] = rate("gibbs_b1_per_draw_z", "uniform_z_-10_10")
    return out


def exact_mean_var(b, z):
    import math
    if z == 0:
        return b / 4, b / 24
    m = b * math.tanh(z / 2) / (2 * z)
    e = math.exp(-z)
    v = b * (1 - e * e - 2 * z * e) / (2 * z ** 3 * (1 + e) ** 2)
    return m, v


def main():
    quick = "--quick" in sys.argv
    n = 200_000 if quick else 1_000_000
    ensure_venv()
    before = time_polyagamma(n)
    ours = criterion(quick)
    after = time_polyagamma(n)
    print("\n| workload | pg (this crate) M/s | polyagamma 2.0.2 M/s (before / after) | ratio |")
    print("|---|---|---|---|")
    keys = [f"{b}/{z}" for b, z in FIXED] + ["gibbs"]
    for k in keys:
        theirs = max(before[k], after[k])
        label = "PG(1, z) per-draw z ~ U(-10, 10)" if k == "gibbs" else "PG(%s, %s)" % tuple(k.split("/"))
        print(f"| {label} | {ours[k]:.2f} | {before[k]:.2f} / {after[k]:.2f} | {ours[k] / theirs:.2f} |")
    print("\npolyagamma 2.0.2 sample mean / variance (100k draws) vs exact:")
    for k, (m, v) in after["checks"].items():
        b, z = map(float, k.split("/"))
        em, ev = exact_mean_var(b, z)
        print(f"- PG({b:g}, {z:g}): mean {m:.6g} (exact {em:.6g}), variance {v:.4g} (exact {ev:.4g})")


if __name__ == "__main__":
    main()
