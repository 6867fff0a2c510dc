"""The least-squares classifier (seed 002, eq. 1): regress the ±1 labels, predict the sign.

With the labels mapped to ±1 (``classes_[1]`` is +1) and a constant feature 1 appended to every
row, the weights are w* = argmin_w ‖X'w − y‖², which seed 002 writes as (XᵀX)⁻¹Xᵀy; where X'
is rank-deficient, the minimum-norm one of the minimisers, pinv(X')·y. Three solvers:

- ``"lstsq"`` (dense input): LAPACK's SVD-based least squares (``scipy.linalg.lstsq``, gelsd)
  on X' itself. Singular values below max(n, d')·ε·σ_max count as zero (the cutoff of numpy's
  ``matrix_rank`` and of ``pinv(rtol=None)``), so ``rank_`` is the numerical rank and a
  rank-deficient X' gets pinv(X')·y. LAPACK's own default, ε·σ_max, keeps directions that
  rounding alone made nonzero and answers with weights of 10¹²;
- ``"auto"`` on dense input first tries the normal equations (X'ᵀX')w = X'ᵀy: X'ᵀX' from one
  symmetric rank-k update of X (``dsyrk``; the column of ones enters through the column sums, so
  X' is never formed), scaled to a unit diagonal, then Cholesky. Forming X'ᵀX' squares the
  condition number, so this path is taken only when LAPACK's estimate of it shows the answer
  accurate to about 1e-10 (``MAX_SCALED_CONDITION``) and X' far from the SVD's rank cutoff
  (``MAX_CONDITION``); otherwise the SVD solves. On well-conditioned data it costs a third of
  ``RidgeClassifier(alpha=0)`` where the SVD cost five times it;
- ``"lsqr"`` (sparse input): Paige and Saunders' LSQR iterations (``scipy.sparse.linalg.lsqr``),
  which only multiply by X' and X'ᵀ, run to the tolerance ``tol``.

The last weight is the intercept. With full column rank this is scikit-learn's
``RidgeClassifier(alpha=0)`` (which centres X and y instead of appending the feature). A single
solve, not an online rule: no mistakes are made along the way and no mistake bound applies.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.linalg.blas
import scipy.linalg.lapack
import scipy.sparse as sp
import scipy.sparse.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._base import FLOAT_DTYPES, binary_classes, check_finite, fast_binary_labels

SOLVERS = ("auto", "lstsq", "lsqr")
# Cholesky of the unit-diagonal X'ᵀX' errs by about κ·ε relative to the weights (van der Sluis:
# the diagonal scaling costs nothing and leaves the condition number κ of the scaled matrix):
# below 1e6 that is ≤ 1e-10.
MAX_SCALED_CONDITION = 1e6
# κ(X'ᵀX') = κ(X')², bounded through the scaling: 1e12 keeps κ(X') ≤ 1e6, over three orders of
# magnitude inside the SVD's cutoff at 10⁶ rows (1 / (max(n, d')·ε) ≈ 4.5e9), so wherever the
# normal equations answer, the SVD would have found full rank too.
MAX_CONDITION = 1e12


class LeastSquaresClassifier(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Seed 002's least-squares classifier: w* = argmin ‖X'w − y‖² for y ∈ {−1, +1}.

    Parameters
    ----------
    fit_intercept : bool
        Append the constant feature 1 (its weight is ``intercept_``); else the fit is through
        the origin and ``intercept_`` is 0.
    solver : {"auto", "lstsq", "lsqr"}
        ``"auto"``: Cholesky on the normal equations for well-conditioned dense input, else
        ``"lstsq"``; ``"lsqr"`` for sparse input (module docstring). ``"lstsq"`` on sparse
        input densifies it.
    tol : float in (0, 1)
        LSQR's stopping tolerance (its ``atol`` and ``btol``); unused by ``"lstsq"``.
    max_iter : int ≥ 1 or None
        LSQR's iteration limit (None: 10·(number of weights); exact arithmetic needs at most
        the number of weights, rounding a few times more on ill-conditioned data).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), float64
    intercept_ : ndarray (1,), float64
    classes_ : the two labels; ``classes_[1]`` is the +1 class
    solver_ : the solver used: ``"cholesky"`` (chosen by ``"auto"``), ``"lstsq"`` or ``"lsqr"``
    rank_ : numerical rank of X' (its number of columns for ``"cholesky"``, the singular values
        above pinv's cutoff for ``"lstsq"``; None for ``"lsqr"``)
    n_iter_ : LSQR's iterations (``"lsqr"``; 1 for the direct solves)
    converged_ : False when LSQR stopped at ``max_iter`` before reaching ``tol`` (else True)
    """

    no_bound_reason = (
        "least squares is one solve, not an online rule: it makes no mistakes along the way "
        "and no mistake bound applies"
    )

    def __init__(
        self,
        fit_intercept: bool = True,
        solver: str = "auto",
        tol: float = 1e-12,
        max_iter: int | None = None,
    ):
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    def _check_params(self) -> None:
        if not isinstance(self.fit_intercept, bool | np.bool_):
            raise LinclsInputError(
                "fit_intercept", f"must be true or false, got {self.fit_intercept!r}"
            )
        check_choice("solver", self.solver, SOLVERS)
        check_number("tol", self.tol, low=0, high=1, low_open=True, high_open=True)
        if self.max_iter is not None:
            check_number("max_iter", self.max_iter, low=1, integer=True)

    def _validate_X_y(self, X, y, reset: bool):
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse=("csr", "csc"),
            dtype=list(FLOAT_DTYPES),
            accept_large_sparse=False,
            ensure_all_finite=False,
            reset=reset,
        )
        check_finite(X)
        return X, y

    def fit(self, X, y):
        """Solve the least-squares problem on (X, ±1 labels); see the module docstring."""
        self._check_params()
        X, y = self._validate_X_y(X, y, reset=True)
        fast = fast_binary_labels(y)
        if fast is None:
            self.classes_ = binary_classes(y)
            target = np.where(y == self.classes_[1], 1.0, -1.0)
        else:
            self.classes_, target = fast
        self.rank_ = None
        self.n_iter_ = 1
        self.converged_ = True
        solver = self.solver
        if solver == "auto":
            solver = "lsqr" if sp.issparse(X) else "cholesky"
        weights = self._solve_normal_equations(X, target) if solver == "cholesky" else None
        if weights is not None:
            self.rank_ = weights.shape[0]  # full: X'ᵀX' is positive definite, κ finite
        elif solver == "lsqr":
            weights = self._solve_lsqr(X, target)
        else:
            solver = "lstsq"
            weights = self._solve_svd(X, target)
        n_features = X.shape[1]
        self.coef_ = np.asarray(weights[:n_features], dtype=np.float64).reshape(1, -1)
        intercept = weights[n_features] if self.fit_intercept else 0.0
        self.intercept_ = np.array([intercept], dtype=np.float64)
        self.solver_ = solver
        return self

    def _solve_svd(self, X, target: np.ndarray) -> np.ndarray:
        """pinv(X')·y by LAPACK's SVD-based gelsd; sets ``rank_``, the numerical rank."""
        design = self._design(X, sparse=False)
        # matrix_rank's cutoff: what rounding leaves of a null direction stays under it, so the
        # answer is pinv(X')·y and the rank the numerical one
        cutoff = max(design.shape) * np.finfo(np.float64).eps
        weights, _, rank, _ = scipy.linalg.lstsq(design, target, cond=cutoff, lapack_driver="gelsd")
        self.rank_ = int(rank)
        return weights

    def _solve_lsqr(self, X, target: np.ndarray) -> np.ndarray:
        """LSQR's weights on the sparse X'; sets ``n_iter_`` and ``converged_``."""
        design = self._design(X, sparse=True)
        result = scipy.sparse.linalg.lsqr(
            design,
            target,
            atol=self.tol,
            btol=self.tol,
            conlim=1e16,
            iter_lim=self.max_iter or 10 * design.shape[1],
        )
        self.n_iter_ = int(result[2])
        self.converged_ = int(result[1]) != 7  # istop 7: the iteration limit
        return result[0]

    def _solve_normal_equations(self, X: np.ndarray, target: np.ndarray) -> np.ndarray | None:
        """The weights from (X'ᵀX')w = X'ᵀy by Cholesky on dense ``X``, or None when X' is too
        ill-conditioned for them (``MAX_SCALED_CONDITION``, ``MAX_CONDITION``) or rank-deficient
        (then the SVD answers)."""
        X = np.asarray(X, dtype=np.float64)  # a copy only of float32 rows
        if not (X.flags.c_contiguous or X.flags.f_contiguous):
            X = np.ascontiguousarray(X)
        n, d = X.shape
        k = d + int(self.fit_intercept)
        gram = np.empty((k, k), dtype=np.float64)
        # XᵀX from the F-ordered view of either layout, without a copy; the upper triangle
        if X.flags.f_contiguous:
            gram[:d, :d] = scipy.linalg.blas.dsyrk(1.0, X, trans=1)
        else:
            gram[:d, :d] = scipy.linalg.blas.dsyrk(1.0, X.T, trans=0)
        rhs = np.empty(k, dtype=np.float64)
        rhs[:d] = X.T @ target
        if self.fit_intercept:
            gram[:d, d] = X.sum(axis=0)
            gram[d, d] = n
            rhs[d] = target.sum()
        diagonal = np.diag(gram).copy()
        if not (diagonal > 0.0).all():
            return None  # a zero column
        scale = 1.0 / np.sqrt(diagonal)
        scaled = np.triu(gram) * scale[:, None] * scale[None, :]
        symmetric = scaled + np.triu(scaled, 1).T
        factor, info = scipy.linalg.lapack.dpotrf(scaled, lower=0, clean=1)
        if info != 0:
            return None  # not positive definite in floating point
        norm_1 = float(np.abs(symmetric).sum(axis=0).max())
        rcond, _ = scipy.linalg.lapack.dpocon(factor, norm_1)  # of the upper factor
        scaled_condition = np.inf if rcond <= 0.0 else 1.0 / rcond
        stretch = float(diagonal.max() / diagonal.min())  # κ(D)² of the scaling D
        if scaled_condition > MAX_SCALED_CONDITION or scaled_condition * stretch > MAX_CONDITION:
            return None
        solution, _ = scipy.linalg.lapack.dpotrs(factor, (rhs * scale)[:, None], lower=0)
        return solution[:, 0] * scale

    def _design(self, X, sparse: bool):
        """X' = [X, 1] (or X) in float64: a sparse matrix for LSQR, a dense array for lstsq."""
        n = X.shape[0]
        if sparse:
            X = sp.csr_matrix(X, dtype=np.float64)
            if self.fit_intercept:
                X = sp.hstack([X, np.ones((n, 1))], format="csr")
            return X
        X = X.toarray() if sp.issparse(X) else X
        design = np.empty((n, X.shape[1] + int(self.fit_intercept)), dtype=np.float64)
        design[:, : X.shape[1]] = X
        if self.fit_intercept:
            design[:, -1] = 1.0
        return design

    def _check_fitted(self) -> None:
        check_is_fitted(self, "coef_")


__all__ = ["SOLVERS", "LeastSquaresClassifier"]
