"""Seed 002's learners against scikit-learn: Adaline's epoch and the least-squares solve.

Adaline (Widrow–Hoff LMS, constant α) against ``SGDClassifier(loss="squared_error",
learning_rate="constant", penalty=None)``, which does the same arithmetic; as in the other online
sections, an epoch is the difference of a 5-pass and a 1-pass fit, divided by 4. The CSR run uses
scikit-learn's 0.01 bias decay so both do the same work. α = 10⁻³ keeps LMS stable on rows of
‖x‖² ≈ 100. LeastSquaresClassifier against RidgeClassifier(alpha=0) with its default
``solver="auto"``, which on dense input without sample weights resolves to Cholesky on the
centred normal equations (the row notes what each side used): on well-conditioned data ours
takes the normal equations too (target 0.8×); on a rank-deficient design (a column repeated)
ours takes the SVD for the minimum-norm answer, while RidgeClassifier's Cholesky goes on with a
warning that the matrix is ill-conditioned (shown for scale, no target).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import RidgeClassifier, SGDClassifier

from lincls.experiments.bench import Row, best_time
from lincls.experiments.benchmarks.perceptron import csr_problem, dense_problem
from lincls.learners import Adaline, LeastSquaresClassifier

LMS_RATE = 1e-3


def _epoch(make: Callable[[int], object], X, y, repeat: int) -> tuple[float, float]:
    """(seconds per epoch, seconds of a 1-pass fit) of ``make(passes).fit(X, y)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = best_time(lambda: make(1).fit(X, y), repeat=repeat)
        five = best_time(lambda: make(5).fit(X, y), repeat=repeat)
    return (five - one) / 4, one


def _adaline(sparse: bool) -> tuple[Callable, Callable]:
    decay = 0.01 if sparse else 1.0

    def ours(k):
        return Adaline(lr=LMS_RATE, max_passes=k, intercept_decay=decay)

    def peer(k):
        return SGDClassifier(
            loss="squared_error",
            learning_rate="constant",
            eta0=LMS_RATE,
            penalty=None,
            shuffle=False,
            tol=None,
            max_iter=k,
        )

    return ours, peer


def run(quick: bool = False) -> list[Row]:
    """Adaline epochs (dense with the 1.5× target, CSR) and the least-squares fit."""
    scale = 20 if quick else 1
    repeat = 2 if quick else 5
    dense = dense_problem(200_000 // scale, 100)
    csr = csr_problem(200_000 // scale, 100_000, 50)
    cases = [
        ("Adaline, dense 200k×100", dense, _adaline(False), 1.5),
        ("Adaline, CSR 200k×100k, 50 nnz/row", csr, _adaline(True), None),
    ]
    rows = []
    peer_name = "SGD squared_error"
    for case, (X, y), (ours, peer), target in cases:
        ours_epoch, ours_fit = _epoch(ours, X, y, repeat)
        peer_epoch, peer_fit = _epoch(peer, X, y, repeat)
        rows.append(Row("batch", f"epoch, {case}", ours_epoch, peer_epoch, peer_name, target))
        rows.append(
            Row(
                "batch",
                f"1-pass fit, {case}",
                ours_fit,
                peer_fit,
                peer_name,
                note="includes input validation",
            )
        )
    X, y = dense
    repeated = np.c_[X[:, :99], X[:, :1]]  # 100 columns, rank 99 (+ the intercept)
    least_squares = [
        ("dense 200k×100", X, 0.8),
        ("rank-deficient dense 200k×100", repeated, None),
    ]
    for case, X, target in least_squares:
        rows.append(_least_squares_row(case, X, y, target, repeat))
    return rows


def _least_squares_row(case: str, X, y, target: float | None, repeat: int) -> Row:
    """LeastSquaresClassifier() against RidgeClassifier(alpha=0) on (X, y), best of ``repeat``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the peer's ill-conditioned warning
        ours = best_time(lambda: LeastSquaresClassifier().fit(X, y), repeat=repeat)
        peer = best_time(lambda: RidgeClassifier(alpha=0.0).fit(X, y), repeat=repeat)
        model = LeastSquaresClassifier().fit(X, y)
    return Row(
        "batch",
        f"least-squares fit, {case}",
        ours,
        peer,
        "RidgeClassifier(alpha=0)",
        target,
        note=f"ours: {model.solver_}, rank {model.rank_}; peer: solver auto (Cholesky)",
    )
