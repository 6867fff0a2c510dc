"""Boolean data: monotone disjunctions, the targets of Winnow (Littlestone 1988).

A k-of-n monotone disjunction labels x ∈ {0, 1}ⁿ positive iff at least one of k relevant
attributes is on. It is linearly separable: with R the relevant set, u = 1_R/√k and
b = −1/(2√k) give y(u·x + b) ≥ 1/(2√k) for every example (a negative has u·x = 0, a positive
u·x ≥ 1/√k), so the perceptron's bounds apply too, with that certificate.
"""

from __future__ import annotations

import numpy as np

from lincls.data.dataset import Dataset
from lincls.errors import LinclsInputError, check_number


def _sample(rng: np.random.Generator, n: int, n_features: int, density: float, relevant):
    X = (rng.random((n, n_features)) < density).astype(np.float64)
    y = np.where(X[:, relevant].any(axis=1), 1.0, -1.0)
    return X, y


def make_disjunction(
    n_features: int,
    k: int,
    n: int,
    seed: int = 0,
    n_test: int | None = None,
    density: float | None = None,
) -> Dataset:
    """Boolean examples labelled by a monotone disjunction of ``k`` of ``n_features`` attributes.

    Every attribute is on independently with probability ``density``; by default
    1 − 2^(−1/k), which makes each label positive with probability 1/2. The relevant attributes
    (drawn from ``seed``) are in ``Dataset.relevant``; the certificate is u = 1_R/√k,
    b = −1/(2√k), margin 1/(2√k). The test split (``n_test``, default ``n``) comes from the same
    distribution.
    """
    check_number("n_features", n_features, low=1, integer=True)
    check_number("k", k, low=1, integer=True)
    check_number("n", n, low=1, integer=True)
    check_number("seed", seed, low=0, integer=True)
    if k > n_features:
        raise LinclsInputError("k", f"must be ≤ n_features = {n_features}, got {k}")
    n_features, k, n = int(n_features), int(k), int(n)
    if density is None:
        density = 1.0 - 2.0 ** (-1.0 / k)
    check_number("density", density, low=0, high=1, low_open=True, high_open=True)
    n_test = n if n_test is None else n_test
    check_number("n_test", n_test, low=0, integer=True)
    rng = np.random.default_rng(int(seed))
    relevant = np.sort(rng.choice(n_features, size=k, replace=False))
    X, y = _sample(rng, n, n_features, float(density), relevant)
    X_test, y_test = _sample(rng, int(n_test), n_features, float(density), relevant)
    u = np.zeros(n_features)
    u[relevant] = 1.0 / np.sqrt(k)
    return Dataset.certified(
        name="disjunction",
        X=X,
        y=y,
        X_test=X_test,
        y_test=y_test,
        u=u,
        b=-0.5 / np.sqrt(k),
        params={
            "n_features": n_features,
            "k": k,
            "n": n,
            "seed": seed,
            "n_test": n_test,
            "density": float(density),
        },
        relevant=relevant,
    )
