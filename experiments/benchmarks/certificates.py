"""The hard-margin certificates: one interior point (Clarabel) against libsvm with a huge C.

``lincls.geometry.certificates.max_margin_separator`` solves min ‖w‖² s.t. y(w·x + b) ≥ 1 with
``lincls.geometry.comparators.hard_margin``, the program and solver of the best comparators. The
peer is scikit-learn's libsvm ``SVC`` (linear kernel, C above ‖w*‖² so no box binds, tolerance 1e-5)
on a working set of 2,000 rows, after a linear program (HiGHS' interior point) has shown the data
separable and set C; the homogeneous separator is the offset one of {(x, y), (−x, −y)}. Cases:

- the perceptron game's points at γ = 0.02, d = 2 (~1,250 nearly collinear examples, played
  against the perceptron without a bias: its separator through the origin, and with an offset
  as the perceptron with a bias feature certifies the same points). Target: ≤ 0.5 s;
- separable data of n = 5,000 in d = 20 (margin 0.01), with an offset and through the origin;
- deciding separability of noisy data (n = 5,000, d = 10, 1% of labels flipped): the hard-margin
  program alone (infeasible), against the linear program the certificate used to run first.

The note gives both margins (re-measured on the data with the unit u), our duality gap and what
the LP alone costs. The peer runs once (minutes on the game's points).
"""

from __future__ import annotations

import time

import numpy as np

from lincls.data import make_noisy, make_separable
from lincls.experiments.bench import Row, best_time
from lincls.games.perceptron import make_perceptron_game, play
from lincls.geometry import certify
from lincls.geometry.certificates import max_margin_separator
from lincls.learners import Perceptron

TARGET_SECONDS = 0.5  # the game's points at γ = 0.02, d = 2
PEER_WORKING_SET = 2000
PEER_TOLERANCE = 1e-5


def _lp_direction(X, y: np.ndarray, homogeneous: bool) -> np.ndarray | None:
    """(w, b) with y(w·x + b) ≥ 1 from a linear program (HiGHS' interior point), or None."""
    from scipy.optimize import linprog

    n = X.shape[0]
    A = X if homogeneous else np.hstack([X, np.ones((n, 1))])
    result = linprog(np.zeros(A.shape[1]), A_ub=-(y[:, None] * A), b_ub=-np.ones(n),
                     bounds=[(None, None)] * A.shape[1], method="highs-ipm")  # fmt: skip
    if result.status != 0:
        return None
    w = np.asarray(result.x, dtype=np.float64)
    return np.append(w, 0.0) if homogeneous else w


def _libsvm(X, y: np.ndarray, homogeneous: bool) -> tuple[np.ndarray, float]:
    """The peer: the LP, then libsvm's SVC with C = 2‖w_LP‖² + 1 on a growing working set."""
    from sklearn.svm import SVC

    direction = _lp_direction(X, y, homogeneous)
    C = 2.0 * float(direction[:-1] @ direction[:-1]) + 1.0
    if homogeneous:
        X, y = np.vstack([X, -X]), np.concatenate([y, -y])
        direction = np.append(direction[:-1], 0.0)
    lp_margins = y * (X @ direction[:-1] + direction[-1])
    active = np.zeros(X.shape[0], dtype=bool)
    active[np.argsort(lp_margins, kind="stable")[:PEER_WORKING_SET]] = True
    while True:
        svm = SVC(kernel="linear", C=C, tol=PEER_TOLERANCE).fit(X[active], y[active])
        w, b = svm.coef_.ravel(), 0.0 if homogeneous else float(svm.intercept_[0])
        functional = y * (X @ w + b)
        violated = np.flatnonzero(~active & (functional < 1.0 - 10 * PEER_TOLERANCE))
        if violated.shape[0] == 0:
            return w, b
        order = np.argsort(functional[violated], kind="stable")
        active[violated[order[:PEER_WORKING_SET]]] = True


def _game_points(margin: float) -> tuple[np.ndarray, np.ndarray]:
    learner = Perceptron(bias="none", max_passes=20)
    game = make_perceptron_game(d=2, margin=margin, radius=1.0, strategy="auto", seed=0)
    dataset, _ = play(game, learner, 20)
    return dataset.X, np.where(dataset.y == learner.classes_[1], 1.0, -1.0)


def _row(case: str, X, y: np.ndarray, homogeneous: bool, quick: bool, target: bool) -> Row:
    seconds = best_time(lambda: max_margin_separator(X, y, homogeneous), repeat=3 if quick else 5)
    w, b, gap = max_margin_separator(X, y, homogeneous)
    ours = certify(X, y, w, b, source="svm").margin
    start = time.perf_counter()
    peer_w, peer_b = _libsvm(X, y, homogeneous)
    peer = time.perf_counter() - start
    theirs = certify(X, y, peer_w, peer_b, source="svm").margin
    lp = best_time(lambda: _lp_direction(X, y, homogeneous), repeat=1, warmup=0)
    verdict = ""
    if target:
        met = "met" if seconds <= TARGET_SECONDS else "MISSED"
        verdict = f"target ≤ {TARGET_SECONDS:g} s: {met}; "
    return Row("certificates", case, seconds, peer, "libsvm SVC, huge C (LP first)",
               note=f"{verdict}n = {X.shape[0]}; margin {ours:.10g} (gap {gap:.1e}) against "
                    f"{theirs:.10g}, {(ours - theirs) / ours:+.1e} relative; the LP alone "
                    f"{lp * 1e3:.0f} ms")  # fmt: skip


def run(quick: bool = False) -> list[Row]:
    """The game's points (quick: γ = 0.05, 200 points), n = 5,000 (quick: 1,000) in d = 20,
    and the separability decision on noisy data."""
    rows = []
    gamma = 0.05 if quick else 0.02
    X, y = _game_points(gamma)
    for homogeneous in (True, False):
        kind = "through the origin" if homogeneous else "with an offset"
        rows.append(_row(f"game's points, γ = {gamma:g}, d = 2, {kind}", X, y, homogeneous,
                         quick, target=gamma == 0.02))  # fmt: skip
    n = 1_000 if quick else 5_000
    for homogeneous in (True, False):
        data = make_separable(n, 20, 0.01, 1.0, offset=0.0 if homogeneous else 0.2, seed=0,
                              n_test=0)  # fmt: skip
        y = np.where(data.y > 0, 1.0, -1.0)
        kind = "through the origin" if homogeneous else "with an offset"
        rows.append(_row(f"separable, n = {n}, d = 20, γ = 0.01, {kind}", data.X, y,
                         homogeneous, quick, target=False))  # fmt: skip
    noisy = make_noisy(n, 10, 0.1, 1.0, flip=0.01, seed=2)
    y = np.where(noisy.y > 0, 1.0, -1.0)

    def decide():
        try:
            max_margin_separator(noisy.X, y, homogeneous=False)
        except ValueError:
            return False
        return True

    seconds = best_time(decide, repeat=3)
    lp = best_time(lambda: _lp_direction(noisy.X, y, homogeneous=False), repeat=3)
    separable, lp_says = decide(), _lp_direction(noisy.X, y, homogeneous=False) is not None
    rows.append(
        Row("certificates", f"not separable (noisy, n = {n}, d = 10, 1% flipped): decide",
            seconds, lp, "linear program (HiGHS ipm)",
            note=f"the hard-margin program alone; separable: {separable}, LP: {lp_says}. On "
                 "separable data the LP is an extra cost on top of the program")
    )  # fmt: skip
    return rows
