#!/usr/bin/env python3
"""Reference values for dp-core's analytic Gaussian calibration (Balle & Wang 2018).

Produces analytic_gaussian_reference.json next to this script. Run with
    python3 -m venv /work/venv-core && /work/venv-core/bin/pip install dp-accounting mpmath
    /work/venv-core/bin/python crates/dp-core/tests/data/analytic_gaussian_reference.py

For every (epsilon, delta, sensitivity) on the grid it records
  * sigma_dp_accounting: dp-accounting's smallest Gaussian std for (eps, delta)-DP
    (GaussianPrivacyLoss.from_privacy_guarantee, REMOVE adjacency, binary search),
  * delta_dp_accounting_at_sigma: dp-accounting's hockey-stick divergence at that std,
  * delta_mpmath_at_sigma: the same divergence evaluated with 60-digit mpmath
        delta(s) = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)   (Balle & Wang 2018, Thm 8),
  * sigma_exact: the exact smallest std (mpmath bisection to 40 digits), for which delta(s) = target.
It also records ln Phi(x) at a few points (mpmath) for the log-space normal CDF.
"""
import json
import math
import os
import platform

import dp_accounting
import mpmath
from dp_accounting.pld import common, privacy_loss_mechanism as plm

mpmath.mp.dps = 60


def delta_exact(eps, s, d):
    eps, s, d = mpmath.mpf(eps), mpmath.mpf(s), mpmath.mpf(d)
    a = d / (2 * s) - eps * s / d
    b = -d / (2 * s) - eps * s / d
    return mpmath.ncdf(a) - mpmath.exp(eps) * mpmath.ncdf(b)


def sigma_exact(eps, delta, d):
    lo, hi = mpmath.mpf("1e-6") * d, mpmath.mpf(1) * d
    while delta_exact(eps, hi, d) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta_exact(eps, mid, d) > delta:
            lo = mid
        else:
            hi = mid
    return hi


cases = []
for eps in [0.01, 0.1, 0.5, 0.9, 1.0, 2.0, 5.0, 10.0, 30.0]:
    for delta in [1e-3, 1e-5, 1e-8, 1e-12]:
        for d in [1.0, 0.25]:
            params = common.DifferentialPrivacyParameters(eps, delta)
            pl = plm.GaussianPrivacyLoss.from_privacy_guarantee(params, sensitivity=d)
            s_ref = pl.standard_deviation
            cases.append({
                "epsilon": eps,
                "delta": delta,
                "sensitivity": d,
                "sigma_dp_accounting": s_ref,
                "delta_dp_accounting_at_sigma": float(pl.get_delta_for_epsilon(eps)),
                "delta_mpmath_at_sigma": float(delta_exact(eps, s_ref, d)),
                "sigma_exact": float(sigma_exact(eps, delta, d)),
            })

ln_ndtr = [{"x": x, "ln_phi": float(mpmath.log(mpmath.ncdf(x)))}
           for x in [-200.0, -40.0, -30.5, -29.5, -10.0, -3.0, -0.5, 0.0, 0.5, 3.0, 8.0]]

out = {
    "provenance": {
        "script": "crates/dp-core/tests/data/analytic_gaussian_reference.py",
        "dp_accounting_version": getattr(dp_accounting, "__version__", "0.6.0"),
        "mpmath_version": mpmath.__version__,
        "mpmath_dps": mpmath.mp.dps,
        "python": platform.python_version(),
        "note": "sigma_dp_accounting comes from dp-accounting's binary search (finite tolerance); "
                "sigma_exact and delta_mpmath_at_sigma are 60-digit mpmath evaluations of Balle & Wang 2018 Thm 8.",
    },
    "cases": cases,
    "ln_ndtr": ln_ndtr,
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "analytic_gaussian_reference.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print(f"wrote {len(cases)} cases to {path}")
