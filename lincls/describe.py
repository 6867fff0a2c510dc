"""The descriptions the MLflow UI shows on a run's page (``mlflow.note.content``), in markdown.

A run says what ran, how many mistakes it made against its tightest bound, which factor of
Novikoff's proof holds it back where that is logged, and what the step of each chart counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lincls.tags import learner_label

CURVE_STEPS = {
    "cumulative_mistakes": "examples presented",
    "cumulative_mistakes_bound": "examples presented (the tightest bound, for overlay)",
    "mistakes_per_pass": "passes",
    "mistakes_per_batch": "mini-batches",
    "lemma.progress": "mistakes (w·u/γ; Lemma 1 keeps it ≥ the mistake count)",
    "lemma.norm": "mistakes (‖w‖²/R²; Lemma 2 keeps it ≤ the mistake count)",
    "lemma.mistakes": "mistakes (the mistake count: the line both lemmas are drawn against)",
    "log_likelihood_per_iteration": "iterations",
}
FACTORS = ("progress", "angle", "norm")


def _g(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def describe_run(
    config: Mapping[str, Any],
    metrics: Mapping[str, float],
    tags: Mapping[str, str],
    curves: Mapping[str, Any] = (),
) -> str:
    """The run's description: config in one line, the result, the slack, the charts' steps."""
    learner = config.get("learner") or {}
    dataset = config.get("dataset") or {}
    shape = ", ".join(
        f"{key}={_g(dataset[key])}"
        for key in ("n", "d", "margin", "radius", "offset", "flip")
        if dataset.get(key) is not None
    )
    lines = [
        f"**{learner_label(learner)}** on **{dataset.get('name')}**"
        + (f" ({shape})" if shape else "")
        + f", order {tags.get('order', config.get('order', 'fixed'))}, seed {config.get('seed')}, "
        f"up to {config.get('passes')} passes.",
        "",
    ]
    if "mistakes" in metrics:
        lines.append(
            f"{_g(metrics['mistakes'])} mistakes in {_g(metrics.get('passes_run', 0))} passes "
            f"(certified margin γ = {_g(metrics.get('margin', float('nan')))}, "
            f"radius R = {_g(metrics.get('radius', float('nan')))})."
        )
    if "bound.tightest" in metrics:
        lines.append(
            f"Tightest bound: **{tags.get('bound.tightest')}** = {_g(metrics['bound.tightest'])}, "
            f"ratio mistakes/bound = **{_g(metrics['bound_ratio.tightest'])}**"
            + (" — VIOLATED" if tags.get("bound_violated") == "true" else "")
            + "."
        )
    elif tags.get("bounds.none"):
        lines.append(f"No mistake bound: {tags['bounds.none']}.")
    if "bound_slack.progress" in metrics:
        factors = {f: metrics[f"bound_slack.{f}"] for f in FACTORS}
        weakest = min(factors, key=factors.__getitem__)
        lines.append(
            f"Against {tags.get('bound_slack.bound', 'Novikoff')}, mistakes/bound = "
            + " · ".join(f"{f} {_g(v)}" for f, v in factors.items())
            + f": held back by **{weakest}**."
        )
    charted = [name for name in CURVE_STEPS if name in curves]
    if charted:
        lines += [
            "",
            "Charts (step = …): " + "; ".join(f"`{n}`: {CURVE_STEPS[n]}" for n in charted),
        ]
    return "\n".join(lines)
