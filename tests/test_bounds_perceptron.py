"""Novikoff's bound and its bias forms hold on random certified data, tight where they must be."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lincls import bounds
from lincls.data import make_orthonormal, make_separable
from lincls.geometry import certify
from lincls.learners import Perceptron

EXPECTED = {
    "none": {"novikoff"},
    "feature": {"novikoff_bias"},
    "r2": {"novikoff_bias", "novikoff_2r"},
}


@st.composite
def certified(draw, homogeneous: bool):
    """A random certified dataset: sizes, scale (0.01–100), margin and offset all drawn."""
    n = draw(st.integers(2, 60))
    d = draw(st.integers(1, 12))
    radius = draw(st.sampled_from([0.01, 0.1, 1.0, 7.0, 100.0]))
    margin = radius * draw(st.floats(0.01, 0.9))
    room = radius - margin
    offset = 0.0 if homogeneous else room * draw(st.floats(-1.0, 1.0))
    seed = draw(st.integers(0, 2**31 - 1))
    return make_separable(n, d, margin, radius, offset=offset, seed=seed, n_test=0)


def facts_of(model, data):
    cert = certify(data.X, np.where(data.y > 0, 1.0, -1.0), data.u, data.b, "generator")
    return bounds.RunFacts(learner=model, radius=data.radius, certificate=cert)


def check_mode(data, bias, shuffle, seed):
    model = Perceptron(bias=bias, max_passes=8, shuffle=shuffle, random_state=seed)
    model.fit(data.X, data.y)
    evaluation = bounds.evaluate(facts_of(model, data))
    assert set(evaluation.values) == EXPECTED[bias]
    for name, value in evaluation.values.items():
        assert bounds.holds(model.mistakes_, value), (name, model.mistakes_, value)


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("bias", ["none", "feature", "r2"])
def test_mistakes_within_bound_on_1000_random_certified_sets(bias, shuffle):
    @settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=certified(homogeneous=bias == "none"), seed=st.integers(0, 2**16))
    def run(data, seed):
        check_mode(data, bias, shuffle, seed)

    run()


def test_orthonormal_instance_meets_the_bound():
    data = make_orthonormal(d=64, radius=3.0, seed=0)
    model = Perceptron(bias="none").fit(data.X, data.y)
    value = bounds.evaluate(facts_of(model, data)).values["novikoff"]
    assert model.mistakes_ == 64
    assert value == pytest.approx(64.0, rel=1e-12)


def test_bias_bound_uses_the_augmented_vectors():
    # Far from the origin a bias matters: the plain (R/γ)² of the raw vectors is not a bound for a
    # perceptron with a bias; the bound of the augmented vectors (x, 1) is, and is larger.
    data = make_separable(400, 2, 0.05, 10.0, offset=9.0, seed=1)
    model = Perceptron(bias="feature", max_passes=1000).fit(data.X, data.y)
    facts = facts_of(model, data)
    augmented = bounds.evaluate(facts).values["novikoff_bias"]
    raw = bounds.novikoff(facts.radius, facts.certificate.margin)
    assert bounds.holds(model.mistakes_, augmented)
    assert augmented == pytest.approx((100.0 + 1.0) * (1 + 81.0) / 0.05**2, rel=1e-9)
    assert augmented > 80 * raw


def test_plain_bias_rule_is_not_covered_by_2r_and_not_reported_so():
    data = make_separable(100, 3, 0.1, 1.0, offset=0.5, seed=2)
    model = Perceptron(bias="feature").fit(data.X, data.y)
    evaluation = bounds.evaluate(facts_of(model, data))
    assert "novikoff_2r" not in evaluation.values
    assert "not b += η·y·R²" in evaluation.skipped["novikoff_2r"]


def test_homogeneous_learner_on_offset_data_gets_no_bound():
    data = make_separable(100, 3, 0.1, 1.0, offset=0.4, seed=3)
    model = Perceptron(bias="none", max_passes=3).fit(data.X, data.y)
    evaluation = bounds.evaluate(facts_of(model, data))
    assert evaluation.values == {}
    assert "offset" in evaluation.skipped["novikoff"]


def test_closed_forms():
    assert bounds.novikoff(2.0, 0.5) == 16.0
    assert bounds.novikoff_2r(2.0, 0.5) == 64.0
    # c = R and |b| = R: the sharper form reaches (2R/γ)²
    assert bounds.novikoff_bias(2.0, 0.5, 2.0, 2.0) == pytest.approx(64.0)
    assert bounds.novikoff_bias(1.0, 0.1, 0.0, 1.0) == pytest.approx(200.0)
