"""MIRA: seed 003's step by hand (cap included), mistakes vs updates, the PA-I-on-Kesler bound, bad
input, and a logged run."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _multiclass_cases import SEED001_MC_X, SEED001_MC_Y, SEED001_W, bias_and_multiclass_data
from _online_cases import BOUND_SETTINGS
from conftest import compose_config, runs_of
from hypothesis import given
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, runner
from lincls.data import make_multiclass
from lincls.errors import LinclsInputError
from lincls.evaluation import prepare
from lincls.geometry.certificates import certificate_of
from lincls.learners import MIRA, MulticlassPerceptron


@parametrize_with_checks([MIRA(), MIRA(max_step=0.05, bias="none", shuffle=True, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --- seed 003's step on seed 001's 3-class example ------------------------------------------
# x = [-2, 3, 1], true class 2, predicted class 1 (scores 11, 13, 8), x·x = 14:
# τ = ((w_1 − w_2)·x + 1)/(2x·x) = (13 − 8 + 1)/28 = 3/14.
UNCAPPED = np.array([[-2, 2, 1], [3 / 7, 33 / 14, 53 / 14], [4 / 7, 65 / 14, -25 / 14]])


@pytest.mark.parametrize("max_step", [1.0, 3 / 14, float("inf")])
@pytest.mark.parametrize("sparse", [False, True])
def test_uncapped_step_by_hand(max_step, sparse):
    X = sp.csr_matrix(SEED001_MC_X) if sparse else SEED001_MC_X
    model = MIRA(max_step=max_step, bias="none", max_passes=1)
    model.fit(X, SEED001_MC_Y, coef_init=SEED001_W)
    np.testing.assert_allclose(model.coef_, UNCAPPED, rtol=1e-15, atol=1e-15)
    assert (model.mistakes_, model.updates_) == (1, 1)
    # After the step the true class leads by exactly 1: scores 11, 10, 11 → w_2·x − w_1·x = 1.
    scores = model.coef_ @ SEED001_MC_X[0]
    np.testing.assert_allclose(scores, [11.0, 10.0, 11.0], rtol=1e-15)


def test_numerator_is_predicted_minus_true():
    # Seed 003's pseudocode writes (w_true − w_pred)·x + 1 = −4 here: a step of −1/7, the wrong
    # way. Its prose, which we follow, gives +3/14 and moves x towards the true class.
    model = MIRA(bias="none", max_passes=1).fit(SEED001_MC_X, SEED001_MC_Y, coef_init=SEED001_W)
    moved = model.coef_ - SEED001_W
    np.testing.assert_allclose(moved[2], 3 / 14 * SEED001_MC_X[0], rtol=1e-15)
    np.testing.assert_allclose(moved[1], -3 / 14 * SEED001_MC_X[0], rtol=1e-15)


def test_capped_step_by_hand():
    # M = 0.1 < 3/14: τ = 0.1, w_1 = [0, 3, 4] − 0.1x, w_2 = [1, 4, −2] + 0.1x.
    model = MIRA(max_step=0.1, bias="none", max_passes=1)
    model.fit(SEED001_MC_X, SEED001_MC_Y, coef_init=SEED001_W)
    expected = [[-2, 2, 1], [0.2, 2.7, 3.9], [0.8, 4.3, -1.9]]
    np.testing.assert_allclose(model.coef_, expected, rtol=1e-15)
    assert (model.mistakes_, model.updates_) == (1, 1)


def test_bias_feature_step_by_hand():
    # With the constant feature 1: x·x = 15 and the scores are still 11, 13, 8 (zero biases):
    # τ = 6/30 = 0.2; the biases move by ∓0.2 too.
    model = MIRA(max_passes=1).fit(SEED001_MC_X, SEED001_MC_Y, coef_init=SEED001_W)
    np.testing.assert_allclose(
        model.coef_, [[-2, 2, 1], [0.4, 2.4, 3.8], [0.6, 4.6, -1.8]], rtol=1e-15
    )
    np.testing.assert_allclose(model.intercept_, [0.0, -0.2, 0.2], rtol=1e-15)


def test_mistake_without_update_on_the_zero_vector():
    # x = 0 scores every class 0 → class 0 predicted, class 1 true: a mistake, but τ is
    # undefined (x·x = 0) and nothing can move. The next example (class 0) is right on the tie.
    X = np.array([[0.0, 0.0], [1.0, 0.0]])
    model = MIRA(bias="none", max_passes=3).fit(X, [1, 0])
    assert (model.mistakes_, model.updates_) == (1, 0)
    assert model.converged_ and model.n_passes_ == 1
    np.testing.assert_array_equal(model.coef_, np.zeros((2, 2)))


def test_updates_only_on_mistakes_and_dense_equals_csr():
    data = make_multiclass(300, 8, 4, margin=0.01, radius=1.0, seed=3, n_test=0)
    X = data.X * (np.abs(data.X) > 0.1)
    dense = MIRA(max_step=0.5, max_passes=5, stop_when_converged=False).fit(X, data.y)
    csr = MIRA(max_step=0.5, max_passes=5, stop_when_converged=False).fit(sp.csr_matrix(X), data.y)
    assert dense.coef_.tobytes() == csr.coef_.tobytes()
    assert dense.intercept_.tobytes() == csr.intercept_.tobytes()
    assert dense.updates_ == dense.mistakes_ > 0


def test_same_seed_same_bits():
    data = make_multiclass(200, 6, 4, margin=0.01, radius=1.0, seed=6, n_test=0)
    runs = [MIRA(shuffle=True, random_state=7, max_passes=4).fit(data.X, data.y) for _ in "ab"]
    assert runs[0].coef_.tobytes() == runs[1].coef_.tobytes()


# --- the bound -----------------------------------------------------------------------------
def test_bound_value_by_hand():
    # R = 2 (2R² = 8), ‖U‖² = 4: M = 0.1 → max(8, 10)·4 = 40; M = 1 → 8·4 = 32; M = ∞ → 32.
    assert bounds.mira_bound(2.0, 0.1, 4.0) == pytest.approx(40.0)
    assert bounds.mira_bound(2.0, 1.0, 4.0) == pytest.approx(32.0)
    assert bounds.mira_bound(2.0, float("inf"), 4.0) == pytest.approx(32.0)
    # With a large cap it is the multiclass perceptron's 2R²/γ² (‖U‖² = 1/γ²).
    assert bounds.mira_bound(2.0, 1.0, 1 / 0.25) == bounds.multiclass_perceptron_bound(2.0, 0.5)


def test_perceptron_bound_is_not_claimed_for_mira():
    data = make_multiclass(60, 4, 3, margin=0.05, radius=1.0, seed=2, n_test=0)
    model = MIRA().fit(data.X, data.y)
    evaluation = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    assert set(evaluation.values) == {"mira_pa1_kesler"}
    assert "not a multiclass_perceptron" in evaluation.skipped["multiclass_perceptron"]


@BOUND_SETTINGS
@given(
    bias_case=bias_and_multiclass_data(),
    max_step=st.sampled_from([1e-3, 0.1, 1.0, 50.0, float("inf")]),
    shuffle=st.booleans(),
)
def test_mistakes_within_the_bound(bias_case, max_step, shuffle):
    bias, data = bias_case
    model = MIRA(max_step=max_step, bias=bias, max_passes=40, shuffle=shuffle, random_state=1)
    model.fit(data.X, data.y)
    facts = bounds.RunFacts(model, data.radius, certificate_of(data, model))
    values = bounds.evaluate(facts).values
    assert set(values) == {"mira_pa1_kesler"}
    assert bounds.holds(model.mistakes_, values["mira_pa1_kesler"])


def test_mira_and_perceptron_on_the_same_data():
    # Both converge on separable data; both stay within 2R'²/γ² there (cap ≥ 1/(2R'²)).
    data = make_multiclass(400, 10, 5, margin=0.02, radius=1.0, seed=9, n_test=0)
    mira = MIRA(max_passes=200).fit(data.X, data.y)
    perceptron = MulticlassPerceptron(max_passes=200).fit(data.X, data.y)
    limit = bounds.multiclass_perceptron_bound(np.sqrt(2.0), 0.02)
    assert mira.converged_ and perceptron.converged_
    assert mira.score(data.X, data.y) == perceptron.score(data.X, data.y) == 1.0
    assert max(mira.mistakes_, perceptron.mistakes_) <= limit


# --- bad input, config, a logged run -------------------------------------------------------
@pytest.mark.parametrize("max_step", [0, -1.0, float("nan"), "big"])
def test_bad_max_step_is_one_line_error(max_step):
    with pytest.raises(LinclsInputError) as info:
        MIRA(max_step=max_step).fit(SEED001_MC_X, SEED001_MC_Y)
    assert info.value.field == "max_step"
    assert str(info.value).startswith("max_step: must be a number in (0, inf), got")
    assert "\n" not in str(info.value)


def test_config_error_names_the_field():
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(["learner=mira", "learner.max_step=0"]))
    assert info.value.field == "learner.max_step"


def test_runner_logs_the_bound(store):
    config = compose_config(
        [
            "learner=mira",
            "learner.max_step=0.001",
            "dataset=multiclass",
            "dataset.n=300",
            "dataset.d=6",
            "dataset.n_classes=4",
            "dataset.n_test=100",
            "passes=100",
            f"tracking.uri={store}",
            "certificates.svm=false",  # the generator's U, whose bound is computed by hand
            "certificates.best=false",
        ]
    )
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    logged = run.data.metrics
    assert run.data.params["learner.max_step"] == "0.001"
    assert logged["mistakes"] == outcome.metrics["mistakes"] > 0
    assert logged["updates"] == logged["mistakes"]
    # max(2R'², 1/M)/γ² with R'² = 1 + 1, M = 0.001, γ = 0.05: 1000/0.0025.
    assert logged["bound.mira_pa1_kesler"] == pytest.approx(400_000.0, rel=1e-9)
    assert logged["margin"] == pytest.approx(0.05, rel=1e-12)
    assert logged["train_accuracy"] == 1.0
    # 400,000 is above the 100 passes × 300 rows the run could present: vacuous, never tightest
    assert run.data.tags["bounds.vacuous"] == "mira_pa1_kesler"
    assert "bound.tightest" not in run.data.tags and "bound_ratio.mira_pa1_kesler" not in logged
    assert run.data.tags["bound_violated"] == "false"
