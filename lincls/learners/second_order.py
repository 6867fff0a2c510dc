"""The second-order perceptron (Cesa-Bianchi, Conconi & Gentile 2005), full matrix and diagonal.

Cesa-Bianchi, Conconi & Gentile, "A Second-Order Perceptron Algorithm", SIAM J. Comput. 34(3)
(2005), 640–668, Figure 2. With v the sum of y_s x_s over the past mistakes s and
A_t = aI + Σ_s x_s x_sᵀ + x_t x_tᵀ (the current instance included), the prediction is
ŷ_t = sign(vᵀ A_t⁻¹ x_t); on a mistake v += y_t x_t and x_t stays in the matrix.

Kept here: M⁻¹ with M = aI + Σ_s x_s x_sᵀ (``inverse_``) and w = M⁻¹v (``coef_``). Since
A_t⁻¹x = M⁻¹x/(1 + xᵀM⁻¹x) and the denominator is positive, vᵀA_t⁻¹x_t has the sign of w·x_t: a
row costs O(nnz) and only a mistake O(d²). With s = M⁻¹x and q = x·s, a mistake makes
(Sherman–Morrison) M⁻¹ −= s sᵀ/(1 + q) and w += s·(y − w·x)/(1 + q), M⁻¹ kept as a square
root G, M⁻¹ = GᵀG (``factor_``, ``lincls.learners._matrix``: M⁻¹ itself loses its small
eigenvalues once q passes ~10¹⁶). A zero activation is a
mistake, as elsewhere in lincls (the paper's bound covers y vᵀA⁻¹x ≤ 0).

``diagonal=True`` keeps only the diagonal of the matrix: D = a + Σ_s x_s² (per feature), and
predicts with sign(Σ_j v_j x_j/(D_j + x_j²)); ``coef_`` = v/D. O(nnz) a row; no bound covers it.
LIBOL's SOP adds every instance to the matrix, a mistake or not; the paper (and this) only the
mistakes'.

The bias (``bias="feature"``) is a constant feature 1: the matrix is (d + 1) × (d + 1) and
``intercept_`` the weight of that feature. Mistake bound: ``lincls.bounds.second_order``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lincls.errors import check_number
from lincls.learners._matrix import (
    MATRIX_BIAS_MODES,
    MAX_FULL_FEATURES,
    MatrixClassifier,
    factor_apply,
    factor_downdate,
    factor_product,
    pass_layout,
)

SOP_BIAS_MODES = MATRIX_BIAS_MODES


@njit(cache=True, nogil=True)
def _downdate(factor, w, intercept, z, s, label, act, q, d):
    """A mistake's step, z = Gx', q = ‖z‖² = x'ᵀM⁻¹x': s = M⁻¹x' = Gᵀz, w += s(y − act)/(1 + q),
    then M⁻¹ −= s sᵀ/(1 + q) on M⁻¹ = GᵀG (``lincls.learners._matrix.factor_downdate``)."""
    factor_apply(factor, z, s)
    step = (label - act) / (1.0 + q)
    for k in range(d):
        w[k] += s[k] * step
    if s.shape[0] > d:
        intercept[0] += s[d] * step
    factor_downdate(factor, z, s, q, 1.0)


@njit(cache=True, nogil=True)
def sop_pass_dense(X, y, order, w, intercept, factor, c, z, s, mistake_rows, mistake_steps):
    """One pass of the full-matrix second-order perceptron over dense ``X[order]``, in place.

    M⁻¹ = GᵀG (G = ``factor``, (d + 1)² with a bias feature c, else d²); ``z``, ``s`` scratch
    of its side. Returns the mistakes (every one an update).
    """
    d = X.shape[1]
    side = factor.shape[0]
    mistakes = 0
    for step in range(order.shape[0]):
        i = order[step]
        act = 0.0
        for j in range(d):
            act += w[j] * np.float64(X[i, j])
        act += intercept[0] * c
        label = y[i]
        if label * act > 0.0:
            continue
        mistake_rows[mistakes] = i
        mistake_steps[mistakes] = step
        mistakes += 1
        q = 0.0
        for r in range(side):
            total = 0.0
            for k in range(d):
                total += factor[r, k] * np.float64(X[i, k])
            if side > d:
                total += factor[r, d] * c
            z[r] = total
            q += total * total
        _downdate(factor, w, intercept, z, s, label, act, q, d)
    return mistakes


@njit(cache=True, nogil=True)
def sop_pass_csr(
    data, indices, indptr, y, order, w, intercept, factor, c, z, s, mistake_rows, mistake_steps
):  # fmt: skip
    """``sop_pass_dense`` for CSR rows (sorted indices): the same numbers bit for bit."""
    d = w.shape[0]
    side = factor.shape[0]
    mistakes = 0
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        end = indptr[i + 1]
        act = 0.0
        for p in range(start, end):
            act += w[indices[p]] * np.float64(data[p])
        act += intercept[0] * c
        label = y[i]
        if label * act > 0.0:
            continue
        mistake_rows[mistakes] = i
        mistake_steps[mistakes] = step
        mistakes += 1
        q = 0.0
        for r in range(side):
            total = 0.0
            for p in range(start, end):
                total += factor[r, indices[p]] * np.float64(data[p])
            if side > d:
                total += factor[r, d] * c
            z[r] = total
            q += total * total
        _downdate(factor, w, intercept, z, s, label, act, q, d)
    return mistakes


@njit(cache=True, nogil=True)
def sop_diagonal_pass_dense(X, y, order, w, intercept, v, diag, c, mistake_rows, mistake_steps):
    """One pass of the diagonal second-order perceptron over dense ``X[order]``, in place:
    v and D = ``diag`` (d + 1 long with a bias feature c), w = v/D. Returns the mistakes."""
    d = X.shape[1]
    biased = diag.shape[0] > d
    mistakes = 0
    for step in range(order.shape[0]):
        i = order[step]
        act = 0.0
        for j in range(d):
            xj = np.float64(X[i, j])
            act += v[j] * xj / (diag[j] + xj * xj)
        if biased:
            act += v[d] * c / (diag[d] + c * c)
        label = y[i]
        if label * act > 0.0:
            continue
        mistake_rows[mistakes] = i
        mistake_steps[mistakes] = step
        mistakes += 1
        for j in range(d):
            xj = np.float64(X[i, j])
            v[j] += label * xj
            diag[j] += xj * xj
            w[j] = v[j] / diag[j]
        if biased:
            v[d] += label * c
            diag[d] += c * c
            intercept[0] = v[d] / diag[d]
    return mistakes


@njit(cache=True, nogil=True)
def sop_diagonal_pass_csr(
    data, indices, indptr, y, order, w, intercept, v, diag, c, mistake_rows, mistake_steps
):  # fmt: skip
    """``sop_diagonal_pass_dense`` for CSR rows (sorted indices): the same numbers."""
    d = w.shape[0]
    biased = diag.shape[0] > d
    mistakes = 0
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        end = indptr[i + 1]
        act = 0.0
        for p in range(start, end):
            xj = np.float64(data[p])
            j = indices[p]
            act += v[j] * xj / (diag[j] + xj * xj)
        if biased:
            act += v[d] * c / (diag[d] + c * c)
        label = y[i]
        if label * act > 0.0:
            continue
        mistake_rows[mistakes] = i
        mistake_steps[mistakes] = step
        mistakes += 1
        for p in range(start, end):
            xj = np.float64(data[p])
            j = indices[p]
            v[j] += label * xj
            diag[j] += xj * xj
            w[j] = v[j] / diag[j]
        if biased:
            v[d] += label * c
            diag[d] += c * c
            intercept[0] = v[d] / diag[d]
    return mistakes


class SecondOrderPerceptron(MatrixClassifier):
    """The second-order perceptron: predict sign(vᵀ(aI + Σ_mistakes x xᵀ + x_t x_tᵀ)⁻¹x_t).

    Parameters
    ----------
    a : float > 0
        The regulariser aI of the correlation matrix (the paper's a).
    diagonal : bool
        Keep only the matrix's diagonal (O(nnz) a row; no bound).
    bias : {"feature", "none"}
        A constant feature 1 in the instances (``intercept_`` its weight), or none.
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s.

    Attributes
    ----------
    coef_ : ndarray (1, n_features), w = M⁻¹v (the prediction weights before the next instance)
    intercept_ : ndarray (1,), the constant feature's weight
    inverse_ : M⁻¹ = GᵀG (full matrix), or None: computed from ``factor_`` when read
    factor_ : G, the square root of M⁻¹ the full variant keeps (``lincls.learners._matrix``), or
        None
    diagonal_, dual_coef_ : D and v (diagonal variant), or None
    bias_feature_ : the constant feature (1 or 0)
    zero_init_ : whether the run started from w = 0 (the bound assumes it)
    mistakes_, updates_ (= mistakes), ... : the online record (``lincls.learners._base``)
    """

    bound_family = "second_order"

    def __init__(
        self,
        a: float = 1.0,
        diagonal: bool = False,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.a = a
        self.diagonal = diagonal
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("a", self.a, low=0, low_open=True)
        self._check_matrix_options()

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        side = self._init_linear(X, coef_init, intercept_init)
        a = float(self.a)
        self.factor_ = self.diagonal_ = self.dual_coef_ = None
        if self.diagonal:
            self.diagonal_ = np.full(side, a)
            self.dual_coef_ = a * np.r_[self.coef_[0], self.intercept_][:side]
            return
        self.factor_ = np.eye(side) / np.sqrt(a)  # M⁻¹ = I/a; w = M⁻¹v: v = a·w at the start

    @property
    def inverse_(self) -> np.ndarray | None:
        """M⁻¹ = GᵀG from the square root kept (``factor_``); None for the diagonal variant."""
        return factor_product(getattr(self, "factor_", None))

    def _run_pass(self, X, y, order):
        rows, steps = self._mistake_buffers(order.shape[0])
        w, b, c = self.coef_[0], self.intercept_, self.bias_feature_
        X, layout = pass_layout(X)
        csr = layout is not None
        if self.diagonal:
            state = (w, b, self.dual_coef_, self.diagonal_, c, rows, steps)
            if csr:
                mistakes = sop_diagonal_pass_csr(*layout, y, order, *state)
            else:
                mistakes = sop_diagonal_pass_dense(X, y, order, *state)
        else:
            side = self.factor_.shape[0]
            state = (w, b, self.factor_, c, np.empty(side), np.empty(side), rows, steps)
            if csr:
                mistakes = sop_pass_csr(*layout, y, order, *state)
            else:
                mistakes = sop_pass_dense(X, y, order, *state)
        return int(mistakes), int(mistakes), rows[:mistakes], steps[:mistakes]


__all__ = [
    "MAX_FULL_FEATURES",
    "SOP_BIAS_MODES",
    "SecondOrderPerceptron",
    "sop_diagonal_pass_csr",
    "sop_diagonal_pass_dense",
    "sop_pass_csr",
    "sop_pass_dense",
]
