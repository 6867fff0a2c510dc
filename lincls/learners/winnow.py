"""Winnow (Littlestone 1988) and Balanced Winnow: multiplicative updates of positive weights.

**Winnow** keeps one weight per feature, all 1 at the start, and predicts the positive class
(``classes_[1]``) iff w·x ≥ θ (θ = ``threshold``, the number of features by default). On a
mistake only the weights of the active features (x_j > 0) change:

- a false negative promotes them: w_j ← w_j·α^{x_j} (×α for a boolean feature);
- a false positive demotes them: ``"winnow2"`` w_j ← w_j / α^{x_j};
  ``"winnow1"`` eliminates them, w_j ← 0.

For boolean features this is Littlestone's algorithm exactly; α^{x_j} extends it to non-negative
real features. The features must be non-negative (a negative x_j would turn a promotion into a
demotion of that weight), so ``fit`` rejects negative values.

**BalancedWinnow** keeps two positive vectors w⁺, w⁻ (all 1 at the start) and predicts positive
iff (w⁺ − w⁻)·x ≥ θ (θ = 0 by default): on a mistake on label y = ±1, w⁺_j ← w⁺_j·α^{y·x_j} and
w⁻_j ← w⁻_j·α^{−y·x_j} for the active features. The pair represents weights of either sign, so
it takes features of either sign as well.

Both count a mistake when the prediction is wrong and update only then (updates = mistakes).
``coef_`` is w (or w⁺ − w⁻) and ``intercept_`` is −θ, so ``decision_function`` is w·x − θ and
``predict`` is positive iff it is ≥ 0 (a tie is positive, as in Littlestone's rule).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._base import OnlineBinaryClassifier

WINNOW_VARIANTS = ("winnow2", "winnow1")


@njit(cache=True, nogil=True)
def _factor(alpha, x):
    # α^x, exact for the boolean case
    return alpha if x == 1.0 else alpha**x


@njit(cache=True, nogil=True)
def winnow_pass_dense(X, y, order, w, theta, alpha, eliminate, mistake_rows, mistake_steps):
    """One pass of Winnow over dense ``X[order]``, updating ``w`` in place; returns mistakes.

    Positive iff w·x ≥ θ. A false negative multiplies the active weights by α^{x_j}; a false
    positive divides them by it, or sets them to 0 when ``eliminate`` (Winnow1).
    """
    n_features = X.shape[1]
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        score = 0.0
        for j in range(n_features):
            score += w[j] * X[t, j]
        if (score >= theta) == (y[t] > 0.0):
            continue
        mistake_rows[mistakes] = t
        mistake_steps[mistakes] = k
        mistakes += 1
        for j in range(n_features):
            x = X[t, j]
            if x != 0.0:
                if y[t] > 0.0:
                    w[j] *= _factor(alpha, x)
                elif eliminate:
                    w[j] = 0.0
                else:
                    w[j] /= _factor(alpha, x)
    return mistakes


@njit(cache=True, nogil=True)
def winnow_pass_csr(
    data, indices, indptr, y, order, w, theta, alpha, eliminate, mistake_rows, mistake_steps
):
    """``winnow_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        score = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            score += w[indices[p]] * data[p]
        if (score >= theta) == (y[t] > 0.0):
            continue
        mistake_rows[mistakes] = t
        mistake_steps[mistakes] = k
        mistakes += 1
        for p in range(indptr[t], indptr[t + 1]):
            x = data[p]
            if x != 0.0:
                j = indices[p]
                if y[t] > 0.0:
                    w[j] *= _factor(alpha, x)
                elif eliminate:
                    w[j] = 0.0
                else:
                    w[j] /= _factor(alpha, x)
    return mistakes


@njit(cache=True, nogil=True)
def balanced_pass_dense(X, y, order, w_pos, w_neg, theta, alpha, mistake_rows, mistake_steps):
    """One pass of Balanced Winnow over dense ``X[order]``; returns the mistakes.

    Positive iff (w⁺ − w⁻)·x ≥ θ; a mistake on y multiplies w⁺_j by α^{y·x_j} and w⁻_j by
    α^{−y·x_j} for the active features.
    """
    n_features = X.shape[1]
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        score = 0.0
        for j in range(n_features):
            score += (w_pos[j] - w_neg[j]) * X[t, j]
        if (score >= theta) == (y[t] > 0.0):
            continue
        mistake_rows[mistakes] = t
        mistake_steps[mistakes] = k
        mistakes += 1
        for j in range(n_features):
            x = X[t, j]
            if x != 0.0:
                factor = _factor(alpha, x)
                if y[t] > 0.0:
                    w_pos[j] *= factor
                    w_neg[j] /= factor
                else:
                    w_pos[j] /= factor
                    w_neg[j] *= factor
    return mistakes


@njit(cache=True, nogil=True)
def balanced_pass_csr(
    data, indices, indptr, y, order, w_pos, w_neg, theta, alpha, mistake_rows, mistake_steps
):
    """``balanced_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        score = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            j = indices[p]
            score += (w_pos[j] - w_neg[j]) * data[p]
        if (score >= theta) == (y[t] > 0.0):
            continue
        mistake_rows[mistakes] = t
        mistake_steps[mistakes] = k
        mistakes += 1
        for p in range(indptr[t], indptr[t + 1]):
            x = data[p]
            if x != 0.0:
                j = indices[p]
                factor = _factor(alpha, x)
                if y[t] > 0.0:
                    w_pos[j] *= factor
                    w_neg[j] /= factor
                else:
                    w_pos[j] /= factor
                    w_neg[j] *= factor
    return mistakes


def _is_boolean(X) -> bool:
    values = X.data if sp.issparse(X) else X
    return bool(np.all((values == 0.0) | (values == 1.0)))


def _positive_weights(given, count: int, field: str) -> np.ndarray:
    values = np.asarray(given, dtype=np.float64).reshape(-1)
    if values.shape[0] != count or not np.isfinite(values).all() or (values <= 0).any():
        raise LinclsInputError(
            field, f"must hold {count} finite values > 0 (multiplicative weights), got {values!r}"
        )
    return values


class _WinnowBase(OnlineBinaryClassifier):
    """Shared parts: the threshold, the predict rule (≥), the record of boolean input."""

    def _check_params(self) -> None:
        super()._check_params()
        check_number("alpha", self.alpha, low=1, low_open=True)

    def _threshold_for(self, n_features: int) -> float:
        raise NotImplementedError  # pragma: no cover

    def _validate_X_y(self, X, y, reset: bool):
        X, y = super()._validate_X_y(X, y, reset)
        boolean = _is_boolean(X)
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

    def predict(self, X) -> np.ndarray:
        """The positive class (``classes_[1]``) iff w·x ≥ θ, i.e. decision_function ≥ 0."""
        scores = self.decision_function(X)
        return self.classes_[(scores >= 0.0).astype(np.int64)]


class Winnow(_WinnowBase):
    """Winnow1 / Winnow2 (Littlestone 1988): positive iff w·x ≥ θ; multiplicative updates.

    Parameters
    ----------
    alpha : float > 1
        The promotion (and Winnow2's demotion) factor α.
    threshold : float > 0 or None
        θ; None means the number of features n (Littlestone's choice θ = n).
    variant : {"winnow2", "winnow1"}
        Demote by ÷α (Winnow2) or eliminate, w_j ← 0 (Winnow1), on a false positive.
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s

    ``fit(X, y, coef_init=...)`` takes starting weights > 0 (default all 1); there is no
    ``intercept_init``: the threshold is the parameter ``threshold``.

    Attributes
    ----------
    coef_ : ndarray (1, n_features), float64, the weights w
    intercept_ : ndarray (1,), −θ
    threshold_ : θ used
    standard_init_ : whether the weights started at 1 (Littlestone's bounds assume it)
    boolean_input_ : whether every training value was 0 or 1 (the bounds need it)
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "winnow"

    def __init__(
        self,
        alpha: float = 2.0,
        threshold: float | None = None,
        variant: str = "winnow2",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.alpha = alpha
        self.threshold = threshold
        self.variant = variant
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _check_params(self) -> None:
        super()._check_params()
        if self.threshold is not None:
            check_number("threshold", self.threshold, low=0, low_open=True)
        check_choice("variant", self.variant, WINNOW_VARIANTS)

    def _threshold_for(self, n_features: int) -> float:
        return float(n_features if self.threshold is None else self.threshold)

    def _validate_X_y(self, X, y, reset: bool):
        X, y = super()._validate_X_y(X, y, reset)
        values = X.data if sp.issparse(X) else X
        if values.size and values.min() < 0.0:
            flat = int(np.argmin(values))
            if sp.issparse(X):
                row = int(np.searchsorted(X.indptr, flat, side="right") - 1)
            else:
                row = flat // X.shape[1]
            raise LinclsInputError(
                "X",
                f"Negative values in data: Winnow needs features ≥ 0, row {row} holds "
                f"{values.min():g} (BalancedWinnow takes either sign)",
            )
        return X, y

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self._start(X, intercept_init)
        n_features = X.shape[1]
        if coef_init is None:
            self.coef_ = np.ones((1, n_features))
        else:
            self.coef_ = _positive_weights(coef_init, n_features, "coef_init")[np.newaxis, :]
        self.standard_init_ = bool(np.all(self.coef_ == 1.0))

    def _run_pass(self, X, y, order):
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        eliminate = self.variant == "winnow1"
        theta, alpha, w = self.threshold_, float(self.alpha), self.coef_[0]
        if sp.issparse(X):
            mistakes = winnow_pass_csr(
                X.data, X.indices, X.indptr, y, order, w, theta, alpha, eliminate, rows, steps
            )
        else:
            mistakes = winnow_pass_dense(X, y, order, w, theta, alpha, eliminate, rows, steps)
        return int(mistakes), int(mistakes), rows[:mistakes], steps[:mistakes]


class BalancedWinnow(_WinnowBase):
    """Balanced Winnow: w⁺, w⁻ > 0, positive iff (w⁺ − w⁻)·x ≥ θ; multiplicative updates.

    Parameters
    ----------
    alpha : float > 1
    threshold : float ≥ 0, default 0
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s

    ``fit(X, y, coef_init=...)`` takes 2·n_features starting weights > 0, w⁺ then w⁻ (default
    all 1); no ``intercept_init`` (the threshold is the parameter ``threshold``).

    Attributes
    ----------
    weights_positive_, weights_negative_ : ndarray (n_features,), w⁺ and w⁻
    coef_ : ndarray (1, n_features), w⁺ − w⁻
    intercept_ : ndarray (1,), −θ
    threshold_, standard_init_, boolean_input_ : as ``Winnow``'s
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "balanced_winnow"

    def __init__(
        self,
        alpha: float = 2.0,
        threshold: float = 0.0,
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.alpha = alpha
        self.threshold = threshold
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("threshold", self.threshold, low=0)

    def _threshold_for(self, n_features: int) -> float:
        return float(self.threshold)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self._start(X, intercept_init)
        n_features = X.shape[1]
        if coef_init is None:
            self.weights_positive_ = np.ones(n_features)
            self.weights_negative_ = np.ones(n_features)
        else:
            both = _positive_weights(coef_init, 2 * n_features, "coef_init")
            self.weights_positive_ = both[:n_features].copy()
            self.weights_negative_ = both[n_features:].copy()
        self.standard_init_ = bool(
            np.all(self.weights_positive_ == 1.0) and np.all(self.weights_negative_ == 1.0)
        )
        self.coef_ = (self.weights_positive_ - self.weights_negative_)[np.newaxis, :]

    def _run_pass(self, X, y, order):
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        theta, alpha = self.threshold_, float(self.alpha)
        w_pos, w_neg = self.weights_positive_, self.weights_negative_
        if sp.issparse(X):
            mistakes = balanced_pass_csr(
                X.data, X.indices, X.indptr, y, order, w_pos, w_neg, theta, alpha, rows, steps
            )
        else:
            mistakes = balanced_pass_dense(X, y, order, w_pos, w_neg, theta, alpha, rows, steps)
        self.coef_ = (w_pos - w_neg)[np.newaxis, :]
        return int(mistakes), int(mistakes), rows[:mistakes], steps[:mistakes]
