#!/usr/bin/env python3
"""Compare this crate's sampler with polyagamma 2.0.2 in one run, interleaved, print Markdown.

Usage (from the workspace root):
    python3 crates/polya-gamma/benches/compare_polyagamma.py [--rounds R] [--criterion]

It creates/uses a venv (PG_VENV, default /work/venv-pg), pip-installs polyagamma==2.0.2 and
numpy there, builds `examples/timing_server.rs` in release mode (CARGO_TARGET_DIR is honoured),
and starts two long-lived timing processes: the Rust example (SmallRng = Xoshiro256++) and a
Python one running polyagamma (numpy's default PCG64). Both answer "M draws/s, best of 5
timings of 200 000 draws" for one workload, with the setup untimed.

The machine this was written on is shared, so the load moves by a factor of several within
minutes. To make the ratio meaningful the two sides are timed **back to back for each
workload** (order alternating between rounds), in R rounds (default 5), and the table reports
the median over rounds of each side's rate and of the per-round ratio, with the smallest and
largest per-round ratio and the 1-minute load average seen during the rounds.

With --criterion it also runs `cargo bench -p polya-gamma --bench sampler` (criterion,
warm-up 1 s, measurement 2 s) after the rounds and prints the criterion rates next to the
table (criterion is the crate's benchmark of record; the rounds give the same-load ratio).
It finally prints the means polyagamma returns at a few points next to the exact means.
"""
import json
import os
import statistics
import subprocess
import sys
import textwrap

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
VENV = os.environ.get("PG_VENV", "/work/venv-pg")
PY = os.path.join(VENV, "bin", "python")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
BATCH = 10_000  # draws per criterion iteration (benches/sampler.rs)
N = 200_000
REPS = 5

FIXED = [(1.0, z) for z in (0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0)] + [
    (b, z) for b in (0.5, 2.5, 10.0, 100.0) for z in (0.0, 2.0)]
WORKLOADS = [f"{b} {z}" for b, z in FIXED] + ["gibbs"]

SERVER = textwrap.dedent("""
    import sys, time
    import numpy as np
    from polyagamma import random_polyagamma
    rng = np.random.default_rng(1)
    def best(f, n, reps):
        f()
        ts = []
        for _ in range(reps):
            t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
        return n / min(ts) / 1e6
    for line in sys.stdin:
        w = line.split()
        if not w:
            break
        if w[0] == "gibbs":
            n, reps = int(w[1]), int(w[2])
            zs = 20 * rng.random(n) - 10
            r = best(lambda: random_polyagamma(1.0, zs, random_state=rng), n, reps)
        else:
            b, z, n, reps = float(w[0]), float(w[1]), int(w[2]), int(w[3])
            r = best(lambda: random_polyagamma(b, z, size=n, random_state=rng), n, reps)
        print(r, flush=True)
""")

CHECKS = textwrap.dedent("""
    import json
    import numpy as np
    from polyagamma import random_polyagamma
    rng = np.random.default_rng(2)
    out = {}
    for b, z in [(1.0, 200.0), (1.0, 400.0), (20.0, 50.0), (2.7, 0.0), (100.0, 800.0)]:
        x = random_polyagamma(b, z, size=100_000, random_state=rng)
        out[f"{b}/{z}"] = [float(np.mean(x)), float(np.var(x))]
    print(json.dumps(out))
""")


class Server:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def rate(self, workload):
        cmd = f"gibbs {N} {REPS}" if workload == "gibbs" else f"{workload} {N} {REPS}"
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return float(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def ensure_venv():
    if not os.path.exists(PY):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([PY, "-m", "pip", "install", "-q", "polyagamma==2.0.2", "numpy"], check=True)


def build_rust():
    subprocess.run(["cargo", "build", "--release", "-p", "polya-gamma", "--example", "timing_server"],
                   cwd=ROOT, check=True, env=dict(os.environ, CARGO_TARGET_DIR=TARGET))
    return os.path.join(TARGET, "release", "examples", "timing_server")


def criterion():
    args = ["cargo", "bench", "-p", "polya-gamma", "--bench", "sampler", "--",
            "--warm-up-time", "1", "--measurement-time", "2"]
    subprocess.run(args, cwd=ROOT, check=True, env=dict(os.environ, CARGO_TARGET_DIR=TARGET))

    def rate(group, ident):
        path = os.path.join(TARGET, "criterion", group, ident, "new", "estimates.json")
        with open(path) as fh:
            ns = json.load(fh)["mean"]["point_estimate"]
        return BATCH / ns * 1e3

    def zid(z):
        return f"{z:g}" if z != int(z) else f"{int(z)}"

    out = {}
    for b, z in FIXED:
        if b == 1.0:
            out[f"{b} {z}"] = rate("pg1", zid(z))
        else:
            out[f"{b} {z}"] = rate("pg_b", os.path.join(f"b{b:g}", zid(z)))
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


def label(k):
    if k == "gibbs":
        return "PG(1, z), new z per draw, z ~ U(-10, 10)"
    b, z = k.split()
    return f"PG({float(b):g}, {float(z):g})"


def main():
    rounds = 5
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
    ensure_venv()
    ours_srv = Server([build_rust()])
    theirs_srv = Server([PY, "-c", SERVER])
    ours = {k: [] for k in WORKLOADS}
    theirs = {k: [] for k in WORKLOADS}
    loads = []
    for r in range(rounds):
        loads.append(os.getloadavg()[0])
        for k in WORKLOADS:
            if r % 2 == 0:
                ours[k].append(ours_srv.rate(k))
                theirs[k].append(theirs_srv.rate(k))
            else:
                theirs[k].append(theirs_srv.rate(k))
                ours[k].append(ours_srv.rate(k))
        print(f"round {r + 1}/{rounds} done (load {loads[-1]:.2f})", file=sys.stderr)
    loads.append(os.getloadavg()[0])
    ours_srv.close()
    theirs_srv.close()

    print(f"\n{rounds} interleaved rounds, 1-minute load average {min(loads):.2f}-{max(loads):.2f}\n")
    print("| workload | this crate M/s | polyagamma 2.0.2 M/s | ratio (median) | ratio (min-max) |")
    print("|---|---:|---:|---:|---:|")
    for k in WORKLOADS:
        ratios = [a / b for a, b in zip(ours[k], theirs[k])]
        print(f"| {label(k)} | {statistics.median(ours[k]):.2f} | {statistics.median(theirs[k]):.2f} "
              f"| {statistics.median(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} |")

    if "--criterion" in sys.argv:
        load = os.getloadavg()[0]
        crit = criterion()
        print(f"\ncriterion (this crate only, load {load:.2f} at start):\n")
        print("| workload | criterion M/s |")
        print("|---|---:|")
        for k in WORKLOADS:
            print(f"| {label(k)} | {crit[k]:.2f} |")

    res = subprocess.run([PY, "-c", CHECKS], check=True, capture_output=True, text=True)
    print("\npolyagamma 2.0.2 sample mean / variance (100k draws) vs exact:")
    for k, (m, v) in json.loads(res.stdout).items():
        b, z = map(float, k.split("/"))
        em, ev = exact_mean_var(b, z)
        print(f"- PG({b:g}, {z:g}): mean {m:.6g} (exact {em:.6g}), variance {v:.4g} (exact {ev:.4g})")


if __name__ == "__main__":
    main()
