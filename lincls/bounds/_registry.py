"""The bound registry: which theorems apply to a run, and their values.

Each theorem module (``perceptron``, ...) appends ``BoundSpec`` entries to ``REGISTRY``; a spec's
``check`` says why its theorem does not apply to a run (None when it does). A run may have several
certificates (the generator's separator, a maximum-margin SVM, a soft-margin SVM): every theorem
holds for each of them, so ``evaluate`` reports the smallest value over the certificates that
apply and names the certificate it came from. A learner that no theorem covers in its
configuration says why in ``no_bound_reason`` (a string, or None when bounds may apply); every
spec is then skipped with that reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from lincls.geometry import Certificate

RELATIVE_TOLERANCE = 1e-9

MISTAKES = "mistakes"
BEST = "best"
TEST_ERROR = "test_error"


def holds(mistakes: float, bound: float) -> bool:
    """Whether ``mistakes`` ≤ ``bound`` up to the relative tolerance of floating point."""
    return mistakes <= bound * (1.0 + RELATIVE_TOLERANCE)


@dataclass(frozen=True)
class RunFacts:
    """What a bound may read about a finished run: the learner, its data's radius, certificates.

    ``radius`` is (an upper bound on) the largest norm among the examples presented to the
    learner. ``certificate`` is the one a bound is evaluated with; ``certificates`` are every one
    known (``evaluate`` tries each). The bounds that look at single examples (Freund–Schapire,
    Mohri–Rostamizadeh) read ``sq_norms`` (‖x_t‖² of every training row) and ``presentations``
    (how often each row was presented, over every pass); without them they do not apply.

    ``X`` and ``y`` (the training rows and labels, as the learner was given them) let a bound
    find its best comparator (``lincls.bounds._best``), cached under ``data_key`` (the dataset's
    fingerprint) in ``cache_dir``; without ``X`` the bounds use the certificates alone.
    """

    learner: object
    radius: float
    certificate: Certificate | None
    certificates: tuple[Certificate, ...] = ()
    sq_norms: np.ndarray | None = field(default=None, repr=False)
    presentations: np.ndarray | None = field(default=None, repr=False)
    n_train: int | None = None
    X: Any = field(default=None, repr=False)
    y: np.ndarray | None = field(default=None, repr=False)
    data_key: str | None = None
    cache_dir: str | None = None


@dataclass(frozen=True)
class BoundValue:
    """A bound's value with what it was computed at (e.g. the γ a grid picked, the deficit D)."""

    value: float
    details: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BoundSpec:
    """A theorem: ``check`` says why it does not apply (None if it does), ``value`` computes it.

    ``kind`` is what it bounds: ``"mistakes"`` (of the online run) or ``"test_error"`` (the
    expected error of the final hypothesis; logged apart, never compared with mistakes).
    ``best``, where the theorem's comparators form a convex set, computes the bound at its best
    comparator (a ``BoundValue`` whose details name its margin, radius and duality gap) or says
    why not; it competes with the certificates under the source name ``BEST``.
    """

    name: str
    check: Callable[[RunFacts], str | None]
    value: Callable[[RunFacts], float | BoundValue]
    kind: str = MISTAKES
    best: Callable[[RunFacts], BoundValue | str] | None = None


REGISTRY: list[BoundSpec] = []


@dataclass(frozen=True)
class Evaluation:
    """The bounds that apply to a run, the certificate each used, and why each other does not.

    ``values`` are mistake bounds; ``test_error`` holds the test-error bounds.
    """

    values: dict[str, float]
    skipped: dict[str, str]
    sources: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, float]] = field(default_factory=dict)
    test_error: dict[str, float] = field(default_factory=dict)

    @property
    def tightest(self) -> tuple[str, float] | None:
        """The smallest applicable mistake bound, as (name, value)."""
        if not self.values:
            return None
        name = min(self.values, key=self.values.__getitem__)
        return name, self.values[name]


def _as_bound_value(result: Any) -> BoundValue:
    if isinstance(result, BoundValue):
        return BoundValue(float(result.value), dict(result.details))
    return BoundValue(float(result))


def evaluate(facts: RunFacts) -> Evaluation:
    """Every registered bound that applies to ``facts``, each at its best certificate."""
    candidates = facts.certificates or (facts.certificate,)
    values: dict[str, float] = {}
    test_error: dict[str, float] = {}
    skipped: dict[str, str] = {}
    sources: dict[str, str] = {}
    details: dict[str, dict[str, float]] = {}
    # A learner may say why no theorem covers it (e.g. Adaline, a mini-batch perceptron).
    excluded = getattr(facts.learner, "no_bound_reason", None)
    trials = [
        (cert, facts if cert is facts.certificate else replace(facts, certificate=cert))
        for cert in candidates
    ]
    for spec in REGISTRY:
        if excluded:
            skipped[spec.name] = excluded
            continue
        best: tuple[BoundValue, str] | None = None
        reason = None
        for cert, trial in trials:
            why = spec.check(trial)
            if why is not None:
                reason = reason or why
                continue
            result = _as_bound_value(spec.value(trial))
            if not math.isfinite(result.value):
                reason = reason or "the bound is infinite"
                continue
            if best is None or result.value < best[0].value:
                best = (result, cert.source if cert is not None else "none")
        if spec.best is not None:
            found = spec.best(facts)
            if isinstance(found, str):
                reason = reason or found
            elif math.isfinite(found.value) and (best is None or holds(found.value, best[0].value)):
                # A certificate that ties it to the solver's rounding is an optimal comparator
                # too: the source is the optimum, the value the smaller of the two (a tight
                # instance keeps its ratio of exactly 1).
                value = found.value if best is None else min(found.value, best[0].value)
                best = (BoundValue(value, found.details), BEST)
        if best is None:
            skipped[spec.name] = reason or "no certificate"
            continue
        target = values if spec.kind == MISTAKES else test_error
        target[spec.name] = best[0].value
        sources[spec.name] = best[1]
        if best[0].details:
            details[spec.name] = best[0].details
    return Evaluation(values, skipped, sources, details, test_error)
