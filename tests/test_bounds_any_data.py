"""Freund–Schapire, Mohri–Rostamizadeh and the voted perceptron's bound, on real fits."""

from __future__ import annotations

import numpy as np
import pytest

from lincls import bounds
from lincls.data import make_noisy, make_orthonormal, make_separable
from lincls.geometry import certify, hinge_deficit
from lincls.learners import Perceptron, VotedPerceptron


def facts_of(model, data, cert=None):
    y = np.where(data.y == model.classes_[1], 1.0, -1.0)
    cert = cert or certify(data.X, y, data.u, data.b, "generator")
    return bounds.RunFacts(
        learner=model,
        radius=data.radius,
        certificate=cert,
        certificates=(cert,),
        sq_norms=np.einsum("ij,ij->i", data.X, data.X),
        presentations=np.full(data.X.shape[0], model.n_passes_),
        n_train=data.X.shape[0],
    )


def test_closed_forms():
    assert bounds.freund_schapire(1.0, 0.5, 0.0) == 4.0
    assert bounds.freund_schapire(2.0, 0.5, 1.0) == 36.0
    assert hinge_deficit(np.array([0.5, -0.5, 2.0]), 1.0, np.array([2, 1, 5])) == pytest.approx(
        np.sqrt(2 * 0.25 + 2.25)
    )
    # two mistakes on unit vectors, both at margin 0.5 of u, ρ = 0.5: 0 + √2/0.5
    assert bounds.mohri_rostamizadeh(np.ones(2), np.array([0.5, 0.5]), 0.5) == pytest.approx(
        2 * np.sqrt(2)
    )
    # ρ above the margins adds the hinge: (1 − 0.5/1)·2 + √2/1
    assert bounds.mohri_rostamizadeh(np.ones(2), np.array([0.5, 0.5]), 1.0) == pytest.approx(
        1 + np.sqrt(2)
    )
    assert bounds.voted_test_error(99, 50.0) == 1.0
    assert bounds.voted_test_error(99, 50.0, "random") == 0.5


def test_grid_minimum_is_at_most_novikoff_and_consistent_with_its_deficit():
    margins = np.full(10, 0.25)
    value, gamma, deficit = bounds.freund_schapire_grid(1.0, margins, np.ones(10), [0.25])
    # γ above the margin trades a deficit for a larger γ: here it beats (R/γ)² = 16
    assert value < 16.0 and gamma > 0.25
    assert deficit == pytest.approx(hinge_deficit(margins, gamma), rel=1e-12)
    assert value == pytest.approx(((1.0 + deficit) / gamma) ** 2, rel=1e-12)
    only_margin, g, d = bounds.freund_schapire_grid(0.25, margins, np.ones(10), [0.25])
    assert (only_margin, g, d) == (1.0, 0.25, 0.0)  # R = γ: no grid point beats 1


def test_mohri_rostamizadeh_between_mistakes_and_novikoff_on_separable_runs():
    for seed in range(40):
        data = make_separable(80, 5, 0.05, 1.0, seed=seed, n_test=0)
        model = Perceptron(bias="none", max_passes=200, shuffle=seed % 2 == 1, random_state=seed)
        model.fit(data.X, data.y)
        values = bounds.evaluate(facts_of(model, data)).values
        assert model.mistakes_ <= values["mohri_rostamizadeh"] * (1 + 1e-9)
        assert values["mohri_rostamizadeh"] <= values["novikoff"] * (1 + 1e-9)


def test_freund_schapire_holds_on_noisy_data_where_novikoff_does_not_apply():
    for seed in range(20):
        data = make_noisy(120, 4, 0.1, 1.0, offset=0.3, flip=0.1, deficit=2.0, seed=seed)
        model = Perceptron(max_passes=30, shuffle=True, random_state=seed).fit(data.X, data.y)
        evaluation = bounds.evaluate(facts_of(model, data))
        assert "novikoff_bias" not in evaluation.values
        assert "does not separate" in evaluation.skipped["novikoff_bias"]
        assert model.mistakes_ > 30  # it keeps erring: the data are not separable
        assert bounds.holds(model.mistakes_, evaluation.values["freund_schapire"])
        assert bounds.holds(model.mistakes_, evaluation.values["mohri_rostamizadeh"])


def test_deficit_over_one_copy_of_the_data_would_break_the_bound():
    # D must sum over every presentation: the one-pass D under-counts a 30-pass run.
    data = make_noisy(100, 5, 0.1, 1.0, flip=0.05, deficit=0.0, seed=3)
    model = Perceptron(bias="none", max_passes=30, stop_when_converged=False).fit(data.X, data.y)
    facts = facts_of(model, data)
    right = bounds.evaluate(facts).values["freund_schapire"]
    one_copy, _, _ = bounds.freund_schapire_grid(
        facts.radius, facts.certificate.margins, np.ones(100)
    )
    assert bounds.holds(model.mistakes_, right)
    assert model.mistakes_ > one_copy


def test_bounds_on_raw_vectors_fail_for_a_learner_with_a_bias():
    # Small vectors far from the separator's origin: the bias (a constant feature 1) dominates.
    # Every bound computed on the raw x (radius 0.01) is broken by the real run; the ones on
    # (x, 1), which the learner actually sees, hold.
    data = make_separable(200, 2, 0.0005, 0.01, offset=0.009, seed=0, n_test=0)
    model = Perceptron(bias="feature", max_passes=5000).fit(data.X, data.y)
    facts = facts_of(model, data)
    evaluation = bounds.evaluate(facts)
    cert = facts.certificate
    raw_novikoff = bounds.novikoff(facts.radius, cert.margin)
    raw_fs, _, _ = bounds.freund_schapire_grid(facts.radius, cert.margins, facts.presentations)
    raw_mr = bounds.mohri_rostamizadeh(
        facts.sq_norms[model.mistake_indices_], cert.margins[model.mistake_indices_], cert.margin
    )
    assert model.converged_ and model.mistakes_ > 10 * raw_novikoff
    assert model.mistakes_ > raw_fs and model.mistakes_ > raw_mr
    for name in ("novikoff_bias", "freund_schapire", "mohri_rostamizadeh"):
        assert bounds.holds(model.mistakes_, evaluation.values[name]), name


def test_voted_perceptron_test_error_bound_is_logged_apart_after_one_pass():
    data = make_separable(300, 5, 0.1, 1.0, seed=4)
    model = VotedPerceptron(max_passes=1).fit(data.X, data.y)
    evaluation = bounds.evaluate(facts_of(model, data))
    fs = evaluation.values["freund_schapire"]
    assert evaluation.test_error["voted_fs99"] == pytest.approx(2 * fs / 301)
    assert "voted_fs99" not in evaluation.values  # never compared with mistakes
    two_passes = VotedPerceptron(max_passes=2).fit(data.X, data.y)
    skipped = bounds.evaluate(facts_of(two_passes, data)).skipped
    assert "one pass" in skipped["voted_fs99"]


def test_tight_instance_meets_every_separable_bound():
    data = make_orthonormal(d=36, radius=2.0)
    model = Perceptron(bias="none").fit(data.X, data.y)
    values = bounds.evaluate(facts_of(model, data)).values
    assert model.mistakes_ == 36
    for name in ("novikoff", "freund_schapire", "mohri_rostamizadeh"):
        assert model.mistakes_ / values[name] == pytest.approx(1.0, rel=1e-12), name
