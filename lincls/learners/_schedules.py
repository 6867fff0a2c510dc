"""Step-size schedules α_t, shared by Adaline, LearningRatePerceptron and BatchPerceptron.

t is the 1-based step of the schedule's clock over all passes (examples presented for the online
rules, batches for the batch perceptron) and p the 0-based pass:

- ``"constant"``: α_t = α₀;
- ``"inverse"``: α_t = α₀/t (the O(1/t) decay seed 002 mentions);
- ``"inverse_sqrt"``: α_t = α₀/√t;
- ``"pass_decay"``: α_t = α₀·decay^p, constant within a pass.

A learner works out its pass's α₀ and the schedule's code once a pass (``pass_schedule``: decay^p
is folded into α₀ there, so within the pass ``"pass_decay"`` is constant); its kernel then calls
``step_size`` for each α_t.
"""

from __future__ import annotations

import math

from numba import njit

from lincls.errors import check_choice, check_number

SCHEDULES = ("constant", "inverse", "inverse_sqrt", "pass_decay")
# the kernels' codes: 0 constant (pass_decay is constant within a pass), 1 α₀/t, 2 α₀/√t
SCHEDULE_CODES = {"constant": 0, "inverse": 1, "inverse_sqrt": 2, "pass_decay": 0}


@njit(cache=True, nogil=True)
def step_size(alpha0, schedule, t):
    """α_t for the code ``schedule`` (0: α₀, 1: α₀/t, 2: α₀/√t), t ≥ 1 the float64 step."""
    if schedule == 1:
        return alpha0 / t
    if schedule == 2:
        return alpha0 / math.sqrt(t)
    return alpha0


def check_schedule(schedule: str, decay: float) -> None:
    """One-line errors for an unknown schedule or a decay outside (0, 1]."""
    check_choice("schedule", schedule, SCHEDULES)
    check_number("decay", decay, low=0, high=1, low_open=True)


def pass_schedule(lr: float, schedule: str, decay: float, pass_index: int) -> tuple[float, int]:
    """(α₀ of the pass ``pass_index`` (0-based), the code ``step_size`` takes) for a schedule."""
    alpha0 = float(lr)
    if schedule == "pass_decay":
        alpha0 *= float(decay) ** pass_index
    return alpha0, SCHEDULE_CODES[schedule]


__all__ = ["SCHEDULES", "SCHEDULE_CODES", "check_schedule", "pass_schedule", "step_size"]
