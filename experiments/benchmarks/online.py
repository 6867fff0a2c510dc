"""Online learners against scikit-learn's SGD loop: the averaged perceptron and PA-I.

AveragedPerceptron against ``SGDClassifier(loss="perceptron", average=True)`` (dense and CSR; the
CSR run uses scikit-learn's 0.01 bias decay so both do the same work) and PassiveAggressive PA-I
against ``SGDClassifier(loss="hinge", learning_rate="pa1")`` with scikit-learn's bias rule. As in
the perceptron section, an epoch is the difference of a 5-pass and a 1-pass fit, divided by 4,
and each epoch row notes the share of rows that updated in those passes. Times are CPU times of
this thread, as in the perceptron section (its docstring says why).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.perceptron import (
    best_cpu_time,
    csr_problem,
    dense_problem,
    update_share,
)
from lincls.learners import AveragedPerceptron, PassiveAggressive


def _epoch(make: Callable[[int], object], X, y, repeat: int) -> tuple[float, float]:
    """(seconds per epoch, seconds of a 1-pass fit) of ``make(passes).fit(X, y)``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = best_cpu_time(lambda: make(1).fit(X, y), repeat=repeat)
        five = best_cpu_time(lambda: make(5).fit(X, y), repeat=repeat)
    return (five - one) / 4, one


def _averaged(sparse: bool) -> tuple[Callable, Callable]:
    decay = 0.01 if sparse else 1.0

    def ours(k):
        return AveragedPerceptron(max_passes=k, intercept_decay=decay)

    def peer(k):
        return SGDClassifier(
            loss="perceptron",
            learning_rate="constant",
            eta0=1,
            penalty=None,
            average=True,
            shuffle=False,
            tol=None,
            max_iter=k,
        )

    return ours, peer


def _pa1() -> tuple[Callable, Callable]:
    def ours(k):
        return PassiveAggressive(
            variant="pa1", C=1.0, bias="sklearn", max_passes=k, stop_when_converged=False
        )

    def peer(k):
        return SGDClassifier(
            loss="hinge",
            penalty=None,
            learning_rate="pa1",
            eta0=1.0,
            shuffle=False,
            tol=None,
            max_iter=k,
        )

    return ours, peer


def run(quick: bool = False) -> list[Row]:
    """Averaged perceptron (dense, CSR) and PA-I (dense) against scikit-learn."""
    scale = 20 if quick else 1
    repeat = 2 if quick else 5
    dense = dense_problem(200_000 // scale, 100)
    csr = csr_problem(200_000 // scale, 100_000, 50)
    cases = [
        ("averaged perceptron, dense 200k×100", dense, _averaged(False), 3.0, "SGD average=True"),
        ("averaged perceptron, CSR 200k×100k, 50 nnz/row", csr, _averaged(True), 1.5,
         "SGD average=True"),
        ("PA-I, dense 200k×100", dense, _pa1(), 1.5, "SGD pa1"),
    ]  # fmt: skip
    rows = []
    for case, (X, y), (ours, peer), target, peer_name in cases:
        ours_epoch, ours_fit = _epoch(ours, X, y, repeat)
        peer_epoch, peer_fit = _epoch(peer, X, y, repeat)
        share = update_share(lambda k, ours=ours, X=X, y=y: ours(k).fit(X, y), X.shape[0])
        rows.append(
            Row(
                "online",
                f"epoch, {case}",
                ours_epoch,
                peer_epoch,
                peer_name,
                target,
                note=f"CPU time; {share:.0%} of rows update",
            )
        )
        rows.append(
            Row(
                "online",
                f"1-pass fit, {case}",
                ours_fit,
                peer_fit,
                peer_name,
                note="CPU time; includes input validation",
            )
        )
    return rows
