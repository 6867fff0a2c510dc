"""The averaged perceptron (seed 000 §3.6; Freund & Schapire 1999): predict with the mean weights.

The weights averaged are those after *every* step, over all passes: with T steps in all,
w̄ = (1/T) Σ_{t=1..T} w_t (scikit-learn's ``SGDClassifier(average=True)`` uses the same mean).
The mistakes are the underlying perceptron's, so the perceptron's mistake bounds apply to them.

The mean is kept lazily, O(non-zeros) per mistake and nothing per correct example: a step Δ made
at 0-based global step s is part of the T − s weights w_{s+1}, …, w_T, so with u = Σ s·Δ over the
mistakes, w̄ = w − u/T (and the same for the bias).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.learners._kernel_tools import CSR_ROWS_AHEAD, prefetch_csr_row, unsigned_indices
from lincls.learners.perceptron import Perceptron


@njit(cache=True, nogil=True)
def averaged_pass_dense(
    X,
    y,
    order,
    w,
    intercept,
    u,
    u_intercept,
    lr,
    intercept_step,
    step0,
    mistake_rows,
    mistake_steps,
):
    """One perceptron pass over dense ``X[order]`` that also accumulates the lazy sums.

    ``w``, ``intercept`` follow the perceptron's update exactly (in float64); on a mistake at
    0-based global step s = ``step0`` + k, ``u`` and ``u_intercept`` gain s times the step.
    Returns the number of mistakes (= updates).
    """
    n_features = X.shape[1]
    tail = n_features - n_features % 4
    mistakes = 0
    for k in range(order.shape[0]):
        i = order[k]
        # Four partial sums break the dot product's add chain (1.5-2x an epoch). Only the sign
        # of the activation is used, and it can differ from a left-to-right sum only when the
        # activation is within rounding (~1e-16 of sum |w_j x_j|) of zero.
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(0, tail, 4):
            a0 += w[j] * X[i, j]
            a1 += w[j + 1] * X[i, j + 1]
            a2 += w[j + 2] * X[i, j + 2]
            a3 += w[j + 3] * X[i, j + 3]
        for j in range(tail, n_features):
            a0 += w[j] * X[i, j]
        activation = (a0 + a1) + (a2 + a3) + intercept[0]
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
            step = lr * y[i]
            weighted = np.float64(step0 + k) * step
            for j in range(n_features):
                xj = np.float64(X[i, j])
                w[j] += xj * step
                u[j] += xj * weighted
            intercept[0] += step * intercept_step
            u_intercept[0] += weighted * intercept_step
    return mistakes


@njit(cache=True, nogil=True)
def averaged_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    w,
    intercept,
    u,
    u_intercept,
    lr,
    intercept_step,
    step0,
    mistake_rows,
    mistake_steps,
):
    """``averaged_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``).

    The dot product is summed left to right here (as scikit-learn does). Pass unsigned views of
    ``indices`` and ``indptr`` (``unsigned_indices``); rows are prefetched ahead, as in
    ``perceptron_pass_csr``.
    """
    n = order.shape[0]
    last = n - 1
    mistakes = 0
    for k in range(n):
        prefetch_csr_row(data, indices, indptr, order[min(k + CSR_ROWS_AHEAD, last)])
        i = order[k]
        start = indptr[i]
        end = indptr[i + 1]
        activation = 0.0
        for p in range(start, end):
            activation += w[indices[p]] * data[p]
        activation += intercept[0]
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
            step = lr * y[i]
            weighted = np.float64(step0 + k) * step
            for p in range(start, end):
                j = indices[p]
                xj = np.float64(data[p])
                w[j] += xj * step
                u[j] += xj * weighted
            intercept[0] += step * intercept_step
            u_intercept[0] += weighted * intercept_step
    return mistakes


class AveragedPerceptron(Perceptron):
    """The perceptron, predicting with the mean of its weights after every step of every pass.

    Parameters are ``Perceptron``'s; ``stop_when_converged`` defaults to False here, because
    every further pass moves the mean towards the last weights (scikit-learn's
    ``SGDClassifier(average=True, tol=None)`` runs all its passes too).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), float64
        The averaged weights (1/T) Σ_t w_t; ``intercept_`` the averaged bias.
    last_coef_, last_intercept_ : the perceptron's weights after the last step
    radius_, bias_feature_, zero_init_ and the online record : as ``Perceptron``'s (the mistakes
        are the perceptron's, so ``bound_family = "perceptron"``)
    """

    def __init__(
        self,
        lr: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = False,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        super().__init__(
            lr=lr,
            bias=bias,
            max_passes=max_passes,
            stop_when_converged=stop_when_converged,
            shuffle=shuffle,
            random_state=random_state,
            intercept_decay=intercept_decay,
        )

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        super()._init_weights(X, coef_init, intercept_init)
        # The sums are kept in float64 whatever X's dtype: u grows like T·w.
        self.last_coef_ = self.coef_.astype(np.float64)
        self.last_intercept_ = self.intercept_.astype(np.float64)
        self.coef_ = self.last_coef_.copy()
        self._u = np.zeros(X.shape[1], dtype=np.float64)
        self._u_intercept = np.zeros(1, dtype=np.float64)

    def _run_pass(self, X, y, order):
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        w, b = self.last_coef_[0], self.last_intercept_
        lr, step0 = float(self.lr), int(self.n_steps_)
        if sp.issparse(X):
            mistakes = averaged_pass_csr(
                X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr), y, order, w, b,
                self._u, self._u_intercept,
                lr, self._intercept_step, step0, rows, steps,
            )  # fmt: skip
        else:
            mistakes = averaged_pass_dense(
                X, y, order, w, b, self._u, self._u_intercept,
                lr, self._intercept_step, step0, rows, steps,
            )  # fmt: skip
        total = step0 + n
        if total:
            self.coef_ = (w - self._u / total)[np.newaxis, :]
            self.intercept_ = b - self._u_intercept / total
        mistakes = int(mistakes)
        return mistakes, mistakes, rows[:mistakes], steps[:mistakes]
