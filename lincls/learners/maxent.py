"""Maximum entropy: multinomial logistic regression (seed 003), by GIS or by L-BFGS.

The model gives class c of ``classes_`` the probability

    p(c | x) = exp(w_c·x + b_c) / Σ_r exp(w_r·x + b_r),

the k-class form of seed 003's logistic model. As a *conditional maximum-entropy model* its
features are class-conditional: for class c and input feature j,

    f_{c,j}(x, y) = x_j·[y = c]      and the bias feature   f_{c,0}(x, y) = [y = c],

with weights λ_{c,j} = ``coef_[c, j]`` and λ_{c,0} = ``intercept_[c]``. Both solvers maximize the
conditional log-likelihood L(λ) = Σ_t log p(y_t | x_t) of the training set (no penalty unless
``C`` is given). At its maximum every feature's model expectation Σ_t Σ_c p(c | x_t) f_i(x_t, c)
equals its empirical expectation Σ_t f_i(x_t, y_t): seed 003's constraints.

**GIS** (generalized iterative scaling; Darroch & Ratcliff 1972) repeats seed 003's update in log
form,

    λ_i ← λ_i + (1/V) log(E_emp[f_i] / E_model[f_i]),

from λ = 0 (seed 003's weights e^λ all 1); the expectations are sums over the training rows (the
ratio is the same for means). Which features and which V make its monotonicity
theorem hold: in the model expectation the features are evaluated on (x_t, c) for *every* class
c, not only the observed label, so every such pair must have non-negative features that sum to
the same V. With class-conditional features the sum for (x, c) is s(x) = 1 + Σ_j x_j, the same
for every c; so

    V = max_t s(x_t) over the training rows, and the slack feature f_s(x, c) = V − s(x) ≥ 0

completes each sum to V. The slack does not depend on c: its empirical and model expectations
are both Σ_t (V − s(x_t)), so its update is always log 1 = 0, and a feature the same for every
class cancels from p(c | x). It is therefore kept implicit: it shows only in V (``feature_sum_``).
The theorem, in the form Berger, Della Pietra & Della Pietra (1996) prove for conditional models
(here with every feature sum fixed at V): for a step δ, −log u ≥ 1 − u and Jensen's inequality
over the weights f_i(x, c)/V (non-negative, summing to 1 with the slack's, whose step is 0) give

    L(λ + δ) − L(λ) ≥ A(δ) = Σ_i [δ_i E_emp[f_i] − (E_model[f_i]/V)(e^{V δ_i} − 1)],

A(0) = 0, and A is a sum of concave functions of one δ_i each, each maximal at its GIS step.
Hence L never decreases. It needs every x_j ≥ 0 (Jensen's weights; ``fit`` rejects negative
features) and V ≥ s(x_t) for every training row; a larger V is valid too but shortens every step.

A feature never active with class c (E_emp = 0 < E_model) has no finite maximizing step: seed
003's multiplicative weight e^λ would become 0. Its step is the longest finite one, (1/V)·log of
the smallest normal float64 (≈ −708/V), and likewise +708/V for the opposite case; any step
between 0 and the exact one keeps A ≥ 0, so the theorem still holds. A feature that is 0 in every
row (0/0) stays at 0.

**L-BFGS** (``scipy.optimize.minimize``, method L-BFGS-B without bounds) minimizes the mean
negative log-likelihood −L/n, plus ‖W‖²/(2Cn) when ``C`` is given (scikit-learn's
``LogisticRegression`` objective divided by Cn; the intercepts are not penalized). With k ≥ 3
classes that is ``LogisticRegression(C=C)``'s multinomial model; with two classes scikit-learn
keeps one row w = w₁ − w₀, and since the optimum here has w₀ = −w₁ the penalty on both rows is
‖w‖²/(4Cn): ``LogisticRegression(C=2C)``.

Both stop when the largest component of the gradient of L/n, max_i |E_emp[f_i] − E_model[f_i]|/n
(plus the penalty's gradient for L-BFGS), is ≤ ``tol``; GIS checks it before each step, L-BFGS-B
is given it as ``gtol``. An iteration of either is two matrix products (the scores W·Xᵀ and the
expectations P·X) and a softmax over the classes: numpy hands the products to BLAS and
vectorizes the exponentials, and a numba loop over the softmax ran 3× slower than numpy's
(no fastmath, so no vectorized exp), so there is no numba kernel here. GIS needs hundreds of
times more iterations than L-BFGS (``make bench``; Malouf 2002 found the same on conditional
maximum-entropy models).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._base import FLOAT_DTYPES, check_finite
from lincls.learners._multiclass_base import multiclass_classes

SOLVERS = ("lbfgs", "gis")
# The longest finite GIS step, in units of 1/V: log of the smallest normal float64.
_LOG_RATIO_CAP = float(-np.log(np.finfo(np.float64).tiny))


def log_softmax(scores: np.ndarray) -> np.ndarray:
    """Row-wise log p(c | x) of a score matrix (n, k), computed without overflow."""
    shifted = scores - scores.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


# The solvers keep per-class arrays class-major, (k, n): the max and sum over the classes of each
# example then run over whole contiguous rows (numpy reduces short rows of an (n, k) array
# slowly), and the expectations are one (k, n)·(n, d) product.
def class_scores(X, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The scores w_c·x_t + b_c, class-major: a C-contiguous (k, n) float64 array."""
    scores = np.ascontiguousarray((X @ W.T).T) if sp.issparse(X) else W @ X.T
    scores += b[:, np.newaxis]
    return scores


def class_proba(scores: np.ndarray, y_index: np.ndarray) -> tuple[np.ndarray, float]:
    """(k, n) scores turned into p(c | x_t) in place; returns it and Σ_t log p(y_t | x_t)."""
    top = scores.max(axis=0)
    observed = scores[y_index, np.arange(y_index.shape[0])]
    scores -= top
    np.exp(scores, out=scores)
    totals = scores.sum(axis=0)
    scores /= totals
    return scores, float((observed - top - np.log(totals)).sum())


def times_X(M: np.ndarray, X) -> np.ndarray:
    """The product M·X of a (k, n) array and X (n, d), dense or CSR: (k, d)."""
    return np.asarray(X.T @ M.T).T if sp.issparse(X) else M @ X


def first_negative(X) -> tuple[int, float] | None:
    """(row, value) of the smallest negative entry of ``X``, or None if every entry is ≥ 0."""
    values = X.data if sp.issparse(X) else X
    if values.size == 0 or values.min() >= 0.0:
        return None
    flat = int(np.argmin(values))
    if sp.issparse(X):
        row = int(np.searchsorted(X.indptr, flat, side="right") - 1)
    else:
        row = flat // X.shape[1]
    return row, float(values.min())


def gis_log_ratio(empirical: np.ndarray, model: np.ndarray) -> np.ndarray:
    """log(empirical / model), 0 where both are 0, clipped to ±log(1/tiny) (module docstring)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(empirical) - np.log(model)
    ratio[(empirical == 0.0) & (model == 0.0)] = 0.0
    return np.clip(ratio, -_LOG_RATIO_CAP, _LOG_RATIO_CAP)


class MaxEnt(ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression (maximum entropy) fitted by GIS or L-BFGS.

    Parameters
    ----------
    solver : {"lbfgs", "gis"}
        ``"gis"``: generalized iterative scaling (features must be ≥ 0); ``"lbfgs"``:
        scipy's L-BFGS-B on the same objective (features of either sign). Module docstring.
    max_iter : int ≥ 1
        The most iterations (GIS steps, or L-BFGS iterations).
    tol : float > 0
        Stop when the largest gradient component of the mean log-likelihood is ≤ tol.
    C : float > 0 or None
        None: no penalty (the maximum-likelihood model). A number: L-BFGS minimizes
        −L/n + ‖W‖²/(2Cn), as ``LogisticRegression(C=C)`` (C=2C with two classes); GIS has
        no penalty and refuses it.

    Attributes
    ----------
    coef_ : ndarray (n_classes, n_features), float64; row c holds λ_{c,j} of class ``classes_[c]``
    intercept_ : ndarray (n_classes,), float64; the bias features' λ_{c,0}
    classes_ : the sorted labels
    log_likelihood_ : ndarray (n_iter_ + 1,); L = Σ_t log p(y_t | x_t) at the start (λ = 0,
        L = −n log k) and after each iteration (without the penalty)
    n_iter_ : iterations made
    converged_ : whether the gradient criterion stopped the solver before ``max_iter``
    feature_sum_ : V, the feature sum of every (x_t, c) with the slack feature (GIS only, else
        None)
    """

    def __init__(
        self,
        solver: str = "lbfgs",
        max_iter: int = 1000,
        tol: float = 1e-4,
        C: float | None = None,
    ):
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.C = C

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = self.solver == "gis"
        return tags

    def _check_params(self) -> None:
        check_choice("solver", self.solver, SOLVERS)
        check_number("max_iter", self.max_iter, low=1, integer=True)
        check_number("tol", self.tol, low=0, low_open=True)
        if self.C is not None:
            check_number("C", self.C, low=0, low_open=True)
            if self.solver == "gis":
                raise LinclsInputError(
                    "C",
                    f"applies to solver 'lbfgs' only (GIS maximizes the unpenalized likelihood), "
                    f"got {self.C!r}; set it to null",
                )

    def _validate_X_y(self, X, y, reset: bool):
        """Checked float arrays; for GIS, a one-line error on the first negative feature."""
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=list(FLOAT_DTYPES),
            accept_large_sparse=False,
            ensure_all_finite=False,
            reset=reset,
        )
        check_finite(X)
        if self.solver == "gis":
            negative = first_negative(X)
            if negative is not None:
                row, value = negative
                raise LinclsInputError(
                    "X",
                    f"Negative values in data: solver 'gis' needs features ≥ 0 (its monotonicity "
                    f"theorem), row {row} holds {value:g}; solver 'lbfgs' takes either sign",
                )
        return X, y

    def fit(self, X, y):
        """Fit λ from 0 by the chosen solver; record the log-likelihood of every iteration."""
        self._check_params()
        X, y = self._validate_X_y(X, y, reset=True)
        self.classes_ = multiclass_classes(y)
        X = X.astype(np.float64, copy=False)
        y_index = np.searchsorted(self.classes_, y)
        onehot = np.zeros((self.classes_.shape[0], X.shape[0]))  # class-major: [y_t = c]
        onehot[y_index, np.arange(X.shape[0])] = 1.0
        if self.solver == "gis":
            W, b, history, converged = self._fit_gis(X, y_index, onehot)
        else:
            self.feature_sum_ = None
            W, b, history, converged = self._fit_lbfgs(X, y_index, onehot)
        self.coef_, self.intercept_ = W, b
        self.log_likelihood_ = np.asarray(history, dtype=np.float64)
        self.n_iter_ = int(self.log_likelihood_.shape[0] - 1)
        self.converged_ = bool(converged)
        if not converged:
            warnings.warn(
                f"MaxEnt ({self.solver}) stopped at max_iter={self.max_iter} before the gradient "
                f"criterion tol={self.tol:g} was met",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _fit_gis(self, X, y_index, onehot):
        k, n = onehot.shape
        row_sums = np.asarray(X.sum(axis=1)).ravel()
        V = float(1.0 + row_sums.max())  # 1: the bias feature
        self.feature_sum_ = V
        empirical_W = times_X(onehot, X)  # Σ_t f_{c,j}(x_t, y_t) = Σ_{t: y_t=c} x_tj
        empirical_b = onehot.sum(axis=1)
        W = np.zeros((k, X.shape[1]))
        b = np.zeros(k)
        proba, log_likelihood = class_proba(np.zeros((k, n)), y_index)
        history = [log_likelihood]
        converged = False
        for step in range(self.max_iter + 1):
            model_W = times_X(proba, X)  # Σ_t Σ_c p(c|x_t) f_{c,j}(x_t, c)
            model_b = proba.sum(axis=1)
            gradient = max(
                np.abs(empirical_W - model_W).max(initial=0.0),
                np.abs(empirical_b - model_b).max(),
            )
            converged = gradient / n <= self.tol
            if converged or step == self.max_iter:
                break
            W += gis_log_ratio(empirical_W, model_W) / V
            b += gis_log_ratio(empirical_b, model_b) / V
            proba, log_likelihood = class_proba(class_scores(X, W, b), y_index)
            history.append(log_likelihood)
        return W, b, history, converged

    def _fit_lbfgs(self, X, y_index, onehot):
        k, n = onehot.shape
        d = X.shape[1]
        penalty = 0.0 if self.C is None else 1.0 / (float(self.C) * n)

        def unpack(theta):
            return theta[: k * d].reshape(k, d), theta[k * d :]

        def penalty_of(theta) -> float:
            return 0.5 * penalty * float(np.dot(theta[: k * d], theta[: k * d]))

        def objective(theta):
            W, b = unpack(theta)
            proba, log_likelihood = class_proba(class_scores(X, W, b), y_index)
            residual = np.subtract(proba, onehot, out=proba)  # p(c|x_t) − [y_t = c]
            grad_W = times_X(residual, X) / n
            if penalty:
                grad_W += penalty * W
            value = -log_likelihood / n + penalty_of(theta)
            return value, np.concatenate([grad_W.ravel(), residual.sum(axis=1) / n])

        start = np.zeros(k * (d + 1))
        history = [-n * objective(start)[0]]

        def record(intermediate_result):
            history.append(-n * (intermediate_result.fun - penalty_of(intermediate_result.x)))

        result = minimize(
            objective,
            start,
            jac=True,
            method="L-BFGS-B",
            callback=record,
            # ftol as scikit-learn's LogisticRegression: the gradient criterion decides
            options={
                "maxiter": self.max_iter,
                "gtol": self.tol,
                "ftol": 64 * np.finfo(np.float64).eps,
            },
        )
        W, b = unpack(result.x)
        return W.copy(), b.copy(), history, result.status == 0

    # --- prediction --------------------------------------------------------------------------
    def _validate_X_predict(self, X):
        X = validate_data(
            self,
            X,
            accept_sparse="csr",
            dtype=list(FLOAT_DTYPES),
            reset=False,
            ensure_all_finite=False,
        )
        check_finite(X)
        return X

    def _scores(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = self._validate_X_predict(X)
        return np.asarray(X @ self.coef_.T, dtype=np.float64) + self.intercept_

    def decision_function(self, X) -> np.ndarray:
        """Scores w_c·x + b_c (n, k); with two classes s₁ − s₀ (n,), positive for classes_[1]."""
        scores = self._scores(X)
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def predict_log_proba(self, X) -> np.ndarray:
        """log p(c | x) (n, k), columns in the order of ``classes_``."""
        return log_softmax(self._scores(X))

    def predict_proba(self, X) -> np.ndarray:
        """p(c | x) (n, k), columns in the order of ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        """The most probable class, the lowest class index on ties."""
        best = np.argmax(self._scores(X), axis=1)
        return self.classes_[best]


__all__ = ["SOLVERS", "MaxEnt", "class_proba", "class_scores", "gis_log_ratio", "log_softmax"]
