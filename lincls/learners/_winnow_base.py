"""Shared parts of Winnow and Balanced Winnow: positive weights, multiplicative updates, θ.

Both predict the positive class (``classes_[1]``) iff their score is ≥ θ (θ = ``threshold``), count
a mistake when the prediction is wrong and update only then (updates = mistakes). A mistake
changes the weights of the active features (x_j ≠ 0) only, each by the factor α^{x_j} (×α for a
boolean feature). ``coef_`` is the weight vector of the score and ``intercept_`` is −θ, so
``decision_function`` is the score − θ and ``predict`` is positive iff it is ≥ 0 (a tie is
positive, as in Littlestone's rule).

One pass kernel per layout serves both rules: with ``w_neg`` None it runs Winnow on ``w``; with an
array it runs Balanced Winnow on w⁺ = ``w`` and w⁻ = ``w_neg``. numba compiles the two cases
apart (whether ``w_neg`` is None is known when it compiles), so each keeps a loop of its own.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_number
from lincls.learners._base import OnlineBinaryClassifier

# ln of the smallest positive float: α^x is 0 in floats where x·ln α is below it
LOG_SMALLEST = math.log(np.nextafter(0.0, 1.0))


@njit(cache=True, nogil=True)
def _factor(alpha, x):
    # α^x, exact for the boolean case
    return alpha if x == 1.0 else alpha**x


@njit(cache=True, nogil=True)
def _weight(w, w_neg, j):
    """The weight of feature ``j`` in the score: w_j (Winnow) or w⁺_j − w⁻_j (Balanced Winnow)."""
    if w_neg is None:
        return w[j]
    return w[j] - w_neg[j]


@njit(cache=True, nogil=True)
def _update(w, w_neg, j, x, positive, alpha, eliminate):
    """The step of active feature ``j`` (value ``x``) on a mistake on a ``positive`` example.

    Winnow: a false negative multiplies w_j by α^x; a false positive divides it, or sets it to 0
    when ``eliminate`` (Winnow1). Balanced Winnow: w⁺_j by α^{±x} and w⁻_j by α^{∓x}.
    """
    if w_neg is None:
        if positive:
            w[j] *= _factor(alpha, x)
        elif eliminate:
            w[j] = 0.0
        else:
            w[j] /= _factor(alpha, x)
    else:
        factor = _factor(alpha, x)
        if positive:
            w[j] *= factor
            w_neg[j] /= factor
        else:
            w[j] /= factor
            w_neg[j] *= factor


@njit(cache=True, nogil=True)
def multiplicative_pass_dense(
    X, y, order, w, theta, alpha, eliminate, mistake_rows, mistake_steps, w_neg=None
):
    """One pass over dense ``X[order]``, updating the weights in place; returns the mistakes.

    Without ``w_neg``: Winnow, positive iff w·x ≥ θ (``eliminate``: Winnow1's demotion to 0).
    With it: Balanced Winnow, positive iff (w⁺ − w⁻)·x ≥ θ, w⁺ = ``w``, w⁻ = ``w_neg``.
    """
    n_features = X.shape[1]
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        score = 0.0
        for j in range(n_features):
            score += _weight(w, w_neg, j) * X[t, j]
        if (score >= theta) == (y[t] > 0.0):
            continue
        mistake_rows[mistakes] = t
        mistake_steps[mistakes] = k
        mistakes += 1
        positive = y[t] > 0.0
        for j in range(n_features):
            x = X[t, j]
            if x != 0.0:
                _update(w, w_neg, j, x, positive, alpha, eliminate)
    return mistakes


@njit(cache=True, nogil=True)
def multiplicative_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    w,
    theta,
    alpha,
    eliminate,
    mistake_rows,
    mistake_steps,
    w_neg=None,
):
    """``multiplicative_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        score = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            score += _weight(w, w_neg, indices[p]) * data[p]
        if (score >= theta) == (y[t] > 0.0):
            continue
        mistake_rows[mistakes] = t
        mistake_steps[mistakes] = k
        mistakes += 1
        positive = y[t] > 0.0
        for p in range(indptr[t], indptr[t + 1]):
            x = data[p]
            if x != 0.0:
                _update(w, w_neg, indices[p], x, positive, alpha, eliminate)
    return mistakes


def is_boolean(X) -> bool:
    """Whether every value of ``X`` (dense or CSR) is 0 or 1."""
    values = X.data if sp.issparse(X) else X
    return bool(np.all((values == 0.0) | (values == 1.0)))


def positive_weights(given, count: int, field: str) -> np.ndarray:
    """``given`` as ``count`` float64 weights, all finite and > 0, or an error naming ``field``."""
    values = np.asarray(given, dtype=np.float64).reshape(-1)
    if values.shape[0] != count or not np.isfinite(values).all() or (values <= 0).any():
        raise LinclsInputError(
            field, f"must hold {count} finite values > 0 (multiplicative weights), got {values!r}"
        )
    return values


class WinnowBase(OnlineBinaryClassifier):
    """Shared parts: α, the threshold, the predict rule (≥), the record of boolean input, a pass.

    A subclass gives θ (``_threshold_for``), its weights (``_init_weights``) and what a pass runs
    on (``_pass_weights``).
    """

    alpha: float

    def _check_params(self) -> None:
        super()._check_params()
        check_number("alpha", self.alpha, low=1, low_open=True)

    def _threshold_for(self, n_features: int) -> float:
        raise NotImplementedError  # pragma: no cover

    def _pass_weights(self) -> tuple[np.ndarray, np.ndarray | None, bool]:
        """(w or w⁺, w⁻ or None, whether a demotion eliminates) that a pass updates in place."""
        raise NotImplementedError  # pragma: no cover

    def _validate_X_y(self, X, y, reset: bool):
        X, y = super()._validate_X_y(X, y, reset)
        boolean = is_boolean(X)
        self.boolean_input_ = boolean if reset else boolean and self.boolean_input_
        return X, y

    def _start(self, X, intercept_init) -> float:
        if intercept_init is not None:
            raise LinclsInputError(
                "intercept_init", "Winnow has no bias to start from; set `threshold` instead"
            )
        theta = self._threshold_for(X.shape[1])
        self.threshold_ = theta
        self.intercept_ = np.array([-theta])
        return theta

    def _check_factors(self, X) -> None:
        """The update divides by α^{x_j}, which is 0 in floats for a value x_j far enough below 0
        (only Balanced Winnow takes one): ``LinclsInputError`` naming alpha there, where numba's
        ZeroDivisionError ended the run. Factors past the float range on the other side make the
        weights infinite, which a run reports as a rule without a hyperplane."""
        values = X.data if sp.issparse(X) else X
        lowest = float(values.min()) if values.size else 0.0
        if lowest < 0.0 and float(self.alpha) ** lowest == 0.0:
            room = LOG_SMALLEST / lowest  # alpha < e^room
            most = f"{math.exp(room):.6g}" if room > 1e-4 else f"1 + {room:.3g}"
            raise LinclsInputError(
                "alpha",
                f"alpha^x is 0 in floats for the lowest x_j = {lowest:.3g}, and the update divides "
                f"by it: alpha must be below e^({-LOG_SMALLEST:.2f}/{-lowest:.3g}) = {most} for "
                f"these data (or scale them), got {self.alpha:g}",
            )

    def _run_pass(self, X, y, order):
        self._check_factors(X)
        rows, steps = self._mistake_buffers(order.shape[0])
        w, w_neg, eliminate = self._pass_weights()
        theta, alpha = self.threshold_, float(self.alpha)
        if sp.issparse(X):
            mistakes = multiplicative_pass_csr(
                X.data, X.indices, X.indptr, y, order, w, theta, alpha, eliminate, rows, steps,
                w_neg,
            )  # fmt: skip
        else:
            mistakes = multiplicative_pass_dense(
                X, y, order, w, theta, alpha, eliminate, rows, steps, w_neg
            )
        return int(mistakes), int(mistakes), rows[:mistakes], steps[:mistakes]

    def predict(self, X) -> np.ndarray:
        """The positive class (``classes_[1]``) iff the score ≥ θ, i.e. decision_function ≥ 0."""
        scores = self.decision_function(X)
        return self.classes_[(scores >= 0.0).astype(np.int64)]


__all__ = [
    "WinnowBase",
    "is_boolean",
    "multiplicative_pass_csr",
    "multiplicative_pass_dense",
    "positive_weights",
]
