"""MIRA as seed 003 states it (after Crammer & Singer 2003): the multiclass perceptron step scaled.

On a mistake (predicted ŷ ≠ y, ties to the lowest class index) the predicted row loses τ·x and the
true row gains it, with

    τ = min(((w_ŷ − w_y)·x + 1) / (2 x·x), M),

x the vector the learner sees ((x, 1) with ``bias="feature"``, so x·x includes the 1 and w·x the
bias). Nothing changes on a correct prediction. Seed 003's prose gives this τ; its pseudocode
writes the numerator as (w_y − w_ŷ)·x + 1, which is ≤ 1 on a mistake and can be negative (a step
the wrong way); we follow the prose, which makes the scores differ by exactly 1 after an uncapped
step: (w_y − w_ŷ)·x goes up by 2τ x·x. The pseudocode has no cap; M = ∞ is its rule.

Mistakes and updates are counted separately: a mistake on x = 0 (possible only with
``bias="none"``) has no defined τ and moves nothing, so it is a mistake without an update.

This step is the passive-aggressive PA-I step (Crammer et al. 2006) with C = M on Kesler's
difference vector z = Φ(x, y) − Φ(x, ŷ), ‖z‖² = 2 x·x, taken only on mistakes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import check_number
from lincls.learners._multiclass_base import OnlineMulticlassClassifier, scores_csr, scores_dense


@njit(cache=True, nogil=True)
def _mira_step(scores, predicted, true, sqnorm, max_step):
    if sqnorm == 0.0:
        return 0.0
    return min((scores[predicted] - scores[true] + 1.0) / (2.0 * sqnorm), max_step)


@njit(cache=True, nogil=True)
def mira_pass_dense(
    X, y, order, W, intercept, max_step, norm_extra, scores, mistake_rows, mistake_steps
):
    """One pass of MIRA over dense ``X[order]``, updating ``W`` in place.

    ``y`` holds class indices; ``norm_extra`` is the squared bias feature (1, or 0 without a
    bias), added to x·x and scaling the bias step. Returns (mistakes, updates).
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
            sqnorm = 0.0
            for j in range(n_features):
                xj = np.float64(X[i, j])
                sqnorm += xj * xj
            tau = _mira_step(scores, predicted, true, sqnorm + norm_extra, max_step)
            if tau > 0.0:
                for j in range(n_features):
                    step = np.float64(X[i, j]) * tau
                    W[true, j] += step
                    W[predicted, j] -= step
                intercept[true] += tau * norm_extra
                intercept[predicted] -= tau * norm_extra
                updates += 1
    return mistakes, updates


@njit(cache=True, nogil=True)
def mira_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    W,
    intercept,
    max_step,
    norm_extra,
    scores,
    mistake_rows,
    mistake_steps,
):
    """``mira_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
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
            sqnorm = 0.0
            for p in range(start, end):
                xj = np.float64(data[p])
                sqnorm += xj * xj
            tau = _mira_step(scores, predicted, true, sqnorm + norm_extra, max_step)
            if tau > 0.0:
                for p in range(start, end):
                    step = np.float64(data[p]) * tau
                    W[true, indices[p]] += step
                    W[predicted, indices[p]] -= step
                intercept[true] += tau * norm_extra
                intercept[predicted] -= tau * norm_extra
                updates += 1
    return mistakes, updates


class MIRA(OnlineMulticlassClassifier):
    """MIRA: on a mistake, w_y += τ·x and w_ŷ −= τ·x, τ = min(((w_ŷ − w_y)·x + 1)/(2x·x), M).

    Parameters
    ----------
    max_step : float > 0
        M, the cap on τ (``inf`` for seed 003's uncapped pseudocode).
    bias : {"feature", "none"}
        A constant feature 1 per class row (in x·x and the scores), or no bias.
    max_passes : int ≥ 1
    stop_when_converged : bool
        Stop after the first pass without an update.
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

    bound_family = "mira"

    def __init__(
        self,
        max_step: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.max_step = max_step
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        if self.max_step != float("inf"):
            check_number("max_step", self.max_step, low=0, low_open=True)

    def _run_pass(self, X, y, order):
        rows, steps, scores = self._run_arrays(order.shape[0])
        cap, extra = float(self.max_step), self.bias_feature_
        if sp.issparse(X):
            mistakes, updates = mira_pass_csr(
                X.data, X.indices, X.indptr, y, order, self.coef_, self.intercept_,
                cap, extra, scores, rows, steps,
            )  # fmt: skip
        else:
            mistakes, updates = mira_pass_dense(
                X, y, order, self.coef_, self.intercept_, cap, extra, scores, rows, steps
            )
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]
