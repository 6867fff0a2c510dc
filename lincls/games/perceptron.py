"""The perceptron game of seed 000 §3.2, played for real: player A constructs every example.

Player A holds a hidden unit u and, one round at a time, reads the learner's live weights (w, b)
and constructs an example x with label y such that

    y·u·x ≥ γ,   ‖x‖ ≤ R,   and   y·(w·x + b) ≤ 0   (a mistake: a zero activation counts),

then hands it to the learner's own one-example kernel. A stops when it can no longer force a
mistake, or after ``passes × rounds`` examples. Every presented example satisfies the first two
constraints, so the sequence has margin ≥ γ and radius ≤ R for u (both re-measured and logged),
and every mistake bound with those numbers applies to it. Strategies:

- ``"flip"`` (any d ≥ 2): the whole game happens in the plane of u and a second direction e. The
  first example is z = γu + (c/2)e with c = √(R² − γ²), and each later one the z = y·x that
  minimises w·z over {u·z ≥ γ, ‖z‖ ≤ R}: z = γu − c·w⊥/‖w⊥‖, w⊥ the part of w orthogonal to u.
  Against the perceptron without a bias the part of w along e then swings between ±c/2 while w·u
  grows by γ a round, so A forces a mistake while kγ² ≤ c²/2: about (R² − γ²)/(2γ²) mistakes,
  half of Novikoff's (R/γ)². Measured (tests/test_game.py): at γ/R = 0.01 in d = 2, 5,000
  mistakes, ratio 0.500 to (R/γ)²; the fitted slope of log mistakes on log γ over
  γ/R ∈ [0.01, 0.3] is −1.98. No planar strategy does better against the perceptron without a
  bias: write w = a·u + b·e; a mistake on z needs w·z ≤ 0, so b and z's e-part have opposite
  signs and |b|·c ≥ a·γ, with a ≥ kγ after k mistakes. If mistakes k + 1 and k + 2 both happen,
  the e-part must swing across zero and back within ‖z‖ ≤ R, which forces kγ²/c < c/2, so
  M < (R² − γ²)/(2γ²) + 2: the flip count or one more. An exact dynamic program over the plane
  on a fine grid agrees. Half of (R/γ)² is what d = 2 allows; the orthogonal strategy needs
  d ≥ (R/γ)² to reach all of it.
- ``"orthogonal"`` (d ≥ N = ⌊(R/γ)²⌋): u = Σ_{i<N} σ_i e_{π(i)}/√N for random signs σ and
  coordinates π, and example k is R·σ_k·e_{π(k)}. Its coordinate is new, so w·x = 0 exactly
  (a mistake), and u·(y x) = R/√N ≥ γ. After N rounds Novikoff's theorem (proved in seed 000,
  Lemmas 1–2) forbids another mistake at margin R/√N, so A forces exactly N mistakes against the
  perceptron without a bias: the bound is attained.
- ``"auto"``: ``orthogonal`` when d ≥ ⌊(R/γ)²⌋, else ``flip``.

After its strategy's examples, A keeps playing the minimising z of ``flip`` while that still
forces a mistake by a safe margin (a learner with a bias, or another update rule, may allow
more). The learner is the real one: each round is one call of its one-pass kernel on the new
example, so mistakes, updates and the online record are its own. The learner's label choice
y = −sign(b) makes y·b ≤ 0, so the bias never rescues it.

``order=adversarial`` (``lincls.orders``) stays the restricted game on fixed data: A only picks
which of n given examples comes next.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lincls.data import Dataset
from lincls.errors import LinclsInputError, check_choice, check_number, check_radius
from lincls.games._play import CAP, MAX_CELLS, Game, check_online
from lincls.orders import training_weights

STRATEGIES = ("auto", "flip", "orthogonal")
SAFETY = 1e-9  # a constructed mistake must have y(w·x + b) ≤ −SAFETY·(‖w‖R + |b|)
SLACK = 1e-10  # relative room so that u·z ≥ γ and ‖z‖ ≤ R hold after rounding


def tight_mistakes(margin: float, radius: float) -> int:
    """⌊(R/γ)²⌋, computed so that an exact square such as (1/0.1)² gives 100, not 99."""
    ratio = (radius / margin) ** 2
    nearest = round(ratio)
    return int(nearest) if abs(ratio - nearest) <= 1e-9 * ratio else math.floor(ratio)


@dataclass(frozen=True)
class PerceptronGame(Game):
    """A game to play against a learner: the data exist only once it is played (``play``)."""

    d: int
    margin: float
    radius: float
    strategy: str
    rounds: int
    seed: int
    name: str = "perceptron_game"
    params: dict[str, Any] = field(default_factory=dict)
    rounds_given: bool = True  # False: rounds is ⌊(R/γ)²⌋ + 1, set by the margin and radius

    @property
    def columns(self) -> int:
        """d, the width of the constructed examples."""
        return self.d

    def check_size(self, passes: int) -> None:
        """Refuse a game whose ``passes × rounds`` examples of d values exceed ``MAX_CELLS``,
        naming what sets its size: d, rounds, or the margin that set rounds."""
        why = f"passes × rounds × d must stay within {CAP}, with passes = {passes}"
        if passes * self.d > MAX_CELLS:
            check_number("dataset.d", self.d, low=2, high=MAX_CELLS // passes, integer=True,
                         why=why)  # fmt: skip
        most = MAX_CELLS // (passes * self.d)
        if self.rounds <= most:
            return
        why += f" and d = {self.d}"
        if self.rounds_given:
            check_number("dataset.rounds", self.rounds, low=1, high=most, integer=True, why=why)
        smallest = self.radius / math.sqrt(most)  # ⌊(R/γ)²⌋ + 1 ≤ most ⟺ γ > R/√most
        raise LinclsInputError(
            "dataset.margin", f"must be a number in ({smallest:.6g}, {self.radius:g}], got "
            f"{self.margin!r}: the game plays ⌊(R/γ)²⌋ + 1 = {self.rounds:,} rounds a pass at "
            f"radius = {self.radius:g}, and {why}")  # fmt: skip

    @property
    def resolved_strategy(self) -> str:
        """``auto`` resolved: ``orthogonal`` when d ≥ ⌊(R/γ)²⌋, else ``flip``."""
        if self.strategy != "auto":
            return self.strategy
        tight = tight_mistakes(self.margin, self.radius)
        return "orthogonal" if self.d >= tight else "flip"

    def play(self, learner, passes: int) -> tuple[Dataset, np.ndarray]:
        """``play(self, learner, passes)`` (the module's function)."""
        return play(self, learner, passes)


def make_perceptron_game(
    d: int = 2,
    margin: float = 0.1,
    radius: float = 1.0,
    strategy: str = "auto",
    rounds: int | None = None,
    seed: int = 0,
) -> PerceptronGame:
    """The game's settings, checked; ``rounds`` defaults to ⌊(R/γ)²⌋ + 1 (one pass of it)."""
    check_number("d", d, low=2, integer=True)
    check_radius(radius)
    check_number("margin", margin, low=0, low_open=True)
    if margin > radius:
        raise LinclsInputError("margin", f"must be ≤ radius = {radius:g}, got {margin:g}")
    check_choice("strategy", strategy, STRATEGIES)
    tight = tight_mistakes(margin, radius)
    if strategy == "orthogonal" and d < tight:
        raise LinclsInputError(
            "d", f"the orthogonal strategy needs d ≥ ⌊(R/γ)²⌋ = {tight}, got {d}"
        )
    given = rounds is not None
    if rounds is None:
        rounds = tight + 1
    check_number("rounds", rounds, low=1, integer=True)
    check_number("seed", seed, low=0, integer=True)
    params = dict(d=d, margin=margin, radius=radius, strategy=strategy, rounds=rounds, seed=seed)
    return PerceptronGame(int(d), float(margin), float(radius), strategy, int(rounds), int(seed),
                          params=params, rounds_given=given)  # fmt: skip


class _Player:
    """Player A: the hidden u, its strategy's examples, then the minimising z."""

    def __init__(self, game: PerceptronGame, rng: np.random.Generator):
        self.gamma, self.radius, self.d = game.margin, game.radius, game.d
        self.rng = rng
        self.orthogonal_left = 0
        if game.resolved_strategy == "orthogonal":
            tight = tight_mistakes(game.margin, game.radius)
            self.coords = rng.permutation(game.d)[:tight]
            self.signs = rng.choice([-1.0, 1.0], size=tight)
            self.u = np.zeros(game.d)
            self.u[self.coords] = self.signs / math.sqrt(tight)
            self.orthogonal_left = tight
        else:
            self.u = _unit(rng.standard_normal(game.d))
        e = rng.standard_normal(game.d)
        e -= (e @ self.u) * self.u
        self.e = _unit(e - (e @ self.u) * self.u)  # a direction orthogonal to u
        self.side = math.sqrt(max(self.radius**2 - self.gamma**2, 0.0)) * (1.0 - SLACK)
        self.progress = self.gamma * (1.0 + SLACK)

    def next_update(self, w: np.ndarray, b: float) -> np.ndarray | None:
        """The z = y·x of the next round, or None when no mistake can be forced any more."""
        if self.orthogonal_left:
            k = self.coords.shape[0] - self.orthogonal_left
            self.orthogonal_left -= 1
            z = np.zeros(self.d)
            z[self.coords[k]] = self.radius * self.signs[k]
            return z
        if not w.any() and b == 0.0:
            return self.progress * self.u + 0.5 * self.side * self.e
        z = self._minimiser(w)
        # y = −sign(b) makes y·b = −|b|: the activation y(w·x + b) is w·z − |b|.
        if w @ z - abs(b) > -SAFETY * (np.linalg.norm(w) * self.radius + abs(b)):
            return None
        return z

    def _minimiser(self, w: np.ndarray) -> np.ndarray:
        """argmin of w·z over {u·z ≥ γ, ‖z‖ ≤ R}."""
        norm = np.linalg.norm(w)
        if norm > 0 and -(w @ self.u) / norm * self.radius >= self.progress:
            return -self.radius * (1.0 - SLACK) * w / norm  # −w itself has enough progress
        across = w - (w @ self.u) * self.u
        across -= (across @ self.u) * self.u  # twice: w may be nearly parallel to u
        size = np.linalg.norm(across)
        # w along u up to rounding: its rounding noise is no direction; any unit ⟂ u minimises
        direction = across / size if size > 1e-9 * norm else self.e
        return self.progress * self.u - self.side * direction


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def play(game: PerceptronGame, learner, passes: int) -> tuple[Dataset, np.ndarray]:
    """Play ``game`` against ``learner`` for up to ``passes × rounds`` examples.

    Returns the presented sequence as a certified dataset (u the hidden unit, b = 0, margin
    and radius measured on it) and the presentations of each row (each row once). The learner
    ends fitted, with its own online record over that sequence.
    """
    budget = int(passes) * game.rounds
    if budget * game.d > MAX_CELLS:
        raise LinclsInputError(
            "rounds",
            f"passes × rounds × d = {budget * game.d:,} values exceed {MAX_CELLS:,} "
            f"({MAX_CELLS * 8 // 2**20} MiB); lower passes, rounds or d",
        )
    check_online(learner, "perceptron game")
    rng = np.random.default_rng(game.seed)
    player = _Player(game, rng)
    template = np.zeros((2, game.d))
    template[0, 0], template[1, 0] = game.radius, -game.radius  # radius_ = R for the r2 rule
    learner._check_params()
    template, _ = learner._validate_X_y(template, np.array([-1, 1]), reset=True)
    learner.classes_ = np.array([-1, 1])
    learner._init_weights(template, None, None)
    if not hasattr(learner, "coef_") and not hasattr(learner, "_w"):
        raise LinclsInputError(
            "learner", f"the perceptron game reads linear weights; {type(learner).__name__} "
            "has none")  # fmt: skip
    learner._reset_record()
    X = np.zeros((budget, game.d))
    y = np.zeros(budget)
    shown = 0
    while shown < budget:
        w, b = training_weights(learner)
        z = player.next_update(np.asarray(w, dtype=np.float64), float(b))
        if z is None:
            break
        sign = -math.copysign(1.0, b) if b != 0.0 else float(rng.choice([-1.0, 1.0]))
        X[shown], y[shown] = sign * z, sign
        learner._one_pass(X, y, np.array([shown], dtype=np.int64))
        shown += 1
    learner._finish_record()
    passes_run = max(-(-shown // game.rounds), 1)
    learner.mistakes_per_pass_ = np.bincount(
        learner.mistake_steps_ // game.rounds, minlength=passes_run
    )
    learner.n_passes_ = int(learner.mistakes_per_pass_.shape[0])
    learner.converged_ = shown < budget  # A ran out of mistakes to force
    X, y = X[:shown], y[:shown].astype(np.int64)
    empty = np.zeros((0, game.d))
    dataset = Dataset.certified(
        name=game.name, X=X, y=y, X_test=empty, y_test=np.zeros(0, dtype=np.int64),
        u=player.u, b=0.0, params={**game.params, "strategy_played": game.resolved_strategy},
    )  # fmt: skip
    return dataset, np.ones(shown, dtype=np.int64)
