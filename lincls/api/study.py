"""``lincls.studies`` and ``lincls.study``: a store's studies, and one study's runs, curves and
the report's figures (drawn on a matplotlib Axes instead of into a PNG).

A study is what ``lincls report`` covers: by name, its FINISHED runs over every sweep, one per
config (the newest); by a sweep's parent run id, that sweep's. ``Study.runs()`` is its table
with typed params under plain names (``lincls.api.columns`` states the rule).

The examples read ``store``, a SQLite file, and ``demo``, the study ``lincls.sweep``'s example
made in it (a 2 × 2 grid of ``dataset.n`` and ``learner.lr``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lincls.api.columns import typed_runs
from lincls.errors import LinclsInputError
from lincls.experiments.report import collect, plots
from lincls.paths import store_uri
from lincls.tracking import reader
from lincls.tracking.store import check_store_file

EXPERIMENT = "lincls"
STUDY, ROLE, PARENT = "tags.lincls.study", "tags.lincls.role", "tags.mlflow.parentRunId"
_DRAWING = threading.Lock()  # the report's module is redirected while one figure is drawn


def _open(store: str | Path | None, experiment: str) -> tuple[str, Any, str]:
    """(uri, client, experiment id) of an existing store; never makes one."""
    uri = store_uri(store)
    check_store_file(uri, "store")
    client, experiment_id = collect.open_store(uri, experiment)
    return uri, client, experiment_id


def _studies(client: Any, experiment_id: str) -> pd.DataFrame:
    """One row per sweep (its parent run) and one per study's runs made outside any sweep."""
    columns = ["study", "parent_run_id", "runs", "finished", "started", "status"]
    engine = reader.engine_for(str(getattr(client, "tracking_uri", "") or ""))
    if engine is None:
        rows = _studies_read(client, experiment_id)
    else:
        try:
            sweeps, counts, alone = reader.study_rows(engine, experiment_id)
        finally:
            engine.dispose()
        counted = {parent: (runs, finished) for parent, runs, finished in counts}
        rows = [(name, run_id, *counted.get(run_id, (0, 0)), started, status)
                for run_id, name, started, status in sweeps]  # fmt: skip
        rows += [(name or None, None, runs, finished, started, None)
                 for name, runs, finished, started in alone]  # fmt: skip
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(rows, columns=columns)
    frame["started"] = pd.to_datetime(frame["started"], unit="ms", utc=True)
    frame = frame.sort_values("started", ascending=False, kind="stable")
    return frame.reset_index(drop=True)


def _is_study(client: Any, experiment_id: str, name: str) -> bool:
    """Whether ``name`` is a study's name or a sweep's parent run id, found without listing the
    studies where the store is read with SQL (False: list them, to say which there are)."""
    engine = reader.engine_for(str(getattr(client, "tracking_uri", "") or ""))
    if engine is None:
        return False
    try:
        return reader.is_study(engine, experiment_id, name)
    finally:
        engine.dispose()


def _studies_read(client: Any, experiment_id: str) -> list[tuple]:
    """``_studies``' rows from the runs themselves (a store the reader does not read with SQL)."""
    runs = collect.read_runs(
        client, experiment_id, {}, tag_keys=("lincls.study", "lincls.role", "mlflow.parentRunId")
    )
    if runs.empty:
        return []
    study, role = collect.column(runs, STUDY), collect.column(runs, ROLE)
    parent = collect.column(runs, PARENT)
    children = runs[role != "sweep"]
    rows = []
    for _, sweep in runs[role == "sweep"].iterrows():
        mine = children[parent[children.index] == sweep["run_id"]]
        rows.append((sweep[STUDY], sweep["run_id"], len(mine),
                     int((mine["status"] == "FINISHED").sum()), sweep["start_time"],
                     sweep["status"]))  # fmt: skip
    alone = children[parent[children.index].isna()]
    for name, mine in alone.groupby(study[alone.index].fillna(""), sort=False):
        rows.append((name or None, None, len(mine), int((mine["status"] == "FINISHED").sum()),
                     mine["start_time"].min(), None))  # fmt: skip
    return rows


def studies(store: str | Path | None = None, experiment: str = EXPERIMENT) -> pd.DataFrame:
    """The studies in ``store``: one row per sweep (``study``, ``parent_run_id``, ``runs``: its
    runs, ``finished``: those FINISHED, ``started``, the sweep's ``status``) and one per study's
    runs made outside a sweep (``parent_run_id`` None), newest first.

    >>> lincls.studies(store)[["study", "runs", "finished", "status"]]
      study  runs  finished    status
    0  demo     4         4  FINISHED
    """
    _, client, experiment_id = _open(store, experiment)
    return _studies(client, experiment_id)


def study(
    name_or_parent_id: str | None = None,
    store: str | Path | None = None,
    experiment: str = EXPERIMENT,
) -> Study:
    """The study ``name_or_parent_id`` (a study's name, or a sweep's parent run id; None: the
    latest sweep) of ``store``; an unknown one raises ``LinclsInputError`` naming the studies
    there are.

    >>> lincls.study("nope", store)
    Traceback (most recent call last):
    ...
    lincls.errors.LinclsInputError: study: no study and no sweep with parent run 'nope'; ...
    """
    uri, client, experiment_id = _open(store, experiment)
    if name_or_parent_id is not None and not _is_study(client, experiment_id, name_or_parent_id):
        known = _studies(client, experiment_id)
        names = sorted({n for n in known["study"] if isinstance(n, str)})
        if name_or_parent_id not in names and name_or_parent_id not in set(known["parent_run_id"]):
            raise LinclsInputError(
                "study",
                f"no study and no sweep with parent run {name_or_parent_id!r}; "
                f"the studies: {', '.join(names) or 'none'}",
            )
    selection = collect.select_runs(client, experiment_id, name_or_parent_id)
    return Study(selection, uri, client)


class Study:
    """A study's FINISHED runs (one per config) as the report reads them.

    ``name``; ``parents``: the sweeps' parent run ids, newest first; ``store``: its tracking URI;
    ``selection``: the report's ``Selection`` (``selection.runs``: the runs with MLflow's
    prefixed names and logged texts). ``runs()``, ``curves(name)`` and the figures read it.
    """

    def __init__(self, selection: collect.Selection, store: str, client: Any) -> None:
        self.selection = selection
        self.name = selection.study
        self.parents = list(selection.parents)
        self.store = store
        self._client = client

    def __repr__(self) -> str:
        parent = f", parent run {self.parents[0]}" if self.parents else ""
        return f"Study({self.name!r}: {len(self.selection.runs)} runs{parent})"

    def runs(self) -> pd.DataFrame:
        """One row per run: ``run_id``, ``run_name``, ``status``, ``start_time``, the params
        (typed as the config declares them, plain names: ``learner``, ``lr``, ``n``…), the
        metrics (``mistakes``, ``bound.<name>``…) and a few tags (``study``, ``tightest``…).

        >>> print(demo.runs().sort_values(["n", "lr"])[["learner", "n", "lr", "mistakes"]]
        ...       .to_string(index=False))
           learner  n  lr  mistakes
        perceptron 40 0.5      10.0
        perceptron 40 1.0      10.0
        perceptron 60 0.5      24.0
        perceptron 60 1.0      24.0
        >>> demo.runs()[["n", "lr", "mistakes"]].dtypes.astype(str).tolist()
        ['int64', 'float64', 'float64']
        """
        return typed_runs(self.selection.runs)

    def curves(self, name: str = plots.CURVE_METRIC) -> pd.DataFrame:
        """The logged curve ``name`` of every run in long format: ``run`` (its id), ``step``
        (int64) and ``value`` (float64), in the runs' order then by step. A name no run logged
        raises ``LinclsInputError`` naming the curves they did.

        >>> demo.curves("cumulative_mistakes").columns.tolist()
        ['run', 'step', 'value']
        """
        run_ids = list(self.selection.runs["run_id"])
        histories = collect.metric_histories(self._client, run_ids, name)
        frames = [
            pd.DataFrame(
                {
                    "run": run_id,
                    "step": np.array([s for s, _ in points], dtype=np.int64),
                    "value": np.array([v for _, v in points], dtype=np.float64),
                }
            ).sort_values("step", kind="stable")
            for run_id in run_ids
            if (points := histories.get(run_id))
        ]
        if not frames and run_ids:
            names = collect.curve_names(self._client, run_ids)
            raise LinclsInputError(
                "curve", f"no run of study {self.name!r} logged {name!r}; its runs' curves: "
                f"{', '.join(names) or 'none'}")  # fmt: skip
        if not frames:
            return pd.DataFrame({"run": pd.Series(dtype=object), "step": pd.Series(dtype=np.int64),
                                 "value": pd.Series(dtype=np.float64)})  # fmt: skip
        return pd.concat(frames, ignore_index=True)

    def _draw(self, figure: Any, ax: Any, curves: bool = False) -> Any:
        """Draw the report's ``figure`` (a ``plots`` function) on ``ax`` (None: a new figure)."""
        sample = plots.curve_sample(self.selection.runs)["run_id"] if curves else []
        histories = collect.metric_histories(self._client, sample, plots.CURVE_METRIC)
        data = plots.PlotInput(self.selection.runs, histories)
        with _drawn_on(ax) as drawn:
            why = figure(data, Path(os.devnull))
        axes = drawn[0] if drawn else ax
        if axes is None:
            import matplotlib.pyplot as plt

            _, axes = plt.subplots()
        if why is not None:  # what the report says instead of the figure
            first = axes.flat[0] if isinstance(axes, np.ndarray) else axes
            first.text(0.5, 0.5, why, ha="center", va="center", wrap=True,
                       transform=first.transAxes)  # fmt: skip
        return axes

    def plot_mistakes_vs_bound(self, ax: Any = None) -> Any:
        """Mistakes against the tightest a priori bound, log–log, with y = x (the report's)."""
        return self._draw(plots.plot_mistakes_vs_bound, ax)

    def plot_bound_ratios(self, ax: Any = None) -> Any:
        """Box plots of mistakes / bound per learner and bound (the report's)."""
        return self._draw(plots.plot_bound_ratios, ax)

    def plot_mistakes_vs_gamma(self, ax: Any = None) -> Any:
        """Mistakes against the margin γ with the theory curve (R/γ)² (the report's)."""
        return self._draw(plots.plot_mistakes_vs_gamma, ax)

    def plot_cumulative(self, ax: Any = None) -> Any:
        """Cumulative mistakes / the tightest bound of a sample of runs (the report's).

        >>> demo.plot_cumulative().get_ylabel()
        'cumulative mistakes / tightest bound'
        """
        return self._draw(plots.plot_cumulative, ax, curves=True)

    def plot_margin_to_max(self, ax: Any = None) -> Any:
        """The learned margin over the maximum margin, per learner (the report's)."""
        return self._draw(plots.plot_margin_to_max, ax)

    def plot_decision_boundaries(self, ax: Any = None) -> Any:
        """Up to four 2-D runs' data and w·x + b = 0 (the report's): an array of Axes, ``ax``
        split into one panel a run."""
        return self._draw(plots.plot_decision_boundaries, ax)


class _Canvas:
    """Stands for the Figure a report's figure makes: hands it ``ax`` (or a new pyplot
    figure's axes, so a notebook shows it) and records what it drew on."""

    def __init__(self, ax: Any, size: tuple[float, float], margins: tuple[float, float]) -> None:
        self.ax, self.size, self.margins = ax, size, margins
        self.drawn: list[Any] = []

    def _figure(self) -> Any:
        import matplotlib.pyplot as plt

        width, height = self.size
        left, right = self.margins
        fig = plt.figure(figsize=self.size)
        fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=0.55 / height,
                            top=1 - 0.35 / height, wspace=0.25)  # fmt: skip
        return fig

    def add_subplot(self) -> Any:
        ax = self.ax if self.ax is not None else self._figure().add_subplot()
        self.drawn.append(ax)
        return ax

    def subplots(self, rows: int, cols: int, squeeze: bool = True) -> Any:
        if self.ax is None:
            axes = self._figure().subplots(rows, cols, squeeze=False)
        else:  # the caller's Axes split into the panels, in its place
            grid = self.ax.get_subplotspec().subgridspec(rows, cols)
            fig = self.ax.figure
            self.ax.remove()
            axes = np.array([[fig.add_subplot(grid[r, c]) for c in range(cols)]
                             for r in range(rows)])  # fmt: skip
        self.drawn.append(axes[0] if rows == 1 else axes)
        return axes


@contextlib.contextmanager
def _drawn_on(ax: Any) -> Iterator[list[Any]]:
    """While the block runs, the report's figures draw on ``ax`` and save nothing; yields the
    Axes drawn on once the block is done. The report's module makes a Figure and writes a PNG of
    it (``plots._figure``, ``plots._save``): both are redirected here, one figure at a time."""
    drawn: list[Any] = []
    canvases: list[_Canvas] = []

    def figure(width: float = 6.4, height: float = 4.8, left: float = 0.75, right: float = 0.15):
        canvases.append(_Canvas(ax, (width, height), (left, right)))
        return canvases[-1]

    with _DRAWING:
        saved = plots._figure, plots._save
        plots._figure, plots._save = figure, lambda fig, path: None
        try:
            yield drawn
        finally:
            plots._figure, plots._save = saved
    drawn += [a for canvas in canvases for a in canvas.drawn]
