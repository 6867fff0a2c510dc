"""A run's picture: its cumulative mistakes under its bound, and the two lemmas of Novikoff's proof.

One small PNG (matplotlib's Agg canvas, no pyplot state) drawn from the curves a run logs
(``measures.record_metrics``, ``measures.slack_metrics``, ``measures.companion_curves``):

- left, ``cumulative_mistakes`` against the examples presented, under the run's tightest a
  priori bound (``cumulative_mistakes_bound``, dashed), so a curve that stays under the line
  is a bound that holds;
- right, ``lemma.progress`` (w·u/γ, at least the mistake count k) and ``lemma.norm`` (‖w‖²/R², at
  most k) against the mistakes, with the line k between them (``lemma.mistakes``, dashed).

Drawing one takes ~0.1 s (no layout engine, no math text), longer than most runs: the report
draws them (``experiments.report.figures``), never a sweep.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

FIGURE_FILE = "mistakes_and_bound.png"  # the run's artifact
SIZE_INCHES = (6.4, 2.5)
DPI = 100  # 640 × 250 pixels
Curve = Sequence[tuple[int, float]]
CURVES = (
    "cumulative_mistakes",
    "cumulative_mistakes_bound",
    "lemma.progress",
    "lemma.norm",
    "lemma.mistakes",
)


def draw_run_figure(curves: Mapping[str, Curve], title: str = "", bound_name: str = "") -> bytes:
    """The PNG of one run's curves (``CURVES``, as (step, value) points; any may be missing).

    ``bound_name`` names the tightest a priori bound in the legend (``bound.tightest``'s tag)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

    # fixed margins: a layout engine (constrained, tight) costs more than the drawing itself
    figure = Figure(figsize=SIZE_INCHES, dpi=DPI)
    figure.subplots_adjust(left=0.08, right=0.99, bottom=0.17, top=0.91, wspace=0.2)
    FigureCanvasAgg(figure)
    left, right = figure.subplots(1, 2)
    small = {"fontsize": 7}
    for axes in (left, right):  # few ticks: drawing them is most of a figure's time
        axes.tick_params(labelsize=6)
        axes.xaxis.set_major_locator(MaxNLocator(5))
        axes.yaxis.set_major_locator(MaxNLocator(5))
    mistakes = curves.get("cumulative_mistakes") or []
    if mistakes:
        steps, values = zip(*mistakes, strict=True)
        left.step(steps, values, where="post", color="C0", label="cumulative mistakes")
        bound = curves.get("cumulative_mistakes_bound") or []
        if bound:
            label = f"bound {bound_name} = {bound[0][1]:.4g}" if bound_name else "tightest bound"
            left.axhline(bound[0][1], color="C3", linestyle="--", label=label)
        else:
            left.plot([], [], " ", label="no a priori bound")
        if steps[-1] > 10 * max(steps[0], 1):
            left.set_xscale("log")  # plain numbers: math text (10ⁿ) doubles the drawing's cost
            left.xaxis.set_major_locator(LogLocator(numticks=5))
            left.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            left.xaxis.set_minor_locator(NullLocator())
        left.set_ylim(bottom=0)
        left.legend(loc="center right", **small)
    else:
        left.text(0.5, 0.5, "no mistake curve", ha="center", va="center", **small)
    left.set_xlabel("examples presented", **small)
    left.set_ylabel("mistakes", **small)
    progress = curves.get("lemma.progress") or []
    norm = curves.get("lemma.norm") or []
    if progress or norm:
        for name, curve, color in (("w·u/γ", progress, "C2"), ("‖w‖²/R²", norm, "C1")):
            if curve:
                steps, values = zip(*curve, strict=True)
                right.plot(steps, values, color=color, label=name)
        line = curves.get("lemma.mistakes") or []
        if line:
            steps, values = zip(*line, strict=True)
            right.plot(steps, values, color="0.3", linestyle="--", label="mistakes k")
        right.legend(loc="upper left", **small)
    else:
        right.text(0.5, 0.5, "no lemma curves for this run", ha="center", va="center", **small)
        right.set_xticks([])
        right.set_yticks([])
    right.set_xlabel("mistakes k", **small)
    right.set_title("Novikoff's lemmas: w·u/γ ≥ k ≥ ‖w‖²/R²", **small)
    if title:
        left.set_title(title, **small)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI)
    return out.getvalue()
