"""The Forgetron's mistake bound (Dekel, Shalev-Shwartz & Singer, "The Forgetron: A Kernel-Based
Perceptron on a Budget", SIAM J. Computing 37(5) (2008), 1342–1372, Theorem 1).

For the self-tuned Forgetron with budget B ≥ 84 (the budget the authors' NIPS 2005 talk states;
the journal form as quoted has B ≥ 83, which 84 also meets) on any sequence with
K(x_t, x_t) ≤ 1, and any g in the kernel's space with ‖g‖ ≤ U = ¼·√((B + 1)/ln(B + 1)):

    M ≤ 2‖g‖² + 4·Σ_{t∈J} ℓ*_t,    ℓ*_t = max(0, 1 − y_t g(x_t)),

J the mistake rounds. The paper's statement was not read (only its abstract and the talk's
slides, without their formulas): this is the theorem's form as quoted, not proved in lincls and
checked numerically only; its registry status is "not read" (the reference's papers page says
what of the paper was read, and where). Logged as that form states it: the hinge loss summed over
J, each row's loss times the mistakes the learner made on it (its online record,
``mistake_indices_``). The Forgetron steps only on a mistake, so J is every round it counts; a
sum over every presentation would be at least this one, a weaker number.

The comparator: the certificate's unit u (through the origin: the learner has no bias feature,
which would make K'(x, x) > 1) scaled to g = s·u, s ∈ (0, U], the linear kernel only (u is a
function of its space, ‖g‖ = s); s is the best of 200 evenly spaced values in (0, U] and 1/γ
(where γ > 0 is the certificate's margin and 1/γ ≤ U: every ℓ*_t = 0). Every such s gives a
valid bound, so the smallest is one. The bound's infimum over all g with ‖g‖ ≤ U (a convex set)
is not computed.
"""

from __future__ import annotations

import math

import numpy as np

from lincls.bounds._registry import (
    NOT_READ,
    REGISTRY,
    RELATIVE_TOLERANCE,
    BoundSpec,
    BoundValue,
    RunFacts,
    Source,
)
from lincls.bounds.deficit import augmented_geometry

MIN_BUDGET = 84
GRID = 200


def forgetron_norm_cap(budget: int) -> float:
    """U = ¼·√((B + 1)/ln(B + 1)): the largest comparator norm Theorem 1 covers."""
    return 0.25 * math.sqrt((budget + 1) / math.log(budget + 1))


def forgetron_bound(comparator_norm_sq: float, hinge_sum: float) -> float:
    """Dekel, Shalev-Shwartz & Singer (2008), Theorem 1: M ≤ 2‖g‖² + 4·Σ ℓ*_t.

    For B ≥ 84 (the budget of the authors' NIPS 2005 talk), K(x_t, x_t) ≤ 1 for every t,
    ‖g‖ ≤ ¼√((B + 1)/ln(B + 1)), the hinge losses ℓ*_t = max(0, 1 − y_t g(x_t)) summed over the
    mistake rounds (or, weaker, over every round).
    """
    return 2.0 * comparator_norm_sq + 4.0 * hinge_sum


def _applies(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "forgetron":
        return "not a Forgetron"
    if int(learner.budget) < MIN_BUDGET:
        return f"the budget B = {learner.budget} is below the theorem's {MIN_BUDGET}"
    if learner.kernel != "linear":
        return "a certificate gives a comparator in the linear kernel's space only"
    if learner.bias_feature_ != 0.0:
        return "a bias feature makes K(x, x) > 1; the theorem needs K(x, x) ≤ 1"
    # a row generated at radius exactly 1 measures 1 + 2e-16: that is rounding, not data
    if max(facts.radius, learner.kernel_radius_) > 1.0 + RELATIVE_TOLERANCE:
        return "the data's radius exceeds 1; the theorem needs K(x, x) ≤ 1"
    if getattr(learner, "mistake_indices_", None) is None:
        return "the learner's mistake rounds are unknown"
    geometry = augmented_geometry(facts)
    return geometry if isinstance(geometry, str) else None


def _value(facts: RunFacts) -> BoundValue:
    margins, _ = augmented_geometry(facts)
    cap = forgetron_norm_cap(int(facts.learner.budget))
    scales = np.linspace(0.0, cap, GRID + 1)[1:]
    if margins.shape[0] and margins.min() > 0.0 and 1.0 / margins.min() <= cap:
        scales = np.r_[scales, 1.0 / margins.min()]
    # Σ_{t∈J} ℓ*_t: each row's loss as often as the learner erred on it
    erred = np.bincount(facts.learner.mistake_indices_, minlength=margins.shape[0])
    losses = np.maximum(1.0 - scales[:, None] * margins[None, :], 0.0) @ erred.astype(np.float64)
    values = 2.0 * scales**2 + 4.0 * losses
    best = int(np.argmin(values))
    value = forgetron_bound(float(scales[best] ** 2), float(losses[best]))
    return BoundValue(value, {"comparator_norm": float(scales[best]), "norm_cap": cap})


REGISTRY.append(
    BoundSpec(
        "forgetron",
        _applies,
        _value,
        sequence=True,
        source=Source(
            NOT_READ,
            "the form of Dekel, Shalev-Shwartz & Singer 2008 (SICOMP 37) Thm 1, not proved in "
            "lincls; not read (its public copies at hand"
            " show only the abstract and opening: reference, papers)",
        ),
    )
)
