"""The Projectron and Projectron++: the scikit-learn checks, the paper's rules against a plain
numpy loop that solves K_S d = k_t afresh at every step (24 streams × kernels × variants,
dense and CSR), the support set's size bounded by the feature space's dimension, a run's
support-size curve, bad input."""

from __future__ import annotations

import math
from math import comb

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config, run_cli, runs_of
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import evaluation
from lincls.errors import LinclsInputError
from lincls.learners.projectron import SPAN_TOLERANCE, START_CAPACITY, Projectron


@parametrize_with_checks(
    [Projectron(), Projectron(plus=True, kernel="rbf", bias="none", eta=0.3, shuffle=True)]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def kernel(a, b, name, degree, gamma, c2):
    if name == "linear":
        value = float(a @ b)
    elif name == "poly":
        value = float((1.0 + a @ b) ** degree)
    else:
        value = float(np.exp(-gamma * np.sum((a - b) ** 2)))
    return value + c2


# A decision whose normalised distance from its threshold (``direct_projectron``) is below this
# is a tie: the learner and the loop compute its two sides apart (K_S⁻¹ by block updates against a
# fresh LAPACK solve, whose rounding depends on the processor), and rounding may decide it either
# way. Their measured disagreement on those scales is 4.2e-16 (δ²) and 1.7e-11 (f, through α):
# 10⁻⁹ keeps every stream compared here at least 60 times that away from a tie.
TIE = 1e-9


def direct_projectron(X, y, eta, plus, name, degree, gamma, c2, passes):
    """Orabona, Keshet & Caputo (2009), one example at a time, d from a fresh linear solve.

    Mistake: δ² = K(x, x) − kᵀd ≤ max(η, ϵK(x, x)) → α += y d, else x joins S with α = y.
    Projectron++ on a margin error (ℓ = 1 − y f > 0 … < 1): if ℓ − δ²/η > 0, α += β y d with
    β = min(ℓ/‖Pk‖², 1, 2(ℓ − δ²/η)/‖Pk‖²), ‖Pk‖² = K(x, x) − δ².
    Returns (mistakes, updates, support vectors, α, |S| after each step, the least distance of a
    decision from its threshold): that distance normalised by the size of what rounding moves,
    max|α|·Σ|k| for y f against 0 and 1, K(x, x)·cond(K_S) for δ² (and over η beside f), K(x, x)
    for ‖Pk‖² against 0.
    """
    vectors, alpha, sizes = [], np.zeros(0), []
    mistakes = updates = 0
    least = np.inf
    for _ in range(passes):
        for x, label in zip(X, y, strict=True):
            k = np.array([kernel(v, x, name, degree, gamma, c2) for v in vectors])
            f = float(alpha @ k) if vectors else 0.0
            kii = kernel(x, x, name, degree, gamma, c2)
            if vectors:
                gram = np.array([[kernel(a, b, name, degree, gamma, c2) for b in vectors]
                                 for a in vectors])  # fmt: skip
                d = np.linalg.solve(gram, k)
                spread = float(np.abs(alpha).max() * np.abs(k).sum())
                rounding = kii * np.linalg.cond(gram)
                if spread > 0.0:  # else f = 0 in any arithmetic (α = 0, or every k underflowed)
                    least = min(least, abs(label * f) / spread)
            else:  # f = 0 exactly
                d, spread, rounding = np.zeros(0), 0.0, kii
            delta2 = max(kii - float(k @ d), 0.0)
            if label * f <= 0:
                mistakes += 1
                updates += 1
                threshold = max(eta, SPAN_TOLERANCE * kii)
                least = min(least, abs(delta2 - threshold) / rounding)
                if delta2 <= threshold:
                    alpha = alpha + label * d
                else:
                    vectors.append(x.copy())
                    alpha = np.r_[alpha, label]
            elif plus:
                least = min(least, abs(1 - label * f) / spread)
                if label * f < 1:
                    loss, projected = 1 - label * f, kii - delta2
                    least = min(least, abs(loss - delta2 / eta) / (spread + rounding / eta))
                    least = min(least, projected / kii)  # kii − (kii − kᵀd): 0 below ε·kii
                    if loss - delta2 / eta > 0 and projected > 0:
                        beta = min(loss / projected, 1.0, 2 * (loss - delta2 / eta) / projected)
                        alpha = alpha + beta * label * d
                        updates += 1
            sizes.append(len(vectors))
    return mistakes, updates, np.array(vectors), alpha, np.array(sizes), least


def stream(seed):
    """Rows of random scale, some sparse, labelled by a hyperplane (some flipped)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 70)), int(rng.integers(1, 6))
    X = rng.standard_normal((n, d)) * rng.uniform(0.3, 1.5)
    if seed % 3 == 0:  # sparse rows, none all zero (f(0) = c²Σα ties at exactly 0 in rounding)
        X[rng.random(X.shape) < 0.4] = 0.0
        empty = ~X.any(axis=1)  # each its own value: a duplicate row ties (below)
        X[empty, 0] = rng.uniform(0.5, 1.0, int(empty.sum()))
    y = np.where(X @ rng.standard_normal(d) + (0.3 if seed % 2 else 0.0) >= 0, 1.0, -1.0)
    if seed % 4 == 1:
        y[rng.random(n) < 0.1] *= -1
    if np.unique(y).shape[0] == 1:
        y[0] = -y[0]
    return X, y


# The streams whose loop meets a decision within TIE of its threshold (``direct_projectron``): the
# learner is compared with it on every other stream. Mostly y f exactly 1 or 0 (a Projectron++
# step leaves its example at margin 1) and ‖Pk‖² within an ulp of 0 (an RBF row far from S).
TIED = {
    ("linear", False): [18],
    ("linear", True): [12, 18],
    ("poly", False): [18],
    ("poly", True): [18, 19],
    ("rbf", False): [],
    ("rbf", True): [3, 7, 9, 17],
}


@pytest.mark.parametrize("name", ["linear", "poly", "rbf"])
@pytest.mark.parametrize("plus", [False, True])
def test_equals_the_papers_rules_dense_and_csr(name, plus):
    """The learner against the loop on the 24 streams away from ties (the others only dense
    against CSR): the same counts, support set and sizes on any processor."""
    worst, worst_alpha, grown, margin_steps, tied = 0.0, 0.0, 0, 0, []
    for seed in range(24):
        X, y = stream(seed)
        bias = ("feature", "none")[seed % 2]
        eta = (0.05, 0.2, 0.5)[seed % 3]
        params = {"eta": eta, "plus": plus, "kernel": name, "degree": 2, "gamma": 0.7,
                  "bias": bias, "max_passes": 3, "stop_when_converged": False}  # fmt: skip
        dense = Projectron(**params).fit(X, y)
        csr = Projectron(**params).fit(sp.csr_matrix(X), y)
        np.testing.assert_array_equal(dense.dual_coef_, csr.dual_coef_)
        np.testing.assert_array_equal(dense.support_vectors_, csr.support_vectors_)
        np.testing.assert_array_equal(dense.mistake_steps_, csr.mistake_steps_)
        c2 = 1.0 if bias == "feature" else 0.0
        found = direct_projectron(X, y, eta, plus, name, 2, 0.7, c2, 3)
        mistakes, updates, vectors, alpha, sizes, least = found
        if least < TIE:
            tied.append(seed)
            continue
        assert (dense.mistakes_, dense.updates_) == (mistakes, updates)
        np.testing.assert_array_equal(dense.support_vectors_, vectors)
        np.testing.assert_array_equal(dense.support_size_, sizes)
        worst_alpha = max(
            worst_alpha, float(np.abs(dense.dual_coef_ - alpha).max() / np.abs(alpha).max())
        )
        pairs = list(zip(vectors, alpha, strict=True))
        f = np.array([sum(a * kernel(v, x, name, 2, 0.7, c2) for v, a in pairs) for x in X])
        scale = max(1.0, float(np.abs(f).max()))
        worst = max(worst, float(np.abs(dense.decision_function(X) - f).max()) / scale)
        grown += dense.n_support_ > START_CAPACITY
        margin_steps += updates - mistakes
    assert tied == TIED[(name, plus)]
    # K_S⁻¹ kept by block updates against a fresh solve: f agrees to 1e-12 (measured 3.7e-13);
    # α only to 1e-10 (measured 1.7e-11), its error lying along K_S's smallest eigenvectors,
    # which f hardly sees
    assert worst < 1e-12
    assert worst_alpha < 1e-10
    if name == "rbf":
        assert grown >= 1  # the storage doubled in that many streams
    assert (margin_steps > 0) == plus


@pytest.mark.parametrize(("name", "bias", "limit"), [("linear", "none", 4),
                                                     ("linear", "feature", 5),
                                                     ("poly", "none", comb(4 + 2, 2))])  # fmt: skip
def test_support_set_stays_independent_within_the_feature_space(name, bias, limit):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 4))
    y = np.where(np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] > 0, 1.0, -1.0)  # not separable
    model = Projectron(eta=1e-6, kernel=name, bias=bias, max_passes=5).fit(X, y)
    assert model.support_size_.max() == model.n_support_ == limit
    assert np.all(np.diff(model.support_size_) >= 0)


def test_run_logs_the_support_size_curve_and_says_why_no_bound():
    config = compose_config(
        ["learner=projectron", "learner.plus=true", "learner.kernel=rbf", "learner.eta=0.5",
         "dataset=noisy", "dataset.n=150", "passes=2"]
    )  # fmt: skip
    outcome = evaluation.measure(config)
    curve = outcome.curves["support_size"]
    size = outcome.learner.n_support_
    assert outcome.metrics["support_size"] == size and curve[-1] == (300, float(size))
    assert outcome.metrics["updates"] > outcome.metrics["mistakes"]
    none = "no mistake bound applies to this run (see bounds.skipped)"
    assert outcome.tags["bounds.none"] == none
    linear = "projectron_plus: a certificate gives a comparator in the linear kernel's space"
    assert linear in outcome.tags["bounds.skipped"]
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(
            compose_config(["learner=projectron", "learner.plus=true", "learner.eta=0"])
        )
    assert str(info.value) == "learner.eta: must be a number in (0, inf), got 0.0"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Projectron(eta=-1), "eta: must be a number in [0, inf), got -1"),
        (lambda: Projectron(plus="yes"), "plus: must be true or false, got 'yes'"),
        (lambda: Projectron(degree=0), "degree: must be an integer in [1, inf), got 0"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value) == message


def direct_paper_rule(X, y, eta, passes):
    """Projectron++ with Theorem 4's margin step, linear kernel, no bias, one example at a time
    (d from a fresh solve): a margin error with ℓ − δ/√η > 0 steps τ = min((ℓ − δ/√η)/‖Pk‖², ½),
    which must lie strictly inside (0, min{2(ℓ − δ/√η)/‖Pk‖², 1}). Returns (mistakes, updates,
    α, B)."""
    vectors, alpha = [], np.zeros(0)
    mistakes = updates = 0
    gain = 0.0
    for _ in range(passes):
        for x, label in zip(X, y, strict=True):
            k = np.array([v @ x for v in vectors])
            f = float(alpha @ k) if vectors else 0.0
            kii = float(x @ x)
            d = np.linalg.solve(np.array([[a @ b for b in vectors] for a in vectors]), k) \
                if vectors else np.zeros(0)  # fmt: skip
            delta2 = max(kii - float(k @ d), 0.0)
            if label * f <= 0:
                mistakes += 1
                updates += 1
                if delta2 <= max(eta, SPAN_TOLERANCE * kii):
                    alpha = alpha + label * d
                else:
                    vectors.append(x.copy())
                    alpha = np.r_[alpha, label]
            elif label * f < 1:
                loss, projected = 1 - label * f, kii - delta2
                room = loss - math.sqrt(delta2 / eta)
                if room > 0 and projected > 0:
                    tau = min(room / projected, 0.5)
                    assert 0 < tau < min(2 * room / projected, 1.0)
                    gain += tau * (2 * loss - tau * projected - 2 * math.sqrt(delta2 / eta))
                    alpha = alpha + tau * label * d
                    updates += 1
    return mistakes, updates, alpha, gain


def test_the_papers_margin_rule_equals_theorem_4s_step():
    """On 40 random streams the learner's margin_rule=paper takes the direct loop's steps (the
    same counts, α and B to 10⁻⁶), and differs from DOGMA's rule on some."""
    differ = steps = 0
    for seed in range(40):
        rng = np.random.default_rng([seed, 4])
        n, d = int(rng.integers(10, 50)), int(rng.integers(2, 5))
        X = rng.standard_normal((n, d)) * float(rng.uniform(0.1, 0.3))
        y = np.where(X @ rng.standard_normal(d) + rng.normal(0, 0.05, n) > 0, 1.0, -1.0)
        if np.unique(y).shape[0] == 1:
            y[0] = -y[0]
        eta = float(rng.choice([0.001, 0.01, 0.1]))
        params = {"eta": eta, "plus": True, "bias": "none", "max_passes": 3,
                  "stop_when_converged": False}  # fmt: skip
        model = Projectron(margin_rule="paper", **params).fit(X, y)
        mistakes, updates, alpha, gain = direct_paper_rule(X, y, eta, 3)
        assert (model.mistakes_, model.updates_) == (mistakes, updates)
        # K_S⁻¹ grown by blocks against a fresh solve: 2·10⁻⁷ apart after ~100 steps
        scale = float(np.abs(alpha).max())
        np.testing.assert_allclose(model.dual_coef_, alpha, rtol=0, atol=1e-6 * scale)
        assert model.margin_gain_ == pytest.approx(gain, rel=1e-6)
        steps += updates - mistakes
        dogma = Projectron(**params).fit(X, y)
        differ += dogma.updates_ != model.updates_ or dogma.mistakes_ != model.mistakes_
        assert dogma.margin_gain_ == 0.0
    assert steps >= 200 and differ >= 10, (steps, differ)


def test_the_papers_margin_rule_runs_through_lincls_run_and_logs_theorem_4(tmp_path):
    uri = f"sqlite:///{tmp_path / 'p.db'}"
    done = run_cli(
        ["learner=projectron", "learner.plus=true", "learner.margin_rule=paper",
         "learner.bias=none", "learner.eta=0.01", "dataset.radius=0.5", "dataset.margin=0.1",
         "dataset.n=200", "dataset.d=5", "dataset.n_test=50", f"tracking.uri={uri}"],
        tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = [r for r in runs_of(uri) if r.data.tags.get("lincls.role") == "run"]
    m, tags = run.data.metrics, run.data.tags
    assert run.data.params["learner.margin_rule"] == "paper"
    # 100 margin steps, B = 20.05; the bound at g = 5.56·u (D₁ = 190.8), far above the 5 mistakes
    assert (m["mistakes"], m["updates"]) == (5, 105)
    assert m["bound.projectron_plus_paper"] == pytest.approx(839.7858235677779, rel=1e-9)
    assert m["bound_param.projectron_plus_paper.gain"] == pytest.approx(20.04829647562896, rel=1e-9)
    assert "bound.projectron_plus" not in m
    assert tags["bound_source.projectron_plus_paper"] == (
        "published: Orabona, Keshet & Caputo 2009, JMLR 10, Thm 4 (read in the JMLR text), for "
        "its margin step (margin_rule=paper, ℓ ≥ ‖δ‖/η)"
    )


def test_an_unknown_margin_rule_is_a_one_line_error():
    with pytest.raises(LinclsInputError) as info:
        Projectron(margin_rule="mine").fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value).startswith("margin_rule: must be one of")
