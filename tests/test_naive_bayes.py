"""NaiveBayesLinear: seed 000 §2's weights by hand, against BernoulliNB on random binary data
(predictions, weights, probabilities), binarize, partial_fit, bad input, a logged run."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config, run_cli, runs_of
from sklearn.naive_bayes import BernoulliNB
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation, runner
from lincls.errors import LinclsInputError
from lincls.learners import NaiveBayesLinear


# The defaults are BernoulliNB's (binarize=0.0): every check passes with them. binarize=None
# (binary features required) refused the continuous data of 37 of the 56 checks.
@parametrize_with_checks([NaiveBayesLinear(), NaiveBayesLinear(0.5, binarize=0.3)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_defaults_are_bernoulli_nb_defaults():
    ours, theirs = NaiveBayesLinear().get_params(), BernoulliNB().get_params()
    assert ours == {"alpha": 1.0, "binarize": 0.0}
    assert {key: theirs[key] for key in ours} == ours


# BernoulliNB's own test (scikit-learn's test_bnb): Manning, Raghavan and Schütze's Bernoulli
# model example, four documents over the words Beijing, Chinese, Japan, Macao, Shanghai, Tokyo,
# classes China (0) and Japan (1). That test gives BernoulliNB word presence (0/1); here the
# documents' word counts go in, and the default binarize=0.0 must reduce them to presence. The
# expected prior, P(word | class) and posterior are the values that test writes down.
BNB_COUNTS = np.array(
    [
        [1, 2, 0, 0, 0, 0],  # Chinese Beijing Chinese
        [0, 2, 0, 0, 1, 0],  # Chinese Chinese Shanghai
        [0, 1, 0, 1, 0, 0],  # Chinese Macao
        [0, 1, 1, 0, 0, 1],  # Tokyo Japan Chinese
    ],
    dtype=np.float64,
)
BNB_Y = np.array([0, 0, 0, 1])


def test_binarize_default_reproduces_bernoulli_nb_own_test():
    model = NaiveBayesLinear().fit(BNB_COUNTS, BNB_Y)
    np.testing.assert_allclose(np.exp(model.class_log_prior_), [0.75, 0.25], rtol=1e-15)
    np.testing.assert_allclose(
        np.exp(model.feature_log_prob_),
        [[0.4, 0.8, 0.2, 0.4, 0.4, 0.2], [1 / 3, 2 / 3, 2 / 3, 1 / 3, 1 / 3, 2 / 3]],
        rtol=1e-14,
    )
    new_document = np.array([[0.0, 3.0, 1.0, 0.0, 0.0, 1.0]])  # Chinese ×3 Tokyo Japan
    unnormalized = np.array([0.005183999999999999, 0.02194787379972565])
    np.testing.assert_allclose(
        model.predict_proba(new_document), [unnormalized / unnormalized.sum()], rtol=1e-12
    )
    assert model.predict(new_document)[0] == 1
    with pytest.raises(LinclsInputError, match=r"row 0 holds 2"):
        NaiveBayesLinear(binarize=None).fit(BNB_COUNTS, BNB_Y)


# --- seed 000 §2 by hand ---------------------------------------------------------------------
# Four examples, two features, α = 1. Class +1: rows (1,1), (1,0), (0,0) → N₊ = 3, N₁₊ = 2,
# N₂₊ = 1; class −1: row (0,1) → N₋ = 1, N₁₋ = 0, N₂₋ = 1.
# P(X₁=1|+) = 3/5, P(X₁=1|−) = 1/3; P(X₂=1|+) = 2/5, P(X₂=1|−) = 2/3.
# p₁ = log(9/5), q₁ = log((2/5)/(2/3)) = log(3/5); p₂ = log(3/5), q₂ = log((3/5)/(1/3)) = log(9/5).
# w₁ = p₁ − q₁ = log 3, w₂ = p₂ − q₂ = −log 3, w₀ = q₁ + q₂ + log(3/4 ÷ 1/4) = log(81/25).
HAND_X = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
HAND_Y = np.array([1, 1, 1, -1])


def test_weights_by_hand():
    model = NaiveBayesLinear(alpha=1.0).fit(HAND_X, HAND_Y)
    p = [math.log(9 / 5), math.log(3 / 5)]
    q = [math.log(3 / 5), math.log(9 / 5)]
    np.testing.assert_allclose(model.log_ratio_on_, p, rtol=1e-15)
    np.testing.assert_allclose(model.log_ratio_off_, q, rtol=1e-15)
    np.testing.assert_allclose(model.coef_, [[math.log(3), -math.log(3)]], rtol=1e-15)
    w0 = math.log(3 / 5) + math.log(9 / 5) + math.log(3)
    np.testing.assert_allclose(model.intercept_, [w0], rtol=1e-15)
    assert w0 == pytest.approx(math.log(81 / 25), rel=1e-15)
    # decision = log P(+1|x)/P(−1|x) under the model; the prior 3:1 outweighs (0,1)'s evidence
    decisions = [math.log(81 / 25), math.log(243 / 25), math.log(81 / 25), math.log(27 / 25)]
    np.testing.assert_allclose(model.decision_function(HAND_X), decisions, rtol=1e-14)
    np.testing.assert_array_equal(model.predict(HAND_X), [1, 1, 1, 1])
    np.testing.assert_array_equal(model.class_count_, [1, 3])
    np.testing.assert_array_equal(model.feature_count_, [[0, 1], [2, 1]])


def test_a_zero_decision_predicts_the_first_class_as_bernoulli_nb():
    # Both classes see the same row: w = 0 and w_0 = 0 exactly; BernoulliNB's argmax tie → class 0.
    X, y = np.array([[1.0, 0.0], [1.0, 0.0]]), np.array(["b", "a"])
    model = NaiveBayesLinear().fit(X, y)
    assert model.decision_function(X[:1])[0] == 0.0
    assert model.predict(X[:1])[0] == "a" == BernoulliNB().fit(X, y).predict(X[:1])[0]


# --- against BernoulliNB ------------------------------------------------------------------------
def random_binary(seed: int):
    """A random binary dataset: drawn n, d, density, class balance, labels and α."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 400))
    d = int(rng.integers(1, 60))
    density = rng.uniform(0.05, 0.95, size=d)
    X = (rng.random((n, d)) < density).astype(np.float64)
    # labels depend on the features, with noise, and either class may be rare
    score = X @ rng.standard_normal(d) + rng.normal(0, 1, n) + rng.normal(0, 2)
    y = np.where(score > 0, 1, 0)
    if y.min() == y.max():  # both classes must occur
        y[0] = 1 - y[0]
    labels = [np.array([-1, 1]), np.array([0, 1]), np.array(["neg", "pos"]), np.array([3, 7])]
    y = labels[seed % 4][y]
    X_new = (rng.random((200, d)) < density).astype(np.float64)
    alpha = float(rng.choice([1.0, 0.5, 0.1, 2.0, 1e-3]))
    return X, y, X_new, alpha


def seed_formulas(nb: BernoulliNB) -> tuple[np.ndarray, float]:
    """w and w_0 from BernoulliNB's fitted log-probabilities, as seed 000 §2 writes them."""
    on = nb.feature_log_prob_  # log P(X_i = 1 | c), classes in sorted order
    off = np.log(-np.expm1(on))  # log P(X_i = 0 | c) = log(1 − P(X_i = 1 | c))
    p, q = on[1] - on[0], off[1] - off[0]
    prior = nb.class_log_prior_[1] - nb.class_log_prior_[0]
    return p - q, float(q.sum() + prior)


@pytest.mark.parametrize("seed", range(40))
def test_equals_bernoulli_nb_on_random_binary_data(seed):
    X, y, X_new, alpha = random_binary(seed)
    model = NaiveBayesLinear(alpha=alpha).fit(X, y)
    nb = BernoulliNB(alpha=alpha).fit(X, y)
    for data in (X, X_new):
        np.testing.assert_array_equal(model.predict(data), nb.predict(data))
        np.testing.assert_allclose(model.predict_proba(data), nb.predict_proba(data), atol=1e-12)
    w, w0 = seed_formulas(nb)
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-12, atol=1e-12)
    assert model.intercept_[0] == pytest.approx(w0, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(model.feature_log_prob_, nb.feature_log_prob_, rtol=1e-14)
    np.testing.assert_array_equal(model.class_log_prior_, nb.class_log_prior_)


@pytest.mark.parametrize("seed", range(6))
def test_sparse_and_float32_input_give_the_same_model(seed):
    X, y, X_new, alpha = random_binary(seed)
    dense = NaiveBayesLinear(alpha=alpha).fit(X, y)
    for variant in (sp.csr_matrix(X), X.astype(np.float32)):
        model = NaiveBayesLinear(alpha=alpha).fit(variant, y)
        np.testing.assert_array_equal(model.coef_, dense.coef_)
        np.testing.assert_array_equal(model.intercept_, dense.intercept_)
        np.testing.assert_array_equal(model.predict(X_new), dense.predict(X_new))


@pytest.mark.parametrize("threshold", [0.0, 0.5, -0.25])
def test_binarize_equals_bernoulli_nb_binarize(threshold):
    # BernoulliNB takes thresholds ≥ 0 only: a negative one is compared on data shifted by it
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 12))
    y = (X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 1, 300) > 0).astype(int)
    X_new = rng.standard_normal((100, 12))
    model = NaiveBayesLinear(alpha=0.7, binarize=threshold).fit(X, y)
    shift = min(threshold, 0.0)
    nb = BernoulliNB(alpha=0.7, binarize=threshold - shift).fit(X - shift, y)
    np.testing.assert_array_equal(model.predict(X_new), nb.predict(X_new - shift))
    np.testing.assert_allclose(
        model.predict_proba(X_new), nb.predict_proba(X_new - shift), atol=1e-12
    )
    np.testing.assert_array_equal(model.feature_count_, nb.feature_count_)


def test_partial_fit_in_chunks_equals_fit():
    X, y, _, alpha = random_binary(11)
    whole = NaiveBayesLinear(alpha=alpha).fit(X, y)
    parts = NaiveBayesLinear(alpha=alpha)
    for chunk in np.array_split(np.arange(X.shape[0]), 4):
        parts.partial_fit(X[chunk], y[chunk], classes=np.unique(y))
    np.testing.assert_array_equal(parts.coef_, whole.coef_)
    np.testing.assert_array_equal(parts.intercept_, whole.intercept_)


def test_log_proba_keeps_digits_where_proba_rounds_to_one():
    X = np.vstack([np.ones((60, 40)), np.zeros((60, 40))])
    y = np.r_[np.ones(60), np.zeros(60)]
    model = NaiveBayesLinear().fit(X, y)
    log_proba = model.predict_log_proba(X[:1])
    assert model.predict_proba(X[:1])[0, 1] == 1.0 and log_proba[0, 0] < -100
    np.testing.assert_allclose(log_proba[0, 0], -model.decision_function(X[:1])[0], rtol=1e-12)


# --- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: NaiveBayesLinear(alpha=0), "alpha: must be a number in (0, inf), got 0"),
        (lambda: NaiveBayesLinear(alpha=-1.0), "alpha: must be a number in (0, inf), got -1.0"),
        (lambda: NaiveBayesLinear(binarize="half"), "binarize: must be a number in (-inf, inf)"),
        (lambda: NaiveBayesLinear(binarize=float("nan")), "binarize: must be a number"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit(HAND_X, HAND_Y)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


@pytest.mark.parametrize("sparse", [False, True])
def test_non_binary_features_without_a_threshold_are_one_line_error(sparse):
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.5]])
    with pytest.raises(LinclsInputError) as info:
        NaiveBayesLinear(binarize=None).fit(sp.csr_matrix(X) if sparse else X, [1, 0, 1])
    assert str(info.value) == (
        "X: NaiveBayesLinear with binarize=None needs binary features (0 or 1), row 2 holds 0.5; "
        "set binarize to a threshold (x > threshold counts as 1)"
    )
    # the default threshold 0.0 takes them: 0.5 counts as 1
    assert NaiveBayesLinear().fit(X, [1, 0, 1]).feature_count_.tolist() == [[0, 1], [2, 1]]
    model = NaiveBayesLinear(binarize=None).fit(HAND_X, HAND_Y)
    with pytest.raises(LinclsInputError, match=r"row 2 holds 0\.5"):
        model.predict(X)  # prediction refuses the same input
    assert NaiveBayesLinear(binarize=0.25).fit(X, [1, 0, 1]).feature_count_.sum() == 4


def test_other_bad_input():
    with pytest.raises(LinclsInputError, match=r"^binarize: must be ≥ 0 for sparse X"):
        NaiveBayesLinear(binarize=-1.0).fit(sp.csr_matrix(HAND_X), HAND_Y)
    with pytest.raises(LinclsInputError, match=r"^y: Only binary classification is supported"):
        NaiveBayesLinear().fit(np.eye(3), [0, 1, 2])
    with pytest.raises(LinclsInputError, match=r"^y: needs two classes, got one class"):
        NaiveBayesLinear().fit(HAND_X, np.ones(4))
    with pytest.raises(LinclsInputError, match=r"^X: contains NaN or inf"):
        NaiveBayesLinear().fit(np.array([[1.0], [np.nan]]), [0, 1])


# --- through the runner ---------------------------------------------------------------------------
def test_logged_run_on_disjunction_data(store):
    config = compose_config(
        ["learner=naive_bayes_linear", "learner.alpha=0.5", "dataset=disjunction",
         "dataset.n=400", "dataset.n_features=30", f"tracking.uri={store}"]
    )  # fmt: skip
    outcome = runner.execute(config)
    (run,) = runs_of(store)
    m, tags = run.data.metrics, run.data.tags
    data = outcome.dataset
    nb = BernoulliNB(alpha=0.5).fit(data.X, data.y)
    assert m["train_accuracy"] == nb.score(data.X, data.y)
    assert m["test_accuracy"] == nb.score(data.X_test, data.y_test)
    assert m["train_accuracy"] > 0.9
    assert tags["bounds.none"] == "not an online learner: no mistake bound applies"
    assert "bound_violated" not in tags and "mistakes" not in m
    assert run.data.params["learner.alpha"] == "0.5" and run.info.status == "FINISHED"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["learner.alpha=0", "dataset=disjunction"], "learner.alpha: must be a number in (0, inf)"),
        (
            ["learner.binarize=null"],
            "dataset.X: NaiveBayesLinear with binarize=None needs binary features (0 or 1), row 0",
        ),
        (["dataset=multiclass"], "dataset.y: Only binary classification is supported"),
    ],
)
def test_bad_config_is_one_line_naming_the_field(overrides, message):
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(compose_config(["learner=naive_bayes_linear", *overrides]))
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_cli_non_binary_features_exit_with_one_line_and_no_run(tmp_path):
    uri = f"sqlite:///{tmp_path / 'nb.db'}"
    done = run_cli(
        ["learner=naive_bayes_linear", "learner.binarize=null", f"tracking.uri={uri}"],
        cwd=tmp_path,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: dataset.X: NaiveBayesLinear with binarize=None needs")
    assert runs_of(uri) == []
    done = run_cli(["learner=naive_bayes_linear", f"tracking.uri={uri}"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [r.info.status for r in runs_of(uri)] == ["FINISHED"]
