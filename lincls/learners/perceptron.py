"""The perceptron (Rosenblatt 1958; seeds 000 §3.2, 001 §9.4, 004): on a mistake, w += lr·y·x.

A mistake is y·(w·x + b) ≤ 0: a zero activation is wrong for either label, so from w = 0 the
first example always updates (the proofs of the mistake bounds need it; scikit-learn and river
agree). The bias follows one of three rules:

- ``"feature"``: a constant feature 1, so b += lr·y (seeds 000 eq. 1, 001 "Bias");
- ``"r2"``: b += lr·y·R², R the largest norm in the training data (seed 004), i.e. a constant
  feature R, which gives Novikoff's (2R/γ)²;
- ``"none"``: no bias, the homogeneous perceptron of Novikoff's theorem.

``intercept_decay`` scales the bias step (a constant feature √decay). scikit-learn damps the
intercept step by 0.01 on sparse input; set ``intercept_decay=0.01`` to reproduce it exactly.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.geometry import max_norm
from lincls.learners._base import OnlineBinaryClassifier, check_finite, initial_weights
from lincls.learners._kernel_tools import (
    CSR_ROWS_AHEAD,
    ROWS_AHEAD,
    as_weight_dtype,
    dense_prefetch_plan,
    prefetch_csr_row,
    prefetch_dense_row,
    unsigned_indices,
)

BIAS_MODES = ("feature", "r2", "none")


BLOCK = 4  # dense rows whose activations are computed together (the kernel's four sums)


@njit(cache=True, nogil=True)
def perceptron_pass_dense(
    X,
    y,
    order,
    w,
    intercept,
    lr,
    intercept_step,
    threshold,
    mistake_rows,
    mistake_steps,
    nonfinite=None,
):
    """One pass of the (margin) perceptron over dense rows ``X[order]``, updating ``w`` in place.

    Mistake: y·(w·x + b) ≤ 0. Update: y·(w·x + b) ≤ ``threshold`` (0 for the perceptron).
    The arithmetic is scikit-learn's SGD loop: the dot product summed left to right in float64
    from products in the weights' dtype, rounded to that dtype, then the bias added; the step
    lr·y rounded to the weights' dtype before it scales x. Returns (mistakes, updates).

    The left-to-right sum is one chain of dependent adds per row, bound by the add's latency, and
    a mistake (an unpredictable branch) stops the processor from running ahead into the next row.
    So the activations of ``BLOCK`` consecutive rows are summed side by side with the same w, each
    still left to right: they are used in turn until a row updates w, and the rows after it are
    summed again with the new w. The update itself is folded into the next block's loop (w[j] is
    updated, then read). Same operations on the same values in the same order: the results are
    bitwise those of one row at a time.

    ``nonfinite`` (a 1-element int64 array, optional) gains the number of rows whose activation
    was NaN or ±inf: with finite weights every NaN or inf in a row makes its activation so (0·inf
    is NaN), which lets the caller leave the finiteness check of X to this pass.
    """
    n = order.shape[0]
    n_features = X.shape[1]
    last = n - 1
    fetched, line = dense_prefetch_plan(X, n)  # rows of order prefetched so far; line size
    mistakes = 0
    updates = 0
    pending = -1  # the row whose update w still has to take (in the next block's loop)
    scale = 0.0
    not_finite = 0
    k = 0
    while k < n:
        while fetched < min(k + BLOCK + ROWS_AHEAD, n):
            prefetch_dense_row(X, order[fetched], line)
            fetched += 1
        # past the end, the last row stands in (summed, never used)
        i0 = order[k]
        i1 = order[min(k + 1, last)]
        i2 = order[min(k + 2, last)]
        i3 = order[min(k + 3, last)]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        if pending >= 0:
            for j in range(n_features):
                w[j] += np.float64(X[pending, j]) * scale
                wj = w[j]
                a0 += wj * X[i0, j]
                a1 += wj * X[i1, j]
                a2 += wj * X[i2, j]
                a3 += wj * X[i3, j]
            pending = -1
        else:
            for j in range(n_features):
                wj = w[j]
                a0 += wj * X[i0, j]
                a1 += wj * X[i1, j]
                a2 += wj * X[i2, j]
                a3 += wj * X[i3, j]
        b = intercept[0]
        stop = min(k + BLOCK, n)
        for activation, i in ((a0, i0), (a1, i1), (a2, i2), (a3, i3)):
            if k == stop:
                break
            not_finite += (activation - activation) != 0.0  # NaN for NaN and ±inf alone
            yp = y[i] * (as_weight_dtype(activation, w) + b)
            if yp <= 0.0:
                mistake_rows[mistakes] = i
                mistake_steps[mistakes] = k
                mistakes += 1
            k += 1
            if yp <= threshold:
                step = lr * y[i]
                scale = as_weight_dtype(step, w)
                pending = i
                intercept[0] = b + step * intercept_step
                updates += 1
                break  # the next rows' sums used the old w
    if pending >= 0:
        for j in range(n_features):
            w[j] += np.float64(X[pending, j]) * scale
    if nonfinite is not None:
        nonfinite[0] += not_finite
    return mistakes, updates


@njit(cache=True, nogil=True)
def perceptron_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    w,
    intercept,
    lr,
    intercept_step,
    threshold,
    mistake_rows,
    mistake_steps,
):
    """``perceptron_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``), one at a time.

    Pass unsigned views of ``indices`` and ``indptr`` (``unsigned_indices``): numba then gathers
    ``w[indices[p]]`` without its negative-index wraparound. Summing several rows side by side
    did not pay here (the gathers, not the add chain, set the pace); prefetching the rows ahead
    did.
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
        for p in range(start, end):
            activation += w[indices[p]] * data[p]
        yp = y[i] * (as_weight_dtype(activation, w) + intercept[0])
        if yp <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
        if yp <= threshold:
            step = lr * y[i]
            scale = as_weight_dtype(step, w)
            for p in range(start, end):
                w[indices[p]] += np.float64(data[p]) * scale
            intercept[0] += step * intercept_step
            updates += 1
    return mistakes, updates


def run_linear_pass(
    X, y, order, w, intercept, lr, intercept_step, threshold, buffers=None, nonfinite=None
):
    """Dispatch one pass of the perceptron kernel on dense or CSR ``X``; see the kernels.

    ``buffers``: (rows, steps) int64 scratch arrays of at least ``len(order)`` entries.
    ``nonfinite``: the dense kernel's count of non-finite activations (unused on CSR).
    """
    n = order.shape[0]
    if buffers is None:
        buffers = (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))
    rows, steps = buffers
    if sp.issparse(X):
        mistakes, updates = perceptron_pass_csr(
            X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr), y, order, w,
            intercept, lr, intercept_step, threshold, rows, steps,
        )  # fmt: skip
    else:
        mistakes, updates = perceptron_pass_dense(
            X, y, order, w, intercept, lr, intercept_step, threshold, rows, steps, nonfinite
        )
    return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]


class Perceptron(OnlineBinaryClassifier):
    """The perceptron: on a mistake (y·(w·x + b) ≤ 0), w += lr·y·x and the bias by ``bias``.

    Parameters
    ----------
    lr : float > 0
        The step η. From w = 0 it only scales the weights: the mistakes do not depend on it.
    bias : {"feature", "r2", "none"}
        The bias rule (module docstring).
    max_passes : int ≥ 1
        Passes over the training data in ``fit``.
    stop_when_converged : bool
        Stop after the first pass without a mistake.
    shuffle : bool
        A fresh permutation of the examples each pass, from ``random_state``.
    random_state : int, RandomState or None
    intercept_decay : float > 0
        Scales the bias step (0.01 reproduces scikit-learn on sparse input).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), dtype of X
    intercept_ : ndarray (1,), float64
    classes_ : the two labels; ``classes_[1]`` is the +1 class
    radius_ : the R of ``bias="r2"``, the largest norm of the first training data (else None)
    bias_feature_ : the constant feature the bias rule amounts to (1, √decay, R or 0)
    zero_init_ : whether the run started from w = 0, b = 0 (the bounds assume it)
    mistakes_, updates_, mistakes_per_pass_, mistake_steps_, mistake_indices_, n_passes_,
    converged_, n_steps_ : the online record (``lincls.learners._base``)
    """

    _threshold = 0.0
    bound_family = "perceptron"

    def __init__(
        self,
        lr: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        self.lr = lr
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state
        self.intercept_decay = intercept_decay

    def _check_params(self) -> None:
        super()._check_params()
        check_number("lr", self.lr, low=0, low_open=True)
        check_choice("bias", self.bias, BIAS_MODES)
        check_number("intercept_decay", self.intercept_decay, low=0, low_open=True)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self.coef_, self.intercept_ = initial_weights(X, coef_init, intercept_init)
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        # R is a full pass over X: measure it only for the rule that steps by R²
        self.radius_ = max_norm(X) if self.bias == "r2" else None
        if self.bias == "none":
            self._intercept_step = 0.0  # b stays at intercept_init (0 by default)
        elif self.bias == "r2":
            self._intercept_step = self.radius_**2 * self.intercept_decay
        else:
            self._intercept_step = float(self.intercept_decay)
        self.bias_feature_ = float(np.sqrt(self._intercept_step))

    def _leaves_finiteness_to_the_pass(self, X) -> bool:
        """Whether this learner's own dense pass sees X (a subclass with a pass of its own, or
        CSR input, keeps the check before it)."""
        return type(self)._run_pass is Perceptron._run_pass and not sp.issparse(X)

    def _validate_fit_input(self, X, y, reset: bool):
        """``_validate_X_y``, leaving the finiteness of dense X to the first pass: the check is a
        read of all of X (5 of a 1-pass fit's 23 ms at 1M×20), the pass reads it anyway."""
        X, y = self._validate_layout(X, y, reset)
        if not self._leaves_finiteness_to_the_pass(X):
            check_finite(X)
        return X, y

    def _run_pass(self, X, y, order):
        dense = not sp.issparse(X)
        nonfinite = np.zeros(1, dtype=np.int64) if dense else None
        if dense:  # what the weights were, should the pass find X non-finite
            before = self.coef_.copy(), self.intercept_.copy()
        result = run_linear_pass(
            X,
            y,
            order,
            self.coef_[0],
            self.intercept_,
            float(self.lr),
            self._intercept_step,
            self._threshold,
            self._mistake_buffers(order.shape[0]),
            nonfinite,
        )
        if dense and nonfinite[0]:
            try:
                check_finite(X)  # names the first bad row; an activation that overflowed passes
            except LinclsInputError:
                self.coef_[:], self.intercept_[:] = before  # nothing learned from bad data
                raise
        return result
