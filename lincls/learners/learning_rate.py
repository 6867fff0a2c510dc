"""The perceptron with a learning rate (seed 002, eqs. 2–5): w += α_t (y − sgn(w·x)) x.

Tie rule: a zero activation counts as the wrong sign, as everywhere in lincls, so every mistake
(y·(w·x + b) ≤ 0) takes the step 2α_t·y·x and a correct example none. From w = 0 with a constant
α the weights are then exactly 2α times the perceptron's, with the same mistakes (with sgn(0) = 0
the first step would be half as long and the runs would differ). A decaying α changes the
mistakes, and Novikoff's bound no longer covers them.

Schedules (``lincls.learners._schedules``), t the 1-based global step (examples presented so far,
over all passes) and p the 0-based pass: ``"constant"`` α_t = α₀, ``"inverse"`` α₀/t,
``"inverse_sqrt"`` α₀/√t, ``"pass_decay"`` α₀·decay^p.

The bias is a constant feature, with ``Perceptron``'s rules: b += 2α_t·y·c².
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.learners._schedules import check_schedule, pass_schedule, step_size
from lincls.learners.perceptron import Perceptron


@njit(cache=True, nogil=True)
def lr_pass_dense(
    X, y, order, w, intercept, alpha0, schedule, step0, intercept_step, mistake_rows, mistake_steps
):
    """One pass over dense ``X[order]``: on y·(w·x + b) ≤ 0, w += 2α_t·y·x, in place.

    ``schedule`` 0 / 1 / 2: α_t = α₀, α₀/t, α₀/√t with t = ``step0`` + k + 1. Returns mistakes
    (= updates).
    """
    n_features = X.shape[1]
    mistakes = 0
    for k in range(order.shape[0]):
        i = order[k]
        activation = 0.0
        for j in range(n_features):
            activation += w[j] * X[i, j]
        activation += intercept[0]
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
            # α(y − sgn(a)) with sgn(a) = −y: the factor is exactly 2y.
            step = 2.0 * step_size(alpha0, schedule, np.float64(step0 + k + 1)) * y[i]
            for j in range(n_features):
                w[j] += np.float64(X[i, j]) * step
            intercept[0] += step * intercept_step
    return mistakes


@njit(cache=True, nogil=True)
def lr_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    w,
    intercept,
    alpha0,
    schedule,
    step0,
    intercept_step,
    mistake_rows,
    mistake_steps,
):
    """``lr_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    mistakes = 0
    for k in range(order.shape[0]):
        i = order[k]
        start = indptr[i]
        end = indptr[i + 1]
        activation = 0.0
        for p in range(start, end):
            activation += w[indices[p]] * data[p]
        activation += intercept[0]
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
            step = 2.0 * step_size(alpha0, schedule, np.float64(step0 + k + 1)) * y[i]
            for p in range(start, end):
                w[indices[p]] += np.float64(data[p]) * step
            intercept[0] += step * intercept_step
    return mistakes


class LearningRatePerceptron(Perceptron):
    """Seed 002's perceptron rule w += α_t (y − sgn(w·x)) x, with a step-size schedule.

    Parameters
    ----------
    lr : float > 0
        α₀, the initial learning rate (the step on a mistake is 2α_t).
    schedule : {"constant", "inverse", "inverse_sqrt", "pass_decay"}
        How α_t decays (module docstring).
    decay : float in (0, 1]
        The factor per pass of ``"pass_decay"`` (unused by the other schedules).
    bias, max_passes, stop_when_converged, shuffle, random_state, intercept_decay :
        as ``Perceptron``'s.

    Attributes are ``Perceptron``'s (weights float64). With ``schedule="constant"`` the mistakes
    are the perceptron's, so the perceptron bounds apply (``bound_family``); with a decaying
    schedule no mistake bound is claimed.
    """

    def __init__(
        self,
        lr: float = 1.0,
        schedule: str = "constant",
        decay: float = 0.5,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        self.schedule = schedule
        self.decay = decay
        super().__init__(
            lr=lr,
            bias=bias,
            max_passes=max_passes,
            stop_when_converged=stop_when_converged,
            shuffle=shuffle,
            random_state=random_state,
            intercept_decay=intercept_decay,
        )

    @property
    def bound_family(self) -> str | None:
        """The perceptron bounds apply with a constant rate (the weights only scale); else none."""
        return "perceptron" if self.schedule == "constant" else None

    def _check_params(self) -> None:
        super()._check_params()
        check_schedule(self.schedule, self.decay)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        super()._init_weights(X, coef_init, intercept_init)
        self.coef_ = self.coef_.astype(np.float64)

    def _run_pass(self, X, y, order):
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        alpha0, code = pass_schedule(self.lr, self.schedule, self.decay, len(self._pass_mistakes))
        step0 = int(self.n_steps_)
        w, b = self.coef_[0], self.intercept_
        if sp.issparse(X):
            mistakes = lr_pass_csr(
                X.data, X.indices, X.indptr, y, order, w, b,
                alpha0, code, step0, self._intercept_step, rows, steps,
            )  # fmt: skip
        else:
            mistakes = lr_pass_dense(
                X, y, order, w, b, alpha0, code, step0, self._intercept_step, rows, steps
            )
        mistakes = int(mistakes)
        return mistakes, mistakes, rows[:mistakes], steps[:mistakes]
