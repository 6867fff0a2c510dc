"""The multiclass perceptron (Kesler's construction; seed 001 §9.4.1, seed 003).

One weight row per class; the prediction is the class of the highest score w_c·x + b_c (the lowest
class index on ties). On a mistake (predicted ŷ ≠ y) the true row gains lr·x and the predicted row
loses it; the other rows stay. With two classes this is still the Kesler rule (both rows move), not
the binary perceptron: a tie predicts ``classes_[0]`` instead of counting as a mistake.

The bias is a constant feature 1 per row (``bias="feature"``: b_y += lr, b_ŷ −= lr) or absent.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import check_number
from lincls.learners._multiclass_base import OnlineMulticlassClassifier, scores_csr, scores_dense


@njit(cache=True, nogil=True)
def multiclass_perceptron_pass_dense(
    X, y, order, W, intercept, lr, intercept_step, scores, mistake_rows, mistake_steps
):
    """One pass of the multiclass perceptron over dense ``X[order]``, updating ``W`` in place.

    ``y`` holds class indices; ``intercept_step`` is 1 for a bias feature, 0 without a bias.
    Every mistake is an update. Returns (mistakes, updates).
    """
    n_features = X.shape[1]
    mistakes = 0
    for k in range(order.shape[0]):
        i = order[k]
        predicted = scores_dense(X, i, W, intercept, scores)
        true = y[i]
        if predicted != true:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
            for j in range(n_features):
                step = np.float64(X[i, j]) * lr
                W[true, j] += step
                W[predicted, j] -= step
            intercept[true] += lr * intercept_step
            intercept[predicted] -= lr * intercept_step
    return mistakes, mistakes


@njit(cache=True, nogil=True)
def multiclass_perceptron_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    W,
    intercept,
    lr,
    intercept_step,
    scores,
    mistake_rows,
    mistake_steps,
):
    """``multiclass_perceptron_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    mistakes = 0
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
            for p in range(start, end):
                step = np.float64(data[p]) * lr
                W[true, indices[p]] += step
                W[predicted, indices[p]] -= step
            intercept[true] += lr * intercept_step
            intercept[predicted] -= lr * intercept_step
    return mistakes, mistakes


class MulticlassPerceptron(OnlineMulticlassClassifier):
    """The multiclass perceptron: on a mistake, w_y += lr·x and w_ŷ −= lr·x.

    Parameters
    ----------
    lr : float > 0
        The step. From w = 0 it only scales the weights: the mistakes do not depend on it.
    bias : {"feature", "none"}
        A constant feature 1 per class row, or no bias.
    max_passes : int ≥ 1
    stop_when_converged : bool
        Stop after the first pass without a mistake.
    shuffle : bool
    random_state : int, RandomState or None

    Attributes
    ----------
    coef_ : ndarray (n_classes, n_features), float64
    intercept_ : ndarray (n_classes,), float64
    classes_ : the sorted labels; row c of ``coef_`` belongs to ``classes_[c]``
    radius_ : the largest norm of the first training data
    bias_feature_ : 1 for ``bias="feature"``, else 0
    zero_init_ : whether the run started from W = 0, b = 0 (the bounds assume it)
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "multiclass_perceptron"

    def __init__(
        self,
        lr: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.lr = lr
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("lr", self.lr, low=0, low_open=True)

    def _run_pass(self, X, y, order):
        rows, steps, scores = self._run_arrays(order.shape[0])
        lr, bias_step = float(self.lr), self.bias_feature_
        if sp.issparse(X):
            mistakes, updates = multiclass_perceptron_pass_csr(
                X.data, X.indices, X.indptr, y, order, self.coef_, self.intercept_,
                lr, bias_step, scores, rows, steps,
            )  # fmt: skip
        else:
            mistakes, updates = multiclass_perceptron_pass_dense(
                X, y, order, self.coef_, self.intercept_, lr, bias_step, scores, rows, steps
            )
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]
