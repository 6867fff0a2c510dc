"""The Randomized Budget Perceptron: the scikit-learn checks, the paper's rule against a plain
numpy loop (24 streams × kernels × biases, dense and CSR, compared away from near-ties), the
budget never exceeded, the support-size curve of a run, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _ties import distance_from_zero
from conftest import compose_config
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation
from lincls.errors import LinclsInputError
from lincls.learners.budget_perceptron import BudgetPerceptron


@parametrize_with_checks(
    [BudgetPerceptron(), BudgetPerceptron(budget=3, kernel="rbf", bias="none", shuffle=True)]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def kernel(a, b, name, degree, gamma):
    if name == "linear":
        return float(a @ b)
    if name == "poly":
        return float((1.0 + a @ b) ** degree)
    return float(np.exp(-gamma * np.sum((a - b) ** 2)))


def direct_rbp(X, y, budget, name, degree, gamma, c2, passes, seed):
    """Cavallanti et al. (2007), one example at a time: on y f(x) ≤ 0 the example joins S with
    α = y; a full S first loses the vector in a uniformly drawn slot (the draws: per pass, n
    integers in [0, B) from default_rng(seed), the k-th used at step k).
    Returns (mistakes, the support vectors, their α, |S| after each step, the least distance of
    a decision from its tie, ``distance_from_zero``)."""
    rng = np.random.default_rng(seed)
    vectors, alphas, sizes, mistakes = [], [], [], 0
    least = np.inf
    for _ in range(passes):
        draws = rng.integers(0, budget, size=X.shape[0], dtype=np.int64)
        for k, (x, label) in enumerate(zip(X, y, strict=True)):
            terms = [
                a * (kernel(v, x, name, degree, gamma) + c2)
                for v, a in zip(vectors, alphas, strict=True)
            ]
            f = sum(terms)
            least = min(least, distance_from_zero(terms))
            if label * f <= 0:
                mistakes += 1
                if len(vectors) < budget:
                    vectors.append(x.copy())
                    alphas.append(label)
                else:
                    vectors[draws[k]], alphas[draws[k]] = x.copy(), label
            sizes.append(len(vectors))
    return mistakes, np.array(vectors), np.array(alphas), np.array(sizes), least


def stream(seed):
    """Rows of random scale, some sparse, labelled by a hyperplane (some flipped)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 90)), int(rng.integers(1, 8))
    X = rng.standard_normal((n, d)) * rng.uniform(0.2, 2.0)
    if seed % 3 == 0:
        X[rng.random(X.shape) < 0.5] = 0.0
    y = np.where(X @ rng.standard_normal(d) + (0.3 if seed % 2 else 0.0) >= 0, 1.0, -1.0)
    if seed % 4 == 1:
        y[rng.random(n) < 0.1] *= -1
    if np.unique(y).shape[0] == 1:
        y[0] = -y[0]
    return X, y


# A decision whose distance from its tie (``distance_from_zero``) is below this is a near-tie:
# the loop computes its kernel values with numpy's exp and BLAS dot products, whose last bits
# depend on the processor, so rounding may decide it either way. The learner's and the loop's f
# agree within 1e-12 of Σ|terms| on the final set (asserted below; measured 7.6e-15 at most),
# and 1e-9 stays a thousand times above that bound; the streams left out meet decisions 3.2e-14
# to 4.5e-10 from a tie, every stream compared none nearer than 9.6e-7.
TIE = 1e-9

# (streams compared with the loop, the seeds left out as near-ties). The near-ties are all RBF
# with the bias feature at an x far from every support vector: the α·c² cancel (as many labels
# of each sign) and f is what exponentials of 1e-8 or less leave, beside terms of size 1.
COMPARED = {
    ("linear", "feature"): (24, []),
    ("linear", "none"): (24, []),
    ("poly", "feature"): (24, []),
    ("poly", "none"): (24, []),
    ("rbf", "feature"): (21, [4, 5, 16]),
    ("rbf", "none"): (24, []),
}


@pytest.mark.parametrize("name", ["linear", "poly", "rbf"])
@pytest.mark.parametrize("bias", ["feature", "none"])
def test_equals_the_papers_rule_dense_and_csr(name, bias):
    """The learner against the loop on every stream away from a near-tie (those only dense
    against CSR): the same mistakes, support vectors, coefficients and sizes on any processor."""
    worst, full, compared, tied = 0.0, 0, 0, []
    for seed in range(24):
        X, y = stream(seed)
        budget = int(np.random.default_rng(seed).integers(1, 12))
        params = {"budget": budget, "kernel": name, "degree": 3, "gamma": 0.5, "bias": bias}
        model = BudgetPerceptron(**params, max_passes=3, stop_when_converged=False,
                                 random_state=seed)  # fmt: skip
        dense = model.fit(X, y)
        csr = BudgetPerceptron(**dense.get_params()).fit(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(dense.support_vectors_, csr.support_vectors_)
        np.testing.assert_array_equal(dense.mistake_steps_, csr.mistake_steps_)
        c2 = 1.0 if bias == "feature" else 0.0
        found = direct_rbp(X, y, budget, name, 3, 0.5, c2, 3, seed)
        mistakes, vectors, alphas, sizes, least = found
        if least < TIE:
            tied.append(seed)
            continue
        compared += 1
        assert dense.mistakes_ == dense.updates_ == mistakes
        np.testing.assert_array_equal(dense.support_vectors_, vectors)  # copies of rows: exact
        np.testing.assert_array_equal(dense.dual_coef_, alphas)
        np.testing.assert_array_equal(dense.support_size_, sizes)
        assert dense.support_size_.max() <= budget
        full += mistakes > budget
        pairs = list(zip(vectors, alphas, strict=True))
        terms = np.array([[a * (kernel(v, x, name, 3, 0.5) + c2) for v, a in pairs] for x in X])
        f, spread = terms.sum(axis=1), np.abs(terms).sum(axis=1)
        gap = np.abs(dense.decision_function(X) - f)  # 0 where every term is 0
        worst = max(worst, float((gap / np.where(spread > 0, spread, 1.0)).max()))
    assert (compared, tied) == COMPARED[(name, bias)]
    assert worst < 1e-12
    assert full >= 12  # the budget was full, and vectors discarded, in that many streams


def test_support_size_never_exceeds_the_budget_and_follows_the_mistakes():
    X, y = stream(7)
    model = BudgetPerceptron(budget=5, kernel="rbf", max_passes=4, random_state=0).fit(X, y)
    cumulative = np.cumsum(np.isin(np.arange(model.n_steps_), model.mistake_steps_))
    np.testing.assert_array_equal(model.support_size_, np.minimum(cumulative, 5))
    assert model.n_support_ == 5 and model.support_vectors_.shape == (5, X.shape[1])
    assert model.intercept_[0] == pytest.approx(model.dual_coef_.sum())  # c² = 1


def test_same_seed_same_run_other_seed_other_discards():
    X, y = stream(2)
    runs = [BudgetPerceptron(budget=3, max_passes=5, random_state=s).fit(X, y) for s in (4, 4, 5)]
    np.testing.assert_array_equal(runs[0].support_vectors_, runs[1].support_vectors_)
    assert runs[0].mistakes_ == runs[1].mistakes_
    assert not np.array_equal(runs[0].support_vectors_, runs[2].support_vectors_)


def test_partial_fit_keeps_the_support_set_across_batches():
    X, y = stream(11)
    half = X.shape[0] // 2
    model = BudgetPerceptron(budget=4, random_state=1)
    model.partial_fit(X[:half], y[:half], classes=[-1.0, 1.0])
    first = model.n_support_
    model.partial_fit(X[half:], y[half:])
    assert model.n_steps_ == X.shape[0] and model.support_size_.shape == (X.shape[0],)
    assert model.support_size_[half - 1] == first and model.n_support_ == 4


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: BudgetPerceptron(budget=0), "budget: must be an integer in [1, inf), got 0"),
        (lambda: BudgetPerceptron(budget=2.5), "budget: must be an integer in [1, inf), got 2.5"),
        (lambda: BudgetPerceptron(kernel="sigmoid"),
         "kernel: must be one of 'linear', 'poly', 'rbf', got 'sigmoid'"),
    ],
)  # fmt: skip
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value) == message


def test_run_logs_the_support_size_curve_and_says_why_no_bound():
    config = compose_config(
        ["learner=budget_perceptron", "learner.budget=7", "learner.kernel=rbf",
         "dataset=noisy", "dataset.n=200", "passes=2"]
    )  # fmt: skip
    outcome = evaluation.measure(config)
    curve = outcome.curves["support_size"]
    assert outcome.metrics["support_size"] == 7.0
    assert curve[0] == (1, 1.0) and curve[-1] == (400, 7.0)
    assert max(v for _, v in curve) == 7.0
    assert outcome.tags["bounds.none"].startswith("the Randomized Budget Perceptron's bound")
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(compose_config(["learner=budget_perceptron", "learner.budget=0"]))
    assert str(info.value) == "learner.budget: must be an integer in [1, inf), got 0"
