"""The report's figures, one function each, drawn into PNG files with matplotlib's Agg canvas.

A figure is ``draw(data, path) -> None | str``: it writes ``path`` and returns None, or writes
nothing and returns why it is left out (one clause, which the report prints). ``PLOTS`` lists
them in the order the report shows them; a new figure is a function here and one line there.

Each stays under a second at 100,000 runs: the margins are fixed in inches (a layout engine
measures every text of a figure, ~0.2 s a figure), and a scatter draws one marker per occupied
cell of a ``CELLS`` × ``CELLS`` grid of its plot (``thinned``): a marker is wider than a cell, so
the picture is the one every run would draw, and 100,000 runs draw a few thousand markers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from lincls.errors import LinclsInputError
from lincls.experiments.report.collect import Curve, column, dataset_config
from lincls.experiments.report.tables import bound_family, bound_names, labels_of

CURVE_METRIC = "cumulative_mistakes"  # the per-step history plot_cumulative draws
CURVE_RUNS = 8  # cumulative-mistake curves drawn (evenly spread over the bound ratios)
BOUNDARY_RUNS = 4  # decision-boundary panels drawn
CELLS = 150  # a scatter's grid: one marker per occupied cell (a marker spans ~1.5 cells)
INCH_PER_CHAR = 0.075  # a tick label's width per character at the default 10 pt


@dataclass(frozen=True)
class PlotInput:
    """What the figures draw from: the runs (one per row) and, by run id, the ``CURVE_METRIC``
    histories of the runs ``curve_sample`` picks (read from the store by the writer)."""

    runs: pd.DataFrame
    curves: Mapping[str, Curve] = field(default_factory=dict)
    learners: pd.Series | None = None  # the runs' ``learner_labels``, if made already

    def labels(self) -> pd.Series:
        """Each run's learner label (``learner_labels`` of the runs)."""
        return labels_of(self.runs, self.learners)


def _matplotlib_version() -> tuple[int, int]:
    import matplotlib

    return tuple(int(part) for part in matplotlib.__version__.split(".")[:2])


_MPL = _matplotlib_version()


def _figure(width: float = 6.4, height: float = 4.8, left: float = 0.75, right: float = 0.15):
    """A figure whose plot has fixed margins in inches (``left``, ``right``; 0.55 below for the
    tick labels and axis label, 0.35 above for the title)."""
    from matplotlib.figure import Figure  # no pyplot: no global state, the Agg canvas

    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=0.55 / height,
                        top=1 - 0.35 / height, wspace=0.25)  # fmt: skip
    return fig


def thinned(x: pd.Series, y: pd.Series, log: bool = True, cells: int = CELLS) -> np.ndarray:
    """Positions (in ``x``'s index) of one point per occupied cell of a ``cells`` × ``cells``
    grid over the points' range (log-spaced where ``log``): the first point of each cell."""
    xs, ys = x.to_numpy(float), y.to_numpy(float)
    if log:
        xs, ys = np.log10(xs), np.log10(ys)
    if xs.shape[0] <= cells:
        return np.arange(xs.shape[0])

    def cell(v: np.ndarray) -> np.ndarray:
        span = float(v.max() - v.min()) or 1.0
        return np.minimum(((v - v.min()) / span * cells).astype(np.int64), cells - 1)

    _, first = np.unique(cell(xs) * cells + cell(ys), return_index=True)
    return np.sort(first)


def _left_for(labels: list[str]) -> float:
    """The left margin in inches that fits tick labels ``labels``."""
    return 0.3 + INCH_PER_CHAR * max((len(label) for label in labels), default=4)


def _save(fig, path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)


def _positive(*series: pd.Series) -> pd.Series:
    ok = pd.Series(True, index=series[0].index)
    for s in series:
        ok &= s.notna() & (s > 0) & np.isfinite(s.astype(float))
    return ok


def plot_mistakes_vs_bound(data: PlotInput, path: Path) -> str | None:
    """Mistakes against the tightest a priori bound, log–log, with y = x; None, or why it is left
    out. A vacuous bound is never a run's tightest, so no run sits on y = x for saying nothing."""
    frame = data.runs
    mistakes = column(frame, "metrics.mistakes")
    bound = column(frame, "metrics.bound.tightest")
    ok = _positive(mistakes, bound)
    if not ok.any():
        return "no run has both mistakes > 0 and a mistake bound"
    labels = data.labels()
    fig = _figure()
    ax = fig.add_subplot()
    for label in sorted(labels[ok].unique()):
        mine = ok & (labels == label)
        kept = thinned(bound[mine], mistakes[mine])
        ax.scatter(bound[mine].iloc[kept], mistakes[mine].iloc[kept], s=18, alpha=0.7,
                   label=label)  # fmt: skip
    low = min(bound[ok].min(), mistakes[ok].min())
    high = max(bound[ok].max(), mistakes[ok].max())
    ax.plot([low, high], [low, high], "k--", lw=1, label="mistakes = bound")
    ax.set(xscale="log", yscale="log", xlabel="tightest a priori mistake bound", ylabel="mistakes")
    ax.set_title("Mistakes against the tightest a priori bound")
    # where no run can be (mistakes above the bound): "best" tests every marker, ~0.6 s
    ax.legend(fontsize="small", loc="upper left")
    _save(fig, path)
    return None


def plot_bound_ratios(data: PlotInput, path: Path) -> str | None:
    """The distribution of mistakes / bound per learner and bound (box plots); a bound's vacuous
    runs log no ratio, so they are not drawn (the report's table counts them)."""
    frame = data.runs
    labels = data.labels()
    boxes, names = [], []
    for label in sorted(labels.unique()):
        mine = (labels == label).to_numpy()  # once a label, not once a bound
        for bound in bound_names(frame):
            ratio = column(frame, f"metrics.bound_ratio.{bound}")[mine].dropna()
            if ratio.shape[0]:
                boxes.append(ratio.to_numpy(float))
                family = " (a posteriori)" if bound_family(bound) == "a posteriori" else ""
                names.append(f"{label} · {bound}{family}")
    if not boxes:
        return "no run has a mistake bound"
    fig = _figure(7.5 + _left_for(names), 1.2 + 0.35 * len(boxes), _left_for(names))
    ax = fig.add_subplot()
    positions = np.arange(1, len(boxes) + 1)
    horizontal = {"orientation": "horizontal"} if _MPL >= (3, 10) else {"vert": False}
    ax.boxplot(boxes, positions=positions, **horizontal)
    ax.set_yticks(positions, names)
    ax.axvline(1.0, color="k", ls="--", lw=1)
    ax.invert_yaxis()
    ax.set(xlabel="mistakes / bound (1 = mistakes equal the bound; vacuous bounds left out)")
    ax.set_title("Bound ratios per learner and bound")
    _save(fig, path)
    return None


def plot_mistakes_vs_gamma(data: PlotInput, path: Path) -> str | None:
    """Mistakes against the margin γ, one colour per radius R, with the theory curve (R/γ)²."""
    frame = data.runs
    mistakes = column(frame, "metrics.mistakes")
    gamma = column(frame, "metrics.margin")
    radius = column(frame, "metrics.radius")
    ok = _positive(mistakes, gamma, radius)
    if not ok.any():
        return "no run has mistakes > 0 and a certified margin γ"
    labels = data.labels()
    rounded = radius.round(9)
    markers = "os^vD<>pP*X"
    fig = _figure()
    ax = fig.add_subplot()
    colours = {}
    for k, r in enumerate(sorted(rounded[ok].unique())):
        colours[r] = f"C{k % 10}"
        g = gamma[ok & (rounded == r)]
        low, high = g.min(), g.max()
        if high < 1.5 * low:  # (nearly) one γ: draw the curve over a factor 4 around it
            low, high = low / 2, high * 2
        grid = np.geomspace(low, high, 50)
        ax.plot(grid, (r / grid) ** 2, "--", color=colours[r], lw=1, label=f"(R/γ)², R = {r:g}")
    from matplotlib.colors import to_rgba_array

    # one RGBA row per radius, taken per run (matplotlib resolves a colour name per point:
    # 2 s for 100,000 runs)
    radii = list(colours)
    rgba = to_rgba_array([colours[r] for r in radii])
    for j, label in enumerate(sorted(labels[ok].unique())):
        # one marker per occupied cell of each radius: each keeps its colour where they overlap
        kept = []
        for r in radii:
            group = np.flatnonzero((ok & (labels == label) & (rounded == r)).to_numpy())
            if group.shape[0]:
                kept.append(group[thinned(gamma.iloc[group], mistakes.iloc[group])])
        mine = np.sort(np.concatenate(kept))
        ax.scatter(
            gamma.iloc[mine],
            mistakes.iloc[mine],
            c=rgba[pd.Index(radii).get_indexer(rounded.iloc[mine])],
            marker=markers[j % len(markers)],
            s=18,
            alpha=0.7,
            label=label,
        )
    ax.set(xscale="log", yscale="log", xlabel="margin γ (certified)", ylabel="mistakes")
    ax.set_title("Mistakes against γ (colour: radius R)")
    ax.legend(fontsize="small", loc="upper right")  # few mistakes at a large margin
    _save(fig, path)
    return None


def curve_sample(frame: pd.DataFrame, count: int = CURVE_RUNS) -> pd.DataFrame:
    """At most ``count`` runs with a bound, spread evenly over their tightest-bound ratios."""
    ratio = column(frame, "metrics.bound_ratio.tightest")
    bounded = (ratio.notna() & column(frame, "metrics.mistakes").notna()).to_numpy()
    # the order found on the two columns that make it, the runs taken once (the whole table
    # filtered and sorted was two copies of it)
    keys = pd.DataFrame({"_ratio": ratio.to_numpy()[bounded],
                         "run_id": frame["run_id"].array[bounded],
                         "_at": np.flatnonzero(bounded)})  # fmt: skip
    at = keys.sort_values(["_ratio", "run_id"], kind="stable")["_at"].to_numpy()
    if len(at) > count:
        at = at[np.unique(np.round(np.linspace(0, len(at) - 1, count)).astype(int))]
    return frame.iloc[at]


def plot_cumulative(data: PlotInput, path: Path) -> str | None:
    """Cumulative mistakes / the tightest bound against the presentation index, sampled runs."""
    frame, curves = data.runs, data.curves
    sample = frame[frame["run_id"].isin([k for k, v in curves.items() if v])]
    if sample.empty:
        return "no run with a bound logged a cumulative_mistakes curve"
    labels = data.labels()
    fig = _figure(7.5, 4.8)
    ax = fig.add_subplot()
    for index, run in sample.iterrows():
        steps, values = zip(*sorted(curves[run["run_id"]]), strict=True)
        bound = run["metrics.bound.tightest"]
        ax.step(
            steps,
            np.asarray(values) / bound,
            where="post",
            label=f"{labels[index]}, {run.get('tags.dataset', '?')}, "
            f"γ={run.get('metrics.margin', math.nan):.3g}, "
            f"R={run.get('metrics.radius', math.nan):g}",
        )
    ax.axhline(1.0, color="k", ls="--", lw=1, label="the bound")
    ax.set(xscale="log", xlabel="presentation", ylabel="cumulative mistakes / tightest bound")
    ax.set_ylim(bottom=0)
    ax.set_title(f"Cumulative mistakes against the bound ({sample.shape[0]} runs)")
    ax.legend(fontsize="x-small", loc="upper left")
    _save(fig, path)
    return None


def planar_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs on 2-D data whose weights were logged (``weights.coef.0``, ``.1``, no ``.2``).

    A perceptron game's data are made against the learner, so its params cannot rebuild them.
    """
    ok = (
        (column(frame, "params.dataset.name") != "perceptron_game")
        & column(frame, "metrics.weights.coef.0").notna()
        & column(frame, "metrics.weights.coef.1").notna()
        & column(frame, "metrics.weights.coef.2").isna()
    )
    return frame[ok]


def plot_decision_boundaries(data: PlotInput, path: Path) -> str | None:
    """The training data of up to four 2-D runs (rebuilt from their params) and w·x + b = 0."""
    frame = data.runs
    runs = planar_runs(frame)
    if runs.empty:
        return (
            "no run on 2-D data logged its weights (a binary linear learner on `dataset=plane` "
            "logs `weights.coef.*`)"
        )
    from lincls.registry import build_dataset  # imports the learners: only when there is a plot

    panels = []
    for _, run in runs.iterrows():
        try:
            built = build_dataset(dataset_config(run))
        except (LinclsInputError, OSError, TypeError, ValueError):
            continue  # e.g. a CSV file that is not there any more
        if built.X.shape[1] == 2:
            X = built.X.toarray() if hasattr(built.X, "toarray") else built.X
            panels.append((run, X, built.y))
        if len(panels) == BOUNDARY_RUNS:
            break
    if not panels:
        return "the data of the 2-D runs could not be rebuilt from their params"
    labels = data.labels()
    fig = _figure(4.0 * len(panels), 4.2)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (run, X, y) in zip(axes, panels, strict=True):
        w = np.array([run["metrics.weights.coef.0"], run["metrics.weights.coef.1"]])
        b = run.get("metrics.weights.intercept", 0.0)
        b = 0.0 if pd.isna(b) else float(b)
        positive = y == np.unique(y)[-1]
        ax.scatter(X[positive, 0], X[positive, 1], s=8, c="C0", label="positive")
        ax.scatter(X[~positive, 0], X[~positive, 1], s=8, c="C3", label="negative")
        limit = 1.05 * float(np.abs(X).max())
        t = np.linspace(-limit, limit, 2)
        if abs(w[1]) >= abs(w[0]) and w[1] != 0:
            ax.plot(t, -(w[0] * t + b) / w[1], "k-", lw=1.5, label="w·x + b = 0")
        elif w[0] != 0:
            ax.plot(-(w[1] * t + b) / w[0], t, "k-", lw=1.5, label="w·x + b = 0")
        ax.set(xlim=(-limit, limit), ylim=(-limit, limit), aspect="equal")
        ax.set_title(
            f"{labels[run.name]}, {run.get('params.dataset.kind', run.get('tags.dataset', ''))}\n"
            f"seed {run.get('params.seed', '?')}, "
            f"{run.get('metrics.mistakes', math.nan):g} mistakes",
            fontsize="small",
        )
        ax.legend(fontsize="x-small", loc="lower right")
    _save(fig, path)
    return None


def plot_margin_to_max(data: PlotInput, path: Path) -> str | None:
    """Per learner, the learned hyperplane's margin over the data's maximum margin (seed 004):
    1 is the maximum-margin hyperplane, ≤ 0 a hyperplane that does not separate the data."""
    frame = data.runs
    ratio = column(frame, "metrics.hyperplane.margin_to_max")
    labels = data.labels()
    names = sorted(labels[ratio.notna()].unique())
    if not names:
        return (
            "no run has the maximum-margin certificate of separable data "
            "(`hyperplane.margin_to_max`: a binary linear online learner with certificates.svm)"
        )
    boxes = [ratio[(labels == name) & ratio.notna()].to_numpy(float) for name in names]
    ticks = [f"{n} ({b.shape[0]})" for n, b in zip(names, boxes, strict=True)]
    fig = _figure(9.0 + _left_for(ticks), max(3.2, 1.6 + 0.4 * len(boxes)), _left_for(ticks))
    ax = fig.add_subplot()
    positions = np.arange(1, len(boxes) + 1)
    horizontal = {"orientation": "horizontal"} if _MPL >= (3, 10) else {"vert": False}
    ax.boxplot(boxes, positions=positions, **horizontal)
    for k, values in enumerate(boxes, start=1):  # every run as a dot: a few runs make no box
        dots = np.unique(np.round(values, 3))  # a thousandth apart: one dot where they coincide
        ax.scatter(dots, np.full(dots.shape[0], k), s=10, alpha=0.5, color="C0")
    ax.set_yticks(positions, ticks)
    ax.axvline(1.0, color="k", ls="--", lw=1, label="the maximum-margin hyperplane")
    ax.axvline(0.0, color="C3", ls=":", lw=1, label="does not separate")
    ax.invert_yaxis()
    ax.set(xlabel="learned margin / maximum margin (training data)")
    ax.set_title("Learned hyperplane against the maximum margin")
    ax.legend(fontsize="x-small", loc="best")
    _save(fig, path)
    return None


class Plot(NamedTuple):
    """One figure of the report: its file, its heading in the report and what draws it."""

    file: str
    title: str
    draw: Callable[[PlotInput, Path], str | None]


PLOTS = (
    Plot(
        "mistakes_vs_bound.png",
        "Mistakes against the tightest a priori bound (log–log, y = x)",
        plot_mistakes_vs_bound,
    ),
    Plot("bound_ratios.png", "Bound ratios per learner and bound", plot_bound_ratios),
    Plot(
        "mistakes_vs_gamma.png",
        "Mistakes against γ with the theory curve (R/γ)²",
        plot_mistakes_vs_gamma,
    ),
    Plot(
        "cumulative_mistakes.png",
        "Cumulative mistakes against the bound (a sample of runs)",
        plot_cumulative,
    ),
    Plot("decision_boundaries.png", "Decision boundaries on 2-D data", plot_decision_boundaries),
    Plot(
        "margin_to_max.png",
        "Learned margin against the maximum margin, per learner",
        plot_margin_to_max,
    ),
)
PLOT_FILES = tuple(plot.file for plot in PLOTS)
