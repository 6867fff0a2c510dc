"""What the learners that keep a matrix over the features share: SOP, AROW, CW/SCW.

Each keeps a (d + 1)² matrix (d without a bias) or its diagonal, and a weight vector; this base
checks the two options that shape them (``diagonal``, ``bias``), makes the starting weights and
refuses a full matrix too large to hold, and hands a pass its rows as dense or sorted CSR arrays.
The update rules stay in each learner's own kernels.

A full matrix P (AROW's and CW's Σ, the second-order perceptron's M⁻¹) is kept as a square root
G with P = GᵀG (``factor_``; the matrix itself is ``GᵀG`` on demand). Each rule shrinks P along
s = Px as P' = P − s sᵀ/(V + r), V = xᵀPx, which ``factor_downdate`` applies to G (Potter's
square-root update). Done on P itself, that subtraction cancels once V/r passes ~10¹⁶: on 60
random rows in ℝ⁴ scaled to ‖x‖ ≈ 10⁹ (5 passes, r = a = 0.1), AROW and the second-order
perceptron made 5 and 7 mistakes where their rule in 60-digit arithmetic makes 4 and 6 (on G: 4
and 6 at every scale up to 10¹⁴): P's entries cannot hold eigenvalues 10¹⁹ apart, G's (their
square roots) only need to hold 10⁹·⁵. An update costs two passes over G where it took one over
P; a row still costs O(d·nnz) (z = Gx).

numba caches a kernel by its own file: after editing the helpers here, delete the ``*.nbi`` and
``*.nbc`` files under ``lincls/learners/__pycache__``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_choice
from lincls.learners._base import OnlineBinaryClassifier, initial_weights
from lincls.learners._kernel_tools import unsigned_indices
from lincls.learners.romma import sorted_csr

MAX_FULL_FEATURES = 10_000  # a full matrix of 10,001² float64 is 800 MB
MATRIX_BIAS_MODES = ("feature", "none")


class MatrixClassifier(OnlineBinaryClassifier):
    """An online binary learner with a matrix over the features, full or ``diagonal``."""

    def _check_matrix_options(self) -> None:
        """Check ``diagonal`` and ``bias`` (one line naming the option)."""
        if not isinstance(self.diagonal, bool | np.bool_):
            raise LinclsInputError("diagonal", f"must be true or false, got {self.diagonal!r}")
        check_choice("bias", self.bias, MATRIX_BIAS_MODES)

    def _init_linear(self, X, coef_init, intercept_init) -> int:
        """Set ``coef_``, ``intercept_``, ``zero_init_`` and ``bias_feature_``; return the
        matrix's side, after refusing a full matrix of more than ``MAX_FULL_FEATURES``."""
        coef, intercept = initial_weights(X, coef_init, intercept_init)
        if self.bias == "none" and intercept.any():
            raise LinclsInputError("intercept_init", "must be 0 with bias='none'")
        self.coef_ = coef.astype(np.float64)
        self.intercept_ = intercept
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        self.bias_feature_ = 1.0 if self.bias == "feature" else 0.0
        side = X.shape[1] + (self.bias == "feature")
        if not self.diagonal and X.shape[1] > MAX_FULL_FEATURES:
            raise LinclsInputError(
                "diagonal",
                f"must be true above {MAX_FULL_FEATURES} features (the full matrix of "
                f"{X.shape[1]} would need {side * side * 8 / 1e9:.1f} GB), got false",
            )
        return side


@njit(cache=True, nogil=True)
def factor_apply(G, z, s):
    """s = Gᵀz in place: P·x for P = GᵀG and z = Gx (summed over the rows of G in order)."""
    side = G.shape[0]
    for i in range(side):
        s[i] = 0.0
    for q in range(side):
        zq = z[q]
        for i in range(side):
            s[i] += G[q, i] * zq


@njit(cache=True, nogil=True)
def factor_downdate(G, z, s, V, r):
    """P' = P − s sᵀ/(V + r) on P = GᵀG, with z = Gx, s = Px, V = xᵀPx = z·z, r > 0: G −= c·z sᵀ
    with c = 1/(T + √(rT)), T = V + r (then G'ᵀG' = P − (2c − c²V)s sᵀ and 2c − c²V = 1/T).
    Every term is positive: no cancellation in c at any V/r."""
    T = V + r
    c = 1.0 / (T + math.sqrt(r * T))
    side = G.shape[0]
    for q in range(side):
        cz = c * z[q]
        for i in range(side):
            G[q, i] -= cz * s[i]


def factor_product(G) -> np.ndarray | None:
    """P = GᵀG (None without a factor: the diagonal variants)."""
    return None if G is None else G.T @ G


def pass_layout(X) -> tuple[object, tuple | None]:
    """(X, None) for dense rows; (sorted CSR X, its (data, indices, indptr) as the kernels take
    them) for sparse ones."""
    if not sp.issparse(X):
        return X, None
    X = sorted_csr(X)
    return X, (X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr))
