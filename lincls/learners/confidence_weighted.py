"""Confidence-weighted learning: CW (Dredze, Crammer & Pereira 2008), SCW-I and SCW-II (Wang,
Zhao & Hoi 2012), full covariance and diagonal.

Each keeps a Gaussian N(μ, Σ) over weight vectors, from μ = 0 and Σ = I, and on an example
with M = y μ·x and V = xᵀΣx takes a step μ += α·y·Σx, Σ⁻¹ += k·x xᵀ (so Σ −= β·Σx xᵀΣ with
β = k/(1 + kV)), φ = Φ⁻¹(η) the confidence's normal quantile:

- CW (Dredze, Crammer & Pereira, "Confidence-Weighted Linear Classification", ICML 2008, the
  variance update): while M < φV, α = (−(1 + 2φM) + √((1 + 2φM)² − 8φ(M − φV)))/(4φV)
  and k = 2αφ;
- SCW (Wang, Zhao & Hoi, "Exact Soft Confidence-Weighted Learning", ICML 2012), on a loss
  φ√V − M > 0, with ψ = 1 + φ²/2 and ζ = 1 + φ²: SCW-I α = min(C, max(0, (−Mψ +
  √(M²φ⁴/4 + Vφ²ζ))/(Vζ))); SCW-II, with n = V + 1/(2C), α = max(0, (−(2Mn + φ²MV) +
  φ√(φ²M²V² + 4nV(n + Vφ²)))/(2(n² + nVφ²))); then u = (−αVφ + √(α²V²φ² + 4V))²/4 and
  β = αφ/(√u + Vαφ) (so k = β/(1 − βV)).

Each root is computed in a form without cancellation (``cw_step``), equal to the papers' in
exact arithmetic: where −b + √(b² + c) subtracts nearly equal numbers it is c/(b + √(b² + c)).
The papers' CW form rounded α to 0 once 8φ²V fell below the float epsilon (‖x‖ ≈ 10⁻⁷ at
η = 0.51), so CW made a mistake on every row without a step. SCW's √u lost digits at a large
αφ√V, and k = β/(1 − βV) more (SCW-I's k was 3·10⁻⁶ off at M = −1, V = 10⁻¹⁰, η = 0.9,
C = 10¹²): k = αφ/√u.

Mistakes (M ≤ 0) and updates (α > 0) are counted apart; a row with V = 0 (x' = 0) is not
updated, nor one within a relative 10⁻⁹ of its constraint (a step leaves its example exactly on
it, which rounding would otherwise break again on every pass). The full Σ (``covariance_``) is
kept as a square root G, Σ = GᵀG (``factor_``, ``lincls.learners._matrix``: Σ itself loses
its small eigenvalues once kV passes ~10¹⁶); it costs O(d·nnz) a row, since V = ‖Gx‖² decides
the update, and O(d²) an update. ``diagonal=True``
keeps σ = diag(Σ): V = Σ_j σ_j x_j², μ_j += α y σ_j x_j and σ_j ← 1/(1/σ_j + k x_j²), the
update of Σ⁻¹ with its off-diagonal terms dropped.

Mistake bounds: ``lincls.bounds.confidence_weighted`` (derived there, full covariance only, for
CW, for SCW-I runs whose steps were never capped at C and for SCW-II runs without a step of
c = α + k·y μ_{t+1}·x < 0: ``clipped_steps_`` counts the steps so excluded; none for the diagonal
variant, whose update is not a rank-one update of Σ⁻¹). No statement of the papers' own bounds
could be checked against their text.

PyPI's ``scw`` (1.1.2) is no peer: it stops with a TypeError on NumPy 2 (``math.sqrt`` of a
1 × 1 array), takes φ = Φ(η) rather than Φ⁻¹(η), and updates on the hinge loss 1 − M rather than
φ√V − M. The bias (``bias="feature"``) is a constant feature 1 in x, ``intercept_`` its weight.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.stats import norm

from lincls.errors import check_choice, check_number
from lincls.learners._matrix import (
    MATRIX_BIAS_MODES,
    MatrixClassifier,
    factor_apply,
    factor_downdate,
    factor_product,
    pass_layout,
)

CW_VARIANTS = ("cw", "scw1", "scw2")
CW_BIAS_MODES = MATRIX_BIAS_MODES
_VARIANT_CODE = {"cw": 0, "scw1": 1, "scw2": 2}
# A step leaves its example on the constraint (M = φV, or M = φ√V), where rounding reads it as
# broken half of the time: a constraint short by less than this fraction counts as met, or such
# an example would be updated again, by a rounding error, on every pass.
SLACK = 1e-9


@njit(cache=True, nogil=True)
def cw_step(variant, M, V, phi, C):
    """(α, β, k) of the step at M = y μ·x, V = xᵀΣx (module docstring); α = 0: no update.

    Each root is taken in the form without cancellation: where the paper's −b + √(b² + c) would
    subtract nearly equal numbers (c ≪ b², as at a small V, where CW's α rounded to 0 below
    8φ²V ≈ 10⁻¹⁶), it is c/(b + √(b² + c)) instead; the same for SCW's α near its constraint and
    for s = √V' at a large αφ√V (where s rounded to 0 and k to infinity).
    """
    if V <= 0.0:
        return 0.0, 0.0, 0.0
    if variant == 0:
        if M >= phi * V * (1.0 - SLACK):
            return 0.0, 0.0, 0.0
        b = 1.0 + 2.0 * phi * M
        gap = phi * V - M  # > 0 here
        root = math.sqrt(b * b + 8.0 * phi * gap)
        if b > 0.0:
            alpha = 2.0 * gap / (V * (b + root))
        else:
            alpha = (root - b) / (4.0 * phi * V)
        if not alpha > 0.0:
            return 0.0, 0.0, 0.0
        k = 2.0 * alpha * phi
        return alpha, k / (1.0 + k * V), k
    sqrt_v = math.sqrt(V)
    if M >= phi * sqrt_v * (1.0 - SLACK):
        return 0.0, 0.0, 0.0
    phi2 = phi * phi
    # φ²V − M² = (φ√V − M)(φ√V + M), the loss times a sum: no cancellation beyond the loss's
    loss_prod = (phi * sqrt_v - M) * (phi * sqrt_v + M)
    if variant == 1:
        psi = 1.0 + phi2 / 2.0
        zeta = 1.0 + phi2
        root = math.sqrt(M * M * phi2 * phi2 / 4.0 + V * phi2 * zeta)
        if M > 0.0:
            t = loss_prod / (V * (M * psi + root))
        else:
            t = (-M * psi + root) / (V * zeta)
        alpha = min(C, max(0.0, t))
    else:
        n = V + 1.0 / (2.0 * C)
        gamma = phi * math.sqrt(phi2 * M * M * V * V + 4.0 * n * V * (n + V * phi2))
        lead = M * (2.0 * n + phi2 * V)
        if M > 0.0:
            alpha = 2.0 * loss_prod / (lead + gamma)
        else:
            alpha = (gamma - lead) / (2.0 * (n * n + n * V * phi2))
        alpha = max(0.0, alpha)
    if alpha <= 0.0:
        return 0.0, 0.0, 0.0
    # s = √V' = (−αVφ + √(α²V²φ² + 4V))/2 = 2V/(αVφ + √(α²V²φ² + 4V)); k = αφ/s exactly
    a = alpha * V * phi
    s = 2.0 * V / (a + math.sqrt(a * a + 4.0 * V))
    return alpha, alpha * phi / (s + a), alpha * phi / s


@njit(cache=True, nogil=True)
def uncovered(variant, M, V, alpha, k, C):
    """1 for an update the derived bound of its variant excludes, else 0: an SCW-I step capped
    at C, or an SCW-II step whose c = α + k·(M + αV) is negative (the comparator's margin would
    enter the bound with the wrong sign; ``lincls.bounds.confidence_weighted``)."""
    if variant == 1:
        return 1 if alpha >= C else 0
    if variant == 2:
        return 1 if alpha + k * (M + alpha * V) < 0.0 else 0
    return 0


@njit(cache=True, nogil=True)
def _step(factor, w, intercept, z, s, scale, V, k, d):
    """μ += α y s with s = Σx = Gᵀz, then Σ⁻¹ += k x xᵀ (Σ −= s sᵀ/(V + 1/k)) on G."""
    factor_apply(factor, z, s)
    for j in range(d):
        w[j] += scale * s[j]
    if s.shape[0] > d:
        intercept[0] += scale * s[d]
    factor_downdate(factor, z, s, V, 1.0 / k)


@njit(cache=True, nogil=True)
def cw_pass_dense(
    X, y, order, w, intercept, factor, variant, phi, C, c, z, s, mistake_rows, mistake_steps
):  # fmt: skip
    """One pass of CW / SCW-I / SCW-II (``variant`` 0 / 1 / 2), full Σ = GᵀG (G = ``factor``,
    (d + 1)² with a bias feature c), over dense ``X[order]``, in place; ``z``, ``s`` scratch.
    Returns (mistakes, updates, steps the derived bound excludes: ``uncovered``)."""
    d = X.shape[1]
    side = factor.shape[0]
    mistakes = 0
    updates = 0
    clipped = 0
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
        V = 0.0
        for row in range(side):
            total = 0.0
            for k in range(d):
                total += factor[row, k] * np.float64(X[i, k])
            if side > d:
                total += factor[row, d] * c
            z[row] = total
            V += total * total
        alpha, _, k = cw_step(variant, label * margin, V, phi, C)
        if alpha > 0.0:
            _step(factor, w, intercept, z, s, label * alpha, V, k, d)
            updates += 1
            clipped += uncovered(variant, label * margin, V, alpha, k, C)
    return mistakes, updates, clipped


@njit(cache=True, nogil=True)
def cw_pass_csr(
    data, indices, indptr, y, order, w, intercept, factor, variant, phi, C, c, z, s,
    mistake_rows, mistake_steps,
):  # fmt: skip
    """``cw_pass_dense`` for CSR rows (sorted indices): the same numbers bit for bit."""
    d = w.shape[0]
    side = factor.shape[0]
    mistakes = 0
    updates = 0
    clipped = 0
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
        V = 0.0
        for row in range(side):
            total = 0.0
            for p in range(start, end):
                total += factor[row, indices[p]] * np.float64(data[p])
            if side > d:
                total += factor[row, d] * c
            z[row] = total
            V += total * total
        alpha, _, k = cw_step(variant, label * margin, V, phi, C)
        if alpha > 0.0:
            _step(factor, w, intercept, z, s, label * alpha, V, k, d)
            updates += 1
            clipped += uncovered(variant, label * margin, V, alpha, k, C)
    return mistakes, updates, clipped


@njit(cache=True, nogil=True)
def cw_diagonal_pass_dense(
    X, y, order, w, intercept, sigma, variant, phi, C, c, mistake_rows, mistake_steps
):  # fmt: skip
    """``cw_pass_dense`` with a diagonal Σ = diag(``sigma``): the same three counts."""
    d = X.shape[1]
    biased = sigma.shape[0] > d
    mistakes = 0
    updates = 0
    clipped = 0
    for step in range(order.shape[0]):
        i = order[step]
        margin = 0.0
        V = 0.0
        for j in range(d):
            xj = np.float64(X[i, j])
            margin += w[j] * xj
            V += sigma[j] * xj * xj
        margin += intercept[0] * c
        if biased:
            V += sigma[d] * c * c
        label = y[i]
        if label * margin <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        alpha, _, k = cw_step(variant, label * margin, V, phi, C)
        if alpha > 0.0:
            scale = alpha * label
            for j in range(d):
                xj = np.float64(X[i, j])
                if xj != 0.0:  # σ_j stays bit for bit where x_j = 0, as on a CSR row
                    w[j] += scale * sigma[j] * xj
                    sigma[j] = 1.0 / (1.0 / sigma[j] + k * xj * xj)
            if biased:
                intercept[0] += scale * sigma[d] * c
                sigma[d] = 1.0 / (1.0 / sigma[d] + k * c * c)
            updates += 1
            clipped += uncovered(variant, label * margin, V, alpha, k, C)
    return mistakes, updates, clipped


@njit(cache=True, nogil=True)
def cw_diagonal_pass_csr(
    data, indices, indptr, y, order, w, intercept, sigma, variant, phi, C, c, mistake_rows,
    mistake_steps,
):  # fmt: skip
    """``cw_diagonal_pass_dense`` for CSR rows (sorted indices): the same numbers."""
    d = w.shape[0]
    biased = sigma.shape[0] > d
    mistakes = 0
    updates = 0
    clipped = 0
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        end = indptr[i + 1]
        margin = 0.0
        V = 0.0
        for p in range(start, end):
            xj = np.float64(data[p])
            margin += w[indices[p]] * xj
            V += sigma[indices[p]] * xj * xj
        margin += intercept[0] * c
        if biased:
            V += sigma[d] * c * c
        label = y[i]
        if label * margin <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = step
            mistakes += 1
        alpha, _, k = cw_step(variant, label * margin, V, phi, C)
        if alpha > 0.0:
            scale = alpha * label
            for p in range(start, end):
                xj = np.float64(data[p])
                j = indices[p]
                if xj != 0.0:
                    w[j] += scale * sigma[j] * xj
                    sigma[j] = 1.0 / (1.0 / sigma[j] + k * xj * xj)
            if biased:
                intercept[0] += scale * sigma[d] * c
                sigma[d] = 1.0 / (1.0 / sigma[d] + k * c * c)
            updates += 1
            clipped += uncovered(variant, label * margin, V, alpha, k, C)
    return mistakes, updates, clipped


class ConfidenceWeighted(MatrixClassifier):
    """CW, SCW-I or SCW-II: a Gaussian over weights, μ moved by α·y·Σx, Σ shrunk along x.

    Parameters
    ----------
    variant : {"cw", "scw1", "scw2"}
        The step rule (module docstring).
    eta : float in (0.5, 1)
        The confidence η; φ = Φ⁻¹(η).
    C : float > 0
        SCW's aggressiveness (unused by CW, still checked).
    diagonal : bool
        A diagonal Σ (O(nnz) a row).
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
    phi_ : φ = Φ⁻¹(η)
    bias_feature_ : the constant feature (1 or 0)
    clipped_steps_ : int, the updates the variant's derived bound excludes (SCW-I: α capped at
        C; SCW-II: α + k·y μ_{t+1}·x < 0); the bound needs none
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "confidence_weighted"

    def __init__(
        self,
        variant: str = "scw1",
        eta: float = 0.9,
        C: float = 1.0,
        diagonal: bool = False,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.variant = variant
        self.eta = eta
        self.C = C
        self.diagonal = diagonal
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("variant", self.variant, CW_VARIANTS)
        check_number("eta", self.eta, low=0.5, high=1, low_open=True, high_open=True)
        check_number("C", self.C, low=0, low_open=True)
        self._check_matrix_options()

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        side = self._init_linear(X, coef_init, intercept_init)
        self.phi_ = float(norm.ppf(float(self.eta)))
        self.factor_ = self.diagonal_ = None
        if self.diagonal:
            self.diagonal_ = np.ones(side)
            return
        self.factor_ = np.eye(side)

    @property
    def covariance_(self) -> np.ndarray | None:
        """Σ = GᵀG from the square root kept (``factor_``); None for the diagonal variant."""
        return factor_product(getattr(self, "factor_", None))

    def _reset_record(self) -> None:
        super()._reset_record()
        self.clipped_steps_ = 0

    def _run_pass(self, X, y, order):
        rows, steps = self._mistake_buffers(order.shape[0])
        rule = (_VARIANT_CODE[self.variant], self.phi_, float(self.C), self.bias_feature_)
        w, b = self.coef_[0], self.intercept_
        X, layout = pass_layout(X)
        csr = layout is not None
        if self.diagonal:
            if csr:
                mistakes, updates, clipped = cw_diagonal_pass_csr(
                    *layout, y, order, w, b, self.diagonal_, *rule, rows, steps
                )
            else:
                mistakes, updates, clipped = cw_diagonal_pass_dense(
                    X, y, order, w, b, self.diagonal_, *rule, rows, steps
                )
        else:
            side = self.factor_.shape[0]
            scratch = (np.empty(side), np.empty(side))
            state = (w, b, self.factor_, *rule, *scratch, rows, steps)
            if csr:
                mistakes, updates, clipped = cw_pass_csr(*layout, y, order, *state)
            else:
                mistakes, updates, clipped = cw_pass_dense(X, y, order, *state)
        self.clipped_steps_ += int(clipped)
        return int(mistakes), int(updates), rows[:mistakes], steps[:mistakes]


__all__ = [
    "CW_BIAS_MODES",
    "CW_VARIANTS",
    "SLACK",
    "ConfidenceWeighted",
    "cw_diagonal_pass_csr",
    "cw_diagonal_pass_dense",
    "cw_pass_csr",
    "cw_pass_dense",
    "cw_step",
    "uncovered",
]
