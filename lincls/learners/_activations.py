"""A binary learner's activations on every row, in its pass's own arithmetic (no BLAS).

The adversarial order (``lincls.orders``) presents a row the learner gets wrong, y·(w·x + b) ≤ 0.
Measured with ``X @ w``, that test used OpenBLAS, whose kernel (and so its order of summation)
depends on the processor: at a tie, a row whose exact activation is 0 summed to 0 on one
processor and to a rounding of either sign on another, so the game took different turns, and a
row BLAS called wrong could be one the learner's own pass, summing in row order, called right
(the game then presented it again and again to no effect). These kernels sum each row in the
order the perceptron's pass does (``perceptron_pass_dense`` / ``_csr``: w_j·x_j for j = 0, 1, …
into a float64, rounded to the weights' dtype, plus b), with no fused multiply-add (numba emits
none without ``fastmath``), so a row is wrong here exactly when that pass errs on it, and the
outcome is the same bits on every processor. ``squared_norms`` does the same for ‖x_t‖².
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.learners._kernel_tools import as_weight_dtype


@njit(cache=True, nogil=True)
def signed_activations_dense(X, y, w, b, out):
    """out[i] = y_i·(w·x_i + b) for every dense row, the pass's own sum."""
    for i in range(X.shape[0]):
        activation = 0.0
        for j in range(X.shape[1]):
            activation += w[j] * X[i, j]
        out[i] = y[i] * (as_weight_dtype(activation, w) + b)
    return out


@njit(cache=True, nogil=True)
def signed_activations_csr(data, indices, indptr, y, w, b, out):
    """``signed_activations_dense`` for CSR rows."""
    for i in range(indptr.shape[0] - 1):
        activation = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            activation += w[indices[p]] * data[p]
        out[i] = y[i] * (as_weight_dtype(activation, w) + b)
    return out


@njit(cache=True, nogil=True)
def _squared_norms_dense(X, out):
    for i in range(X.shape[0]):
        total = 0.0
        for j in range(X.shape[1]):
            value = np.float64(X[i, j])
            total += value * value
        out[i] = total
    return out


@njit(cache=True, nogil=True)
def _squared_norms_csr(data, indptr, out):
    for i in range(indptr.shape[0] - 1):
        total = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            value = np.float64(data[p])
            total += value * value
        out[i] = total
    return out


def signed_activations(X, y_signed: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    """y_t·(w·x_t + b) of every row of X (dense C-ordered, or CSR), summed as the pass sums."""
    out = np.empty(X.shape[0], dtype=np.float64)
    y_signed = np.ascontiguousarray(y_signed, dtype=np.float64)
    if sp.issparse(X):
        X = X.tocsr()
        return signed_activations_csr(X.data, X.indices, X.indptr, y_signed, w, float(b), out)
    return signed_activations_dense(np.ascontiguousarray(X), y_signed, w, float(b), out)


def squared_norms(X) -> np.ndarray:
    """‖x_t‖² of every row, each summed in row order (the same bits on every processor)."""
    out = np.empty(X.shape[0], dtype=np.float64)
    if sp.issparse(X):
        X = X.tocsr()
        return _squared_norms_csr(X.data, X.indptr, out)
    return _squared_norms_dense(np.ascontiguousarray(X), out)
