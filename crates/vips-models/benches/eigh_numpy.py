#!/usr/bin/env python3
"""numpy/LAPACK reference for dp-core's eigensolver at the stroke data's dimension (issue 21).

Times ``numpy.linalg.eigh`` (LAPACK ``dsyevd`` through numpy's BLAS) on a random symmetric
``d x d`` matrix, by default ``d = 4146``, the size of BLR's released second moment on paper 003's
stroke data. Run it back to back with the Rust measurement (``docs/benchmarks.md``, "vips-models:
BLR" > "Scale") and record both with the load average it prints.

    python3 crates/vips-models/benches/eigh_numpy.py [--dim 4146] [--repeats 2] [--seed 0]
"""

import argparse
import json
import os
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=4146)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not 1 <= args.dim <= 20000:
        parser.error("--dim must be in 1..=20000")
    rng = np.random.default_rng(args.seed)
    a = rng.standard_normal((args.dim, args.dim))
    a = (a + a.T) / 2.0
    times = []
    for _ in range(args.repeats):
        load = open("/proc/loadavg").read().split()[:3]
        start = time.perf_counter()
        w, v = np.linalg.eigh(a)
        times.append({"seconds": time.perf_counter() - start, "load_before": load})
        del v
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # older numpy: no dict mode
        blas = "unknown"
    print(
        json.dumps(
            {
                "what": "numpy.linalg.eigh (eigenvalues and eigenvectors)",
                "dim": args.dim,
                "numpy": np.__version__,
                "blas": blas,
                "cpus": os.cpu_count(),
                "runs": times,
                "smallest_eigenvalue": float(w[0]),
            }
        )
    )


if __name__ == "__main__":
    main()
