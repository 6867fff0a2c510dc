"""The orthogonal adversary (lincls.games.orthogonal) against every registered online learner:
exactly ⌊(R/γ)²⌋ mistakes, every example within (u, γ, R) as floating point computes it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lincls.errors import LinclsInputError
from lincls.games.orthogonal import make_orthogonal_game, play_orthogonal
from lincls.learners import MulticlassPerceptron
from lincls.registry import LEARNERS, build_learner


def online_learners() -> list[str]:
    """Every registered learner with a one-example kernel that takes two classes."""
    names = []
    for name in LEARNERS:
        learner = build_learner({"name": name}, 1, 0)
        if hasattr(learner, "_one_pass") and not (
            learner.__sklearn_tags__().classifier_tags.multi_class
        ):
            names.append(name)
    return names


def make(name: str):
    options = {"batch_size": 1} if name == "batch_perceptron" else {}
    return build_learner({"name": name, **options}, 1, 0)


# (d, γ, R): exact squares (25, 64, 1, 9 where (0.9/0.3)² is 9.000000000000002 in floating
# point) and non-integer ones (8.16, 34.6, 12.76, 2.78, 43.56)
CASES = [
    (25, 0.2, 1.0), (10, 0.35, 1.0), (9, 0.3, 0.9), (40, 0.17, 1.0), (12, 0.7, 2.5),
    (3, 0.6, 1.0), (50, 0.5, 3.3), (1, 1.0, 1.0), (64, 0.125, 1.0),
]  # fmt: skip


def check_game(name, d, margin, radius, seed):
    learner = make(name)
    game = make_orthogonal_game(d, margin, radius, seed=seed)
    dataset, shown = play_orthogonal(learner, game)
    tight = math.floor((radius / margin) ** 2 + 1e-9)
    assert learner.mistakes_ == tight == dataset.X.shape[0] == game.rounds, name
    assert (learner.mistake_steps_ == np.arange(tight)).all()  # every round a mistake
    X, y, u = dataset.X, dataset.y, dataset.u
    assert abs(np.linalg.norm(u) - 1.0) <= 1e-15
    assert (y * (X @ u)).min() >= margin and np.linalg.norm(X, axis=1).max() <= radius
    assert (shown == 1).all()
    return learner


def test_the_registry_has_the_online_learners_the_game_plays():
    names = online_learners()
    assert len(names) >= 19 and {"perceptron", "winnow", "forgetron", "arow"} <= set(names)


@pytest.mark.parametrize("name", online_learners())
def test_the_orthogonal_game_forces_exactly_the_floor_of_r_over_gamma_squared(name):
    for k, (d, margin, radius) in enumerate(CASES):
        check_game(name, d, margin, radius, seed=k)


@pytest.mark.slow
@pytest.mark.parametrize("name", online_learners())
def test_the_orthogonal_game_at_hundreds_of_rounds(name):
    for k, (d, margin, radius) in enumerate([(400, 0.05, 1.0), (700, 0.04, 1.05)]):
        check_game(name, d, margin, radius, seed=k)


def test_later_passes_repeat_the_sequence_and_the_perceptron_errs_no_more():
    """Passes after the first are fixed data, each one call of the learner's kernel."""
    learner = make("perceptron")
    learner.set_params(bias="none")
    _, shown = play_orthogonal(learner, make_orthogonal_game(30, 0.2, 1.0), passes=3)
    assert learner.mistakes_ == 25 and list(learner.mistakes_per_pass_) == [25, 0]
    assert (shown == 2).all() and learner.n_steps_ == 50  # the second pass made no update
    assert learner.converged_
    learner = make("passive_aggressive")
    learner.set_params(stop_when_converged=False)
    _, shown = play_orthogonal(learner, make_orthogonal_game(30, 0.2, 1.0), passes=3)
    assert learner.mistakes_ == 25 and (shown == 3).all() and learner.n_passes_ == 3


def test_the_orthogonal_game_refuses_what_it_cannot_play():
    with pytest.raises(LinclsInputError, match=r"^d: the orthogonal game needs d ≥ ⌊\(R/γ\)²⌋"):
        make_orthogonal_game(d=20, margin=0.2)
    with pytest.raises(LinclsInputError, match=r"^learner: the orthogonal game needs a binary"):
        play_orthogonal(MulticlassPerceptron(), make_orthogonal_game(4, 0.5))
    with pytest.raises(LinclsInputError, match=r"^batch_size: the orthogonal game presents"):
        play_orthogonal(build_learner({"name": "batch_perceptron"}, 1, 0),
                        make_orthogonal_game(4, 0.5))  # fmt: skip


def test_a_config_run_plays_the_game_and_logs_mistakes_beside_the_bounds(tmp_path):
    from conftest import compose_config

    from lincls import evaluation

    config = compose_config(
        ["dataset=orthogonal_game", "dataset.d=30", "dataset.margin=0.2", "learner.bias=none",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    m = evaluation.measure(config).metrics
    assert m["mistakes"] == 25 and m["bound.novikoff"] == pytest.approx(25.0, rel=1e-9)
    assert m["bound_ratio.novikoff"] == 1.0  # Novikoff's bound attained
    winnow = compose_config(
        ["dataset=disjunction_game", "dataset.n_attributes=256", "dataset.k=2",
         "learner=winnow", "passes=1", f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    outcome = evaluation.measure(winnow)
    assert outcome.metrics["mistakes"] >= 14 and "bound.winnow2" in outcome.metrics
    with pytest.raises(LinclsInputError, match=r"^order: the orthogonal game decides the order"):
        evaluation.prepare(compose_config(["dataset=orthogonal_game", "order=shuffled"]))
