"""The hard-margin program's exact points: on a guess of the support vectors, and their bounds.

For min ‖w‖² s.t. z_t·w ≥ 1 (with labels y, z_t·w + y_t b ≥ 1 and b outside the norm), used by
``lincls.geometry.comparators.hard_margin``: ``rescaled`` measures any direction w on the rows (its
best offset, scaled to functional margin 1), ``dual_bound`` turns any multipliers into a lower bound
on ‖w*‖², and ``polished`` solves the KKT equations exactly on the rows an interior point marks
as support vectors. An interior point's accuracy suffers on badly conditioned rows (a nearly
collinear cloud: relative gaps of ~1e-6 at its tolerances of 1e-10); the polished point reaches
the rounding of the data (~1e-12), and whichever point is kept is re-measured, so a wrong guess
of the support costs accuracy, never validity.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

SUPPORT = 1e-6  # multipliers above this share of the largest mark the support vectors
POLISH_ROWS = 500  # the most support vectors a polished point is solved on
POLISH_CELLS = 5_000_000  # and the most entries of their rows (a dense least squares)
POLISH_ROUNDS = 10  # pivoting rounds


def rescaled(Z, y: np.ndarray | None, w: np.ndarray) -> tuple[np.ndarray, float, float] | None:
    """(w, b, ‖w‖²) scaled so that min_t (z_t·w + y_t b) = 1, b the best offset for w (0 without
    labels), or None when w separates nothing."""
    margins = np.asarray(Z @ w).ravel()
    if y is None:
        low, b = float(margins.min()), 0.0
    else:
        low_positive, low_negative = float(margins[y > 0].min()), float(margins[y < 0].min())
        low, b = 0.5 * (low_positive + low_negative), 0.5 * (low_negative - low_positive)
    if not (low > 0.0 and np.isfinite(low)):
        return None
    w = w / low
    return w, b / low, float(w @ w)


def dual_bound(Z, y: np.ndarray | None, alpha: np.ndarray) -> float:
    """(Σα)²/‖Zᵀα‖² ≤ ‖w*‖² at α clipped at 0 (and, with labels, each class's sum scaled to
    their mean, so that Σα_t y_t = 0)."""
    alpha = np.maximum(alpha, 0.0)
    if y is not None:
        sums = float(alpha[y > 0].sum()), float(alpha[y < 0].sum())
        if min(sums) <= 0.0:
            return 0.0
        alpha = alpha * np.where(y > 0, 0.5 * sum(sums) / sums[0], 0.5 * sum(sums) / sums[1])
    aZ = np.asarray(Z.T @ alpha).ravel()
    return float(alpha.sum() ** 2 / (aZ @ aZ)) if aZ.any() else 0.0


def polished(Z, y: np.ndarray | None, alpha: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Points (w, α) that meet the KKT equations exactly on a guess S of the support vectors.

    S starts as the rows with α_t > ``SUPPORT``·max α. On S, min ‖w‖ s.t. z_t·w = 1 is solved by
    least squares on the rows themselves (not their Gram matrix, whose condition is squared);
    with labels, x_t·w + b = y_t with b eliminated: (x_t − x_r)·w = y_t − y_r against one row r
    of S, and α follows from w = Σ_t α_t z_t with Σ_t α_t y_t = 0. Then, as in block principal
    pivoting, every row of S with α_t < 0 and every row outside with margin below 1 swap sides,
    for at most ``POLISH_ROUNDS`` rounds. Yields each round's point; none when S has more than
    ``POLISH_ROWS`` rows or the rows more than ``POLISH_CELLS`` entries (a dense least squares).
    """
    top = float(alpha.max())
    support = alpha > SUPPORT * top
    if not top > 0.0:
        return
    for _ in range(POLISH_ROUNDS):
        rows = np.flatnonzero(support)
        k = rows.shape[0]
        if k < (1 if y is None else 2) or k > POLISH_ROWS or k * Z.shape[1] > POLISH_CELLS:
            return
        S = Z[rows]
        S = np.asarray(S.toarray() if sp.issparse(S) else S, dtype=np.float64)
        if y is None:
            w = np.linalg.lstsq(S, np.ones(k), rcond=None)[0]
            multipliers, b = np.linalg.lstsq(S.T, w, rcond=None)[0], 0.0
        else:
            labels = y[rows]
            X = S * labels[:, None]  # the rows x_t themselves
            D = X[1:] - X[0]
            w = np.linalg.lstsq(D, labels[1:] - labels[0], rcond=None)[0]
            beta = np.linalg.lstsq(D.T, w, rcond=None)[0]
            multipliers = np.concatenate(([-beta.sum() * labels[0]], beta * labels[1:]))
            b = float(labels[0] - X[0] @ w)
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(multipliers))):
            return
        alpha = np.zeros(Z.shape[0])
        alpha[rows] = multipliers
        yield w, alpha
        margins = np.asarray(Z @ w).ravel() + (0.0 if y is None else y * b)
        wrong = np.where(support, alpha < 0.0, margins < 1.0 - 1e-12)
        if not wrong.any():
            return
        support ^= wrong
