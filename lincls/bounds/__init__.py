"""Mistake bounds: one function per theorem (docstring: statement and source), and the registry.

Every bound is computed on the vectors the learner actually sees: a learner with a bias sees the
augmented vectors (x, c), c the constant feature its bias rule amounts to, so its bound is the
theorem applied to (x, c) and to the augmented separator (u, b/c). Compare a mistake count with a
bound with ``holds`` (relative tolerance 1e-9: tight cases compute 3 as 2.9999999999999987).

Bounds registered through ``lincls.plugins`` join ``REGISTRY`` when bounds are first evaluated
(``evaluate``, ``family_of``: ``plugin_bounds``), each applying only to runs of its learner. A
plugin bound whose ``check``, ``value`` or ``best`` raises (or returns what is no bound) is
skipped on that run, ``bounds.skipped`` naming what raised and why; the run goes on.
"""

import sys
from collections.abc import Callable
from typing import Any

from lincls import plugins
from lincls.bounds import (
    _registry,
    alma,
    arow,
    budget_perceptron,
    confidence_weighted,
    data_dependent,
    deficit,
    forgetron,
    kernel,
    margin,
    multiclass,
    passive_aggressive,
    perceptron,
    projectron,
    romma,
    second_order,
    winnow,
)
from lincls.bounds._registry import (
    A_POSTERIORI,
    A_PRIORI,
    CITATION_LENGTH,
    DERIVED,
    FAMILIES,
    NOT_COVERED,
    NOT_READ,
    PUBLISHED,
    REGISTRY,
    RELATIVE_TOLERANCE,
    STATUSES,
    TEST_ERROR,
    BoundRaised,
    BoundSpec,
    BoundValue,
    Evaluation,
    RunFacts,
    Source,
    holds,
    trivial_bound,
)
from lincls.bounds.alma import alma_bound
from lincls.bounds.arow import arow_bound
from lincls.bounds.budget_perceptron import rbp_expected_bound
from lincls.bounds.confidence_weighted import cw_bound, scw1_bound, scw2_bound
from lincls.bounds.data_dependent import mohri_rostamizadeh
from lincls.bounds.deficit import freund_schapire, freund_schapire_grid, voted_test_error
from lincls.bounds.forgetron import forgetron_bound
from lincls.bounds.kernel import kernel_novikoff
from lincls.bounds.margin import margin_perceptron_bound
from lincls.bounds.multiclass import mira_bound, multiclass_perceptron_bound
from lincls.bounds.passive_aggressive import pa1_bound, pa2_bound, pa_bound
from lincls.bounds.perceptron import novikoff, novikoff_2r, novikoff_bias
from lincls.bounds.projectron import (
    projectron_bound,
    projectron_paper_bound,
    projectron_plus_bound,
)
from lincls.bounds.romma import romma_bound
from lincls.bounds.second_order import second_order_bound
from lincls.bounds.winnow import winnow1_bound, winnow2_bound

# The specs made from lincls.plugins' bounds, by name: kept in step with it on every evaluation.
_FROM_PLUGINS: dict[str, tuple[plugins.Bound, BoundSpec]] = {}


def _contained(part: str, function: Callable[[RunFacts], Any], result: Callable[[Any], Any]):
    """A plugin's ``function`` (its bound's ``part``) whose exception, or a return value that
    ``result`` refuses, raises ``BoundRaised``: the bound is skipped, the run goes on."""

    def contained(facts: RunFacts):
        try:
            return result(function(facts))
        except Exception as exc:
            problem = (str(exc).strip().splitlines() or [""])[0].replace(";", ",")
            said = f"{type(exc).__name__}: {problem}" if problem else type(exc).__name__
            raise BoundRaised(f"{part} raised {said}") from exc

    return contained


def _reason(found: Any) -> str | None:
    if found is not None and not isinstance(found, str):
        raise TypeError(f"returned {type(found).__name__}, not a reason (str) or None")
    return found


def _best_of(found: Any) -> BoundValue | str:
    return found if isinstance(found, str) else _registry._as_bound_value(found)


def _gated(bound: plugins.Bound, part: str):
    """The bound's ``part`` (check or best, contained) on runs of ``bound.learner`` only;
    elsewhere the reason it does not apply."""
    function = getattr(bound, part)
    result = _reason if part == "check" else _best_of
    inner = None if function is None else _contained(part, function, result)

    def gated(facts: RunFacts):
        if type(facts.learner) is not bound.learner:
            return f"not a {bound.learner.__name__} (the rule it covers: {bound.rule})"
        return None if inner is None else inner(facts)

    return gated


def _plugin_source(bound: plugins.Bound) -> Source:
    """A plugin bound's ``Source``: its own ``status`` if it gives one, else ``NOT_READ`` (lincls
    has neither read nor proved it), with the first line of its ``theorem`` as the citation."""
    line = (str(bound.theorem).strip().splitlines() or ["no theorem given"])[0]
    citation = f"plugin ({bound.source}): {line}"[:CITATION_LENGTH]
    return Source(getattr(bound, "status", NOT_READ), citation)


def plugin_bounds() -> list[BoundSpec]:
    """Bring ``REGISTRY`` in step with the bounds registered in ``lincls.plugins`` (loading its
    entry points once); a plugin bound named as a built-in one is left out, with one line."""
    plugins.load_plugins()
    for name in [n for n in _FROM_PLUGINS if plugins.BOUNDS.get(n) is not _FROM_PLUGINS[n][0]]:
        REGISTRY.remove(_FROM_PLUGINS.pop(name)[1])
    for name, bound in plugins.BOUNDS.items():
        if name in _FROM_PLUGINS:
            continue
        if any(spec.name == name for spec in REGISTRY):
            print(f"lincls: plugin bound {name!r} ({bound.source}) left out: a built-in "
                  "bound has its name", file=sys.stderr)  # fmt: skip
            continue
        check = _gated(bound, "check")
        best = None if bound.best is None else _gated(bound, "best")
        value = _contained("value", bound.value, _registry._as_bound_value)
        spec = BoundSpec(name, check, value, kind=bound.kind, best=best,
                         family=bound.family, sequence=bound.sequence,
                         source=_plugin_source(bound))  # fmt: skip
        REGISTRY.append(spec)
        _FROM_PLUGINS[name] = (bound, spec)
    return [spec for _, spec in _FROM_PLUGINS.values()]


def evaluate(facts: RunFacts) -> Evaluation:
    """Every registered bound (plugins' too) that applies to ``facts``, each at its best
    certificate (``lincls.bounds._registry.evaluate``)."""
    plugin_bounds()
    return _registry.evaluate(facts)


def family_of(name: str) -> str:
    """The family (``A_PRIORI`` or ``A_POSTERIORI``) of the registered bound ``name``."""
    plugin_bounds()
    return _registry.family_of(name)


def source_of(name: str) -> Source | None:
    """The ``Source`` (status and citation) of the registered bound ``name``, plugins' too."""
    plugin_bounds()
    return _registry.source_of(name)


__all__ = [
    "A_POSTERIORI",
    "A_PRIORI",
    "DERIVED",
    "FAMILIES",
    "NOT_COVERED",
    "NOT_READ",
    "PUBLISHED",
    "REGISTRY",
    "RELATIVE_TOLERANCE",
    "STATUSES",
    "TEST_ERROR",
    "BoundSpec",
    "BoundValue",
    "Evaluation",
    "RunFacts",
    "Source",
    "alma",
    "alma_bound",
    "arow",
    "arow_bound",
    "budget_perceptron",
    "confidence_weighted",
    "cw_bound",
    "data_dependent",
    "deficit",
    "evaluate",
    "family_of",
    "forgetron",
    "forgetron_bound",
    "freund_schapire",
    "freund_schapire_grid",
    "holds",
    "kernel",
    "kernel_novikoff",
    "margin",
    "margin_perceptron_bound",
    "mira_bound",
    "mohri_rostamizadeh",
    "multiclass",
    "multiclass_perceptron_bound",
    "novikoff",
    "novikoff_2r",
    "novikoff_bias",
    "pa1_bound",
    "pa2_bound",
    "pa_bound",
    "passive_aggressive",
    "perceptron",
    "plugin_bounds",
    "projectron",
    "projectron_bound",
    "projectron_paper_bound",
    "projectron_plus_bound",
    "rbp_expected_bound",
    "romma",
    "romma_bound",
    "scw1_bound",
    "scw2_bound",
    "second_order",
    "second_order_bound",
    "source_of",
    "trivial_bound",
    "voted_test_error",
    "winnow",
    "winnow1_bound",
    "winnow2_bound",
]
