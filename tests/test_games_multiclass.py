"""The multiclass orthogonal adversary (lincls.games.multiclass) against the multiclass perceptron
and MIRA: exactly N = ⌊(R/γ)²·K/(K−1)⌋ mistakes, every example within (U, γ, R) as floating
point computes it, and the bounds met at the ratio the module derives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lincls.errors import LinclsInputError
from lincls.games.multiclass import (
    game_ratio,
    make_multiclass_orthogonal_game,
    multiclass_rounds,
    play_multiclass_orthogonal,
)
from lincls.geometry import multiclass_margins
from lincls.learners import MIRA, MulticlassPerceptron, Perceptron

LEARNERS = {
    "perceptron": lambda bias: MulticlassPerceptron(bias=bias),
    "perceptron_lr": lambda bias: MulticlassPerceptron(lr=0.3, bias=bias),
    "mira": lambda bias: MIRA(bias=bias),
    "mira_uncapped": lambda bias: MIRA(max_step=float("inf"), bias=bias),
}
# (d, K, γ, R, N): exact integers ((1/0.5)²·3/2 = 6, (1/0.1)²·3/2 = 150, (1/0.5)²·2 = 8,
# (1/0.25)²·5/4 = 20) and floors (44.4·4/3 = 59.26, 25·5/4 = 31.25, (2.5/0.7)²·2 = 25.5,
# 6.25·6/5 = 7.5)
CASES = [
    (10, 3, 0.5, 1.0, 6), (150, 3, 0.1, 1.0, 150), (9, 2, 0.5, 1.0, 8), (20, 5, 0.25, 1.0, 20),
    (70, 4, 0.3, 2.0, 59), (40, 5, 0.2, 1.0, 31), (30, 2, 0.7, 2.5, 25), (8, 6, 0.4, 1.0, 7),
]  # fmt: skip


def play(learner, d, k, margin, radius, seed=0, passes=1):
    game = make_multiclass_orthogonal_game(d, k, margin, radius, seed=seed)
    dataset, shown = play_multiclass_orthogonal(learner, game, passes)
    return game, dataset, shown


@pytest.mark.parametrize("bias", ["feature", "none"])
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_the_game_forces_exactly_n_mistakes_within_margin_and_radius(name, bias):
    for seed, (d, k, margin, radius, rounds) in enumerate(CASES):
        if bias == "none" and k == 2:
            continue  # every fresh coordinate predicts class 0: one label class (refused below)
        learner = LEARNERS[name](bias)
        game, dataset, shown = play(learner, d, k, margin, radius, seed)
        assert game.rounds == multiclass_rounds(margin, radius, k) == rounds
        assert learner.mistakes_ == rounds == dataset.X.shape[0], (name, bias, k)
        assert (learner.mistake_steps_ == np.arange(rounds)).all()  # every round a mistake
        X, y, U = dataset.X, dataset.y, dataset.U
        classes = np.unique(y)
        assert U.shape == (classes.shape[0], d)
        assert abs(np.linalg.norm(U) - 1.0) <= 1e-15 * rounds
        gaps = multiclass_margins(X, np.searchsorted(classes, y), U, np.zeros(classes.shape[0]))
        assert gaps.min() >= margin and dataset.margin >= margin
        assert np.linalg.norm(X, axis=1).max() <= radius and dataset.radius == radius
        assert (shown == 1).all()
        # with a bias the learner's argmax moves, so every class is used; without one, class 0
        # (the tie's class on a fresh coordinate) never is
        assert list(classes) == list(range(k) if bias == "feature" else range(1, k))


def test_every_used_coordinate_holds_a_and_minus_a_over_k_minus_one():
    """The hidden U of the module docstring: a² = (K−1)/(N·K), the margin R·√(K/(N(K−1)))."""
    _, dataset, _ = play(MulticlassPerceptron(), 150, 3, 0.1, 1.0)
    U, y = dataset.U, dataset.y
    coords = np.argmax(dataset.X, axis=1)
    a = math.sqrt(2 / 450)
    assert U[y, coords] == pytest.approx(np.full(150, a), rel=1e-15)
    others = U[:, coords].copy()
    others[y, np.arange(150)] = np.nan
    assert np.nanmax(np.abs(others + a / 2)) <= 1e-17
    assert dataset.margin == pytest.approx(0.1, rel=1e-15)
    assert np.count_nonzero(U) == 3 * 150  # no entry off the used coordinates


def test_later_passes_repeat_the_sequence():
    learner = MulticlassPerceptron(bias="none")
    _, _, shown = play(learner, 40, 5, 0.2, 1.0, passes=3)
    assert list(learner.mistakes_per_pass_) == [31, 0] and (shown == 2).all()
    assert learner.converged_ and learner.n_steps_ == 62
    learner = MIRA(stop_when_converged=False)
    _, _, shown = play(learner, 40, 5, 0.2, 1.0, passes=3)
    assert learner.mistakes_per_pass_[0] == 31 and (shown == 3).all() and learner.n_passes_ == 3


def test_the_derived_ratio_is_k_over_two_k_minus_one_at_an_exact_n():
    assert game_ratio(0.1, 1.0, 3) == pytest.approx(0.75, rel=1e-12)
    assert game_ratio(0.5, 1.0, 2) == pytest.approx(1.0, rel=1e-12)
    assert game_ratio(0.25, 1.0, 5) == pytest.approx(0.625, rel=1e-12)
    assert game_ratio(0.3, 2.0, 4) == pytest.approx(59 * 0.09 / 8, rel=1e-12)  # 0.66375
    assert game_ratio(0.1, 1.0, 3, bias=1.0) == pytest.approx(0.375, rel=1e-12)


@pytest.mark.parametrize(
    ("learner", "bound"),
    [("multiclass_perceptron", "multiclass_perceptron"), ("mira", "mira_pa1_kesler")],
)
def test_a_run_logs_the_derived_ratio_against_both_bounds(tmp_path, learner, bound):
    """No bias feature, K = 3, γ = 0.1, R = 1: N = 150 mistakes, bound 2R²/γ² = 200 (MIRA's
    max(2R², 1/M)/γ² is the same at M = 1), so 3/4; the best comparator (the hard-margin SVM over
    the learner's 3 classes, γ* = R·√(K/(N(K−1))) = 0.1) gives the same."""
    from conftest import compose_config

    from lincls import evaluation

    config = compose_config(
        [f"learner={learner}", "learner.bias=none", "dataset=multiclass_orthogonal_game",
         "passes=3", f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    m = evaluation.measure(config).metrics
    assert m["mistakes"] == 150 and m[f"bound.{bound}"] == pytest.approx(200.0, rel=1e-9)
    assert m[f"bound_ratio.{bound}"] == pytest.approx(0.75, rel=1e-9)
    four = compose_config(
        [f"learner={learner}", "learner.bias=none", "dataset=multiclass_orthogonal_game",
         "dataset.n_classes=4", "dataset.margin=0.3", "dataset.radius=2", "dataset.d=60",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    m = evaluation.measure(four).metrics
    # N = 59; at the best comparator over 4 classes 2N(K−1)/K = 88.5: the ratio K/(2(K−1))
    assert m["mistakes"] == 59 and m[f"bound.{bound}"] == pytest.approx(88.5, rel=1e-6)
    assert m[f"bound_ratio.{bound}"] == pytest.approx(2 / 3, rel=1e-6)
    biased = compose_config(
        [f"learner={learner}", "dataset=multiclass_orthogonal_game", "passes=3",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    m = evaluation.measure(biased).metrics
    # with the bias feature R'² = 2: at most 2·2/0.01 = 400, so a ratio of at least 150/400 (a
    # later pass may add a mistake: the biases differ by more than R² = 1 after the first)
    assert 150 <= m["mistakes"] <= 160 and m[f"bound.{bound}"] <= 400.0 + 1e-9
    assert 0.375 <= m[f"bound_ratio.{bound}"] <= 0.75


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(d=20), r"^d: must be an integer in \[150, 333333\], got 20: the game needs d ≥ N"),
        (dict(n_classes=1), r"^n_classes: must be an integer in \[2, 100\], got 1$"),
        (dict(n_classes=101), r"^n_classes: must be an integer in \[2, 100\], got 101$"),
        (dict(margin=0.0), r"^margin: must be a number in \(0, 1.22474\d*\], got 0.0"),
        (dict(margin=1.3), r"^margin: must be a number in \(0, 1.22474\d*\], got 1.3: N = "),
        (dict(margin=0.001), r"^margin: must be a number in \(0.0145638, 1.22474\], got 0.001: "),
        (dict(radius=-1.0), r"^radius: "),
        (dict(seed=-1), r"^seed: must be an integer"),
    ],
)
def test_bad_settings_are_one_line_errors_naming_the_field(options, message):
    with pytest.raises(LinclsInputError, match=message) as caught:
        make_multiclass_orthogonal_game(**options)
    assert "\n" not in str(caught.value)


def test_the_game_refuses_what_it_cannot_play():
    with pytest.raises(LinclsInputError, match=r"^learner: the multiclass orthogonal game needs"):
        play_multiclass_orthogonal(Perceptron(), make_multiclass_orthogonal_game())
    game = make_multiclass_orthogonal_game(d=9, n_classes=2, margin=0.5)
    with pytest.raises(LinclsInputError, match=r"^n_classes: MulticlassPerceptron predicted the"):
        play_multiclass_orthogonal(MulticlassPerceptron(bias="none"), game)


def test_the_command_line_names_the_field_in_full(tmp_path):
    from conftest import compose_config

    from lincls import evaluation

    with pytest.raises(LinclsInputError, match=r"^learner: the multiclass orthogonal game needs"):
        evaluation.prepare(compose_config(["dataset=multiclass_orthogonal_game"]))
    with pytest.raises(LinclsInputError, match=r"^order: the multiclass orthogonal game decides"):
        evaluation.prepare(
            compose_config(["learner=mira", "dataset=multiclass_orthogonal_game", "order=shuffled"])
        )
    with pytest.raises(LinclsInputError, match=r"^dataset.n_classes: must be an integer in"):
        game = ["learner=mira", "dataset=multiclass_orthogonal_game", "dataset.n_classes=1"]
        evaluation.prepare(compose_config(game))


def test_a_plain_run_bounds_the_game_at_its_own_matrix(tmp_path):
    """With the SVMs on and no best comparator, a run of the game evaluates the multiclass bound
    at the game's U, over every class the learner scores. With the bias feature all three classes
    are labels: γ = 0.1 on (x, 1), R'² = 2, bound 400. Without it the learner predicts class 0 on
    every fresh coordinate, so only classes 1 and 2 are labels: U's row for class 0 is zero and
    the margin over the learner's three classes is a·R = 1/√300 (bound 600, still sound)."""
    from conftest import compose_config

    from lincls import evaluation

    game = ["learner=multiclass_perceptron", "dataset=multiclass_orthogonal_game",
            "certificates.best=false", f"certificates.cache_dir={tmp_path}"]  # fmt: skip
    outcome = evaluation.measure(compose_config(game))
    m = outcome.metrics
    assert outcome.tags["bound.multiclass_perceptron.certificate"] == "generator"
    assert m["mistakes"] == 150 and m["bound.multiclass_perceptron"] == pytest.approx(400.0)
    m = evaluation.measure(compose_config([*game, "learner.bias=none"])).metrics
    assert m["margin"] == pytest.approx(1 / math.sqrt(300), rel=1e-12)
    assert m["bound.multiclass_perceptron"] == pytest.approx(600.0, rel=1e-9)
