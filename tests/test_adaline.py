"""Adaline (Widrow–Hoff LMS): sklearn's squared-loss SGD, the least-squares limit, the record."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config, run_cli, runs_of
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, registry, runner
from lincls.data import make_separable
from lincls.errors import LinclsInputError
from lincls.geometry import certificates
from lincls.learners import Adaline, LeastSquaresClassifier

DIVERGES = (
    "the check's data lie near (100, 100) (‖x‖² ≈ 2·10⁴), where LMS with α = 0.01 diverges (it "
    "is stable for α·‖x‖² < 2); fit reports the overflow as an error naming lr"
)


@parametrize_with_checks(
    [
        Adaline(),
        Adaline(lr=5e-5),
        Adaline(lr=5e-5, schedule="inverse_sqrt", shuffle=True, random_state=0),
    ],
    expected_failed_checks=lambda est: (
        {
            "check_fit_idempotent": DIVERGES,
            "check_fit_check_is_fitted": DIVERGES,
            "check_n_features_in": DIVERGES,
        }
        if est.lr == 0.01
        else {}
    ),
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def noisy_problem(n=400, d=9, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = (X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def sklearn_lms(X, y, lr, passes, learning_rate="constant", power_t=0.5):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SGDClassifier(
            loss="squared_error",
            learning_rate=learning_rate,
            power_t=power_t,
            eta0=lr,
            penalty=None,
            shuffle=False,
            tol=None,
            max_iter=passes,
        ).fit(X, y)


def assert_equal_to_1e12(ours, peer):
    scale = np.abs(peer.coef_).max()
    np.testing.assert_allclose(ours.coef_, peer.coef_, rtol=1e-12, atol=1e-12 * scale)
    assert float(ours.intercept_[0]) == pytest.approx(float(peer.intercept_[0]), rel=1e-12)


# --- against scikit-learn ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("lr", "passes"), [(0.01, 1), (0.003, 5), (0.05, 3)])
def test_constant_rate_equals_sklearn_squared_loss_sgd(dtype, lr, passes):
    # scikit-learn's step is −η·dloss with dloss = p − y: exactly η·(y − p), so the weights are
    # not only within 1e-12 but bit for bit the same (the same loop arithmetic, no fastmath).
    X, y = noisy_problem(dtype=dtype, seed=passes)
    ours = Adaline(lr=lr, max_passes=passes).fit(X, y)
    peer = sklearn_lms(X, y, lr, passes)
    assert ours.coef_.dtype == peer.coef_.dtype == dtype
    assert_equal_to_1e12(ours, peer)
    assert np.array_equal(ours.coef_, peer.coef_)
    assert ours.updates_ == 400 * passes and 20 * passes < ours.mistakes_ < 200 * passes


@pytest.mark.parametrize("passes", [1, 4])
def test_csr_equals_sklearn_with_its_sparse_intercept_decay(passes):
    X, y = noisy_problem(seed=10 + passes)
    X[np.abs(X) < 0.8] = 0.0
    Xs = sp.csr_matrix(X)
    ours = Adaline(lr=0.02, max_passes=passes, intercept_decay=0.01).fit(Xs, y)
    peer = sklearn_lms(Xs, y, 0.02, passes)
    assert_equal_to_1e12(ours, peer)
    # the textbook bias step (the default) is not scikit-learn's damped one on sparse data
    textbook = Adaline(lr=0.02, max_passes=passes).fit(Xs, y)
    assert abs(textbook.intercept_[0] - peer.intercept_[0]) > 1e-3 * abs(peer.intercept_[0])
    # and dense rows give the same run as their CSR form
    dense = Adaline(lr=0.02, max_passes=passes, intercept_decay=0.01).fit(X, y)
    np.testing.assert_allclose(dense.coef_, ours.coef_, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(dense.mistake_steps_, ours.mistake_steps_)


@pytest.mark.parametrize(("schedule", "power_t"), [("inverse", 1.0), ("inverse_sqrt", 0.5)])
def test_decaying_rates_equal_sklearn_invscaling(schedule, power_t):
    # α₀/t and α₀/√t with t the 1-based global step: scikit-learn's eta0 / t^power_t.
    X, y = noisy_problem(seed=4)
    ours = Adaline(lr=0.05, schedule=schedule, max_passes=3).fit(X, y)
    peer = sklearn_lms(X, y, 0.05, 3, learning_rate="invscaling", power_t=power_t)
    assert_equal_to_1e12(ours, peer)


# --- the rule and its limit ----------------------------------------------------------------
def test_two_steps_of_seed002_eq7_by_hand():
    # From w = 0: x₁ = (1, 2), y = +1, p = 0 → error 1 (a zero activation: a mistake);
    # w = α(1, 2), b = α. x₂ = (2, 0), y = −1, p = 2α + α = 0.3 (a mistake) → error −1.3;
    # w = (0.1, 0.2) − 0.13·(2, 0), b = 0.1 − 0.13.
    X = np.array([[1.0, 2.0], [2.0, 0.0]])
    model = Adaline(lr=0.1, max_passes=1).fit(X, [1, -1])
    np.testing.assert_allclose(model.coef_, [[0.1 - 0.26, 0.2]], rtol=1e-15)
    np.testing.assert_allclose(model.intercept_, [0.1 - 0.13], rtol=1e-15)
    assert model.mistakes_ == 2 and model.updates_ == 2
    assert model.mistake_steps_.tolist() == [0, 1] and model.zero_init_


def python_lms(X, y_signed, lr, passes, schedule="constant", decay=0.5):
    """Seed 002's eq. 7 (α absorbing the 2) one example at a time, with its mistake record."""
    w, b, steps, t = np.zeros(X.shape[1]), 0.0, [], 0
    for p in range(passes):
        for i in range(X.shape[0]):
            t += 1
            rate = {"constant": lr, "inverse": lr / t, "inverse_sqrt": lr / np.sqrt(t),
                    "pass_decay": lr * decay**p}[schedule]  # fmt: skip
            activation = float(X[i] @ w) + b
            if y_signed[i] * activation <= 0:
                steps.append(t - 1)
            error = y_signed[i] - activation
            w = w + rate * error * X[i]
            b += rate * error
    return w, b, steps


@pytest.mark.parametrize("schedule", ["constant", "inverse", "inverse_sqrt", "pass_decay"])
def test_every_schedule_follows_the_rule_step_by_step(schedule):
    X, y = noisy_problem(n=60, d=4, seed=6)
    model = Adaline(lr=0.08, schedule=schedule, decay=0.3, max_passes=4).fit(X, y)
    w, b, steps = python_lms(X, np.where(y == 1, 1.0, -1.0), 0.08, 4, schedule, 0.3)
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-12, atol=1e-14)
    assert model.intercept_[0] == pytest.approx(b, rel=1e-12, abs=1e-14)
    assert model.mistake_steps_.tolist() == steps
    assert model.mistake_indices_.tolist() == [s % 60 for s in steps]
    assert model.mistakes_per_pass_.tolist() == np.bincount(np.array(steps) // 60, minlength=4)\
        .tolist()  # fmt: skip


def least_squares_set(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((200, 4)) + 0.3
    y = (X @ rng.standard_normal(4) + 0.5 * rng.standard_normal(200) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_rate_and_many_passes_land_on_the_least_squares_solution(seed):
    X, y = least_squares_set(seed)
    exact = LeastSquaresClassifier().fit(X, y)
    target = np.r_[exact.coef_[0], exact.intercept_]
    model = Adaline(lr=1e-4, max_passes=5000).fit(X, y)
    gap = np.abs(np.r_[model.coef_[0], model.intercept_] - target).max()
    assert gap < 1e-3
    # With a fixed order, constant-α LMS settles on a cycle around w*, O(α) away: 3α, 3× the gap.
    coarse = Adaline(lr=3e-4, max_passes=5000).fit(X, y)
    coarse_gap = np.abs(np.r_[coarse.coef_[0], coarse.intercept_] - target).max()
    assert 2.5 < coarse_gap / gap < 3.5


def test_a_decaying_rate_also_reaches_least_squares():
    X, y = least_squares_set(0)
    exact = LeastSquaresClassifier().fit(X, y)
    model = Adaline(lr=0.01, schedule="pass_decay", decay=0.998, max_passes=3000).fit(X, y)
    gap = np.abs(np.r_[model.coef_[0] - exact.coef_[0], model.intercept_ - exact.intercept_])
    assert gap.max() < 1e-3


def test_no_bias_and_the_record_over_partial_fits():
    X, y = noisy_problem(n=120, seed=3)
    whole = Adaline(lr=0.02, bias="none", max_passes=3).fit(X, y)
    assert whole.intercept_[0] == 0.0 and whole.bias_feature_ == 0.0
    stream = Adaline(lr=0.02, bias="none")
    for _ in range(3):
        stream.partial_fit(X, y, classes=[0, 1])
    assert np.array_equal(stream.coef_, whole.coef_)
    assert np.array_equal(stream.mistake_steps_, whole.mistake_steps_)
    assert stream.mistakes_per_pass_.tolist() == whole.mistakes_per_pass_.tolist()
    assert stream.n_steps_ == whole.n_steps_ == 360


def test_shuffle_is_seeded_and_deterministic():
    X, y = noisy_problem(seed=8)
    runs = [Adaline(shuffle=True, random_state=s, max_passes=4).fit(X, y) for s in (3, 3, 4)]
    assert runs[0].coef_.tobytes() == runs[1].coef_.tobytes()
    assert np.array_equal(runs[0].mistake_steps_, runs[1].mistake_steps_)
    assert runs[0].coef_.tobytes() != runs[2].coef_.tobytes()


def test_stops_when_every_example_is_fitted_exactly():
    # Two orthogonal unit rows and α = 1 without a bias: one pass makes w·x = y on both (label
    # 1 is +1, label 0 is −1); the second pass changes nothing and ends the run.
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    model = Adaline(lr=1.0, bias="none", max_passes=10, stop_when_converged=True).fit(X, [1, 0])
    np.testing.assert_array_equal(model.coef_, [[1.0, -1.0]])
    assert model.n_passes_ == 2 and model.converged_ and model.updates_ == 2


def test_no_mistake_bound_is_claimed():
    data = make_separable(100, 4, margin=0.1, radius=1.0, seed=2, n_test=0)
    model = Adaline(lr=0.1).fit(data.X, data.y)
    evaluation = bounds.evaluate(
        bounds.RunFacts(model, data.radius, certificates.certificate_of(data, model))
    )
    assert evaluation.values == {}
    assert set(evaluation.skipped.values()) == {Adaline.no_bound_reason}


# --- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"lr": 0.0}, "lr: must be a number in (0, inf), got 0.0"),
        ({"lr": -0.1}, "lr: must be a number in (0, inf), got -0.1"),
        ({"schedule": "cosine"}, "schedule: must be one of 'constant', 'inverse', "),
        ({"decay": 0.0}, "decay: must be a number in (0, 1], got 0.0"),
        ({"bias": "r2"}, "bias: must be one of 'feature', 'none', got 'r2'"),
        ({"intercept_decay": 0}, "intercept_decay: must be a number in (0, inf), got 0"),
        ({"max_passes": 0}, "max_passes: must be an integer in [1, inf), got 0"),
    ],
)
def test_bad_parameters_are_one_line_errors(params, message):
    X, y = noisy_problem(n=20)
    with pytest.raises(LinclsInputError) as info:
        Adaline(**params).fit(X, y)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_diverging_rate_is_an_error_naming_lr():
    X, y = noisy_problem(n=50, d=3, seed=1)
    X *= 100.0
    with pytest.raises(LinclsInputError) as info:
        Adaline(lr=0.01, max_passes=50).fit(X, y)
    assert info.value.field == "lr" and "\n" not in str(info.value)
    assert "the weights overflowed in pass" in str(info.value)
    bound = 2.0 / (np.linalg.norm(X, axis=1).max() ** 2 + 1.0)
    assert f"here lr < {bound:.3g}" in str(info.value)


def test_bad_config_from_the_command_line_is_one_line(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli(["learner=adaline", "learner.lr=0", f"tracking.uri={uri}"], cwd=tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0] == "error: learner.lr: must be a number in (0, inf), got 0.0"
    assert runs_of(uri) == []


# --- a logged run --------------------------------------------------------------------------
def test_a_logged_run_has_the_mistakes_the_accuracies_and_no_bound(store):
    config = compose_config(
        ["learner=adaline", "learner.lr=0.05", "dataset.n=300", "dataset.n_test=200",
         "passes=5", f"tracking.uri={store}", "certificates.svm=false"]
    )  # fmt: skip
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    assert run.info.status == "FINISHED" and run.info.run_id == outcome.run_id
    m, tags = run.data.metrics, run.data.tags
    data = registry.build_dataset(config["dataset"])
    model = Adaline(lr=0.05, max_passes=5, random_state=0).fit(data.X, data.y)
    assert m["mistakes"] == model.mistakes_ > 0 and m["updates"] == model.updates_ == 1500
    assert m["passes_run"] == 5 and m["converged"] == 0.0
    assert m["train_accuracy"] == model.score(data.X, data.y) > 0.9
    assert m["test_accuracy"] == model.score(data.X_test, data.y_test)
    assert not any(k.startswith(("bound.", "bound_ratio.")) for k in m)
    assert tags["bounds.none"] == Adaline.no_bound_reason
    assert tags["bounds.skipped"] == f"every bound: {Adaline.no_bound_reason}"
    assert tags["bound_violated"] == "false" and tags["learner"] == "adaline"
    from mlflow.tracking import MlflowClient

    from lincls.tracking.record_rows import histories

    client = MlflowClient(tracking_uri=store)
    key = "mistakes_per_pass"
    per_pass = histories(client, [run.info.run_id], [key])[key][run.info.run_id]
    assert [v for _, v in per_pass] == list(map(float, model.mistakes_per_pass_))
