"""Certified multiclass data: a separating matrix U and every example's multiclass margin known.

A certified multiclass dataset comes with U (k × d, a row per class, ‖U‖_F = 1, the normalization
of Crammer & Singer's Theorem 1 and of the bound 2R²/γ²) and, for every training example,

    u_y·x_t − max_{r≠y} u_r·x_t ≥ margin   and   ‖x_t‖ ≤ radius,

with equality reached by one example each (to rounding). Labels are 0..k−1, balanced; row r of U
belongs to label r. The rows of U share one norm 1/√k and are spread out (orthonormal directions,
or a regular polygon when d < k), so every class wins on a wide cone of directions.
"""

from __future__ import annotations

import numpy as np

from lincls.data.dataset import Dataset
from lincls.errors import LinclsInputError, check_number, check_radius
from lincls.geometry import max_norm, multiclass_margins

_MAX_BATCHES = 10_000
_PROBE_BATCHES = 20  # a class with no point after this many batches: the margin is out of reach
_BATCH_CAP = 65_536  # candidates per batch, to bound memory on large n


def _prototypes(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    """k rows of norm 1/√k (so ‖U‖_F = 1), spread out in a random orientation.

    d ≥ k: orthonormal rows (scaled); 2 ≤ d < k: a regular k-gon in a random plane; d = 1: the
    two rows ±1/√2. Every class then owns a cone of directions, the widest it can.
    """
    if d == 1:
        return np.array([[-1.0], [1.0]]) / np.sqrt(2.0)
    basis, _ = np.linalg.qr(rng.standard_normal((d, min(k, d))))
    if d >= k:
        rows = basis.T
    else:
        angle = rng.uniform(0.0, 2.0 * np.pi) + 2.0 * np.pi * np.arange(k) / k
        rows = np.outer(np.cos(angle), basis[:, 0]) + np.outer(np.sin(angle), basis[:, 1])
    return rows / np.sqrt(k)


def _candidates(rng, U, count, radius):
    """Points of norm ≤ radius: half uniform in the ball, half near a random row's direction."""
    k, d = U.shape
    g = rng.standard_normal((count, d))
    direction = g / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-300)
    near = count // 2
    heads = U[rng.integers(0, k, near)] * np.sqrt(k)
    spread = rng.uniform(0.0, 1.0, (near, 1))
    mixed = heads + spread * direction[:near]
    direction[:near] = mixed / np.maximum(np.linalg.norm(mixed, axis=1, keepdims=True), 1e-300)
    size = radius * rng.uniform(0.0, 1.0, count) ** (1.0 / d)
    return direction * size[:, None]


def _sample(rng, U, n, margin, radius):
    """n points, balanced over the k classes, each with multiclass margin ≥ margin."""
    k = U.shape[0]
    quota = np.full(k, n // k)
    quota[: n % k] += 1
    taken = [[np.empty((0, U.shape[1]))] for _ in range(k)]
    have = np.zeros(k, dtype=np.int64)
    batch = min(max(4 * n, 512), _BATCH_CAP)
    for round_ in range(_MAX_BATCHES):
        if (have >= quota).all() or (round_ == _PROBE_BATCHES and (have[quota > 0] == 0).any()):
            break
        X = _candidates(rng, U, batch, radius)
        label = np.argmax(X @ U.T, axis=1)
        good = multiclass_margins(X, label, U, np.zeros(k)) >= margin
        for c in range(k):
            rows = X[good & (label == c)][: quota[c] - have[c]]
            taken[c].append(rows)
            have[c] += rows.shape[0]
    if (have < quota).any():
        raise LinclsInputError(
            "margin",
            f"{margin:g} is too large for n_classes = {k}, d = {U.shape[1]}, radius = {radius:g}: "
            "too few random points reach it; lower the margin or raise the radius",
        )
    X = np.vstack([np.vstack(rows) for rows in taken])
    y = np.repeat(np.arange(k), quota)
    order = rng.permutation(n)
    return X[order], y[order]


def make_multiclass(
    n: int,
    d: int,
    n_classes: int,
    margin: float,
    radius: float,
    seed: int = 0,
    n_test: int | None = None,
) -> Dataset:
    """Linearly separable multiclass data with multiclass margin ``margin``, certified by U.

    ‖U‖_F = 1; example 0 has u_y·x − max_{r≠y} u_r·x = margin exactly (to rounding) and example 1
    has norm exactly ``radius``. Labels 0..n_classes−1 are balanced (needs n ≥ n_classes; with
    d = 1 only two classes fit). The test split (``n_test``, default ``n``) is drawn the same way.
    """
    check_number("n", n, low=1, integer=True)
    check_number("d", d, low=1, integer=True)
    check_number("n_classes", n_classes, low=2, integer=True)
    check_number("margin", margin, low=0, low_open=True)
    check_radius(radius)
    check_number("seed", seed, low=0, integer=True)
    n, d, k = int(n), int(d), int(n_classes)
    if n < k:
        raise LinclsInputError("n", f"must be ≥ n_classes = {k} (every class appears), got {n}")
    if d == 1 and k > 2:
        raise LinclsInputError("n_classes", f"must be 2 when d = 1 (a line has two ends), got {k}")
    n_test = n if n_test is None else n_test
    check_number("n_test", n_test, low=0, integer=True)
    n_test = int(n_test)
    rng = np.random.default_rng(int(seed))
    U = _prototypes(rng, k, d)
    X, y = _sample(rng, U, n, margin, radius)
    gaps = multiclass_margins(X, y, U, np.zeros(k))
    # Attain the margin with example 0 (the gap scales with x) and the radius with example 1
    # (scaling it up only widens its gap).
    X[0] *= margin / gaps[0]
    X[1] *= radius / np.linalg.norm(X[1])
    X_test, y_test = _sample(rng, U, n_test, margin, radius) if n_test else (X[:0], y[:0])
    measured = float(multiclass_margins(X, y, U, np.zeros(k)).min())
    return Dataset(
        name="multiclass",
        X=X,
        y=y,
        X_test=X_test,
        y_test=y_test,
        margin=measured,
        radius=max_norm(X),
        params={
            "n": n,
            "d": d,
            "n_classes": k,
            "margin": margin,
            "radius": radius,
            "seed": seed,
        },
        U=U,
    )
