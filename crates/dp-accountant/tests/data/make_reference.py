#!/usr/bin/env python3
"""Reference values for dp-accountant's tests.

Writes, next to this script:
  rdp_reference.json  per-step RDP of the Poisson-subsampled Gaussian, computed exactly with mpmath
                      (integer orders: the finite binomial sum; fractional orders: adaptive
                      tanh-sinh quadrature of E_{N(0,s^2)}[r^a - 1 - a(r - 1)] at 40 digits, where
                      r = 1 - q + q exp((2z-1)/(2 s^2)); the quadrature is cross-checked against the
                      exact sum at integer orders), plus dp_accounting's own value for comparison.
  eps_reference.json  end-to-end epsilon from dp_accounting's RdpAccountant (default orders) over a
                      grid of (sigma, q, steps, delta), with its optimal order, its per-step RDP at
                      that order, and the exact (mpmath) per-step RDP at that order.
  wor_reference.json  dp_accounting's fixed-size without-replacement RDP (Wang et al. 2019 Thm 27).

Run (it installs what it needs into its own venv):
  python3 -m venv /work/venv-acct && /work/venv-acct/bin/pip install dp-accounting==0.6.0 mpmath==1.4.1
  /work/venv-acct/bin/python crates/dp-accountant/tests/data/make_reference.py
"""
import json
import math
import os
import subprocess
import sys

VENV = os.environ.get("ACCT_VENV", "/work/venv-acct")
PINS = ["dp-accounting==0.6.0", "mpmath==1.4.1"]


def ensure_packages():
    try:
        import dp_accounting  # noqa: F401
        import mpmath  # noqa: F401
    except ImportError:
        if not os.path.exists(os.path.join(VENV, "bin", "python")):
            subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([os.path.join(VENV, "bin", "pip"), "install", "-q", *PINS])
        os.execv(os.path.join(VENV, "bin", "python"), [os.path.join(VENV, "bin", "python"), *sys.argv])


ensure_packages()

import importlib.metadata as md  # noqa: E402

import dp_accounting  # noqa: E402
import mpmath as mp  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant as rdp_mod  # noqa: E402

mp.mp.dps = 40
HERE = os.path.dirname(os.path.abspath(__file__))

ORDERS = [1.25, 1.5, 2, 2.5, 3, 4, 5, 8, 16, 32, 64, 128, 256]
SIGMAS = [0.5, 0.8, 1.0, 1.5, 2.0, 4.0, 10.0]
QS = [1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5, 0.9, 1.0]


def exact_rdp_int(sigma, q, a):
    s, q = mp.mpf(sigma), mp.mpf(q)
    a = int(a)
    if q == 1:
        return mp.mpf(a) / (2 * s * s)
    am1 = mp.fsum(
        mp.binomial(a, k) * q**k * (1 - q) ** (a - k) * mp.expm1((k * k - k) / (2 * s * s))
        for k in range(2, a + 1)
    )
    return mp.log1p(am1) / (a - 1)


def quad_rdp(sigma, q, a):
    s, q, a = mp.mpf(sigma), mp.mpf(q), mp.mpf(a)
    if q == 1:
        return a / (2 * s * s)

    def f(z):
        r_minus_1 = q * mp.expm1((2 * z - 1) / (2 * s * s))
        r = 1 + r_minus_1
        g = r**a - 1 - a * r_minus_1
        return mp.npdf(z, 0, s) * g

    pts = {mp.mpf(0), mp.mpf("0.5"), mp.mpf(1), a, -8 * s, a + 8 * s}
    if q < 1:
        z0 = s * s * mp.log(1 / q - 1) + mp.mpf("0.5")
        pts.add(z0)
    pts = sorted(pts)
    am1 = mp.quad(f, [-mp.inf, *pts, mp.inf])
    return mp.log1p(am1) / (a - 1)


def rdp_reference():
    rows = []
    for sigma in SIGMAS:
        for q in QS:
            dpa = rdp_mod._compute_rdp_poisson_subsampled_gaussian(q, sigma, ORDERS)
            for a, d in zip(ORDERS, dpa):
                if float(a).is_integer():
                    exact = exact_rdp_int(sigma, q, a)
                    if a <= 16:
                        check = quad_rdp(sigma, q, a)
                        assert abs(check - exact) <= mp.mpf("1e-25") * abs(exact), (sigma, q, a)
                    method = "exact binomial sum"
                else:
                    exact = quad_rdp(sigma, q, a)
                    method = "tanh-sinh quadrature"
                rows.append(
                    {
                        "sigma": sigma,
                        "q": q,
                        "order": float(a),
                        "rdp": float(exact),
                        "rdp_str": mp.nstr(exact, 25),
                        "method": method,
                        "dp_accounting": finite_or_none(float(d)),
                    }
                )
    return rows


def eps_reference():
    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    rows = []
    for sigma in [0.7, 1.0, 1.1, 2.0, 5.0]:
        for q in [1e-3, 1e-2, 0.1, 1.0]:
            for steps in [1, 100, 10000]:
                for delta in [1e-5, 1e-8]:
                    acc = RdpAccountant()
                    ev = dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma))
                    acc.compose(ev, steps)
                    eps, order = acc.get_epsilon_and_optimal_order(delta)
                    per_step = float(rdp_mod._compute_rdp_poisson_subsampled_gaussian(q, sigma, [order])[0])
                    if float(order).is_integer():
                        exact = exact_rdp_int(sigma, q, order)
                    else:
                        exact = quad_rdp(sigma, q, order)
                    rows.append(
                        {
                            "sigma": sigma,
                            "q": q,
                            "steps": steps,
                            "delta": delta,
                            "epsilon": finite_or_none(float(eps)),
                            "order": float(order),
                            "per_step_rdp_dp_accounting": finite_or_none(per_step),
                            "per_step_rdp_exact": float(exact),
                        }
                    )
    return rows


def wor_reference():
    rows = []
    for sigma in [0.8, 1.0, 2.0, 5.0]:
        for m, n in [(6, 60000), (100, 10000), (1000, 10000), (50, 100)]:
            orders = [1.5, 2, 3, 4, 8, 16, 32, 64, 128, 256]
            vals = rdp_mod._compute_rdp_sample_wor_gaussian(m / n, sigma, orders)
            for a, v in zip(orders, vals):
                rows.append({"sigma": sigma, "sample_size": m, "population": n, "order": float(a), "rdp": finite_or_none(float(v))})
    return rows


def finite_or_none(x):
    """JSON has no inf/NaN: dp_accounting's failures are written as null."""
    return x if math.isfinite(x) else None


def main():
    prov = {
        "generator": "crates/dp-accountant/tests/data/make_reference.py",
        "dp_accounting": md.version("dp-accounting"),
        "mpmath": mp.__version__,
        "mp_dps": mp.mp.dps,
        "python": sys.version.split()[0],
    }
    out = {"provenance": prov, "rows": rdp_reference()}
    with open(os.path.join(HERE, "rdp_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
    out = {"provenance": prov, "orders": "dp_accounting DEFAULT_RDP_ORDERS", "rows": eps_reference()}
    with open(os.path.join(HERE, "eps_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
    out = {"provenance": prov, "rows": wor_reference()}
    with open(os.path.join(HERE, "wor_reference.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
