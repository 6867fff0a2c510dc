"""Where a perceptron run loses to Novikoff's bound: the proof's slack, factor by factor.

Novikoff's proof (seed 000, Lemmas 1 and 2) follows w, the sum of y·x' over the k mistakes (x' the
vector the learner sees: x, or (x, c) with a bias), against a unit comparator u of margin γ and
radius R: Lemma 1 gives w·u ≥ kγ, Cauchy–Schwarz (w·u)² ≤ ‖w‖²‖u‖², Lemma 2 ‖w‖² ≤ kR². So

    mistakes / (R/γ)² = (kγ / w·u)² · cos²(w, u) · ‖w‖² / (kR²),

each factor ≤ 1. ``progress`` near 1 means the mistakes made no more progress towards u than the
margin forces; ``angle`` near 1 that w points along u; ``norm`` near 1 that every mistake grew
‖w‖² by the most R² allows (a zero activation on an example of norm R). A run far below its bound
is held back by whichever factor is smallest. The curves w·u/γ (≥ k) and ‖w‖²/R² (≤ k) against
the mistake count k are the two lemmas as lines the learner stays on the right side of.

The factors hold for the perceptron rule with a constant step (each update is η·y·x' on a
mistake, so w/η is that sum): the perceptron (any bias rule), the running weights of the averaged
and voted perceptrons, the learning-rate perceptron at a constant rate, the batch perceptron with
M = 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.geometry import Certificate


@dataclass(frozen=True)
class Comparator:
    """A unit comparator on the vectors the learner sees, with its margin γ and radius R there."""

    u: np.ndarray  # unit, length d (+ 1 with a bias)
    margin: float
    radius: float


def novikoff_comparator(certificate: Certificate, radius: float, bias_feature: float) -> Comparator:
    """The comparator of Novikoff's bound on (x, c): (u, b/c)/√(1 + b²/c²), γ/√(…), √(R² + c²).

    Without a bias (c = 0) it is (u, γ, R) itself (then b = 0).
    """
    u = np.asarray(certificate.u, dtype=np.float64)
    if bias_feature == 0.0:
        return Comparator(u, float(certificate.margin), float(radius))
    scale = math.sqrt(1.0 + (certificate.b / bias_feature) ** 2)
    augmented = np.append(u, certificate.b / bias_feature) / scale
    return Comparator(augmented, certificate.margin / scale, math.sqrt(radius**2 + bias_feature**2))


@njit(cache=True, nogil=True)
def _checkpoint(w, u, k, checkpoints, progress, norms, mark):
    """At a checkpoint mistake count ``k``: record w·u and ‖w‖²; the next checkpoint's index."""
    if mark < checkpoints.shape[0] and checkpoints[mark] == k:
        dot = 0.0
        sq = 0.0
        for j in range(w.shape[0]):
            dot += w[j] * u[j]
            sq += w[j] * w[j]
        progress[mark] = dot
        norms[mark] = sq
        mark += 1
    return mark


@njit(cache=True, nogil=True)
def _trajectory_dense(X, y, rows, c, u, checkpoints, progress, norms):
    """Walk w = Σ y·(x, c) over the mistake rows; w·u and ‖w‖² at each checkpoint (1-based k)."""
    d = X.shape[1]
    w = np.zeros(d + 1)
    mark = 0
    for k in range(rows.shape[0]):
        i = rows[k]
        for j in range(d):
            w[j] += y[i] * X[i, j]
        w[d] += y[i] * c
        mark = _checkpoint(w, u, k + 1, checkpoints, progress, norms, mark)
    return w


@njit(cache=True, nogil=True)
def _trajectory_csr(data, indices, indptr, d, y, rows, c, u, checkpoints, progress, norms):
    """``_trajectory_dense`` for CSR rows."""
    w = np.zeros(d + 1)
    mark = 0
    for k in range(rows.shape[0]):
        i = rows[k]
        for p in range(indptr[i], indptr[i + 1]):
            w[indices[p]] += y[i] * data[p]
        w[d] += y[i] * c
        mark = _checkpoint(w, u, k + 1, checkpoints, progress, norms, mark)
    return w


@dataclass(frozen=True)
class Slack:
    """The three factors of mistakes / (R/γ)², and the lemma curves at mistake counts ``steps``."""

    progress: float
    angle: float
    norm: float
    steps: np.ndarray
    progress_curve: np.ndarray  # w·u/γ after k mistakes
    norm_curve: np.ndarray  # ‖w‖²/R² after k mistakes


def novikoff_slack(
    X, y_signed: np.ndarray, mistake_rows: np.ndarray, comparator: Comparator, bias_feature: float,
    steps: np.ndarray,
) -> Slack | None:  # fmt: skip
    """The proof's three factors for a run whose mistakes were on ``mistake_rows`` (in order).

    ``steps`` are the mistake counts (1-based, increasing) at which the curves are taken; the last
    mistake is always included for the factors. None when there was no mistake.
    """
    k = int(mistake_rows.shape[0])
    if k == 0:
        return None
    checkpoints = np.unique(np.append(np.asarray(steps, dtype=np.int64), k))
    progress = np.zeros(checkpoints.shape[0])
    norms = np.zeros(checkpoints.shape[0])
    u = np.ascontiguousarray(comparator.u, dtype=np.float64)
    if u.shape[0] == X.shape[1]:  # no bias: a zero last coordinate
        u = np.append(u, 0.0)
    rows = np.ascontiguousarray(mistake_rows, dtype=np.int64)
    y = np.ascontiguousarray(y_signed, dtype=np.float64)
    c = float(bias_feature)
    if sp.issparse(X):
        X = X.tocsr()
        _trajectory_csr(X.data.astype(np.float64), X.indices, X.indptr, X.shape[1], y, rows, c, u,
                        checkpoints, progress, norms)  # fmt: skip
    else:
        dense = np.ascontiguousarray(X, dtype=np.float64)
        _trajectory_dense(dense, y, rows, c, u, checkpoints, progress, norms)
    dot, sq = progress[-1], norms[-1]
    gamma, radius = comparator.margin, comparator.radius
    u_sq = float(u @ u)
    keep = np.isin(checkpoints, steps)
    return Slack(
        progress=float((k * gamma / dot) ** 2),
        angle=float(dot**2 / (sq * u_sq)),
        norm=float(sq / (k * radius**2)),
        steps=checkpoints[keep],
        progress_curve=progress[keep] / gamma,
        norm_curve=norms[keep] / radius**2,
    )
