"""What every search shares: the (learner, bound) pair searched, the score of a sequence, and the
instance found, written as a CSV that ``dataset=csv`` replays.

A sequence is scored by the code a run uses (``lincls.evaluation.fit_and_evaluate``): the learner
fitted on the sequence as fixed data in the fixed order for ``passes`` passes, its certificates
(the maximum-margin SVMs and each bound's best comparator, as a run with the default
``certificates`` settings has them) and the registered bound. The ratio is mistakes / bound as the
run logs it (``bound_ratio.<name>``): none where the bound does not apply (e.g. the labels left
the theorem's class: no separator) or is vacuous. So whatever a search finds is certified as the
theorem's own class, by the same numbers a replay of the CSV logs.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone

from lincls.data import Dataset
from lincls.evaluation import RunPlan, fit_and_evaluate

LABEL = "label"
NO_RATIO = -1.0  # the score of a sequence whose bound is missing or vacuous: below any ratio


@dataclass(frozen=True)
class Target:
    """A learner (an unfitted estimator, cloned for every fit) and the bound searched against.

    ``passes``: the passes a run makes over the sequence (so a sequence bound, vacuous at the
    presentations, can be non-vacuous). ``overrides``: the ``learner.*`` overrides that rebuild
    the learner from its config (for the replay command). ``max_radius``: the theorem's largest
    radius (the Forgetron's K(x, x) ≤ 1), None for none.
    """

    learner: Any
    bound: str
    passes: int = 3
    overrides: tuple[str, ...] = ()
    max_radius: float | None = None


@dataclass
class Scored:
    """A sequence's run: its mistakes, the bound's value and ratio (None: missing or vacuous)."""

    mistakes: float
    bound: float | None
    ratio: float | None
    metrics: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def key(self) -> tuple[float, float]:
        """What a search maximises: the ratio, then the mistakes (a longer tight instance)."""
        return (NO_RATIO if self.ratio is None else self.ratio, self.mistakes)


@dataclass
class Found:
    """The best instance a search found, and what it cost."""

    target: Target
    method: str
    X: np.ndarray
    y: np.ndarray
    scored: Scored
    seconds: float
    evaluations: int
    u: np.ndarray | None = None  # a certificate the instance was built with (Winnow's)
    b: float = 0.0
    U: np.ndarray | None = None  # a multiclass instance's certificate (its SVM's matrix)

    @property
    def ratio(self) -> float | None:
        """The instance's mistakes / bound, as a run logs it."""
        return self.scored.ratio


def out_of_time(deadline: float | None, share: float, best: Found | None) -> bool:
    """Whether a search is past ``deadline`` (None: it has none, and runs all its rounds); while
    nothing it scored has a ratio, past it by another ``share`` (the radius's part of the
    budget): a short budget on a busy machine, whose first runs are slow, still ends on an
    instance the run can score."""
    if deadline is None:
        return False
    late = time.perf_counter() - deadline
    return late > 0 if best is not None and best.ratio is not None else late > share


def dataset_of(X: np.ndarray, y: np.ndarray, u=None, b: float = 0.0) -> Dataset:
    """The sequence as a dataset without a test set: plain (certified by the run's SVMs), or
    certified by (u, b) when the search built the instance with one."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    empty = np.zeros((0, X.shape[1]))
    test_y = np.zeros(0, dtype=np.int64)
    if u is None:
        return Dataset.plain(name="search", X=X, y=y, X_test=empty, y_test=test_y, params={})
    return Dataset.certified(
        name="search", X=X, y=y, X_test=empty, y_test=test_y, u=u, b=b, params={}
    )


def score_dataset(target: Target, dataset: Dataset) -> Scored:
    """The run of ``target``'s learner on ``dataset`` (fixed order, ``passes``) and its bound."""
    learner = clone(target.learner)
    learner.set_params(**{k: v for k, v in (("max_passes", target.passes),) if hasattr(learner, k)})
    try:
        outcome = fit_and_evaluate(learner, dataset, RunPlan(svm=True, best=True))
    except (ValueError, FloatingPointError, np.linalg.LinAlgError):
        return Scored(0.0, None, None)  # a sequence the learner or a solver cannot take
    metrics = outcome.metrics
    return Scored(
        float(metrics.get("mistakes", 0.0)),
        metrics.get(f"bound.{target.bound}"),
        metrics.get(f"bound_ratio.{target.bound}"),
        metrics,
    )


def score(target: Target, X: np.ndarray, y: np.ndarray, u=None, b: float = 0.0) -> Scored:
    """``score_dataset`` of the sequence (X, y)."""
    if X.shape[0] == 0 or not np.all(np.isfinite(X)):
        return Scored(0.0, None, None)
    return score_dataset(target, dataset_of(X, y, u, b))


def to_csv(X: np.ndarray, y: np.ndarray) -> str:
    """The sequence as CSV text: columns x0 … x{d−1} and ``label``, every float written as its
    shortest repr, which reads back to the same double (the replay is bit for bit)."""
    out = io.StringIO()
    out.write(",".join([*(f"x{j}" for j in range(X.shape[1])), LABEL]) + "\n")
    for row, label in zip(X, y, strict=True):
        out.write(",".join([*(repr(float(v)) for v in row), str(int(label))]) + "\n")
    return out.getvalue()


def replay_overrides(target: Target, path: str) -> list[str]:
    """The ``lincls run`` overrides that replay the instance saved at ``path``."""
    name = target.learner.get_params().get("name") or _learner_name(target.learner)
    return [
        f"learner={name}",
        *target.overrides,
        "dataset=csv",
        f"dataset.path={path}",
        "dataset.test_fraction=0",
        f"passes={target.passes}",
        "order=fixed",
    ]


def _learner_name(learner) -> str:
    from lincls.registry import LEARNERS

    return next(k for k, cls in LEARNERS.items() if type(learner) is cls)
