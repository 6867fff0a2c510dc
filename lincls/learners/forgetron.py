"""The Forgetron (Dekel, Shalev-Shwartz & Singer 2008), its self-tuned variant.

Dekel, Shalev-Shwartz & Singer, "The Forgetron: A Kernel-Based Perceptron on a Budget", SIAM J.
Computing 37(5) (2008), 1342–1372. f(x) = Σ_{i∈I} σ_i y_i K'(x_i, x) over at most B examples,
K' the kernel with its bias feature (``lincls.learners._budget``). On a mistake
(y_t f(x_t) ≤ 0; M counts them, this one included):

1. x_t joins I with σ_t = 1: f' = f + y_t K'(x_t, ·);
2. if |I| > B, the oldest example r of I is forgotten after a shrink of all of f' by
   φ_t = max{φ ∈ (0, 1] : Ψ(φσ_r, φμ_t) + Q ≤ (15/32)·M}, with μ_t = y_r f'(x_r),
   Ψ(λ, μ) = λ² + 2λ − 2λμ and Q the damage so far; then Q += Ψ(φ_tσ_r, φ_tμ_t), every σ_i is
   multiplied by φ_t and r leaves I.

Ψ(φσ, φμ) + Q − (15/32)M is a quadratic aφ² + bφ + c (a = σ² − 2σμ, b = 2σ, c = Q − 15M/32,
which is < 0 at every removal); where it is positive at φ = 1, φ_t is its root
−2c/(b + √(b² − 4ac)) in (0, 1) (the form without cancellation). The support set never holds
more than B examples between rounds. Each example presented costs O(B·d), a removal O(B·d)
more (the forgotten vector's kernel row, the shift of the set).

Mistake bound: ``lincls.bounds.forgetron`` (Theorem 1 of the paper).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import check_fits, check_number
from lincls.learners._budget import (
    BudgetKernelClassifier,
    csr_arrays,
    csr_support_row,
    dense_support_row,
    store_csr,
    store_dense,
)

SHARE = 15.0 / 32.0  # of the mistakes, the damage the self-tuned shrink may accumulate


@njit(cache=True, nogil=True)
def shrink_factor(sigma, mu, damage, mistakes):
    """φ_t = max{φ ∈ (0, 1] : Ψ(φσ, φμ) + Q ≤ (15/32)M} (module docstring)."""
    a = sigma * sigma - 2.0 * sigma * mu
    b = 2.0 * sigma
    c = damage - SHARE * mistakes
    if a + b + c <= 0.0:
        return 1.0
    disc = b * b - 4.0 * a * c
    if disc < 0.0:  # rounding only: there is a root in (0, 1) when c < 0 < a + b + c
        disc = 0.0
    return min(1.0, -2.0 * c / (b + math.sqrt(disc)))


@njit(cache=True, nogil=True)
def _forget_oldest(sv, sv_sq, coef, size, kind, degree, gamma, bias_sq, row, state):
    """Shrink by φ_t and drop slot 0 (the oldest); ``state`` = [Q, M]."""
    m = size[0]
    dense_support_row(sv, sv_sq, 0, sv, sv_sq, m, kind, degree, gamma, bias_sq, row)
    fp = 0.0
    for s in range(m):
        fp += coef[s] * row[s]
    sigma = abs(coef[0])
    label = 1.0 if coef[0] > 0.0 else -1.0
    mu = label * fp
    phi = shrink_factor(sigma, mu, state[0], state[1])
    lam = phi * sigma
    state[0] += lam * lam + 2.0 * lam - 2.0 * lam * (phi * mu)
    for s in range(1, m):
        coef[s - 1] = phi * coef[s]
        sv_sq[s - 1] = sv_sq[s]
        for j in range(sv.shape[1]):
            sv[s - 1, j] = sv[s, j]
    size[0] = m - 1


@njit(cache=True, nogil=True)
def forgetron_pass_dense(
    X, sq, y, order, sv, sv_sq, coef, size, kind, degree, gamma, bias_sq, state, row,
    mistake_rows, mistake_steps, sizes,
):  # fmt: skip
    """One Forgetron pass over dense ``X[order]``; the set in slots 0… oldest first, capacity
    B + 1 (``sv.shape[0]``). Returns the mistakes."""
    mistakes = 0
    budget = sv.shape[0] - 1
    for k in range(order.shape[0]):
        t = order[k]
        m = size[0]
        dense_support_row(X, sq, t, sv, sv_sq, m, kind, degree, gamma, bias_sq, row)
        f = 0.0
        for s in range(m):
            f += coef[s] * row[s]
        if y[t] * f <= 0.0:
            mistake_rows[mistakes] = t
            mistake_steps[mistakes] = k
            mistakes += 1
            state[1] += 1.0
            store_dense(X, sq, t, sv, sv_sq, m)
            coef[m] = y[t]
            size[0] = m + 1
            if m + 1 > budget:
                _forget_oldest(sv, sv_sq, coef, size, kind, degree, gamma, bias_sq, row, state)
        sizes[k] = size[0]
    return mistakes


@njit(cache=True, nogil=True)
def forgetron_pass_csr(
    data, indices, indptr, sq, y, order, sv, sv_sq, coef, size, kind, degree, gamma, bias_sq,
    state, row, mistake_rows, mistake_steps, sizes,
):  # fmt: skip
    """``forgetron_pass_dense`` for CSR rows (sorted indices): the same numbers bit for bit."""
    mistakes = 0
    budget = sv.shape[0] - 1
    for k in range(order.shape[0]):
        t = order[k]
        m = size[0]
        csr_support_row(data, indices, indptr, sq, t, sv, sv_sq, m, kind, degree, gamma,
                        bias_sq, row)  # fmt: skip
        f = 0.0
        for s in range(m):
            f += coef[s] * row[s]
        if y[t] * f <= 0.0:
            mistake_rows[mistakes] = t
            mistake_steps[mistakes] = k
            mistakes += 1
            state[1] += 1.0
            store_csr(data, indices, indptr, sq, t, sv, sv_sq, m)
            coef[m] = y[t]
            size[0] = m + 1
            if m + 1 > budget:
                _forget_oldest(sv, sv_sq, coef, size, kind, degree, gamma, bias_sq, row, state)
        sizes[k] = size[0]
    return mistakes


class Forgetron(BudgetKernelClassifier):
    """The self-tuned Forgetron: the kernel perceptron on a budget of B examples, forgetting the
    oldest after a shrink.

    Parameters
    ----------
    budget : int ≥ 1
        B, the most examples kept (the bound needs B ≥ 84).
    kernel, degree, gamma, bias : as ``KernelPerceptron``'s (the bias a feature of each vector)
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s

    Attributes
    ----------
    support_vectors_, dual_coef_ (σ_i y_i, oldest first), intercept_, n_support_,
    support_size_ : as ``BudgetPerceptron``'s
    damage_ : Q, the accumulated damage of the removals (≤ 15/32 of the mistakes)
    kernel_radius_, bias_feature_, zero_init_ : as ``KernelPerceptron``'s
    mistakes_, updates_, ... : the online record; updates = mistakes
    """

    bound_family = "forgetron"

    def __init__(
        self,
        budget: int = 100,
        kernel: str = "linear",
        degree: int = 2,
        gamma: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.budget = budget
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("budget", self.budget, low=1, integer=True)

    def _validate_X_y(self, X, y, reset: bool):
        X, y = super()._validate_X_y(X, y, reset)
        if reset:  # the support set is allocated whole (budget + 1 rows) when the fit starts
            features = X.shape[1]
            check_fits("budget", self.budget, each=8 * (features + 3), extra=1,
                       what=f"a support vector of {features} features (with its norm, "
                       "coefficient and kernel value)")  # fmt: skip
        return X, y

    def _capacity(self, X) -> int:
        self._state = np.zeros(2)  # [Q, M]
        return int(self.budget) + 1

    def _publish(self) -> None:
        super()._publish()
        self.damage_ = float(self._state[0])

    def _run_pass(self, X, y, order):
        sq = self._prepare_pass(X)
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        sizes = np.empty(n, dtype=np.int64)
        row = np.empty(self._sv.shape[0])
        state = (self._sv, self._sv_sq, self._coef, self._size, *self._codes(), self._bias_sq,
                 self._state)  # fmt: skip
        if sp.issparse(X):
            mistakes = forgetron_pass_csr(
                *csr_arrays(X), sq, y, order, *state, row, rows, steps, sizes
            )
        else:
            mistakes = forgetron_pass_dense(X, sq, y, order, *state, row, rows, steps, sizes)
        self._size_parts.append(sizes)
        return int(mistakes), int(mistakes), rows[:mistakes], steps[:mistakes]


__all__ = ["SHARE", "Forgetron", "forgetron_pass_csr", "forgetron_pass_dense", "shrink_factor"]
