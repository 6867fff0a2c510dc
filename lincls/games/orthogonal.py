"""The orthogonal adversary: ⌊(R/γ)²⌋ mistakes forced on any deterministic online learner.

With N = ⌊(R/γ)²⌋ and d ≥ N, round k presents x_k = R·σ_k·e_{π(k)}: a coordinate π(k) no earlier
example used (π a random injection, σ_k a random sign, + only for a learner that takes no
negative feature, such as Winnow). The label is chosen after the learner has seen x_k: the
adversary asks a copy of the learner, through its own one-example step, whether it would err on
one label (drawn at random) and takes that one, else the other (``lincls.games._play``), so every
round is a mistake by the learner's own rule, whatever its bias, zero-activation convention or
tie rule. Afterwards the hidden unit is u = Σ_k y_k σ_k e_{π(k)}/√N: ‖u‖ = 1, ‖x_k‖ = R and
y_k u·x_k = R/√N ≥ γ because N ≤ (R/γ)². So the sequence has margin γ and radius R for u, and
the learner made N mistakes on it: for the perceptron family Novikoff's (R/γ)² is attained up
to the floor (and exactly when (R/γ)² is an integer); for any learner, no mistake bound in
terms of γ and R alone can be below ⌊(R/γ)²⌋ (the learner is arbitrary and the examples are
fresh, so nothing it has learnt says anything about the next label).

Every presented example is re-checked in floating point against (u, γ, R): y·u·x ≥ γ and
‖x‖ ≤ R as the machine computes them (where ⌊(R/γ)²⌋ rounds a square such as (0.9/0.3)² =
9.000000000000002 to 9, 1/√N may fall an ulp short of γ/R; u's entries are then raised by ulps,
which moves ‖u‖ from 1 by ~1e-16). Passes after the first repeat the sequence in order (fixed
data: a learner with a mistake bound for (γ, R) errs on it no more in all than that bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lincls.data import Dataset
from lincls.errors import LinclsInputError, check_number, check_radius
from lincls.games._play import (
    CAP,
    MAX_CELLS,
    Game,
    check_online,
    finish,
    present,
    replay,
    start,
    wrong_label,
)
from lincls.games.perceptron import tight_mistakes


@dataclass(frozen=True)
class OrthogonalGame(Game):
    """The settings of an orthogonal game (``dataset=orthogonal_game``)."""

    d: int
    margin: float
    radius: float
    seed: int
    name: str = "orthogonal_game"
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        """N = ⌊(R/γ)²⌋, the examples of one pass and the mistakes forced."""
        return tight_mistakes(self.margin, self.radius)

    @property
    def columns(self) -> int:
        """d, the width of the examples."""
        return self.d

    def play(self, learner, passes: int) -> tuple[Dataset, np.ndarray]:
        return play_orthogonal(learner, self, passes)


def make_orthogonal_game(
    d: int = 100, margin: float = 0.1, radius: float = 1.0, seed: int = 0
) -> OrthogonalGame:
    """The game's settings, checked: d ≥ ⌊(R/γ)²⌋ fresh coordinates are needed."""
    check_number("d", d, low=1, integer=True)
    check_radius(radius)
    check_number("margin", margin, low=0, low_open=True)
    if margin > radius:
        raise LinclsInputError("margin", f"must be ≤ radius = {radius:g}, got {margin:g}")
    tight = tight_mistakes(margin, radius)
    most = math.isqrt(MAX_CELLS)  # N rounds of d ≥ N values: N² ≤ MAX_CELLS
    if tight > most:  # ⌊(R/γ)²⌋ ≤ most ⟺ γ > R/√(most + 1)
        raise LinclsInputError(
            "margin", f"must be a number in ({radius / math.sqrt(most + 1):.6g}, {radius:g}], "
            f"got {margin!r}: the game plays ⌊(R/γ)²⌋ = {tight:,} rounds of d ≥ ⌊(R/γ)²⌋ "
            f"values at radius = {radius:g}, and rounds × d must stay within {CAP}")  # fmt: skip
    if d < tight:
        raise LinclsInputError("d", f"the orthogonal game needs d ≥ ⌊(R/γ)²⌋ = {tight}, got {d}")
    check_number("d", d, low=tight, high=MAX_CELLS // max(tight, 1), integer=True,
                 why=f"⌊(R/γ)²⌋ = {tight} rounds × d must stay within {CAP}")  # fmt: skip
    check_number("seed", seed, low=0, integer=True)
    params = dict(d=d, margin=margin, radius=radius, seed=seed)
    return OrthogonalGame(int(d), float(margin), float(radius), int(seed), params=params)


def _unit_entry(rounds: int, margin: float, radius: float) -> float:
    """1/√N, raised by ulps until radius × it ≥ margin in floating point."""
    entry = 1.0 / math.sqrt(rounds)
    while radius * entry < margin:
        entry = math.nextafter(entry, math.inf)
    return entry


def play_orthogonal(learner, game: OrthogonalGame, passes: int = 1) -> tuple[Dataset, np.ndarray]:
    """Play ``game`` against ``learner`` (module docstring): the presented sequence as a dataset
    certified by the hidden u (b = 0), and the presentations of each row. The learner ends
    fitted with its own record; every first-pass round is one of its mistakes."""
    check_online(learner, "orthogonal game")
    check_number("passes", passes, low=1, integer=True)
    rounds, d, radius = game.rounds, game.d, game.radius
    rng = np.random.default_rng(game.seed)
    coords = rng.permutation(d)[:rounds]
    positive_only = learner.__sklearn_tags__().input_tags.positive_only
    signs = np.ones(rounds) if positive_only else rng.choice([-1.0, 1.0], size=rounds)
    firsts = rng.choice([-1.0, 1.0], size=rounds)
    template = np.zeros((2, d))
    template[0, coords[0] if rounds else 0] = radius  # R of bias="r2" is the examples' norm
    start(learner, template)
    X = np.zeros((rounds, d))
    X[np.arange(rounds), coords] = radius * signs
    y = np.zeros(rounds, dtype=np.int64)
    for k in range(rounds):
        label = wrong_label(learner, X[k], firsts[k])
        if not present(learner, X[k], label):  # pragma: no cover - errs said it would
            raise AssertionError(f"round {k}: {type(learner).__name__} did not err")
        y[k] = int(label)
    replay(learner, X, y, int(passes) - 1)
    finish(learner, rounds)
    learner.converged_ = passes > 1 and learner.converged_  # a replayed pass without an update
    u = np.zeros(d)
    u[coords] = y * signs * _unit_entry(max(rounds, 1), game.margin, radius)
    if rounds and (
        (y * (X @ u)).min() < game.margin or np.linalg.norm(X, axis=1).max() > radius
    ):  # pragma: no cover - the construction rules it out
        raise AssertionError("an orthogonal game's example breaks margin γ or radius R")
    dataset = Dataset.certified(
        name=game.name, X=X, y=y, X_test=np.zeros((0, d)), y_test=np.zeros(0, dtype=np.int64),
        u=u, b=0.0, params=dict(game.params),
    )  # fmt: skip
    return dataset, np.full(rounds, learner.n_steps_ // max(rounds, 1), dtype=np.int64)
