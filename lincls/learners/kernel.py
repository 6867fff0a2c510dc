"""The kernel perceptron (Aizerman, Braverman & Rozonoer 1964): the perceptron in dual form.

The weights are never formed: f(x) = Σ_s α_s y_s K(x_s, x) + b, α_s the number of mistakes made
on training example s. A mistake is y·f(x) ≤ 0, as for ``Perceptron``; it adds 1 to α_t. Kernels:

- ``"linear"``: K(x, z) = x·z (the perceptron itself: same mistakes, same predictions);
- ``"poly"``: K(x, z) = (1 + x·z)^p, ``degree`` p ≥ 1 an integer;
- ``"rbf"``: K(x, z) = exp(−γ‖x − z‖²), ``gamma`` γ > 0.

The bias is a constant feature c in feature space, i.e. the kernel K + c²:

- ``"feature"``: c = 1, b += y on a mistake (as ``Perceptron``'s);
- ``"r2"``: c² = max K(x, x) over the first training data (``Perceptron``'s R² rule in feature
  space);
- ``"none"``: no bias.

Training keeps the activation g_i = Σ_s α_s y_s K(x_s, x_i) of every training example and adds
the kernel row K(x_t, ·) to it on each mistake, so a pass costs O(n) plus O(n·d) per mistake:
O(n·mistakes·d) in all. Rows of examples that err more than once are kept in a cache of
``cache_size`` MB (an example near the boundary tends to err in several passes).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.geometry import row_norms
from lincls.learners._base import OnlineBinaryClassifier, check_finite

KERNELS = ("linear", "poly", "rbf")
KERNEL_BIAS_MODES = ("feature", "r2", "none")
_KERNEL_CODE = {"linear": 0, "poly": 1, "rbf": 2}
_CHUNK_CELLS = 1 << 22  # kernel values computed for at most this many pairs at once


@njit(cache=True, nogil=True)
def _kernel_value(kind, dot, sq_a, sq_b, degree, gamma):
    """K from x·z (and ‖x‖², ‖z‖² for RBF); the power by repeated products (exact integers)."""
    if kind == 0:
        return dot
    if kind == 1:
        base = 1.0 + dot
        value = 1.0
        for _ in range(degree):
            value *= base
        return value
    dist = sq_a + sq_b - 2.0 * dot
    if dist < 0.0:  # rounding: ‖x − z‖² is never negative
        dist = 0.0
    return np.exp(-gamma * dist)


@njit(cache=True, nogil=True)
def _dense_row(X, sq, t, kind, degree, gamma, out):
    n_features = X.shape[1]
    for i in range(X.shape[0]):
        dot = 0.0
        for j in range(n_features):
            dot += X[t, j] * X[i, j]
        out[i] = _kernel_value(kind, dot, sq[t], sq[i], degree, gamma)


@njit(cache=True, nogil=True)
def _csr_row(data, indices, indptr, sq, t, kind, degree, gamma, buffer, out):
    # x_t scattered into a dense buffer; each dot then walks the other row's non-zeros (for
    # sorted indices the products and their order are those of the dense row)
    for p in range(indptr[t], indptr[t + 1]):
        buffer[indices[p]] = data[p]
    for i in range(indptr.shape[0] - 1):
        dot = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            dot += data[p] * buffer[indices[p]]
        out[i] = _kernel_value(kind, dot, sq[t], sq[i], degree, gamma)
    for p in range(indptr[t], indptr[t + 1]):
        buffer[indices[p]] = 0.0


@njit(cache=True, nogil=True)
def _mistake_update(t, y, g, alpha, row, intercept, bias_sq):
    step = y[t]
    for i in range(g.shape[0]):
        g[i] += step * row[i]
    intercept[0] += step * bias_sq
    alpha[t] += 1


@njit(cache=True, nogil=True)
def kernel_pass_dense(
    X, sq, y, order, g, alpha, intercept, bias_sq, kind, degree, gamma,
    cache, slot_of, used, row, mistake_rows, mistake_steps,
):  # fmt: skip
    """One pass of the kernel perceptron over dense ``X[order]``; returns the mistakes.

    ``g`` holds Σ_s α_s y_s K(x_s, x_i) for every training row i, ``intercept`` the bias b, so
    the activation of x_i is g_i + b. On a mistake (y·(g_t + b) ≤ 0) the kernel row K(x_t, ·) is
    taken from the cache (``slot_of[t]`` ≥ 0) or computed and stored while slots remain
    (``used[0]`` of ``cache.shape[0]``), then added y_t times to g; b += y_t·``bias_sq``.
    """
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        if y[t] * (g[t] + intercept[0]) <= 0.0:
            mistake_rows[mistakes] = t
            mistake_steps[mistakes] = k
            mistakes += 1
            slot = slot_of[t]
            if slot >= 0:
                _mistake_update(t, y, g, alpha, cache[slot], intercept, bias_sq)
                continue
            if used[0] < cache.shape[0]:
                slot = used[0]
                used[0] += 1
                slot_of[t] = slot
                _dense_row(X, sq, t, kind, degree, gamma, cache[slot])
                _mistake_update(t, y, g, alpha, cache[slot], intercept, bias_sq)
            else:
                _dense_row(X, sq, t, kind, degree, gamma, row)
                _mistake_update(t, y, g, alpha, row, intercept, bias_sq)
    return mistakes


@njit(cache=True, nogil=True)
def kernel_pass_csr(
    data, indices, indptr, sq, y, order, g, alpha, intercept, bias_sq, kind, degree, gamma,
    cache, slot_of, used, row, buffer, mistake_rows, mistake_steps,
):  # fmt: skip
    """``kernel_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``; ``buffer`` zeros
    of length n_features)."""
    mistakes = 0
    for k in range(order.shape[0]):
        t = order[k]
        if y[t] * (g[t] + intercept[0]) <= 0.0:
            mistake_rows[mistakes] = t
            mistake_steps[mistakes] = k
            mistakes += 1
            slot = slot_of[t]
            if slot >= 0:
                _mistake_update(t, y, g, alpha, cache[slot], intercept, bias_sq)
                continue
            if used[0] < cache.shape[0]:
                slot = used[0]
                used[0] += 1
                slot_of[t] = slot
                _csr_row(data, indices, indptr, sq, t, kind, degree, gamma, buffer, cache[slot])
                _mistake_update(t, y, g, alpha, cache[slot], intercept, bias_sq)
            else:
                _csr_row(data, indices, indptr, sq, t, kind, degree, gamma, buffer, row)
                _mistake_update(t, y, g, alpha, row, intercept, bias_sq)
    return mistakes


def kernel_matrix(A, B, kernel: str, degree: int, gamma: float) -> np.ndarray:
    """K(a_i, b_j) for the rows of ``A`` and ``B`` (dense or CSR), as a dense float64 array."""
    dot = np.asarray(safe_sparse_dot(A, B.T, dense_output=True), dtype=np.float64)
    if kernel == "linear":
        return dot
    if kernel == "poly":
        base = 1.0 + dot
        value = base.copy()
        for _ in range(int(degree) - 1):
            value *= base
        return value
    dist = row_norms(A)[:, None] ** 2 + row_norms(B)[None, :] ** 2 - 2.0 * dot
    np.maximum(dist, 0.0, out=dist)
    return np.exp(-gamma * dist)


def kernel_diagonal(X, kernel: str, degree: int) -> np.ndarray:
    """K(x, x) for every row of ``X``."""
    sq = row_norms(X) ** 2
    if kernel == "linear":
        return sq
    if kernel == "poly":
        return (1.0 + sq) ** int(degree)
    return np.ones(X.shape[0])


class KernelPerceptron(OnlineBinaryClassifier):
    """The kernel perceptron: on a mistake (y·f(x) ≤ 0), α_t += 1 and b += y·c².

    Parameters
    ----------
    kernel : {"linear", "poly", "rbf"}
    degree : int ≥ 1
        p of the polynomial kernel (1 + x·z)^p.
    gamma : float > 0
        γ of the RBF kernel exp(−γ‖x − z‖²).
    bias : {"feature", "r2", "none"}
        The constant feature c added to the feature space (module docstring).
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s
    cache_size : float > 0
        MB of kernel rows kept for examples that err again.

    ``fit`` takes ``intercept_init`` for every kernel and ``coef_init`` only for the linear
    kernel (a starting weight vector is not expressible in the other feature spaces): the
    activation is then coef_init·x + Σ α_s y_s x_s·x + b. There is no learning rate: from zero
    it would only scale f.

    Attributes
    ----------
    support_vectors_ : the training rows with α > 0 (dense float64 or CSR, as X), one row per
        (fit or partial_fit call, example) pair
    support_ : their row indices in the training data of their call
    dual_coef_ : ndarray (n_support,), α_s·y_s
    alpha_ : ndarray (n_samples,), α of every row of the last call's training data
    intercept_ : ndarray (1,), the bias b
    coef_init_ : ndarray (n_features,) or None, the linear kernel's starting weights
    kernel_radius_ : √max K(x, x) over the training data
    bias_feature_ : c (1, √max K(x, x) of the first data, or 0)
    zero_init_ : whether the run started from f = 0 (the bounds assume it)
    mistakes_, updates_, mistakes_per_pass_, mistake_steps_, mistake_indices_, n_passes_,
    converged_, n_steps_ : the online record (``lincls.learners._base``); updates = mistakes
    """

    bound_family = "kernel_perceptron"

    def __init__(
        self,
        kernel: str = "linear",
        degree: int = 2,
        gamma: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
        cache_size: float = 200.0,
    ):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state
        self.cache_size = cache_size

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("kernel", self.kernel, KERNELS)
        check_number("degree", self.degree, low=1, integer=True)
        check_number("gamma", self.gamma, low=0, low_open=True)
        check_choice("bias", self.bias, KERNEL_BIAS_MODES)
        check_number("cache_size", self.cache_size, low=0, low_open=True)

    def _validate_X_y(self, X, y, reset: bool):
        # The dual sums run in float64 whatever the input dtype.
        X, y = validate_data(
            self, X, y, accept_sparse="csr", dtype=np.float64, order="C",
            accept_large_sparse=False, ensure_all_finite=False, reset=reset,
        )  # fmt: skip
        check_finite(X)
        if sp.issparse(X) and not X.has_sorted_indices:
            X = X.sorted_indices()  # a copy: the caller's matrix is left as it was
        return X, y

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self.coef_init_ = None
        if coef_init is not None:
            if self.kernel != "linear":
                raise LinclsInputError(
                    "coef_init",
                    f"only the linear kernel takes starting weights; kernel is {self.kernel!r}",
                )
            given = np.asarray(coef_init, dtype=np.float64).reshape(-1)
            if given.shape[0] != X.shape[1] or not np.isfinite(given).all():
                raise LinclsInputError(
                    "coef_init", f"must hold {X.shape[1]} finite values, got {given.shape[0]}"
                )
            self.coef_init_ = given
        self.intercept_ = np.zeros(1)
        if intercept_init is not None:
            given = np.asarray(intercept_init, dtype=np.float64).reshape(-1)
            if given.shape[0] != 1 or not np.isfinite(given).all():
                raise LinclsInputError(
                    "intercept_init", f"must hold 1 finite value, got {given.shape[0]}"
                )
            self.intercept_[:] = given
        has_start = self.coef_init_ is not None and bool(self.coef_init_.any())
        self.zero_init_ = not (has_start or self.intercept_.any())
        largest = float(kernel_diagonal(X, self.kernel, self.degree).max(initial=0.0))
        self.kernel_radius_ = float(np.sqrt(largest))
        if self.bias == "none":
            self._bias_sq = 0.0
        elif self.bias == "r2":
            self._bias_sq = largest
        else:
            self._bias_sq = 1.0
        self.bias_feature_ = float(np.sqrt(self._bias_sq))
        self.support_vectors_ = X[:0].copy()
        self.support_ = np.zeros(0, dtype=np.int64)
        self.dual_coef_ = np.zeros(0)
        self._source = None

    def _start(self, X) -> None:
        """The activations of a new batch under the current state (the support so far)."""
        self._source = X
        self._sq = row_norms(X) ** 2
        self._g = self._kernel_scores(X)
        self.alpha_ = np.zeros(X.shape[0], dtype=np.int64)
        self._slot_of = np.full(X.shape[0], -1, dtype=np.int64)
        rows = int(self.cache_size * 2**20 // max(8 * X.shape[0], 1))
        self._cache = np.empty((min(rows, X.shape[0]), X.shape[0]))
        self._used = np.zeros(1, dtype=np.int64)
        diagonal = kernel_diagonal(X, self.kernel, self.degree)
        self.kernel_radius_ = max(self.kernel_radius_, float(np.sqrt(diagonal.max(initial=0.0))))

    def _run_pass(self, X, y, order):
        if self._source is not X:
            self._start(X)
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        row = np.empty(X.shape[0])
        kind, degree, gamma = _KERNEL_CODE[self.kernel], int(self.degree), float(self.gamma)
        if sp.issparse(X):
            mistakes = kernel_pass_csr(
                X.data, X.indices, X.indptr, self._sq, y, order, self._g, self.alpha_,
                self.intercept_, self._bias_sq, kind, degree, gamma, self._cache,
                self._slot_of, self._used, row, np.zeros(X.shape[1]), rows, steps,
            )  # fmt: skip
        else:
            mistakes = kernel_pass_dense(
                X, self._sq, y, order, self._g, self.alpha_, self.intercept_, self._bias_sq,
                kind, degree, gamma, self._cache, self._slot_of, self._used, row, rows, steps,
            )  # fmt: skip
        self._y = y
        return int(mistakes), int(mistakes), rows[:mistakes], steps[:mistakes]

    def _finish_record(self) -> None:
        super()._finish_record()
        if self._source is not None:
            X = self._source
            support = np.flatnonzero(self.alpha_)
            new_vectors = X[support]
            if sp.issparse(X) or sp.issparse(self.support_vectors_):
                self.support_vectors_ = sp.vstack(
                    [sp.csr_matrix(self.support_vectors_), sp.csr_matrix(new_vectors)],
                    format="csr",
                )
            else:
                self.support_vectors_ = np.vstack([self.support_vectors_, new_vectors])
            self.support_ = np.concatenate([self.support_, support])
            self.dual_coef_ = np.concatenate(
                [self.dual_coef_, self.alpha_[support] * self._y[support]]
            )
        # the activation cache belongs to one batch; a later partial_fit recomputes it
        self._source = None
        for name in ("_g", "_sq", "_cache", "_slot_of", "_used", "_y"):
            self.__dict__.pop(name, None)

    def _kernel_scores(self, X) -> np.ndarray:
        """Σ_s α_s y_s K(x_s, x) (+ coef_init·x) for every row of ``X``, without the bias."""
        out = np.zeros(X.shape[0])
        if self.coef_init_ is not None:
            out += np.asarray(safe_sparse_dot(X, self.coef_init_), dtype=np.float64).ravel()
        n_support = self.dual_coef_.shape[0]
        if n_support == 0:
            return out
        chunk = max(1, _CHUNK_CELLS // n_support)
        for start in range(0, X.shape[0], chunk):
            block = kernel_matrix(
                X[start : start + chunk], self.support_vectors_, self.kernel, self.degree,
                self.gamma,
            )  # fmt: skip
            out[start : start + chunk] += block @ self.dual_coef_
        return out

    # --- prediction --------------------------------------------------------------------------
    def _check_fitted(self) -> None:
        check_is_fitted(self, "dual_coef_")

    def decision_function(self, X) -> np.ndarray:
        """f(x) = Σ_s α_s y_s K(x_s, x) + b (+ coef_init·x for the linear kernel)."""
        self._check_fitted()
        X = validate_data(
            self, X, accept_sparse="csr", dtype=np.float64, reset=False, ensure_all_finite=False
        )
        check_finite(X)
        return self._kernel_scores(X) + self.intercept_[0]
