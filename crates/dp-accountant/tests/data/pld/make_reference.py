#!/usr/bin/env python3
"""Reference values for the PLD accountant (crates/dp-accountant/src/pld).

Writes pld_reference.json next to this script. Provenance: dp-accounting (Google) 0.6.0 and
mpmath, run in a fresh venv:

    python3 -m venv /work/venv-pld && /work/venv-pld/bin/pip install dp-accounting==0.6.0 mpmath
    /work/venv-pld/bin/python crates/dp-accountant/tests/data/pld/make_reference.py

For every (sigma, q, steps) of the grid below and delta in {1e-5, 1e-6} it records
- dp_pess: epsilon from dp_accounting's PLDAccountant (pessimistic connect-the-dots,
  value_discretization_interval = 1e-4, its default), with the wall time and peak RSS of a
  fresh process doing that one accounting (import excluded);
- dp_opt: epsilon from dp_accounting's optimistic PLD (pessimistic_estimate=False, same interval);
- rdp: epsilon from dp_accounting's RdpAccountant (default orders);
- exact (q = 1 only): the analytic-Gaussian epsilon of Balle & Wang 2018 with
  s = sigma / sqrt(steps), solved with mpmath at 40 digits.
Each case runs in its own process with a time limit; a case that dp_accounting cannot finish
(time or memory) is recorded with null values and the reason.
"""

import json
import multiprocessing as mp
import os
import resource
import sys
import time

SIGMAS = [0.5, 1.0, 2.0, 5.0, 10.0]
QS = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
STEPS = [1, 10, 100, 1000, 10000]
DELTAS = [1e-5, 1e-6]
INTERVAL = 1e-4
TIME_LIMIT_S = 300
MEM_LIMIT_BYTES = 8 * 1024**3


def exact_gaussian_eps(s, delta):
    import mpmath as m

    m.mp.dps = 40
    s = m.mpf(s)
    d = m.mpf(delta)

    def delta_of(eps):
        return m.ncdf(-eps * s + 1 / (2 * s)) - m.exp(eps) * m.ncdf(-eps * s - 1 / (2 * s))

    if delta_of(0) <= d:
        return 0.0
    lo, hi = m.mpf(0), m.mpf(1)
    while delta_of(hi) > d:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta_of(mid) > d:
            lo = mid
        else:
            hi = mid
    return float(hi)


def one_case(args):
    sigma, q, steps = args
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT_BYTES, MEM_LIMIT_BYTES))
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution
    from dp_accounting.rdp import rdp_privacy_accountant

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps
    )
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=INTERVAL)
    acc.compose(event)
    pess = [acc.get_epsilon(d) for d in DELTAS]
    t_pess = time.perf_counter() - t0
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    opt_pld = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=sigma,
        sensitivity=1.0,
        pessimistic_estimate=False,
        value_discretization_interval=INTERVAL,
        sampling_prob=q,
        use_connect_dots=False,
    ).self_compose(steps)
    opt = [opt_pld.get_epsilon_for_delta(d) for d in DELTAS]
    rdp_acc = rdp_privacy_accountant.RdpAccountant()
    rdp_acc.compose(event)
    rdp = [rdp_acc.get_epsilon(d) for d in DELTAS]
    exact = [exact_gaussian_eps(sigma / steps**0.5, d) for d in DELTAS] if q == 1.0 else None
    return {
        "dp_pess": pess,
        "dp_opt": opt,
        "rdp": rdp,
        "exact": exact,
        "dp_seconds": t_pess,
        "dp_peak_rss_mb_before": rss0 / 1024,
        "dp_peak_rss_mb": rss1 / 1024,
    }


def run_case(args):
    ctx = mp.get_context("spawn")
    with ctx.Pool(1, maxtasksperchild=1) as pool:
        res = pool.apply_async(one_case, (args,))
        try:
            return res.get(timeout=TIME_LIMIT_S)
        except mp.TimeoutError:
            return {"failed": f"dp_accounting did not finish within {TIME_LIMIT_S} s"}
        except MemoryError:
            return {"failed": f"dp_accounting exceeded {MEM_LIMIT_BYTES >> 30} GB"}
        except Exception as exc:  # noqa: BLE001 - record whatever dp_accounting raised
            return {"failed": f"dp_accounting raised {type(exc).__name__}: {exc}"}


def main():
    import dp_accounting
    import mpmath

    out = {
        "provenance": {
            "script": "crates/dp-accountant/tests/data/pld/make_reference.py",
            "dp_accounting": getattr(dp_accounting, "__version__", "0.6.0"),
            "mpmath": mpmath.__version__,
            "python": sys.version.split()[0],
            "value_discretization_interval": INTERVAL,
            "deltas": DELTAS,
            "neighbouring": "add/remove-one (Poisson subsampling); PLD takes the worse direction",
        },
        "cases": [],
    }
    for sigma in SIGMAS:
        for q in QS:
            for steps in STEPS:
                res = run_case((sigma, q, steps))
                res.update({"sigma": sigma, "q": q, "steps": steps})
                print(json.dumps(res), flush=True)
                out["cases"].append(res)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pld_reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", path)


if __name__ == "__main__":
    main()
