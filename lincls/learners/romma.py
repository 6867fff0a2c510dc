"""ROMMA and aggressive ROMMA (Li & Long 2002): the relaxed online maximum margin algorithm.

Li & Long, "The Relaxed Online Maximum Margin Algorithm", Machine Learning 46 (2002), 361–387.
From w₁ = 0, ROMMA keeps w_t the shortest vector of a half-space that contains every separator
of functional margin 1 seen so far: on an update at (x_t, y_t), w_{t+1} is the shortest v with

    v·w_t ≥ ‖w_t‖²   and   y_t v·x_t ≥ 1,

which is, with X = ‖x_t‖², W = ‖w_t‖², a = w_t·x_t and Δ = XW − a²,

- w_{t+1} = y_t x_t/X when w_t = 0 or y_t a ≥ XW (the second constraint alone suffices),
- otherwise w_{t+1} = c·w_t + d·x_t, c = (XW − y_t a)/Δ, d = W(y_t − a)/Δ (both active).

ROMMA updates on a mistake (y_t a ≤ 0: then y_t a ≥ XW only at w_t = 0); aggressive ROMMA
whenever y_t a < 1 − 10⁻⁹ (the slack keeps an example it updated, left at y a = 1 up to
rounding, from being updated again on every pass), and there the first case also arises
(x_t nearly along w_t). When x_t is (within Δ ≤ 1e-12·XW) parallel to w_t but opposite, the two
constraints meet nowhere (no separator through the origin has margin on both); w_{t+1} =
y_t x_t/X is then used too. On separable data this never happens in exact arithmetic. A row
with x' = 0 is a mistake (a zero activation) and is skipped.

LIBOL's aggressive ROMMA differs from the paper on the first update (w₂ = y₁x₁, not
y₁x₁/‖x₁‖², so its later weights differ too), uses c·w + d·x where y a ≥ XW (a negative c there:
not the shortest vector) and skips an update at Δ = 0.

The bias (``bias="feature"``) is a constant feature 1: ROMMA on x' = (x, 1), ``intercept_`` the
weight of that feature. Each update costs O(n_features) even on CSR rows (it rescales all of w).
Mistake bound: Novikoff's (R/γ)² on the vectors x' (``lincls.bounds.romma``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_choice
from lincls.learners._base import OnlineBinaryClassifier, initial_weights
from lincls.learners._kernel_tools import unsigned_indices

ROMMA_BIAS_MODES = ("feature", "none")
# Δ below this fraction of XW: x is parallel to w up to rounding (Δ = XW sin²θ)
PARALLEL = 1e-12
# An aggressive update leaves y·w·x = 1, which rounding reads as 0.9999999999999998 as often as
# not: without this slack such an example would be updated again on every later pass.
SLACK = 1e-9


@njit(cache=True, nogil=True)
def romma_step(label, act, xx, ww, aggressive):
    """(update?, c, d) of ROMMA's step w' = c·w + d·x' at activation ``act`` (module docstring)."""
    margin = label * act
    if xx == 0.0 or margin >= 1.0 - SLACK or (margin > 0.0 and not aggressive):
        return False, 1.0, 0.0
    if ww == 0.0 or margin >= xx * ww:
        return True, 0.0, label / xx
    delta = xx * ww - act * act
    if delta <= PARALLEL * xx * ww:
        return True, 0.0, label / xx
    return True, (xx * ww - margin) / delta, ww * (label - act) / delta


@njit(cache=True, nogil=True)
def romma_pass_dense(
    X, y, order, w, intercept, sq_norm, c, aggressive, mistake_rows, mistake_steps
):  # fmt: skip
    """One pass of (aggressive) ROMMA over dense ``X[order]``, updating w, b in place.

    ``sq_norm[0]`` is ‖(w, b)‖², kept between passes; c the constant feature (1 or 0).
    Returns (mistakes, updates).
    """
    n_features = X.shape[1]
    mistakes = 0
    updates = 0
    ww = sq_norm[0]
    for step in range(order.shape[0]):
        i = order[step]
        act = 0.0
        xx = 0.0
        for j in range(n_features):
            xj = np.float64(X[i, j])
            act += w[j] * xj
            xx += xj * xj
        act += intercept[0] * c
        xx += c * c
        label = y[i]
        if label * act <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        update, cw, dx = romma_step(label, act, xx, ww, aggressive)
        if update:
            ww = 0.0
            for j in range(n_features):
                w[j] = cw * w[j] + dx * np.float64(X[i, j])
            for j in range(n_features):
                ww += w[j] * w[j]
            b = cw * intercept[0] + dx * c
            intercept[0] = b
            ww += b * b
            updates += 1
    sq_norm[0] = ww
    return mistakes, updates


@njit(cache=True, nogil=True)
def romma_pass_csr(
    data, indices, indptr, y, order, w, intercept, sq_norm, c, aggressive, mistake_rows,
    mistake_steps,
):  # fmt: skip
    """``romma_pass_dense`` for CSR rows (sorted indices): the same numbers bit for bit."""
    mistakes = 0
    updates = 0
    ww = sq_norm[0]
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        end = indptr[i + 1]
        act = 0.0
        xx = 0.0
        for p in range(start, end):
            xj = np.float64(data[p])
            act += w[indices[p]] * xj
            xx += xj * xj
        act += intercept[0] * c
        xx += c * c
        label = y[i]
        if label * act <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        update, cw, dx = romma_step(label, act, xx, ww, aggressive)
        if update:
            for j in range(w.shape[0]):
                w[j] = cw * w[j]
            for p in range(start, end):
                k = indices[p]
                w[k] = w[k] + dx * np.float64(data[p])
            ww = 0.0
            for j in range(w.shape[0]):
                ww += w[j] * w[j]
            b = cw * intercept[0] + dx * c
            intercept[0] = b
            ww += b * b
            updates += 1
    sq_norm[0] = ww
    return mistakes, updates


def sorted_csr(X: sp.csr_matrix) -> sp.csr_matrix:
    """``X`` with each row's indices increasing (a copy only if they are not): the kernels then
    sum a row in the dense kernels' order, so the two layouts give the same bits."""
    return X if X.has_sorted_indices else X.sorted_indices()


class ROMMA(OnlineBinaryClassifier):
    """ROMMA (updates on mistakes) or aggressive ROMMA (whenever y·(w·x + b) < 1 − 10⁻⁹).

    Parameters
    ----------
    aggressive : bool
        Aggressive ROMMA: update whenever the functional margin is below 1.
    bias : {"feature", "none"}
        A constant feature 1 (``intercept_`` is its weight), or no bias (the paper's setting).
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s
        (``stop_when_converged`` stops after a pass without an update).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), float64
    intercept_ : ndarray (1,), the constant feature's weight (0 without a bias)
    bias_feature_ : the constant feature (1 or 0)
    zero_init_ : whether the run started from w = 0 (the bound assumes it)
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "romma"

    def __init__(
        self,
        aggressive: bool = False,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.aggressive = aggressive
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        if not isinstance(self.aggressive, bool | np.bool_):
            raise LinclsInputError("aggressive", f"must be true or false, got {self.aggressive!r}")
        check_choice("bias", self.bias, ROMMA_BIAS_MODES)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        coef, intercept = initial_weights(X, coef_init, intercept_init)
        if self.bias == "none" and intercept.any():
            raise LinclsInputError("intercept_init", "must be 0 with bias='none'")
        self.coef_ = coef.astype(np.float64)
        self.intercept_ = intercept
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        self.bias_feature_ = 1.0 if self.bias == "feature" else 0.0
        self._sq_norm = np.array([self.coef_[0] @ self.coef_[0] + intercept[0] ** 2])

    def _run_pass(self, X, y, order):
        rows, steps = self._mistake_buffers(order.shape[0])
        state = (self.coef_[0], self.intercept_, self._sq_norm, self.bias_feature_)
        aggressive = bool(self.aggressive)
        if sp.issparse(X):
            X = sorted_csr(X)
            mistakes, updates = romma_pass_csr(
                X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr), y, order,
                *state, aggressive, rows, steps,
            )  # fmt: skip
        else:
            mistakes, updates = romma_pass_dense(X, y, order, *state, aggressive, rows, steps)
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]


__all__ = [
    "PARALLEL",
    "ROMMA",
    "ROMMA_BIAS_MODES",
    "SLACK",
    "romma_pass_csr",
    "romma_pass_dense",
    "romma_step",
    "sorted_csr",
]
