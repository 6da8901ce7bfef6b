#!/usr/bin/env python3
"""Side-by-side reference for benches/analyze_gauss.rs: the same Analyze-Gauss step in numpy
(LAPACK dsyevd via numpy.linalg.eigh), single-threaded for a fair comparison.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /work/venv-core/bin/python \
        crates/dp-core/benches/analyze_gauss_numpy.py [max_d]

Statistic 0.01 I, noise std 1 (upper triangle incl. diagonal, mirrored), floor 1e-6: the
projection always runs. Prints the median of `reps` runs per d.
"""
import sys
import time

import numpy as np


def analyze_gauss(base, rng, floor=1e-6):
    d = base.shape[0]
    z = np.triu(rng.standard_normal((d, d)))
    noise = z + np.triu(z, 1).T
    m = base + noise
    try:
        np.linalg.cholesky(m - floor * np.eye(d))
        return m, 0
    except np.linalg.LinAlgError:
        pass
    w, v = np.linalg.eigh(m)
    raised = int((w < floor).sum())
    m = (v * np.maximum(w, floor)) @ v.T
    return 0.5 * (m + m.T), raised


def main():
    max_d = int(sys.argv[1]) if len(sys.argv) > 1 else 4146
    rng = np.random.default_rng(0)
    for d, reps in [(50, 200), (200, 30), (1000, 5), (4146, 1)]:
        if d > max_d:
            continue
        base = 0.01 * np.eye(d)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            analyze_gauss(base, rng)
            times.append(time.perf_counter() - t0)
        print(f"numpy analyze_gauss d={d}: median {np.median(times)*1e3:.3f} ms over {reps} runs")


if __name__ == "__main__":
    main()
