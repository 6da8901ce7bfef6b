#!/usr/bin/env python3
"""Independent check of the one large-epsilon PLD case (docs/pld.md, Sec. 8): Poisson-subsampled
Gaussian, sigma = 0.5, q = 0.1, 10^4 steps, delta = 1e-5, where this crate's pessimistic
epsilon (782.33) lies below dp_accounting 0.6's "optimistic" epsilon (782.79).

Method (no discretisation, no FFT): for a sum of T i.i.d. privacy losses, delta(eps) =
E_P[(1 - e^{eps - L_T})_+] is computed by exponential tilting (saddle point) with the exact
cumulant generating function of one step, K(t) = ln E_P[e^{t L}], evaluated by mpmath
quadrature in 40 digits:

    delta(eps) = exp(T K(t) - t eps) * E_t[(e^{-t Y} - e^{-(t+1) Y}) 1{Y > 0}],  Y = L_T - eps,

with t solving T K'(t) = eps, so that Y has mean 0 under the tilted law. The remaining
expectation is evaluated with the tilted law's normal approximation plus its first two
Edgeworth corrections (skewness and kurtosis, O(1/sqrt T) and O(1/T)); the size of the
corrections shows the error of the method (the kurtosis term moves delta by ~8e-5 relative, far
below what separates 782.33 from 782.79: d ln(delta) / d eps = -t* = -0.0855 here, so 0.46 in
epsilon is a factor of ~1.04 in delta).

Output (2026-11-21, mpmath 1.4.1): remove direction, t* = 0.08554,
delta(782.33) = 1.00523e-5 / 9.99910e-6 / 9.99833e-6 (normal / +skew / +kurtosis),
delta(782.79) = 9.5909e-6, delta(783.29) = 9.1660e-6, epsilon(1e-5) = 782.3282.

Both neighbouring directions count (the larger delta binds). The mpmath evaluation is run for the
remove direction (the binding one); a float64 cross-check (numpy/scipy, fine-grid quadrature)
evaluates both directions first: it reproduces the mpmath remove values to 1e-6 and gives
delta ~ 2.4e-312 for the add direction at epsilon 782.33 (tilt t* = 5.31; the add direction's loss
is bounded by -T ln(1 - q) = 1053.6 and its mean is 318.8), so the remove direction binds.
Run: /work/venv-acct/bin/python crates/dp-accountant/tests/data/pld/check_large_eps.py
"""
import mpmath as mp

mp.mp.dps = 40
SIGMA, Q, T, DELTA = mp.mpf("0.5"), mp.mpf("0.1"), 10_000, mp.mpf("1e-5")


def ratio(x):
    """mu(x) / mu0(x) for mu = (1-q) N(0, s^2) + q N(1, s^2), mu0 = N(0, s^2)."""
    return 1 - Q + Q * mp.exp((2 * x - 1) / (2 * SIGMA**2))


def normal_pdf(x, mean=0):
    return mp.exp(-((x - mean) ** 2) / (2 * SIGMA**2)) / (SIGMA * mp.sqrt(2 * mp.pi))


def moments(direction, t):
    """E_P[L^k e^{tL}] for k = 0..4 (L = ln dP/dQ of one step)."""
    if direction == "remove":  # P = mixture, Q = N(0, s^2): L = ln ratio, E_P[f] = E_Q[ratio f]
        def f(x, k):
            r = ratio(x)
            return normal_pdf(x) * r ** (1 + t) * mp.log(r) ** k
    else:  # add: P = N(0, s^2), Q = mixture: L = -ln ratio
        def f(x, k):
            r = ratio(x)
            return normal_pdf(x) * r ** (-t) * (-mp.log(r)) ** k
    pts = [-mp.inf, -10, -3, 0, 1, 3, 10, 30, mp.inf]
    return [mp.quad(lambda x: f(x, k), pts) for k in range(5)]


def cumulants(direction, t):
    m0, m1, m2, m3, m4 = moments(direction, t)
    mu = m1 / m0
    c2 = m2 / m0 - mu**2
    c3 = m3 / m0 - 3 * mu * m2 / m0 + 2 * mu**3
    c4 = (m4 / m0 - 4 * mu * m3 / m0 + 6 * mu**2 * m2 / m0 - 3 * mu**4) - 3 * c2**2
    return mp.log(m0), mu, c2, c3, c4


def tilted_expectation(t, s, k3, k4, order):
    """E[(e^{-tY} - e^{-(t+1)Y}) 1{Y>0}] for Y ~ mean 0, sd s, standardised cumulants k3, k4,
    by the Edgeworth density up to `order` correction terms (0: normal)."""
    def dens(y):
        z = y / s
        phi = mp.exp(-z * z / 2) / (s * mp.sqrt(2 * mp.pi))
        corr = 1
        if order >= 1:
            corr += k3 / 6 * (z**3 - 3 * z)
        if order >= 2:
            corr += k4 / 24 * (z**4 - 6 * z**2 + 3) + k3**2 / 72 * (
                z**6 - 15 * z**4 + 45 * z**2 - 15)
        return phi * corr
    return mp.quad(lambda y: (mp.exp(-t * y) - mp.exp(-(t + 1) * y)) * dens(y),
                   [0, s / 10, s, 10 * s, mp.inf])


def delta_at(direction, eps, order=2):
    t = mp.findroot(lambda t: T * cumulants(direction, t)[1] - eps, mp.mpf("0.5"))
    k, mu, c2, c3, c4 = cumulants(direction, t)
    s = mp.sqrt(T * c2)
    k3 = T * c3 / s**3
    k4 = T * c4 / s**4
    return mp.exp(T * k - t * eps) * tilted_expectation(t, s, k3, k4, order), t


def float64_cross_check():
    """Both directions in float64 (trapezoid quadrature, normal + skewness term)."""
    import numpy as np
    from scipy.optimize import brentq

    s, q, t_steps = float(SIGMA), float(Q), T
    x = np.linspace(-12, 14, 400001)
    dx = x[1] - x[0]
    phi0 = np.exp(-x**2 / (2 * s * s)) / (s * np.sqrt(2 * np.pi))
    r = 1 - q + q * np.exp((2 * x - 1) / (2 * s * s))

    def cums(direction, t):
        loss = np.log(r) if direction == "remove" else -np.log(r)
        w = phi0 * (r if direction == "remove" else 1.0) * np.exp(t * loss)
        m0 = w.sum() * dx
        mu = (w * loss).sum() * dx / m0
        c2 = (w * (loss - mu) ** 2).sum() * dx / m0
        c3 = (w * (loss - mu) ** 3).sum() * dx / m0
        return np.log(m0), mu, c2, c3

    for direction in ("remove", "add"):
        for eps in (782.33, 782.79):
            def f(t, direction=direction, eps=eps):
                return t_steps * cums(direction, t)[1] - eps

            hi = 1.0
            while f(hi) < 0:
                hi *= 2
            t = brentq(f, 1e-6, hi, xtol=1e-14)
            k, mu, c2, c3 = cums(direction, t)
            sd = np.sqrt(t_steps * c2)
            y = np.linspace(0, 40 * sd, 200001)
            z = y / sd
            dens = np.exp(-z * z / 2) / (sd * np.sqrt(2 * np.pi))
            dens *= 1 + t_steps * c3 / sd**3 / 6 * (z**3 - 3 * z)
            g = np.exp(-t * y) - np.exp(-(t + 1) * y)
            d = np.exp(t_steps * k - t * eps) * np.trapezoid(g * dens, dx=y[1] - y[0])
            print(f"float64 {direction}: eps {eps}: t* = {t:.6g}, delta (+skew) = {d:.6g}")


def main():
    print(f"sigma {SIGMA}, q {Q}, T {T}, delta {DELTA}")
    float64_cross_check()
    for direction in ("remove",):
        for eps in (mp.mpf("782.33"), mp.mpf("782.79"), mp.mpf("783.29")):
            try:
                vals = [delta_at(direction, eps, order) for order in (0, 1, 2)]
            except (ZeroDivisionError, ValueError) as e:  # no saddle point in range
                print(f"{direction}: eps {eps}: no saddle point ({e})")
                continue
            t = vals[0][1]
            print(f"{direction}: eps {eps}: t* = {mp.nstr(t, 8)}, delta (normal / +skew / "
                  f"+kurtosis) = {', '.join(mp.nstr(v[0], 10) for v in vals)}")
        try:
            eps_star = mp.findroot(lambda e: mp.log(delta_at(direction, e)[0] / DELTA),
                                   mp.mpf("782.5"))
            print(f"{direction}: epsilon(delta = 1e-5) = {mp.nstr(eps_star, 10)}")
        except (ZeroDivisionError, ValueError) as e:
            print(f"{direction}: epsilon not found ({e})")


if __name__ == "__main__":
    main()
