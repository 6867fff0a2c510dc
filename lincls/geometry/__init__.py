"""Geometry of a dataset as a learner sees it: radius, margins, and certificates (u, b, γ, R).

This module imports nothing of lincls, so data and learners use it; the package's heavier modules,
imported by name and never from here, measure the data's separators (``certificates``) and solve the
best comparators' programs (``comparators`` on ``programs``, ``newton`` and ``kkt``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


def row_norms(X) -> np.ndarray:
    """Euclidean norm of every row of a dense array or a sparse matrix, in float64."""
    if sp.issparse(X):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    Xd = np.asarray(X, dtype=np.float64)
    return np.sqrt(np.einsum("ij,ij->i", Xd, Xd))


def max_norm(X) -> float:
    """R: the largest row norm of ``X`` (0.0 when ``X`` has no rows)."""
    return float(row_norms(X).max()) if X.shape[0] else 0.0


def functional_margins(X, y_signed: np.ndarray, u: np.ndarray, b: float) -> np.ndarray:
    """y_t (u·x_t + b) for every example."""
    return y_signed * (np.asarray(X @ u, dtype=np.float64).ravel() + b)


@dataclass(frozen=True)
class Certificate:
    """A separator and the geometry it gives: ‖u‖ = 1, γ = min y(u·x + b), R = max ‖x‖.

    ``source`` says where (u, b) came from ("generator", "svm", ...). ``margin`` ≤ 0 means (u, b)
    does not separate the data; the separable-case theorems then do not apply. ``margins`` holds
    every example's y(u·x + b) (measured once, read by the bounds that need each example).
    ``gap`` is, for a maximum-margin separator, the relative duality gap of its program (no
    separator's margin exceeds margin/√(1 − gap)); None for the others.
    """

    u: np.ndarray
    b: float
    margin: float
    radius: float
    source: str
    margins: np.ndarray | None = field(default=None, repr=False, compare=False)
    gap: float | None = field(default=None, compare=False)

    @property
    def separates(self) -> bool:
        """Whether every example lies strictly on its side: γ > 0."""
        return self.margin > 0.0

    @property
    def homogeneous(self) -> bool:
        """Whether the separator passes through the origin (b = 0)."""
        return self.b == 0.0


def certify(
    X, y_signed: np.ndarray, u: np.ndarray, b: float, source: str, gap: float | None = None
) -> Certificate:
    """Measure the certificate of the separator (u, b) on (X, y): u is scaled to unit norm.

    The margin is min_t y_t(u·x_t + b) computed here, whatever produced (u, b); ``gap`` is
    carried as given (``Certificate.gap``)."""
    u = np.asarray(u, dtype=np.float64)
    scale = float(np.linalg.norm(u))
    if scale == 0.0:
        raise ValueError("a certificate needs a non-zero u")
    u, b = u / scale, float(b) / scale
    margins = functional_margins(X, y_signed, u, b)
    margin = float(margins.min()) if margins.shape[0] else 0.0
    return Certificate(u=u, b=b, margin=margin, radius=max_norm(X), source=source,
                       margins=margins, gap=gap)  # fmt: skip


def multiclass_margins(X, y_index: np.ndarray, U: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(u_y·x_t + b_y) − max_{r≠y} (u_r·x_t + b_r) for every example (y_index: row of U)."""
    scores = np.asarray(X @ np.asarray(U, dtype=np.float64).T, dtype=np.float64) + b
    rows = np.arange(scores.shape[0])
    true = scores[rows, y_index]
    others = scores.copy()
    others[rows, y_index] = -np.inf
    return true - others.max(axis=1)


@dataclass(frozen=True)
class MulticlassCertificate:
    """A multiclass separator (U, b) and its geometry: ‖U‖_F = 1 (b not counted),
    γ = min_t [(u_y·x_t + b_y) − max_{r≠y}(u_r·x_t + b_r)], R = max ‖x‖.

    Row r of ``U`` and entry r of ``b`` belong to the r-th class in sorted label order.
    ``margin`` ≤ 0 means (U, b) does not separate the data.
    """

    U: np.ndarray
    b: np.ndarray
    margin: float
    radius: float
    source: str

    @property
    def separates(self) -> bool:
        """Whether every example scores its own class strictly highest: γ > 0."""
        return self.margin > 0.0

    @property
    def homogeneous(self) -> bool:
        """Whether every class offset is 0."""
        return not np.any(self.b)


def certify_multiclass(
    X, y_index: np.ndarray, U: np.ndarray, b: np.ndarray | None, source: str
) -> MulticlassCertificate:
    """Measure the certificate of (U, b) on (X, y_index): scaled so that ‖U‖_F = 1."""
    U = np.asarray(U, dtype=np.float64)
    b = np.zeros(U.shape[0]) if b is None else np.asarray(b, dtype=np.float64)
    scale = float(np.linalg.norm(U))
    if scale == 0.0:
        raise ValueError("a certificate needs a non-zero U")
    U, b = U / scale, b / scale
    y_index = np.asarray(y_index, dtype=np.int64)
    margin = float(multiclass_margins(X, y_index, U, b).min()) if X.shape[0] else 0.0
    return MulticlassCertificate(U=U, b=b, margin=margin, radius=max_norm(X), source=source)


def augmented_scale(offset: float, bias_feature: float) -> float | None:
    """√(1 + b²/c²): the norm of (u, b/c) for a unit u, which divides margins on (x, c).

    A learner with a bias feature c sees x' = (x, c); the separator (u, b) becomes the unit
    (u, b/c)/√(1 + b²/c²), so every margin shrinks by this factor. ``None`` when the learner has
    no bias (c = 0) and the separator has an offset: no homogeneous separator is implied.
    """
    if bias_feature == 0.0:
        return 1.0 if offset == 0.0 else None
    return float(np.sqrt(1.0 + offset**2 / bias_feature**2))


def hinge_deficit(margins: np.ndarray, gamma: float, counts=None) -> float:
    """D = √(Σ_t k_t·max(0, γ − m_t)²): Freund and Schapire's total deficit at margin γ.

    ``margins`` are y_t u·x_t for a unit u; ``counts`` k_t are how often example t was presented
    (over several passes the sequence is the concatenation, so each presentation counts).
    """
    short = np.maximum(gamma - np.asarray(margins, dtype=np.float64), 0.0)
    weights = 1.0 if counts is None else np.asarray(counts, dtype=np.float64)
    return float(np.sqrt(np.sum(weights * short * short)))
