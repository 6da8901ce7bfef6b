#!/usr/bin/env python3
"""Side-by-side baseline for the expfam criterion benches: the same computations in NumPy/SciPy.

Run in a venv with numpy and scipy (single thread, so it compares with the sequential Rust figure):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python3 crates/expfam/benches/compare_scipy.py

- E[ln beta] for the 50 x 5000 topic matrix of the former topic-matrix bench in
  benches/dirichlet_rows.rs (its Rust side, dirichlet_expectation_rows_into, was removed in issue 18),
  the way gensim / Hoffman's onlineldavb.py compute it: psi(lambda) - psi(lambda.sum(1))[:, None].
- natural -> moment for the same 1000-dimensional Gaussian as benches/gaussian_conversion.rs, with
  LAPACK Cholesky (scipy.linalg.cho_factor / cho_solve) and the covariance from the factor.
"""
import timeit

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import psi


def topic_matrix(k, v):
    i = np.arange(k)[:, None]
    j = np.arange(v)[None, :]
    h = (i * 2_654_435_761 + j * 40_503) % 1000
    return np.where(h < 20, 1.0 + h * 50.0, 0.01 + h * 1e-4)


def best(f, number, repeat=7):
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


lam = topic_matrix(50, 5000)
t = best(lambda: psi(lam) - psi(lam.sum(1))[:, None], number=20)
print(f"scipy E[ln beta] 50x5000: {t * 1e3:.3f} ms")

d = 1000
mean = np.sin(np.arange(d) * 0.37)
idx = np.arange(d)
cov = 0.6 ** np.abs(idx[:, None] - idx[None, :])
prec = np.linalg.inv(cov)
eta1, eta2 = prec @ mean, -0.5 * prec


def nat_to_moment():
    c = cho_factor(-2.0 * eta2, lower=True)
    m = cho_solve(c, eta1)
    s = cho_solve(c, np.eye(d))
    return m, s


def moment_to_nat():
    c = cho_factor(cov, lower=True)
    p = cho_solve(c, np.eye(d))
    return p @ mean, -0.5 * p


print(f"numpy/LAPACK natural->moment d=1000: {best(nat_to_moment, number=3) * 1e3:.1f} ms")
print(f"numpy/LAPACK moment->natural d=1000: {best(moment_to_nat, number=3) * 1e3:.1f} ms")
