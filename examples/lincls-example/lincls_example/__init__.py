"""An example lincls plugin: the normalized perceptron, its mistake bound and a wrong bound.

Installed, its entry point (group ``lincls.plugins``) calls ``register``; without installing,
call ``register()`` yourself before lincls builds a learner or composes a config.
"""

from __future__ import annotations

from lincls.plugins import Bound, register_bound, register_learner
from lincls_example import bounds
from lincls_example.learner import NormalizedPerceptron, NormalizedPerceptronConfig

LEARNER = "normalized_perceptron"


def register() -> None:
    """Register ``learner=normalized_perceptron``, its bound and the wrong bound."""
    register_learner(
        LEARNER,
        NormalizedPerceptron,
        NormalizedPerceptronConfig,
        options={"lr": [0.1, 1.0, 7.0], "shuffle": [False, True]},
    )
    register_bound(
        Bound(
            "normalized_novikoff",
            NormalizedPerceptron,
            theorem="Novikoff (1962) on the normalized examples x/‖x‖; proof in "
            "lincls_example.bounds.normalized_novikoff",
            rule=bounds.RULE,
            value=bounds.value,
            check=bounds.applies,
            best=bounds.best,
            status="derived",  # proved in its docstring
        )
    )
    register_bound(
        Bound(
            "normalized_novikoff_halved",
            NormalizedPerceptron,
            theorem="none: half of normalized_novikoff, wrong on purpose (a test of the checks)",
            rule=bounds.RULE,
            value=bounds.halved,
            check=bounds.applies,
            status="not covered",  # no theorem covers it
        )
    )


__all__ = ["LEARNER", "NormalizedPerceptron", "NormalizedPerceptronConfig", "register"]
