"""The perceptron game played for real (lincls.games.perceptron) and the proof's slack
(lincls.evaluation.slack)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import compose_config

from lincls import evaluation
from lincls.errors import LinclsInputError
from lincls.games.perceptron import make_perceptron_game, play, tight_mistakes
from lincls.learners import (
    AveragedPerceptron,
    KernelPerceptron,
    LearningRatePerceptron,
    MarginPerceptron,
    MulticlassPerceptron,
    PassiveAggressive,
    Perceptron,
    VotedPerceptron,
)


def played(d, margin, radius=1.0, strategy="auto", learner=None, passes=1, seed=0):
    learner = learner or Perceptron(bias="none")
    learner.set_params(max_passes=passes)
    game = make_perceptron_game(d=d, margin=margin, radius=radius, strategy=strategy, seed=seed)
    dataset, shown = play(game, learner, passes)
    return learner, dataset, shown


def assert_valid(dataset, margin, radius):
    """Every presented example has y·u·x ≥ γ and ‖x‖ ≤ R, exactly as floating point has them."""
    assert dataset.X.shape[0] > 0
    assert np.isclose(np.linalg.norm(dataset.u), 1.0, rtol=0, atol=1e-15)
    assert (dataset.y * (dataset.X @ dataset.u)).min() >= margin
    assert np.linalg.norm(dataset.X, axis=1).max() <= radius
    assert dataset.margin >= margin and dataset.radius <= radius


def test_in_the_plane_the_game_forces_half_of_novikoff_at_gamma_over_r_001():
    learner, dataset, _ = played(2, 0.01)
    assert_valid(dataset, 0.01, 1.0)
    assert learner.mistakes_ == dataset.X.shape[0] == 5000  # every presented example a mistake
    assert learner.mistakes_ / (1.0 / 0.01) ** 2 >= 0.45


def test_the_slope_of_mistakes_on_gamma_is_minus_two():
    gammas = np.geomspace(0.01, 0.3, 8)
    mistakes = []
    for gamma in gammas:
        learner, dataset, _ = played(2, gamma, seed=3)
        assert_valid(dataset, gamma, 1.0)
        mistakes.append(learner.mistakes_)
    slope = np.polyfit(np.log(gammas), np.log(mistakes), 1)[0]
    assert -2.15 <= slope <= -1.9, slope
    assert mistakes[0] == 5000


@pytest.mark.parametrize(
    ("d", "margin", "radius"),
    [(100, 0.1, 1.0), (101, 0.1, 1.0), (30, 0.2, 1.0), (26, 0.2, 1.0), (10, 0.35, 1.0),
     (400, 0.1, 2.0), (9, 0.3, 0.9), (2, 0.8, 1.0)],
)  # fmt: skip
def test_with_enough_dimensions_the_game_forces_exactly_the_bound(d, margin, radius):
    assert d >= math.ceil((radius / margin) ** 2 - 1e-9)
    learner, dataset, _ = played(d, margin, radius, passes=3)
    assert_valid(dataset, margin, radius)
    assert (
        learner.mistakes_
        == tight_mistakes(margin, radius)
        == math.floor((radius / margin) ** 2 + 1e-9)
    )


def test_tight_mistakes_takes_exact_squares_whole():
    assert tight_mistakes(0.1, 1.0) == 100 and tight_mistakes(0.3, 0.9) == 9
    assert tight_mistakes(0.35, 1.0) == 8


@pytest.mark.parametrize(
    "learner",
    [Perceptron(bias="feature"), Perceptron(bias="r2"), Perceptron(lr=0.3),
     MarginPerceptron(tau=0.5), LearningRatePerceptron(schedule="inverse_sqrt"),
     AveragedPerceptron(), VotedPerceptron(), PassiveAggressive(variant="pa1", C=0.5)],
    ids=lambda learner: repr(learner),
)  # fmt: skip
def test_the_game_plays_every_binary_online_learner_with_readable_weights(learner):
    learner, dataset, shown = played(3, 0.05, radius=2.0, learner=learner, passes=2)
    assert_valid(dataset, 0.05, 2.0)
    assert learner.mistakes_ >= 50  # A forces many mistakes from each
    assert learner.mistakes_ == dataset.X.shape[0]  # and every example it presents is one
    assert (shown == 1).all() and learner.n_steps_ == dataset.X.shape[0]


def test_the_game_refuses_what_it_cannot_play():
    with pytest.raises(LinclsInputError, match=r"^learner: the perceptron game needs a binary"):
        played(2, 0.1, learner=MulticlassPerceptron())
    with pytest.raises(LinclsInputError, match=r"^learner: the perceptron game reads linear"):
        played(2, 0.1, learner=KernelPerceptron())
    with pytest.raises(LinclsInputError, match=r"^d: the orthogonal strategy needs d ≥"):
        make_perceptron_game(d=5, margin=0.1, strategy="orthogonal")
    with pytest.raises(LinclsInputError, match=r"^margin: must be ≤ radius"):
        make_perceptron_game(margin=2.0)
    with pytest.raises(LinclsInputError, match=r"^rounds: passes × rounds × d"):
        played(100_000, 0.001, passes=1)
    config = compose_config(["dataset=perceptron_game", "order=adversarial"])
    with pytest.raises(LinclsInputError, match=r"^order: the perceptron game decides the order"):
        evaluation.prepare(config)


def test_a_game_run_logs_the_certified_margin_radius_and_the_played_mistakes(tmp_path):
    config = compose_config(
        ["dataset=perceptron_game", "dataset.margin=0.05", "learner.bias=none",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    first, again = evaluation.measure(config), evaluation.measure(config)
    m = first.metrics
    assert m["margin"] >= 0.05 and m["radius"] <= 1.0 and m["separable"] == 1.0
    assert m["mistakes"] == 200.0 and m["bound.novikoff"] == pytest.approx(400.0, rel=1e-9)
    assert m["bound_ratio.novikoff"] == pytest.approx(0.5, rel=1e-9)
    assert first.tags["bound_violated"] == "false"
    assert m | {"fit_seconds": 0} == again.metrics | {"fit_seconds": 0}  # deterministic
    # the flip strategy loses only in the norm lemma: every mistake has progress γ exactly
    assert m["bound_slack.progress"] == pytest.approx(1.0, abs=1e-8)
    assert m["bound_slack.norm"] == pytest.approx(0.5, abs=0.01)


SLACK_CASES = [
    ["dataset.n=200", "learner.bias=none"],
    ["dataset.n=200", "dataset.offset=0.3"],
    ["dataset.n=200", "dataset.offset=0.3", "learner.bias=r2", "learner.lr=0.25"],
    ["dataset.n=200", "learner=averaged_perceptron", "dataset.offset=0.2"],
    ["dataset.n=200", "learner=voted_perceptron", "learner.bias=none"],
    ["dataset.n=200", "learner=batch_perceptron", "learner.batch_size=1"],
    ["dataset.n=200", "learner=learning_rate_perceptron", "learner.lr=3"],
    ["dataset=orthonormal", "dataset.d=40", "learner.bias=none"],
    ["dataset=plane", "dataset.offset=0.5"],
    ["dataset=perceptron_game", "dataset.d=40", "dataset.margin=0.2", "learner.bias=none"],
    ["dataset.n=200", "order=shuffled", "passes=5", "dataset.margin=0.02"],
    ["dataset.n=200", "order=adversarial", "learner.bias=none"],
]


@pytest.mark.parametrize("overrides", SLACK_CASES, ids=" ".join)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_three_slack_factors_multiply_to_mistakes_over_the_bound(overrides, seed, tmp_path):
    config = compose_config([*overrides, f"seed={seed}", "certificates.svm=false"])
    outcome = evaluation.measure(config)
    m, tags = outcome.metrics, outcome.tags
    name = tags["bound_slack.bound"]
    product = m["bound_slack.progress"] * m["bound_slack.angle"] * m["bound_slack.norm"]
    assert product == pytest.approx(m["mistakes"] / m[f"bound.{name}"], rel=1e-9)
    assert all(0.0 < m[f"bound_slack.{f}"] <= 1.0 + 1e-9 for f in ("progress", "angle", "norm"))
    progress, norm = outcome.curves["lemma.progress"], outcome.curves["lemma.norm"]
    assert [s for s, _ in progress] == [s for s, _ in norm] and progress[-1][0] == m["mistakes"]
    assert all(v >= k * (1 - 1e-9) for k, v in progress)  # Lemma 1: w·u ≥ kγ
    assert all(v <= k * (1 + 1e-9) for k, v in norm)  # Lemma 2: ‖w‖² ≤ kR²


def test_no_slack_where_updates_are_not_the_perceptron_rule():
    cases = (["learner=margin_perceptron"], ["learner=passive_aggressive"],
             ["learner=learning_rate_perceptron", "learner.schedule=inverse"])  # fmt: skip
    for overrides in cases:
        outcome = evaluation.measure(compose_config([*overrides, "certificates.svm=false"]))
        assert not any(k.startswith("bound_slack.") for k in outcome.metrics), overrides


@pytest.mark.parametrize("overrides", SLACK_CASES[:3] + SLACK_CASES[8:10], ids=" ".join)
def test_the_slack_factors_at_the_best_comparator_multiply_to_the_logged_ratio(overrides, tmp_path):
    config = compose_config([*overrides, f"certificates.cache_dir={tmp_path}"])
    outcome = evaluation.measure(config)
    m, tags = outcome.metrics, outcome.tags
    name = tags["bound_slack.bound"]
    assert tags[f"bound.{name}.certificate"] == "best"  # the comparator the theorem allows best
    product = m["bound_slack.progress"] * m["bound_slack.angle"] * m["bound_slack.norm"]
    assert product == pytest.approx(m[f"bound_ratio.{name}"], rel=1e-9)
    assert all(v >= k * (1 - 1e-9) for k, v in outcome.curves["lemma.progress"])
    assert all(v <= k * (1 + 1e-9) for k, v in outcome.curves["lemma.norm"])


def test_the_slack_walk_is_the_same_on_dense_and_csr_rows():
    import scipy.sparse as sp

    from lincls.evaluation.slack import Comparator, novikoff_slack

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 6))
    u = np.r_[rng.standard_normal(6), 0.3]
    u /= np.linalg.norm(u)
    y = np.where(X @ u[:6] + 0.3 * u[6] > 0, 1.0, -1.0)
    rows, steps = np.array([3, 7, 7, 11, 20]), np.array([1, 2, 5])
    comparator = Comparator(u, 0.1, 2.0)
    dense = novikoff_slack(X, y, rows, comparator, 1.0, steps)
    sparse = novikoff_slack(sp.csr_matrix(X), y, rows, comparator, 1.0, steps)
    for name in ("progress", "angle", "norm"):
        assert getattr(dense, name) == getattr(sparse, name)
    assert list(dense.steps) == [1, 2, 5]
    w = (y[rows][:, None] * np.c_[X, np.ones(50)][rows]).sum(axis=0)  # Σ y·(x, c) by hand
    assert dense.norm == pytest.approx(w @ w / (5 * 2.0**2), rel=1e-12)
    assert dense.progress_curve[-1] == pytest.approx(w @ u / 0.1, rel=1e-12)
