"""Run figures: what drawing a run's figure costs, against matplotlib drawing the same picture.

A sweep of ``N`` configs (the ``sweep`` section's shape, the lincls launcher in one process) runs
into a fresh SQLite store; a run's figure (``lincls.figures``, an SVG) is drawn from its record
when the UI asks for it (``lincls.tracking.record``), so it takes no disk. The curves of its runs
are read back in one query and each figure drawn here, timed per figure (best of 3 over the whole
set), beside the PNG that matplotlib's Agg canvas draws of the same curves (one ``Figure``
reused, fixed margins: matplotlib at its cheapest). The notes say the share of a run's own time
a figure takes (the target: at most 10 ms, or 10 % of the run) and its bytes as served (the
target: at most 10 KB).
"""

from __future__ import annotations

import io
import statistics
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.sweep import _sweep


def _matplotlib_drawer():
    """A function drawing the same two plots as a PNG with one reused matplotlib figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 1.96), dpi=100)
    figure.subplots_adjust(left=0.07, right=0.66, bottom=0.1, top=0.96, hspace=0.5)
    FigureCanvasAgg(figure)
    top, bottom = figure.subplots(2, 1)

    def draw(curves, bound_name: str) -> bytes:
        for axes in (top, bottom):
            axes.clear()
        mistakes = curves.get("cumulative_mistakes") or [(1, 0.0)]
        top.step(*zip(*mistakes, strict=True), where="post", label="mistakes")
        bound = curves.get("cumulative_mistakes_bound")
        if bound:
            top.axhline(bound[0][1], linestyle="--", color="C3", label=f"bound {bound_name}")
        top.set_xscale("log")
        top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
        for key in ("lemma.progress", "lemma.norm", "lemma.mistakes"):
            if curves.get(key):
                bottom.plot(*zip(*curves[key], strict=True), label=key)
        out = io.BytesIO()
        figure.savefig(out, format="png")
        return out.getvalue()

    return draw


def _per_figure(draw, curves: dict, bounds: dict) -> float:
    """Seconds a figure, the best of 3 passes over every run."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for run_id, found in curves.items():
            draw(found, bounds.get(run_id) or "")
        best = min(best, (time.perf_counter() - start) / len(curves))
    return best


def run(quick: bool = False) -> list[Row]:
    """The figures section: a run's SVG figure against matplotlib's PNG of the same curves."""
    from lincls.figures import CURVES, draw_run_figure
    from lincls.tracking import reader

    configs = 20 if quick else 200
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp)
        seconds, children = _sweep(store, configs, [])
        per_run = seconds / len(children)
        ids = [run.info.run_id for run in children]
        engine = reader.engine_for(f"sqlite:///{store / 'mlflow.db'}")
        try:
            by_key = reader.curves_of(engine, ids, CURVES)
        finally:
            engine.dispose()
        curves = {run_id: {key: by_key[key][run_id] for key in CURVES} for run_id in ids}
        bounds = {run.info.run_id: run.data.tags.get("bound.tightest") for run in children}
    sizes = [len(draw_run_figure(found, bounds[r] or "").encode()) for r, found in curves.items()]
    ours = _per_figure(draw_run_figure, curves, bounds)
    peer = _per_figure(_matplotlib_drawer(), curves, bounds)
    note = (
        f"{len(children)} runs of a sweep, {per_run * 1e3:.1f} ms a run; its figure "
        f"{ours * 1e3:.2f} ms ({ours / per_run:.1%} of a run; target ≤ 10 ms or 10 %), "
        f"{len(sizes)} figures drawn (none on disk), {statistics.mean(sizes) / 1e3:.1f} KB a "
        f"run on average, {max(sizes) / 1e3:.1f} KB at most (target ≤ 10 KB)"
    )
    return [
        Row("figures", "a run's figure (SVG, drawn from its record)", ours, peer,
            "matplotlib Agg PNG, one reused figure", 1.0, None, note),
    ]  # fmt: skip
