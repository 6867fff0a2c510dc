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
# A priori: a function of the data and a comparator, known before the run. A posteriori: a
# function of the run's own mistakes (e.g. Mohri–Rostamizadeh's sum over the mistake rounds).
A_PRIORI = "a_priori"
A_POSTERIORI = "a_posteriori"
FAMILIES = (A_PRIORI, A_POSTERIORI)

# Where a bound comes from (``Source.status``). Published: a paper's theorem as published, its
# statement read (the citation says where). Derived: proved in lincls for the rule it runs, in the
# bound's docstring or in a seed text the citation names. Not read: stated as a paper's theorem
# whose statement was not read, and not proved in lincls (checked numerically only). Not covered:
# the paper's theorem does not cover what lincls computes (the citation says why).
PUBLISHED = "published"
DERIVED = "derived"
NOT_READ = "not read"
NOT_COVERED = "not covered"
STATUSES = (PUBLISHED, DERIVED, NOT_READ, NOT_COVERED)
CITATION_LENGTH = 240  # one line in a run's tag and in the report's table


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
class Source:
    """Where a bound comes from: a ``status`` of ``STATUSES`` and a one-line ``citation`` (the
    paper, its venue and theorem, and where it was read; or what the derivation follows; or
    why the paper does not cover lincls's rule)."""

    status: str
    citation: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"a bound's source status is one of {STATUSES}, not {self.status!r}")
        text = self.citation
        if not isinstance(text, str) or not text.strip() or "\n" in text or "|" in text:
            # one line without "|": a run's tag, a cell of the report's Markdown table
            raise ValueError("a bound's citation is one non-empty line without '|'")
        if len(text) > CITATION_LENGTH:
            raise ValueError(f"a bound's citation is at most {CITATION_LENGTH} characters")

    def __str__(self) -> str:
        return f"{self.status}: {self.citation}"


@dataclass(frozen=True)
class BoundSpec:
    """A theorem: ``check`` says why it does not apply (None if it does), ``value`` computes it.

    ``kind`` is what it bounds: ``"mistakes"`` (of the online run) or ``"test_error"`` (the
    expected error of the final hypothesis; logged apart, never compared with mistakes).
    ``best``, where the theorem's comparators form a convex set, computes the bound at its best
    comparator (a ``BoundValue`` whose details name its margin, radius and duality gap) or says
    why not; it competes with the certificates under the source name ``BEST``. ``family`` is
    ``A_PRIORI`` or ``A_POSTERIORI`` (it reads the run's own mistakes): the two are ranked apart.
    ``sequence`` marks a theorem about the presented sequence itself (its deficits, its mistake
    rounds: Freund–Schapire, Mohri–Rostamizadeh), as opposed to one that holds for every
    sequence of the data's margin and radius, however long (Novikoff); it sets what the bound
    is vacuous against (``trivial_bound``). ``source`` (required, a ``Source``) says what the
    bound is: a paper's theorem as published, derived in lincls, or not covered by the paper.
    """

    name: str
    check: Callable[[RunFacts], str | None]
    value: Callable[[RunFacts], float | BoundValue]
    kind: str = MISTAKES
    best: Callable[[RunFacts], BoundValue | str] | None = None
    family: str = A_PRIORI
    sequence: bool = False
    source: Source = field(kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.source, Source):
            raise TypeError(f"bound {self.name!r}: source must be a Source, not {self.source!r}")


REGISTRY: list[BoundSpec] = []


def family_of(name: str) -> str:
    """The family (``A_PRIORI`` or ``A_POSTERIORI``) of the registered bound ``name``."""
    return next((s.family for s in REGISTRY if s.name == name), A_PRIORI)


def source_of(name: str) -> Source | None:
    """The ``Source`` of the registered bound ``name`` (None if no such bound)."""
    return next((s.source for s in REGISTRY if s.name == name), None)


def trivial_bound(learner, n_train: int | None, sequence: bool) -> float | None:
    """What no learner can exceed, for a bound: at or above it the bound is vacuous.

    A theorem about the presented sequence (``BoundSpec.sequence``) is vacuous at or above the
    number of examples presented (``n_steps_``): Freund–Schapire at v = 0 is exactly that count.
    A theorem about every sequence of the data's margin and radius, however long, is vacuous at
    or above the most examples the run could present (``max_passes`` × the rows; a game's
    adversary stops when it can force no more, not at a length). None if not recorded.
    """
    steps = getattr(learner, "n_steps_", None)
    if steps is None:
        return None
    passes = getattr(learner, "max_passes", None)
    if sequence or passes is None or n_train is None:
        return float(steps)
    return float(max(steps, int(passes) * int(n_train)))


@dataclass(frozen=True)
class Evaluation:
    """The bounds that apply to a run, the certificate each used, and why each other does not.

    ``values`` are mistake bounds; ``test_error`` holds the test-error bounds. ``vacuous`` names
    the mistake bounds at or above what no learner can exceed (``trivial_bound``): they hold
    whatever the learner does, so they are never a run's tightest.
    """

    values: dict[str, float]
    skipped: dict[str, str]
    sources: dict[str, str] = field(default_factory=dict)
    details: dict[str, dict[str, float]] = field(default_factory=dict)
    test_error: dict[str, float] = field(default_factory=dict)
    vacuous: frozenset[str] = frozenset()

    def tightest_of(self, family: str = A_PRIORI) -> tuple[str, float] | None:
        """The smallest non-vacuous mistake bound of ``family``, as (name, value)."""
        found = [n for n in self.values if n not in self.vacuous and family_of(n) == family]
        if not found:
            return None
        name = min(found, key=self.values.__getitem__)
        return name, self.values[name]

    @property
    def tightest(self) -> tuple[str, float] | None:
        """The smallest non-vacuous a priori mistake bound, as (name, value)."""
        return self.tightest_of(A_PRIORI)


def _as_bound_value(result: Any) -> BoundValue:
    if isinstance(result, BoundValue):
        return BoundValue(float(result.value), dict(result.details))
    return BoundValue(float(result))


class BoundRaised(Exception):
    """A bound's function raised, and the bound is one whose failure is contained (a plugin's,
    wrapped by ``lincls.bounds``): the bound is skipped with this message as its reason."""


def _best_value(spec: BoundSpec, trials, facts: RunFacts) -> tuple[BoundValue, str] | str:
    """``spec`` at its best certificate or comparator, as (value, source); else why not."""
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
    return best if best is not None else reason or "no certificate"


def evaluate(facts: RunFacts) -> Evaluation:
    """Every registered bound that applies to ``facts``, each at its best certificate; one whose
    function raises ``BoundRaised`` is skipped with its message."""
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
        try:
            best = _best_value(spec, trials, facts)
        except BoundRaised as exc:
            best = str(exc)
        if isinstance(best, str):
            skipped[spec.name] = best
            continue
        target = values if spec.kind == MISTAKES else test_error
        target[spec.name] = best[0].value
        sources[spec.name] = best[1]
        if best[0].details:
            details[spec.name] = best[0].details
    n_train = facts.n_train if facts.n_train is not None else _rows(facts.X)
    vacuous = set()
    for spec in REGISTRY:
        trivial = trivial_bound(facts.learner, n_train, spec.sequence)
        if spec.name in values and trivial is not None:
            if values[spec.name] >= trivial * (1.0 - RELATIVE_TOLERANCE):
                vacuous.add(spec.name)
    return Evaluation(values, skipped, sources, details, test_error, frozenset(vacuous))


def _rows(X) -> int | None:
    return None if X is None else int(X.shape[0])
