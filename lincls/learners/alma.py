"""ALMA_p (Gentile 2001): an approximate maximal p-norm margin classifier, learned online.

Gentile, "A New Approximate Maximal Margin Classification Algorithm", JMLR 2 (2001), 213–242,
Figure 1. With q the dual exponent of p (1/p + 1/q = 1), the instances normalised,
x̂_t = x_t/‖x_t‖_p, w₁ = 0 and the correction counter k = 1:

- γ_k = B·√(p − 1)/√k;
- if y_t w_k·x̂_t ≤ (1 − α)γ_k (a *correction*):
  w' = f⁻¹(f(w_k) + η_k y_t x̂_t) with η_k = C/(√(p − 1)·√k), then
  w_{k+1} = w'/max(1, ‖w'‖_q) (back into the unit q-ball), and k ← k + 1.

f is the p-norm link f(w)_i = sign(w_i)|w_i|^{q−1}/‖w‖_q^{q−2}, with inverse
f⁻¹(θ)_i = sign(θ_i)|θ_i|^{p−1}/‖θ‖_p^{p−2}; for p = 2 both are the identity. Both are positively
homogeneous of degree 1 and ‖f⁻¹(θ)‖_q = ‖θ‖_p, so the kernel keeps θ = f(w) (``dual_coef_``),
adds the step there and scales θ by 1/max(1, ‖θ‖_p), which is the projection of w.

The paper's choice, under which its mistake bound holds (``lincls.bounds.alma``), is B = 1/α
and C = √2; those are the defaults here (``B=None`` means 1/α), with α = 0.9 and p = 2. river's
``ALMAClassifier`` uses the same p, α, B, C by default but does not normalise x (``normalize=False``
here reproduces it at p = 2), corrects on a strict "<" (the two differ only on an exact tie, and at
α = 1, where river never leaves w = 0), and for p ≠ 2 adds the step to w itself and rescales by
‖w‖_p, which is not the p-norm algorithm of the paper.

Mistakes (y·(w·x + b) ≤ 0) and corrections (``updates_``) are counted apart: every mistake is a
correction, since (1 − α)γ_k ≥ 0. A row with x' = 0 (no bias, x = 0) has no x̂: it counts as a
mistake (a zero activation) and is skipped. The bias (``bias="feature"``) is a constant feature 1
appended before normalising: x' = (x, 1), and ``intercept_`` is its weight. Each correction costs
O(n_features) even on CSR rows: the projection rescales all of w.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._base import OnlineBinaryClassifier, initial_weights
from lincls.learners._kernel_tools import unsigned_indices

ALMA_BIAS_MODES = ("none", "feature")
PAPER_C = math.sqrt(2.0)


@njit(cache=True, nogil=True)
def _p_norm(w, bias_weight, p):
    """‖(w, bias_weight)‖_p (p = 2 summed as squares, the others through |·|^p)."""
    total = 0.0
    if p == 2.0:
        for j in range(w.shape[0]):
            total += w[j] * w[j]
        return math.sqrt(total + bias_weight * bias_weight)
    for j in range(w.shape[0]):
        total += abs(w[j]) ** p
    return (total + abs(bias_weight) ** p) ** (1.0 / p)


@njit(cache=True, nogil=True)
def _project(w, intercept, theta, theta_intercept, p):
    """Scale θ into the unit p-ball and set w = f⁻¹(θ) (for p = 2, θ is w itself)."""
    norm = _p_norm(theta, theta_intercept[0], p)
    if norm > 1.0:
        for j in range(theta.shape[0]):
            theta[j] /= norm
        theta_intercept[0] /= norm
        norm = 1.0
    if p == 2.0 or norm == 0.0:
        return
    scale = norm ** (2.0 - p)
    for j in range(theta.shape[0]):
        t = theta[j]
        w[j] = math.copysign(abs(t) ** (p - 1.0) * scale, t)
    t = theta_intercept[0]
    intercept[0] = math.copysign(abs(t) ** (p - 1.0) * scale, t)


@njit(cache=True, nogil=True)
def _correction(label, activation, norm_p, c, k, p, alpha, B, C, normalize):
    """ALMA_p's step on one row: the multiple of (x, c) added to θ — 0 unless the normalised
    margin y·(w·x̂) is at most (1 − α)·γ_k, γ_k = B√(p−1)/√k, the step η_k = C/(√(p−1)√k).

    ``norm_p`` is Σ|x_j|^p (Σx_j² for p = 2) over the row's features, without c.
    """
    if normalize:
        norm = math.sqrt(norm_p + c * c) if p == 2.0 else (norm_p + c**p) ** (1.0 / p)
    else:
        norm = 1.0
    if norm == 0.0:
        return 0.0
    root = math.sqrt(p - 1.0)
    sqrt_k = math.sqrt(k)
    if label * activation / norm <= (1.0 - alpha) * (B * root / sqrt_k):
        return C / (root * sqrt_k) * label / norm
    return 0.0


@njit(cache=True, nogil=True)
def alma_pass_dense(
    X, y, order, w, intercept, theta, theta_intercept, c, k0, p, alpha, B, C, normalize,
    mistake_rows, mistake_steps,
):  # fmt: skip
    """One pass of ALMA_p over dense ``X[order]`` (module docstring), updating the state in place.

    ``w``/``intercept`` are the weights and θ/``theta_intercept`` their dual (the same arrays
    for p = 2); c is the constant feature (1 with a bias, else 0); ``k0`` the correction counter
    k at the start of the pass. Returns (mistakes, corrections).
    """
    n_features = X.shape[1]
    k = k0
    mistakes = 0
    for step in range(order.shape[0]):
        i = order[step]
        activation = 0.0
        norm = 0.0
        for j in range(n_features):
            xj = np.float64(X[i, j])
            activation += w[j] * xj
            norm += xj * xj if p == 2.0 else abs(xj) ** p
        activation += intercept[0] * c
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        scale = _correction(y[i], activation, norm, c, k, p, alpha, B, C, normalize)
        if scale != 0.0:
            for j in range(n_features):
                theta[j] += np.float64(X[i, j]) * scale
            theta_intercept[0] += c * scale
            _project(w, intercept, theta, theta_intercept, p)
            k += 1
    return mistakes, k - k0


@njit(cache=True, nogil=True)
def alma_pass_csr(
    data, indices, indptr, y, order, w, intercept, theta, theta_intercept, c, k0, p, alpha, B, C,
    normalize, mistake_rows, mistake_steps,
):  # fmt: skip
    """``alma_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    k = k0
    mistakes = 0
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        end = indptr[i + 1]
        activation = 0.0
        norm = 0.0
        for q in range(start, end):
            xj = np.float64(data[q])
            activation += w[indices[q]] * xj
            norm += xj * xj if p == 2.0 else abs(xj) ** p
        activation += intercept[0] * c
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        scale = _correction(y[i], activation, norm, c, k, p, alpha, B, C, normalize)
        if scale != 0.0:
            for q in range(start, end):
                theta[indices[q]] += np.float64(data[q]) * scale
            theta_intercept[0] += c * scale
            _project(w, intercept, theta, theta_intercept, p)
            k += 1
    return mistakes, k - k0


def link(w: np.ndarray, q: float) -> np.ndarray:
    """f(w)_i = sign(w_i)|w_i|^{q−1}/‖w‖_q^{q−2}, the dual of w under the p-norm link (0 ↦ 0)."""
    norm = float(np.sum(np.abs(w) ** q) ** (1.0 / q))
    if norm == 0.0:
        return np.zeros_like(w)
    return np.sign(w) * np.abs(w) ** (q - 1.0) * norm ** (2.0 - q)


class ALMA(OnlineBinaryClassifier):
    """ALMA_p(α; B, C) (Gentile 2001): corrects when the normalised margin is below (1 − α)γ_k.

    Parameters
    ----------
    p : float ≥ 2
        The norm of the instances (the margin's norm is its dual q); 2 is ALMA_2.
    alpha : float in (0, 1]
        The approximation: the margin sought is (1 − α) times the best.
    B : float > 0 or None
        γ_k = B√(p − 1)/√k; None means the paper's 1/α.
    C : float > 0
        η_k = C/(√(p − 1)√k); the paper's √2 by default.
    normalize : bool
        Use x̂ = x/‖x‖_p as the paper does (False: the raw x, as river does).
    bias : {"none", "feature"}
        No bias (the paper's setting), or a constant feature 1 appended before normalising.
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s
        (``stop_when_converged`` stops after a pass without a correction).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), float64, w
    intercept_ : ndarray (1,), the weight of the constant feature (0 without a bias)
    dual_coef_, dual_intercept_ : θ = f(w, b) (the same arrays as coef_, intercept_ for p = 2)
    B_ : the B used
    bias_feature_ : the constant feature (1 or 0)
    zero_init_ : whether the run started from w = 0 (the bound assumes it)
    mistakes_, updates_ (corrections), ... : the online record (``lincls.learners._base``)
    """

    bound_family = "alma"

    def __init__(
        self,
        p: float = 2.0,
        alpha: float = 0.9,
        B: float | None = None,
        C: float = PAPER_C,
        normalize: bool = True,
        bias: str = "none",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.p = p
        self.alpha = alpha
        self.B = B
        self.C = C
        self.normalize = normalize
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("p", self.p, low=2)
        check_number("alpha", self.alpha, low=0, high=1, low_open=True)
        if self.B is not None:
            check_number("B", self.B, low=0, low_open=True)
        check_number("C", self.C, low=0, low_open=True)
        if not isinstance(self.normalize, bool | np.bool_):
            raise LinclsInputError("normalize", f"must be true or false, got {self.normalize!r}")
        check_choice("bias", self.bias, ALMA_BIAS_MODES)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        coef, intercept = initial_weights(X, coef_init, intercept_init)
        if self.bias == "none" and intercept.any():
            raise LinclsInputError("intercept_init", "must be 0 with bias='none'")
        self.coef_ = coef.astype(np.float64)
        self.intercept_ = intercept
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        self.bias_feature_ = 1.0 if self.bias == "feature" else 0.0
        self.B_ = 1.0 / float(self.alpha) if self.B is None else float(self.B)
        if float(self.p) == 2.0:
            self.dual_coef_, self.dual_intercept_ = self.coef_, self.intercept_
        else:
            q = float(self.p) / (float(self.p) - 1.0)
            dual = link(np.r_[self.coef_[0], self.intercept_], q)
            self.dual_coef_ = dual[np.newaxis, :-1].copy()
            self.dual_intercept_ = dual[-1:].copy()

    def _run_pass(self, X, y, order):
        rows, steps = self._mistake_buffers(order.shape[0])
        state = (self.coef_[0], self.intercept_, self.dual_coef_[0], self.dual_intercept_)
        params = (
            self.bias_feature_, int(self.updates_) + 1, float(self.p), float(self.alpha),
            self.B_, float(self.C), bool(self.normalize),
        )  # fmt: skip
        if sp.issparse(X):
            mistakes, updates = alma_pass_csr(
                X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr), y, order,
                *state, *params, rows, steps,
            )  # fmt: skip
        else:
            mistakes, updates = alma_pass_dense(X, y, order, *state, *params, rows, steps)
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]


__all__ = ["ALMA", "ALMA_BIAS_MODES", "PAPER_C", "alma_pass_csr", "alma_pass_dense", "link"]
