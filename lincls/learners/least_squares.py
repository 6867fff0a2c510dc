"""The least-squares classifier (seed 002, eq. 1): regress the ±1 labels, predict the sign.

With the labels mapped to ±1 (``classes_[1]`` is +1) and a constant feature 1 appended to every
row, the weights are w* = argmin_w ‖X'w − y‖², which seed 002 writes as (XᵀX)⁻¹Xᵀy. Forming XᵀX
squares the condition number of X, so the problem is solved on X' itself:

- ``"lstsq"`` (dense input): LAPACK's SVD-based least squares (``scipy.linalg.lstsq``, gelsd),
  the minimum-norm solution when X' is rank-deficient;
- ``"lsqr"`` (sparse input): Paige and Saunders' LSQR iterations (``scipy.sparse.linalg.lsqr``),
  which only multiply by X' and X'ᵀ, run to the tolerance ``tol``.

The last weight is the intercept. With full column rank this is scikit-learn's
``RidgeClassifier(alpha=0)`` (which centres X and y instead of appending the feature). A single
solve, not an online rule: no mistakes are made along the way and no mistake bound applies.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._base import FLOAT_DTYPES, binary_classes, check_finite

SOLVERS = ("auto", "lstsq", "lsqr")


class LeastSquaresClassifier(LinearClassifierMixin, ClassifierMixin, BaseEstimator):
    """Seed 002's least-squares classifier: w* = argmin ‖X'w − y‖² for y ∈ {−1, +1}.

    Parameters
    ----------
    fit_intercept : bool
        Append the constant feature 1 (its weight is ``intercept_``); else the fit is through
        the origin and ``intercept_`` is 0.
    solver : {"auto", "lstsq", "lsqr"}
        ``"auto"``: ``"lstsq"`` for dense input, ``"lsqr"`` for sparse input (module docstring).
        ``"lstsq"`` on sparse input densifies it.
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
    solver_ : the solver used
    rank_ : rank of X' (``"lstsq"``; None for ``"lsqr"``)
    n_iter_ : LSQR's iterations (``"lsqr"``; 1 for the direct solve of ``"lstsq"``)
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
        self.classes_ = binary_classes(y)
        target = np.where(y == self.classes_[1], 1.0, -1.0)
        solver = self.solver
        if solver == "auto":
            solver = "lsqr" if sp.issparse(X) else "lstsq"
        design = self._design(X, sparse=solver == "lsqr")
        self.rank_ = None
        self.n_iter_ = 1
        self.converged_ = True
        if solver == "lstsq":
            weights, _, rank, _ = scipy.linalg.lstsq(design, target, lapack_driver="gelsd")
            self.rank_ = int(rank)
        else:
            result = scipy.sparse.linalg.lsqr(
                design,
                target,
                atol=self.tol,
                btol=self.tol,
                conlim=1e16,
                iter_lim=self.max_iter or 10 * design.shape[1],
            )
            weights, self.n_iter_ = result[0], int(result[2])
            self.converged_ = int(result[1]) != 7  # istop 7: the iteration limit
        n_features = X.shape[1]
        self.coef_ = np.asarray(weights[:n_features], dtype=np.float64).reshape(1, -1)
        intercept = weights[n_features] if self.fit_intercept else 0.0
        self.intercept_ = np.array([intercept], dtype=np.float64)
        self.solver_ = solver
        return self

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
