"""The Randomized Budget Perceptron (Cavallanti, Cesa-Bianchi & Gentile 2007).

Cavallanti, Cesa-Bianchi & Gentile, "Tracking the best hyperplane with a simple budget
Perceptron", Machine Learning 69 (2007), 143–167. The kernel perceptron with at most B support
vectors: on a mistake (y_t f(x_t) ≤ 0) the example joins the support set with α = y_t; when the
set already holds B vectors, one of them, drawn uniformly at random, is discarded first (its
slot takes the new vector). f(x) = Σ_{s∈S} α_s K'(x_s, x), K' the kernel with its bias feature
(``lincls.learners._budget``).

The draws are seeded by ``random_state`` (the run's seed): each pass draws n slot indices
uniformly from {0, …, B − 1} with ``numpy.random.default_rng`` (one per example presented, used
only where a full set takes a mistake), from one generator made at the first fit, so the same
seed gives the same run bit for bit. Each example presented costs O(B·d).

No mistake bound is logged per run (``no_bound_reason``): the paper bounds the *expected*
mistakes over the discards (against a shifting comparator), which a single run may exceed. A
bound on E[M] for a fixed comparator, derived by the same argument (the paper's statement could
not be checked against its text), is ``lincls.bounds.budget_perceptron.rbp_expected_bound``; it is
held against the mean over seeds of runs on one sequence (``tests/test_budget_perceptron_bound.py``:
0 violations over 10,000 instances).
"""

from __future__ import annotations

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


@njit(cache=True, nogil=True)
def _rbp_step(t, k, y, f, size, budget, draws, coef, mistake_rows, mistake_steps, mistakes):
    """The slot a mistake's vector goes to (−1: no mistake); records the mistake."""
    if y[t] * f > 0.0:
        return -1
    mistake_rows[mistakes] = t
    mistake_steps[mistakes] = k
    if size[0] < budget:
        slot = size[0]
        size[0] += 1
    else:
        slot = draws[k]
    coef[slot] = y[t]
    return slot


@njit(cache=True, nogil=True)
def rbp_pass_dense(
    X, sq, y, order, sv, sv_sq, coef, size, kind, degree, gamma, bias_sq, draws, row,
    mistake_rows, mistake_steps, sizes,
):  # fmt: skip
    """One pass of the Randomized Budget Perceptron over dense ``X[order]``; returns the mistakes.

    ``sv``/``sv_sq``/``coef`` hold the support set in their first ``size[0]`` rows (capacity
    B = ``sv.shape[0]``); ``draws[k]`` is the slot discarded if step k is a mistake on a full
    set; ``sizes[k]`` gets |S| after step k.
    """
    mistakes = 0
    budget = sv.shape[0]
    for k in range(order.shape[0]):
        t = order[k]
        dense_support_row(X, sq, t, sv, sv_sq, size[0], kind, degree, gamma, bias_sq, row)
        f = 0.0
        for s in range(size[0]):
            f += coef[s] * row[s]
        slot = _rbp_step(t, k, y, f, size, budget, draws, coef, mistake_rows, mistake_steps,
                         mistakes)  # fmt: skip
        if slot >= 0:
            mistakes += 1
            store_dense(X, sq, t, sv, sv_sq, slot)
        sizes[k] = size[0]
    return mistakes


@njit(cache=True, nogil=True)
def rbp_pass_csr(
    data, indices, indptr, sq, y, order, sv, sv_sq, coef, size, kind, degree, gamma, bias_sq,
    draws, row, mistake_rows, mistake_steps, sizes,
):  # fmt: skip
    """``rbp_pass_dense`` for CSR rows (sorted indices): the same numbers bit for bit."""
    mistakes = 0
    budget = sv.shape[0]
    for k in range(order.shape[0]):
        t = order[k]
        csr_support_row(data, indices, indptr, sq, t, sv, sv_sq, size[0], kind, degree, gamma,
                        bias_sq, row)  # fmt: skip
        f = 0.0
        for s in range(size[0]):
            f += coef[s] * row[s]
        slot = _rbp_step(t, k, y, f, size, budget, draws, coef, mistake_rows, mistake_steps,
                         mistakes)  # fmt: skip
        if slot >= 0:
            mistakes += 1
            store_csr(data, indices, indptr, sq, t, sv, sv_sq, slot)
        sizes[k] = size[0]
    return mistakes


def draw_generator(random_state) -> np.random.Generator:
    """The generator of the discards: seeded by an int ``random_state``, by a draw from a
    ``RandomState``, or fresh (None)."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(int(random_state.randint(0, 2**31 - 1)))
    return np.random.default_rng(int(random_state))


class BudgetPerceptron(BudgetKernelClassifier):
    """The Randomized Budget Perceptron: the kernel perceptron with at most ``budget`` vectors.

    Parameters
    ----------
    budget : int ≥ 1
        B, the most support vectors kept.
    kernel, degree, gamma, bias : as ``KernelPerceptron``'s (the bias a feature of each vector)
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s;
        ``random_state`` also seeds the discards (module docstring).

    Attributes
    ----------
    support_vectors_ : ndarray (n_support, n_features), float64
    dual_coef_ : ndarray (n_support,), α_s = y_s
    intercept_ : ndarray (1,), c²·Σ α_s (the bias feature's weight times c)
    n_support_ : |S|
    support_size_ : ndarray (n_steps_,), |S| after each example presented
    kernel_radius_, bias_feature_, zero_init_ : as ``KernelPerceptron``'s
    mistakes_, updates_, ... : the online record (``lincls.learners._base``); updates = mistakes
    """

    bound_family = "budget_perceptron"
    no_bound_reason = (
        "the Randomized Budget Perceptron's bound is on expected mistakes over its random "
        "discards, compared with a mean over seeds (lincls.bounds.budget_perceptron), not with "
        "one run"
    )

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
        if reset:  # the support set is allocated whole (budget rows) when the fit starts
            features = X.shape[1]
            check_fits("budget", self.budget, each=8 * (features + 3), extra=0,
                       what=f"a support vector of {features} features (with its norm, "
                       "coefficient and kernel value)")  # fmt: skip
        return X, y

    def _capacity(self, X) -> int:
        self._draws = draw_generator(self.random_state)
        return int(self.budget)

    def _run_pass(self, X, y, order):
        sq = self._prepare_pass(X)
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        draws = self._draws.integers(0, int(self.budget), size=n, dtype=np.int64)
        sizes = np.empty(n, dtype=np.int64)
        row = np.empty(self._sv.shape[0])
        state = (self._sv, self._sv_sq, self._coef, self._size, *self._codes(), self._bias_sq)
        if sp.issparse(X):
            mistakes = rbp_pass_csr(
                *csr_arrays(X), sq, y, order, *state, draws, row, rows, steps, sizes
            )
        else:
            mistakes = rbp_pass_dense(X, sq, y, order, *state, draws, row, rows, steps, sizes)
        self._size_parts.append(sizes)
        return int(mistakes), int(mistakes), rows[:mistakes], steps[:mistakes]


__all__ = ["BudgetPerceptron", "draw_generator", "rbp_pass_csr", "rbp_pass_dense"]
