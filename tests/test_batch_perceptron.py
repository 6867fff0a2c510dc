"""BatchPerceptron (seed 002 eqs. 4–5): M = 1 is the perceptron, mini-batches by hand, the record,
the bounds only where they apply, bad input, a logged run."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _online_cases import certified_data
from conftest import compose_config, runs_of
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mlflow.tracking import MlflowClient
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, evaluation, runner
from lincls.data import make_separable
from lincls.errors import LinclsInputError
from lincls.experiments.benchmarks.perceptron import csr_problem, dense_problem
from lincls.geometry import certificates
from lincls.learners import BatchPerceptron, LearningRatePerceptron, Perceptron
from lincls.tracking.record_rows import histories


@parametrize_with_checks(
    [
        BatchPerceptron(),
        BatchPerceptron(batch_size=1),
        BatchPerceptron(batch_size=7, schedule="inverse", shuffle=True, random_state=0),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --- M = 1 is the perceptron ---------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("lr", [0.5, 0.125, 0.1, 3.0])
def test_batch_of_one_makes_the_perceptrons_mistakes_with_2alpha_times_its_weights(sparse, lr):
    X, y = csr_problem(800, 400, 10, seed=2) if sparse else dense_problem(800, 12, seed=2)
    plain = Perceptron(max_passes=4, shuffle=True, random_state=7).fit(X, y)
    batch = BatchPerceptron(lr=lr, batch_size=1, max_passes=4, shuffle=True, random_state=7)
    batch.fit(X, y)
    assert batch.mistakes_ == plain.mistakes_ > 100
    np.testing.assert_array_equal(batch.mistake_steps_, plain.mistake_steps_)
    np.testing.assert_array_equal(batch.mistake_indices_, plain.mistake_indices_)
    np.testing.assert_array_equal(batch.mistakes_per_pass_, plain.mistakes_per_pass_)
    np.testing.assert_allclose(batch.coef_, 2 * lr * plain.coef_, rtol=1e-12)
    # b sums ±2α steps: where the perceptron's ±1 steps cancel to 0, a rounding residue is left
    np.testing.assert_allclose(batch.intercept_, 2 * lr * plain.intercept_, rtol=1e-12, atol=1e-12)
    if lr in (0.5, 0.125):  # 2α a power of two: the scaling is exact
        np.testing.assert_array_equal(batch.coef_, 2 * lr * plain.coef_)
    assert batch.updates_ == batch.mistakes_ and batch.n_batches_ == batch.n_steps_


@pytest.mark.parametrize("schedule", ["constant", "inverse", "inverse_sqrt", "pass_decay"])
def test_batch_of_one_is_the_learning_rate_perceptron_bit_for_bit(schedule):
    X, y = dense_problem(600, 8, seed=4)
    online = LearningRatePerceptron(lr=0.3, schedule=schedule, decay=0.7, max_passes=5)
    batch = BatchPerceptron(lr=0.3, batch_size=1, schedule=schedule, decay=0.7, max_passes=5)
    online.fit(X, y)
    batch.fit(X, y)
    assert batch.coef_.tobytes() == online.coef_.tobytes()
    assert batch.intercept_.tobytes() == online.intercept_.tobytes()
    np.testing.assert_array_equal(batch.mistake_steps_, online.mistake_steps_)


# --- mini-batches --------------------------------------------------------------------------
def python_batch(X, y_signed, lr, M, passes, schedule="constant", decay=0.5, order=None):
    """Seed 002's eq. 5 written out: classify a batch with its starting weights, then step."""
    n = X.shape[0]
    order = np.arange(n) if order is None else order
    w, b, t = np.zeros(X.shape[1]), 0.0, 0
    per_batch, steps = [], []
    for p in range(passes):
        for start in range(0, n, M):
            t += 1
            rows = order[start : start + M]
            wrong = y_signed[rows] * (X[rows] @ w + b) <= 0
            rate = {"constant": lr, "inverse": lr / t, "inverse_sqrt": lr / np.sqrt(t),
                    "pass_decay": lr * decay**p}[schedule]  # fmt: skip
            terms = y_signed[rows] - np.where(wrong, -y_signed[rows], y_signed[rows])  # y − sgn
            w = w + rate * (terms @ X[rows])
            b += rate * terms.sum()
            per_batch.append(int(wrong.sum()))
            steps.extend((p * n + start + np.flatnonzero(wrong)).tolist())
    return w, b, per_batch, steps


@pytest.mark.parametrize("M", [2, 7, 50, 300, 1000])
@pytest.mark.parametrize("schedule", ["constant", "inverse_sqrt", "pass_decay"])
def test_mini_batches_follow_seed002_eq5(M, schedule):
    X, y = dense_problem(300, 6, seed=M)
    model = BatchPerceptron(
        lr=0.2, batch_size=M, schedule=schedule, decay=0.6, max_passes=4, stop_when_converged=False
    ).fit(X, y)
    w, b, per_batch, steps = python_batch(X, y, 0.2, M, 4, schedule, 0.6)
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-12, atol=1e-12)
    assert model.intercept_[0] == pytest.approx(b, rel=1e-12, abs=1e-12)
    assert model.mistakes_per_batch_.tolist() == per_batch
    assert model.mistake_steps_.tolist() == steps
    batches_per_pass = -(-300 // min(M, 300))
    assert model.n_batches_ == len(per_batch) == 4 * batches_per_pass
    assert model.mistakes_per_batch_.sum() == model.mistakes_
    passes = model.mistakes_per_batch_.reshape(4, batches_per_pass).sum(axis=1)
    assert passes.tolist() == model.mistakes_per_pass_.tolist()
    assert model.updates_ == int((model.mistakes_per_batch_ > 0).sum())


def test_full_batch_first_step_by_hand():
    # From w = 0 every activation is 0, so every example is a mistake of the first batch:
    # w = 2α Σ y x, b = 2α Σ y (3 − 1 = 2 positives net), one step.
    X = np.array([[1.0, 2.0], [2.0, 0.0], [0.0, 1.0], [3.0, 3.0]])
    y = np.array([1, -1, 1, 1])
    model = BatchPerceptron(lr=0.25, max_passes=1).fit(X, y)
    np.testing.assert_array_equal(model.coef_, [[0.5 * (1 - 2 + 0 + 3), 0.5 * (2 + 1 + 3)]])
    np.testing.assert_array_equal(model.intercept_, [0.5 * 2])
    assert model.mistakes_ == 4 and model.updates_ == 1
    assert model.mistakes_per_batch_.tolist() == [4] and model.n_batches_ == 1


def test_inverse_rate_counts_batches_not_examples():
    # Orthonormal rows, no bias, M = 2: rows 0, 1 are batch 1 (α₀/1), rows 2, 3 batch 2 (α₀/2).
    E4, Y4 = np.eye(4), np.array([1, -1, 1, -1])
    model = BatchPerceptron(lr=0.3, batch_size=2, schedule="inverse", bias="none", max_passes=1)
    model.fit(E4, Y4)
    np.testing.assert_allclose(model.coef_[0], 2 * np.array([0.3, 0.3, 0.15, 0.15]) * Y4)
    assert model.mistakes_per_batch_.tolist() == [2, 2]


@pytest.mark.parametrize("M", [1, 5, None])
def test_csr_and_dense_give_the_same_run(M):
    X, y = csr_problem(400, 200, 8, seed=6)
    sparse = BatchPerceptron(lr=0.1, batch_size=M, max_passes=3, stop_when_converged=False)
    dense = BatchPerceptron(lr=0.1, batch_size=M, max_passes=3, stop_when_converged=False)
    sparse.fit(X, y)
    dense.fit(X.toarray(), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(sparse.mistakes_per_batch_, dense.mistakes_per_batch_)
    assert sp.issparse(X)


def test_shuffled_batches_are_seeded_and_partial_fit_continues_the_record():
    X, y = dense_problem(200, 5, seed=9)
    runs = [
        BatchPerceptron(batch_size=8, shuffle=True, random_state=s, max_passes=3).fit(X, y)
        for s in (1, 1, 2)
    ]
    assert runs[0].coef_.tobytes() == runs[1].coef_.tobytes()
    assert runs[0].coef_.tobytes() != runs[2].coef_.tobytes()
    whole = BatchPerceptron(batch_size=8, max_passes=3, stop_when_converged=False).fit(X, y)
    stream = BatchPerceptron(batch_size=8)
    for _ in range(3):
        stream.partial_fit(X, y, classes=[-1, 1])
    assert stream.coef_.tobytes() == whole.coef_.tobytes()
    assert stream.mistakes_per_batch_.tolist() == whole.mistakes_per_batch_.tolist()
    assert stream.n_batches_ == whole.n_batches_ == 75


def test_converges_on_separable_data_and_stops():
    data = make_separable(300, 5, margin=0.1, radius=1.0, offset=0.2, seed=3, n_test=0)
    model = BatchPerceptron(lr=0.5, batch_size=16, max_passes=500).fit(data.X, data.y)
    assert model.converged_ and model.n_passes_ < 500
    assert model.mistakes_per_pass_[-1] == 0 and (model.predict(data.X) == data.y).all()


# --- which bounds apply --------------------------------------------------------------------
def evaluation_of(model, data):
    model.fit(data.X, data.y)
    return bounds.evaluate(
        bounds.RunFacts(model, data.radius, certificates.certificate_of(data, model))
    )


@settings(
    max_examples=300, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(
    data=certified_data(),
    lr=st.sampled_from([0.01, 0.5, 2.0]),
    bias=st.sampled_from(["feature", "r2"]),
    shuffle=st.booleans(),
)
def test_batch_of_one_with_a_constant_rate_is_within_the_perceptron_bounds(data, lr, bias, shuffle):
    model = BatchPerceptron(
        lr=lr, batch_size=1, bias=bias, max_passes=30, shuffle=shuffle, random_state=2
    )
    evaluation = evaluation_of(model, data)
    assert "novikoff_bias" in evaluation.values, evaluation.skipped
    for name, value in evaluation.values.items():
        assert bounds.holds(model.mistakes_, value), (name, model.mistakes_, value)


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"batch_size": 4}, "batch_size M > 1"),
        ({"batch_size": None}, "batch_size M > 1"),
        ({"batch_size": 1, "schedule": "inverse"}, "a decaying learning rate (inverse)"),
    ],
)
def test_no_bound_is_claimed_off_the_perceptron(params, reason):
    data = make_separable(100, 4, margin=0.1, radius=1.0, seed=2, n_test=0)
    model = BatchPerceptron(**params)
    evaluation = evaluation_of(model, data)
    assert evaluation.values == {} and model.bound_family is None
    (why,) = set(evaluation.skipped.values())
    assert why == model.no_bound_reason and reason in why


# --- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"lr": 0.0}, "lr: must be a number in (0, inf), got 0.0"),
        ({"lr": -1.0}, "lr: must be a number in (0, inf), got -1.0"),
        ({"batch_size": 0}, "batch_size: must be an integer in [1, inf), got 0"),
        ({"batch_size": 2.5}, "batch_size: must be an integer in [1, inf), got 2.5"),
        ({"schedule": "cosine"}, "schedule: must be one of 'constant', 'inverse', "),
        ({"decay": 1.5}, "decay: must be a number in (0, 1], got 1.5"),
        ({"bias": "sometimes"}, "bias: must be one of 'feature', 'r2', 'none'"),
    ],
)
def test_bad_parameters_are_one_line_errors(params, message):
    X, y = dense_problem(20, 3)
    with pytest.raises(LinclsInputError) as info:
        BatchPerceptron(**params).fit(X, y)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_bad_config_names_the_field_and_leaves_no_run(store):
    for override, message in [
        ("learner.batch_size=0", "learner.batch_size: must be an integer in [1, inf), got 0"),
        ("learner.lr=0", "learner.lr: must be a number in (0, inf), got 0.0"),
    ]:
        config = compose_config(["learner=batch_perceptron", override, f"tracking.uri={store}"])
        with pytest.raises(LinclsInputError) as info:
            runner.execute(config)
        assert str(info.value) == message
    assert runs_of(store) == []


def test_the_adversarial_order_needs_batches_of_one():
    common = ["learner=batch_perceptron", "order=adversarial", "dataset.n=100",
              "dataset.n_test=0", "certificates.svm=false"]  # fmt: skip
    with pytest.raises(LinclsInputError) as info:
        evaluation.measure(compose_config([*common, "learner.batch_size=10"]))
    assert str(info.value) == (
        "learner.batch_size: the adversarial order presents one example at a time, so it needs "
        "batch_size = 1, got 10"
    )
    m = evaluation.measure(compose_config([*common, "learner.batch_size=1"])).metrics
    assert m["mistakes"] <= m["bound.novikoff_bias"] and m["converged"] == 1.0


# --- logged runs ---------------------------------------------------------------------------
def test_logged_runs_carry_the_batch_record_and_the_bounds_only_at_m_1(store):
    common = ["learner=batch_perceptron", "learner.lr=0.5", "dataset.n=400", "dataset.d=8",
              "dataset.margin=0.05", "dataset.n_test=200", "passes=20", f"tracking.uri={store}",
              "certificates.svm=false"]  # fmt: skip
    one = runner.execute(compose_config([*common, "learner.batch_size=1", "tracking.run_name=m1"]))
    ten = runner.execute(
        compose_config([*common, "learner.batch_size=10", "tracking.run_name=m10"])
    )
    plain = evaluation.measure(compose_config([*common[1:], "learner=perceptron"]))
    runs = {r.info.run_name: r for r in runs_of(store)}
    assert set(runs) == {"m1", "m10"} and {r.info.status for r in runs.values()} == {"FINISHED"}
    m1, m10 = runs["m1"].data, runs["m10"].data
    # M = 1: the perceptron's mistakes and its bounds
    assert m1.metrics["mistakes"] == plain.metrics["mistakes"] == one.learner.mistakes_
    assert m1.metrics["bound.novikoff_bias"] == plain.metrics["bound.novikoff_bias"]
    assert m1.metrics["mistakes"] <= m1.metrics["bound.tightest"]
    assert "bounds.none" not in m1.tags and m1.tags["bound_violated"] == "false"
    # M = 10: mistakes and accuracies, and the tags say why no bound is claimed
    learner = ten.learner
    assert m10.metrics["mistakes"] == learner.mistakes_ == learner.mistakes_per_batch_.sum()
    assert m10.metrics["updates"] == int((learner.mistakes_per_batch_ > 0).sum())
    assert m10.metrics["train_accuracy"] == learner.score(ten.dataset.X, ten.dataset.y)
    assert m10.metrics["test_accuracy"] == learner.score(ten.dataset.X_test, ten.dataset.y_test)
    assert not any(k.startswith("bound.") for k in m10.metrics)
    assert m10.tags["bounds.none"] == learner.no_bound_reason
    assert "batch_size M > 1" in m10.tags["bounds.none"]
    assert m10.params["learner.batch_size"] == "10"
    run_id = runs["m10"].info.run_id
    keys = ["mistakes_per_pass", "mistakes_per_batch"]
    curves = histories(MlflowClient(tracking_uri=store), [run_id], keys)
    assert sum(v for _, v in curves["mistakes_per_pass"][run_id]) == m10.metrics["mistakes"]
    # 40 batches a pass: the per-batch curve, at ≤ 200 log-spaced batches, each point exact
    assert m10.metrics["batches"] == learner.n_batches_ == 40 * m10.metrics["passes_run"]
    per_batch = curves["mistakes_per_batch"][run_id]
    assert 0 < len(per_batch) <= 200 and min(s for s, _ in per_batch) == 1
    assert all(v == learner.mistakes_per_batch_[s - 1] for s, v in per_batch)
