"""LeastSquaresClassifier: RidgeClassifier(alpha=0), the normal equations, seed 002's Figure 2b."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config, runs_of
from sklearn.datasets import make_classification
from sklearn.linear_model import RidgeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation, runner
from lincls.data import make_far_points
from lincls.errors import LinclsInputError
from lincls.learners import LeastSquaresClassifier, Perceptron


@parametrize_with_checks(
    [
        LeastSquaresClassifier(),
        LeastSquaresClassifier(solver="lsqr"),
        LeastSquaresClassifier(fit_intercept=False),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def regression_set(n, d, seed, dtype=np.float64):
    """Full-rank rows of mixed scales and offsets, labels of a noisy hyperplane."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 10.0, d) + rng.standard_normal(d)
    y = (X @ rng.standard_normal(d) + rng.standard_normal(n) > 0).astype(int)
    return X.astype(dtype), y


SETS = [(50, 3, 0), (300, 10, 1), (1000, 40, 2), (200, 1, 3), (80, 60, 4)]


def assert_same_weights(ours, peer, rtol):
    # RidgeClassifier keeps a binary fit's coef_ as shape (n_features,) or (1, n_features)
    coef, intercept = np.reshape(peer.coef_, (1, -1)), float(np.ravel(peer.intercept_)[0])
    scale = float(np.abs(coef).max())
    np.testing.assert_allclose(ours.coef_, coef, rtol=rtol, atol=rtol * scale)
    assert ours.intercept_[0] == pytest.approx(intercept, rel=rtol, abs=rtol * scale)


@pytest.mark.parametrize(("n", "d", "seed"), SETS)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_equals_ridge_classifier_without_penalty(n, d, seed, fit_intercept):
    X, y = regression_set(n, d, seed)
    X_new, _ = regression_set(500, d, seed + 100)
    ours = LeastSquaresClassifier(fit_intercept=fit_intercept).fit(X, y)
    peer = RidgeClassifier(alpha=0.0, fit_intercept=fit_intercept).fit(X, y)
    assert_same_weights(ours, peer, 1e-8)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))
    np.testing.assert_array_equal(ours.predict(X_new), peer.predict(X_new))
    assert ours.rank_ == d + fit_intercept and ours.n_iter_ == 1
    assert ours.solver_ == "cholesky"


@pytest.mark.parametrize(("n", "d", "seed"), SETS[:4])
def test_sparse_input_solved_by_lsqr_equals_the_dense_peer(n, d, seed):
    # LSQR on the CSR rows, against RidgeClassifier(alpha=0) on the same rows densified (its own
    # sparse solver stops at tol=1e-4).
    X, y = regression_set(n, d, seed)
    X[np.abs(X) < 0.3 * np.abs(X).mean(axis=0)] = 0.0
    ours = LeastSquaresClassifier().fit(sp.csr_matrix(X), y)
    peer = RidgeClassifier(alpha=0.0).fit(X, y)
    assert ours.solver_ == "lsqr" and ours.converged_ and 1 <= ours.n_iter_ <= 10 * (d + 1)
    assert_same_weights(ours, peer, 1e-8)
    np.testing.assert_array_equal(ours.predict(sp.csr_matrix(X)), peer.predict(X))
    dense = LeastSquaresClassifier(solver="lstsq").fit(sp.csr_matrix(X), y)
    assert_same_weights(dense, peer, 1e-8)


def test_float32_and_string_labels():
    X, y = regression_set(300, 6, seed=7, dtype=np.float32)
    labels = np.array(["lemon", "orange"])[y]
    ours = LeastSquaresClassifier().fit(X, labels)
    peer = RidgeClassifier(alpha=0.0).fit(X, labels)
    assert ours.coef_.dtype == np.float64
    assert_same_weights(ours, peer, 1e-5)  # the peer solves in float32
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))
    assert list(ours.classes_) == ["lemon", "orange"]


def test_one_feature_by_hand():
    # x = 0, 1, 2, 3 with labels −, −, +, +: slope Σ(x − x̄)y / Σ(x − x̄)² = 4/5, and the line
    # passes through (x̄, ȳ) = (1.5, 0), so the intercept is −1.2 and the boundary x = 1.5.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    model = LeastSquaresClassifier().fit(X, [0, 0, 1, 1])
    np.testing.assert_allclose(model.coef_, [[0.8]], rtol=1e-14)
    np.testing.assert_allclose(model.intercept_, [-1.2], rtol=1e-14)
    np.testing.assert_array_equal(model.predict([[1.4], [1.6]]), [0, 1])


@pytest.mark.parametrize("sparse", [False, True])
def test_the_residual_is_orthogonal_to_every_column(sparse):
    # The normal equations X'ᵀ(X'w − y) = 0 hold, without ever forming X'ᵀX.
    X, y = regression_set(400, 12, seed=9)
    model = LeastSquaresClassifier().fit(sp.csr_matrix(X) if sparse else X, y)
    design = np.c_[X, np.ones(X.shape[0])]
    residual = design @ np.r_[model.coef_[0], model.intercept_] - np.where(y == 1, 1.0, -1.0)
    gradient = design.T @ residual
    assert np.abs(gradient).max() <= 1e-9 * np.abs(design).sum(axis=0).max()


def test_rank_deficient_design_gets_the_minimum_norm_solution():
    # A duplicated column: the weight of the single column splits in two equal halves.
    X, y = regression_set(100, 2, seed=5)
    single = LeastSquaresClassifier().fit(X, y)
    doubled = LeastSquaresClassifier().fit(np.c_[X, X[:, 1]], y)
    assert doubled.rank_ == 3
    np.testing.assert_allclose(doubled.coef_[0, [1, 2]], single.coef_[0, 1] / 2, rtol=1e-10)
    np.testing.assert_allclose(doubled.coef_[0, 0], single.coef_[0, 0], rtol=1e-10)
    np.testing.assert_allclose(doubled.intercept_, single.intercept_, rtol=1e-10)


def weights_of(model) -> np.ndarray:
    return np.r_[model.coef_[0], model.intercept_]


def pinv_weights(X, y) -> np.ndarray:
    """pinv([X, 1])·y at the array API's cutoff max(n, d')·ε·σ_max (numpy's default is 1e-15)."""
    design = np.c_[X, np.ones(X.shape[0])]
    return np.linalg.pinv(design, rtol=None) @ np.where(y == 1, 1.0, -1.0)


@pytest.mark.parametrize("solver", ["auto", "lstsq"])
def test_rank_deficient_classification_set_gets_pinv_and_its_numerical_rank(solver):
    # Two redundant features (combinations of the two informative ones) leave [X, 1] with two
    # null directions that rounding makes singular values of ~1e-15; LAPACK's default cutoff
    # (ε·σ_max) kept one of them, reported rank 50 and weights of 4e12.
    X, y = make_classification(n_samples=100, n_features=50, random_state=42)
    model = LeastSquaresClassifier(solver=solver).fit(X, y)
    expected = pinv_weights(X, y)
    assert model.solver_ == "lstsq" and model.rank_ == 49
    assert np.linalg.matrix_rank(np.c_[X, np.ones(100)]) == 49
    np.testing.assert_allclose(weights_of(model), expected, rtol=0, atol=1e-8)
    assert np.abs(weights_of(model)).max() < 1.0


@pytest.mark.parametrize(("n", "d", "seed"), SETS)
def test_auto_solves_well_conditioned_data_by_cholesky_as_the_svd_does(n, d, seed):
    X, y = regression_set(n, d, seed)
    auto = LeastSquaresClassifier().fit(X, y)
    svd = LeastSquaresClassifier(solver="lstsq").fit(X, y)
    assert auto.solver_ == "cholesky" and svd.solver_ == "lstsq"
    assert auto.rank_ == svd.rank_ == d + 1
    scale = np.abs(weights_of(svd)).max()
    np.testing.assert_allclose(weights_of(auto), weights_of(svd), rtol=0, atol=1e-10 * scale)


def test_columns_of_very_different_scales_keep_every_weight_accurate():
    # Cholesky runs on X'ᵀX' scaled to a unit diagonal: the weights, from 1e-2 to 1e2 apart,
    # each keep their own relative accuracy.
    rng = np.random.default_rng(11)
    scales = np.array([1e-2, 1e-1, 1.0, 1e1, 1e2])
    X = rng.standard_normal((500, 5)) * scales
    y = (X @ (1.0 / scales) + rng.standard_normal(500) > 0).astype(int)
    model = LeastSquaresClassifier().fit(X, y)
    assert model.solver_ == "cholesky"
    np.testing.assert_allclose(weights_of(model), pinv_weights(X, y), rtol=1e-10)


@pytest.mark.parametrize(
    ("make", "rank"),
    [
        # two nearly equal columns: full rank, but the normal equations would lose 14 digits
        (lambda X, rng: X[:, 3] + 1e-7 * rng.standard_normal(X.shape[0]), 6),
        (lambda X, rng: np.zeros(X.shape[0]), 5),  # a zero column
        (lambda X, rng: 2.0 * X[:, 0] - X[:, 1], 5),  # an exact combination
        # independent of the others, well-conditioned once scaled, but under the SVD's cutoff
        (lambda X, rng: 1e-14 * rng.standard_normal(X.shape[0]), 5),
    ],
)
def test_ill_conditioned_data_go_to_the_svd(make, rank):
    rng = np.random.default_rng(12)
    X = rng.standard_normal((400, 5))
    X[:, 4] = make(X, rng)
    y = (X[:, 0] + 0.3 * rng.standard_normal(400) > 0).astype(int)
    model = LeastSquaresClassifier().fit(X, y)
    assert model.solver_ == "lstsq" and model.rank_ == rank
    expected = pinv_weights(X, y)
    np.testing.assert_allclose(
        weights_of(model), expected, rtol=0, atol=1e-8 * np.abs(expected).max()
    )


def test_layouts_and_dtypes_solve_alike():
    X, y = regression_set(300, 8, seed=13)
    reference = weights_of(LeastSquaresClassifier().fit(X, y))
    for variant in (np.asfortranarray(X), X[:, ::-1][:, ::-1], X.astype(np.float32)):
        model = LeastSquaresClassifier().fit(variant, y)
        assert model.solver_ == "cholesky"
        exact = variant.dtype == np.float64
        expected = reference if exact else pinv_weights(variant.astype(np.float64), y)
        np.testing.assert_allclose(weights_of(model), expected, rtol=1e-12)
    again = LeastSquaresClassifier().fit(X, y)
    assert np.array_equal(weights_of(again), reference)  # deterministic to the bit


def test_lsqr_reports_an_iteration_limit_it_hit():
    X, y = regression_set(300, 20, seed=2)
    model = LeastSquaresClassifier(solver="lsqr", max_iter=2).fit(X, y)
    assert model.n_iter_ == 2 and not model.converged_


# --- seed 002's Figure 2b ------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 5, 20])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_far_points_drag_least_squares_into_errors_while_the_perceptron_separates(d, seed):
    data = make_far_points(d=d, seed=seed)
    y = data.y
    assert data.margin == pytest.approx(0.1, rel=1e-9) and data.radius == pytest.approx(10.0)
    least_squares = LeastSquaresClassifier().fit(data.X, y)
    errors = int((least_squares.predict(data.X) != y).sum())
    assert errors >= 5
    wrong = least_squares.predict(data.X) != y  # near points: the far ones are fitted instead
    assert (np.linalg.norm(data.X[wrong], axis=1) <= 1.0 + 1e-12).all()
    perceptron = Perceptron(max_passes=1000).fit(data.X, y)
    assert perceptron.converged_ and (perceptron.predict(data.X) == y).all()
    # Without the far cluster, least squares classifies the same near points (almost) all right.
    near = np.linalg.norm(data.X, axis=1) <= 1.0 + 1e-12
    alone = LeastSquaresClassifier().fit(data.X[near], y[near])
    assert int((alone.predict(data.X[near]) != y[near]).sum()) <= 1


def test_far_points_are_certified_and_reproducible():
    data = make_far_points(n=60, d=3, margin=0.2, near=2.0, radius=30.0, far=0.25, seed=4)
    u, b = data.u, data.b
    margins = data.y * (data.X @ u + b)
    norms = np.linalg.norm(data.X, axis=1)
    assert b == 0.0 and np.linalg.norm(u) == pytest.approx(1.0, rel=1e-15)
    assert margins.min() == pytest.approx(0.2, rel=1e-12) and margins.min() == data.margin
    assert norms.max() == pytest.approx(30.0, rel=1e-12) and norms.max() == data.radius
    far_rows = norms > 2.0 + 1e-12
    assert far_rows.sum() == 15 and (data.y[far_rows] == 1).all()
    assert (data.X[far_rows] @ u >= 0.9 * 30.0 * (1 - 1e-12)).all()
    assert ((data.y[~far_rows] == 1).sum(), (data.y[~far_rows] == -1).sum()) == (23, 22)
    test_margins = data.y_test * (data.X_test @ u)
    assert data.X_test.shape == (60, 3) and test_margins.min() >= 0.2 * (1 - 1e-12)
    again = make_far_points(n=60, d=3, margin=0.2, near=2.0, radius=30.0, far=0.25, seed=4)
    assert again.fingerprint == data.fingerprint
    assert make_far_points(n=60, d=3, seed=5).fingerprint != data.fingerprint


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"margin": 1.0}, "margin: must be < near = 1, got 1"),
        ({"radius": 1.5}, "radius: must be ≥ 2·near = 2 so the far points are far, got 1.5"),
        ({"far": 0.0}, "far: must be a number in (0, 0.5], got 0.0"),
        ({"far": 0.001}, "far: must leave 1 to n − 2 far points, got round(0.001·100) = 0"),
        ({"n": 3}, "n: must be an integer in [4, inf), got 3"),
    ],
)
def test_far_points_bad_arguments(kwargs, message):
    with pytest.raises(LinclsInputError) as info:
        make_far_points(**kwargs)
    assert str(info.value) == message


# --- bad input -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"solver": "cholesky"}, "solver: must be one of 'auto', 'lstsq', 'lsqr', got 'cholesky'"),
        ({"tol": 0.0}, "tol: must be a number in (0, 1), got 0.0"),
        ({"max_iter": 0}, "max_iter: must be an integer in [1, inf), got 0"),
        ({"fit_intercept": "yes"}, "fit_intercept: must be true or false, got 'yes'"),
    ],
)
def test_bad_parameters_are_one_line_errors(params, message):
    X, y = regression_set(20, 2, seed=0)
    with pytest.raises(LinclsInputError) as info:
        LeastSquaresClassifier(**params).fit(X, y)
    assert str(info.value) == message


def test_bad_data_are_one_line_errors():
    X, y = regression_set(20, 3, seed=0)
    X_nan = X.copy()
    X_nan[6, 1] = np.nan
    cases = [
        (X_nan, y, "X: contains NaN or inf (first in row 6)"),
        (X, np.zeros(20), "y: needs two classes, got one class"),
        (X, np.arange(20) % 3, "y: Only binary classification is supported."),
    ]
    for Xc, yc, start in cases:
        with pytest.raises(LinclsInputError) as info:
            LeastSquaresClassifier().fit(Xc, yc)
        assert str(info.value).startswith(start) and "\n" not in str(info.value)


def test_bad_config_names_the_learner_field_before_any_run(store):
    config = compose_config(["learner=least_squares", "learner.solver=qr", f"tracking.uri={store}"])
    with pytest.raises(LinclsInputError) as info:
        runner.execute(config)
    assert str(info.value).startswith("learner.solver: must be one of 'auto', 'lstsq', 'lsqr'")
    assert runs_of(store) == []


# --- a logged run --------------------------------------------------------------------------
def test_a_run_on_far_points_logs_accuracies_and_says_no_bound_applies(store):
    config = compose_config(
        ["learner=least_squares", "dataset=far_points", "seed=3", f"tracking.uri={store}"]
    )
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    assert run.info.run_id == outcome.run_id and run.info.status == "FINISHED"
    m, tags, params = run.data.metrics, run.data.tags, run.data.params
    data = make_far_points(seed=3)
    model = LeastSquaresClassifier().fit(data.X, data.y)
    assert m["train_accuracy"] == model.score(data.X, data.y) < 1.0
    assert m["test_accuracy"] == model.score(data.X_test, data.y_test)
    assert m["margin"] == pytest.approx(0.1, rel=1e-9) and m["radius"] == pytest.approx(10.0)
    assert "mistakes" not in m and not any(k.startswith("bound.") for k in m)
    assert tags["bounds.none"] == LeastSquaresClassifier.no_bound_reason
    assert tags["learner"] == "least_squares" and tags["dataset"] == "far_points"
    assert params["learner.solver"] == "auto" and params["dataset.radius"] == "10.0"
    # the perceptron separates the same logged data
    perceptron = evaluation.measure(
        compose_config(["dataset=far_points", "seed=3", "passes=100", "certificates.svm=false"])
    )
    assert perceptron.metrics["train_accuracy"] == 1.0
    assert perceptron.metrics["mistakes"] <= perceptron.metrics["bound.novikoff_bias"]
