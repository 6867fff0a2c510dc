"""The multiclass orthogonal adversary: ⌊(R/γ)²·K/(K−1)⌋ mistakes forced on any deterministic
online multiclass learner of K classes.

Round k presents x_k = R·e_{π(k)}, a coordinate π(k) no earlier example used (π a random
injection, d ≥ N). The label is chosen after the learner has seen x_k: the adversary asks a copy
of the learner, through its own one-example step, whether it would err on a label and takes the
first one it errs on, trying first the classes not yet used as labels (in random order), then the
others (in random order). A learner errs on every label but the class it predicts, so every
round is a mistake by its own rule, whatever its tie rule or bias; preferring unused classes
lets every class appear (a learner that predicts the same class on every fresh coordinate, such
as the multiclass perceptron without a bias, never gets that class as a label).

The hidden matrix. Let C be the classes used as labels, K' = |C| ≥ 2 (K' ≤ K). On each used
coordinate j = π(k), the row of y_k has entry a and every other row of C has −a/(K'−1); all
other entries are 0. Then for example k

    u_{y_k}·x_k − max_{r≠y_k} u_r·x_k = R·(a + a/(K'−1)) = R·a·K'/(K'−1),

and ‖U‖_F² = N·(a² + (K'−1)·a²/(K'−1)²) = N·a²·K'/(K'−1). With ‖U‖_F = 1, a² = (K'−1)/(N·K'),
so the multiclass margin is R·√(K'/(N·(K'−1))). It is ≥ γ exactly when
N ≤ (R/γ)²·K'/(K'−1), and K'/(K'−1) ≥ K/(K−1) for K' ≤ K: so N = ⌊(R/γ)²·K/(K−1)⌋ rounds
always have margin γ and radius R (‖x_k‖ = R). This N is the most the construction allows: on
one coordinate, maximising v_y − max_{r≠y} v_r over a column v of norm s is done by v_y = a,
v_r = −a/(K−1) (Cauchy–Schwarz on a + c with a² + (K−1)c² = s), giving R·√(s·K/(K−1)); the
smallest of N such gaps with Σ s = 1 is largest at s = 1/N. So no matrix separates these
examples with a larger margin: the U built is the multiclass hard-margin SVM's direction, and
its margin γ* = R·√(K'/(N·(K'−1))).

What this gives (K' = K, no bias feature): the learner makes N mistakes on a sequence of margin
γ and radius R, so against the multiclass perceptron's 2R²/γ² the ratio is
N·γ²/(2R²) = ⌊(R/γ)²·K/(K−1)⌋·γ²/(2R²) ≤ K/(2(K−1)), with equality when (R/γ)²·K/(K−1) is an
integer: 1 for two classes, 3/4 for three, tending to 1/2. At the best comparator (the bound
2R²‖V‖² at the V of least norm with every (v_y − v_r)·x_t ≥ 1, V = U/γ*) the bound is
2R²/γ*² = 2N·(K−1)/K, and the ratio is K/(2(K−1)) for every N. MIRA's bound is the same when
its cap M ≥ 1/(2R²). With a bias feature the learner sees (x, 1), R'² = R² + 1 and the bound
2(R² + 1)/γ² (b* = 0), so the ratio is N·γ²/(2(R² + 1)).

Every presented example is re-checked in floating point against (U, γ, R): the margin as the
certificate computes it is ≥ γ, and ‖x‖ ≤ R (where it falls an ulp short, U's entries are raised
by ulps, which moves ‖U‖_F from 1 by ~1e-16). Passes after the first repeat the sequence in
order. The data's classes are the labels used (the certificate's rows follow them); a learner
that never got one of its K classes as a label is replayed from a CSV with K' classes, a
different run.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lincls.data import Dataset
from lincls.errors import LinclsInputError, check_number, check_radius
from lincls.games._play import CAP, MAX_CELLS, Game, finish, replay
from lincls.geometry import max_norm, multiclass_margins
from lincls.learners._kinds import is_online_multiclass

MAX_CLASSES = 100


def multiclass_rounds(margin: float, radius: float, n_classes: int) -> int:
    """N = ⌊(R/γ)²·K/(K−1)⌋, an exact integer such as (1/0.5)²·3/2 = 6 not rounded down to 5."""
    ratio = (radius / margin) ** 2 * n_classes / (n_classes - 1)
    nearest = round(ratio)
    return int(nearest) if abs(ratio - nearest) <= 1e-9 * ratio else math.floor(ratio)


def game_ratio(margin: float, radius: float, n_classes: int, bias: float = 0.0) -> float:
    """The mistakes / 2R'²/γ² of the game (module docstring): N·γ²/(2(R² + c²)), c the bias
    feature (0 without one)."""
    rounds = multiclass_rounds(margin, radius, n_classes)
    return rounds * margin**2 / (2.0 * (radius**2 + bias**2))


@dataclass(frozen=True)
class MulticlassOrthogonalGame(Game):
    """The settings of a multiclass orthogonal game (``dataset=multiclass_orthogonal_game``)."""

    d: int
    n_classes: int
    margin: float
    radius: float
    seed: int
    name: str = "multiclass_orthogonal_game"
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        """N = ⌊(R/γ)²·K/(K−1)⌋, the examples of one pass and the mistakes forced."""
        return multiclass_rounds(self.margin, self.radius, self.n_classes)

    @property
    def columns(self) -> int:
        """d, the width of the examples."""
        return self.d

    def check(self, learner, passes: int) -> None:
        """Refuse, before a run exists, a learner the game cannot play (fields named in full)."""
        try:
            check_multiclass_online(learner, "multiclass orthogonal game")
        except LinclsInputError as exc:
            name = exc.field if exc.field == "learner" else f"learner.{exc.field}"
            raise LinclsInputError(name, exc.problem) from None

    def play(self, learner, passes: int) -> tuple[Dataset, np.ndarray]:
        return play_multiclass_orthogonal(learner, self, passes)


def make_multiclass_orthogonal_game(
    d: int = 150, n_classes: int = 3, margin: float = 0.1, radius: float = 1.0, seed: int = 0
) -> MulticlassOrthogonalGame:
    """The game's settings, checked: d ≥ N = ⌊(R/γ)²·K/(K−1)⌋ fresh coordinates are needed."""
    check_number("d", d, low=1, integer=True)
    check_number("n_classes", n_classes, low=2, high=MAX_CLASSES, integer=True)
    k = int(n_classes)
    check_radius(radius)
    widest = radius * math.sqrt(k / (k - 1))  # N ≥ 1 ⟺ γ ≤ R·√(K/(K−1))
    check_number("margin", margin, low=0, low_open=True, high=widest,
                 why=f"N = ⌊(R/γ)²·K/(K−1)⌋ ≥ 1 at radius = {radius:g}, K = {k}")  # fmt: skip
    rounds = multiclass_rounds(margin, radius, k)
    most = math.isqrt(MAX_CELLS)  # N rounds of d ≥ N values: N² ≤ MAX_CELLS
    if rounds > most:  # N ≤ most ⟺ γ > R·√(K/((K−1)(most + 1)))
        low = radius * math.sqrt(k / ((k - 1) * (most + 1)))
        raise LinclsInputError(
            "margin", f"must be a number in ({low:.6g}, {widest:.6g}], got {margin!r}: the game "
            f"plays N = ⌊(R/γ)²·K/(K−1)⌋ = {rounds:,} rounds of d ≥ N values, and rounds × d "
            f"must stay within {CAP}")  # fmt: skip
    check_number("d", d, low=rounds, high=MAX_CELLS // rounds, integer=True,
                 why=f"the game needs d ≥ N = ⌊(R/γ)²·K/(K−1)⌋ = {rounds} fresh coordinates, "
                 f"and N × d must stay within {CAP}")  # fmt: skip
    check_number("seed", seed, low=0, integer=True)
    params = dict(d=d, n_classes=n_classes, margin=margin, radius=radius, seed=seed)
    return MulticlassOrthogonalGame(
        int(d), k, float(margin), float(radius), int(seed), params=params
    )


def check_multiclass_online(learner, game: str) -> None:
    """Refuse a learner the multiclass games cannot play: not an online multiclass learner."""
    if not is_online_multiclass(learner):
        raise LinclsInputError(
            "learner", f"the {game} needs an online multiclass learner, not "
            f"{type(learner).__name__}")  # fmt: skip


def start_multiclass(learner, template: np.ndarray, n_classes: int) -> None:
    """Initialise ``learner`` as ``fit`` would on data like ``template`` with classes
    0 … K−1, with an empty record, ready for ``present_class``."""
    learner._check_params()
    template, _ = learner._validate_X_y(
        np.ascontiguousarray(template, dtype=np.float64), np.arange(2), reset=True
    )
    learner.classes_ = np.arange(n_classes, dtype=np.int64)
    learner._init_weights(template, None, None)
    learner._reset_record()
    learner._finish_record()


def present_class(learner, x: np.ndarray, label: int) -> bool:
    """Show (x, class ``label``) to ``learner`` through its one-example step; whether it was a
    mistake (the multiclass kernels take class indices, not ±1)."""
    before = learner.mistakes_
    row = np.ascontiguousarray(x, dtype=np.float64)[np.newaxis, :]
    learner._resume_record()
    learner._one_pass(row, np.array([int(label)], dtype=np.int64), np.zeros(1, dtype=np.int64))
    learner._finish_record()
    return learner.mistakes_ > before


def wrong_class(learner, x: np.ndarray, preferred: np.ndarray) -> int:
    """The first class of ``preferred`` the learner errs on for ``x``, asked of a copy of it.

    A classifier errs on every class but the one it predicts, so at most two are asked when
    ``preferred`` holds every class.
    """
    for label in preferred:
        if present_class(copy.deepcopy(learner), x, int(label)):
            return int(label)
    raise LinclsInputError(
        "learner", f"{type(learner).__name__} errs on no class of an example"
    )  # pragma: no cover


def label_order(used: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The classes in the order they are tried: unused ones first, each group shuffled."""
    fresh = np.flatnonzero(~used)
    seen = np.flatnonzero(used)
    return np.concatenate([rng.permutation(fresh), rng.permutation(seen)])


def hidden_matrix(X: np.ndarray, y: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """(the classes used, U with a row per used class): on the coordinate of example k, a on
    y_k's row and −a/(K'−1) on the others, a² = (K'−1)/(N·K') (module docstring), raised by
    ulps until every example's margin is ≥ ``margin`` in floating point."""
    classes, index = np.unique(y, return_inverse=True)
    k, (rounds, d) = classes.shape[0], X.shape
    coords = np.argmax(np.abs(X), axis=1)
    a = math.sqrt((k - 1) / (rounds * k))
    while True:
        U = np.zeros((k, d))
        U[:, coords] = -a / (k - 1)
        U[index, coords] = a
        if multiclass_margins(X, index, U, np.zeros(k)).min() >= margin:
            return classes, U
        a = math.nextafter(a, math.inf)


def play_multiclass_orthogonal(
    learner, game: MulticlassOrthogonalGame, passes: int = 1
) -> tuple[Dataset, np.ndarray]:
    """Play ``game`` against ``learner`` (module docstring): the presented sequence as a dataset
    certified by the hidden U (no offsets), and the presentations of each row. The learner ends
    fitted with its own record; every first-pass round is one of its mistakes."""
    check_multiclass_online(learner, "multiclass orthogonal game")
    check_number("passes", passes, low=1, integer=True)
    rounds, d, radius, k = game.rounds, game.d, game.radius, game.n_classes
    rng = np.random.default_rng(game.seed)
    coords = rng.permutation(d)[:rounds]
    template = np.zeros((2, d))
    template[0, coords[0]] = radius
    start_multiclass(learner, template, k)
    X = np.zeros((rounds, d))
    X[np.arange(rounds), coords] = radius
    y = np.zeros(rounds, dtype=np.int64)
    used = np.zeros(k, dtype=bool)
    for t in range(rounds):
        label = wrong_class(learner, X[t], label_order(used, rng))
        if not present_class(learner, X[t], label):  # pragma: no cover - it said it would err
            raise AssertionError(f"round {t}: {type(learner).__name__} did not err")
        y[t], used[label] = label, True
    if used.sum() < 2:
        raise LinclsInputError(
            "n_classes", f"{type(learner).__name__} predicted the same class on every "
            f"fresh coordinate, so the {rounds} labels are all one class; the game needs "
            "n_classes ≥ 3 for it")  # fmt: skip
    replay(learner, X, y, int(passes) - 1)
    finish(learner, rounds)
    learner.converged_ = passes > 1 and learner.converged_  # a replayed pass without an update
    classes, U = hidden_matrix(X, y, game.margin)
    index = np.searchsorted(classes, y)
    measured = float(multiclass_margins(X, index, U, np.zeros(classes.shape[0])).min())
    if measured < game.margin or max_norm(X) > radius:  # pragma: no cover - ruled out
        raise AssertionError("a multiclass orthogonal game's example breaks margin γ or radius R")
    dataset = Dataset(
        name=game.name, X=X, y=y, X_test=np.zeros((0, d)), y_test=np.zeros(0, dtype=np.int64),
        margin=measured, radius=max_norm(X), params=dict(game.params), U=U,
    )  # fmt: skip
    return dataset, np.full(rounds, learner.n_steps_ // rounds, dtype=np.int64)
