"""PassiveAggressive: scikit-learn's pa1 / pa2, the PA step, the three bounds, bad input, config."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _online_cases import BOUND_SETTINGS, SEED001_X, SEED001_Y, bound_values, certified_data
from conftest import compose_config
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds
from lincls.data import make_orthonormal, make_separable
from lincls.errors import LinclsInputError
from lincls.evaluation import measure, prepare
from lincls.experiments.benchmarks.perceptron import csr_problem, dense_problem
from lincls.geometry.certificates import certificate_of
from lincls.learners import PassiveAggressive


@parametrize_with_checks(
    [PassiveAggressive(), PassiveAggressive(variant="pa"), PassiveAggressive(variant="pa2")]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def sklearn_pa(X, y, variant, C, passes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SGDClassifier(
            loss="hinge",
            penalty=None,
            learning_rate=variant,
            eta0=C,
            shuffle=False,
            tol=None,
            max_iter=passes,
        ).fit(X, y)


@pytest.mark.parametrize("variant", ["pa1", "pa2"])
@pytest.mark.parametrize("C", [0.01, 1.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_equals_sklearn(variant, C, sparse):
    # bias="sklearn" is scikit-learn's rule (‖x‖² without the bias); on CSR it damps the bias
    # step by 0.01, and only this comparison uses that decay.
    X, y = csr_problem(1500, 3000, 15, seed=5) if sparse else dense_problem(1500, 20, seed=5)
    ours = PassiveAggressive(
        variant=variant,
        C=C,
        bias="sklearn",
        max_passes=3,
        stop_when_converged=False,
        intercept_decay=0.01 if sparse else 1.0,
    ).fit(X, y)
    peer = sklearn_pa(X, y, variant, C, passes=3)
    scale = np.abs(peer.coef_).max()
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-12, atol=1e-12 * scale)
    assert ours.intercept_[0] == pytest.approx(peer.intercept_[0], rel=1e-12)
    assert 0 < ours.mistakes_ < ours.updates_


def test_pa_step_makes_the_loss_zero():
    # PA on (x, 1): after an update y(w·x + b) = 1 exactly (to rounding), with ‖x‖² + 1.
    model = PassiveAggressive(variant="pa", max_passes=1)
    x = np.array([[3.0, 2.0]])
    model.fit(np.vstack([SEED001_X[:1], x]), [-1, 1], coef_init=[0.0, 0.0], intercept_init=[-1.0])
    # Example 1 has y(w·x + b) = 1: no loss, no update. Example 2: ℓ = 2, ‖x'‖² = 14.
    np.testing.assert_allclose(model.coef_, [[3 / 7, 2 / 7]], rtol=1e-15)
    np.testing.assert_allclose(model.intercept_, [-6 / 7], rtol=1e-15)
    assert model.decision_function(x)[0] == pytest.approx(1.0, rel=1e-15)
    assert (model.mistakes_, model.updates_) == (1, 1)


@pytest.mark.parametrize(
    ("variant", "C", "tau"),
    [("pa1", 1.0, 1 / 7), ("pa1", 0.05, 0.05), ("pa2", 1.0, 2 / 14.5), ("pa2", 0.1, 2 / 19)],
)
def test_step_sizes_on_seed001_example(variant, C, tau):
    # From [w0, w1, w2] = [-1, 0, 0]: example 2 = (3, 2), y = +1 has ℓ = 2 and ‖x'‖² = 14.
    model = PassiveAggressive(variant=variant, C=C, max_passes=1).fit(
        SEED001_X[:2], SEED001_Y[:2], coef_init=[0.0, 0.0], intercept_init=[-1.0]
    )
    np.testing.assert_allclose(model.coef_, [[3 * tau, 2 * tau]], rtol=1e-14)
    np.testing.assert_allclose(model.intercept_, [-1 + tau], rtol=1e-14)


def test_zero_vector_is_skipped_by_pa_and_pa1():
    X = np.array([[0.0, 0.0], [1.0, 0.0]])
    for variant in ("pa", "pa1"):
        model = PassiveAggressive(variant=variant, bias="none", max_passes=1).fit(X, [1, -1])
        assert model.mistakes_ == 2 and model.updates_ == 1
    # PA-II still moves the bias on x = 0 (and PA-I skips it), as scikit-learn does.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [2.0, 1.0]])
    y = np.array([1, -1, -1, 1])
    for variant in ("pa1", "pa2"):
        ours = PassiveAggressive(variant=variant, bias="sklearn", C=0.7, max_passes=2)
        ours.set_params(stop_when_converged=False).fit(X, y)
        peer = sklearn_pa(X, y, variant, 0.7, passes=2)
        np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-12)
        np.testing.assert_allclose(ours.intercept_, peer.intercept_, rtol=1e-12)


def test_bound_values_by_hand():
    # R = 2, ‖u‖² = 4, C = 0.1: PA 16; PA-I max(4, 10)·4 = 40; PA-II (4 + 5)·4 = 36.
    assert bounds.pa_bound(2.0, 4.0) == pytest.approx(16.0)
    assert bounds.pa1_bound(2.0, 0.1, 4.0) == pytest.approx(40.0)
    assert bounds.pa2_bound(2.0, 0.1, 4.0) == pytest.approx(36.0)
    # With comparator losses: PA-I adds 2C Σ ℓ*, PA-II 2C Σ ℓ*².
    assert bounds.pa1_bound(2.0, 0.1, 4.0, loss_sum=5.0) == pytest.approx(10 * (4 + 1))
    assert bounds.pa2_bound(2.0, 0.1, 4.0, sq_loss_sum=5.0) == pytest.approx(9 * (4 + 1))


@pytest.mark.parametrize("C", [0, -1.0, float("nan")])
def test_bad_C_is_one_line_error(C):
    with pytest.raises(LinclsInputError) as info:
        PassiveAggressive(C=C).fit(SEED001_X, SEED001_Y)
    assert info.value.field == "C"
    assert str(info.value).startswith("C: must be a number in (0, inf), got")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("params", "field"), [({"variant": "pa3"}, "variant"), ({"bias": "r2"}, "bias")]
)
def test_bad_choices(params, field):
    with pytest.raises(LinclsInputError) as info:
        PassiveAggressive(**params).fit(SEED001_X, SEED001_Y)
    assert info.value.field == field


def test_config_error_names_the_field():
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(["learner=passive_aggressive", "learner.C=0"]))
    assert info.value.field == "learner.C"


def test_sklearn_bias_rule_claims_no_bound():
    data = make_separable(100, 4, margin=0.1, radius=1.0, offset=0.2, seed=1, n_test=0)
    model = PassiveAggressive(bias="sklearn").fit(data.X, data.y)
    evaluation = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    assert "pa1" not in evaluation.values
    assert "not PA on (x, c)" in evaluation.skipped["pa1"]


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
@BOUND_SETTINGS
@given(
    bias_case=st.sampled_from(["feature", "none"]).flatmap(
        lambda bias: st.tuples(st.just(bias), certified_data(homogeneous=bias == "none"))
    ),
    C=st.sampled_from([0.001, 0.1, 1.0, 10.0]),
    shuffle=st.booleans(),
)
def test_mistakes_within_pa_bounds(variant, bias_case, C, shuffle):
    bias, data = bias_case
    model = PassiveAggressive(
        variant=variant, C=C, bias=bias, max_passes=30, shuffle=shuffle, random_state=3
    )
    values = bound_values(model, data)
    assert set(values) == {variant}


@pytest.mark.parametrize("variant", ["pa", "pa1", "pa2"])
def test_runner_logs_the_variant_bound(variant):
    config = compose_config(
        [
            "learner=passive_aggressive",
            f"learner.variant={variant}",
            "dataset.n=200",
            "dataset.d=5",
            "dataset.n_test=50",
        ]
    )
    outcome = measure(config)
    assert outcome.metrics["mistakes"] <= outcome.metrics[f"bound.{variant}"]
    assert outcome.metrics["updates"] >= outcome.metrics["mistakes"]
    assert outcome.tags["bound.tightest"] == variant


def test_same_seed_same_bits():
    X, y = dense_problem(300, 6, seed=8)
    runs = [PassiveAggressive(variant="pa2", shuffle=True, random_state=5).fit(X, y) for _ in "ab"]
    assert runs[0].coef_.tobytes() == runs[1].coef_.tobytes()


@pytest.mark.parametrize(("variant", "C", "bound"), [("pa", 1.0, 16.0), ("pa2", 2.0, 16 * 1.25)])
def test_orthonormal_instance(variant, C, bound):
    # x_t = e_t: each example errs once, ℓ = 1 and ‖x‖² = 1; PA's (R/γ)² = d is attained.
    data = make_orthonormal(16)
    model = PassiveAggressive(variant=variant, C=C, bias="none").fit(data.X, data.y)
    facts = bounds.RunFacts(model, data.radius, certificate_of(data, model))
    assert model.mistakes_ == 16
    assert bounds.evaluate(facts).values[variant] == pytest.approx(bound, rel=1e-12)
