"""The batch perceptron (seed 002, eqs. 4–5): w += α_t Σ_{m=1..M} (y_m − sgn(w·x_m)) x_m.

Each pass splits the examples (in their order of the pass) into consecutive mini-batches of M =
``batch_size`` (the last one shorter when M does not divide n; ``batch_size=None`` is M = n, the
full-batch rule). Every example of a batch is classified with the weights at the start of the
batch, and then one step adds up the batch's terms. The tie rule is ``LearningRatePerceptron``'s:
a zero activation counts as the wrong sign, so each mistake of the batch (y·(w·x + b) ≤ 0)
contributes 2α_t·y·x and a correct example nothing.

The record: ``mistakes_`` counts the examples classified wrong at the start of their batch
(over all passes); ``mistakes_per_batch_`` splits them by batch; ``updates_`` counts the steps
(batches with at least one mistake). α_t follows the schedules of ``LearningRatePerceptron``
with t the 1-based batch count over all passes (``"pass_decay"``: α₀·decay^pass).

With M = 1 this is seed 002's online rule, ``LearningRatePerceptron`` step for step; with a
constant α it then makes the perceptron's mistakes with weights 2α times the perceptron's, and
the perceptron's bounds apply. With M > 1, or a decaying α, no mistake bound is claimed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import check_number
from lincls.learners._kernel_tools import unsigned_indices
from lincls.learners._schedules import pass_schedule, step_size
from lincls.learners.learning_rate import LearningRatePerceptron


@njit(cache=True, nogil=True)
def batch_pass_dense(
    X,
    y,
    order,
    w,
    intercept,
    alpha0,
    schedule,
    batch0,
    batch_size,
    intercept_step,
    mistake_rows,
    mistake_steps,
    batch_mistakes,
):
    """One pass of mini-batch steps over dense ``X[order]``, updating ``w`` in place.

    Batch q holds positions [qM, (q + 1)M) of ``order``. Its examples are classified with the
    weights at its start (mistakes, y·(w·x + b) ≤ 0, go to ``mistake_rows`` / ``mistake_steps``
    and their count to ``batch_mistakes[q]``); then each mistake adds 2α_t·y·x, α_t from
    ``schedule`` 0 / 1 / 2 (α₀, α₀/t, α₀/√t) with t = ``batch0`` + q + 1. Returns
    (mistakes, updates, batches).
    """
    n = order.shape[0]
    n_features = X.shape[1]
    mistakes = 0
    updates = 0
    batches = 0
    for start in range(0, n, batch_size):
        end = min(start + batch_size, n)
        first = mistakes
        for k in range(start, end):
            i = order[k]
            activation = 0.0
            for j in range(n_features):
                activation += w[j] * X[i, j]
            activation += intercept[0]
            if y[i] * activation <= 0.0:
                mistake_rows[mistakes] = i
                mistake_steps[mistakes] = k
                mistakes += 1
        batch_mistakes[batches] = mistakes - first
        if mistakes > first:
            # α(y − sgn(a)) with sgn(a) = −y: the factor is exactly 2y.
            rate = step_size(alpha0, schedule, np.float64(batch0 + batches + 1))
            for m in range(first, mistakes):
                i = mistake_rows[m]
                step = 2.0 * rate * y[i]
                for j in range(n_features):
                    w[j] += np.float64(X[i, j]) * step
                intercept[0] += step * intercept_step
            updates += 1
        batches += 1
    return mistakes, updates, batches


@njit(cache=True, nogil=True)
def batch_pass_csr(
    data,
    indices,
    indptr,
    y,
    order,
    w,
    intercept,
    alpha0,
    schedule,
    batch0,
    batch_size,
    intercept_step,
    mistake_rows,
    mistake_steps,
    batch_mistakes,
):
    """``batch_pass_dense`` for CSR rows (``data``, ``indices``, ``indptr``)."""
    n = order.shape[0]
    mistakes = 0
    updates = 0
    batches = 0
    for start in range(0, n, batch_size):
        end = min(start + batch_size, n)
        first = mistakes
        for k in range(start, end):
            i = order[k]
            activation = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                activation += w[indices[p]] * data[p]
            activation += intercept[0]
            if y[i] * activation <= 0.0:
                mistake_rows[mistakes] = i
                mistake_steps[mistakes] = k
                mistakes += 1
        batch_mistakes[batches] = mistakes - first
        if mistakes > first:
            rate = step_size(alpha0, schedule, np.float64(batch0 + batches + 1))
            for m in range(first, mistakes):
                i = mistake_rows[m]
                step = 2.0 * rate * y[i]
                for p in range(indptr[i], indptr[i + 1]):
                    w[indices[p]] += np.float64(data[p]) * step
                intercept[0] += step * intercept_step
            updates += 1
        batches += 1
    return mistakes, updates, batches


class BatchPerceptron(LearningRatePerceptron):
    """Seed 002's batch perceptron: one step per mini-batch of M examples (module docstring).

    Parameters
    ----------
    lr : float > 0
        α₀ (each mistake of a batch adds 2α_t·y·x).
    batch_size : int ≥ 1 or None
        M, the examples per step; None (or M ≥ n) takes a whole pass as one batch.
    schedule : {"constant", "inverse", "inverse_sqrt", "pass_decay"}
        How α_t decays, t counting batches (module docstring).
    decay : float in (0, 1]
        The factor per pass of ``"pass_decay"``.
    bias, max_passes, stop_when_converged, shuffle, random_state, intercept_decay :
        as ``Perceptron``'s (``stop_when_converged``: stop after a pass in which no batch held
        a mistake, i.e. every example is classified right by the final weights).

    Attributes
    ----------
    ``LearningRatePerceptron``'s, and
    mistakes_per_batch_ : int64 array, the mistakes of each batch over all passes
    n_batches_ : the batches (steps of α_t's clock) presented over all passes
    """

    def __init__(
        self,
        lr: float = 1.0,
        batch_size: int | None = None,
        schedule: str = "constant",
        decay: float = 0.5,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        self.batch_size = batch_size
        super().__init__(
            lr=lr,
            schedule=schedule,
            decay=decay,
            bias=bias,
            max_passes=max_passes,
            stop_when_converged=stop_when_converged,
            shuffle=shuffle,
            random_state=random_state,
            intercept_decay=intercept_decay,
        )

    @property
    def bound_family(self) -> str | None:
        """The perceptron bounds apply at M = 1 with a constant rate (the perceptron); else none."""
        return "perceptron" if self.no_bound_reason is None else None

    @property
    def no_bound_reason(self) -> str | None:
        """Why no mistake bound covers this configuration (None when the perceptron's do)."""
        if self.batch_size != 1:
            return (
                "a batch perceptron with batch_size M > 1 steps on the sum of a batch's "
                "mistakes: no mistake bound covers it (the perceptron's need M = 1)"
            )
        if self.schedule != "constant":
            return (
                f"a decaying learning rate ({self.schedule}) changes the perceptron's mistakes: "
                "its bounds need a constant rate"
            )
        return None

    def _check_params(self) -> None:
        super()._check_params()
        if self.batch_size is not None:
            check_number("batch_size", self.batch_size, low=1, integer=True)

    def _reset_record(self) -> None:
        super()._reset_record()
        self._batch_record: list[np.ndarray] = []
        self.n_batches_ = 0

    def _resume_record(self) -> None:
        super()._resume_record()
        self._batch_record = [self.mistakes_per_batch_]

    def _finish_record(self) -> None:
        super()._finish_record()
        record = self._batch_record
        self.mistakes_per_batch_ = np.concatenate(record) if record else np.zeros(0, np.int64)
        del self._batch_record

    def _run_pass(self, X, y, order):
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        size = n if self.batch_size is None else min(int(self.batch_size), n)
        size = max(size, 1)
        per_batch = np.zeros(-(-n // size), dtype=np.int64)
        alpha0, code = pass_schedule(self.lr, self.schedule, self.decay, len(self._pass_mistakes))
        batch0 = int(self.n_batches_)
        w, b = self.coef_[0], self.intercept_
        if sp.issparse(X):
            mistakes, updates, batches = batch_pass_csr(
                X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr), y, order, w, b,
                alpha0, code, batch0, size, self._intercept_step, rows, steps, per_batch,
            )  # fmt: skip
        else:
            mistakes, updates, batches = batch_pass_dense(
                X, y, order, w, b, alpha0, code, batch0, size, self._intercept_step,
                rows, steps, per_batch,
            )  # fmt: skip
        self._batch_record.append(per_batch)
        self.n_batches_ += int(batches)
        mistakes = int(mistakes)
        return mistakes, int(updates), rows[:mistakes], steps[:mistakes]


__all__ = ["BatchPerceptron", "batch_pass_csr", "batch_pass_dense"]
