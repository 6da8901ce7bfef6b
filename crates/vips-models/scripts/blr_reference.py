#!/usr/bin/env python3
"""Reference AUCs for private Bayesian logistic regression on breast_cancer (WDBC).

Runs scikit-learn's LogisticRegression (non-private) and IBM diffprivlib's LogisticRegression
(objective perturbation, epsilon-DP) over the same 100 stratified 80/20 splits and the same public
unit-ball transform as the Rust crate (`vips_models::blr::wdbc_feature_map`): each feature onto
[-1, 1] by the published WDBC ranges (sklearn DESCR "Summary Statistics"), divided by sqrt(31)
(30 features + an intercept slot), so every row has L2 norm <= 1. The 31st column is the constant
1/sqrt(31); both libraries get the 30 scaled features with fit_intercept=True and data_norm=1.

It writes crates/vips-models/tests/data/blr_reference.json with the split test indices (which
the Rust test `blr_breast_cancer` reuses), the per-split AUCs and their means.

Usage (from the workspace root, in a venv with scikit-learn and diffprivlib):
    python crates/vips-models/scripts/blr_reference.py ../shared/data/breast_cancer/breast_cancer.csv
"""
import json
import re
import sys
import warnings

import numpy as np
import sklearn
import diffprivlib
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedShuffleSplit
from diffprivlib.models import LogisticRegression as DPLogisticRegression

# Same numbers as vips_models::blr::WDBC_PUBLISHED_RANGES (checked against the DESCR below).
RANGES = [
    (6.981, 28.11), (9.71, 39.28), (43.79, 188.5), (143.5, 2501.0), (0.053, 0.163),
    (0.019, 0.345), (0.0, 0.427), (0.0, 0.201), (0.106, 0.304), (0.05, 0.097),
    (0.112, 2.873), (0.36, 4.885), (0.757, 21.98), (6.802, 542.2), (0.002, 0.031),
    (0.002, 0.135), (0.0, 0.396), (0.0, 0.053), (0.008, 0.079), (0.001, 0.03),
    (7.93, 36.04), (12.02, 49.54), (50.41, 251.2), (185.2, 4254.0), (0.071, 0.223),
    (0.027, 1.058), (0.0, 1.252), (0.0, 0.291), (0.156, 0.664), (0.055, 0.208),
]
EPSILONS = [0.5, 1.0, 2.0, 4.0]
N_SPLITS = 100


def check_ranges():
    descr = load_breast_cancer().DESCR
    rows = re.findall(r"^[a-z ()]+:\s+([0-9.]+)\s+([0-9.]+)\s*$", descr, flags=re.M)
    parsed = [(float(a), float(b)) for a, b in rows]
    assert parsed == RANGES, "published ranges differ from the DESCR table"


def main(path):
    check_ranges()
    raw = np.genfromtxt(path, delimiter=",", skip_header=1)
    x_raw, y = raw[:, :30], raw[:, 30].astype(int)
    lo = np.array([r[0] for r in RANGES])
    hi = np.array([r[1] for r in RANGES])
    x = ((x_raw - (lo + hi) / 2) / ((hi - lo) / 2)) / np.sqrt(31.0)
    norms = np.sqrt((x ** 2).sum(axis=1) + 1.0 / 31.0)
    splitter = StratifiedShuffleSplit(n_splits=N_SPLITS, test_size=0.2, random_state=0)
    splits = list(splitter.split(x, y))
    out = {
        "provenance": {
            "script": "crates/vips-models/scripts/blr_reference.py",
            "python": sys.version.split()[0],
            "numpy": np.__version__,
            "scikit-learn": sklearn.__version__,
            "diffprivlib": diffprivlib.__version__,
            "data": "breast_cancer.csv (569 x 30, target 1 = benign)",
            "transform": "published WDBC ranges onto [-1,1], / sqrt(31); intercept by fit_intercept",
            "splits": "StratifiedShuffleSplit(n_splits=100, test_size=0.2, random_state=0)",
            "sklearn_model": "LogisticRegression(C=1.0, max_iter=10000)",
            "diffprivlib_model": "LogisticRegression(epsilon=eps, data_norm=1.0, C=1.0, random_state=split)",
            "max_row_norm_with_intercept": float(norms.max()),
        },
        "splits": [{"test": [int(i) for i in te]} for _, te in splits],
        "sklearn": {},
        "diffprivlib": {},
    }
    aucs = []
    for tr, te in splits:
        clf = LogisticRegression(C=1.0, max_iter=10000).fit(x[tr], y[tr])
        aucs.append(roc_auc_score(y[te], clf.predict_proba(x[te])[:, 1]))
    out["sklearn"] = {"auc_mean": float(np.mean(aucs)), "auc_per_split": aucs}
    for eps in EPSILONS:
        aucs = []
        for s, (tr, te) in enumerate(splits):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clf = DPLogisticRegression(epsilon=eps, data_norm=1.0, C=1.0, random_state=s)
                clf.fit(x[tr], y[tr])
            p = clf.predict_proba(x[te])[:, 1]
            aucs.append(roc_auc_score(y[te], p))
        out["diffprivlib"][str(eps)] = {"auc_mean": float(np.mean(aucs)), "auc_per_split": aucs}
        print(f"diffprivlib eps {eps}: mean AUC {np.mean(aucs):.4f}", file=sys.stderr)
    print(f"sklearn: mean AUC {out['sklearn']['auc_mean']:.4f}", file=sys.stderr)
    dest = "crates/vips-models/tests/data/blr_reference.json"
    with open(dest, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"wrote {dest}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/breast_cancer/breast_cancer.csv")
