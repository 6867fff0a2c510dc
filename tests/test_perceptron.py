"""The perceptron: bitwise agreement with scikit-learn, the textbook record, labels, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls.data import make_orthonormal, make_separable
from lincls.errors import LinclsInputError
from lincls.learners import Perceptron


def noisy_problem(n=400, d=9, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = (X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def sklearn_fit(X, y, passes, lr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SkPerceptron(shuffle=False, tol=None, max_iter=passes, eta0=lr).fit(X, y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("passes", [1, 5])
@pytest.mark.parametrize("lr", [1.0, 0.1, 3.7])
def test_dense_bitwise_equal_to_sklearn(dtype, passes, lr):
    X, y = noisy_problem(dtype=dtype, seed=passes)
    ours = Perceptron(bias="feature", stop_when_converged=False, max_passes=passes, lr=lr).fit(X, y)
    peer = sklearn_fit(X, y, passes, lr)
    assert ours.coef_.dtype == peer.coef_.dtype == dtype
    assert np.array_equal(ours.coef_, peer.coef_)
    assert np.array_equal(ours.intercept_, peer.intercept_)
    assert ours.mistakes_ > 20 * passes  # noisy data: the comparison exercised many updates


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("passes", [1, 5])
def test_csr_bitwise_equal_to_sklearn_with_its_sparse_intercept_decay(dtype, passes):
    X, y = noisy_problem(dtype=dtype, seed=10 + passes)
    X[np.abs(X) < 0.8] = 0.0
    Xs = sp.csr_matrix(X)
    ours = Perceptron(
        stop_when_converged=False, max_passes=passes, lr=0.5, intercept_decay=0.01
    ).fit(Xs, y)
    peer = sklearn_fit(Xs, y, passes, 0.5)
    assert np.array_equal(ours.coef_, peer.coef_)
    assert np.array_equal(ours.intercept_, peer.intercept_)
    # the textbook bias step (the default) differs from sklearn's damped one on sparse data
    textbook = Perceptron(stop_when_converged=False, max_passes=passes, lr=0.5).fit(Xs, y)
    assert not np.array_equal(textbook.intercept_, peer.intercept_)


def test_csr_and_dense_give_the_same_run():
    X, y = noisy_problem(seed=3)
    X[np.abs(X) < 0.5] = 0.0
    dense = Perceptron(max_passes=4, stop_when_converged=False).fit(X, y)
    sparse = Perceptron(max_passes=4, stop_when_converged=False).fit(sp.csr_matrix(X), y)
    assert np.array_equal(dense.mistake_steps_, sparse.mistake_steps_)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-12)


def test_orthonormal_instance_makes_exactly_d_mistakes():
    data = make_orthonormal(d=37, seed=1)
    model = Perceptron(bias="none").fit(data.X, data.y)
    assert model.mistakes_ == 37
    assert model.mistakes_per_pass_.tolist() == [37, 0]
    assert model.converged_ and model.n_passes_ == 2
    assert model.mistake_steps_.tolist() == list(range(37))


def test_zero_activation_is_a_mistake():
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    model = Perceptron(bias="none", max_passes=1).fit(X, np.array([1, -1]))
    # from w = 0 both activations are 0: both are mistakes, for either label
    assert model.mistakes_ == 2
    assert model.coef_.tolist() == [[1.0, -1.0]]


def test_record_is_consistent():
    X, y = noisy_problem(n=300, seed=4)
    model = Perceptron(max_passes=6, stop_when_converged=False).fit(X, y)
    assert model.mistakes_ == model.mistakes_per_pass_.sum() == model.mistake_steps_.shape[0]
    assert model.updates_ == model.mistakes_  # the perceptron updates exactly on mistakes
    assert np.all(np.diff(model.mistake_steps_) > 0)
    assert model.n_steps_ == 6 * 300 and model.n_passes_ == 6 and not model.converged_
    assert np.array_equal(model.mistake_indices_, model.mistake_steps_ % 300)


def test_stops_after_the_first_pass_without_mistakes():
    data = make_separable(200, 5, 0.2, 1.0, seed=2)
    model = Perceptron(max_passes=1000).fit(data.X, data.y)
    assert model.converged_
    assert model.mistakes_per_pass_[-1] == 0 and np.all(model.mistakes_per_pass_[:-1] > 0)
    assert model.score(data.X, data.y) == 1.0


def test_learning_rate_only_scales_the_weights_from_zero():
    data = make_separable(300, 8, 0.05, 1.0, offset=0.2, seed=5)
    base = Perceptron(lr=1.0).fit(data.X, data.y)
    for lr in (0.25, 4.0, 1024.0):  # powers of two: the scaling is exact in floating point
        scaled = Perceptron(lr=lr).fit(data.X, data.y)
        assert np.array_equal(scaled.mistake_steps_, base.mistake_steps_)
        assert np.array_equal(scaled.coef_, lr * base.coef_)
        assert np.array_equal(scaled.intercept_, lr * base.intercept_)


def test_r2_bias_rule_steps_by_r_squared():
    data = make_separable(200, 4, 0.5, 3.0, offset=1.0, seed=6)
    model = Perceptron(bias="r2").fit(data.X, data.y)
    assert model.radius_ == pytest.approx(3.0, rel=1e-12)
    assert model.bias_feature_ == pytest.approx(3.0, rel=1e-12)
    # b is a sum of ±R² steps
    steps = model.intercept_[0] / 9.0
    assert steps == pytest.approx(round(steps), abs=1e-9)


@pytest.mark.parametrize(
    "labels", [np.array([0, 1]), np.array([-1, 1]), np.array(["ham", "spam"]), np.array([2, 7])]
)
def test_any_two_labels_map_to_plus_minus_one(labels):
    data = make_separable(120, 3, 0.1, 1.0, seed=7)
    y = np.where(data.y > 0, labels[1], labels[0])
    reference = Perceptron().fit(data.X, data.y)
    model = Perceptron().fit(data.X, y)
    assert list(model.classes_) == sorted(labels.tolist())
    assert np.array_equal(model.coef_, reference.coef_)
    assert np.array_equal(model.predict(data.X), y)


def test_shuffle_is_seeded_and_deterministic():
    X, y = noisy_problem(seed=8)
    a = Perceptron(shuffle=True, random_state=3, max_passes=5).fit(X, y)
    b = Perceptron(shuffle=True, random_state=3, max_passes=5).fit(X, y)
    c = Perceptron(shuffle=True, random_state=4, max_passes=5).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.mistake_steps_, b.mistake_steps_)
    assert not np.array_equal(a.mistake_steps_, c.mistake_steps_)


def test_partial_fit_continues_the_record():
    X, y = noisy_problem(n=200, seed=9)
    whole = Perceptron(max_passes=3, stop_when_converged=False).fit(X, y)
    stream = Perceptron()
    for _ in range(3):
        stream.partial_fit(X, y, classes=np.unique(y))
    assert np.array_equal(stream.coef_, whole.coef_)
    assert np.array_equal(stream.mistake_steps_, whole.mistake_steps_)
    assert stream.mistakes_per_pass_.tolist() == whole.mistakes_per_pass_.tolist()


def test_coef_init_starts_the_run_elsewhere():
    # seed 001's worked example starts from [w0, w1, w2] = [-1, 0, 0], w0 the bias
    X = np.array([[1, 1], [3, 2], [2, 4], [3, 4], [2, 3]], dtype=float)
    y = np.array([-1, 1, 1, 1, -1])
    model = Perceptron(max_passes=1).fit(X, y, coef_init=[0.0, 0.0], intercept_init=[-1.0])
    assert not model.zero_init_
    assert model.intercept_.tolist() == [-1.0] and model.coef_.tolist() == [[1.0, -1.0]]
    assert model.mistake_indices_.tolist() == [1, 4]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"lr": 0.0}, "lr"),
        ({"lr": -1.0}, "lr"),
        ({"bias": "sometimes"}, "bias"),
        ({"max_passes": 0}, "max_passes"),
        ({"intercept_decay": 0.0}, "intercept_decay"),
    ],
)
def test_bad_parameters_raise_one_line_errors(params, field):
    X, y = noisy_problem(n=20)
    with pytest.raises(LinclsInputError) as info:
        Perceptron(**params).fit(X, y)
    assert str(info.value).startswith(f"{field}: ")
    assert "\n" not in str(info.value)


def test_bad_data_raise_one_line_errors():
    X, y = noisy_problem(n=20)
    X_nan = X.copy()
    X_nan[4, 2] = np.nan
    X_inf = X.copy()
    X_inf[7, 0] = np.inf
    cases = [
        (X_nan, y, "X: contains NaN or inf (first in row 4)"),
        (X_inf, y, "X: contains NaN or inf (first in row 7)"),
        (X, np.zeros(20), "y: needs two classes, got one class"),
        (X, np.arange(20) % 3, "y: Only binary classification is supported."),
    ]
    for Xc, yc, start in cases:
        with pytest.raises(LinclsInputError) as info:
            Perceptron().fit(Xc, yc)
        assert str(info.value).startswith(start) and "\n" not in str(info.value)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("bias", ["feature", "r2", "none"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_the_pass_finds_non_finite_rows_and_learns_nothing_from_them(dtype, bias, bad):
    # The dense fit leaves the finiteness of X to its pass: the same one-line error, and a
    # refused partial_fit leaves the weights and the record as they were.
    X, y = noisy_problem(n=60, dtype=dtype, seed=11)
    X_bad = X.copy()
    X_bad[37, 8] = bad
    with pytest.raises(LinclsInputError) as info:
        Perceptron(bias=bias).fit(X_bad, y)
    assert str(info.value) == (
        "X: contains NaN or inf (first in row 37); all values must be finite"
    )
    model = Perceptron(bias=bias).partial_fit(X, y)
    coef, intercept, record = model.coef_.copy(), model.intercept_.copy(), model.mistake_steps_
    with pytest.raises(LinclsInputError, match=r"first in row 37"):
        model.partial_fit(X_bad, y)
    assert np.array_equal(model.coef_, coef) and np.array_equal(model.intercept_, intercept)
    assert np.array_equal(model.mistake_steps_, record) and model.n_passes_ == 1


def test_finite_rows_whose_activations_overflow_still_fit():
    # Values near the largest double are finite, but their sums overflow: the pass counts
    # non-finite activations, the exact check then finds X finite, and the fit goes on.
    X = np.array([[1e308, 1e308], [-1e308, 1e308], [1.0, -1.0], [1e308, -1e308]])
    y = np.array([1, -1, 1, -1])
    model = Perceptron(max_passes=1).fit(X, y)
    assert model.mistakes_ >= 1 and model.n_passes_ == 1


@parametrize_with_checks([Perceptron(), Perceptron(bias="r2", shuffle=True, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_a_diverged_run_notes_no_hyperplane_and_warns_nothing():
    """lr = 1e308 at radius 1e10: w = lr·y·x is infinite. A rule whose weights diverge is a run
    (test_bounds_every_option): it notes that there is no hyperplane, and its accuracies come
    without the RuntimeWarnings its predictions printed."""
    from lincls.evaluation import fit_and_evaluate

    data = make_separable(n=50, d=2, margin=1e9, radius=1e10, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        outcome = fit_and_evaluate(Perceptron(lr=1e308), data)
    assert outcome.tags["hyperplane.note"] == "the weights are not finite: no hyperplane"
    assert outcome.metrics["train_accuracy"] == 0.5
