#!/usr/bin/env python3
"""Issue 19's baseline, "perturbed sufficient statistics", on the same splits as docs/linreg.md.

Issue 19 states the figures a private linear regression must beat as: perturb the sufficient
statistics X^T X and X^T y of a linear model, rows scaled into the unit ball by public ranges,
targets into [-1, 1], eps = 1, delta = 1e-5 (Wine 0.757, Kin8nm 0.201, Power 4.79; non-private
linear 0.650, 0.199, 4.59), without saying on which splits or with which calibration and solve.
This script reruns that baseline on OUR splits (0-4, and 0-19 where cheap) so the comparison is
like for like. Choices (fixed a priori, never tuned on the splits):

  * features clipped into the declared public ranges (crates/dp-sep/ranges/<set>.json, loaded by
    linreg_diffprivlib.load_ranges) and mapped onto [-1, 1]; an intercept 1 appended; every row
    divided by sqrt(d + 1), so ||x|| <= 1; target clipped and mapped onto [-1, 1];
  * release A = X^T X (upper triangle) and b = X^T y with one Gaussian mechanism: add/remove-one
    L2 sensitivity sqrt(||x x^T||_F^2 + ||x y||^2) <= sqrt(2); noise multiplier from the
    analytic Gaussian mechanism (Balle & Wang 2018, exact for one release) at (eps, delta);
  * solve: A symmetrised, projected onto the PSD cone (negative eigenvalues set to 0), plus the
    ridge lambda = sigma sqrt(d + 1) (about half the noise matrix's spectral norm), then
    w = (A + lambda I)^-1 b; predictions clamped into [-1, 1] and mapped back.
  * noise: numpy's default_rng(split) (a reproducible experiment, not a deployment).

Usage (from the repository root; numpy and scipy, e.g. the venv of requirements-diffprivlib.txt):
  python crates/vips-models/benches/linreg_perturbed_stats.py [--uci ../shared/data/uci]
Writes crates/vips-models/benches/linreg_perturbed_stats.json and prints a Markdown table.
"""

import argparse
import datetime
import json
import math
import os
import platform
import sys

import numpy as np
from scipy.stats import norm

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from linreg_diffprivlib import load_ranges, load_split, mean_se, rmse  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RANGES_DIR = os.path.join(ROOT, "crates", "dp-sep", "ranges")
SETS = [("wine-quality-red", "Wine", 20), ("kin8nm", "Kin8nm", 20), ("power-plant", "Power", 20)]
EPSILON, DELTA = 1.0, 1e-5


def analytic_gaussian_sigma(eps, delta, sens=1.0):
    """Smallest sigma with delta(eps) <= delta for one Gaussian release (Balle & Wang 2018)."""
    def dlt(s):
        a, b = sens / (2 * s), eps * s / sens
        return norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b)
    lo, hi = 1e-3, 1e3
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if dlt(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi  # the upper end: errs on the private side


def fit_predict(Xtr, ytr, Xte, ranges, rng, sigma):
    fr, tr_ = ranges
    lo = np.array([r[0] for r in fr]); hi = np.array([r[1] for r in fr])
    ce = np.array([r[2] for r in fr]); sc = np.array([r[3] for r in fr])
    ylo, yhi, yce, ysc = tr_
    d1 = len(fr) + 1

    def rows(X):
        Z = (np.clip(X, lo, hi) - ce) / sc
        return np.hstack([Z, np.ones((len(Z), 1))]) / math.sqrt(d1)

    Z, Zte = rows(Xtr), rows(Xte)
    t = (np.clip(ytr, ylo, yhi) - yce) / ysc
    A, b = Z.T @ Z, Z.T @ t
    if sigma is not None:
        upper = np.triu(rng.normal(0.0, sigma, (d1, d1)))
        A = A + upper + np.triu(upper, 1).T
        b = b + rng.normal(0.0, sigma, d1)
        vals, vecs = np.linalg.eigh(A)
        A = (vecs * np.clip(vals, 0.0, None)) @ vecs.T + sigma * math.sqrt(d1) * np.eye(d1)
    w = np.linalg.lstsq(A, b, rcond=None)[0]
    return np.clip(Zte @ w, -1.0, 1.0) * ysc + yce


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--uci", default=os.path.join(ROOT, "..", "shared", "data", "uci"))
    ap.add_argument("--out", default=os.path.join(HERE, "linreg_perturbed_stats.json"))
    args = ap.parse_args()
    sigma = math.sqrt(2.0) * analytic_gaussian_sigma(EPSILON, DELTA)
    out = {"provenance": {
        "script": "crates/vips-models/benches/linreg_perturbed_stats.py",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(), "numpy": np.__version__,
        "epsilon": EPSILON, "delta": DELTA, "noise_std_per_entry": sigma},
        "sets": {}}
    lines = ["| data set | perturbed statistics, splits 0-4 | splits 0-19 | non-private (same pipeline, no noise), 0-4 | 0-19 |",
             "|---|---|---|---|---|"]
    for name, label, nsplits in SETS:
        folder = os.path.join(args.uci, name)
        if not os.path.isdir(folder):
            print(f"{folder} is absent: {label} not run", file=sys.stderr)
            continue
        rpath = os.path.join(RANGES_DIR, f"{name}.json")
        priv, nonpriv = [], []
        for split in range(nsplits):
            Xtr, ytr, Xte, yte, ncol, feats, target = load_split(folder, split)
            fr, tr_, _, _ = load_ranges(rpath, ncol, feats, target)
            rng = np.random.default_rng(split)
            priv.append(rmse(fit_predict(Xtr, ytr, Xte, (fr, tr_), rng, sigma), yte))
            nonpriv.append(rmse(fit_predict(Xtr, ytr, Xte, (fr, tr_), rng, None), yte))
        out["sets"][name] = {"perturbed_stats": priv, "nonprivate_same_pipeline": nonpriv,
                             "mean_se_0_4": mean_se(priv[:5]), "mean_se_all": mean_se(priv),
                             "nonprivate_mean_se_0_4": mean_se(nonpriv[:5]),
                             "nonprivate_mean_se_all": mean_se(nonpriv)}
        f = lambda ms: f"{ms[0]:.4f} ± {ms[1]:.4f}"  # noqa: E731
        lines.append(f"| {label} | {f(mean_se(priv[:5]))} | {f(mean_se(priv))} | "
                     f"{f(mean_se(nonpriv[:5]))} | {f(mean_se(nonpriv))} |")
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
