"""ALMA_p: the scikit-learn checks, the paper's update against a direct loop (p = 2 and p = 3),
its bound on 2,000 random instances, river's ALMAClassifier on the same streams (and where the
two differ, why), bad input, a logged run."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config, runs_of
from river.linear_model import ALMAClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from lincls import bounds, evaluation, runner
from lincls.bounds.alma import alma_bound
from lincls.errors import LinclsInputError
from lincls.geometry import certify
from lincls.learners import ALMA


@parametrize_with_checks([ALMA(), ALMA(p=3.0, alpha=0.5, bias="feature", shuffle=True)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --- the paper's algorithm, written out --------------------------------------------------------
def direct_alma(X, y, p, alpha, B, C, passes, bias=0.0, normalize=True):
    """Gentile (2001), Figure 1, one example at a time in numpy: (mistakes, corrections, w).

    θ = f(w) is kept; w = f⁻¹(θ) with f⁻¹(θ)_i = sign(θ_i)|θ_i|^{p−1}/‖θ‖_p^{p−2}.
    """
    Xb = np.hstack([X, np.full((X.shape[0], 1), bias)]) if bias else X
    theta = np.zeros(Xb.shape[1])
    w = np.zeros(Xb.shape[1])
    k, mistakes = 1, 0
    for _ in range(passes):
        for x, label in zip(Xb, y, strict=True):
            norm = np.sum(np.abs(x) ** p) ** (1 / p) if normalize else 1.0
            margin = label * (w @ x) / norm
            mistakes += margin <= 0
            if margin <= (1 - alpha) * B * math.sqrt(p - 1) / math.sqrt(k):
                theta = theta + C / (math.sqrt(p - 1) * math.sqrt(k)) * label * x / norm
                theta = theta / max(1.0, np.sum(np.abs(theta) ** p) ** (1 / p))
                size = np.sum(np.abs(theta) ** p) ** (1 / p)
                w = np.sign(theta) * np.abs(theta) ** (p - 1) / size ** (p - 2) if size else theta
                k += 1
    return mistakes, k - 1, w


def stream(seed, n=120, d=6, offset=0.0, push=0.02):
    """Gaussian rows labelled by a random hyperplane (u, b), pushed ``push`` off it."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 10.0)
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    b = offset * float(np.abs(X @ u).mean())
    y = np.where(X @ u + b >= 0, 1.0, -1.0)
    X += (push * np.abs(X @ u).mean() * y)[:, None] * u
    return X, y, u, b


@pytest.mark.parametrize("p", [2.0, 3.0])
@pytest.mark.parametrize("bias", ["none", "feature"])
def test_equals_the_paper_loop(p, bias):
    for seed in range(4):
        X, y, _, _ = stream(seed, offset=0.3 if bias == "feature" else 0.0)
        model = ALMA(p=p, alpha=0.7, bias=bias, max_passes=3, stop_when_converged=False)
        model.fit(X, y)
        mistakes, corrections, w = direct_alma(
            X, y, p, 0.7, 1 / 0.7, math.sqrt(2), 3, bias=1.0 if bias == "feature" else 0.0
        )
        assert (model.mistakes_, model.updates_) == (mistakes, corrections)
        np.testing.assert_allclose(model.coef_[0], w[:6], atol=1e-12)
        if bias == "feature":
            assert model.intercept_[0] == pytest.approx(w[6], abs=1e-12)
        # w stays in the unit q-ball
        q = p / (p - 1)
        assert np.sum(np.abs(np.r_[model.coef_[0], model.intercept_]) ** q) <= 1 + 1e-12


def test_sparse_float32_and_chunks_give_the_same_run():
    X, y, _, _ = stream(7)
    dense = ALMA(max_passes=4, stop_when_converged=False).fit(X, y)
    for variant in (sp.csr_matrix(X), X):
        model = ALMA(max_passes=4, stop_when_converged=False).fit(variant, y)
        np.testing.assert_array_equal(model.coef_, dense.coef_)
        np.testing.assert_array_equal(model.mistake_steps_, dense.mistake_steps_)
    X32 = X.astype(np.float32)
    a = ALMA(max_passes=2).fit(X32, y)
    b = ALMA(max_passes=2).fit(X32.astype(np.float64), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # partial_fit continues the correction counter k: chunks equal one pass
    parts = ALMA()
    for chunk in np.array_split(np.arange(X.shape[0]), 5):
        parts.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
    whole = ALMA(max_passes=1).fit(X, y)
    np.testing.assert_array_equal(parts.coef_, whole.coef_)
    assert (parts.mistakes_, parts.updates_) == (whole.mistakes_, whole.updates_)


# --- the bound (Gentile 2001, Theorem 3) on 2,000 random instances ----------------------------
def test_bound_by_hand():
    assert alma_bound(0.1, 1.0) == pytest.approx(2 / 0.01 + 4, rel=1e-15)  # 204
    assert alma_bound(0.1, 0.5, p=3.0) == pytest.approx(4 / 0.01 * 9 + 12, rel=1e-15)  # 3612


def random_instance(rng):
    p = float(rng.choice([2.0, 2.0, 2.5, 3.0, 4.0]))
    alpha = float(rng.choice([0.1, 0.3, 0.5, 0.7, 0.9, 1.0]))
    bias = str(rng.choice(["none", "feature"]))
    n, d = int(rng.integers(2, 40)), int(rng.integers(1, 12))
    X, y, u, b = stream(int(rng.integers(2**32)), n, d, 0.5 if bias == "feature" else 0.0,
                        push=float(rng.choice([0.0, 0.001, 0.01, 0.1, 1.0])))  # fmt: skip
    if rng.random() < 0.3:  # rows of very different lengths: normalising matters
        X *= rng.uniform(0.001, 1000.0, (n, 1))
    return p, alpha, bias, X, y, u, b


def test_corrections_within_the_bound_on_two_thousand_instances():
    rng = np.random.default_rng(2001)
    checked, best, drawn, worst = 0, 0, 0, 0.0
    while checked < 2000:
        drawn += 1
        p, alpha, bias, X, y, u, b = random_instance(rng)
        if np.unique(y).shape[0] < 2:
            y[0] = -y[0]
        model = ALMA(p=p, alpha=alpha, bias=bias, max_passes=200, shuffle=bool(rng.random() < 0.5),
                     random_state=0).fit(X, y)  # fmt: skip
        cert = certify(X, y, u, b, "generator")
        facts = bounds.RunFacts(model, float(np.linalg.norm(X, axis=1).max()), cert,
                                certificates=(cert,), X=X, y=y)  # fmt: skip
        evaluation = bounds.evaluate(facts)
        if "alma" not in evaluation.values:  # a flipped label, or rows on the hyperplane
            assert not cert.separates, evaluation.skipped["alma"]
            continue
        checked += 1
        best += evaluation.sources["alma"] == "best"
        value = evaluation.values["alma"]
        assert model.updates_ <= value * (1 + 1e-9), (p, alpha, bias, model.updates_, value)
        assert model.mistakes_ <= model.updates_
        worst = max(worst, model.updates_ / value)
    assert drawn < 2400 and best >= 700
    assert 0.05 < worst < 1.0


def test_bound_with_a_planted_q_norm_comparator():
    # p = 3: the bound at a known sparse u (‖u‖_q = 1 after scaling) on p-normalised rows
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (300, 20))
    u = np.zeros(20)
    u[:2] = 1.0
    y = np.where(X @ u >= 0, 1.0, -1.0)
    X += 0.05 * y[:, None] * u
    model = ALMA(p=3.0, alpha=0.8, max_passes=100).fit(X, y)
    q = 1.5
    margin = np.min(y * (X @ u) / np.sum(np.abs(X) ** 3, axis=1) ** (1 / 3))
    margin /= np.sum(u**q) ** (1 / q)
    cert = certify(X, y, u, 0.0, "generator")
    value = bounds.evaluate(bounds.RunFacts(model, 1.0, cert, X=X, y=y)).values["alma"]
    assert value == pytest.approx(alma_bound(margin, 0.8, 3.0), rel=1e-12)
    assert model.converged_ and model.updates_ <= value
    # without the rows, ‖x‖₃ ≤ ‖x‖₂ gives a smaller margin: a larger, still valid bound
    norms = np.sum(X**2, axis=1)
    looser = bounds.evaluate(bounds.RunFacts(model, 1.0, cert, sq_norms=norms)).values["alma"]
    assert looser > value


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: ALMA(B=2.0), "B = 2 is not 1/alpha (the theorem's choice)"),
        (lambda: ALMA(C=1.0), "C = 1 is not √2 (the theorem's choice)"),
        (lambda: ALMA(normalize=False), "the instances are not normalised (normalize=false)"),
    ],
)
def test_bound_skipped_outside_the_theorem(make, reason):
    X, y, u, b = stream(3)
    model = make().fit(X, y)
    cert = certify(X, y, u, b, "generator")
    evaluation = bounds.evaluate(bounds.RunFacts(model, 1.0, cert, X=X, y=y))
    assert evaluation.skipped["alma"] == reason


# --- river's ALMAClassifier on the same streams -------------------------------------------------
def river_run(X, y, passes, **params):
    """river's learner over the stream: (mistakes as y·w·x ≤ 0, mistakes by predict_one, model)."""
    model = ALMAClassifier(**params)
    zero_is_wrong = by_prediction = 0
    for _ in range(passes):
        for row, label in zip(X, y, strict=True):
            x = dict(enumerate(row.tolist()))
            zero_is_wrong += label * model._raw_dot(x) <= 0
            by_prediction += model.predict_one(x) != (label > 0)
            model.learn_one(x, bool(label > 0))
    return zero_is_wrong, by_prediction, model


def test_defaults_are_the_papers_and_rivers():
    ours, theirs = ALMA(), ALMAClassifier()
    assert (ours.p, ours.alpha, ours.C) == (theirs.p, theirs.alpha, theirs.C) == (2, 0.9, 2**0.5)
    assert ours.B is None and ALMA().fit([[1.0], [-1.0]], [0, 1]).B_ == theirs.B == 1 / 0.9


@pytest.mark.parametrize("seed", range(24))
def test_mistakes_equal_rivers_on_the_same_stream(seed):
    # river does not normalise x: normalize=False is its algorithm; given x̂ instead, it is ours.
    # d ≥ 2: exact ties, where the two differ (test_where_river_differs), then do not occur.
    rng = np.random.default_rng(seed)
    X, y, _, _ = stream(seed, n=int(rng.integers(20, 150)), d=int(rng.integers(2, 10)))
    alpha = float(rng.choice([0.1, 0.5, 0.9, 0.99]))
    passes = int(rng.integers(1, 4))
    river = {"alpha": alpha, "B": 1 / alpha}
    for normalize in (False, True):
        rows = X / np.linalg.norm(X, axis=1, keepdims=True) if normalize else X
        ours = ALMA(alpha=alpha, normalize=normalize, max_passes=passes,
                    stop_when_converged=False).fit(X, y)  # fmt: skip
        mistakes, _, theirs = river_run(rows, y, passes, **river)
        assert ours.mistakes_ == mistakes
        assert ours.updates_ == theirs.k - 1
        np.testing.assert_allclose(ours.coef_[0], [theirs.w[j] for j in range(X.shape[1])],
                                   rtol=1e-12, atol=1e-14)  # fmt: skip


def test_where_river_differs():
    X, y, _, _ = stream(11, n=80, d=4)
    # 1. a zero activation: river's predict_one says False (the first class of its dict), so a
    #    negative example at w = 0 is right by predict_one and wrong here (and in the proofs)
    _, by_prediction, _ = river_run(X, y, 1, alpha=0.9, B=1 / 0.9)
    ours = ALMA(normalize=False, max_passes=1).fit(X, y)
    first_negative_at_zero = int(y[0] < 0)
    assert by_prediction == ours.mistakes_ - first_negative_at_zero
    # 2. the correction test is y·w·x̂ ≤ (1 − α)γ_k in the paper, "<" in river. At α = 1 the
    #    right side is 0, so river never leaves w = 0: every presentation a zero activation
    zero_is_wrong, _, theirs = river_run(X, y, 2, alpha=1.0, B=1.0)
    assert theirs.k == 1 and all(value == 0.0 for value in theirs.w.values())
    assert zero_is_wrong == 2 * X.shape[0]
    ours = ALMA(alpha=1.0, normalize=False, max_passes=2, stop_when_converged=False).fit(X, y)
    assert ours.updates_ > 0 and ours.mistakes_ < X.shape[0]
    #    and on an exact tie: one feature, α = 0.1, so (1 − α)γ_k = 9/√k is exactly 1 at k = 81,
    #    where y·w·x̂ = 1 (w = ±1 after its projection): the paper corrects once more, river stops
    line = np.array([[1.0], [-2.0]] * 60)
    labels = np.array([1.0, -1.0] * 60)
    ours = ALMA(alpha=0.1, max_passes=1).fit(line, labels)
    _, _, theirs = river_run(line / np.abs(line), labels, 1, alpha=0.1, B=10.0)
    assert (ours.updates_, theirs.k - 1) == (81, 80)
    # 3. p = 3: river adds the step to w and rescales by ‖w‖₃; the paper adds it to θ = f(w)
    #    and maps back, so the runs part (ours is the paper's loop, test_equals_the_paper_loop)
    _, _, theirs = river_run(X, y, 1, p=3, alpha=0.5, B=2.0)
    ours = ALMA(p=3.0, alpha=0.5, normalize=False, max_passes=1).fit(X, y)
    river_w = np.array([theirs.w[j] for j in range(4)])
    assert np.abs(ours.coef_[0] - river_w).max() > 1e-3
    assert direct_alma(X, y, 3.0, 0.5, 2.0, math.sqrt(2), 1, normalize=False)[1] == ours.updates_


# --- bad input, a logged run ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ALMA(p=1.5), "p: must be a number in [2, inf), got 1.5"),
        (lambda: ALMA(alpha=0), "alpha: must be a number in (0, 1], got 0"),
        (lambda: ALMA(alpha=1.5), "alpha: must be a number in (0, 1], got 1.5"),
        (lambda: ALMA(B=-1.0), "B: must be a number in (0, inf), got -1.0"),
        (lambda: ALMA(C=0.0), "C: must be a number in (0, inf), got 0.0"),
        (lambda: ALMA(normalize="yes"), "normalize: must be true or false, got 'yes'"),
        (lambda: ALMA(bias="r2"), "bias: must be one of"),
    ],
)
def test_bad_parameters_are_one_line_errors(make, message):
    with pytest.raises(LinclsInputError) as info:
        make().fit([[1.0, 0.0], [0.0, 1.0]], [0, 1])
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_bad_config_names_the_field():
    with pytest.raises(LinclsInputError) as info:
        evaluation.prepare(compose_config(["learner=alma", "learner.alpha=2"]))
    assert str(info.value) == "learner.alpha: must be a number in (0, 1], got 2.0"


def test_logged_run_with_its_bound(store):
    config = compose_config(
        ["learner=alma", "dataset.n=300", "dataset.n_test=50", f"tracking.uri={store}"]
    )
    runner.execute(config)
    (run,) = runs_of(store)
    m, tags = run.data.metrics, run.data.tags
    assert tags["bound_violated"] == "false" and tags["bound.alma.certificate"] == "best"
    gamma = m["bound_param.alma.margin"]
    assert m["bound.alma"] == pytest.approx(2 / gamma**2 * (2 / 0.9 - 1) ** 2 + 8 / 0.9 - 4)
    assert m["mistakes"] <= m["updates"] <= m["bound.alma"]
    assert run.data.params["learner.alpha"] == "0.9" and run.info.status == "FINISHED"
