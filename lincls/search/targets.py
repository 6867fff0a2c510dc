"""The (learner, bound) pairs the frontier searches, and the search each one gets.

Each registered mistake bound of a binary online learner is searched with the learner
configuration its theorem is about (``learner.*`` overrides on the learner's config). A bound
over the presented sequence (CW, SCW-II, the Forgetron) with a large constant is vacuous at the
presentations of a few passes; its learner then makes many passes without stopping, so the run
is non-vacuous and its ratio says something. The multiclass bounds (the multiclass perceptron's,
MIRA's) are searched by the adaptive adversary with its multiclass moves
(``lincls.search.multiclass``); the test-error bound is not searched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lincls.errors import LinclsInputError
from lincls.registry import build_learner
from lincls.search.instance import Found, Target

LONG = 500  # passes for a bound whose constant is vacuous at the presentations of a few


@dataclass(frozen=True)
class Plan:
    """A bound's searched learner (its config overrides), passes, radius cap and adversary."""

    learner: str
    overrides: tuple[tuple[str, object], ...] = ()
    passes: int = 3
    max_radius: float | None = None
    adversary: str = "adaptive"  # adaptive | boolean (Winnow's disjunctions)


PLANS: dict[str, Plan] = {
    "novikoff": Plan("perceptron", (("bias", "none"),)),
    "novikoff_bias": Plan("perceptron", (("bias", "feature"),)),
    "novikoff_2r": Plan("perceptron", (("bias", "r2"),)),
    "freund_schapire": Plan("perceptron", (("bias", "none"),), passes=5),
    "mohri_rostamizadeh": Plan("perceptron", (("bias", "none"),)),
    "kernel_novikoff": Plan("kernel_perceptron", (("kernel", "linear"), ("bias", "none"))),
    "margin_perceptron": Plan("margin_perceptron"),
    "pa": Plan("passive_aggressive", (("variant", "pa"),)),
    "pa1": Plan("passive_aggressive", (("variant", "pa1"),)),
    "pa2": Plan("passive_aggressive", (("variant", "pa2"),)),
    "romma": Plan("romma"),
    "alma": Plan("alma", (("bias", "none"),), LONG),
    "second_order": Plan("second_order_perceptron"),
    "arow": Plan("arow"),
    "cw": Plan("confidence_weighted", (("variant", "cw"), ("stop_when_converged", False)), LONG),
    "scw1": Plan("confidence_weighted", (("variant", "scw1"),)),
    "scw2": Plan(
        "confidence_weighted", (("variant", "scw2"), ("stop_when_converged", False)), LONG
    ),
    "projectron": Plan("projectron"),
    "projectron_plus": Plan("projectron", (("plus", True),)),
    # Theorem 4 needs k(x, x) ≤ 1: no bias feature, radius at most 1
    "projectron_plus_paper": Plan(
        "projectron", (("plus", True), ("margin_rule", "paper"), ("bias", "none")), max_radius=1.0
    ),
    "forgetron": Plan(
        "forgetron", (("bias", "none"), ("stop_when_converged", False)), LONG, max_radius=1.0
    ),
    "multiclass_perceptron": Plan("multiclass_perceptron"),
    "mira_pa1_kesler": Plan("mira"),
    "winnow1": Plan("winnow", (("variant", "winnow1"),), adversary="boolean"),
    "winnow2": Plan("winnow", (("variant", "winnow2"),), adversary="boolean"),
}


def option_text(value: object) -> str:
    """An option's value as an override spells it (true/false for a bool)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def target_of(bound: str, learner: dict | None = None, passes: int | None = None) -> Target:
    """The ``Target`` searched for ``bound``: its plan's learner, or ``learner`` (a learner config
    as a run has it, e.g. the one ``lincls check`` is given)."""
    if bound not in PLANS:
        raise LinclsInputError("bound", f"must be one of {', '.join(sorted(PLANS))}, got {bound!r}")
    plan = PLANS[bound]
    config = learner if learner is not None else {"name": plan.learner, **dict(plan.overrides)}
    passes = passes or plan.passes
    overrides = tuple(
        f"learner.{k}={option_text(v)}" for k, v in config.items() if k != "name" and v is not None
    )
    return Target(build_learner(config, passes, 0), bound, passes, overrides, plan.max_radius)


def search(
    target: Target, seconds: float | None, seed: int = 0, method: str | None = None
) -> Found:
    """The search ``method`` (adaptive or boolean; None: the target's plan's adversary) against
    the target, for about ``seconds`` (None: all its rounds, so the same instance at any load)."""
    from lincls.search.adaptive import adaptive_search
    from lincls.search.boolean import boolean_search

    if method is None:
        method = PLANS[target.bound].adversary if target.bound in PLANS else "adaptive"
    runs: dict[str, Callable[..., Found]] = {"adaptive": adaptive_search, "boolean": boolean_search}
    return runs[method](target, seconds=seconds, seed=seed)
