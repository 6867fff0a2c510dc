"""The study report: ``python -m experiments.report [STUDY_OR_PARENT_RUN_ID]``.

Reads the runs of a sweep (a parent run id), of a study (every FINISHED run tagged with its name,
one per config hash, the newest) or, with no argument, of the latest sweep, from MLflow into
pandas, and writes ``results/<study>/``: ``report.md`` (bounds per learner, violations, ratios,
scaling slopes, dataset families), PNG plots and ``runs.csv``. The same files are logged as
artifacts of the sweep's parent run (under ``report/``), so the MLflow UI shows them.

    python -m experiments.report                       # the latest sweep
    python -m experiments.report bound_verification    # every run of a study
    python -m experiments.report 3f2a...e1             # one sweep, by its parent run id

Bad input (an unknown study or run id, an empty store) prints one line and exits non-zero.
"""

from __future__ import annotations

import argparse
import ast
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lincls import tracking
from lincls.bounds import RELATIVE_TOLERANCE, holds
from lincls.errors import LinclsInputError

PAGE_SIZE = 1000  # runs per search_runs page
CURVE_RUNS = 8  # cumulative-mistake curves drawn (evenly spread over the bound ratios)
BOUNDARY_RUNS = 4  # decision-boundary panels drawn
THEORY_SLOPE_GAMMA = -2.0  # Novikoff: M ≤ (R/γ)², reached on worst-case orders
THEORY_SLOPE_RADIUS = 2.0
ROLE_SWEEP = "sweep"
ROLE_RUN = "run"
REPORT_FILE = "report.md"
RUNS_FILE = "runs.csv"
PLOT_FILES = (
    "mistakes_vs_bound.png",
    "bound_ratios.png",
    "mistakes_vs_gamma.png",
    "cumulative_mistakes.png",
    "decision_boundaries.png",
)
TAGS_KEPT = (
    "learner",
    "dataset",
    "order",
    "bound_violated",
    "bound.tightest",
    "bounds.none",
    "lincls.study",
    "lincls.role",
    "lincls.config_hash",
    "mlflow.parentRunId",
    "dataset.fingerprint",
)
TOLERANCE = f"{RELATIVE_TOLERANCE:g}".replace("e-0", "e-")  # as written: 1e-9
_BOUND = re.compile(r"^metrics\.bound\.([^.]+)$")
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class Selection:
    """The runs a report covers: a study's name, its FINISHED runs and the sweeps they came from.

    ``parents`` are the sweeps' parent run ids, newest first (the report is logged to the
    first); ``left_out`` counts runs of those sweeps that are not in ``runs`` and why.
    """

    study: str
    runs: pd.DataFrame
    parents: list[str]
    left_out: dict[str, int] = field(default_factory=dict)


# --- reading the store ------------------------------------------------------------------------
def search_all(
    client, experiment_id: str, filter_string: str = "", page_size: int = PAGE_SIZE
) -> list:
    """Every run of ``experiment_id`` matching ``filter_string``, newest first, page by page."""
    runs: list = []
    token = None
    while True:
        page = client.search_runs(
            [experiment_id],
            filter_string=filter_string,
            max_results=page_size,
            order_by=["attributes.start_time DESC"],
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def runs_frame(runs: Sequence) -> pd.DataFrame:
    """MLflow runs as a table: run_id, start_time, status, ``params.*``, ``metrics.*``, ``tags.*``.

    Rows are sorted by start time (then id), so the same runs always give the same table.
    """
    rows = []
    for run in runs:
        row: dict[str, Any] = {
            "run_id": run.info.run_id,
            "run_name": run.info.run_name,
            "start_time": run.info.start_time,
            "status": run.info.status,
        }
        row.update({f"params.{k}": v for k, v in run.data.params.items()})
        row.update({f"metrics.{k}": v for k, v in run.data.metrics.items()})
        row.update({f"tags.{k}": run.data.tags[k] for k in TAGS_KEPT if k in run.data.tags})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["run_id", "run_name", "start_time", "status"])
    if rows:
        frame = pd.DataFrame(rows)
        frame = frame.sort_values(["start_time", "run_id"], kind="stable").reset_index(drop=True)
    fixed = ["run_id", "run_name", "start_time", "status"]
    rest = sorted(c for c in frame.columns if c not in fixed)
    return frame[fixed + rest]


def _quoted(field_name: str, value: str) -> str:
    if "'" in value or "\\" in value:
        raise LinclsInputError(field_name, f"must not contain quotes or backslashes, got {value!r}")
    return f"'{value}'"


def _finished_unique(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """FINISHED runs, one per config hash (the newest); how many others were left out, and why."""
    left_out: dict[str, int] = {}
    finished = frame[frame["status"] == "FINISHED"]
    for status, count in frame.loc[frame["status"] != "FINISHED", "status"].value_counts().items():
        left_out[f"not FINISHED ({status})"] = int(count)
    if "tags.lincls.config_hash" in finished.columns:
        key = finished["tags.lincls.config_hash"].fillna(finished["run_id"])
        newest = finished.assign(_key=key).sort_values(
            ["start_time", "run_id"], ascending=False, kind="stable"
        )
        kept = newest.drop_duplicates("_key").drop(columns="_key")
        if len(kept) < len(finished):
            left_out["older run of the same config"] = len(finished) - len(kept)
        finished = kept
    finished = finished.sort_values(["start_time", "run_id"], kind="stable")
    return finished.reset_index(drop=True), left_out


def select_runs(
    client, experiment_id: str, target: str | None = None, page_size: int = PAGE_SIZE
) -> Selection:
    """The runs to report: the latest sweep (``target`` None), a sweep by its parent run id, or a
    study by name (its FINISHED runs over every sweep, one per config hash, the newest)."""
    sweeps = search_all(
        client, experiment_id, f"tags.`lincls.role` = '{ROLE_SWEEP}'", page_size=page_size
    )
    by_id = {run.info.run_id: run for run in sweeps}
    if target is None or target in by_id:
        if not sweeps:
            raise LinclsInputError(
                "study", "no sweep in this experiment yet (run one: python -m experiments.run -m)"
            )
        parent = by_id[target] if target is not None else sweeps[0]
        parent_id = parent.info.run_id
        children = search_all(
            client,
            experiment_id,
            f"tags.`mlflow.parentRunId` = {_quoted('study', parent_id)}",
            page_size=page_size,
        )
        study = parent.data.tags.get("lincls.study") or parent.info.run_name or parent_id
        parents = [parent_id]
    else:
        study = target
        quoted = _quoted("study", target)
        children = search_all(
            client,
            experiment_id,
            f"tags.`lincls.study` = {quoted} and tags.`lincls.role` = '{ROLE_RUN}'",
            page_size=page_size,
        )
        if not children:
            known = sorted({r.data.tags.get("lincls.study", "") for r in sweeps} - {""})
            raise LinclsInputError(
                "study",
                f"no study and no sweep run id {target!r} in this experiment "
                f"(studies: {', '.join(known) or 'none'})",
            )
        parents = [s.info.run_id for s in sweeps if s.data.tags.get("lincls.study") == target]
    runs, left_out = _finished_unique(runs_frame(children))
    if runs.empty:
        raise LinclsInputError("study", f"{study!r} has no FINISHED runs yet")
    if target is not None and target not in by_id:
        # Only the sweeps that still contribute a run; the report goes to the newest of them.
        used = set(runs.get("tags.mlflow.parentRunId", pd.Series(dtype=object)).dropna())
        parents = [p for p in parents if p in used] or parents
    return Selection(study, runs, parents, left_out)


# --- analysis ---------------------------------------------------------------------------------
def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series(np.nan, index=frame.index, dtype=float)


def _value(text: Any) -> Any:
    """A logged param back as the value it was (MLflow stores ``str(value)``; None as "null")."""
    if not isinstance(text, str):
        return text
    if text == "null":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return float(text)  # inf, nan
        except ValueError:
            return text


def learner_labels(frame: pd.DataFrame) -> pd.Series:
    """Each run's learner name, with the ``learner.*`` params that vary among that learner's runs
    (e.g. ``perceptron (bias=none)``): runs of different rules are not pooled."""
    names = _column(frame, "tags.learner").fillna(_column(frame, "params.learner.name"))
    names = names.fillna("?").astype(str)
    labels = names.copy()
    prefix = "params.learner."
    params = [c for c in frame.columns if c.startswith(prefix) and c != f"{prefix}name"]
    for name, group in frame.groupby(names, sort=True):
        varying = [c for c in params if group[c].nunique(dropna=False) > 1]
        for index, row in group[varying].iterrows() if varying else ():
            described = ", ".join(f"{c[len(prefix) :]}={row[c]}" for c in varying)
            labels.loc[index] = f"{name} ({described})"
    return labels


def orders_of(frame: pd.DataFrame) -> pd.Series:
    """The order each run presented its data in (the runner's tag, else the config's)."""
    return _column(frame, "tags.order").fillna(_column(frame, "params.order")).fillna("fixed")


def bound_names(frame: pd.DataFrame) -> list[str]:
    """The mistake bounds logged (``bound.<name>``), ``tightest`` last."""
    names = sorted({m.group(1) for c in frame.columns if (m := _BOUND.match(c))} - {"tightest"})
    return names + (["tightest"] if "metrics.bound.tightest" in frame.columns else [])


def violations(frame: pd.DataFrame, bound: str) -> pd.Series:
    """Whether each run broke ``bound`` (``lincls.bounds.holds``: relative tolerance 1e-9).

    A run with several orderings logs the mean mistakes but each bound at its worst ordering, so
    there the logged ratio (worst ordering's mistakes / its bound) is compared with 1.
    """
    mistakes = _column(frame, "metrics.mistakes")
    value = _column(frame, f"metrics.bound.{bound}")
    ratio = _column(frame, f"metrics.bound_ratio.{bound}")
    several = _column(frame, "metrics.orders").fillna(1.0) > 1
    broke = [
        (not holds(r, 1.0)) if many else (not holds(m, v))
        for m, v, r, many in zip(mistakes, value, ratio, several, strict=True)
    ]
    return pd.Series(broke, index=frame.index) & value.notna()


def bound_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per learner and bound: runs, violations, median and max bound ratio."""
    labels = learner_labels(frame)
    rows = []
    for bound in bound_names(frame):
        has = _column(frame, f"metrics.bound.{bound}").notna()
        broke = violations(frame, bound)
        ratio = _column(frame, f"metrics.bound_ratio.{bound}")
        for label in sorted(labels[has].unique()):
            mine = has & (labels == label)
            rows.append(
                {
                    "learner": label,
                    "bound": bound,
                    "runs": int(mine.sum()),
                    "violations": int(broke[mine].sum()),
                    "median_ratio": float(ratio[mine].median()),
                    "max_ratio": float(ratio[mine].max()),
                }
            )
    table = pd.DataFrame(
        rows, columns=["learner", "bound", "runs", "violations", "median_ratio", "max_ratio"]
    )
    return table.sort_values(["learner", "bound"], key=_tightest_last, kind="stable").reset_index(
        drop=True
    )


def _tightest_last(column: pd.Series) -> pd.Series:
    if column.name == "bound":
        return column.map(lambda b: (b == "tightest", b))
    return column


@dataclass
class SlopeFit:
    """log M = a + s_γ log γ + s_R log R over one learner × dataset × order (NaN: not fitted)."""

    learner: str
    dataset: str
    order: str
    runs: int
    slope_gamma: float = math.nan
    slope_radius: float = math.nan
    rms: float = math.nan
    note: str = ""


def fit_slopes(frame: pd.DataFrame) -> list[SlopeFit]:
    """Least-squares slopes of log mistakes on log γ (``margin``) and log R (``radius``).

    One fit per learner × dataset × order, over its runs with mistakes > 0; a variable that is
    the same in every run is left out of the fit, and a fit that cannot be made says why.
    """
    keys = pd.DataFrame(
        {
            "learner": learner_labels(frame),
            "dataset": _column(frame, "tags.dataset").fillna("?").astype(str),
            "order": orders_of(frame).astype(str),
        }
    )
    mistakes = _column(frame, "metrics.mistakes")
    gamma = _column(frame, "metrics.margin")
    radius = _column(frame, "metrics.radius")
    fits = []
    for (learner, dataset, order), group in keys.groupby(["learner", "dataset", "order"]):
        m, g, r = (s.loc[group.index].to_numpy(float) for s in (mistakes, gamma, radius))
        usable = np.isfinite(m) & np.isfinite(g) & np.isfinite(r) & (m > 0) & (g > 0) & (r > 0)
        fit = SlopeFit(learner, dataset, order, int(usable.sum()))
        fits.append(fit)
        notes = []
        if (~usable).any():
            notes.append(f"{int((~usable).sum())} runs without mistakes, γ or R left out")
        log_m, log_g, log_r = np.log(m[usable]), np.log(g[usable]), np.log(r[usable])
        vary_g = usable.any() and np.ptp(log_g) > 1e-9
        vary_r = usable.any() and np.ptp(log_r) > 1e-9
        columns = [np.ones_like(log_m)]
        columns += [log_g] if vary_g else []
        columns += [log_r] if vary_r else []
        design = np.column_stack(columns)
        if not (vary_g or vary_r):
            notes.append("not fitted: γ and R are the same in every run")
        elif fit.runs < design.shape[1]:
            notes.append(f"not fitted: {fit.runs} runs for {design.shape[1]} coefficients")
        elif np.linalg.matrix_rank(design) < design.shape[1]:
            notes.append("not fitted: γ and R vary together (R/γ the same in every run)")
        else:
            coef, *_ = np.linalg.lstsq(design, log_m, rcond=None)
            fit.rms = float(np.sqrt(np.mean((design @ coef - log_m) ** 2)))
            k = 1
            if vary_g:
                fit.slope_gamma, k = float(coef[k]), k + 1
            else:
                notes.append("γ the same in every run")
            if vary_r:
                fit.slope_radius = float(coef[k])
            else:
                notes.append("R the same in every run")
        fit.note = "; ".join(notes)
    return fits


def family_ranges(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset family: runs with a bound, the min and max ratio of the tightest bound."""
    ratio = _column(frame, "metrics.bound_ratio.tightest")
    dataset = _column(frame, "tags.dataset").fillna("?").astype(str)
    rows = []
    for name in sorted(dataset.unique()):
        mine = ratio[(dataset == name) & ratio.notna()]
        rows.append(
            {
                "dataset": name,
                "runs": int((dataset == name).sum()),
                "bounded_runs": int(mine.shape[0]),
                "min_ratio": float(mine.min()) if mine.shape[0] else math.nan,
                "max_ratio": float(mine.max()) if mine.shape[0] else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "runs", "bounded_runs", "min_ratio", "max_ratio"])


# --- plots ------------------------------------------------------------------------------------
def _matplotlib_version() -> tuple[int, int]:
    import matplotlib

    return tuple(int(part) for part in matplotlib.__version__.split(".")[:2])


_MPL = _matplotlib_version()


def _figure(width: float = 6.4, height: float = 4.8):
    from matplotlib.figure import Figure  # no pyplot: no global state, the Agg canvas

    return Figure(figsize=(width, height), layout="constrained")


def _save(fig, path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100)


def _positive(*series: pd.Series) -> pd.Series:
    ok = pd.Series(True, index=series[0].index)
    for s in series:
        ok &= s.notna() & (s > 0) & np.isfinite(s.astype(float))
    return ok


def plot_mistakes_vs_bound(frame: pd.DataFrame, path: Path) -> str | None:
    """Mistakes against the tightest bound, log–log, with y = x; None, or why it is left out."""
    mistakes = _column(frame, "metrics.mistakes")
    bound = _column(frame, "metrics.bound.tightest")
    ok = _positive(mistakes, bound)
    if not ok.any():
        return "no run has both mistakes > 0 and a mistake bound"
    labels = learner_labels(frame)
    fig = _figure()
    ax = fig.add_subplot()
    for label in sorted(labels[ok].unique()):
        mine = ok & (labels == label)
        ax.scatter(bound[mine], mistakes[mine], s=18, alpha=0.7, label=label)
    low = min(bound[ok].min(), mistakes[ok].min())
    high = max(bound[ok].max(), mistakes[ok].max())
    ax.plot([low, high], [low, high], "k--", lw=1, label="mistakes = bound")
    ax.set(xscale="log", yscale="log", xlabel="tightest mistake bound", ylabel="mistakes")
    ax.set_title("Mistakes against the tightest bound")
    ax.legend(fontsize="small")
    _save(fig, path)
    return None


def plot_bound_ratios(frame: pd.DataFrame, path: Path) -> str | None:
    """The distribution of mistakes / bound per learner and bound (box plots)."""
    labels = learner_labels(frame)
    boxes, names = [], []
    for label in sorted(labels.unique()):
        for bound in bound_names(frame):
            ratio = _column(frame, f"metrics.bound_ratio.{bound}")[labels == label].dropna()
            if ratio.shape[0]:
                boxes.append(ratio.to_numpy(float))
                names.append(f"{label} · {bound}")
    if not boxes:
        return "no run has a mistake bound"
    fig = _figure(7.5, 1.2 + 0.35 * len(boxes))
    ax = fig.add_subplot()
    positions = np.arange(1, len(boxes) + 1)
    horizontal = {"orientation": "horizontal"} if _MPL >= (3, 10) else {"vert": False}
    ax.boxplot(boxes, positions=positions, **horizontal)
    ax.set_yticks(positions, names)
    ax.axvline(1.0, color="k", ls="--", lw=1)
    ax.invert_yaxis()
    ax.set(xlabel="mistakes / bound (1 = the bound is met exactly)")
    ax.set_title("Bound ratios per learner and bound")
    _save(fig, path)
    return None


def plot_mistakes_vs_gamma(frame: pd.DataFrame, path: Path) -> str | None:
    """Mistakes against the margin γ, one colour per radius R, with the theory curve (R/γ)²."""
    mistakes = _column(frame, "metrics.mistakes")
    gamma = _column(frame, "metrics.margin")
    radius = _column(frame, "metrics.radius")
    ok = _positive(mistakes, gamma, radius)
    if not ok.any():
        return "no run has mistakes > 0 and a certified margin γ"
    labels = learner_labels(frame)
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
    for j, label in enumerate(sorted(labels[ok].unique())):
        mine = ok & (labels == label)
        ax.scatter(
            gamma[mine],
            mistakes[mine],
            c=[colours[r] for r in rounded[mine]],
            marker=markers[j % len(markers)],
            s=18,
            alpha=0.7,
            label=label,
        )
    ax.set(xscale="log", yscale="log", xlabel="margin γ (certified)", ylabel="mistakes")
    ax.set_title("Mistakes against γ (colour: radius R)")
    ax.legend(fontsize="small")
    _save(fig, path)
    return None


def curve_sample(frame: pd.DataFrame, count: int = CURVE_RUNS) -> pd.DataFrame:
    """At most ``count`` runs with a bound, spread evenly over their tightest-bound ratios."""
    ratio = _column(frame, "metrics.bound_ratio.tightest")
    bounded = frame[ratio.notna() & _column(frame, "metrics.mistakes").notna()]
    bounded = bounded.assign(_ratio=ratio[bounded.index]).sort_values(
        ["_ratio", "run_id"], kind="stable"
    )
    if bounded.shape[0] <= count:
        return bounded.drop(columns="_ratio")
    picks = np.unique(np.round(np.linspace(0, bounded.shape[0] - 1, count)).astype(int))
    return bounded.iloc[picks].drop(columns="_ratio")


def plot_cumulative(
    frame: pd.DataFrame, curves: Mapping[str, list[tuple[int, float]]], path: Path
) -> str | None:
    """Cumulative mistakes / the tightest bound against the presentation index, sampled runs."""
    sample = frame[frame["run_id"].isin([k for k, v in curves.items() if v])]
    if sample.empty:
        return "no run with a bound logged a cumulative_mistakes curve"
    labels = learner_labels(frame)
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
    """Runs on 2-D data whose weights were logged (``weights.coef.0``, ``.1``, no ``.2``)."""
    ok = (
        _column(frame, "metrics.weights.coef.0").notna()
        & _column(frame, "metrics.weights.coef.1").notna()
        & _column(frame, "metrics.weights.coef.2").isna()
    )
    return frame[ok]


def dataset_config(run: pd.Series) -> dict[str, Any]:
    """The run's ``dataset`` config, rebuilt from its logged ``dataset.*`` params."""
    prefix = "params.dataset."
    return {
        key[len(prefix) :]: _value(value)
        for key, value in run.items()
        if key.startswith(prefix) and isinstance(value, str)
    }


def plot_decision_boundaries(frame: pd.DataFrame, path: Path) -> str | None:
    """The training data of up to four 2-D runs (rebuilt from their params) and w·x + b = 0."""
    runs = planar_runs(frame)
    if runs.empty:
        return (
            "no run on 2-D data logged its weights (a binary linear learner on `dataset=plane` "
            "logs `weights.coef.*`)"
        )
    from lincls.runner import build_dataset  # imports the learners: only when there is a plot

    panels = []
    for _, run in runs.iterrows():
        try:
            data = build_dataset(dataset_config(run))
        except (LinclsInputError, OSError, TypeError, ValueError):
            continue  # e.g. a CSV file that is not there any more
        if data.X.shape[1] == 2:
            panels.append((run, data.X.toarray() if hasattr(data.X, "toarray") else data.X, data.y))
        if len(panels) == BOUNDARY_RUNS:
            break
    if not panels:
        return "the data of the 2-D runs could not be rebuilt from their params"
    labels = learner_labels(frame)
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


# --- the report -------------------------------------------------------------------------------
def _num(x: float) -> str:
    """A ratio or slope for the table: 6 significant digits, always with a decimal point."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    text = f"{x:.6g}"
    return text if any(c in text for c in ".en") else f"{text}.0"


def _slope(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:+.3f}"


def render(
    selection: Selection,
    table: pd.DataFrame,
    fits: list[SlopeFit],
    families: pd.DataFrame,
    plots: Mapping[str, str | None],
) -> str:
    """``report.md``: the tables and, per plot, its image or the line saying why it is left out."""
    runs = selection.runs
    flagged = int((_column(runs, "tags.bound_violated") == "true").sum())
    lines = [
        f"# Study `{selection.study}`",
        "",
        f"- Runs: {runs.shape[0]} FINISHED (one per config, the newest)"
        + (
            "; left out: " + ", ".join(f"{n} {why}" for why, n in sorted(left_out.items()))
            if (left_out := selection.left_out)
            else ""
        ),
        "- Sweeps (parent runs, newest first): "
        + (", ".join(f"`{p}`" for p in selection.parents) or "none (runs outside any sweep)"),
        f"- Learners: {', '.join(sorted(learner_labels(runs).unique()))}; datasets: "
        f"{', '.join(sorted(_column(runs, 'tags.dataset').dropna().unique()))}",
        f"- Runs the runner tagged `bound_violated=true`: {flagged}",
        "",
        "## Mistake bounds per learner",
        "",
    ]
    if table.empty:
        lines.append("No run logged a mistake bound (see the runs' `bounds.skipped` tag).")
    else:
        total = int(table.loc[table["bound"] != "tightest", "violations"].sum())
        lines += [
            f"A violation is mistakes > bound beyond the relative tolerance "
            f"{TOLERANCE} of "
            "`lincls.bounds.holds`; the ratio is mistakes / bound (1 = met exactly). "
            "`tightest` is each run's smallest bound.",
            "",
            "| learner | bound | runs | violations | median ratio | max ratio |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for row in table.itertuples(index=False):
            lines.append(
                f"| {row.learner} | {row.bound} | {row.runs} | {row.violations} | "
                f"{_num(row.median_ratio)} | {_num(row.max_ratio)} |"
            )
        lines += ["", f"Violations in all: **{total}**."]
    lines += ["", "## Dataset families", ""]
    for row in families.itertuples(index=False):
        if row.bounded_runs == 0:
            lines.append(f"- `{row.dataset}`: {row.runs} runs, none with a mistake bound")
            continue
        # A tight instance computes its bound as e.g. 9.000000000000002 for 9: 1 up to rounding.
        met = abs(row.min_ratio - 1.0) <= RELATIVE_TOLERANCE >= abs(row.max_ratio - 1.0)
        exact = f" (every run meets its bound: ratio 1 within {TOLERANCE})" if met else ""
        lines.append(
            f"- `{row.dataset}`: {row.runs} runs, tightest-bound ratio "
            f"{_num(row.min_ratio)} to {_num(row.max_ratio)}{exact}"
        )
    lines += [
        "",
        "## Scaling with γ and R",
        "",
        "Least squares log M = a + s_γ log γ + s_R log R per learner × dataset × order, with γ "
        "and R the certified margin and radius logged by each run. Novikoff's (R/γ)² gives "
        f"s_γ = {THEORY_SLOPE_GAMMA:+g} and s_R = {THEORY_SLOPE_RADIUS:+g} on worst-case orders "
        "(the orthonormal instance is one); a friendly order makes fewer mistakes and flatter "
        "slopes. rms is the residual in natural-log units.",
        "",
        "| learner | dataset | order | runs | s_γ | s_R | rms | note |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for fit in fits:
        lines.append(
            f"| {fit.learner} | {fit.dataset} | {fit.order} | {fit.runs} | "
            f"{_slope(fit.slope_gamma)} | {_slope(fit.slope_radius)} | "
            f"{'–' if math.isnan(fit.rms) else f'{fit.rms:.3g}'} | {fit.note} |"
        )
    lines += ["", "## Plots", ""]
    titles = {
        "mistakes_vs_bound.png": "Mistakes against the tightest bound (log–log, y = x)",
        "bound_ratios.png": "Bound ratios per learner and bound",
        "mistakes_vs_gamma.png": "Mistakes against γ with the theory curve (R/γ)²",
        "cumulative_mistakes.png": "Cumulative mistakes against the bound (a sample of runs)",
        "decision_boundaries.png": "Decision boundaries on 2-D data",
    }
    for name in PLOT_FILES:
        why = plots.get(name, "not drawn")
        if why is None:
            lines += [f"### {titles[name]}", "", f"![{titles[name]}]({name})", ""]
        else:
            lines += [f"### {titles[name]}", "", f"Left out: {why}.", ""]
    lines += [f"The runs, one per row: [`{RUNS_FILE}`]({RUNS_FILE}).", ""]
    return "\n".join(lines)


def write_report(client, selection: Selection, out_dir: Path) -> list[Path]:
    """Write report.md, the plots and runs.csv into ``out_dir``; the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (REPORT_FILE, RUNS_FILE, *PLOT_FILES):  # no stale plot from an earlier report
        (out_dir / name).unlink(missing_ok=True)
    runs = selection.runs
    curves = {}
    for run_id in curve_sample(runs)["run_id"]:
        history = client.get_metric_history(run_id, "cumulative_mistakes")
        curves[run_id] = [(int(p.step), float(p.value)) for p in history]
    plots = {
        "mistakes_vs_bound.png": plot_mistakes_vs_bound(runs, out_dir / "mistakes_vs_bound.png"),
        "bound_ratios.png": plot_bound_ratios(runs, out_dir / "bound_ratios.png"),
        "mistakes_vs_gamma.png": plot_mistakes_vs_gamma(runs, out_dir / "mistakes_vs_gamma.png"),
        "cumulative_mistakes.png": plot_cumulative(
            runs, curves, out_dir / "cumulative_mistakes.png"
        ),
        "decision_boundaries.png": plot_decision_boundaries(
            runs, out_dir / "decision_boundaries.png"
        ),
    }
    text = render(selection, bound_table(runs), fit_slopes(runs), family_ranges(runs), plots)
    (out_dir / REPORT_FILE).write_text(text, encoding="utf-8")
    runs.to_csv(out_dir / RUNS_FILE, index=False)
    drawn = [out_dir / name for name, why in plots.items() if why is None]
    return [out_dir / REPORT_FILE, out_dir / RUNS_FILE, *drawn]


def open_store(uri: str, experiment: str):
    """A client of an existing store and the id of ``experiment`` in it (never creates either)."""
    from mlflow.tracking import MlflowClient

    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///") :]).is_file():
        raise LinclsInputError("tracking-uri", f"no MLflow store at {uri} (run a sweep first)")
    client = MlflowClient(tracking_uri=uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        raise LinclsInputError("experiment", f"no experiment named {experiment!r} in {uri}")
    return client, found.experiment_id


def safe_name(study: str) -> str:
    """A study name as a directory name."""
    return _SAFE_NAME.sub("_", study).strip("._") or "study"


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit code (2 on bad input)."""
    parser = argparse.ArgumentParser(
        prog="python -m experiments.report", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "target", nargs="?", help="a study name or a sweep's parent run id (default: latest sweep)"
    )
    parser.add_argument(
        "--tracking-uri",
        help="the MLflow store (default: $MLFLOW_TRACKING_URI, else results/mlflow.db)",
    )
    parser.add_argument("--experiment", default=tracking.DEFAULT_EXPERIMENT)
    parser.add_argument("--out", type=Path, help="where the files go (default: results/<study>/)")
    args = parser.parse_args(argv)
    from mlflow.exceptions import MlflowException

    uri = tracking.resolve_tracking_uri(args.tracking_uri)
    try:
        client, experiment_id = open_store(uri, args.experiment)
        selection = select_runs(client, experiment_id, args.target)
        out_dir = args.out or tracking.project_root() / "results" / safe_name(selection.study)
        files = write_report(client, selection, out_dir)
        for path in files if selection.parents else ():  # runs outside a sweep: no parent
            client.log_artifact(selection.parents[0], str(path), artifact_path="report")
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except MlflowException as exc:
        print(f"error: tracking-uri: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    logged = f"; also artifacts report/ of run {selection.parents[0]}" if selection.parents else ""
    print(
        f"report: {out_dir / REPORT_FILE} "
        f"({selection.runs.shape[0]} runs of study {selection.study!r}{logged})"
    )
    if uri == tracking.default_tracking_uri():
        print("MLflow UI: make ui  (then http://127.0.0.1:5000)")
    else:
        print(f"MLflow UI: mlflow ui --backend-store-uri {uri} --workers 1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
