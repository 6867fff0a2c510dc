"""A run's picture: its cumulative mistakes under its bound, and the two lemmas of Novikoff's proof.

One small SVG drawn from the curves a run logs (``measures.record_metrics``,
``measures.slack_metrics``, ``measures.companion_curves``), by the run itself, as a text artifact
beside its others (``FIGURE_FILE``); its description opens with it (``figure_markdown``):

- top, ``cumulative_mistakes`` against the examples presented under the run's tightest a priori
  bound (``cumulative_mistakes_bound``, dashed), so a curve that stays under the line is a bound
  that holds. It fits the 100 px the MLflow UI shows of a folded description;
- below, ``lemma.progress`` (w·u/γ, at least the mistake count k) and ``lemma.norm`` (‖w‖²/R², at
  most k) against the mistakes, with the line k between them (``lemma.mistakes``, dashed).

Legends stand to the right of the plots, never on a curve; counts get integer ticks. The SVG is
written here rather than by matplotlib: a run draws its own picture, so it must cost a small part
of a cheap run (~0.3 ms and ~3 KB here, against ~85 ms and ~32 KB for matplotlib's PNG, ~20 ms and
~25 KB for its SVG; ``make bench``, section ``figures``), and a run imports no matplotlib.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import quote

FIGURE_FILE = "mistakes_and_bound.svg"  # the run's artifact
# What earlier reports drew (matplotlib PNGs): a run whose description shows one has its figure.
EARLIER_FIGURE_FILES = ("mistakes_and_bound.png",)
FIGURE_ALT = "cumulative mistakes under the bound, and Novikoff's lemmas"
Curve = Sequence[tuple[int, float]]
CURVES = (
    "cumulative_mistakes",
    "cumulative_mistakes_bound",
    "lemma.progress",
    "lemma.norm",
    "lemma.mistakes",
)
WIDTH = 640
PLOT_LEFT, PLOT_RIGHT, LEGEND_LEFT = 46, 420, 432
TOP = (8, 64)  # the mistakes' plot, top to bottom (px)
BOTTOM = (114, 178)  # the lemmas' plot
TICK_GAP = 12  # from a plot's bottom to its tick labels' baseline
COLORS = {"mistakes": "#1f77b4", "bound": "#d62728", "progress": "#2ca02c", "norm": "#ff7f0e",
          "k": "#4d4d4d", "axis": "#666666", "grid": "#e6e6e6"}  # fmt: skip
# A bound this many times the mistakes would flatten their curve: it is named above the plot.
OFF_SCALE = 10.0


def figure_markdown(run_id: str, file: str = FIGURE_FILE) -> str:
    """The run's figure as markdown its description shows: an image from the server's
    ``get-artifact`` route, relative to the UI's page, so the run's page shows it on opening
    (MLflow's markdown keeps ``img`` with ``src``)."""
    return f"![{FIGURE_ALT}](get-artifact?path={quote(file)}&run_uuid={quote(run_id)})"


def shows_figure(note: str | None, run_id: str) -> bool:
    """Whether a description ``note`` shows the run's figure (this one or an earlier kind's)."""
    return bool(note) and any(
        figure_markdown(run_id, file) in note for file in (FIGURE_FILE, *EARLIER_FIGURE_FILES)
    )


def with_figure(note: str, run_id: str) -> str:
    """``note`` opening with the run's figure (first: the UI folds a long description and shows
    its top), unchanged when it shows one already."""
    if shows_figure(note, run_id):
        return note
    return f"{figure_markdown(run_id)}\n\n{note}".rstrip() + "\n"


def number(value: float) -> str:
    """A count as an integer, anything else to 4 significant digits (thousands separated)."""
    if math.isfinite(value) and value == round(value) and abs(value) < 1e15:
        return f"{round(value):,}"
    if math.isfinite(value) and abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def nice_ticks(low: float, high: float, count: int = 5, integer: bool = True) -> list[float]:
    """About ``count`` round tick values (1, 2, 2.5 or 5 × 10ᵏ apart) covering [low, high];
    whole numbers only where ``integer``."""
    if not high > low:
        return [low]
    raw = (high - low) / count
    scale = 10.0 ** math.floor(math.log10(raw))
    steps = (1, 2, 5, 10) if integer else (1, 2, 2.5, 5, 10)
    step = next(s * scale for s in steps if s * scale >= raw)
    if integer:
        step = max(1.0, round(step))
    first = math.ceil(low / step - 1e-9) * step
    return [first + k * step for k in range(int((high - first) / step + 1e-9) + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten within [low, high], at most six (every other one beyond that)."""
    exponents = range(math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9) + 1)
    powers = [10.0**e for e in exponents]
    return powers[:: 1 + (len(powers) - 1) // 6] if powers else [low]


class _Axis:
    """Data to pixels along one axis (linear, or log10 where ``log``)."""

    def __init__(self, low: float, high: float, start: float, end: float, log: bool = False):
        self.log = log
        self.low, self.high = (math.log10(low), math.log10(high)) if log else (low, high)
        if not self.high > self.low:
            self.high = self.low + 1.0
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        value = math.log10(value) if self.log else value
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)


class _Svg:
    """The SVG's elements, in drawing order."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def text(self, x: float, y: float, words: str, anchor: str = "start", **style: str) -> None:
        extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in style.items())
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{escape(words)}</text>'
        )

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str, dash: str = "") -> None:
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{color}"{dashed}/>'
        )

    def path(self, points: list[tuple[float, float]], color: str, step: bool = False) -> None:
        if not points:
            return
        moves = [f"M{points[0][0]:.1f} {points[0][1]:.1f}"]
        x0, y0 = points[0]
        for k, (x, y) in enumerate(points[1:], start=1):
            last = k == len(points) - 1
            if step:  # a step curve turns only where its value changes
                if abs(y - y0) >= 0.05:
                    moves.append(f"H{x:.1f}V{y:.1f}")
                    x0, y0 = x, y
                elif last:
                    moves.append(f"H{x:.1f}")
                continue
            if abs(x - x0) < 1 and abs(y - y0) < 1 and not last:
                continue  # less than a pixel's change does not show
            moves.append(f"L{x:.1f} {y:.1f}")
            x0, y0 = x, y
        self.parts.append(
            f'<path d="{"".join(moves)}" fill="none" stroke="{color}" stroke-width="1.6"/>'
        )

    def legend(self, y: float, color: str, words: str, dash: str = "") -> None:
        self.line(LEGEND_LEFT, y - 3.5, LEGEND_LEFT + 18, y - 3.5, color, dash)
        self.text(LEGEND_LEFT + 23, y, words)


def _frame(svg: _Svg, x: _Axis, y: _Axis, xticks: list[float], yticks: list[float]) -> None:
    """Grid lines, the plot's box and its tick labels."""
    top, bottom = y.end, y.start
    for value in yticks:
        at = y(value)
        svg.line(PLOT_LEFT, at, PLOT_RIGHT, at, COLORS["grid"])
        svg.text(PLOT_LEFT - 4, at + 3.5, number(value), "end")
    for value in xticks:
        at = x(value)
        svg.line(at, bottom, at, bottom + 3, COLORS["axis"])
        svg.text(at, bottom + TICK_GAP, number(value), "middle")
    svg.parts.append(
        f'<rect x="{PLOT_LEFT}" y="{top}" width="{PLOT_RIGHT - PLOT_LEFT}" '
        f'height="{bottom - top}" fill="none" stroke="{COLORS["axis"]}"/>'
    )


def _mistakes_plot(svg: _Svg, curves: Mapping[str, Curve], bound_name: str) -> None:
    mistakes = list(curves.get("cumulative_mistakes") or [])
    if not mistakes:
        svg.text((PLOT_LEFT + PLOT_RIGHT) / 2, sum(TOP) / 2, "no mistake curve", "middle")
        return
    bound_curve = curves.get("cumulative_mistakes_bound") or []
    bound = float(bound_curve[0][1]) if bound_curve else None
    final = float(mistakes[-1][1])
    shown = bound is not None and math.isfinite(bound) and bound <= OFF_SCALE * max(final, 1.0)
    high = max(final, bound if shown else 0.0, 1.0) * 1.08
    first, last = max(mistakes[0][0], 1), max(mistakes[-1][0], 1)
    log = last > 10 * first
    x = _Axis(first, max(last, first + 1), PLOT_LEFT, PLOT_RIGHT, log)
    y = _Axis(0.0, high, TOP[1], TOP[0])
    xticks = log_ticks(first, last) if log else nice_ticks(first, last)
    _frame(svg, x, y, xticks, nice_ticks(0.0, high, 3, integer=True))
    if shown:
        svg.line(PLOT_LEFT, y(bound), PLOT_RIGHT, y(bound), COLORS["bound"], "5 3")
    svg.path([(x(max(s, 1)), y(v)) for s, v in mistakes], COLORS["mistakes"], step=True)
    svg.legend(TOP[0] + 10, COLORS["mistakes"], f"mistakes {number(final)}")
    if bound is None:
        svg.text(LEGEND_LEFT, TOP[0] + 25, "no a priori bound", fill=COLORS["axis"])
    else:
        name = f"bound {bound_name}" if bound_name else "tightest bound"
        off = "" if shown else " (off the scale)"
        svg.legend(TOP[0] + 25, COLORS["bound"], f"{name} = {number(bound)}{off}", "5 3")
        if bound > 0:
            svg.text(LEGEND_LEFT, TOP[0] + 40, f"mistakes / bound = {final / bound:.4g}")
    scale = " (log scale)" if log else ""
    svg.text(LEGEND_LEFT, TOP[1] + TICK_GAP, f"x: examples presented{scale}", fill=COLORS["axis"])


def _lemma_plot(svg: _Svg, curves: Mapping[str, Curve]) -> None:
    named = (("w·u/γ", "lemma.progress", "progress"), ("‖w‖²/R²", "lemma.norm", "norm"),
             ("mistakes k", "lemma.mistakes", "k"))  # fmt: skip
    drawn = [(label, list(curves[key]), color) for label, key, color in named if curves.get(key)]
    svg.text(PLOT_LEFT, BOTTOM[0] - 8, "Novikoff's lemmas: w·u/γ ≥ k ≥ ‖w‖²/R²", font_weight="bold")
    steps = [s for _, curve, _ in drawn for s, _ in curve]
    values = [v for _, curve, _ in drawn for _, v in curve]
    low, high = min(steps), max(steps)
    x = _Axis(low, max(high, low + 1), PLOT_LEFT, PLOT_RIGHT)
    top = max(max(values), 1.0) * 1.05
    bottom = min(min(values), 0.0)
    y = _Axis(bottom, top, BOTTOM[1], BOTTOM[0])
    _frame(svg, x, y, nice_ticks(low, high), nice_ticks(bottom, top, 3, integer=False))
    for row, (label, curve, color) in enumerate(drawn):
        dash = "5 3" if color == "k" else ""
        svg.path([(x(s), y(v)) for s, v in curve], COLORS[color])
        if dash:
            svg.parts[-1] = svg.parts[-1].replace("/>", f' stroke-dasharray="{dash}"/>')
        svg.legend(BOTTOM[0] + 10 + 15 * row, COLORS[color], label, dash)
    svg.text(LEGEND_LEFT, BOTTOM[1] + TICK_GAP, "x: mistakes k", fill=COLORS["axis"])


def draw_run_figure(curves: Mapping[str, Curve], bound_name: str = "") -> str:
    """The SVG of one run's curves (``CURVES``, as (step, value) points; any may be missing).

    ``bound_name`` names the tightest a priori bound in the legend (``bound.tightest``'s tag).
    Without lemma curves the picture is the mistakes' plot alone."""
    svg = _Svg()
    _mistakes_plot(svg, curves, bound_name)
    lemmas = curves.get("lemma.progress") or curves.get("lemma.norm")
    height = (BOTTOM[1] if lemmas else TOP[1]) + TICK_GAP + 6
    if lemmas:
        _lemma_plot(svg, curves)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans, Arial, sans-serif" '
        f'font-size="10" fill="#262626"><title>{escape(FIGURE_ALT)}</title>'
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>'
    )
    return head + "".join(svg.parts) + "</svg>\n"
