"""Shared plumbing of the multiclass online learners: one weight row per class, argmax prediction.

``OnlineMulticlassClassifier`` reuses the binary base's validation, passes (``fit``,
``partial_fit``) and online record (``mistakes_``, ``updates_``, ``mistakes_per_pass_``,
``mistake_steps_``, ``mistake_indices_``, ``n_passes_``, ``converged_``, ``n_steps_``); only the
labels differ: two or more classes, mapped to class indices 0..k−1 (the order of ``classes_``)
instead of ±1. The weights are ``coef_`` (k, d) and ``intercept_`` (k,), float64.

Both rules, the multiclass perceptron and MIRA, run one Kesler pass (``kesler_pass_dense`` /
``kesler_pass_csr``): on a mistake the true class row gains τ·x and the predicted row loses it.
They differ in the step τ alone, which a subclass gives in ``_kesler_step`` (with
``_check_params`` for its hyper-parameters).

Prediction is the argmax of the scores W·x + b with ties going to the lowest class index. With
two classes ``decision_function`` returns s₁ − s₀ (scikit-learn's binary convention), whose sign
gives the same prediction: s₁ − s₀ > 0 exactly when s₁ > s₀ in floating point.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.utils.validation import validate_data

from lincls.errors import LinclsInputError, check_choice
from lincls.geometry import max_norm
from lincls.learners._base import (
    FLOAT_DTYPES,
    OnlineBinaryClassifier,
    check_finite,
    initial_weights,
    sorted_classes,
)

MULTICLASS_BIAS_MODES = ("feature", "none")


def multiclass_classes(y: np.ndarray) -> np.ndarray:
    """The sorted label values of ``y`` (at least two), or a one-line error naming ``y``."""
    return sorted_classes(y, needs="at least two classes")


@njit(cache=True, nogil=True)
def scores_dense(X, i, W, intercept, out):
    """The scores W·x_i + b of dense row ``i`` into ``out``; returns the argmax (lowest on ties).

    Each dot product is summed left to right in float64, then the class's bias is added.
    """
    n_classes, n_features = W.shape
    best = 0
    for c in range(n_classes):
        s = 0.0
        for j in range(n_features):
            s += W[c, j] * X[i, j]
        s += intercept[c]
        out[c] = s
        if s > out[best]:  # strictly greater: a tie keeps the lower index
            best = c
    return best


@njit(cache=True, nogil=True)
def scores_csr(data, indices, start, end, W, intercept, out):
    """``scores_dense`` for the CSR row ``data[start:end]``, ``indices[start:end]``."""
    n_classes = W.shape[0]
    best = 0
    for c in range(n_classes):
        s = 0.0
        for p in range(start, end):
            s += W[c, indices[p]] * data[p]
        s += intercept[c]
        out[c] = s
        if s > out[best]:
            best = c
    return best


@njit(cache=True, nogil=True)
def predictions_dense(X, W, intercept, scores):
    """Every dense row's prediction (int64), its scores into row i of ``scores`` (n, k): the
    pass's own arithmetic, so a row is wrong here exactly when the pass would err on it."""
    n = X.shape[0]
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = scores_dense(X, i, W, intercept, scores[i])
    return out


@njit(cache=True, nogil=True)
def predictions_csr(data, indices, indptr, W, intercept, scores):
    """``predictions_dense`` for CSR rows."""
    n = indptr.shape[0] - 1
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = scores_csr(data, indices, indptr[i], indptr[i + 1], W, intercept, scores[i])
    return out


@njit(cache=True, nogil=True)
def capped_step(scores, predicted, true, sqnorm, max_step):
    """MIRA's τ = min((s_ŷ − s_y + 1) / (2‖x‖²), M) from the scores; 0 (no step) when x = 0."""
    if sqnorm == 0.0:
        return 0.0
    return min((scores[predicted] - scores[true] + 1.0) / (2.0 * sqnorm), max_step)


@njit(cache=True, nogil=True)
def kesler_pass_dense(
    X,
    y,
    order,
    W,
    intercept,
    step,
    intercept_step,
    scores,
    mistake_rows,
    mistake_steps,
    capped=False,
):
    """One pass of a Kesler-construction rule over dense ``X[order]``, updating ``W`` in place.

    ``y`` holds class indices; ``intercept_step`` is c², the squared bias feature (1, or 0
    without a bias). On a mistake the true row gains τ·x and the predicted row loses it (the
    biases ±τ·c²): τ = ``step`` (the multiclass perceptron's lr), or with ``capped`` MIRA's
    ``capped_step`` with M = ``step`` and ‖x‖² = x·x + c². A mistake with τ = 0 (MIRA on x = 0)
    is not an update. Returns (mistakes, updates).
    """
    n_features = X.shape[1]
    mistakes = 0
    updates = 0
    for k in range(order.shape[0]):
        i = order[k]
        predicted = scores_dense(X, i, W, intercept, scores)
        true = y[i]
        if predicted != true:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
            tau = step
            if capped:
                sqnorm = 0.0
                for j in range(n_features):
                    xj = np.float64(X[i, j])
                    sqnorm += xj * xj
                tau = capped_step(scores, predicted, true, sqnorm + intercept_step, step)
            if tau > 0.0:
                for j in range(n_features):
                    change = np.float64(X[i, j]) * tau
                    W[true, j] += change
                    W[predicted, j] -= change
                intercept[true] += tau * intercept_step
                intercept[predicted] -= tau * intercept_step
                updates += 1
    return mistakes, updates


@njit(cache=True, nogil=True)
def kesler_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    W,
    intercept,
    step,
    intercept_step,
    scores,
    mistake_rows,
    mistake_steps,
    capped=False,
):
    """``kesler_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    mistakes = 0
    updates = 0
    for k in range(order.shape[0]):
        i = order[k]
        start = indptr[i]
        end = indptr[i + 1]
        predicted = scores_csr(data, indices, start, end, W, intercept, scores)
        true = y[i]
        if predicted != true:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
            tau = step
            if capped:
                sqnorm = 0.0
                for p in range(start, end):
                    xj = np.float64(data[p])
                    sqnorm += xj * xj
                tau = capped_step(scores, predicted, true, sqnorm + intercept_step, step)
            if tau > 0.0:
                for p in range(start, end):
                    change = np.float64(data[p]) * tau
                    W[true, indices[p]] += change
                    W[predicted, indices[p]] -= change
                intercept[true] += tau * intercept_step
                intercept[predicted] -= tau * intercept_step
                updates += 1
    return mistakes, updates


class OnlineMulticlassClassifier(OnlineBinaryClassifier):
    """Base of the multiclass online learners (Kesler's construction: a weight row per class).

    Subclasses set ``bias`` (``"feature"``: a constant feature 1 per row, or ``"none"``).
    """

    bias: str

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("bias", self.bias, MULTICLASS_BIAS_MODES)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags

    def _find_classes(self, y: np.ndarray) -> np.ndarray:
        """The sorted labels of ``y``, at least two."""
        return multiclass_classes(y)

    def _kernel_labels(self, y: np.ndarray) -> np.ndarray:
        """Class indices, as the Kesler kernels take them."""
        return self._class_indices(y)

    def _classes_and_labels(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(the sorted classes, the class index of every label) from one sort of numeric ``y``
        (where finding the classes and then looking every label up sorted it three times)."""
        if y.ndim == 1 and y.dtype.kind in "biuf":
            classes, indices = np.unique(y, return_inverse=True)
            whole = y.dtype.kind != "f" or bool(np.all(np.mod(classes, 1) == 0))
            if classes.shape[0] >= 2 and whole:  # else the long way words the error
                return classes, indices.astype(np.int64, copy=False)
        self.classes_ = self._find_classes(y)
        return self.classes_, self._kernel_labels(y)

    def _class_indices(self, y: np.ndarray) -> np.ndarray:
        """Labels mapped to their index in ``classes_`` (int64)."""
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise LinclsInputError(
                "y", f"label {y[unknown][0]!r} is not one of the classes {list(self.classes_)}"
            )
        return np.searchsorted(self.classes_, y).astype(np.int64)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        n_classes = self.classes_.shape[0]
        coef, intercept = initial_weights(X, coef_init, intercept_init, n_outputs=n_classes)
        self.coef_ = coef.astype(np.float64)
        self.intercept_ = intercept  # with bias="none" it stays at intercept_init (0 by default)
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        self.radius_ = max_norm(X)
        self.bias_feature_ = 1.0 if self.bias == "feature" else 0.0

    def _scores(self, X) -> np.ndarray:
        self._check_fitted()
        X = self._validate_X_predict(X)
        return np.asarray(X @ self.coef_.T, dtype=np.float64) + self.intercept_

    def _validate_X_predict(self, X):
        X = validate_data(
            self,
            X,
            accept_sparse="csr",
            dtype=list(FLOAT_DTYPES),
            reset=False,
            ensure_all_finite=False,
        )
        check_finite(X)
        return X

    def decision_function(self, X) -> np.ndarray:
        """Scores (n, k); with two classes s₁ − s₀ (n,), positive for ``classes_[1]``."""
        scores = self._scores(X)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X) -> np.ndarray:
        """The class of the highest score, the lowest class index on ties."""
        self._check_fitted()
        return self.classes_[np.argmax(self._scores(X), axis=1)]

    def _kesler_step(self) -> tuple[float, bool]:
        """(the step, whether it is MIRA's τ capped at it): all that tells the rules apart."""
        raise NotImplementedError  # pragma: no cover

    def _predictions(self, X) -> tuple[np.ndarray, np.ndarray]:
        """(the class index the current weights predict for every row, the scores (n, k)), as
        the pass computes them (validated ``X``, during training: the adversarial order)."""
        scores = np.empty((X.shape[0], self.classes_.shape[0]), dtype=np.float64)
        if sp.issparse(X):
            found = predictions_csr(
                X.data, X.indices, X.indptr, self.coef_, self.intercept_, scores
            )
        else:
            found = predictions_dense(X, self.coef_, self.intercept_, scores)
        return found, scores

    def _run_pass(self, X, y, order):
        n = order.shape[0]
        rows, steps = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
        scores = np.empty(self.classes_.shape[0], dtype=np.float64)
        step, capped = self._kesler_step()
        W, b, bias_step = self.coef_, self.intercept_, self.bias_feature_
        if sp.issparse(X):
            mistakes, updates = kesler_pass_csr(
                X.data, X.indices, X.indptr, y, order, W, b, step, bias_step, scores, rows, steps,
                capped,
            )  # fmt: skip
        else:
            mistakes, updates = kesler_pass_dense(
                X, y, order, W, b, step, bias_step, scores, rows, steps, capped
            )
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]


__all__ = [
    "MULTICLASS_BIAS_MODES",
    "OnlineMulticlassClassifier",
    "capped_step",
    "kesler_pass_csr",
    "kesler_pass_dense",
    "multiclass_classes",
    "predictions_csr",
    "predictions_dense",
    "scores_csr",
    "scores_dense",
]
