"""The bound registry: which theorems apply to a run, and their values.

Each theorem module (``perceptron``, ...) appends ``BoundSpec`` entries to ``REGISTRY``; a spec's
``check`` says why its theorem does not apply to a run (None when it does).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from lincls.geometry import Certificate

RELATIVE_TOLERANCE = 1e-9


def holds(mistakes: float, bound: float) -> bool:
    """Whether ``mistakes`` ≤ ``bound`` up to the relative tolerance of floating point."""
    return mistakes <= bound * (1.0 + RELATIVE_TOLERANCE)


@dataclass(frozen=True)
class RunFacts:
    """What a bound may read about a finished run: the learner, its data's radius, a certificate.

    ``radius`` is the largest norm among the examples presented to the learner.
    """

    learner: object
    radius: float
    certificate: Certificate | None


@dataclass(frozen=True)
class BoundSpec:
    """A theorem: ``check`` says why it does not apply (None if it does), ``value`` computes it."""

    name: str
    check: Callable[[RunFacts], str | None]
    value: Callable[[RunFacts], float]


REGISTRY: list[BoundSpec] = []


@dataclass(frozen=True)
class Evaluation:
    """The bounds that apply to a run, and why each other one does not."""

    values: dict[str, float]
    skipped: dict[str, str]

    @property
    def tightest(self) -> tuple[str, float] | None:
        """The smallest applicable bound, as (name, value)."""
        if not self.values:
            return None
        name = min(self.values, key=self.values.__getitem__)
        return name, self.values[name]


def evaluate(facts: RunFacts) -> Evaluation:
    """Every registered bound that applies to ``facts``."""
    values: dict[str, float] = {}
    skipped: dict[str, str] = {}
    for spec in REGISTRY:
        reason = spec.check(facts)
        if reason is None:
            value = float(spec.value(facts))
            if math.isfinite(value):
                values[spec.name] = value
            else:
                skipped[spec.name] = "the bound is infinite"
        else:
            skipped[spec.name] = reason
    return Evaluation(values, skipped)
