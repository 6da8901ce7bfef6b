#!/usr/bin/env python3
"""Side-by-side timing of the PLD accountant (Rust, criterion) and dp_accounting's PLD.

Run from the workspace root, in one go so both see the same machine load:

    /work/venv-pld/bin/python crates/dp-accountant/benches/pld_timing.py [--skip-rust | --interleave]

For each (sigma, q, steps) of the reference grid (tests/data/pld/make_reference.py) it runs
dp_accounting 0.6's PLDAccountant (value_discretization_interval 1e-4, its default) in a fresh
process: compose the event, then epsilon at delta 1e-5 and 1e-6, timed with perf_counter
(import excluded; one run per case: the slow cases take seconds) and its peak RSS. Then it runs
`cargo bench -p dp-accountant --bench pld` (same work per iteration: compose both bounds and
directions, two epsilons), reads criterion's mean estimates from target/criterion and prints a
markdown table with the speed-up per case, the minimum speed-up and both peaks.

With `--interleave` (the fairer comparison on a shared machine) the criterion bench binary is
built once and then run case by case (`--exact pld/<sigma>/<q>/<steps>`) right after
dp_accounting's run of the same case, so both sides of each row see the same load; the load
average (`/proc/loadavg`) is printed per row and the Rust peak RSS is then per case.

Selecting cases (both modes): `--min-steps N` / `--max-steps N` keep the cases with at least /
at most N steps,
`--only S/Q/T[,S/Q/T...]` keeps the listed cases (e.g. `--only 10/0.01/10000,2/0.001/1000`).
`--help` prints this text.
"""

import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import time

SIGMAS = [0.5, 1.0, 2.0, 5.0, 10.0]
QS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
STEPS = [1, 10, 100, 1000, 10000]
DELTAS = [1e-5, 1e-6]
REPEATS = 1
TIME_LIMIT_S = 120


def dp_case(args):
    sigma, q, steps = args
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
    )
    best = float("inf")
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(event)
        for d in DELTAS:
            acc.get_epsilon(d)
        best = min(best, time.perf_counter() - t0)
        if best > 5.0:
            break
    return best, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_dp(args):
    ctx = mp.get_context("spawn")
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        try:
            return pool.apply_async(dp_case, (args,)).get(timeout=TIME_LIMIT_S)
        except mp.TimeoutError:
            return None, None


def rfmt(v):
    """Formats a number as Rust's Display does (1.0 -> "1")."""
    return str(int(v)) if float(v) == int(v) else repr(v)


def criterion_mean_s(root, sigma, q, steps):
    name = f"{rfmt(sigma)}_{rfmt(q)}_{steps}"
    for cand in (name, f"{sigma}/{q}/{steps}".replace("/", "_")):
        path = os.path.join(root, "pld", cand, "new", "estimates.json")
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)["mean"]["point_estimate"] / 1e9
    return None


def load_avg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def bench_executable():
    out = subprocess.run(
        ["cargo", "bench", "-p", "dp-accountant", "--bench", "pld", "--no-run",
         "--message-format=json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    exe = None
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") and \
                msg["target"]["name"] == "pld":
            exe = msg["executable"]
    if exe is None:
        sys.exit("could not find the pld bench executable")
    # run a private copy, so that rebuilding the crate meanwhile does not change the binary
    import shutil
    import tempfile

    copy = os.path.join(tempfile.mkdtemp(prefix="pld-bench-"), "pld")
    shutil.copy2(exe, copy)
    return copy


def rust_case(exe, sigma, q, steps):
    """Runs one criterion case; returns its peak RSS (MB) as printed by the bench."""
    out = subprocess.run(
        [exe, "--bench", "--exact", f"pld/{rfmt(sigma)}/{rfmt(q)}/{steps}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for line in out.splitlines():
        if "VmHWM" in line:
            return float(line.split(":")[-1].split()[0])
    return None


def selected_cases():
    """The grid cases kept by `--min-steps` and `--only`, in grid order."""
    args = sys.argv[1:]
    min_steps = 0
    max_steps = max(STEPS)
    only = None
    if "--min-steps" in args:
        min_steps = int(args[args.index("--min-steps") + 1])
    if "--max-steps" in args:
        max_steps = int(args[args.index("--max-steps") + 1])
    if "--only" in args:
        only = {tuple(float(x) for x in c.split("/"))
                for c in args[args.index("--only") + 1].split(",")}
    cases = []
    for sigma in SIGMAS:
        for q in QS:
            for steps in STEPS:
                if steps < min_steps or steps > max_steps:
                    continue
                if only is not None and (sigma, q, float(steps)) not in only:
                    continue
                cases.append((sigma, q, steps))
    if not cases:
        sys.exit("no case selected")
    return cases


def main_interleaved():
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    exe = bench_executable()
    rows = []
    for sigma, q, steps in selected_cases():
        load0 = load_avg()
        dp_s, dp_mb = run_dp((sigma, q, steps))
        rust_mb = rust_case(exe, sigma, q, steps)
        rs = criterion_mean_s(os.path.join(target, "criterion"), sigma, q, steps)
        load = max(load0, load_avg())
        rows.append((sigma, q, steps, dp_s, dp_mb, rs, rust_mb, load))
        print(sigma, q, steps, dp_s, dp_mb, rs, rust_mb, load, file=sys.stderr, flush=True)
    print("| sigma | q | steps | dp_accounting PLD | its peak RSS | this crate | its peak RSS "
          "| speed-up | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    ups = []
    for sigma, q, steps, dp_s, dp_mb, rs, rust_mb, load in rows:
        up = dp_s / rs if dp_s and rs else None
        if up:
            ups.append((up, sigma, q, steps))
        dp_txt = f"{dp_s * 1e3:.1f} ms" if dp_s else f"> {TIME_LIMIT_S} s"
        mb_txt = f"{dp_mb:.0f} MB" if dp_mb else "n/a"
        rs_txt = f"{rs * 1e3:.3f} ms" if rs else "n/a"
        rmb_txt = f"{rust_mb:.0f} MB" if rust_mb else "n/a"
        up_txt = f"{up:.1f}x" if up else "n/a"
        print(f"| {sigma} | {q:g} | {steps} | {dp_txt} | {mb_txt} | {rs_txt} | {rmb_txt} "
              f"| {up_txt} | {load:.1f} |")
    if ups:
        ups.sort()
        print(f"\nminimum speed-up {ups[0][0]:.1f}x, median {ups[len(ups) // 2][0]:.0f}x; "
              f"below 10x: {[(s, q, t, round(u, 1)) for u, s, q, t in ups if u < 10]}")
    print(f"max Rust peak RSS {max(r[6] or 0 for r in rows):.0f} MB")


def main():
    if "--help" in sys.argv or "-h" in sys.argv:
        print(__doc__)
        return None
    if "--interleave" in sys.argv:
        return main_interleaved()
    skip_rust = "--skip-rust" in sys.argv
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    rust_peak = None
    if not skip_rust:
        out = subprocess.run(
            ["cargo", "bench", "-p", "dp-accountant", "--bench", "pld"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for line in out.splitlines():
            if "VmHWM" in line:
                rust_peak = line.split(":")[-1].strip()
    rows = []
    for sigma, q, steps in selected_cases():
        dp_s, dp_mb = run_dp((sigma, q, steps))
        rs = criterion_mean_s(os.path.join(target, "criterion"), sigma, q, steps)
        rows.append((sigma, q, steps, dp_s, dp_mb, rs))
        print(sigma, q, steps, dp_s, dp_mb, rs, file=sys.stderr, flush=True)
    print("| sigma | q | steps | dp_accounting PLD | peak RSS | this crate | speed-up |")
    print("|---|---|---|---|---|---|---|")
    ups = []
    for sigma, q, steps, dp_s, dp_mb, rs in rows:
        up = dp_s / rs if dp_s and rs else None
        if up:
            ups.append(up)
        dp_txt = f"{dp_s * 1e3:.1f} ms" if dp_s else f"> {TIME_LIMIT_S} s"
        mb_txt = f"{dp_mb:.0f} MB" if dp_mb else "n/a"
        rs_txt = f"{rs * 1e3:.2f} ms" if rs else "n/a"
        up_txt = f"{up:.0f}x" if up else "n/a"
        print(f"| {sigma} | {q:g} | {steps} | {dp_txt} | {mb_txt} | {rs_txt} | {up_txt} |")
    if ups:
        print(f"\nminimum speed-up {min(ups):.1f}x, median {sorted(ups)[len(ups) // 2]:.0f}x")
    print(f"Rust bench process peak RSS: {rust_peak}")


if __name__ == "__main__":
    main()
