"""Shared plumbing of the kernel learners that keep a bounded support set (RBP, Projectron).

The hypothesis is f(x) = Σ_{s∈S} α_s K'(x_s, x), S the support set, K' = K + c² the kernel of
``KernelPerceptron`` (linear, polynomial, RBF) with the bias as a constant feature c in feature
space (``"feature"``: c = 1, ``"r2"``: c² = max K(x, x) over the first training data,
``"none"``). The bias is thus part of each support vector: removing a vector removes its share
of the intercept too, and ``intercept_`` = c²·Σ α_s is reported, never updated apart.

Support vectors are kept as dense float64 rows (copied from dense or CSR input, so a later
``partial_fit`` still has them); a CSR row's kernel values walk its non-zeros against those rows
in the dense kernels' order, so the two layouts give the same numbers bit for bit. Every learner
here also records ``support_size_``: |S| after each example presented (step = example).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._base import OnlineBinaryClassifier, check_finite
from lincls.learners.kernel import (
    _KERNEL_CODE,
    KERNEL_BIAS_MODES,
    KERNELS,
    _kernel_value,
    kernel_diagonal,
    kernel_matrix,
)


@njit(cache=True, nogil=True)
def dense_support_row(X, sq, t, sv, sv_sq, size, kind, degree, gamma, bias_sq, out):
    """``out[s]`` = K(x_s, x_t) + c² for the first ``size`` support vectors ``sv``."""
    n_features = X.shape[1]
    for s in range(size):
        dot = 0.0
        for j in range(n_features):
            dot += sv[s, j] * X[t, j]
        out[s] = _kernel_value(kind, dot, sv_sq[s], sq[t], degree, gamma) + bias_sq


@njit(cache=True, nogil=True)
def csr_support_row(data, indices, indptr, sq, t, sv, sv_sq, size, kind, degree, gamma, bias_sq,
                    out):  # fmt: skip
    """``dense_support_row`` for CSR row ``t`` (sorted indices: the dense sums' order)."""
    for s in range(size):
        dot = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            dot += sv[s, indices[p]] * data[p]
        out[s] = _kernel_value(kind, dot, sv_sq[s], sq[t], degree, gamma) + bias_sq


@njit(cache=True, nogil=True)
def self_kernel(sq_t, kind, degree, gamma, bias_sq):
    """K(x_t, x_t) + c² from ‖x_t‖²."""
    return _kernel_value(kind, sq_t, sq_t, sq_t, degree, gamma) + bias_sq


@njit(cache=True, nogil=True)
def store_dense(X, sq, t, sv, sv_sq, slot):
    """Copy row ``t`` of dense ``X`` into support slot ``slot``."""
    for j in range(X.shape[1]):
        sv[slot, j] = X[t, j]
    sv_sq[slot] = sq[t]


@njit(cache=True, nogil=True)
def store_csr(data, indices, indptr, sq, t, sv, sv_sq, slot):
    """Copy CSR row ``t`` into support slot ``slot`` (a dense row)."""
    for j in range(sv.shape[1]):
        sv[slot, j] = 0.0
    for p in range(indptr[t], indptr[t + 1]):
        sv[slot, indices[p]] = data[p]
    sv_sq[slot] = sq[t]


@njit(cache=True, nogil=True)
def dense_sq_norms(X):
    """‖x‖² of every dense row, summed in column order."""
    out = np.zeros(X.shape[0])
    for i in range(X.shape[0]):
        acc = 0.0
        for j in range(X.shape[1]):
            acc += X[i, j] * X[i, j]
        out[i] = acc
    return out


@njit(cache=True, nogil=True)
def csr_sq_norms(data, indptr):
    """``dense_sq_norms`` of CSR rows (sorted indices): the same sums bit for bit."""
    out = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += data[p] * data[p]
        out[i] = acc
    return out


def csr_arrays(X: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data, indices, indptr) of a CSR matrix with sorted indices."""
    return X.data, X.indices, X.indptr


class BudgetKernelClassifier(OnlineBinaryClassifier):
    """Base of the support-set kernel learners: parameters, state, prediction, the size record.

    A subclass sets ``_capacity`` (rows of support storage to allocate) and ``_run_pass``.
    """

    kernel: str
    degree: int
    gamma: float
    bias: str

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("kernel", self.kernel, KERNELS)
        check_number("degree", self.degree, low=1, integer=True)
        check_number("gamma", self.gamma, low=0, low_open=True)
        check_choice("bias", self.bias, KERNEL_BIAS_MODES)

    def _validate_X_y(self, X, y, reset: bool):
        # the kernel sums run in float64 whatever the input dtype
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=np.float64, order="C",
            accept_large_sparse=False, ensure_all_finite=False, reset=reset,
        )  # fmt: skip
        check_finite(X)
        if sp.issparse(X) and not X.has_sorted_indices:
            X = X.sorted_indices()  # a copy: the caller's matrix is left as it was
        return X, y

    def _codes(self) -> tuple[int, int, float]:
        return _KERNEL_CODE[self.kernel], int(self.degree), float(self.gamma)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        for field, given in (("coef_init", coef_init), ("intercept_init", intercept_init)):
            if given is not None:
                raise LinclsInputError(field, "a support-set kernel learner starts from f = 0")
        self.zero_init_ = True
        largest = float(kernel_diagonal(X, self.kernel, self.degree).max(initial=0.0))
        self.kernel_radius_ = float(np.sqrt(largest))
        self._bias_sq = {"none": 0.0, "r2": largest, "feature": 1.0}[self.bias]
        self.bias_feature_ = float(np.sqrt(self._bias_sq))
        capacity = self._capacity(X)
        self._sv = np.zeros((capacity, X.shape[1]))
        self._sv_sq = np.zeros(capacity)
        self._coef = np.zeros(capacity)
        self._size = np.zeros(1, dtype=np.int64)
        self._publish()

    def _capacity(self, X) -> int:  # pragma: no cover
        raise NotImplementedError

    def _publish(self) -> None:
        """The fitted attributes from the working arrays."""
        size = int(self._size[0])
        self.support_vectors_ = self._sv[:size].copy()
        self.dual_coef_ = self._coef[:size].copy()
        self.intercept_ = np.array([self._bias_sq * float(self.dual_coef_.sum())])
        self.n_support_ = size

    def _prepare_pass(self, X) -> np.ndarray:
        """‖x‖² of every row (the same bits for both layouts); the radius grows with later
        batches."""
        sq = csr_sq_norms(X.data, X.indptr) if sp.issparse(X) else dense_sq_norms(X)
        diagonal = kernel_diagonal(X, self.kernel, self.degree)
        self.kernel_radius_ = max(self.kernel_radius_, float(np.sqrt(diagonal.max(initial=0.0))))
        return sq

    # --- the record: the support set's size after each example ------------------------------
    def _reset_record(self) -> None:
        super()._reset_record()
        self._size_parts: list[np.ndarray] = []

    def _resume_record(self) -> None:
        super()._resume_record()
        self._size_parts = [self.support_size_]

    def _finish_record(self) -> None:
        super()._finish_record()
        parts = self._size_parts
        self.support_size_ = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        del self._size_parts
        self._publish()

    # --- prediction --------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        check_is_fitted(self, "dual_coef_")

    def decision_function(self, X) -> np.ndarray:
        """f(x) = Σ_s α_s (K(x_s, x) + c²)."""
        self._check_fitted()
        X = validate_data(
            self, X, accept_sparse="csr", dtype=np.float64, reset=False, ensure_all_finite=False
        )
        check_finite(X)
        if self.dual_coef_.shape[0] == 0:
            return np.zeros(X.shape[0])
        block = kernel_matrix(X, self.support_vectors_, self.kernel, self.degree, self.gamma)
        return block @ self.dual_coef_ + self.intercept_[0]


__all__ = [
    "BudgetKernelClassifier",
    "csr_arrays",
    "csr_support_row",
    "dense_support_row",
    "self_kernel",
    "store_csr",
    "store_dense",
]
