"""Winnow and BalancedWinnow: hand-computed steps, a direct loop, Littlestone's bounds, the
k log n against n growth on disjunctions, the data generator, bad input, logged runs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from _online_cases import BOUND_SETTINGS
from conftest import compose_config, runs_of
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, runner
from lincls.bounds.winnow import disjunction_size
from lincls.data import make_disjunction, make_separable
from lincls.errors import LinclsInputError
from lincls.evaluation import prepare
from lincls.experiments.benchmarks.perceptron import dense_problem
from lincls.geometry.certificates import certificate_of
from lincls.learners import BalancedWinnow, Perceptron, Winnow

NEGATIVE_DATA = "the check's data hold negative values, which Winnow rejects (features must be ≥ 0)"
MONOTONE_ONLY = (
    "Winnow's weights are ≥ 0, so it learns only rules increasing in every feature; the check's "
    "two blobs (shifted to ≥ 0) are not split by one and its accuracy stays near 0.5"
)


def _winnow_xfails(estimator):
    if not isinstance(estimator, Winnow):
        return {}
    return {
        "check_classifier_not_supporting_multiclass": NEGATIVE_DATA,
        "check_classifiers_train": MONOTONE_ONLY,
    }


@parametrize_with_checks(
    [Winnow(), Winnow(variant="winnow1"), BalancedWinnow()],
    expected_failed_checks=_winnow_xfails,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# Four boolean attributes, θ = 4, α = 2 (one pass):
# x1 = (1,0,0,0)+: 1 < 4, false negative → w = [2, 1, 1, 1]
# x2 = (1,1,1,1)+: 5 ≥ 4 correct;  x3 = (0,1,1,0)−: 2 < 4 correct
# x4 = (1,0,0,0)+: 2 < 4, false negative → w = [4, 1, 1, 1]
# x5 = (1,1,1,0)−: 6 ≥ 4, false positive → Winnow2 w = [2, ½, ½, 1]; Winnow1 w = [0, 0, 0, 1]
HAND_X = np.array(
    [[1, 0, 0, 0], [1, 1, 1, 1], [0, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 0]], dtype=float
)
HAND_Y = np.array([1, 1, -1, 1, -1])


@pytest.mark.parametrize(
    ("variant", "weights"), [("winnow2", [2.0, 0.5, 0.5, 1.0]), ("winnow1", [0.0, 0.0, 0.0, 1.0])]
)
@pytest.mark.parametrize("sparse", [False, True])
def test_one_pass_by_hand(variant, weights, sparse):
    X = sp.csr_matrix(HAND_X) if sparse else HAND_X
    model = Winnow(variant=variant, max_passes=1).fit(X, HAND_Y)
    np.testing.assert_array_equal(model.coef_, [weights])
    np.testing.assert_array_equal(model.intercept_, [-4.0])
    np.testing.assert_array_equal(model.mistake_steps_, [0, 3, 4])
    assert (model.mistakes_, model.updates_, model.threshold_) == (3, 3, 4.0)
    assert model.boolean_input_ and model.standard_init_


def test_a_tie_is_positive():
    # After two promotions w = [4, 1, 1, 1]: x = (1,0,0,0) scores exactly θ = 4 → positive.
    model = Winnow(max_passes=1).fit(HAND_X[:4], HAND_Y[:4])
    np.testing.assert_array_equal(model.coef_, [[4.0, 1.0, 1.0, 1.0]])
    assert model.decision_function(HAND_X[:1])[0] == 0.0
    assert model.predict(HAND_X[:1])[0] == 1
    # the next pass is clean because of the tie rule
    model = Winnow(max_passes=5).fit(HAND_X[:4], HAND_Y[:4])
    np.testing.assert_array_equal(model.mistakes_per_pass_, [2, 0])


def test_balanced_by_hand():
    # θ = 0, w⁺ = w⁻ = 1: x1, x2 score 0 ≥ 0 (positive, correct); x3 (0,1,1,0)− scores 0 → a
    # mistake: w⁺ ← [1, ½, ½, 1], w⁻ ← [1, 2, 2, 1]; x4 scores 0 (correct); x5 scores −3 (correct).
    model = BalancedWinnow(max_passes=1).fit(HAND_X, HAND_Y)
    np.testing.assert_array_equal(model.weights_positive_, [1.0, 0.5, 0.5, 1.0])
    np.testing.assert_array_equal(model.weights_negative_, [1.0, 2.0, 2.0, 1.0])
    np.testing.assert_array_equal(model.coef_, [[0.0, -1.5, -1.5, 0.0]])
    np.testing.assert_array_equal(model.mistake_steps_, [2])


def direct_winnow(X, y, alpha, theta, passes, variant):
    """Littlestone's loop written out (α^x per active feature); (weights, mistakes)."""
    w = np.ones(X.shape[1])
    mistakes = 0
    for _ in range(passes):
        for x, label in zip(X, y, strict=True):
            if (w @ x >= theta) == (label > 0):
                continue
            mistakes += 1
            active = x != 0
            if label > 0:
                w[active] *= alpha ** x[active]
            elif variant == "winnow1":
                w[active] = 0.0
            else:
                w[active] /= alpha ** x[active]
    return w, mistakes


def direct_balanced(X, y, alpha, theta, passes):
    w_pos, w_neg = np.ones(X.shape[1]), np.ones(X.shape[1])
    mistakes = 0
    for _ in range(passes):
        for x, label in zip(X, y, strict=True):
            if ((w_pos - w_neg) @ x >= theta) == (label > 0):
                continue
            mistakes += 1
            w_pos *= alpha ** (label * x)
            w_neg *= alpha ** (-label * x)
    return w_pos - w_neg, mistakes


@pytest.mark.parametrize("variant", ["winnow2", "winnow1"])
def test_equals_direct_loop_on_real_features(variant):
    rng = np.random.default_rng(3)
    X = rng.random((200, 12)) * (rng.random((200, 12)) < 0.4)
    y = np.where(X[:, 0] + X[:, 5] > 0.5, 1, -1)
    model = Winnow(variant=variant, alpha=1.5, threshold=3.0, max_passes=4)
    model.set_params(stop_when_converged=False).fit(X, y)
    w, mistakes = direct_winnow(X, y, 1.5, 3.0, 4, variant)
    assert model.mistakes_ == mistakes > 0 and not model.boolean_input_
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-12)
    csr = Winnow(variant=variant, alpha=1.5, threshold=3.0, max_passes=4)
    csr.set_params(stop_when_converged=False).fit(sp.csr_matrix(X), y)
    assert csr.coef_.tobytes() == model.coef_.tobytes()


def test_balanced_equals_direct_loop_with_signed_features():
    X, y = dense_problem(300, 6, seed=4)
    model = BalancedWinnow(alpha=1.3, threshold=0.5, max_passes=3, stop_when_converged=False)
    model.fit(X, y)
    coef, mistakes = direct_balanced(X, y, 1.3, 0.5, 3)
    assert model.mistakes_ == mistakes > 0
    np.testing.assert_allclose(model.coef_[0], coef, rtol=1e-10, atol=1e-12)
    csr = BalancedWinnow(alpha=1.3, threshold=0.5, max_passes=3, stop_when_converged=False)
    csr.fit(sp.csr_matrix(X), y)
    assert csr.coef_.tobytes() == model.coef_.tobytes()


def test_bound_values_by_hand():
    # r = 3, n = θ = 1024, α = 2: Winnow2 2 + 3·3·(1 + 10) = 101; Winnow1 2·3·11 + 1 = 67.
    assert bounds.winnow2_bound(3, 1024) == pytest.approx(101.0, rel=1e-15)
    assert bounds.winnow1_bound(3, 1024) == pytest.approx(67.0, rel=1e-15)
    # α = 4, θ = 64, n = 100, r = 2, log₄ 64 = 3: Winnow2 5·2·4 + 4·100/(3·64),
    # Winnow1 4·2·4 + 100/64
    assert bounds.winnow2_bound(2, 100, 4.0, 64.0) == pytest.approx(40 + 400 / 192, rel=1e-14)
    assert bounds.winnow1_bound(2, 100, 4.0, 64.0) == pytest.approx(32 + 100 / 64, rel=1e-14)


def test_disjunction_data():
    data = make_disjunction(50, 4, 3000, seed=2, n_test=500)
    assert data.X.shape == (3000, 50) and data.X_test.shape == (500, 50)
    assert set(np.unique(data.X)) == {0.0, 1.0}
    np.testing.assert_array_equal(data.y, np.where(data.X[:, data.relevant].any(axis=1), 1, -1))
    np.testing.assert_array_equal(
        data.y_test, np.where(data.X_test[:, data.relevant].any(axis=1), 1, -1)
    )
    assert data.relevant.shape == (4,)
    assert data.margin == pytest.approx(1 / (2 * math.sqrt(4)), rel=1e-12)
    assert abs(data.y.mean()) < 0.05  # density 1 − 2^(−1/k): each label with probability ½
    again = make_disjunction(50, 4, 3000, seed=2, n_test=500)
    assert again.fingerprint == data.fingerprint
    model = Winnow().fit(data.X, data.y)
    assert disjunction_size(certificate_of(data, model)) == 4


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"k": 11}, "k"), ({"k": 0}, "k"), ({"density": 1.0}, "density"), ({"n": 0}, "n")],
)
def test_disjunction_bad_arguments(kwargs, field):
    with pytest.raises(LinclsInputError) as info:
        make_disjunction(**{"n_features": 10, "k": 2, "n": 20, **kwargs})
    assert info.value.field == field


def _mistakes(learner, n_features, seeds=(0, 1, 2)):
    total, bound_values = 0, set()
    for seed in seeds:
        data = make_disjunction(n_features, 3, 2000, seed=seed, n_test=0)
        learner.fit(data.X, data.y)
        facts = bounds.RunFacts(learner, data.radius, certificate_of(data, learner))
        values = bounds.evaluate(facts).values
        for value in values.values():
            assert bounds.holds(learner.mistakes_, value)
        bound_values.update(values.items())
        total += learner.mistakes_
    return total, dict(bound_values)


def test_winnow_grows_like_k_log_n_and_the_perceptron_like_n():
    # Kivinen, Warmuth & Auer (1997): on 3-of-n disjunctions with dense examples (≈ 0.21·n
    # attributes on) Winnow's mistakes grow with log n, the perceptron's with n. 3 seeds each,
    # 2,000 examples, up to 10 passes.
    winnow = {n: _mistakes(Winnow(), n) for n in (100, 1000)}
    perceptron = {n: _mistakes(Perceptron(), n) for n in (100, 1000)}
    assert {n: m for n, (m, _) in winnow.items()} == {100: 95, 1000: 162}
    assert {n: m for n, (m, _) in perceptron.items()} == {100: 496, 1000: 3307}
    # Littlestone: 2 + 3·3·(1 + log₂ n) = 70.79 and 100.69, per run
    assert winnow[100][1]["winnow2"] == pytest.approx(2 + 9 * (1 + math.log2(100)), rel=1e-12)
    assert winnow[1000][1]["winnow2"] == pytest.approx(2 + 9 * (1 + math.log2(1000)), rel=1e-12)
    winnow_ratio = winnow[1000][0] / winnow[100][0]
    perceptron_ratio = perceptron[1000][0] / perceptron[100][0]
    assert winnow_ratio < 2.0 < 5.0 < perceptron_ratio
    assert perceptron_ratio > 3 * winnow_ratio


@BOUND_SETTINGS
@given(
    n_features=st.integers(1, 64),
    k_share=st.floats(0.0, 1.0),
    n=st.integers(2, 60),
    density=st.one_of(st.none(), st.floats(0.02, 0.9)),
    seed=st.integers(0, 2**20),
    alpha=st.sampled_from([1.1, 1.5, 2.0, 3.0, 8.0]),
    theta_scale=st.sampled_from([None, 0.001, 0.01, 0.5, 2.0, 10.0]),
    variant=st.sampled_from(["winnow2", "winnow1"]),
    shuffle=st.booleans(),
)
def test_mistakes_within_littlestone_bounds(
    n_features, k_share, n, density, seed, alpha, theta_scale, variant, shuffle
):
    k = 1 + int(k_share * min(n_features - 1, 7))
    data = make_disjunction(n_features, k, n, seed=seed, n_test=0, density=density)
    assume(np.unique(data.y).shape[0] == 2)
    # θ from 1/α up (Theorem 8's condition): thresholds below 1 are in
    theta = None if theta_scale is None else max(1.0 / alpha, theta_scale * n_features)
    model = Winnow(
        alpha=alpha, threshold=theta, variant=variant, max_passes=30, shuffle=shuffle,
        random_state=1,
    )  # fmt: skip
    model.fit(data.X, data.y)
    facts = bounds.RunFacts(model, data.radius, certificate_of(data, model))
    evaluation = bounds.evaluate(facts)
    assert set(evaluation.values) == {variant}, evaluation.skipped
    assert bounds.holds(model.mistakes_, evaluation.values[variant])


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: BalancedWinnow(), "not a Winnow learner"),
        (lambda: Winnow(variant="winnow1"), "the learner's variant is 'winnow1', not 'winnow2'"),
        (
            lambda: Winnow(threshold=0.4),
            "the threshold θ = 0.4 is below 1/α = 0.5 (Littlestone's Theorem 8 needs θ ≥ 1/α)",
        ),
        (
            lambda: Winnow(alpha=1.5, threshold=0.66),
            "the threshold θ = 0.66 is below 1/α = 0.666667",
        ),
    ],
)
def test_bound_skipped_with_its_reason(make, reason):
    data = make_disjunction(20, 2, 200, seed=1, n_test=0)
    model = make().fit(data.X, data.y)
    evaluation = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    assert evaluation.skipped["winnow2"].startswith(reason)


@pytest.mark.parametrize("variant", ["winnow2", "winnow1"])
@pytest.mark.parametrize("alpha", [1.1, 1.5, 2.0, 3.0, 8.0])
def test_thresholds_from_one_over_alpha_to_one_get_theorem_8(variant, alpha):
    # θ ∈ [1/α, 1) used to be skipped (θ < 1); Theorem 8 covers it. A relevant attribute alone
    # reaches θ there, so Winnow never errs on a positive: no promotion, every mistake a false
    # positive, each removing ≥ (1 − 1/α)θ (Winnow2) or θ (Winnow1) of the total weight n.
    data = make_disjunction(30, 3, 300, seed=4, n_test=0)
    for theta in (1.0 / alpha, 0.5 * (1.0 / alpha + 1.0)):
        model = Winnow(alpha=alpha, threshold=theta, variant=variant, max_passes=50).fit(
            data.X, data.y
        )
        evaluation = bounds.evaluate(
            bounds.RunFacts(model, data.radius, certificate_of(data, model))
        )
        assert set(evaluation.values) == {variant}, evaluation.skipped
        promotions = 3 * (math.log(theta) / math.log(alpha) + 1.0)
        expected = (
            (alpha + 1.0) * promotions + alpha * 30 / ((alpha - 1.0) * theta)
            if variant == "winnow2"
            else alpha * promotions + 30 / theta
        )
        assert evaluation.values[variant] == pytest.approx(expected, rel=1e-12)
        assert bounds.holds(model.mistakes_, evaluation.values[variant])
        positives = data.y == model.classes_[1]
        assert not positives[model.mistake_indices_].any()  # no false negative, no promotion
    # at θ = 1/α exactly the promotion term is 0: Winnow1's bound is αn, Winnow2's α²n/(α − 1)
    at_edge = bounds.winnow1_bound(3, 30, alpha, 1.0 / alpha)
    assert at_edge == pytest.approx(alpha * 30, rel=1e-12, abs=1e-9)
    at_edge = bounds.winnow2_bound(3, 30, alpha, 1.0 / alpha)
    assert at_edge == pytest.approx(alpha**2 * 30 / (alpha - 1.0), rel=1e-12, abs=1e-9)


def test_bound_needs_boolean_data_and_a_disjunction():
    data = make_disjunction(20, 2, 200, seed=1, n_test=0)
    model = Winnow().fit(data.X * 0.5, data.y)
    evaluation = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    assert evaluation.skipped["winnow2"] == "the training data are not boolean (0/1)"
    # a separable dataset's certificate is not a disjunction's
    other = make_separable(50, 3, margin=0.1, radius=1.0, seed=0, n_test=0)
    X = (other.X > 0).astype(float)
    model = Winnow().fit(X, other.y)
    facts = bounds.RunFacts(model, other.radius, certificate_of(other, model))
    assert "winnow2" in bounds.evaluate(facts).skipped


def test_perceptron_bound_applies_to_disjunctions():
    data = make_disjunction(100, 3, 500, seed=0, n_test=0)
    model = Perceptron().fit(data.X, data.y)
    facts = bounds.RunFacts(model, data.radius, certificate_of(data, model))
    value = bounds.evaluate(facts).values["novikoff_bias"]
    # (R² + 1)(1 + b²)/γ² with unit u = 1_R/√3, b = −1/(2√3), γ = 1/(2√3)
    assert value == pytest.approx((data.radius**2 + 1) * (1 + 1 / 12) * 12, rel=1e-12)
    assert model.mistakes_ <= value


@pytest.mark.parametrize("sparse", [False, True])
def test_negative_features_are_one_line_error(sparse):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.25]])
    with pytest.raises(LinclsInputError) as info:
        Winnow().fit(sp.csr_matrix(X) if sparse else X, [1, -1, 1])
    assert info.value.field == "X" and "\n" not in str(info.value)
    assert str(info.value) == (
        "X: Negative values in data: Winnow needs features ≥ 0, row 2 holds -0.25 "
        "(BalancedWinnow takes either sign)"
    )


@pytest.mark.parametrize("sparse", [False, True])
def test_a_factor_alpha_to_the_x_of_zero_is_one_line_naming_alpha(sparse):
    """Balanced Winnow divides by α^{x_j}: 2^-1100 is 0 in floats, and the run ended in numba's
    ZeroDivisionError (data of radius 1e50). Below the limit it runs."""
    X = np.array([[-1100.0, 0.0], [0.0, 1.0], [0.0, 2.0]])
    with pytest.raises(LinclsInputError) as info:
        BalancedWinnow(alpha=2.0).fit(sp.csr_matrix(X) if sparse else X, [1, -1, 1])
    assert str(info.value) == (
        "alpha: alpha^x is 0 in floats for the lowest x_j = -1.1e+03, and the update divides by "
        "it: alpha must be below e^(744.44/1.1e+03) = 1.9675 for these data (or scale them), "
        "got 2"
    )
    BalancedWinnow(alpha=1.96).fit(sp.csr_matrix(X) if sparse else X, [1, -1, 1])  # it runs


def test_weights_whose_square_passes_a_float_log_no_hyperplane():
    """alpha = 1e308 on boolean data: each weight stays finite (1e308) but ‖w‖² does not; the
    run ended in a NaN histogram's ValueError traceback. It is a rule without a hyperplane, as a
    diverging rule's run is (test_bounds_every_option)."""
    from lincls.evaluation import fit_and_evaluate

    data = make_disjunction(n=200, n_features=20, k=3, seed=0)
    outcome = fit_and_evaluate(Winnow(alpha=1e308), data)
    assert outcome.tags["hyperplane.note"] == (
        "the weights' squared norm is past the float range: no hyperplane"
    )
    assert not any(k.startswith("hyperplane.") for k in outcome.metrics)


@pytest.mark.parametrize(
    ("make", "field", "message"),
    [
        (lambda: Winnow(alpha=1.0), "alpha", "alpha: must be a number in (1, inf), got 1.0"),
        (lambda: Winnow(alpha=0.5), "alpha", "alpha: must be a number in (1, inf), got 0.5"),
        (lambda: Winnow(threshold=0), "threshold", "threshold: must be a number in (0, inf)"),
        (lambda: Winnow(threshold=-3.0), "threshold", "threshold: must be a number in (0, inf)"),
        (lambda: Winnow(variant="winnow3"), "variant", "variant: must be one of 'winnow2'"),
        (lambda: BalancedWinnow(alpha=1), "alpha", "alpha: must be a number in (1, inf)"),
        (lambda: BalancedWinnow(threshold=-1.0), "threshold", "threshold: must be a number in"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, field, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit(HAND_X, HAND_Y)
    assert info.value.field == field
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_starting_weights():
    with pytest.raises(LinclsInputError) as info:
        Winnow().fit(HAND_X, HAND_Y, coef_init=[1.0, 0.0, 1.0, 1.0])
    assert info.value.field == "coef_init"
    with pytest.raises(LinclsInputError) as info:
        Winnow().fit(HAND_X, HAND_Y, intercept_init=[-4.0])
    assert info.value.field == "intercept_init"
    model = Winnow(max_passes=1).fit(HAND_X, HAND_Y, coef_init=[4.0, 1.0, 1.0, 1.0])
    assert not model.standard_init_ and model.mistake_steps_.tolist() == [4]
    # w⁺ = 2, w⁻ = 1: x3 (0,1,1,0)− scores 2 ≥ 0, a mistake → w⁺ = [2,1,1,2], w⁻ = [1,2,2,1]
    model = BalancedWinnow(max_passes=1).fit(HAND_X, HAND_Y, coef_init=[2.0] * 4 + [1.0] * 4)
    np.testing.assert_array_equal(model.coef_, [[1.0, -1.0, -1.0, 1.0]])
    assert model.mistake_steps_.tolist() == [2] and not model.standard_init_


@pytest.mark.parametrize(
    ("overrides", "field"),
    [(["learner=winnow", "learner.alpha=1"], "learner.alpha"),
     (["learner=winnow", "learner.threshold=0"], "learner.threshold"),
     (["dataset=disjunction", "dataset.k=0"], "dataset.k")],
)  # fmt: skip
def test_config_error_names_the_field(overrides, field):
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(overrides))
    assert info.value.field == field


def test_logged_winnow_run(store):
    config = compose_config(
        [
            "learner=winnow",
            "dataset=disjunction",
            "dataset.n_features=256",
            "dataset.k=2",
            "dataset.n=500",
            "dataset.n_test=200",
            f"tracking.uri={store}",
        ]
    )
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    m = run.data.metrics
    assert run.info.status == "FINISHED" and run.data.tags["dataset"] == "disjunction"
    assert m["mistakes"] == outcome.learner.mistakes_ > 0
    assert m["bound.winnow2"] == pytest.approx(2 + 3 * 2 * (1 + 8), rel=1e-12)  # 56
    assert m["mistakes"] <= m["bound.winnow2"]
    assert m["margin"] == pytest.approx(1 / (2 * math.sqrt(2)), rel=1e-12)
    assert run.data.tags["bound.tightest"] == "winnow2"
    assert m["test_accuracy"] > 0.9


def test_logged_balanced_winnow_run(store):
    config = compose_config(
        ["learner=balanced_winnow", "dataset.n=300", "dataset.d=5", f"tracking.uri={store}"]
    )
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    m, tags = run.data.metrics, run.data.tags
    assert run.info.status == "FINISHED" and tags["learner"] == "balanced_winnow"
    assert m["mistakes"] == outcome.learner.mistakes_ == m["updates"] > 0
    assert not any(k.startswith("bound.") for k in m)
    assert "winnow2: not a Winnow learner" in tags["bounds.skipped"]
    assert tags["bounds.none"].startswith("no mistake bound applies")
