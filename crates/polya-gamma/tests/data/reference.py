#!/usr/bin/env python3
"""Reference values for the polya-gamma crate, computed with mpmath at high precision.

Run:  python3 -m venv /work/venv-pg && /work/venv-pg/bin/pip install mpmath==1.3.0
      /work/venv-pg/bin/python crates/polya-gamma/tests/data/reference.py

Writes (next to this script):
  cumulants.json  kappa_1..kappa_4 of PG(1, z) (cumulants are linear in b) for z in [0, 1e300],
                  from kappa_n = (-1)^(n-1) d^(n-1)/dv^(n-1) [tanh(sqrt(2v)/2) / (2 sqrt(2v))],
                  v = z^2/2, by mpmath.diff at 160 digits with a relative step.
  cdf_grid.json   for b in {0.01,...,1000} x z in {0,...,1000}: points x near the
                  0.1%,1%,10%,50%,90%,99%,99.9% quantiles with the exact CDF and density there,
                  from the alternating series of J*(b, z/2) = 4 PG(b, z)
                  (Windle, Polson & Scott 2014, Eq. 11 and its term-by-term integral), summed
                  at a precision chosen from the largest term and confirmed at +20 digits.
Quantile points are found by root finding on the same CDF for b <= 13 and from a
Cornish-Fisher expansion for b >= 50 (only the stored (x, F(x)) pairs matter, not the levels).
"""
import json
import math
import os

import mpmath as mp

HERE = os.path.dirname(os.path.abspath(__file__))
B_GRID = [0.01, 0.5, 0.999, 1, 1.5, 2.5, 4, 4.5, 8, 13, 50, 51, 100, 1000]
Z_GRID = [0, 1e-8, 0.5, 1, 2, 5, 10, 50, 177.5, 1000]
LEVELS = [0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999]
Z_CUMULANTS = [0, 1e-300, 1e-8, 1e-3, 0.1, 0.5, 1, 1.5, 2, 2.5, 3, 5, 10, 20, 50, 65, 100, 177.5,
               1000, 1e5, 1e10, 1e50, 1e100, 1e150, 1e200, 1e300]


def mean_fn(v):
    if v == 0:
        return mp.mpf(1) / 4
    z = mp.sqrt(2 * v)
    return mp.re(mp.tanh(z / 2) / (2 * z))


def cumulants(z):
    with mp.workdps(160):
        z = mp.mpf(z)
        v = z * z / 2
        out = []
        for n in range(1, 5):
            if n == 1:
                val = mean_fn(v)
            else:
                h = v * mp.mpf(10) ** -30 if v > 1 else mp.mpf(10) ** -30
                val = (-1) ** (n - 1) * mp.diff(mean_fn, v, n - 1, h=h)
            out.append(mp.re(val))
        return out


def log_max_term(h, zj, y):
    """Rough log of the largest CDF series term, in floats, to pick the precision."""
    best = -1e300
    lch = h * (zj + math.log1p(math.exp(-2 * zj)) - math.log(2))
    for n in range(0, 4000):
        c = 2 * n + h
        lc = h * math.log(2) + math.lgamma(n + h) - math.lgamma(h) - math.lgamma(n + 1)
        arg = (zj * y + c) / math.sqrt(y)
        # second IG term dominates the magnitude for large n
        a1 = (zj * y - c) / math.sqrt(y)
        t1 = -c * zj - (0.5 * a1 * a1 if a1 < 0 else 0.0)
        t2 = c * zj - 0.5 * arg * arg if arg > 0 else c * zj
        val = lch + lc + max(t1, t2)
        best = max(best, val)
        if n > 50 and val < best - 200:
            break
    return best


def certified(h, n, y):
    """True once a_m(x) decreases in m for every m >= n and every x <= y (docs/polya-gamma.md)."""
    h, y = float(h), float(y)
    if n == 0:
        lp = math.log(2 + h)
    elif h >= 1:
        lp = math.log((n + h) * (2 * n + 2 + h) / ((n + 1) * (2 * n + h)))
    else:
        lp = math.log1p(2 / (2 * n + h))
    return lp < 2 * (2 * n + 1 + h) / y


def jstar_cdf(h, zj, y):
    """Terms include the factor cosh(zj)^h; summation stops only past the certificate."""
    fy = float(y)
    h, zj, y = mp.mpf(h), mp.mpf(zj), mp.mpf(y)
    s = mp.mpf(0)
    sy = mp.sqrt(y)
    lg = mp.loggamma(h)
    lch = h * mp.log(mp.cosh(zj))
    eps = mp.mpf(10) ** (-mp.mp.dps + 3)
    cert = False
    n = 0
    while True:
        c = 2 * n + h
        cn = mp.exp(lch + h * mp.log(2) + mp.loggamma(n + h) - lg - mp.loggamma(n + 1))
        ig = mp.exp(-c * zj) * mp.ncdf((zj * y - c) / sy) + mp.exp(c * zj) * mp.ncdf(-(zj * y + c) / sy)
        term = cn * ig
        s += term if n % 2 == 0 else -term
        cert = cert or certified(h, n, fy)
        if cert and term < eps:
            break
        n += 1
        if n > 20000:
            raise RuntimeError("series did not converge")
    return s


def jstar_pdf(h, zj, y):
    """Terms include the tilt cosh(zj)^h exp(-zj^2 y/2); stops only past the certificate."""
    fy = float(y)
    h, zj, y = mp.mpf(h), mp.mpf(zj), mp.mpf(y)
    s = mp.mpf(0)
    lg = mp.loggamma(h)
    ltilt = h * mp.log(mp.cosh(zj)) - zj * zj * y / 2
    eps = mp.mpf(10) ** (-mp.mp.dps + 3)
    cert = False
    n = 0
    while True:
        c = 2 * n + h
        term = mp.exp(ltilt + h * mp.log(2) + mp.loggamma(n + h) - lg - mp.loggamma(n + 1) + mp.log(c)
                      - mp.log(2 * mp.pi) / 2 - 1.5 * mp.log(y) - c * c / (2 * y))
        s += term if n % 2 == 0 else -term
        cert = cert or certified(h, n, fy)
        if cert and term < eps:
            break
        n += 1
        if n > 20000:
            raise RuntimeError("series did not converge")
    return s


def pg_cdf_pdf(b, z, x, extra=0):
    """(F, f) of PG(b, z) at x, precision from the largest term, plus `extra` digits."""
    zj, y = z / 2.0, 4.0 * x
    lmax = log_max_term(b, zj, y)
    dps = int(30 + max(0.0, lmax) / math.log(10)) + extra
    with mp.workdps(dps):
        F = jstar_cdf(b, zj, y)
        f = 4 * jstar_pdf(b, zj, y)
        return F, f


def checked(b, z, x):
    """Evaluate at a precision and at +20 digits; raise the precision until they agree."""
    extra = 0
    while True:
        F1, f1 = pg_cdf_pdf(b, z, x, extra=extra)
        F2, f2 = pg_cdf_pdf(b, z, x, extra=extra + 20)
        if abs(F1 - F2) < 1e-25 and abs(f1 - f2) < 1e-25 * max(1, abs(f2)):
            return float(F2), float(f2)
        extra += 40
        assert extra < 2000, (b, z, x)


def exact_cumulants_float(b, z):
    if z == 0:
        k = [0.25, 1 / 24.0, 1 / 60.0, 17 / 1680.0]  # b * [1/4, 1/24, 1/60, 17/1680]
        return [b * v for v in k]
    with mp.workdps(40):
        zz = mp.mpf(z)
        m = mp.tanh(zz / 2) / (2 * zz)
        v = (mp.sinh(zz) - zz) / (4 * zz ** 3 * mp.cosh(zz / 2) ** 2)
        return [b * float(m), b * float(v)]


def quantile_points(b, z):
    m, v = exact_cumulants_float(b, z)[:2]
    sd = math.sqrt(v)
    if b >= 50:
        with mp.workdps(60):
            k = [b * float(c) for c in cumulants(z)]
        g1 = k[2] / sd ** 3
        g2 = k[3] / sd ** 4
        pts = []
        for q in LEVELS:
            w = float(mp.sqrt(2) * mp.erfinv(2 * q - 1))
            cf = w + (w * w - 1) * g1 / 6 + (w ** 3 - 3 * w) * g2 / 24 - (2 * w ** 3 - 5 * w) * g1 * g1 / 36
            pts.append(m + sd * cf)
        return pts
    pts = []
    with mp.workdps(20):
        for q in LEVELS:
            # bisection on log x (robust for the very skewed small-b laws)
            lo, hi = math.log(m) - 60, math.log(m + 40 * sd + 40.0 / (4.93 + z * z / 2))
            for _ in range(45):
                mid = 0.5 * (lo + hi)
                F, _ = pg_cdf_pdf(b, z, math.exp(mid))
                if F < q:
                    lo = mid
                else:
                    hi = mid
            pts.append(math.exp(0.5 * (lo + hi)))
    return pts


def main():
    cum = []
    for z in Z_CUMULANTS:
        k = cumulants(z)
        cum.append({"z": z, "kappa": [mp.nstr(v, 25) for v in k]})
    with open(os.path.join(HERE, "cumulants.json"), "w") as fh:
        json.dump({"provenance": "mpmath " + mp.__version__ + ", 160 digits; see reference.py",
                   "b": 1.0, "rows": cum}, fh, indent=1)
    rows = []
    for b in B_GRID:
        for z in Z_GRID:
            for x in quantile_points(b, z):
                F, f = checked(b, z, x)
                rows.append({"b": b, "z": z, "x": x, "cdf": F, "pdf": f})
            print("done", b, z, flush=True)
    with open(os.path.join(HERE, "cdf_grid.json"), "w") as fh:
        json.dump({"provenance": "mpmath " + mp.__version__ + ", alternating series at adaptive "
                   "precision, confirmed at +20 digits; see reference.py", "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
