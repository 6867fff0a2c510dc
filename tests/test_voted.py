"""VotedPerceptron: the vectors and counts, the four predictions, the cap, bounds, the config."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _online_cases import BOUND_SETTINGS, SEED001_X, SEED001_Y, bias_and_data, bound_values
from conftest import compose_config
from hypothesis import given
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.errors import LinclsInputError
from lincls.evaluation import measure, prepare
from lincls.experiments.benchmarks.perceptron import csr_problem, dense_problem
from lincls.learners import AveragedPerceptron, Perceptron, VotedPerceptron

RANDOM_DRAWS = (
    "prediction='random' draws one vector per example in row order, so a permuted or partial "
    "batch gets other draws"
)


@parametrize_with_checks(
    [
        VotedPerceptron(),
        VotedPerceptron(prediction="average"),
        VotedPerceptron(prediction="random", random_state=0),
    ],
    expected_failed_checks=lambda est: (
        {
            "check_methods_subset_invariance": RANDOM_DRAWS,
            "check_methods_sample_order_invariance": RANDOM_DRAWS,
        }
        if est.prediction == "random"
        else {}
    ),
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# A small 2-D set (not separable through the bias-free origin: the vote and the last vector differ).
X2 = np.array(
    [[1.0, 2.0], [2.0, -1.0], [-1.0, -1.5], [-2.0, 1.0], [0.5, 0.5], [1.5, -2.0], [-0.5, 2.5]]
)
Y2 = np.array([1, 1, -1, -1, -1, 1, 1])


def direct_voted(X, y, passes):
    """Freund & Schapire's training loop, literally: a list of (v, c)."""
    v = np.zeros(X.shape[1])
    kept = [[v.copy(), 0]]
    for _ in range(passes):
        for x, label in zip(X, y, strict=True):
            if label * (v @ x) <= 0:
                v = v + label * x
                kept.append([v.copy(), 1])
            else:
                kept[-1][1] += 1
    return kept


def test_vectors_counts_and_vote_match_direct_computation():
    model = VotedPerceptron(bias="none", max_passes=3).fit(X2, Y2)
    kept = direct_voted(X2, Y2, passes=3)
    np.testing.assert_array_equal(model.vectors_, np.array([v for v, _ in kept]))
    np.testing.assert_array_equal(model.counts_, [c for _, c in kept])
    assert model.counts_.sum() == model.n_steps_ == 21
    grid = np.array([[x, y] for x in np.linspace(-3, 3, 13) for y in np.linspace(-3, 3, 13)])
    vote = np.array([sum(c * np.sign(v @ g) for v, c in kept) for g in grid]) / 21
    np.testing.assert_allclose(model.decision_function(grid), vote, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(model.predict(grid), np.where(vote > 0, 1, -1))
    last = VotedPerceptron(bias="none", max_passes=3, prediction="last").fit(X2, Y2)
    assert not np.array_equal(last.predict(grid), model.predict(grid))  # the vote matters here


def test_counts_on_seed000_table():
    # A sequence with mistakes at steps 1, 4, 8 and 10 (1-based), as in seed 000's table:
    # Freund & Schapire's counts are 0, 3, 4, 2, 1 (seed 000 counts predictions made: 1, 3, 4, 2).
    e = np.eye(4)
    X = np.array([e[0], e[0], e[0], e[1], e[0], e[1], e[0], e[2], e[2], e[3]])
    y = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, -1])
    model = VotedPerceptron(bias="none", max_passes=1).fit(X, y)
    np.testing.assert_array_equal(model.mistake_steps_, [0, 3, 7, 9])
    np.testing.assert_array_equal(model.counts_, [0, 3, 4, 2, 1])
    np.testing.assert_array_equal(model.vectors_[-1], [1, 1, 1, -1])


@pytest.mark.parametrize("sparse", [False, True])
def test_average_prediction_equals_averaged_perceptron(sparse):
    X, y = csr_problem(800, 300, 10, seed=2) if sparse else dense_problem(800, 10, seed=2)
    voted = VotedPerceptron(prediction="average", max_passes=4, shuffle=True, random_state=3)
    voted.fit(X, y)
    averaged = AveragedPerceptron(max_passes=4, shuffle=True, random_state=3).fit(X, y)
    scale = np.abs(averaged.coef_).max()
    np.testing.assert_allclose(voted.coef_, averaged.coef_, rtol=1e-12, atol=1e-12 * scale)
    assert voted.intercept_[0] == pytest.approx(averaged.intercept_[0], rel=1e-12, abs=1e-12)
    np.testing.assert_array_equal(voted.predict(X), averaged.predict(X))
    plain = Perceptron(max_passes=4, stop_when_converged=False, shuffle=True, random_state=3)
    plain.fit(X, y)
    np.testing.assert_array_equal(voted.vectors_[-1], plain.coef_[0])
    assert voted.mistakes_ == plain.mistakes_


def test_csr_and_dense_fit_the_same_vectors():
    X, y = csr_problem(300, 200, 8, seed=9)
    sparse_fit = VotedPerceptron(max_passes=2).fit(X, y)
    dense_fit = VotedPerceptron(max_passes=2).fit(X.toarray(), y)
    np.testing.assert_array_equal(sparse_fit.vectors_, dense_fit.vectors_)
    np.testing.assert_array_equal(sparse_fit.counts_, dense_fit.counts_)
    np.testing.assert_allclose(
        sparse_fit.decision_function(X), dense_fit.decision_function(X.toarray()), atol=1e-15
    )


def test_random_prediction_draws_with_probability_c_over_t():
    model = VotedPerceptron(bias="none", max_passes=3, prediction="random", random_state=4)
    model.fit(X2, Y2)
    point = np.array([[0.3, -0.2]])
    says_positive = (model.vectors_ @ point[0]) > 0
    expected = model.counts_[says_positive].sum() / model.counts_.sum()
    draws = 40_000
    share = (model.predict(np.repeat(point, draws, axis=0)) == 1).mean()
    assert 0.0 < expected < 1.0
    assert abs(share - expected) < 4 * np.sqrt(expected * (1 - expected) / draws)
    # Seeded: the same draws again; sparse rows give the same scores.
    again = model.decision_function(np.repeat(point, 50, axis=0))
    np.testing.assert_array_equal(again, model.decision_function(np.repeat(point, 50, axis=0)))
    np.testing.assert_allclose(
        model.decision_function(sp.csr_matrix(np.repeat(point, 50, axis=0))), again, atol=1e-15
    )


def test_partial_fit_keeps_vectors_across_batches():
    X, y = dense_problem(200, 4, seed=12)
    whole = VotedPerceptron(max_passes=2).fit(X, y)
    parts = VotedPerceptron()
    parts.partial_fit(X[:120], y[:120], classes=np.unique(y))
    parts.partial_fit(X[120:], y[120:])
    parts.partial_fit(X, y)
    np.testing.assert_array_equal(parts.vectors_, whole.vectors_)
    np.testing.assert_array_equal(parts.counts_, whole.counts_)


def test_seed001_table_from_coef_init():
    model = VotedPerceptron(max_passes=1, prediction="last").fit(
        SEED001_X, SEED001_Y, coef_init=[0.0, 0.0], intercept_init=[-1.0]
    )
    np.testing.assert_array_equal(model.vectors_, [[0, 0], [3, 2], [1, -1]])
    np.testing.assert_array_equal(model.vector_intercepts_, [-1, 0, -1])
    np.testing.assert_array_equal(model.counts_, [1, 3, 1])
    np.testing.assert_array_equal(model.coef_, [[1.0, -1.0]])


def test_max_vectors_exceeded_is_one_line_error():
    X, y = dense_problem(500, 10, seed=1)
    with pytest.raises(LinclsInputError) as info:
        VotedPerceptron(max_vectors=5).fit(X, y)
    assert info.value.field == "max_vectors"
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("max_vectors: the run needs more than 5 vectors")


def test_max_vectors_exceeded_in_a_logged_run_names_the_learner_field_and_fails_the_run(store):
    from conftest import runs_of

    from lincls.runner import execute

    config = compose_config(["learner=voted_perceptron", "learner.max_vectors=3",
                             f"tracking.uri={store}"])  # fmt: skip
    with pytest.raises(LinclsInputError) as info:
        execute(config)
    assert info.value.field == "learner.max_vectors"
    (run,) = runs_of(store)
    assert run.info.status == "FAILED"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"max_vectors": 0}, "max_vectors"),
        ({"max_vectors": 2.5}, "max_vectors"),
        ({"prediction": "median"}, "prediction"),
    ],
)
def test_bad_parameters(params, field):
    with pytest.raises(LinclsInputError) as info:
        VotedPerceptron(**params).fit(X2, Y2)
    assert info.value.field == field
    assert "\n" not in str(info.value)


def test_config_cap_error_names_the_field():
    config = compose_config(["learner=voted_perceptron", "learner.max_vectors=0"])
    with pytest.raises(LinclsInputError) as info:
        prepare(config)
    assert info.value.field == "learner.max_vectors"


def test_same_seed_same_bits():
    X, y = dense_problem(300, 6, seed=8)
    a = VotedPerceptron(max_passes=3, shuffle=True, random_state=5).fit(X, y)
    b = VotedPerceptron(max_passes=3, shuffle=True, random_state=5).fit(X, y)
    assert a.vectors_.tobytes() == b.vectors_.tobytes()
    assert a.decision_function(X).tobytes() == b.decision_function(X).tobytes()


@BOUND_SETTINGS
@given(case=bias_and_data(), shuffle=st.booleans())
def test_mistakes_within_perceptron_bounds(case, shuffle):
    bias, data = case
    model = VotedPerceptron(
        bias=bias, max_passes=30, stop_when_converged=True, shuffle=shuffle, random_state=0
    )
    values = bound_values(model, data)
    assert set(values) <= {"novikoff", "novikoff_bias", "novikoff_2r"}
    assert model.vectors_.shape[0] == model.mistakes_ + 1


def test_runner_logs_perceptron_bounds():
    config = compose_config(
        ["learner=voted_perceptron", "dataset.n=200", "dataset.d=5", "dataset.n_test=50"]
    )
    outcome = measure(config)
    assert isinstance(outcome.learner, VotedPerceptron)
    assert outcome.metrics["mistakes"] <= outcome.metrics["bound.novikoff_bias"]
    assert 0.9 <= outcome.metrics["test_accuracy"] <= 1.0
