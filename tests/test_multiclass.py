"""MulticlassPerceptron: seed 001's 3-class example, the Kesler rule, certified multiclass data, the
2R²/γ² bound, bad input, and a logged run."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _multiclass_cases import (
    SEED001_MC_X,
    SEED001_MC_Y,
    SEED001_W,
    SEED001_x,
    bias_and_multiclass_data,
)
from _online_cases import BOUND_SETTINGS
from conftest import compose_config, runs_of
from hypothesis import given
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, runner
from lincls.data import make_multiclass, make_separable
from lincls.errors import LinclsInputError
from lincls.evaluation import measure, prepare
from lincls.geometry import MulticlassCertificate, certify_multiclass, multiclass_margins
from lincls.geometry.certificates import certificate_of
from lincls.learners import MIRA, MulticlassPerceptron
from lincls.learners._multiclass_base import scores_dense

MIRA_UNCAPPED = MIRA(max_step=float("inf"), bias="none")


@parametrize_with_checks(
    [MulticlassPerceptron(), MulticlassPerceptron(bias="none", shuffle=True, random_state=0)]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --- seed 001 §9.4.1 -----------------------------------------------------------------------
def test_seed001_scores_and_argmax():
    scores = np.empty(3)
    predicted = scores_dense(SEED001_x[None, :], 0, SEED001_W, np.zeros(3), scores)
    np.testing.assert_array_equal(scores, [11.0, 13.0, 8.0])
    assert predicted == 1


@pytest.mark.parametrize("sparse", [False, True])
def test_seed001_update_rows(sparse):
    # True class 2, predicted 1: w_1 − x = [2, 0, 3], w_2 + x = [−1, 7, −1]; w_0 stays.
    X = sp.csr_matrix(SEED001_MC_X) if sparse else SEED001_MC_X
    model = MulticlassPerceptron(bias="none", max_passes=1).fit(
        X, SEED001_MC_Y, coef_init=SEED001_W
    )
    np.testing.assert_array_equal(model.coef_, [[-2, 2, 1], [2, 0, 3], [-1, 7, -1]])
    assert (model.mistakes_, model.updates_) == (1, 1)
    np.testing.assert_array_equal(model.mistake_steps_, [0])
    np.testing.assert_array_equal(model.mistake_indices_, [0])
    np.testing.assert_array_equal(model.predict(SEED001_MC_X), SEED001_MC_Y)
    assert model.zero_init_ is False


def test_seed001_with_string_labels_and_bias():
    # Any label values; row c belongs to classes_[c]. The bias feature moves by ±1 too.
    labels = np.array(["ant", "bee", "cat"])
    model = MulticlassPerceptron(max_passes=1).fit(
        SEED001_MC_X, labels[SEED001_MC_Y], coef_init=SEED001_W
    )
    np.testing.assert_array_equal(model.classes_, labels)
    np.testing.assert_array_equal(model.coef_[1:], [[2, 0, 3], [-1, 7, -1]])
    np.testing.assert_array_equal(model.intercept_, [0.0, -1.0, 1.0])


def test_ties_go_to_the_lowest_class_index():
    # From W = 0 every score is 0: the prediction is class 0, so a class-0 example is right.
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    model = MulticlassPerceptron(bias="none", max_passes=1).fit(X, [0, 2, 1])
    np.testing.assert_array_equal(model.mistake_indices_, [1, 2])
    zero = MulticlassPerceptron(bias="none").fit(X, [0, 2, 1])
    zero.coef_[:] = 0.0
    np.testing.assert_array_equal(zero.predict(X), [0, 0, 0])


def test_two_classes_decision_function_is_the_score_difference():
    X, y = SEED001_MC_X[:2], np.array([5, 9])
    model = MulticlassPerceptron().fit(X, y)
    assert model.coef_.shape == (2, 3)
    scores = X @ model.coef_.T + model.intercept_
    np.testing.assert_array_equal(model.decision_function(X), scores[:, 1] - scores[:, 0])
    np.testing.assert_array_equal(model.predict(X), y)


def test_dense_and_csr_agree_bitwise():
    data = make_multiclass(300, 8, 4, margin=0.01, radius=1.0, seed=3, n_test=0)
    X = data.X * (np.abs(data.X) > 0.1)  # zeros, so the CSR rows are really sparse
    dense = MulticlassPerceptron(max_passes=5, stop_when_converged=False).fit(X, data.y)
    csr = MulticlassPerceptron(max_passes=5, stop_when_converged=False)
    csr.fit(sp.csr_matrix(X), data.y)
    assert dense.coef_.tobytes() == csr.coef_.tobytes()
    assert dense.intercept_.tobytes() == csr.intercept_.tobytes()
    np.testing.assert_array_equal(dense.mistake_steps_, csr.mistake_steps_)


def test_learning_rate_only_scales_the_weights_from_zero():
    data = make_multiclass(200, 5, 3, margin=0.02, radius=1.0, seed=4, n_test=0)
    one = MulticlassPerceptron(lr=1.0, max_passes=50).fit(data.X, data.y)
    half = MulticlassPerceptron(lr=0.5, max_passes=50).fit(data.X, data.y)
    np.testing.assert_array_equal(one.mistake_steps_, half.mistake_steps_)
    np.testing.assert_array_equal(half.coef_, 0.5 * one.coef_)  # halving is exact in binary


def test_partial_fit_continues_the_record():
    data = make_multiclass(120, 4, 3, margin=0.05, radius=1.0, seed=5, n_test=0)
    whole = MulticlassPerceptron(max_passes=1).fit(data.X, data.y)
    parts = MulticlassPerceptron()
    for rows in np.array_split(np.arange(120), 4):
        parts.partial_fit(data.X[rows], data.y[rows], classes=[0, 1, 2])
    np.testing.assert_array_equal(parts.coef_, whole.coef_)
    np.testing.assert_array_equal(parts.mistake_steps_, whole.mistake_steps_)
    assert parts.mistakes_ == whole.mistakes_ and parts.n_passes_ == 4


def test_same_seed_same_bits():
    data = make_multiclass(200, 6, 4, margin=0.01, radius=1.0, seed=6, n_test=0)
    runs = [
        MulticlassPerceptron(shuffle=True, random_state=7, max_passes=4).fit(data.X, data.y)
        for _ in "ab"
    ]
    assert runs[0].coef_.tobytes() == runs[1].coef_.tobytes()
    np.testing.assert_array_equal(runs[0].mistake_indices_, runs[1].mistake_indices_)


# --- certified multiclass data -------------------------------------------------------------
@pytest.mark.parametrize(("n", "d", "k"), [(500, 20, 3), (60, 2, 5), (30, 1, 2), (50, 10, 10)])
def test_make_multiclass_attains_margin_and_radius(n, d, k):
    data = make_multiclass(n, d, k, margin=0.02, radius=3.0, seed=1, n_test=40)
    assert np.linalg.norm(data.U) == pytest.approx(1.0, rel=1e-12)
    assert data.margin == pytest.approx(0.02, rel=1e-12)
    assert data.radius == pytest.approx(3.0, rel=1e-12)
    gaps = multiclass_margins(data.X, data.y, data.U, np.zeros(k))
    assert gaps.min() == pytest.approx(0.02, rel=1e-12) and (gaps > 0).all()
    counts = np.bincount(data.y, minlength=k)
    assert counts.max() - counts.min() <= 1
    test_gaps = multiclass_margins(data.X_test, data.y_test, data.U, np.zeros(k))
    assert (test_gaps >= 0.02).all() and data.X_test.shape == (40, d)


def test_certificate_of_multiclass_data():
    data = make_multiclass(100, 5, 4, margin=0.03, radius=2.0, seed=2, n_test=0)
    model = MulticlassPerceptron().fit(data.X, data.y)
    cert = certificate_of(data, model)
    assert isinstance(cert, MulticlassCertificate) and cert.homogeneous
    assert cert.margin == pytest.approx(0.03, rel=1e-12)
    assert cert.radius == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"n": 2, "n_classes": 3}, "n"),
        ({"d": 1, "n_classes": 3}, "n_classes"),
        ({"n_classes": 1}, "n_classes"),
        ({"margin": 2.5}, "margin"),
        ({"margin": 0.0}, "margin"),
    ],
)
def test_make_multiclass_bad_input(params, field):
    args = {"n": 20, "d": 3, "n_classes": 3, "margin": 0.05, "radius": 1.0} | params
    with pytest.raises(LinclsInputError) as info:
        make_multiclass(**args)
    assert info.value.field == field and "\n" not in str(info.value)


# --- the bound -----------------------------------------------------------------------------
def test_bound_value_by_hand():
    # R = 2, γ = 0.5: 2·4/0.25 = 32.
    assert bounds.multiclass_perceptron_bound(2.0, 0.5) == pytest.approx(32.0)


def test_bound_on_binary_data_is_novikoff_with_bias():
    # Two classes from a binary separator (u, b): rows (−u, u)/√2, offsets (−b, b)/√2, margin
    # √2·γ, so 2(R² + 1)(1 + b²)/(2γ²) is Novikoff's (R² + 1)(1 + b²)/γ².
    data = make_separable(80, 4, margin=0.2, radius=1.0, offset=0.3, seed=3, n_test=0)
    model = MulticlassPerceptron(max_passes=100).fit(data.X, data.y)
    value = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    expected = (data.radius**2 + 1) * (1 + 0.3**2) / data.margin**2
    assert value.values == {"multiclass_perceptron": pytest.approx(expected, rel=1e-12)}


def test_bound_needs_a_start_from_zero_and_a_bias_for_offsets():
    data = make_separable(40, 3, margin=0.2, radius=1.0, offset=0.3, seed=4, n_test=0)
    model = MulticlassPerceptron(bias="none").fit(data.X, data.y)
    skipped = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    assert "offsets" in skipped.skipped["multiclass_perceptron"]
    model.fit(data.X, data.y, coef_init=np.ones((2, 3)))
    skipped = bounds.evaluate(bounds.RunFacts(model, data.radius, certificate_of(data, model)))
    assert "W = 0" in skipped.skipped["multiclass_perceptron"]


@BOUND_SETTINGS
@given(
    bias_case=bias_and_multiclass_data(),
    lr=st.sampled_from([0.01, 1.0, 30.0]),
    shuffle=st.booleans(),
)
def test_mistakes_within_the_bound(bias_case, lr, shuffle):
    bias, data = bias_case
    model = MulticlassPerceptron(
        lr=lr, bias=bias, max_passes=40, shuffle=shuffle, random_state=1
    ).fit(data.X, data.y)
    facts = bounds.RunFacts(model, data.radius, certificate_of(data, model))
    values = bounds.evaluate(facts).values
    assert set(values) == {"multiclass_perceptron"}
    assert bounds.holds(model.mistakes_, values["multiclass_perceptron"])


# --- bad input, config, a logged run -------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "field"),
    [({"lr": 0}, "lr"), ({"bias": "r2"}, "bias"), ({"max_passes": 0}, "max_passes")],
)
def test_bad_parameters_are_one_line_errors(params, field):
    with pytest.raises(LinclsInputError) as info:
        MulticlassPerceptron(**params).fit(SEED001_MC_X, SEED001_MC_Y)
    assert info.value.field == field and "\n" not in str(info.value)


def test_one_class_is_an_error():
    with pytest.raises(LinclsInputError) as info:
        MulticlassPerceptron().fit(SEED001_MC_X, [1, 1, 1])
    assert info.value.field == "y" and "one class" in str(info.value)


def test_config_error_names_the_field():
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(["learner=multiclass_perceptron", "learner.lr=0"]))
    assert info.value.field == "learner.lr"
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(["dataset=multiclass", "dataset.n_classes=1"]))
    assert info.value.field == "dataset.n_classes"


def test_binary_learner_refuses_multiclass_data():
    with pytest.raises(LinclsInputError) as info:
        prepare(compose_config(["learner=perceptron", "dataset=multiclass"]))
    assert info.value.field == "dataset.y"


def test_runner_logs_the_bound(store):
    config = compose_config(
        [
            "learner=multiclass_perceptron",
            "dataset=multiclass",
            "dataset.n=300",
            "dataset.d=6",
            "dataset.n_classes=4",
            "dataset.n_test=100",
            "passes=50",
            f"tracking.uri={store}",
            "certificates.svm=false",  # the generator's U, whose bound is computed by hand
            "certificates.best=false",
        ]
    )
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    logged = run.data.metrics
    again = measure(config)
    assert logged["mistakes"] == again.metrics["mistakes"] == outcome.metrics["mistakes"] > 0
    assert logged["updates"] == logged["mistakes"]
    assert logged["margin"] == pytest.approx(0.05, rel=1e-12)
    assert logged["radius"] == pytest.approx(1.0, rel=1e-12)
    # 2(R² + 1)/γ² on (x, 1) with R = 1, γ = 0.05.
    assert logged["bound.multiclass_perceptron"] == pytest.approx(1600.0, rel=1e-9)
    assert logged["mistakes"] <= logged["bound.multiclass_perceptron"]
    assert logged["train_accuracy"] == 1.0 and logged["converged"] == 1.0
    assert run.data.tags["bound.tightest"] == "multiclass_perceptron"
    assert run.data.tags["bound_violated"] == "false"


def test_initial_weights_shapes_and_a_fixed_bias_without_bias_rule():
    model = MulticlassPerceptron(bias="none", max_passes=1)
    model.fit(SEED001_MC_X, SEED001_MC_Y, coef_init=SEED001_W, intercept_init=[1.0, 2.0, 3.0])
    np.testing.assert_array_equal(model.intercept_, [1.0, 2.0, 3.0])  # no bias rule: b stays
    with pytest.raises(LinclsInputError) as info:
        model.fit(SEED001_MC_X, SEED001_MC_Y, coef_init=np.zeros((2, 3)))
    assert info.value.field == "coef_init" and "must hold 9 finite values" in str(info.value)


@pytest.mark.parametrize(
    "learner", [MulticlassPerceptron(bias="none"), MIRA_UNCAPPED], ids=["perceptron", "mira"]
)
def test_orthonormal_instance_attains_the_bound(learner):
    # x_t = e_t labelled 1 (t = 1..d), then −e_1 labelled 0. From W = 0 every e_t ties at 0 →
    # class 0 predicted: d mistakes. U = (−v, v), v = 1/√(2d) per coordinate: ‖U‖_F = 1,
    # γ = 2/√(2d), R = 1, so 2R²/γ² = d (and MIRA's max(2R², 1/M)/γ² = d for M ≥ 1/2).
    d = 12
    X = np.vstack([np.eye(d), -np.eye(d)[:1]])
    y = np.r_[np.ones(d, dtype=int), 0]
    learner.fit(X, y)
    v = np.full(d, 1 / np.sqrt(2 * d))
    cert = certify_multiclass(X, y, np.vstack([-v, v]), None, source="hand")
    assert cert.margin == pytest.approx(np.sqrt(2 / d), rel=1e-12)
    values = bounds.evaluate(bounds.RunFacts(learner, 1.0, cert)).values
    (value,) = values.values()
    assert learner.mistakes_ == d
    assert value == pytest.approx(d, rel=1e-12)


def test_make_multiclass_same_seed_same_data():
    a, b, c = (make_multiclass(50, 4, 3, 0.05, 1.0, seed=s) for s in (8, 8, 9))
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert a.U.tobytes() == b.U.tobytes() and a.X_test.tobytes() == b.X_test.tobytes()
