"""Learners and bounds from other packages: ``register_learner``, ``register_bound``, entry points.

A package adds a learner (an estimator with the online kernel contract of
``lincls.learners.OnlineBinaryClassifier`` and a dataclass config schema) and the mistake bounds
proved for its rule, either by calling the two functions here or, installed, through an entry
point in the group ``lincls.plugins``::

    [project.entry-points."lincls.plugins"]
    my_rule = "my_pkg:register"      # a function of no arguments that calls register_learner, …

The entry points are loaded once per process, when the registry is first used: when Hydra's
configs are registered (``lincls.config.register_configs``, so ``learner=my_rule`` composes), when
a learner is built (``lincls.registry``, in a sweep's worker processes too) and when bounds are
evaluated (``lincls.bounds``). A plugin that fails to load prints one line naming its entry point
and is left out; the others load.

This module sits in the lowest layer and imports nothing of lincls above it: the registry, the
config schemas and the bound registry each take what is registered here when they are used.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import importlib.resources
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lincls.errors import LinclsInputError

GROUP = "lincls.plugins"
A_PRIORI, A_POSTERIORI = "a_priori", "a_posteriori"  # as lincls.bounds names the families
KINDS = ("mistakes", "test_error")
# as lincls.bounds's Source statuses: derived (proved, e.g. in the bound's docstring), published
# (a paper's theorem, its statement read), not read, not covered (the theorem does not cover it)
STATUSES = ("published", "derived", "not read", "not covered")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # a config group option and a metric's name


@dataclass(frozen=True)
class Learner:
    """A registered learner: its config name, estimator class, config schema and the values the
    property test (``tests/test_bounds_every_option.py``) draws each option from."""

    name: str
    estimator: type
    schema: type
    options: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    source: str = "in-process"


@dataclass(frozen=True)
class Bound:
    """A mistake bound: a theorem about the rule of one estimator class, and its value on a run.

    ``theorem`` says which theorem and where it is proved (or gives the proof); ``rule`` is the
    exact update rule it covers. ``value(facts)`` computes it from a ``lincls.bounds.RunFacts``
    (a number or a ``BoundValue``); ``check(facts)`` says why it does not apply (None if it
    does) and runs only on runs of ``learner`` (exactly that class: a subclass may change the
    rule). ``best(facts)``, optional, evaluates it at its best comparator (a ``BoundValue``) or
    says why not. ``family`` is ``"a_priori"`` or ``"a_posteriori"`` (it reads the run's own
    mistakes); ``sequence`` marks a theorem about the presented sequence itself; ``kind`` is
    ``"mistakes"`` or ``"test_error"``; ``status`` is where it comes from (``STATUSES``; a
    run tags it with the first line of ``theorem``). These are ``lincls.bounds.BoundSpec``'s.
    """

    name: str
    learner: type
    theorem: str
    rule: str
    value: Callable[[Any], Any]
    check: Callable[[Any], str | None] | None = None
    best: Callable[[Any], Any] | None = None
    family: str = A_PRIORI
    sequence: bool = False
    kind: str = "mistakes"
    status: str = "not read"
    source: str = "in-process"


LEARNERS: dict[str, Learner] = {}
BOUNDS: dict[str, Bound] = {}
FAILED: dict[str, str] = {}  # entry point name → the line printed about it
_STATE = {"loaded": False, "source": "in-process"}


def built_in_learners() -> set[str]:
    """The learners lincls ships: one YAML file each in ``lincls.conf``'s ``learner/``."""
    folder = importlib.resources.files("lincls.conf").joinpath("learner")
    return {p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml")}


def _check_name(kind: str, name: Any) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise LinclsInputError(
            f"plugin {kind}", f"name must be lower-case letters, digits and _, got {name!r}"
        )


def register_learner(
    name: str,
    estimator: type,
    schema: type,
    defaults: Mapping[str, Any] | None = None,
    options: Mapping[str, Sequence[Any]] | None = None,
) -> Learner:
    """Make ``learner=name`` a choice of the CLI, the sweeps and the registry.

    ``schema`` is a dataclass of the learner's options with a ``name`` field (as those of
    ``lincls.config``); ``defaults`` overrides its field defaults in the config ``learner=name``
    selects. ``options`` lists, per option, the values the every-option property test draws.
    Registering the same name again replaces it; a built-in learner's name is refused.

    The estimator is a scikit-learn estimator class (``fit``, ``predict``, ``get_params``,
    ``set_params``) that a run makes as ``estimator(**options)``, the schema's fields but
    ``name`` as keywords; it gets ``max_passes`` and ``random_state`` if it has them (the run's
    ``passes`` and ``seed``), and its ``_check_params()``, if it has one, is called before the
    fit. A subclass of ``lincls.learners.OnlineBinaryClassifier`` (providing ``_check_params``,
    ``_init_weights`` and ``_run_pass``) has all that and keeps the online record
    (``mistakes_``, ``mistake_steps_``, …) that mistake bounds and tracking read.
    """
    _check_name("learner", name)
    if name in built_in_learners():
        raise LinclsInputError(f"plugin learner {name!r}", "is a built-in learner's name")
    if not isinstance(estimator, type) or not all(
        hasattr(estimator, a) for a in ("fit", "get_params", "set_params")
    ):
        raise LinclsInputError(
            f"plugin learner {name!r}", "the estimator must be a scikit-learn estimator class"
        )
    fields = (
        {f.name for f in dataclasses.fields(schema)} if dataclasses.is_dataclass(schema) else set()
    )
    if "name" not in fields:
        raise LinclsInputError(
            f"plugin learner {name!r}", "the schema must be a dataclass with a `name` field"
        )
    values = {**(defaults or {}), "name": name}
    unknown = sorted(set(values) - fields) + sorted(set(options or {}) - fields)
    if unknown:
        raise LinclsInputError(
            f"plugin learner {name!r}", f"{', '.join(unknown)} not fields of {schema.__name__}"
        )
    from hydra.core.config_store import ConfigStore  # here: `lincls run --help` reads this module

    entry = Learner(name, estimator, schema, dict(options or {}), _STATE["source"])
    store = ConfigStore.instance()
    store.store(group="learner", name=f"{name}_schema", node=schema, provider=entry.source)
    # the option itself: the schema with its defaults, so Hydra checks types and keys as it
    # checks a YAML file's
    store.store(group="learner", name=name, node=schema(**values), provider=entry.source)
    LEARNERS[name] = entry
    return entry


def register_bound(bound: Bound) -> Bound:
    """Add ``bound`` to the bounds every run of its learner evaluates (``lincls.bounds``).

    Registering the same name again replaces it; a built-in bound's name is refused when the
    bounds are evaluated (the plugin's bound is left out, with one line)."""
    _check_name("bound", bound.name)
    where = f"plugin bound {bound.name!r}"
    if not isinstance(bound.learner, type):
        raise LinclsInputError(where, "learner must be the estimator class the theorem is about")
    if not (isinstance(bound.theorem, str) and bound.theorem.strip()):
        raise LinclsInputError(where, "theorem must say which theorem and where it is proved")
    if not (isinstance(bound.rule, str) and bound.rule.strip()):
        raise LinclsInputError(where, "rule must state the update rule the theorem covers")
    if bound.family not in (A_PRIORI, A_POSTERIORI) or bound.kind not in KINDS:
        raise LinclsInputError(where, f"family must be one of {A_PRIORI}, {A_POSTERIORI} and "
                               f"kind one of {', '.join(KINDS)}")  # fmt: skip
    if bound.status not in STATUSES:
        raise LinclsInputError(where, f"status must be one of {', '.join(STATUSES)}")
    if "|" in bound.theorem.strip().splitlines()[0]:  # its first line is a tag, a table's cell
        raise LinclsInputError(where, "the first line of theorem may not hold '|'")
    if not callable(bound.value) or not all(
        f is None or callable(f) for f in (bound.check, bound.best)
    ):
        raise LinclsInputError(where, "value, check and best must be functions of RunFacts")
    registered = dataclasses.replace(bound, source=_STATE["source"])
    BOUNDS[bound.name] = registered
    return registered


def group_options(group: str) -> list[str]:
    """The options plugins add to the config group ``group`` (``learner``), their entry points
    loaded first: a command line checking ``learner=…`` against the YAML files adds these."""
    load_plugins()
    return sorted(LEARNERS) if group == "learner" else []


def unregister(name: str) -> None:
    """Remove the learner or bound ``name`` registered here (and its config options)."""
    if LEARNERS.pop(name, None) is not None:
        from hydra.core.config_store import ConfigStore

        group = ConfigStore.instance().repo.get("learner", {})
        for option in (f"{name}.yaml", f"{name}_schema.yaml"):
            group.pop(option, None)
    BOUNDS.pop(name, None)


def load_plugins() -> None:
    """Load every entry point of the group ``lincls.plugins``, once per process.

    An entry point names a function of no arguments (called) or a module (imported, registering
    as it is imported). One that fails prints ``lincls: plugin <name> (<value>) failed to load:
    …`` on stderr and is left out.
    """
    if _STATE["loaded"]:
        return
    _STATE["loaded"] = True  # first: a plugin that uses the registry while loading must not recurse
    for point in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda p: p.name):
        _STATE["source"] = f"entry point {point.name} ({point.value})"
        try:
            loaded = point.load()
            if callable(loaded):
                loaded()
        except Exception as exc:
            problem = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            line = f"lincls: plugin {point.name!r} ({point.value}) failed to load: " + (
                f"{type(exc).__name__}: {problem}" if problem else type(exc).__name__
            )
            FAILED[point.name] = line
            print(line, file=sys.stderr, flush=True)
        finally:
            _STATE["source"] = "in-process"


__all__ = [
    "BOUNDS",
    "GROUP",
    "LEARNERS",
    "Bound",
    "Learner",
    "built_in_learners",
    "group_options",
    "load_plugins",
    "register_bound",
    "register_learner",
    "unregister",
]
