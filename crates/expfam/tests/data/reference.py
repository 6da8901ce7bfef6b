#!/usr/bin/env python3
"""Reference values for the expfam table tests, computed with mpmath at 50 significant digits.

Run (from the workspace root, in a venv with mpmath and scipy):
    python3 crates/expfam/tests/data/reference.py > crates/expfam/tests/data/reference.json

Every quantity is evaluated from its mathematical definition in mpmath (arbitrary precision);
GIG moments are additionally checked against direct numerical integration of the density with
mpmath.quad and against scipy.stats.geninvgauss where scipy is accurate. Values are written as
decimal strings with 20 significant digits so the JSON keeps more precision than f64 needs.
"""
import json
import sys

import mpmath as mp

mp.mp.dps = 32


def s(x):
    return mp.nstr(mp.mpf(x), 20, strip_zeros=False) if mp.isfinite(x) else str(x)


def _peak(nu, x):
    """Maximiser of -x cosh t + ln cosh(nu t) on t >= 0."""
    if nu * nu <= x:
        return mp.mpf(0)
    return mp.findroot(lambda t: nu * mp.tanh(nu * t) - x * mp.sinh(t), mp.asinh(nu / x))


def k_quad(nu, x, weight):
    """int_0^T exp(-x cosh t) cosh(nu t) weight(t) dt (DLMF 10.32.9) by tanh-sinh quadrature,
    with T where the integrand has fallen below exp(-150) of its peak (the tail is negligible)."""
    ts = _peak(nu, x)
    log_f = lambda t: -x * mp.cosh(t) + nu * t
    top = log_f(ts)
    hi = ts + 1
    while log_f(hi) > top - 150:
        hi = ts + 2 * (hi - ts)
    width = 1 / mp.sqrt(x * mp.cosh(ts) + 1)
    pts = sorted({mp.mpf(0), max(ts - 30 * width, mp.mpf(0)), ts, min(ts + 30 * width, hi), hi})
    f = lambda t: mp.exp(-x * mp.cosh(t) - top) * mp.cosh(nu * t) * weight(t)
    return mp.quad(f, pts) * mp.exp(top)


def bessel_rows():
    """K_nu(x) from mpmath.besselk (hypergeometric series / asymptotics), cross-checked against the
    integral representation by tanh-sinh quadrature; the order derivative from the differentiated
    integral representation, cross-checked with mpmath.diff where that converges."""
    orders = ["0", "0.3", "0.5", "1", "2.7", "10", "50.5", "200", "1000"]
    args = ["1e-10", "1e-4", "0.05", "0.7", "1.9", "2.1", "8", "30", "120", "650", "1e4", "1e6"]
    rows = []
    for nu_s in orders:
        for x_s in args:
            nu, x = mp.mpf(nu_s), mp.mpf(x_s)
            kq = k_quad(nu, x, lambda t: 1)
            try:
                k = mp.besselk(nu, x)
                assert abs(k / kq - 1) < mp.mpf("1e-20"), (nu_s, x_s, k, kq)
                kup = mp.besselk(nu + 1, x)
                kdn = mp.besselk(nu - 1, x)
            except ValueError:  # mpmath's hypercomb gives up at large order and argument
                k = kq
                kup = k_quad(nu + 1, x, lambda t: 1)
                kdn = k_quad(nu - 1, x, lambda t: 1)
            dk = k_quad(nu, x, lambda t: t * mp.tanh(nu * t))
            dln = dk / kq
            print(f"K: nu={nu_s} x={x_s}", file=sys.stderr, flush=True)
            rows.append(
                {
                    "nu": nu_s,
                    "x": x_s,
                    "ln_k": s(mp.log(k)),
                    "ratio_up": s(kup / k),
                    "ratio_down": s(kdn / k),
                    "d_ln_dnu": s(dln),
                }
            )
    return rows


def gig_moments(p, a, b):
    w = mp.sqrt(a * b)
    sc = mp.sqrt(b / a)
    kp = mp.besselk(p, w)
    mean = sc * mp.besselk(p + 1, w) / kp
    mean_inv = mp.besselk(p - 1, w) / kp / sc
    mean_log = mp.log(sc) + mp.diff(lambda n: mp.log(mp.besselk(n, w)), p)
    log_z = mp.log(2) + mp.log(kp) + p * mp.log(sc)
    return mean, mean_inv, mean_log, log_z


def gig_check_quad(p, a, b, mean, mean_inv, mean_log, log_z):
    """Cross-check the Bessel formulas by integrating the density (in y = ln x)."""
    f = lambda y, r: mp.exp(p * y - (a * mp.exp(y) + b * mp.exp(-y)) / 2 - log_z) * r(y)
    mode = mp.asinh(p / mp.sqrt(a * b)) + mp.log(mp.sqrt(b / a))
    pts = [mode - 60, mode - 5, mode, mode + 5, mode + 60]
    z = mp.quad(lambda y: f(y, lambda y: 1), pts)
    m1 = mp.quad(lambda y: f(y, lambda y: mp.exp(y)), pts)
    mi = mp.quad(lambda y: f(y, lambda y: mp.exp(-y)), pts)
    ml = mp.quad(lambda y: f(y, lambda y: y), pts)
    for got, want in ((z, 1), (m1, mean), (mi, mean_inv), (ml, mean_log)):
        err = abs(got - want) / max(abs(want), mp.mpf(1))
        assert err < mp.mpf("1e-12"), (p, a, b, got, want)


def gig_rows():
    cases = [
        ("0", "2", "1"), ("0", "0.002", "0.5"), ("0", "1e-6", "1e-6"), ("0", "200", "300"),
        ("0", "1e4", "1e4"), ("0", "1", "1e6"), ("0.5", "2", "8"), ("-0.5", "3", "0.2"),
        ("1", "1", "1"), ("-1.7", "0.5", "4"), ("3.2", "0.1", "0.1"), ("12", "2", "50"),
        ("-25", "7", "0.3"), ("0", "1e-9", "2e-9"), ("0.25", "40", "1e-3"),
    ]
    rows = []
    scipy_checked = 0
    try:
        from scipy.stats import geninvgauss
    except ImportError:  # pragma: no cover
        geninvgauss = None
    for p_s, a_s, b_s in cases:
        p, a, b = mp.mpf(p_s), mp.mpf(a_s), mp.mpf(b_s)
        mean, mean_inv, mean_log, log_z = gig_moments(p, a, b)
        gig_check_quad(p, a, b, mean, mean_inv, mean_log, log_z)
        if geninvgauss is not None and 1e-3 < float(mp.sqrt(a * b)) < 1e3:
            sc = float(mp.sqrt(b / a))
            m = geninvgauss.mean(float(p), float(mp.sqrt(a * b)), scale=sc)
            assert abs(m - float(mean)) <= 1e-8 * float(mean), (p_s, a_s, b_s, m, mean)
            scipy_checked += 1
        rows.append(
            {
                "p": p_s, "a": a_s, "b": b_s,
                "mean": s(mean), "mean_inv": s(mean_inv), "mean_log": s(mean_log),
                "log_partition": s(log_z),
            }
        )
    print(f"GIG: {len(rows)} cases, quad-checked all, scipy-checked {scipy_checked}", file=sys.stderr)
    return rows


def dirichlet_rows():
    cases = [
        ["1", "1"], ["0.1", "0.1", "0.1"], ["1e-3", "2", "5", "0.5"], ["50", "60", "70"],
        ["0.01"] * 10, ["1e4", "3e4"], ["1.5", "1e-8"], ["3.3", "0.7", "12.5", "1", "100"],
    ]
    rows = []
    for alpha_s in cases:
        alpha = [mp.mpf(x) for x in alpha_s]
        a0 = mp.fsum(alpha)
        elog = [mp.digamma(x) - mp.digamma(a0) for x in alpha]
        log_b = mp.fsum(mp.loggamma(x) for x in alpha) - mp.loggamma(a0)
        k = len(alpha)
        entropy = log_b + (a0 - k) * mp.digamma(a0) - mp.fsum((x - 1) * mp.digamma(x) for x in alpha)
        rows.append({"alpha": alpha_s, "expected_log": [s(e) for e in elog],
                     "log_normalizer": s(log_b), "entropy": s(entropy)})
    return rows


def dirichlet_kl_rows():
    pairs = [(["1", "2", "3"], ["3", "2", "1"]), (["0.1", "0.1"], ["10", "10"]),
             (["5", "5", "5", "5"], ["5", "5", "5", "5.001"])]
    rows = []
    for p_s, q_s in pairs:
        p = [mp.mpf(x) for x in p_s]
        q = [mp.mpf(x) for x in q_s]
        p0, q0 = mp.fsum(p), mp.fsum(q)
        kl = (mp.loggamma(p0) - mp.fsum(mp.loggamma(x) for x in p) - mp.loggamma(q0)
              + mp.fsum(mp.loggamma(x) for x in q)
              + mp.fsum((a - b) * (mp.digamma(a) - mp.digamma(p0)) for a, b in zip(p, q)))
        rows.append({"p": p_s, "q": q_s, "kl": s(kl)})
    return rows


def gamma_rows():
    cases = [("1", "1"), ("0.5", "2"), ("1e-3", "1"), ("3.7", "0.01"), ("250", "40"), ("1e5", "1e5"),
             ("1e-8", "1e-8"), ("42", "1e6")]
    rows = []
    for a_s, b_s in cases:
        a, b = mp.mpf(a_s), mp.mpf(b_s)
        rows.append({
            "shape": a_s, "rate": b_s,
            "expected_log": s(mp.digamma(a) - mp.log(b)),
            "mean": s(a / b),
            "entropy": s(a - mp.log(b) + mp.loggamma(a) + (1 - a) * mp.digamma(a)),
        })
    return rows


def gamma_kl_rows():
    pairs = [(("2", "3"), ("4", "1")), (("0.5", "0.5"), ("0.6", "0.4")), (("100", "10"), ("100.5", "10"))]
    rows = []
    for (ap, bp), (aq, bq) in pairs:
        ap, bp, aq, bq = map(mp.mpf, (ap, bp, aq, bq))
        kl = ((ap - aq) * mp.digamma(ap) - mp.loggamma(ap) + mp.loggamma(aq)
              + aq * (mp.log(bp) - mp.log(bq)) + ap * (bq - bp) / bp)
        rows.append({"p": [s(ap), s(bp)], "q": [s(aq), s(bq)], "kl": s(kl)})
    return rows


def special_rows():
    xs = ["1e-12", "1e-3", "0.5", "1", "1.4616321449683623", "2.5", "7.9", "8.1", "33", "1e5", "1e15",
          "-0.5", "-2.3", "-10.25", "-1000.5"]
    rows = []
    for x_s in xs:
        x = mp.mpf(x_s)
        row = {"x": x_s, "digamma": s(mp.digamma(x)), "trigamma": s(mp.psi(1, x))}
        if x > 0:
            row["ln_gamma"] = s(mp.loggamma(x))
        rows.append(row)
    return rows


def main():
    out = {
        "provenance": {
            "script": "crates/expfam/tests/data/reference.py",
            "mpmath": mp.__version__,
            "dps": mp.mp.dps,
            "note": "decimal strings, 20 significant digits, from mpmath definitions",
        },
        "bessel_k": bessel_rows(),
        "gig": gig_rows(),
        "dirichlet": dirichlet_rows(),
        "dirichlet_kl": dirichlet_kl_rows(),
        "gamma": gamma_rows(),
        "gamma_kl": gamma_kl_rows(),
        "special": special_rows(),
    }
    try:
        import scipy
        out["provenance"]["scipy"] = scipy.__version__
    except ImportError:  # pragma: no cover
        pass
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
