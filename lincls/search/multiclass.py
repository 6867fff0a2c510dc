"""The adaptive search's moves against an online multiclass learner (the multiclass perceptron,
MIRA, a plugin's Kesler-style learner), and the certificate its sequences are scored with.

The candidates are the binary search's families on a learner with a weight row per class: a
fresh coordinate (the multiclass orthogonal game's move), a direction in the span of what was
shown, and a direction the learner is least sure of: a random one with every row of its weight
matrix projected out, so that all its class scores are equal there (its tie, up to the bias).
The label is a class the learner errs on, asked of a copy through its own one-example step
(``lincls.games.multiclass.wrong_class``), classes not yet used as labels first, so that the
sequence's classes are the learner's.

A run's multiclass bounds need a separating matrix for the data (a plain dataset has none), so
each sequence is scored with the multiclass hard-margin SVM's U (min ‖V‖_F with every
(v_y − v_r)·x_t ≥ 1 on Kesler's rows, rescaled to ‖U‖_F = 1) as its certificate: the largest
multiclass margin of the data, so the bound is the tightest a certificate gives, and the
sequence is in the theorem's class exactly when the SVM exists.
"""

from __future__ import annotations

import copy

import numpy as np

from lincls.bounds._best import kesler_rows  # Kesler's rows, as the best comparator has them
from lincls.data import Dataset
from lincls.games._play import check_online
from lincls.games.multiclass import (
    check_multiclass_online,
    label_order,
    present_class,
    start_multiclass,
    wrong_class,
)
from lincls.geometry import comparators, max_norm, multiclass_margins
from lincls.learners._kinds import takes_multiclass
from lincls.search.instance import Scored, Target, score_dataset

CLASSES = 3  # the classes a searched sequence is labelled with


def check_searchable(learner) -> None:
    """Refuse a learner no search can play: neither a binary nor a multiclass online learner
    (``LinclsInputError`` naming ``learner`` or its option)."""
    if takes_multiclass(learner):
        check_multiclass_online(learner, "search")
    else:
        check_online(learner, "search")


def start(learner, d: int, radius: float) -> None:
    """``learner`` started on examples of ``d`` features and norm ``radius``, classes 0 … 2."""
    template = np.zeros((2, d))
    template[0, 0] = radius
    start_multiclass(learner, template, CLASSES)


def _unit(v: np.ndarray) -> np.ndarray | None:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 and np.isfinite(norm) else None


def candidate(
    family: str, X: np.ndarray, used: int, learner, d: int, radius: float, rng: np.random.Generator
) -> tuple[np.ndarray, int] | None:
    """A candidate example of ``family`` (fresh, span, unsure) of norm ``radius`` after the
    sequence ``X`` (``used`` coordinates so far), and the coordinates it then uses."""
    x = np.zeros(d)
    if family == "fresh" or X.shape[0] == 0:
        if used >= d:
            return None
        x[used] = radius
        return x, used + 1
    if family == "span":
        v = _unit(rng.standard_normal(X.shape[0]) @ X)
        return None if v is None else (radius * v, used)
    width = min(used + 1, d)  # one coordinate more than the sequence holds
    z = np.zeros(d)
    z[:width] = rng.standard_normal(width)
    W = np.asarray(getattr(learner, "coef_", np.zeros((0, d))), dtype=np.float64)
    if W.size and W.shape[1] == d and np.all(np.isfinite(W)):
        z = z - np.linalg.lstsq(W.T, z, rcond=None)[0] @ W  # z minus its part in W's row space
    v = _unit(z)
    return None if v is None else (radius * v, width)


def child(learner, X: np.ndarray, y: np.ndarray, x: np.ndarray, rng: np.random.Generator):
    """A copy of ``learner`` shown x with a class it errs on: (learner, X + x, y + label)."""
    learner = copy.deepcopy(learner)
    label = wrong_class(learner, x, label_order(np.isin(np.arange(CLASSES), y), rng))
    present_class(learner, x, label)
    return learner, np.vstack([X, x[np.newaxis, :]]), np.append(y, label)


def separating_matrix(X: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """The multiclass hard-margin SVM's U (a row per class of ``y``, sorted; ‖U‖_F = 1) on the
    rows as given, without offsets; None when no matrix separates them or a class is missing."""
    classes, index = np.unique(y, return_inverse=True)
    k, radius = classes.shape[0], max_norm(X)
    if k < 2 or radius == 0.0:
        return None
    solution = comparators.hard_margin(kesler_rows(np.asarray(X) / radius, index, k))
    if solution is None:
        return None
    U = np.asarray(solution.v, dtype=np.float64).reshape(k, X.shape[1])
    norm = float(np.linalg.norm(U))
    return U / norm if norm > 0 and np.isfinite(norm) else None


def dataset_with(X: np.ndarray, y: np.ndarray, U: np.ndarray) -> Dataset:
    """The sequence as a dataset without a test set, certified by the multiclass ``U``."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    index = np.searchsorted(np.unique(y), y)
    margin = float(multiclass_margins(X, index, U, np.zeros(U.shape[0])).min())
    empty = np.zeros((0, X.shape[1]))
    return Dataset(name="search", X=X, y=y, X_test=empty, y_test=np.zeros(0, dtype=np.int64),
                   margin=margin, radius=max_norm(X), params={}, U=U)  # fmt: skip


def score(target: Target, X: np.ndarray, y: np.ndarray) -> tuple[Scored, np.ndarray | None]:
    """The run of ``target``'s learner on (X, y) with the SVM's U as certificate, and that U
    (no ratio, and None, where the data are not separable or hold one class)."""
    if X.shape[0] == 0 or not np.all(np.isfinite(X)):
        return Scored(0.0, None, None), None
    U = separating_matrix(X, y)
    if U is None:
        return Scored(0.0, None, None), None
    return score_dataset(target, dataset_with(X, y, U)), U
