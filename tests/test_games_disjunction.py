"""Disjunction games (lincls.games.disjunction): Littlestone's lower bound against Winnow and
Balanced Winnow, and the additive adversary against every additive learner."""

from __future__ import annotations

import numpy as np
import pytest

from lincls.errors import LinclsInputError
from lincls.games.disjunction import (
    additive_lower_bound,
    block_size,
    littlestone_lower_bound,
    make_disjunction_game,
    play_disjunction,
    sylvester,
)
from lincls.learners import (
    ALMA,
    AveragedPerceptron,
    BalancedWinnow,
    KernelPerceptron,
    LearningRatePerceptron,
    MarginPerceptron,
    MulticlassPerceptron,
    PassiveAggressive,
    Perceptron,
    VotedPerceptron,
    Winnow,
)
from lincls.learners.budget_perceptron import BudgetPerceptron
from lincls.learners.projectron import Projectron
from lincls.learners.romma import ROMMA


def assert_labelled_by_target(record, k):
    """Every label is the target disjunction's, the target has at most k attributes, and the
    certificate separates with margin 1/(2√|T|)."""
    X, y, relevant = record.dataset.X, record.dataset.y, record.relevant
    assert 1 <= relevant.size <= k
    assert set(np.unique(X)) <= {0.0, 1.0}
    assert (np.where(X[:, relevant].any(axis=1), 1, -1) == y).all()
    if y.size:  # an empty game (k⌊log₂(N/k)⌋ = 0) has no margin
        assert record.dataset.margin >= 0.5 / np.sqrt(relevant.size) - 1e-12


LITTLESTONE_CASES = [
    (1, 2), (1, 3), (1, 16), (1, 17), (1, 100), (1, 1000), (2, 4), (2, 9), (2, 64), (2, 129),
    (3, 3), (3, 7), (3, 48), (3, 200), (4, 64), (4, 65), (5, 160), (5, 999), (7, 100),
    (8, 256), (10, 1000), (16, 500),
]  # fmt: skip


def test_littlestones_lower_bound_values():
    assert littlestone_lower_bound(1000, 1) == 9 and littlestone_lower_bound(1000, 10) == 60
    assert littlestone_lower_bound(3, 3) == 0 and littlestone_lower_bound(7, 3) == 3


@pytest.mark.parametrize("make", [Winnow, lambda: Winnow(variant="winnow1"), BalancedWinnow],
                         ids=["winnow2", "winnow1", "balanced_winnow"])  # fmt: skip
def test_the_littlestone_adversary_forces_k_log_n_over_k_on_winnow(make):
    for k, n in LITTLESTONE_CASES:
        bound = littlestone_lower_bound(n, k)
        record = play_disjunction(make(), n, k, adversary="littlestone", seed=k, extend=False)
        assert record.forced == record.mistakes == bound, (k, n)  # every round a mistake
        assert_labelled_by_target(record, k)
        extended = play_disjunction(make(), n, k, adversary="littlestone", seed=k)
        assert extended.mistakes >= bound and extended.lower_bound == bound


ADDITIVE = [
    lambda: Perceptron(bias="none"), lambda: Perceptron(bias="feature"),
    lambda: Perceptron(bias="r2"), lambda: Perceptron(lr=0.3), MarginPerceptron,
    LearningRatePerceptron, AveragedPerceptron, VotedPerceptron, PassiveAggressive,
    lambda: PassiveAggressive(variant="pa2", C=0.1), lambda: ALMA(p=2.0), KernelPerceptron,
    lambda: KernelPerceptron(kernel="poly", degree=2), ROMMA, Projectron,
    lambda: BudgetPerceptron(random_state=0),  # its discards seeded: the same play each time
]  # fmt: skip
ADDITIVE_IDS = [
    "perceptron_none", "perceptron_feature", "perceptron_r2", "perceptron_lr", "margin",
    "learning_rate", "averaged", "voted", "pa1", "pa2", "alma2", "kernel_linear", "kernel_poly",
    "romma", "projectron", "budget",
]  # fmt: skip


def _check_additive(make, n, k):
    record = play_disjunction(make(), n, k, adversary="additive", seed=n + k, extend=False)
    assert record.lower_bound == (n + k - 1) / 2
    assert record.mistakes >= (n + k - 1) / 2, (n, k, record.mistakes)
    assert_labelled_by_target(record, k)
    return record


@pytest.mark.parametrize("make", ADDITIVE, ids=ADDITIVE_IDS)
def test_the_additive_adversary_forces_half_of_n_plus_k(make):
    # N − k + 2 a power of two: the Hadamard block takes every attribute but the k − 1 singletons
    for n, k in [(127, 1), (65, 3)]:
        _check_additive(make, n, k)


@pytest.mark.slow
@pytest.mark.parametrize("make", ADDITIVE, ids=ADDITIVE_IDS)
@pytest.mark.parametrize(("n", "k"), [(256, 2), (513, 3), (542, 32), (1000, 490)])
def test_the_additive_adversary_forces_half_of_n_plus_k_up_to_1000(make, n, k):
    _check_additive(make, n, k)


def test_winnow_escapes_the_additive_adversary():
    """The adversary's lower bound is for additive learners: Winnow makes O(k log N) instead."""
    record = play_disjunction(Winnow(), 257, 2, adversary="additive", extend=False)
    assert record.mistakes < additive_lower_bound(257, 2) / 4
    assert_labelled_by_target(record, 2)


def test_the_hadamard_block():
    h = sylvester(16)
    assert (h @ h.T == 16 * np.eye(16)).all() and (h[0] == 1).all() and (h[:, 0] == 1).all()
    assert [block_size(n, k) for n, k in [(64, 1), (65, 1), (66, 1), (64, 4), (4, 4), (5, 1)]] == [
        64, 64, 64, 32, 0, 4
    ]  # fmt: skip
    rows = (h[1:, 1:] > 0).astype(int)  # the block's examples: equal norms and overlaps
    gram = rows @ rows.T
    assert (np.diag(gram) == 7).all() and (gram[~np.eye(15, dtype=bool)] == 3).all()


def test_the_game_refuses_what_it_cannot_play():
    with pytest.raises(LinclsInputError, match=r"^learner: the disjunction game needs a binary"):
        play_disjunction(MulticlassPerceptron(), 16, 1)
    with pytest.raises(LinclsInputError, match=r"^k: must be ≤ n_attributes = 4"):
        make_disjunction_game(4, 5)
    with pytest.raises(LinclsInputError, match=r"^adversary: "):
        make_disjunction_game(4, 1, adversary="greedy")
