"""The report's pass over every run it covers: each run's picture and its colour in the UI.

- Each run gets ``lincls.figures.FIGURE_FILE`` as an artifact (its cumulative mistakes under its
  tightest a priori bound and Novikoff's two lemmas), so its page shows it in the Artifacts tab.
  Drawn here, never in a sweep: one figure costs more than most runs (``make bench``, section
  ``figures``). A run that has its figure keeps it (runs do not change once FINISHED).
  Its description (the run page's Overview) opens with the figure too, an image from the
  server's ``get-artifact`` route: the run's page shows it on opening, no click needed.
- Each run without a colour gets one (the tag ``mlflow.runColor``, which MLflow's UI draws the
  run in), distinct from the colours the report's other runs have: MLflow otherwise picks a
  run's colour by a hash of its id among 29, and two runs of ten often share one.
"""

from __future__ import annotations

import colorsys
import tempfile
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from lincls.figures import CURVES, FIGURE_FILE, draw_run_figure
from lincls.tracking.tags import NOTE_TAG

COLOR_TAG = "mlflow.runColor"
FIGURE_ALT = "cumulative mistakes under the bound, and Novikoff's lemmas"
# Kelly's colours of maximum contrast, without white and black: 20 that tell apart at a glance.
PALETTE = (
    "#f3c300", "#875692", "#f38400", "#a1caf1", "#be0032", "#c2b280", "#848482", "#008856",
    "#e68fac", "#0067a5", "#f99379", "#604e97", "#f6a600", "#b3446c", "#dcd300", "#882d17",
    "#8db600", "#654522", "#e25822", "#2b3d26",
)  # fmt: skip


def color(index: int) -> str:
    """The ``index``-th colour: Kelly's 20, then hues a golden angle apart (distinct, if closer)."""
    if index < len(PALETTE):
        return PALETTE[index]
    hue = (index * 0.618033988749895) % 1.0
    lightness = (0.35, 0.5, 0.65)[index % 3]
    r, g, b = colorsys.hls_to_rgb(hue, lightness, 0.75)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def run_colors(runs: pd.DataFrame, existing: dict[str, str]) -> dict[str, str]:
    """A colour for each run of ``runs`` (in their order) that has none in ``existing``, none
    of them one that another run has."""
    used = set(existing.values())
    fresh = (c for c in (color(i) for i in range(len(runs) + len(used) + 1)) if c not in used)
    return {run_id: next(fresh) for run_id in runs["run_id"] if run_id not in existing}


def _has_figure(client, run_id: str) -> bool:
    return any(item.path == FIGURE_FILE for item in client.list_artifacts(run_id))


def figure_markdown(run_id: str) -> str:
    """The run's figure as markdown its description shows: an image fetched from the server's
    ``get-artifact`` route, relative to the UI's page, so the run's page shows it on opening
    (MLflow's markdown keeps ``img`` with ``src``)."""
    return f"![{FIGURE_ALT}](get-artifact?path={quote(FIGURE_FILE)}&run_uuid={quote(run_id)})"


def show_figures(client, tags: dict[str, dict[str, str]]) -> int:
    """Put each run's figure at the head of its description (``mlflow.note.content``) unless it
    is there, given each run's tags by run id; how many descriptions changed."""
    changed = 0
    for run_id, found in tags.items():
        note = found.get(NOTE_TAG) or ""
        shown = figure_markdown(run_id)
        if shown in note:
            continue
        # first: the page folds a long description, and shows its top
        client.set_tag(run_id, NOTE_TAG, f"{shown}\n\n{note}".rstrip() + "\n")
        changed += 1
    return changed


def draw_figures(client, runs: pd.DataFrame) -> int:
    """Draw and log the figure of each run of ``runs`` that has none; how many were drawn."""
    drawn = 0
    with tempfile.TemporaryDirectory() as tmp:
        for _, run in runs.iterrows():
            run_id = run["run_id"]
            if _has_figure(client, run_id):
                continue
            curves = {}
            for key in CURVES:
                history = client.get_metric_history(run_id, key)
                curves[key] = sorted((int(p.step), float(p.value)) for p in history)
            bound_name = run.get("tags.bound.tightest")
            name = run.get("run_name")
            png = draw_run_figure(curves, name if isinstance(name, str) else "",
                                  bound_name if isinstance(bound_name, str) else "")  # fmt: skip
            path = Path(tmp) / run_id / FIGURE_FILE
            path.parent.mkdir()
            path.write_bytes(png)
            client.log_artifact(run_id, str(path))
            drawn += 1
    return drawn


def color_runs(client, runs: pd.DataFrame, tags: dict[str, dict[str, str]]) -> dict[str, str]:
    """Give each run of ``runs`` without a colour (in ``tags``, each run's tags by run id) a
    distinct one; the colours set, by run id."""
    existing = {run_id: tags[run_id][COLOR_TAG] for run_id in runs["run_id"]
                if tags[run_id].get(COLOR_TAG)}  # fmt: skip
    chosen = run_colors(runs, existing)
    for run_id, value in chosen.items():
        client.set_tag(run_id, COLOR_TAG, value)
    return chosen


def picture_runs(client, runs: pd.DataFrame) -> tuple[int, int]:
    """The report's pass over its runs: figures drawn (and shown in the descriptions), colours
    set. Each run's tags are read once, from the store: the report's table may not carry the
    description."""
    drawn = draw_figures(client, runs)
    tags = {run_id: client.get_run(run_id).data.tags for run_id in runs["run_id"]}
    show_figures(client, tags)
    return drawn, len(color_runs(client, runs, tags))
