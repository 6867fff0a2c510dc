"""Passive-aggressive PA, PA-I and PA-II (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer 2006).

With the hinge loss ℓ_t = max(0, 1 − y_t(w·x_t + b)), each step is w += τ_t·y_t·x_t with

- PA:    τ = ℓ/‖x‖²                (the smallest change that makes the loss zero),
- PA-I:  τ = min(C, ℓ/‖x‖²),
- PA-II: τ = ℓ/(‖x‖² + 1/(2C)).

Mistakes (y(w·x + b) ≤ 0) and updates (ℓ > 0) are counted separately: a correct example inside
the margin is an update without a mistake. The bias follows one of three rules:

- ``"feature"``: a constant feature c = √``intercept_decay`` (1 by default): b += τ·y·c² and
  ‖x‖² includes c². This is PA on the vectors (x, c), the setting of the paper's bounds.
- ``"sklearn"``: b += τ·y·``intercept_decay`` with ‖x‖² *without* the bias, as scikit-learn's
  ``SGDClassifier(loss="hinge", learning_rate="pa1"|"pa2")`` does (0.01 decay on sparse input).
  No bound covers this rule (the step overshoots on the bias coordinate).
- ``"none"``: no bias.

An example with ‖x‖ = 0 is skipped by PA and PA-I (τ is undefined or unlimited), as scikit-learn
skips it; PA-II can still move the bias.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import check_choice, check_number
from lincls.geometry import max_norm
from lincls.learners._base import OnlineBinaryClassifier, initial_weights
from lincls.learners._kernel_tools import (
    CSR_ROWS_AHEAD,
    ROWS_AHEAD,
    dense_prefetch_plan,
    prefetch_csr_row,
    prefetch_dense_row,
    unsigned_indices,
)

VARIANTS = ("pa", "pa1", "pa2")
PA_BIAS_MODES = ("feature", "sklearn", "none")
_VARIANT_CODE = {"pa": 0, "pa1": 1, "pa2": 2}


@njit(cache=True, nogil=True)
def _step_size(variant, loss, sqnorm, C):
    if variant == 2:
        return loss / (sqnorm + 0.5 / C)
    if sqnorm == 0.0:
        return 0.0
    if variant == 1:
        return min(C, loss / sqnorm)
    return loss / sqnorm


BLOCK = 2  # dense rows whose activations are computed together (the kernel's two sums)


@njit(cache=True, nogil=True)
def pa_pass_dense(
    X, y, order, w, intercept, variant, C, intercept_step, norm_extra, mistake_rows, mistake_steps
):
    """One pass of PA / PA-I / PA-II (``variant`` 0 / 1 / 2) over dense ``X[order]``, in place.

    ``norm_extra`` is added to ‖x‖² (c² for a bias feature, else 0); ``intercept_step`` scales
    the bias step. Arithmetic follows scikit-learn's SGD loop (float64 dot product, then the
    bias; the squared norm summed left to right). Returns (mistakes, updates).

    As in ``perceptron_pass_dense``, the activations of ``BLOCK`` consecutive rows are summed side
    by side, each left to right, and used until a row updates w; each row's ‖x‖² is summed in the
    same loop (another independent chain, so nearly free, where it used to be a second serial
    pass on every update). Results are bitwise those of one row at a time. Two rows, not four:
    about half the rows update, so further rows were mostly summed in vain.
    """
    n = order.shape[0]
    n_features = X.shape[1]
    last = n - 1
    fetched, line = dense_prefetch_plan(X, n)  # rows of order prefetched so far; line size
    mistakes = 0
    updates = 0
    pending = -1  # the row whose update w still has to take (in the next block's loop)
    scale = 0.0
    k = 0
    while k < n:
        while fetched < min(k + BLOCK + ROWS_AHEAD, n):
            prefetch_dense_row(X, order[fetched], line)
            fetched += 1
        i0 = order[k]
        i1 = order[min(k + 1, last)]  # past the end, the last row stands in (never used)
        a0 = 0.0
        a1 = 0.0
        q0 = 0.0
        q1 = 0.0
        if pending >= 0:
            for j in range(n_features):
                w[j] += np.float64(X[pending, j]) * scale
                wj = w[j]
                x0 = X[i0, j]
                x1 = X[i1, j]
                a0 += wj * x0
                a1 += wj * x1
                q0 += np.float64(x0) * np.float64(x0)
                q1 += np.float64(x1) * np.float64(x1)
            pending = -1
        else:
            for j in range(n_features):
                wj = w[j]
                x0 = X[i0, j]
                x1 = X[i1, j]
                a0 += wj * x0
                a1 += wj * x1
                q0 += np.float64(x0) * np.float64(x0)
                q1 += np.float64(x1) * np.float64(x1)
        b = intercept[0]
        stop = min(k + BLOCK, n)
        for activation, sqnorm, i in ((a0, q0, i0), (a1, q1, i1)):
            if k == stop:
                break
            yp = y[i] * (activation + b)
            if yp <= 0.0:
                mistake_rows[mistakes] = i
                mistake_steps[mistakes] = k
                mistakes += 1
            k += 1
            if yp < 1.0:
                tau = _step_size(variant, 1.0 - yp, sqnorm + norm_extra, C)
                if tau > 0.0:
                    scale = tau * y[i]
                    pending = i
                    intercept[0] = b + scale * intercept_step
                    updates += 1
                    break  # the next row's sum used the old w
    if pending >= 0:
        for j in range(n_features):
            w[j] += np.float64(X[pending, j]) * scale
    return mistakes, updates


@njit(cache=True, nogil=True)
def pa_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    w,
    intercept,
    variant,
    C,
    intercept_step,
    norm_extra,
    mistake_rows,
    mistake_steps,
):
    """``pa_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``), one at a time.

    ‖x‖² is summed in the dot product's loop; pass unsigned views of ``indices`` and ``indptr``
    (``unsigned_indices``); rows are prefetched ahead, as in ``perceptron_pass_csr``.
    """
    n = order.shape[0]
    last = n - 1
    mistakes = 0
    updates = 0
    for k in range(n):
        prefetch_csr_row(data, indices, indptr, order[min(k + CSR_ROWS_AHEAD, last)])
        i = order[k]
        start = indptr[i]
        end = indptr[i + 1]
        activation = 0.0
        sqnorm = 0.0
        for p in range(start, end):
            xj = data[p]
            activation += w[indices[p]] * xj
            sqnorm += np.float64(xj) * np.float64(xj)
        activation += intercept[0]
        yp = y[i] * activation
        if yp <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
        if yp < 1.0:
            tau = _step_size(variant, 1.0 - yp, sqnorm + norm_extra, C)
            if tau > 0.0:
                step = tau * y[i]
                for p in range(start, end):
                    w[indices[p]] += np.float64(data[p]) * step
                intercept[0] += step * intercept_step
                updates += 1
    return mistakes, updates


class PassiveAggressive(OnlineBinaryClassifier):
    """PA, PA-I or PA-II: on a hinge loss ℓ > 0, w += τ·y·x with the variant's τ.

    Parameters
    ----------
    variant : {"pa", "pa1", "pa2"}
        The step rule (module docstring).
    C : float > 0
        The aggressiveness of PA-I and PA-II (unused by PA, but still checked).
    bias : {"feature", "sklearn", "none"}
        The bias rule (module docstring).
    max_passes : int ≥ 1
    stop_when_converged : bool
        Stop after the first pass without an update (every example at margin ≥ 1).
    shuffle : bool
    random_state : int, RandomState or None
    intercept_decay : float > 0
        Scales the bias step (the squared constant feature for ``bias="feature"``); 0.01
        reproduces scikit-learn on sparse input with ``bias="sklearn"``.

    Attributes
    ----------
    coef_ : ndarray (1, n_features), float64
    intercept_ : ndarray (1,), float64
    radius_ : the largest norm of the first training data
    bias_feature_ : c, the constant feature of ``bias="feature"`` (0 for the other rules)
    zero_init_ : whether the run started from w = 0, b = 0 (the bounds assume it)
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "passive_aggressive"

    def __init__(
        self,
        variant: str = "pa1",
        C: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        self.variant = variant
        self.C = C
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state
        self.intercept_decay = intercept_decay

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("variant", self.variant, VARIANTS)
        check_number("C", self.C, low=0, low_open=True)
        check_choice("bias", self.bias, PA_BIAS_MODES)
        check_number("intercept_decay", self.intercept_decay, low=0, low_open=True)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        coef, self.intercept_ = initial_weights(X, coef_init, intercept_init)
        self.coef_ = coef.astype(np.float64)
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        self.radius_ = max_norm(X)
        decay = float(self.intercept_decay)
        self._intercept_step = 0.0 if self.bias == "none" else decay
        self._norm_extra = decay if self.bias == "feature" else 0.0
        self.bias_feature_ = float(np.sqrt(decay)) if self.bias == "feature" else 0.0

    def _run_pass(self, X, y, order):
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        variant, C = _VARIANT_CODE[self.variant], float(self.C)
        w, b = self.coef_[0], self.intercept_
        if sp.issparse(X):
            mistakes, updates = pa_pass_csr(
                X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr), y, order, w, b,
                variant, C, self._intercept_step, self._norm_extra, rows, steps,
            )  # fmt: skip
        else:
            mistakes, updates = pa_pass_dense(
                X, y, order, w, b, variant, C, self._intercept_step, self._norm_extra, rows, steps
            )
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]
