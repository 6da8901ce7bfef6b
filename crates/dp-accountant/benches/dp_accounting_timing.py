#!/usr/bin/env python3
"""Times dp_accounting 0.6 on the same cases as benches/accountant.rs (criterion), single thread.

Run side by side with the criterion benches (docs/benchmarks.md, section dp-accountant):
  /work/venv-acct/bin/python crates/dp-accountant/benches/dp_accounting_timing.py
Prints one line per case: name, median seconds, repetitions.
"""
import os
import statistics
import sys
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

try:
    import dp_accounting
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_mod
except ImportError:
    sys.exit("needs dp-accounting==0.6.0 (e.g. /work/venv-acct/bin/pip install dp-accounting==0.6.0)")

ORDERS = rdp_mod.DEFAULT_RDP_ORDERS
SIGMA, Q, STEPS, DELTA = 1.1, 0.01, 1000, 1e-5


def timeit(fn, min_time=2.0, min_reps=5):
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < min_time:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def rdp_vector():
    return rdp_mod._compute_rdp_poisson_subsampled_gaussian(Q, SIGMA, ORDERS)


RDP_RUN = STEPS * rdp_vector()


def rdp_to_eps():
    return rdp_mod.compute_epsilon(ORDERS, RDP_RUN, DELTA)


def eps_end_to_end():
    acc = dp_accounting.rdp.RdpAccountant(ORDERS)
    acc.compose(dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(SIGMA)), STEPS)
    return acc.get_epsilon(DELTA)


def calibrate():
    def make_event(sigma):
        return dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(Q, dp_event.GaussianDpEvent(sigma)), STEPS
        )

    return dp_accounting.calibrate_dp_mechanism(
        dp_accounting.rdp.RdpAccountant, make_event, 1.0, DELTA
    )


def main():
    import importlib.metadata as md

    print(f"dp_accounting {md.version('dp-accounting')}, python {sys.version.split()[0]}")
    for name, fn in [
        ("rdp_vector_156_default_orders", rdp_vector),
        ("rdp_to_eps_156_orders", rdp_to_eps),
        ("eps_default_orders_end_to_end", eps_end_to_end),
        ("calibrate_sigma_default_orders", calibrate),
    ]:
        med, n = timeit(fn)
        print(f"{name:34s} {med * 1e3:10.3f} ms  (median of {n})")
    print(f"calibrated sigma: {calibrate():.6f}")


if __name__ == "__main__":
    main()
