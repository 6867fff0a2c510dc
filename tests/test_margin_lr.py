"""MarginPerceptron and LearningRatePerceptron: their rules, seed 001's table, bounds, configs."""

from __future__ import annotations

import numpy as np
import pytest
from _online_cases import BOUND_SETTINGS, SEED001_X, SEED001_Y, bias_and_data, bound_values
from conftest import compose_config
from hypothesis import given
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds
from lincls.data import make_separable
from lincls.errors import LinclsInputError
from lincls.evaluation import measure, prepare
from lincls.experiments.benchmarks.perceptron import csr_problem, dense_problem
from lincls.geometry.certificates import certificate_of
from lincls.learners import LearningRatePerceptron, MarginPerceptron, Perceptron


@parametrize_with_checks(
    [MarginPerceptron(), LearningRatePerceptron(), LearningRatePerceptron(schedule="inverse_sqrt")]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --- seed 001's worked binary table, with Perceptron and the learners that reduce to it -----
def seed001_steps(make):
    """The weights [w0, w1, w2] (w0 the bias) after examples 2, 3, 4 and 5 of seed 001's table.

    Fitted from [-1, 0, 0] on the first two examples, then one example at a time.
    """
    model = make().fit(SEED001_X[:2], SEED001_Y[:2], coef_init=[0, 0], intercept_init=[-1])
    seen = [np.r_[model.intercept_, model.coef_[0]]]
    assert list(model.mistake_steps_) == [1]  # example 1 was right: still [-1, 0, 0] after it
    for i in range(2, 5):
        model.partial_fit(SEED001_X[i : i + 1], SEED001_Y[i : i + 1])
        seen.append(np.r_[model.intercept_, model.coef_[0]])
    return np.array(seen), model


SEED001_WEIGHTS = [[0, 3, 2], [0, 3, 2], [0, 3, 2], [-1, 1, -1]]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Perceptron(bias="feature", max_passes=1),
        lambda: MarginPerceptron(tau=0.0, max_passes=1),
        lambda: LearningRatePerceptron(lr=0.5, max_passes=1),  # step 2α = 1
    ],
    ids=["perceptron", "margin_tau0", "learning_rate"],
)
def test_seed001_table_step_by_step(make):
    weights, model = seed001_steps(make)
    np.testing.assert_array_equal(weights, SEED001_WEIGHTS)
    assert model.mistakes_ == 2
    assert model.zero_init_ is False


def test_seed001_table_in_one_pass():
    model = Perceptron(bias="feature", max_passes=1).fit(
        SEED001_X, SEED001_Y, coef_init=[0, 0], intercept_init=[-1]
    )
    np.testing.assert_array_equal(np.r_[model.intercept_, model.coef_[0]], [-1, 1, -1])
    np.testing.assert_array_equal(model.mistake_steps_, [1, 4])


# --- MarginPerceptron ----------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_margin_zero_is_the_perceptron(sparse):
    X, y = csr_problem(600, 300, 10, seed=1) if sparse else dense_problem(600, 10, seed=1)
    margin = MarginPerceptron(tau=0.0, max_passes=3).fit(X, y)
    plain = Perceptron(max_passes=3).fit(X, y)
    np.testing.assert_array_equal(margin.coef_, plain.coef_)
    np.testing.assert_array_equal(margin.intercept_, plain.intercept_)
    assert margin.mistakes_ == margin.updates_ == plain.mistakes_


def test_margin_converged_run_clears_tau_everywhere():
    data = make_separable(200, 5, margin=0.2, radius=1.0, offset=0.1, seed=3, n_test=0)
    model = MarginPerceptron(tau=0.7, max_passes=500).fit(data.X, data.y)
    assert model.converged_
    y = np.where(data.y == model.classes_[1], 1.0, -1.0)
    assert (y * model.decision_function(data.X)).min() > 0.7
    assert model.updates_ > model.mistakes_  # correct examples inside the margin moved it too
    plain = Perceptron(max_passes=500).fit(data.X, data.y)
    assert (y * plain.decision_function(data.X)).min() < 0.7


def test_margin_bound_value_by_hand():
    # (R² + c² + 2τ/η)(1 + b²/c²)/γ² with R = 1, c = 1, τ = 0.5, η = 2, b = 0.2, γ = 0.1.
    value = bounds.margin_perceptron_bound(1.0, 0.1, 0.5, 2.0, offset=0.2, bias_feature=1.0)
    assert value == pytest.approx((1 + 1 + 0.5) * 1.04 / 0.01, rel=1e-15)
    assert bounds.margin_perceptron_bound(2.0, 0.5, 0.0, 1.0) == pytest.approx(16.0)


def test_negative_tau_is_one_line_error():
    with pytest.raises(LinclsInputError) as info:
        MarginPerceptron(tau=-0.1).fit(SEED001_X, SEED001_Y)
    assert info.value.field == "tau"
    assert str(info.value) == "tau: must be a number in [0, inf), got -0.1"
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(["learner=margin_perceptron", "learner.tau=-1"]))
    assert info.value.field == "learner.tau"


@BOUND_SETTINGS
@given(
    case=bias_and_data(),
    tau=st.sampled_from([0.0, 0.01, 0.5, 3.0]),
    lr=st.sampled_from([0.1, 1.0, 4.0]),
    shuffle=st.booleans(),
)
def test_margin_updates_within_bound(case, tau, lr, shuffle):
    bias, data = case
    model = MarginPerceptron(
        tau=tau, lr=lr, bias=bias, max_passes=30, shuffle=shuffle, random_state=1
    )
    values = bound_values(model, data)
    assert set(values) == {"margin_perceptron"}
    assert bounds.holds(model.updates_, values["margin_perceptron"])


# --- LearningRatePerceptron ----------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
def test_constant_rate_power_of_two_is_exactly_scaled_perceptron(sparse):
    X, y = csr_problem(800, 400, 10, seed=2) if sparse else dense_problem(800, 12, seed=2)
    plain = Perceptron(max_passes=4, shuffle=True, random_state=7).fit(X, y)
    rate = LearningRatePerceptron(lr=0.25, max_passes=4, shuffle=True, random_state=7)
    rate.fit(X, y)
    np.testing.assert_array_equal(rate.coef_, 0.5 * plain.coef_)  # 2α = 0.5: exact in binary
    np.testing.assert_array_equal(rate.intercept_, 0.5 * plain.intercept_)
    np.testing.assert_array_equal(rate.mistake_steps_, plain.mistake_steps_)


def test_constant_rate_scales_the_perceptron():
    X, y = dense_problem(800, 12, seed=3)
    plain = Perceptron(max_passes=4).fit(X, y)
    rate = LearningRatePerceptron(lr=0.1, max_passes=4).fit(X, y)
    np.testing.assert_allclose(rate.coef_, 0.2 * plain.coef_, rtol=1e-12)
    np.testing.assert_allclose(rate.intercept_, 0.2 * plain.intercept_, rtol=1e-12)
    np.testing.assert_array_equal(rate.mistake_steps_, plain.mistake_steps_)


@pytest.mark.parametrize("schedule", ["inverse", "inverse_sqrt", "pass_decay"])
def test_decaying_rate_differs_from_perceptron(schedule):
    X, y = dense_problem(800, 12, seed=3)
    plain = Perceptron(max_passes=4, stop_when_converged=False).fit(X, y)
    rate = LearningRatePerceptron(
        lr=1.0, schedule=schedule, max_passes=4, stop_when_converged=False
    ).fit(X, y)
    assert rate.mistakes_ != plain.mistakes_
    assert not np.allclose(
        rate.coef_ / np.linalg.norm(rate.coef_), plain.coef_ / np.linalg.norm(plain.coef_)
    )


# Orthonormal rows: every example a mistake, so w[t] = 2·α_t·y_t shows each step size.
E4 = np.eye(4)
Y4 = np.array([1, -1, 1, -1])


@pytest.mark.parametrize(
    ("schedule", "rates"),
    [
        ("constant", [0.3, 0.3, 0.3, 0.3]),
        ("inverse", [0.3 / 1, 0.3 / 2, 0.3 / 3, 0.3 / 4]),
        ("inverse_sqrt", [0.3 / 1, 0.3 / np.sqrt(2), 0.3 / np.sqrt(3), 0.3 / 2]),
        ("pass_decay", [0.3, 0.3, 0.3 * 0.25, 0.3 * 0.25]),
    ],
)
def test_schedule_step_sizes_over_global_steps_and_passes(schedule, rates):
    # Two partial_fit passes of two examples each: t runs on across passes, p counts passes.
    model = LearningRatePerceptron(lr=0.3, schedule=schedule, decay=0.25, bias="none")
    model.partial_fit(E4[:2], Y4[:2], classes=[-1, 1])
    model.partial_fit(E4[2:], Y4[2:])
    np.testing.assert_allclose(model.coef_[0], 2 * np.array(rates) * Y4, rtol=1e-15)
    assert model.mistakes_ == 4
    assert list(model.mistakes_per_pass_) == [2, 2]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"schedule": "cosine"}, "schedule"),
        ({"decay": 0.0}, "decay"),
        ({"decay": 1.5}, "decay"),
        ({"lr": 0.0}, "lr"),
    ],
)
def test_learning_rate_bad_parameters(params, field):
    with pytest.raises(LinclsInputError) as info:
        LearningRatePerceptron(**params).fit(SEED001_X, SEED001_Y)
    assert info.value.field == field
    assert "\n" not in str(info.value)


def test_decaying_schedule_claims_no_bound():
    data = make_separable(100, 4, margin=0.1, radius=1.0, seed=2, n_test=0)
    model = LearningRatePerceptron(schedule="inverse").fit(data.X, data.y)
    facts = bounds.RunFacts(model, data.radius, certificate_of(data, model))
    assert bounds.evaluate(facts).values == {}


@BOUND_SETTINGS
@given(case=bias_and_data(), lr=st.sampled_from([0.01, 0.5, 2.0]), shuffle=st.booleans())
def test_constant_rate_within_perceptron_bounds(case, lr, shuffle):
    bias, data = case
    model = LearningRatePerceptron(lr=lr, bias=bias, max_passes=30, shuffle=shuffle, random_state=2)
    values = bound_values(model, data)
    assert set(values) <= {"novikoff", "novikoff_bias", "novikoff_2r"}


@pytest.mark.parametrize(
    ("learner", "bound"),
    [("margin_perceptron", "margin_perceptron"), ("learning_rate_perceptron", "novikoff_bias")],
)
def test_runner_logs_the_bound(learner, bound):
    config = compose_config(
        [f"learner={learner}", "dataset.n=200", "dataset.d=5", "dataset.n_test=50"]
    )
    outcome = measure(config)
    assert outcome.metrics["mistakes"] <= outcome.metrics[f"bound.{bound}"]


def test_same_seed_same_bits():
    X, y = dense_problem(300, 6, seed=8)
    runs = [
        LearningRatePerceptron(schedule="inverse_sqrt", shuffle=True, random_state=5).fit(X, y)
        for _ in range(2)
    ]
    assert runs[0].coef_.tobytes() == runs[1].coef_.tobytes()


def test_an_lr_sweep_shows_the_perceptrons_mistakes_for_a_constant_rate_only():
    # Seed 002's rule from w = 0: a constant α only scales the weights (by 2α), so every α of a
    # sweep makes the perceptron's mistakes; α₀/t changes the run.
    common = ["dataset.n=400", "dataset.d=10", "dataset.margin=0.02", "certificates.svm=false"]
    perceptron = measure(compose_config(common)).metrics
    assert perceptron["mistakes"] > 50
    for lr in (0.1, 1, 10):
        rate = ["learner=learning_rate_perceptron", f"learner.lr={lr}"]
        constant = measure(compose_config([*common, *rate])).metrics
        assert constant["mistakes"] == perceptron["mistakes"]
        assert constant["passes_run"] == perceptron["passes_run"]
        inverse = measure(compose_config([*common, *rate, "learner.schedule=inverse"])).metrics
        assert inverse["mistakes"] != perceptron["mistakes"]
        assert "bound.novikoff_bias" not in inverse  # no theorem covers a decaying rate
