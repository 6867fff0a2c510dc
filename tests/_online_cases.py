"""Shared pieces of the online-learner tests: random certified datasets and the bound check."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from lincls import bounds
from lincls.data import make_separable
from lincls.geometry.certificates import certificate_of

# 1,000 random certified datasets per learner; derandomized so a failure reproduces.
BOUND_SETTINGS = settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# Seed 001's worked binary example: features f1, f2 (the bias is w0) and labels.
SEED001_X = np.array([[1.0, 1.0], [3.0, 2.0], [2.0, 4.0], [3.0, 4.0], [2.0, 3.0]])
SEED001_Y = np.array([-1, 1, 1, 1, -1])


@st.composite
def certified_data(draw, homogeneous: bool = False):
    """A certified separable dataset with drawn n, d, radius, margin, offset and seed."""
    n = draw(st.integers(2, 40))
    d = draw(st.integers(1, 8))
    radius = draw(st.sampled_from([0.01, 0.3, 1.0, 7.0, 100.0]))
    margin = radius * draw(st.floats(0.02, 1.0))
    room = radius - margin
    offset = 0.0 if homogeneous else 0.999 * room * draw(st.floats(-1.0, 1.0))
    seed = draw(st.integers(0, 2**20))
    return make_separable(n, d, margin, radius, offset=offset, seed=seed, n_test=0)


def bias_and_data(biases: tuple[str, ...] = ("feature", "r2", "none")):
    """A bias rule and a certified dataset; homogeneous data for the rule without a bias."""
    return st.sampled_from(biases).flatmap(
        lambda bias: st.tuples(st.just(bias), certified_data(homogeneous=bias == "none"))
    )


def bound_values(learner, dataset) -> dict[str, float]:
    """Fit ``learner`` on ``dataset``; the bounds that apply, each checked to hold."""
    learner.fit(dataset.X, dataset.y)
    facts = bounds.RunFacts(learner, dataset.radius, certificate_of(dataset, learner))
    evaluation = bounds.evaluate(facts)
    assert evaluation.values, evaluation.skipped
    for name, value in evaluation.values.items():
        assert bounds.holds(learner.mistakes_, value), (name, learner.mistakes_, value)
    return evaluation.values
