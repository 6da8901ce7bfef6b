#!/usr/bin/env python3
"""diffprivlib's LinearRegression on the UCI splits of docs/linreg.md (issue 19).

Reference comparison for the private Bayesian linear regression of vips-models and the
diffprivlib column of `cargo xtask bench --only regression` (which reads the JSON written here;
xtask never runs Python). For the nine UCI sets (a set without a declared ranges file in
crates/dp-sep/ranges/ is recorded as not run), splits 0-4, it fits

  * diffprivlib.models.LinearRegression (pure epsilon-DP, delta = 0) at epsilon in
    {0.5, 1, 2, 4}, with bounds_X / bounds_y taken from the SAME declared public ranges as the
    project (crates/dp-sep/ranges/<data set>.json, matched by column name through the file's
    `columns` list and the split's index_features.txt / index_target.txt, as
    dp_sep::PublicRanges::from_file_by_index does). The bounds never come from the data.
    random_state = split (fixed per split, the same number as the project's --noise-seed).
    Two inputs, both using only the public ranges:
      - "raw":    original units, bounds = [lower, upper] per column (what a user would write);
      - "mapped": every column clipped into its range and mapped by (v - centre) / scale onto
                  [-1, 1] (the project's Standardizer::from_public_ranges), bounds = [-1, 1];
                  predictions mapped back to original units.
    diffprivlib clips X and y into the bounds itself (models/linear_regression.py,
    _preprocess_data), so records outside the ranges are clipped in both inputs.
  * sklearn.linear_model.LinearRegression, non-private, original units, no clipping;
  * the mean predictor (training mean of the target, non-private).

Test RMSE is in original units against the unclipped test targets; mean and standard error
(sample std / sqrt(5)) over the splits (the median is stored too: diffprivlib's errors are
heavy-tailed when its noised quadratic objective is indefinite and scipy's minimize runs off). Writes a JSON file with provenance and per-split values
and prints a Markdown table.

Usage (from the repository root, in a virtualenv built from requirements-diffprivlib.txt):
  python crates/vips-models/benches/linreg_diffprivlib.py [--uci ../shared/data/uci] \
      [--out crates/vips-models/benches/linreg_diffprivlib.json]
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import warnings

import numpy as np

import diffprivlib
import scipy
import sklearn
from diffprivlib.models import LinearRegression as DPLinearRegression
from sklearn.linear_model import LinearRegression

DATASETS = [
    ("yacht", "Yacht"),
    ("bostonHousing", "Boston"),
    ("energy", "Energy"),
    ("concrete", "Concrete"),
    ("wine-quality-red", "Wine"),
    ("kin8nm", "Kin8nm"),
    ("power-plant", "Power"),
    ("naval-propulsion-plant", "Naval"),
    ("protein-tertiary-structure", "Protein"),
]
SPLITS = [0, 1, 2, 3, 4]
EPSILONS = [0.5, 1.0, 2.0, 4.0]
HERE = os.path.dirname(os.path.abspath(__file__))
RANGES_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "dp-sep", "ranges"))


def read_ints(path):
    with open(path) as f:
        return [int(float(t)) for t in f.read().split()]


def load_split(folder, split):
    d = os.path.join(folder, "data")
    data = np.loadtxt(os.path.join(d, "data.txt"))
    feats = read_ints(os.path.join(d, "index_features.txt"))
    (target,) = read_ints(os.path.join(d, "index_target.txt"))
    tr = read_ints(os.path.join(d, f"index_train_{split}.txt"))
    te = read_ints(os.path.join(d, f"index_test_{split}.txt"))
    if np.isnan(data).any():
        raise SystemExit(f"{folder}: NaN in data.txt")
    return (data[tr][:, feats], data[tr, target], data[te][:, feats], data[te, target],
            data.shape[1], feats, target)


def load_ranges(path, n_columns, feats, target):
    """Public ranges by column name, as dp_sep::PublicRanges::from_file_by_index."""
    with open(path) as f:
        spec = json.load(f)
    cols = spec["columns"]
    if len(cols) != n_columns or len(set(cols)) != len(cols):
        raise SystemExit(f"{path}: `columns` does not name the {n_columns} data columns")
    extra = set(spec["ranges"]) - set(cols)
    if extra:
        raise SystemExit(f"{path}: ranges for unknown columns {sorted(extra)}")

    def get(c):
        r = spec["ranges"][cols[c]]
        lo, hi = float(r["lower"]), float(r["upper"])
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise SystemExit(f"{path}: bad range for {cols[c]}")
        centre = float(r.get("centre", (lo + hi) / 2))
        scale = float(r.get("scale", (hi - lo) / 2))
        return lo, hi, centre, scale

    fr = [get(c) for c in feats]
    return fr, get(target), [cols[c] for c in feats], cols[target]


def rmse(pred, y):
    return float(np.sqrt(np.mean((pred - y) ** 2)))


def mean_se(v):
    v = np.asarray(v, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v)))


def run(uci):
    out = {}
    for name, _ in DATASETS:
        folder = os.path.join(uci, name)
        rpath = os.path.join(RANGES_DIR, f"{name}.json")
        if not os.path.exists(rpath):
            # No declared public ranges: diffprivlib's bounds would have to come from the data.
            out[name] = {"info": {"ranges_file": None,
                                  "note": "no declared public ranges: not run"}}
            continue
        res = {"mean_predictor": [], "sklearn_nonprivate": []}
        for eps in EPSILONS:
            res[f"dpl_raw_eps{eps:g}"] = []
            res[f"dpl_mapped_eps{eps:g}"] = []
        info = None
        for split in SPLITS:
            Xtr, ytr, Xte, yte, ncol, feats, target = load_split(folder, split)
            fr, tr_, fnames, tname = load_ranges(rpath, ncol, feats, target)
            lo = np.array([r[0] for r in fr]); hi = np.array([r[1] for r in fr])
            ce = np.array([r[2] for r in fr]); sc = np.array([r[3] for r in fr])
            ylo, yhi, yce, ysc = tr_
            if info is None:
                info = {"ranges_file": os.path.relpath(rpath, os.path.join(HERE, "..", "..", "..")),
                        "features": fnames, "target": tname,
                        "bounds_X": [lo.tolist(), hi.tolist()], "bounds_y": [ylo, yhi]}
            info.setdefault("n_train", []).append(len(ytr))
            info.setdefault("n_test", []).append(len(yte))
            info.setdefault("train_rows_outside_ranges", []).append(
                int(np.any((Xtr < lo) | (Xtr > hi), axis=1).sum()))
            info.setdefault("train_targets_outside_range", []).append(
                int(((ytr < ylo) | (ytr > yhi)).sum()))

            res["mean_predictor"].append(rmse(np.full_like(yte, ytr.mean()), yte))
            res["sklearn_nonprivate"].append(rmse(LinearRegression().fit(Xtr, ytr).predict(Xte), yte))

            Ztr = (np.clip(Xtr, lo, hi) - ce) / sc
            Zte = (np.clip(Xte, lo, hi) - ce) / sc
            ztr = (np.clip(ytr, ylo, yhi) - yce) / ysc
            zlo, zhi = (lo - ce) / sc, (hi - ce) / sc
            zylo, zyhi = (ylo - yce) / ysc, (yhi - yce) / ysc
            for eps in EPSILONS:
                m = DPLinearRegression(epsilon=eps, bounds_X=(lo, hi), bounds_y=(ylo, yhi),
                                       random_state=split)
                m.fit(Xtr, ytr)
                res[f"dpl_raw_eps{eps:g}"].append(rmse(m.predict(Xte), yte))
                m = DPLinearRegression(epsilon=eps, bounds_X=(zlo, zhi), bounds_y=(zylo, zyhi),
                                       random_state=split)
                m.fit(Ztr, ztr)
                res[f"dpl_mapped_eps{eps:g}"].append(rmse(m.predict(Zte) * ysc + yce, yte))
        out[name] = {"info": info,
                     "test_rmse_per_split": res,
                     "test_rmse_mean_se": {k: mean_se(v) for k, v in res.items()},
                     "test_rmse_median": {k: float(np.median(v)) for k, v in res.items()}}
    return out


def fmt(ms, digits):
    m, s = ms
    if abs(m) >= 100:
        return f"{m:.3g} ± {s:.2g}"
    return f"{m:.{digits}f} ± {s:.{digits}f}"


def table(out):
    cols = ["mean_predictor", "sklearn_nonprivate"] + [f"dpl_raw_eps{e:g}" for e in EPSILONS]
    head = ["data set", "mean predictor", "sklearn, non-private"] + \
        [f"diffprivlib eps={e:g}" for e in EPSILONS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label in DATASETS:
        if "test_rmse_mean_se" not in out[name]:
            lines.append(f"| {label} | " + " | ".join(["not run"] * (len(head) - 1)) + " |")
            continue
        digits = 2 if name == "power-plant" else 3
        ms = out[name]["test_rmse_mean_se"]
        lines.append("| " + " | ".join([label] + [fmt(ms[c], digits) for c in cols]) + " |")
    lines.append("")
    head = ["data set"] + [f"diffprivlib mapped eps={e:g}" for e in EPSILONS]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label in DATASETS:
        if "test_rmse_mean_se" not in out[name]:
            continue
        digits = 2 if name == "power-plant" else 3
        ms = out[name]["test_rmse_mean_se"]
        lines.append("| " + " | ".join(
            [label] + [fmt(ms[f"dpl_mapped_eps{e:g}"], digits) for e in EPSILONS]) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uci", default="../shared/data/uci")
    ap.add_argument("--out", default=os.path.join(HERE, "linreg_diffprivlib.json"))
    a = ap.parse_args()
    t0 = datetime.datetime.now(datetime.timezone.utc)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = run(a.uci)
    warn = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    t1 = datetime.datetime.now(datetime.timezone.utc)

    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return None

    doc = {
        "what": "diffprivlib LinearRegression vs the project's private Bayesian linear regression "
                "(issue 19, docs/linreg.md, cargo xtask bench --only regression); test RMSE in original units, mean and standard "
                "error over splits 0-4",
        "privacy": "diffprivlib LinearRegression is pure epsilon-DP (delta = 0): functional "
                   "mechanism with Laplace noise, epsilon/(d+1) for the private means used to "
                   "centre X and y, the rest for the objective's coefficients. bounds_X/bounds_y "
                   "are the declared public ranges, never the data. The mean predictor and "
                   "sklearn rows are non-private references.",
        "epsilons": EPSILONS,
        "delta": 0.0,
        "splits": SPLITS,
        "random_state": "split index (0-4), the same for every epsilon",
        "variants": {
            "dpl_raw": "original units, bounds = public ranges",
            "dpl_mapped": "clip into public ranges, (v - centre)/scale onto [-1, 1], bounds "
                          "[-1, 1]; predictions mapped back",
        },
        "provenance": {
            "command": " ".join(["python"] + sys.argv),
            "python": sys.executable,
            "argv": sys.argv,
            "started_utc": t0.isoformat(timespec="seconds"),
            "finished_utc": t1.isoformat(timespec="seconds"),
            "machine": {"hostname": platform.node(), "platform": platform.platform(),
                        "processor": platform.machine(), "cpu_count": os.cpu_count()},
            "uptime": sh(["uptime"]),
            "git_commit": sh(["git", "-C", HERE, "rev-parse", "--short", "HEAD"]),
            "versions": {"python": platform.python_version(), "diffprivlib": diffprivlib.__version__,
                         "scikit-learn": sklearn.__version__, "numpy": np.__version__,
                         "scipy": scipy.__version__},
            "uci_dir": a.uci,
            "warnings": warn,
        },
        "results": out,
    }
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(table(out))
    print(f"\nwritten {os.path.relpath(a.out)}; diffprivlib {diffprivlib.__version__}, "
          f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, scipy {scipy.__version__}")


if __name__ == "__main__":
    main()
