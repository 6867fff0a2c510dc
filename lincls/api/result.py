"""``lincls.run``: one config, measured, as a ``RunResult`` (logged only when given a store).

>>> import lincls
>>> result = lincls.run(dataset={"n": 100, "n_test": 50})
>>> result
RunResult(perceptron on separable: 20 mistakes, tightest bound freund_schapire = 73.33, ratio 0.27)
>>> result.bounds.round(2)
                    value  ratio        family  vacuous certificate
bound
freund_schapire     73.33   0.27      a_priori    False        best
novikoff_bias       91.03   0.22      a_priori    False        best
mohri_rostamizadeh  29.34   0.68  a_posteriori    False        best
>>> result.curves["cumulative_mistakes"].tail(2)
    step  value
30    98   20.0
31   200   20.0
>>> result.config["dataset"]["n"], result.run_id
(100, None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import lincls.search  # noqa: F401  (registers dataset=search, as lincls run has it)
from lincls.api.compose import compose_run, run_overrides
from lincls.config.run import RunConfig
from lincls.paths import store_uri

CURVE = "cumulative_mistakes"
TIGHTEST = ("tightest", "tightest_a_posteriori")  # ``bound.<these>``: the tightest's value


@dataclass(frozen=True)
class RunResult:
    """What one run measured, with the config it ran.

    ``mistakes``: the online mistakes (the mean over orderings when there are several);
    ``bounds``: one row per mistake bound that applies (index: its name; columns ``value``,
    ``ratio`` = mistakes / bound at the ordering closest to breaking it, NaN for a vacuous bound,
    ``family`` ``a_priori`` or ``a_posteriori``, ``vacuous``, ``certificate``: the comparator it
    used), a priori first, tightest first; ``tightest``: the tightest a priori bound's name (None:
    no bound applies) and ``tightest_value`` its value; ``curves``: each logged curve by name as a
    frame of ``step`` and ``value`` (``cumulative_mistakes``: mistakes by examples presented);
    ``metrics`` and ``tags``: everything the run logs; ``run_id`` and ``store``: where it was
    logged (None: not logged).
    """

    mistakes: float | None
    bounds: pd.DataFrame
    tightest: str | None
    tightest_value: float | None
    curves: Mapping[str, pd.DataFrame]
    config: Mapping[str, Any]
    metrics: Mapping[str, float] = field(repr=False)
    tags: Mapping[str, str] = field(repr=False)
    run_id: str | None = None
    store: str | None = None

    def __repr__(self) -> str:
        what = f"{self.config['learner']['name']} on {self.config['dataset']['name']}"
        mistakes = "no mistake count" if self.mistakes is None else f"{self.mistakes:g} mistakes"
        if self.tightest is None:
            bound = "no mistake bound"
        else:
            ratio = self.mistakes / self.tightest_value if self.mistakes is not None else math.nan
            bound = f"tightest bound {self.tightest} = {self.tightest_value:.4g}, ratio {ratio:.2g}"
        run = f", run {self.run_id}" if self.run_id else ""
        return f"RunResult({what}: {mistakes}, {bound}{run})"

    def plot(self, ax: Any = None) -> Any:
        """Cumulative mistakes by examples presented, under the tightest a priori bound (a
        horizontal line): the matplotlib Axes drawn on (``ax``, else a new figure's)."""
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        curve = self.curves.get(CURVE)
        if curve is None or curve.empty:
            ax.text(0.5, 0.5, "no cumulative mistakes: not an online learner", ha="center",
                    va="center", transform=ax.transAxes)  # fmt: skip
            return ax
        ax.step(curve["step"], curve["value"], where="post", label="cumulative mistakes")
        if self.tightest is not None:
            ax.axhline(self.tightest_value, color="C3", ls="--", lw=1,
                       label=f"{self.tightest} bound ({self.tightest_value:.4g})")  # fmt: skip
        ax.set(xlabel="examples presented", ylabel="mistakes", ylim=(0, None))
        ax.set_title(f"{self.config['learner']['name']} on {self.config['dataset']['name']}")
        ax.legend(fontsize="small", loc="lower right")
        return ax


def bounds_frame(metrics: Mapping[str, float], tags: Mapping[str, str]) -> pd.DataFrame:
    """Every mistake bound a run logged (``bound.<name>``): value, ratio, family, vacuity and
    certificate, as ``RunResult.bounds`` has them: a priori first, the vacuous last in each
    family, the tightest (smallest value) first."""
    from lincls.bounds import family_of
    from lincls.bounds._registry import A_PRIORI

    vacuous = {n for n in tags.get("bounds.vacuous", "").split(", ") if n}
    rows = []
    for key, value in metrics.items():
        if key.startswith("bound.") and (name := key[len("bound.") :]) not in TIGHTEST:
            value, family = float(value), family_of(name)
            later, empty = family != A_PRIORI, name in vacuous
            # sorted as pandas sorts (later, vacuous, value), stable, a NaN value last
            rows.append(((later, empty, value != value, value), name, value,
                         float(metrics.get(f"bound_ratio.{name}", math.nan)), family, empty,
                         tags.get(f"bound.{name}.certificate")))  # fmt: skip
    columns = ["value", "ratio", "family", "vacuous", "certificate"]
    if not rows:  # no bound: every column of no type, as a frame of no rows has them
        return pd.DataFrame([], columns=["bound", *columns]).set_index("bound")
    rows.sort(key=lambda row: row[0])
    names, *values = list(zip(*rows, strict=True))[1:]
    # built from columns: ~10× faster than from rows then sorted and indexed, the same frame
    return pd.DataFrame(
        {column: list(value) for column, value in zip(columns, values, strict=True)},
        index=pd.Index(list(names), name="bound"),
    )


def curve_frames(curves: Mapping[str, Sequence[tuple[int, float]]]) -> dict[str, pd.DataFrame]:
    """Each (step, value) curve as a frame of ``step`` (int64) and ``value`` (float64)."""
    out = {}
    for name, points in curves.items():
        steps = np.array([int(s) for s, _ in points], dtype=np.int64)
        values = np.array([float(v) for _, v in points], dtype=np.float64)
        # the arrays are the frame's own: not copied again (half of a small frame's cost)
        out[name] = pd.DataFrame({"step": steps, "value": values}, copy=False)
    return out


def result_of(config: Mapping[str, Any], outcome: Any, store: str | None) -> RunResult:
    """The ``RunResult`` of a measured (or executed) run's ``RunOutcome``."""
    metrics, tags = dict(outcome.metrics), dict(outcome.tags)
    tightest = tags.get("bound.tightest")
    mistakes = metrics.get("mistakes")
    return RunResult(
        mistakes=None if mistakes is None else float(mistakes),
        bounds=bounds_frame(metrics, tags),
        tightest=tightest,
        tightest_value=metrics.get("bound.tightest") if tightest else None,
        curves=curve_frames(outcome.curves),
        config=config,
        metrics=metrics,
        tags=tags,
        run_id=outcome.run_id,
        store=store,
    )


def run(
    learner: str | Mapping[str, Any] = "perceptron",
    dataset: str | Mapping[str, Any] = "separable",
    *,
    store: str | Path | None = None,
    overrides: Sequence[str] = (),
    **keywords: Any,
) -> RunResult:
    """Run one config, as ``lincls run`` does, and return what it measured.

    ``learner`` and ``dataset``: an option's name (``"winnow"``) or a dict of its keys
    (``{"lr": 0.5}``; ``"name"`` picks the option); ``keywords``: other config keys (``passes=5``,
    ``seed=1``, ``order="shuffled"``, ``certificates={"svm": False}``, ``experiment=...``);
    ``overrides``: Hydra's override lines (``["dataset.n=200"]``), applied last. Bad input raises
    ``LinclsInputError`` naming the field, before anything runs.

    Without ``store`` nothing is written: the run is measured in this process, its SVM
    certificates not cached (unless ``certificates={"cache_dir": ...}``). With ``store`` (a
    tracking URI, or a path to a ``.db`` file: SQLite) the run is executed and logged as
    ``lincls run`` logs it, and the result carries its ``run_id``.

    >>> lincls.run(dataset={"n": 100, "n_test": 50}, learner={"name": "margin_perceptron"}).tightest
    'margin_perceptron'
    >>> lincls.run(passes=0)
    Traceback (most recent call last):
    ...
    lincls.errors.LinclsInputError: passes: must be an integer in [1, inf), got 0
    """
    lines = run_overrides(learner, dataset, keywords, overrides)
    if store is None:
        from lincls.evaluation import fit_and_evaluate, plan_of, prepare

        config = RunConfig.from_container(compose_run(lines))
        learner_model, data = prepare(config)
        plan = plan_of(config)
        if config.certificates.cache_dir is None:
            plan = replace(plan, cache_dir=None)  # no store, no cache beside it: nothing written
        return result_of(config.raw, fit_and_evaluate(learner_model, data, plan), None)
    from lincls.runner import execute

    uri = store_uri(store)
    config = RunConfig.from_container(compose_run([*lines, f"tracking.uri='{uri}'"]))
    return result_of(config.raw, execute(config), uri)
