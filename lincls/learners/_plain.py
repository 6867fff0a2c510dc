"""The checks of X and y for the arrays a run's data are, without scikit-learn's general path.

scikit-learn's ``validate_data`` and ``check_classification_targets`` take any array-like (data
frames, array-API arrays, lists, sparse matrices) and pay for it: ~0.3 ms and ~0.5 ms a call on
100 rows, where a cheap run checks its arrays six times (~3 ms of ~12). Every dataset lincls
builds is a C-ordered float64 or float32 ndarray with integer labels, and for those the outcome of
these checks is known without the general path: the arrays come back as they are and the
estimator's ``n_features_in_`` is set (``reset``) or compared. These functions give that outcome
for such arrays and None for any other input, which the caller then checks as before; a test
holds them to scikit-learn's answers (``tests/test_plain_arrays.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

FLOAT_TYPES = (np.float64, np.float32)


def plain_matrix(X: Any) -> bool:
    """Whether ``X`` is an ndarray (not a subclass) of floats, 2-d, C-ordered, non-empty: what
    ``check_array(X, dtype=[float64, float32], order="C")`` returns unchanged."""
    return (
        type(X) is np.ndarray
        and X.ndim == 2
        and X.dtype.type in FLOAT_TYPES
        and X.flags.c_contiguous
        and X.shape[0] >= 1
        and X.shape[1] >= 1
    )


# Floats of at most this size convert to int64 exactly: scikit-learn's test of whole labels
# (``y != y.astype(int)``) answers for them as ``y == floor(y)`` does.
WHOLE_FLOATS = 2.0**53


def plain_labels(y: Any) -> bool:
    """Whether ``y`` is a non-empty 1-d ndarray of integers, booleans or whole finite floats
    (±1.0, as lincls's data have them): labels that ``check_classification_targets`` accepts as
    they are (binary or multiclass)."""
    if not (type(y) is np.ndarray and y.ndim == 1 and y.shape[0] >= 1):
        return False
    if y.dtype.kind in "biu":
        return True
    if y.dtype.type not in FLOAT_TYPES:
        return False
    with np.errstate(invalid="ignore"):  # NaN compares false: not plain
        return bool(np.all(np.abs(y) <= WHOLE_FLOATS) and np.all(y == np.floor(y)))


def layout(estimator: Any, X: Any, y: Any, reset: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """(X, y) as ``validate_data(estimator, X, y, dtype=[float64, float32], order="C",
    accept_sparse="csr")`` returns them, with ``n_features_in_`` set as it sets it, when both
    are plain (``plain_matrix``, ``plain_labels``) and the estimator never saw feature names;
    None otherwise (and when a later call's width differs: scikit-learn words that error)."""
    if not (plain_matrix(X) and plain_labels(y) and y.shape[0] == X.shape[0]):
        return None
    if hasattr(estimator, "feature_names_in_"):
        return None
    if reset:
        estimator.n_features_in_ = X.shape[1]
        return X, y
    if getattr(estimator, "n_features_in_", None) != X.shape[1]:
        return None
    return X, y


def finite(X: np.ndarray) -> bool:
    """Whether every value of ``X`` is finite: one sum, element by element only when the sum is
    not (NaN, inf, or finite values whose sum overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(X.sum()) or np.isfinite(X).all())


def scores(estimator: Any, X: Any) -> np.ndarray | None:
    """``LinearClassifierMixin.decision_function(X)`` of a fitted ``estimator`` for a plain,
    finite ``X`` of its width, the same products in the same order (``X @ coef_.T +
    intercept_``); None for any other ``X`` (scikit-learn's path refuses NaN and inf)."""
    if not plain_matrix(X) or hasattr(estimator, "feature_names_in_") or not finite(X):
        return None
    if getattr(estimator, "n_features_in_", None) != X.shape[1]:
        return None
    values = X @ estimator.coef_.T + estimator.intercept_
    return values.reshape(-1) if values.shape[1] == 1 else values
