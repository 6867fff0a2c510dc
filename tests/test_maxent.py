"""MaxEnt: GIS's first step by hand and its V, a log-likelihood that never decreases, both solvers
against LogisticRegression, the implicit slack feature, bad input, logged runs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config, run_cli, runs_of
from mlflow.tracking import MlflowClient
from sklearn.datasets import load_digits, load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation, runner
from lincls.data import make_disjunction
from lincls.errors import LinclsInputError
from lincls.learners import MaxEnt
from lincls.learners.maxent import gis_log_ratio
from lincls.tracking.record_rows import histories

NEGATIVE_DATA = "the check's data hold negative values, which GIS rejects (features must be ≥ 0)"


def _gis_xfails(estimator):
    if estimator.solver != "gis":
        return {}
    return {"check_decision_proba_consistency": NEGATIVE_DATA}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(
    [MaxEnt(), MaxEnt(solver="gis"), MaxEnt(C=1.0, tol=1e-6)],
    expected_failed_checks=_gis_xfails,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def softmax_data(seed: int, n: int = 200, d: int = 4, k: int = 3, scale: float = 1.0):
    """Non-negative features, labels drawn from a softmax model (classes overlap: a finite MLE)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) * scale
    # centred features in the logits keep every class frequent
    logits = (X - 0.5 * scale) @ rng.normal(0.0, 3.0 / scale, (k, d)).T + rng.normal(0, 0.3, k)
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(k, p=p) for p in proba])
    return X, y


def fit_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


# --- GIS by hand ------------------------------------------------------------------------------
def test_first_gis_step_by_hand():
    # x = (0.5, 1), (1, 2), (0, 0) with classes 0, 1, 0. Sums 1 + Σx: 2.5, 4, 1 → V = 4.
    # From λ = 0 every p(c|x) = 1/2: E_model[f_{c,j}] = Σ_t x_tj / 2 = (0.75, 1.5) for both
    # classes, the bias's 3/2. E_emp: class 0 (rows 0, 2) (0.5, 1), count 2; class 1 (1, 2), 1.
    # Step: λ_{c,j} = ¼·log(E_emp/E_model).
    X = np.array([[0.5, 1.0], [1.0, 2.0], [0.0, 0.0]])
    y = np.array([0, 1, 0])
    model = fit_quietly(MaxEnt(solver="gis", max_iter=1, tol=1e-12), X, y)
    assert model.feature_sum_ == 4.0 and model.n_iter_ == 1
    model_expect = np.array([1.5, 3.0]) / 2
    np.testing.assert_allclose(
        model.coef_,
        [np.log(np.array([0.5, 1.0]) / model_expect) / 4, np.log([1.0, 2.0] / model_expect) / 4],
        rtol=1e-15,
    )
    np.testing.assert_allclose(model.intercept_, np.log(np.array([2.0, 1.0]) / 1.5) / 4)
    np.testing.assert_allclose(model.log_likelihood_[0], 3 * np.log(0.5), rtol=1e-15)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(model.log_likelihood_[1], np.log(proba[[0, 1, 2], y]).sum())
    assert model.log_likelihood_[1] > model.log_likelihood_[0]
    assert not model.converged_


def test_log_ratio_of_never_seen_and_never_active_features():
    empirical = np.array([0.0, 0.0, 2.0, 3.0])
    model = np.array([0.0, 5.0, 2.0, 0.0])
    ratio = gis_log_ratio(empirical, model)
    cap = -np.log(np.finfo(np.float64).tiny)
    np.testing.assert_array_equal(ratio, [0.0, -cap, 0.0, cap])
    assert 708 < cap < 709


# --- monotonicity on several data sets ---------------------------------------------------------
def _digits(n: int = 300):
    X, y = load_digits(return_X_y=True)
    return X[:n] / 16.0, y[:n]


def _iris():
    X, y = load_iris(return_X_y=True)
    return X, y


def _disjunction():
    data = make_disjunction(30, 3, 300, seed=4, n_test=0)
    return data.X, data.y


def _sparse():
    rng = np.random.default_rng(8)
    X = sp.random(400, 50, density=0.08, random_state=8, format="csr") * 3.0
    y = rng.integers(0, 4, 400)
    y[np.asarray(X[:, :5].sum(axis=1)).ravel() > 1] = 0  # some structure
    return X, y


MONOTONE_CASES = {
    "softmax 3 classes": lambda: softmax_data(0),
    "softmax 2 classes": lambda: softmax_data(1, n=150, d=3, k=2),
    "softmax 5 classes, scale 20": lambda: softmax_data(2, n=300, d=8, k=5, scale=20.0),
    "softmax 4 classes, 1 feature": lambda: softmax_data(3, n=100, d=1, k=4),
    "digits (zero columns, unseen pairs)": _digits,
    "iris": _iris,
    "disjunction (separable)": _disjunction,
    "sparse": _sparse,
}


@pytest.mark.parametrize("case", list(MONOTONE_CASES))
def test_gis_log_likelihood_never_decreases(case):
    X, y = MONOTONE_CASES[case]()
    model = fit_quietly(MaxEnt(solver="gis", max_iter=400, tol=1e-12), X, y)
    history = model.log_likelihood_
    assert history.shape == (model.n_iter_ + 1,) and model.n_iter_ == 400
    # Near the maximum the exact increase (≈ gradient²) is far below the rounding of L itself, a
    # sum of n logs: there a step may show as ±1 ulp of |L|. Allowed: 16 ulp, nothing more.
    steps = np.diff(history)
    rounding = 16 * np.finfo(np.float64).eps * np.abs(history[1:])
    assert (steps >= -rounding).all(), (int(np.argmin(steps + rounding)), steps.min())
    assert (steps[:20] > 0).all()  # far from the maximum every step is a strict increase
    assert history[-1] > history[0] == pytest.approx(-len(y) * np.log(len(np.unique(y))))
    assert model.feature_sum_ == 1.0 + np.asarray(X.sum(axis=1)).max()
    proba = model.predict_proba(X)
    y_index = np.searchsorted(model.classes_, y)
    recomputed = np.log(proba[np.arange(len(y)), y_index]).sum()
    assert history[-1] == pytest.approx(recomputed, rel=1e-12, abs=1e-9)


def test_unseen_feature_class_pairs_are_driven_down_without_breaking_monotonicity():
    X, y = _digits()
    model = fit_quietly(MaxEnt(solver="gis", max_iter=50, tol=1e-12), X, y)
    seen = np.array([(X[y == c] > 0).any(axis=0) for c in model.classes_])
    active = (X > 0).any(axis=0)
    unseen = active[np.newaxis, :] & ~seen
    assert unseen.sum() > 20  # digits has many pixels some digit never inks
    # each step moves them by at least (1/V)·log(E_model/tiny)… far below every seen weight
    assert model.coef_[unseen].max() < model.coef_[seen].min()
    np.testing.assert_array_equal(model.coef_[:, ~active], 0.0)  # 0/0: never active, stays 0


# --- against scikit-learn --------------------------------------------------------------------
@pytest.mark.parametrize(("k", "seed"), [(3, 0), (4, 5), (2, 1)])
@pytest.mark.parametrize("solver", ["gis", "lbfgs"])
def test_probabilities_match_logistic_regression_without_penalty(solver, k, seed):
    X, y = softmax_data(seed, n=200, d=4, k=k)
    X_new = np.random.default_rng(99).random((100, 4))
    peer = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    model = MaxEnt(solver=solver, tol=1e-6, max_iter=100_000).fit(X, y)
    assert model.converged_
    for data in (X, X_new):
        difference = np.abs(model.predict_proba(data) - peer.predict_proba(data)).max()
        assert difference <= 1e-3
        np.testing.assert_array_equal(model.predict(data), peer.predict(data))
    # the maximum is a maximum: the peer's log-likelihood is no higher than ours, to rounding
    peer_ll = np.log(peer.predict_proba(X)[np.arange(len(y)), y]).sum()
    assert model.log_likelihood_[-1] == pytest.approx(peer_ll, rel=1e-6)


def test_at_convergence_the_expectations_match():
    # Seed 003's constraints: model expectation = empirical expectation for every feature.
    X, y = softmax_data(0)
    for solver in ("gis", "lbfgs"):
        model = MaxEnt(solver=solver, tol=1e-7, max_iter=100_000).fit(X, y)
        onehot = np.eye(3)[y]
        proba = model.predict_proba(X)
        gap = np.abs((onehot - proba).T @ X).max() / len(y)
        assert gap <= 1e-7 and np.abs((onehot - proba).sum(axis=0)).max() / len(y) <= 1e-7


def test_gis_and_lbfgs_reach_the_same_model():
    X, y = softmax_data(6, n=300, d=5, k=4, scale=2.0)
    gis = MaxEnt(solver="gis", tol=1e-8, max_iter=200_000).fit(X, y)
    lbfgs = MaxEnt(solver="lbfgs", tol=1e-8).fit(X, y)
    assert gis.n_iter_ > 20 * lbfgs.n_iter_  # GIS is slow
    np.testing.assert_allclose(gis.predict_proba(X), lbfgs.predict_proba(X), atol=1e-6)
    assert gis.log_likelihood_[-1] == pytest.approx(lbfgs.log_likelihood_[-1], rel=1e-10)
    # the weights are defined up to a common shift per feature across classes
    centred = [m.coef_ - m.coef_.mean(axis=0) for m in (gis, lbfgs)]
    np.testing.assert_allclose(*centred, atol=1e-4)


def test_an_explicit_class_conditional_slack_column_gives_the_same_model():
    # Appending V − s(x) as an input column makes every sum exactly V; the column is affine in x,
    # so with the bias it adds nothing to the model family: the same maximum, other GIS steps.
    X, y = softmax_data(4, n=150, d=3, k=3)
    implicit = MaxEnt(solver="gis", tol=1e-8, max_iter=200_000).fit(X, y)
    V = implicit.feature_sum_
    X_slack = np.column_stack([X, V - 1.0 - X.sum(axis=1)])
    explicit = MaxEnt(solver="gis", tol=1e-8, max_iter=200_000).fit(X_slack, y)
    assert explicit.feature_sum_ == pytest.approx(V, rel=1e-15)
    np.testing.assert_allclose(
        explicit.predict_proba(X_slack), implicit.predict_proba(X), atol=1e-6
    )


def test_lbfgs_takes_features_of_either_sign_and_sparse_input():
    X, y = softmax_data(2, n=200, d=5, k=3)
    X = X - 0.5
    peer = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(X, y)
    dense = MaxEnt(tol=1e-8).fit(X, y)
    sparse = MaxEnt(tol=1e-8).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(dense.predict_proba(X), peer.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(sparse.predict_proba(X), dense.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize(("k", "peer_C"), [(3, 0.5), (2, 1.0)])
def test_penalty_c_matches_logistic_regression(k, peer_C):
    # MaxEnt(C=0.5): LogisticRegression(C=0.5) with 3 classes, C=1.0 with 2 (module docstring).
    X, y = softmax_data(7, n=200, d=4, k=k)
    peer = LogisticRegression(C=peer_C, tol=1e-10, max_iter=10_000).fit(X, y)
    model = MaxEnt(C=0.5, tol=1e-9).fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), peer.predict_proba(X), atol=1e-7)
    proba = model.predict_proba(X)
    assert model.log_likelihood_[-1] == pytest.approx(np.log(proba[np.arange(200), y]).sum())


def test_two_classes_decision_is_the_score_difference():
    X, y = softmax_data(1, n=150, d=3, k=2)
    model = MaxEnt().fit(X, np.where(y == 1, "yes", "no"))
    scores = X @ model.coef_.T + model.intercept_
    np.testing.assert_allclose(model.decision_function(X), scores[:, 1] - scores[:, 0])
    assert set(model.predict(X)) <= {"yes", "no"}
    np.testing.assert_array_equal(
        model.predict(X), np.where(model.decision_function(X) > 0, "yes", "no")
    )


@pytest.mark.parametrize("solver", ["gis", "lbfgs"])
def test_same_data_same_model_bitwise(solver):
    X, y = softmax_data(3, n=120, d=3, k=3)
    a = MaxEnt(solver=solver, tol=1e-6, max_iter=5000).fit(X, y)
    b = MaxEnt(solver=solver, tol=1e-6, max_iter=5000).fit(X, y)
    assert a.coef_.tobytes() == b.coef_.tobytes()
    assert a.intercept_.tobytes() == b.intercept_.tobytes()
    assert a.log_likelihood_.tobytes() == b.log_likelihood_.tobytes()


def test_max_iter_reached_warns_and_is_recorded():
    X, y = softmax_data(0)
    with pytest.warns(ConvergenceWarning, match=r"MaxEnt \(gis\) stopped at max_iter=5"):
        model = MaxEnt(solver="gis", max_iter=5).fit(X, y)
    assert model.n_iter_ == 5 and not model.converged_ and model.log_likelihood_.shape == (6,)


# --- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"max_iter": 0}, "max_iter: must be an integer in [1, inf), got 0"),
        ({"max_iter": 2.5}, "max_iter: must be an integer in [1, inf), got 2.5"),
        ({"tol": 0.0}, "tol: must be a number in (0, inf), got 0.0"),
        ({"tol": -1e-4}, "tol: must be a number in (0, inf), got -0.0001"),
        ({"solver": "newton"}, "solver: must be one of 'lbfgs', 'gis', got 'newton'"),
        ({"C": 0.0}, "C: must be a number in (0, inf), got 0.0"),
        ({"solver": "gis", "C": 1.0}, "C: applies to solver 'lbfgs' only"),
    ],
)
def test_bad_parameters_are_one_line_errors(params, message):
    X, y = softmax_data(0, n=20)
    with pytest.raises(LinclsInputError) as info:
        MaxEnt(**params).fit(X, y)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


@pytest.mark.parametrize("sparse", [False, True])
def test_negative_features_for_gis_are_one_line_error(sparse):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, -0.25]])
    with pytest.raises(LinclsInputError) as info:
        MaxEnt(solver="gis").fit(sp.csr_matrix(X) if sparse else X, [1, 0, 1])
    assert str(info.value) == (
        "X: Negative values in data: solver 'gis' needs features ≥ 0 (its monotonicity "
        "theorem), row 2 holds -0.25; solver 'lbfgs' takes either sign"
    )
    assert MaxEnt(solver="lbfgs").fit(X, [1, 0, 1]).n_iter_ > 0


def test_one_class_is_a_one_line_error():
    with pytest.raises(LinclsInputError, match=r"^y: needs at least two classes"):
        MaxEnt().fit(np.ones((3, 2)), [4, 4, 4])


# --- through the runner ------------------------------------------------------------------------
RUNS = {
    "lbfgs on multiclass": ["dataset=multiclass", "dataset.n=300", "dataset.d=5",
                            "dataset.n_classes=4", "dataset.n_test=200"],
    "gis on iris, 3 classes": ["learner.solver=gis", "learner.max_iter=3000", "dataset=iris",
                               "dataset.classes=null", "dataset.standardize=false"],
    "lbfgs on iris, 3 classes, standardized": ["dataset=iris", "dataset.classes=null"],
}  # fmt: skip


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("case", list(RUNS))
def test_logged_run(store, case):
    config = compose_config(["learner=maxent", *RUNS[case], f"tracking.uri={store}"])
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    m, tags = run.data.metrics, run.data.tags
    model, data = outcome.learner, outcome.dataset
    assert len(model.classes_) == len(np.unique(data.y)) >= 3
    assert m["train_accuracy"] == model.score(data.X, data.y) > 0.9
    assert m["test_accuracy"] == model.score(data.X_test, data.y_test)
    assert m["iterations"] == model.n_iter_ and m["converged"] == float(model.converged_)
    assert m["log_likelihood"] == model.log_likelihood_[-1] > model.log_likelihood_[0]
    assert tags["bounds.none"] == "not an online learner: no mistake bound applies"
    assert "mistakes" not in m and "bound_violated" not in tags
    key = "log_likelihood_per_iteration"
    points = histories(MlflowClient(tracking_uri=store), [run.info.run_id], [key])[key]
    points = points[run.info.run_id]
    assert points[0] == (0, model.log_likelihood_[0]) and points[-1][0] == model.n_iter_
    assert len(points) <= 201
    if model.solver == "gis":
        values = [v for _, v in points]
        assert values == sorted(values)  # never decreases
    # the same config again: bitwise the same metrics
    again = evaluation.measure(config).metrics
    drop = {"fit_seconds", "log_likelihood_per_iteration"}  # a curve's last point is in m
    assert {k: v for k, v in again.items() if k not in drop} == {
        k: v for k, v in m.items() if k not in drop
    }


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["learner.solver=gis", "dataset=multiclass"], "dataset.X: Negative values in data"),
        (["learner.max_iter=0"], "learner.max_iter: must be an integer in [1, inf), got 0"),
        (["learner.tol=0"], "learner.tol: must be a number in (0, inf), got 0.0"),
        (["learner.tol=-1"], "learner.tol: must be a number in (0, inf), got -1.0"),
        (["learner.solver=sgd"], "learner.solver: must be one of 'lbfgs', 'gis', got 'sgd'"),
        (["learner.C=-2"], "learner.C: must be a number in (0, inf), got -2.0"),
    ],
)
def test_bad_config_is_one_line_naming_the_field(overrides, message):
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(compose_config(["learner=maxent", *overrides]))
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_cli_negative_features_for_gis_exit_with_one_line_and_no_run(tmp_path):
    uri = f"sqlite:///{tmp_path / 'gis.db'}"
    done = run_cli(
        ["learner=maxent", "learner.solver=gis", "dataset=multiclass", f"tracking.uri={uri}"],
        cwd=tmp_path,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: dataset.X: Negative values in data: solver 'gis' needs")
    assert runs_of(uri) == []
