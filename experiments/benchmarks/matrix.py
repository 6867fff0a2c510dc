"""The full-matrix learners against their diagonal variants, at d = 100.

SOP (the second-order perceptron), AROW, CW, SCW-I and SCW-II keep a (d + 1)² matrix (the
inverse correlation matrix, the covariance Σ): a row costs O(d²) where the diagonal variant's
costs O(d). Each case times an epoch of the full learner and of the same learner with
``diagonal=True`` on the same dense data (Gaussian rows, 10% of labels flipped, so updates keep
coming): the epoch is the difference of a 5-pass and a 1-pass fit divided by 4, as in the
perceptron section, in CPU time of this thread. The diagonal variant's epoch is put in the
``floor`` column, so ``ours/floor`` is full / diagonal, the price of the full matrix; the note
says it again and the share of rows that updated.
"""

from __future__ import annotations

from collections.abc import Callable

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.perceptron import best_cpu_time, dense_problem, update_share
from lincls.learners.arow import AROW
from lincls.learners.confidence_weighted import ConfidenceWeighted
from lincls.learners.second_order import SecondOrderPerceptron

D = 100  # the dimension

LEARNERS: list[tuple[str, Callable[..., object]]] = [
    ("SOP", lambda **kw: SecondOrderPerceptron(**kw)),
    ("AROW", lambda **kw: AROW(**kw)),
    ("CW", lambda **kw: ConfidenceWeighted(variant="cw", **kw)),
    ("SCW-I", lambda **kw: ConfidenceWeighted(variant="scw1", **kw)),
    ("SCW-II", lambda **kw: ConfidenceWeighted(variant="scw2", **kw)),
]


def epoch(make: Callable[..., object], diagonal: bool, X, y, repeat: int) -> float:
    """Seconds (CPU) of one epoch: (a 5-pass fit − a 1-pass fit) / 4."""

    def fit(passes: int):
        return make(diagonal=diagonal, max_passes=passes, stop_when_converged=False).fit(X, y)

    one = best_cpu_time(lambda: fit(1), repeat=repeat)
    five = best_cpu_time(lambda: fit(5), repeat=repeat)
    return (five - one) / 4


def run(quick: bool = False) -> list[Row]:
    """An epoch of each full-matrix learner and of its diagonal variant, dense n × 100."""
    n = 2_000 if quick else 20_000
    repeat = 2 if quick else 3
    X, y = dense_problem(n, D)
    rows = []
    for name, make in LEARNERS:
        full = epoch(make, False, X, y, repeat)
        diagonal = epoch(make, True, X, y, repeat)
        share = update_share(
            lambda k, make=make: make(max_passes=k, stop_when_converged=False).fit(X, y), n
        )
        rows.append(
            Row(
                "matrix",
                f"epoch, {name} full vs diagonal, dense {n // 1000}k×{D}",
                full,
                floor=diagonal,
                note=f"CPU time; floor = diagonal=true; full/diagonal = {full / diagonal:.1f}×; "
                f"{share:.0%} of rows update (full)",
            )
        )
    return rows
