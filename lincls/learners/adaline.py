"""Adaline, the Widrow–Hoff LMS rule (seed 002, eqs. 6–7): w += α_t (y − (w·x + b)) x.

Seed 002 derives it as stochastic gradient descent on the squared error (w·x − y)² of one
example at a time, the factor 2 absorbed into α: the perceptron's step with the activation in
place of its sign. It steps on *every* example (a correct one with |w·x + b| ≠ 1 moves too), and
with a small α it approaches the least-squares solution of seed 002's eq. 1.

The online record is the other learners': a mistake is y·(w·x + b) ≤ 0 *before* the step (sign
wrong or zero activation), an update a step that changed the weights (y ≠ w·x + b). No mistake
bound covers the rule: its steps follow the squared error, not the mistakes.

Schedules (``lincls.learners._schedules``), t the 1-based global step (examples presented so far
over all passes) and p the 0-based pass: ``"constant"`` α_t = α₀, ``"inverse"`` α₀/t,
``"inverse_sqrt"`` α₀/√t, ``"pass_decay"`` α₀·decay^p.

The bias is a constant feature c: b += α_t (y − (w·x + b))·c², c² = ``intercept_decay`` for
``bias="feature"`` (1 by default; scikit-learn damps the bias step by 0.01 on sparse input),
no bias for ``"none"``. The arithmetic is scikit-learn's SGD loop, so with a constant α this is
``SGDClassifier(loss="squared_error", learning_rate="constant", eta0=α, penalty=None,
shuffle=False, tol=None)`` (whose dloss is p − y and step −η·dloss), without its clipping of
|p − y| at 10¹², which only matters once the run has diverged; ``"inverse"`` and
``"inverse_sqrt"`` are its ``learning_rate="invscaling"`` with ``power_t`` 1 and 0.5.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.geometry import max_norm
from lincls.learners._base import OnlineBinaryClassifier, initial_weights
from lincls.learners._kernel_tools import unsigned_indices
from lincls.learners._schedules import check_schedule, pass_schedule, step_size

ADALINE_BIAS_MODES = ("feature", "none")


@njit(cache=True, nogil=True)
def adaline_pass_dense(
    X,
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
    cast,
):
    """One LMS pass over dense ``X[order]``: w += α_t (y − (w·x + b)) x, in place.

    ``schedule`` 0 / 1 / 2: α_t = α₀, α₀/t, α₀/√t with t = ``step0`` + k + 1. Mistakes
    (y·(w·x + b) ≤ 0 before the step) go to ``mistake_rows`` / ``mistake_steps``. Arithmetic as
    scikit-learn's SGD loop: the dot product summed left to right in float64 and rounded to the
    weights' dtype (``cast``, a 1-element array of it) before the bias is added; the step rounded
    to that dtype before it scales x. Returns (mistakes, updates).
    """
    n_features = X.shape[1]
    mistakes = 0
    updates = 0
    for k in range(order.shape[0]):
        i = order[k]
        activation = 0.0
        for j in range(n_features):
            activation += w[j] * X[i, j]
        cast[0] = activation
        activation = cast[0] + intercept[0]
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
        step = step_size(alpha0, schedule, np.float64(step0 + k + 1)) * (y[i] - activation)
        if step != 0.0:
            cast[0] = step
            scale = np.float64(cast[0])
            for j in range(n_features):
                w[j] += np.float64(X[i, j]) * scale
            intercept[0] += step * intercept_step
            updates += 1
    return mistakes, updates


@njit(cache=True, nogil=True)
def adaline_pass_csr(
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
    cast,
):
    """``adaline_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    mistakes = 0
    updates = 0
    for k in range(order.shape[0]):
        i = order[k]
        start = indptr[i]
        end = indptr[i + 1]
        activation = 0.0
        for p in range(start, end):
            activation += w[indices[p]] * data[p]
        cast[0] = activation
        activation = cast[0] + intercept[0]
        if y[i] * activation <= 0.0:
            mistake_rows[mistakes] = i
            mistake_steps[mistakes] = k
            mistakes += 1
        step = step_size(alpha0, schedule, np.float64(step0 + k + 1)) * (y[i] - activation)
        if step != 0.0:
            cast[0] = step
            scale = np.float64(cast[0])
            for p in range(start, end):
                w[indices[p]] += np.float64(data[p]) * scale
            intercept[0] += step * intercept_step
            updates += 1
    return mistakes, updates


class Adaline(OnlineBinaryClassifier):
    """Widrow–Hoff LMS: on every example, w += α_t (y − (w·x + b)) x and b likewise.

    Parameters
    ----------
    lr : float > 0
        α₀. With a constant α, LMS is stable when α·(‖x‖² + c²) < 2 for the examples seen; a
        larger α makes the weights overflow, which ``fit`` reports as an error naming ``lr``.
    schedule : {"constant", "inverse", "inverse_sqrt", "pass_decay"}
        How α_t decays (module docstring).
    decay : float in (0, 1]
        The factor per pass of ``"pass_decay"`` (unused by the other schedules).
    bias : {"feature", "none"}
        A constant feature (b += α_t·(y − p)·``intercept_decay``) or no bias.
    max_passes : int ≥ 1
    stop_when_converged : bool
        Stop after a pass in which no step changed the weights (every y = w·x + b exactly).
    shuffle : bool
    random_state : int, RandomState or None
    intercept_decay : float > 0
        Scales the bias step (0.01 reproduces scikit-learn on sparse input).

    Attributes
    ----------
    coef_ : ndarray (1, n_features), dtype of X
    intercept_ : ndarray (1,), float64
    classes_ : the two labels; ``classes_[1]`` is the +1 class
    bias_feature_ : the constant feature the bias rule amounts to (√decay or 0)
    zero_init_ : whether the run started from w = 0, b = 0
    mistakes_, updates_, mistakes_per_pass_, mistake_steps_, mistake_indices_, n_passes_,
    converged_, n_steps_ : the online record (``lincls.learners._base``)
    """

    bound_family = None
    no_bound_reason = (
        "Widrow–Hoff LMS steps on every example by its squared error, not on mistakes: "
        "no mistake bound covers it"
    )

    def __init__(
        self,
        lr: float = 0.01,
        schedule: str = "constant",
        decay: float = 0.5,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = False,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        self.lr = lr
        self.schedule = schedule
        self.decay = decay
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state
        self.intercept_decay = intercept_decay

    def _check_params(self) -> None:
        super()._check_params()
        check_number("lr", self.lr, low=0, low_open=True)
        check_schedule(self.schedule, self.decay)
        check_choice("bias", self.bias, ADALINE_BIAS_MODES)
        check_number("intercept_decay", self.intercept_decay, low=0, low_open=True)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self.coef_, self.intercept_ = initial_weights(X, coef_init, intercept_init)
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        self._intercept_step = 0.0 if self.bias == "none" else float(self.intercept_decay)
        self.bias_feature_ = float(np.sqrt(self._intercept_step))

    def _run_pass(self, X, y, order):
        rows, steps = self._mistake_buffers(order.shape[0])
        alpha0, code = pass_schedule(self.lr, self.schedule, self.decay, len(self._pass_mistakes))
        step0 = int(self.n_steps_)
        w, b = self.coef_[0], self.intercept_
        cast = np.zeros(1, dtype=w.dtype)
        if sp.issparse(X):
            mistakes, updates = adaline_pass_csr(
                X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr), y, order, w, b,
                alpha0, code, step0, self._intercept_step, rows, steps, cast,
            )  # fmt: skip
        else:
            mistakes, updates = adaline_pass_dense(
                X, y, order, w, b, alpha0, code, step0, self._intercept_step, rows, steps, cast
            )
        if not (np.isfinite(w).all() and np.isfinite(b[0])):
            pass_number = len(self._pass_mistakes) + 1
            sq_radius = max_norm(X) ** 2 + self._intercept_step
            raise LinclsInputError(
                "lr",
                f"the weights overflowed in pass {pass_number} with lr = {self.lr:g}; LMS is "
                f"stable when lr·(‖x‖² + c²) < 2 for every example, here lr < "
                f"{2.0 / sq_radius:.3g} (max ‖x‖² + c² = {sq_radius:.3g})",
            )
        mistakes = int(mistakes)
        return mistakes, int(updates), rows[:mistakes], steps[:mistakes]


__all__ = [
    "ADALINE_BIAS_MODES",
    "Adaline",
    "adaline_pass_csr",
    "adaline_pass_dense",
]
