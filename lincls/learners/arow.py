"""AROW, adaptive regularization of weight vectors (Crammer, Kulesza & Dredze 2009), full
covariance and diagonal.

Crammer, Kulesza & Dredze, "Adaptive Regularization of Weight Vectors", NIPS 22 (2009), Figure 1.
From μ = 0 and Σ = I, on each example with margin m = μ·x and confidence v = xᵀΣx, if the hinge
loss ℓ = max(0, 1 − y m) is positive:

    β = 1/(v + r),  α = ℓ·β,  μ += α·y·Σx,  Σ −= β·Σx xᵀΣ   (so Σ⁻¹ += x xᵀ/r).

Mistakes (y m ≤ 0) and updates (ℓ > 0) are counted apart. A row costs O(nnz); an update O(d²)
for the full Σ (``covariance_``), kept as a square root G, Σ = GᵀG (``factor_``,
``lincls.learners._matrix``: Σ itself loses its small eigenvalues once v/r passes ~10¹⁶). A
row inside the margin costs O(d·nnz) more (v = ‖Gx‖²). ``diagonal=True`` keeps a diagonal
Σ = diag(σ): v = Σ_j σ_j x_j², μ_j += α y σ_j x_j, and σ_j ← 1/(1/σ_j + x_j²/r), the update of
Σ⁻¹ with its off-diagonal terms dropped (O(nnz) an update; no bound covers it).

The bias (``bias="feature"``) is a constant feature 1 in x: Σ is (d + 1) × (d + 1) and
``intercept_`` the weight of that feature. Mistake bound: ``lincls.bounds.arow``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lincls.errors import check_number
from lincls.learners._matrix import (
    MATRIX_BIAS_MODES,
    MatrixClassifier,
    factor_apply,
    factor_downdate,
    factor_product,
    pass_layout,
)

AROW_BIAS_MODES = MATRIX_BIAS_MODES


@njit(cache=True, nogil=True)
def _full_step(factor, w, intercept, z, s, label, margin, v, r, d):
    """AROW's step with z = Gx', v = ‖z‖²: μ += α y s with s = Σx' = Gᵀz, α = ℓ/(v + r), then
    Σ −= s sᵀ/(v + r) on Σ = GᵀG (``lincls.learners._matrix.factor_downdate``)."""
    factor_apply(factor, z, s)
    scale = (1.0 - label * margin) / (v + r) * label
    for k in range(d):
        w[k] += scale * s[k]
    if s.shape[0] > d:
        intercept[0] += scale * s[d]
    factor_downdate(factor, z, s, v, r)


@njit(cache=True, nogil=True)
def arow_pass_dense(
    X, y, order, w, intercept, factor, r, c, z, s, mistake_rows, mistake_steps, update_rows
):  # fmt: skip
    """One pass of full-covariance AROW over dense ``X[order]``, in place: μ = (w, b),
    Σ = GᵀG (G = ``factor``, (d + 1)² with a bias feature c), ``z``, ``s`` scratch; the rows of
    the updates go to ``update_rows`` (the bound reads them). Returns (mistakes, updates)."""
    d = X.shape[1]
    side = factor.shape[0]
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        margin = 0.0
        for j in range(d):
            margin += w[j] * np.float64(X[i, j])
        margin += intercept[0] * c
        label = y[i]
        if label * margin <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        if label * margin >= 1.0:
            continue
        v = 0.0
        for row in range(side):
            total = 0.0
            for k in range(d):
                total += factor[row, k] * np.float64(X[i, k])
            if side > d:
                total += factor[row, d] * c
            z[row] = total
            v += total * total
        _full_step(factor, w, intercept, z, s, label, margin, v, r, d)
        update_rows[updates] = i
        updates += 1
    return mistakes, updates


@njit(cache=True, nogil=True)
def arow_pass_csr(
    data, indices, indptr, y, order, w, intercept, factor, r, c, z, s, mistake_rows,
    mistake_steps, update_rows,
):  # fmt: skip
    """``arow_pass_dense`` for CSR rows (sorted indices): the same numbers bit for bit."""
    d = w.shape[0]
    side = factor.shape[0]
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        end = indptr[i + 1]
        margin = 0.0
        for p in range(start, end):
            margin += w[indices[p]] * np.float64(data[p])
        margin += intercept[0] * c
        label = y[i]
        if label * margin <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        if label * margin >= 1.0:
            continue
        v = 0.0
        for row in range(side):
            total = 0.0
            for p in range(start, end):
                total += factor[row, indices[p]] * np.float64(data[p])
            if side > d:
                total += factor[row, d] * c
            z[row] = total
            v += total * total
        _full_step(factor, w, intercept, z, s, label, margin, v, r, d)
        update_rows[updates] = i
        updates += 1
    return mistakes, updates


@njit(cache=True, nogil=True)
def arow_diagonal_pass_dense(
    X, y, order, w, intercept, sigma, r, c, mistake_rows, mistake_steps, update_rows
):  # fmt: skip
    """One pass of diagonal AROW over dense ``X[order]``, in place (σ = ``sigma``, d + 1 long
    with a bias feature c). Returns (mistakes, updates)."""
    d = X.shape[1]
    biased = sigma.shape[0] > d
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        margin = 0.0
        v = 0.0
        for j in range(d):
            xj = np.float64(X[i, j])
            margin += w[j] * xj
            v += sigma[j] * xj * xj
        margin += intercept[0] * c
        if biased:
            v += sigma[d] * c * c
        label = y[i]
        if label * margin <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        if label * margin >= 1.0:
            continue
        scale = (1.0 - label * margin) / (v + r) * label
        for j in range(d):
            xj = np.float64(X[i, j])
            if xj != 0.0:  # σ_j stays bit for bit where x_j = 0, as on a CSR row
                w[j] += scale * sigma[j] * xj
                sigma[j] = 1.0 / (1.0 / sigma[j] + xj * xj / r)
        if biased:
            intercept[0] += scale * sigma[d] * c
            sigma[d] = 1.0 / (1.0 / sigma[d] + c * c / r)
        update_rows[updates] = i
        updates += 1
    return mistakes, updates


@njit(cache=True, nogil=True)
def arow_diagonal_pass_csr(
    data, indices, indptr, y, order, w, intercept, sigma, r, c, mistake_rows, mistake_steps,
    update_rows,
):  # fmt: skip
    """``arow_diagonal_pass_dense`` for CSR rows (sorted indices): the same numbers."""
    d = w.shape[0]
    biased = sigma.shape[0] > d
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        end = indptr[i + 1]
        margin = 0.0
        v = 0.0
        for p in range(start, end):
            xj = np.float64(data[p])
            margin += w[indices[p]] * xj
            v += sigma[indices[p]] * xj * xj
        margin += intercept[0] * c
        if biased:
            v += sigma[d] * c * c
        label = y[i]
        if label * margin <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        if label * margin >= 1.0:
            continue
        scale = (1.0 - label * margin) / (v + r) * label
        for p in range(start, end):
            xj = np.float64(data[p])
            j = indices[p]
            if xj != 0.0:
                w[j] += scale * sigma[j] * xj
                sigma[j] = 1.0 / (1.0 / sigma[j] + xj * xj / r)
        if biased:
            intercept[0] += scale * sigma[d] * c
            sigma[d] = 1.0 / (1.0 / sigma[d] + c * c / r)
        update_rows[updates] = i
        updates += 1
    return mistakes, updates


class AROW(MatrixClassifier):
    """AROW: on a hinge loss ℓ > 0, μ += ℓ/(xᵀΣx + r)·y·Σx and Σ⁻¹ += x xᵀ/r.

    Parameters
    ----------
    r : float > 0
        The regularisation (larger: smaller, steadier steps).
    diagonal : bool
        A diagonal Σ (O(nnz) an update; no bound).
    bias : {"feature", "none"}
        A constant feature 1 in the instances (``intercept_`` its weight), or none.
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s
        (``stop_when_converged`` stops after a pass without an update).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), μ
    intercept_ : ndarray (1,), the constant feature's weight
    covariance_ : Σ = GᵀG (full), or None: computed from ``factor_`` when read
    factor_ : G, the square root of Σ the full variant keeps (``lincls.learners._matrix``), or
        None
    diagonal_ : σ (diagonal variant), or None
    bias_feature_ : the constant feature (1 or 0)
    zero_init_ : whether the run started from μ = 0 (the bound assumes it)
    update_indices_ : int64, the row of every update (a mistake or a margin error)
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "arow"

    def __init__(
        self,
        r: float = 1.0,
        diagonal: bool = False,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.r = r
        self.diagonal = diagonal
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("r", self.r, low=0, low_open=True)
        self._check_matrix_options()

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        side = self._init_linear(X, coef_init, intercept_init)
        self.factor_ = self.diagonal_ = None
        if self.diagonal:
            self.diagonal_ = np.ones(side)
            return
        self.factor_ = np.eye(side)

    @property
    def covariance_(self) -> np.ndarray | None:
        """Σ = GᵀG from the square root kept (``factor_``); None for the diagonal variant."""
        return factor_product(getattr(self, "factor_", None))

    # The record also keeps the row of every update (``update_indices_``): the bound sums over
    # the update rounds, mistakes or not.
    def _reset_record(self) -> None:
        super()._reset_record()
        self._update_rows: list[np.ndarray] = []

    def _resume_record(self) -> None:
        super()._resume_record()
        self._update_rows = [np.asarray(self.update_indices_, dtype=np.int64)]

    def _finish_record(self) -> None:
        super()._finish_record()
        self.update_indices_ = np.concatenate([np.empty(0, np.int64), *self._update_rows])
        del self._update_rows

    def _run_pass(self, X, y, order):
        rows, steps = self._mistake_buffers(order.shape[0])
        updated = np.empty(order.shape[0], dtype=np.int64)
        w, b, c, r = self.coef_[0], self.intercept_, self.bias_feature_, float(self.r)
        X, layout = pass_layout(X)
        csr = layout is not None
        if self.diagonal:
            state = (w, b, self.diagonal_, r, c, rows, steps, updated)
            if csr:
                mistakes, updates = arow_diagonal_pass_csr(*layout, y, order, *state)
            else:
                mistakes, updates = arow_diagonal_pass_dense(X, y, order, *state)
        else:
            side = self.factor_.shape[0]
            state = (w, b, self.factor_, r, c, np.empty(side), np.empty(side), rows, steps, updated)
            if csr:
                mistakes, updates = arow_pass_csr(*layout, y, order, *state)
            else:
                mistakes, updates = arow_pass_dense(X, y, order, *state)
        self._update_rows.append(updated[:updates])
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]


__all__ = [
    "AROW",
    "AROW_BIAS_MODES",
    "arow_diagonal_pass_csr",
    "arow_diagonal_pass_dense",
    "arow_pass_csr",
    "arow_pass_dense",
]
