"""The descriptions the MLflow UI shows on a run's page (``mlflow.note.content``), in markdown.

A run says what ran, how many mistakes it made against its tightest bound and which factor of
Novikoff's proof holds it back where that is logged. Its curves are drawn in its figure, which
the description opens with; what a curve's step counts is ``CURVE_STEPS`` (the docs list it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lincls.config.run import RunConfig
from lincls.figures import number
from lincls.tracking.tags import learner_label

CURVE_STEPS = {
    "cumulative_mistakes": "examples presented",
    "cumulative_mistakes_bound": "examples presented (the tightest a priori bound, for overlay)",
    "mistakes_per_pass": "passes",
    "mistakes_per_batch": "mini-batches",
    "lemma.progress": "mistakes (w·u/γ; Lemma 1 keeps it ≥ the mistake count)",
    "lemma.norm": "mistakes (‖w‖²/R²; Lemma 2 keeps it ≤ the mistake count)",
    "lemma.mistakes": "mistakes (the mistake count: the line both lemmas are drawn against)",
    "log_likelihood_per_iteration": "iterations",
}
FACTORS = ("progress", "angle", "norm")
# A slack factor this close to 1 is 1 up to rounding: it holds nothing back.
FACTOR_ROUNDING = 1e-9


def _passes(count: Any) -> str:
    return f"{rounded(count)} pass" + ("" if count == 1 else "es")


def held_back_by(factors: Mapping[str, float]) -> str | None:
    """The slack factor furthest below 1, or None when every one is 1 up to rounding."""
    weakest = min(factors, key=factors.__getitem__)
    return weakest if factors[weakest] < 1.0 - FACTOR_ROUNDING else None


def rounded(value: Any) -> str:
    """A number as a person reads it (the description, the runs table's columns): a count as an
    integer, anything else to 4 significant digits (``figures.number``); not a number: its text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return number(float(value))


def rounded_ratio(value: Any) -> str:
    """A ratio to 4 significant digits, except that one further than rounding from 1 never
    reads "1": just above, it is a broken bound; just below, a bound not met. It gets the digits
    that tell it from 1."""
    text = rounded(value)
    digits = 4
    while text == "1" and abs(value - 1.0) > FACTOR_ROUNDING and digits < 17:
        digits += 1
        text = f"{value:.{digits}g}"
    return text


def describe_run(
    config: RunConfig | Mapping[str, Any], metrics: Mapping[str, float], tags: Mapping[str, str]
) -> str:
    """The run's description: config in one line, the result, the slack (a plain ``config``
    read as given: ``RunConfig.unchecked``)."""
    config = RunConfig.of(config, checked=False)
    learner, dataset = config.learner, config.dataset
    shape = ", ".join(
        f"{key}={rounded(dataset[key])}"
        for key in ("n", "d", "margin", "radius", "offset", "flip")
        if dataset.get(key) is not None
    )
    lines = [
        f"**{learner_label(learner)}** on **{dataset.get('name')}**"
        + (f" ({shape})" if shape else "")
        + f", order {tags.get('order', config.order)}, seed {config.seed}, "
        f"up to {_passes(config.passes)}.",
        "",
    ]
    if "mistakes" in metrics:
        lines.append(
            f"{rounded(metrics['mistakes'])} mistakes in {_passes(metrics.get('passes_run', 0))} "
            f"(certified margin γ = {rounded(metrics.get('margin', float('nan')))}, "
            f"radius R = {rounded(metrics.get('radius', float('nan')))})."
        )
    for key, family in (("tightest", "a priori"), ("tightest_a_posteriori", "a posteriori")):
        if f"bound.{key}" in metrics:
            lines.append(
                f"Tightest {family} bound: **{tags.get(f'bound.{key}')}** = "
                f"{rounded(metrics[f'bound.{key}'])}, ratio mistakes/bound = "
                f"**{rounded_ratio(metrics[f'bound_ratio.{key}'])}**."
            )
    if tags.get("bound_violated") == "true":
        lines.append("A bound is VIOLATED (see the `bound_ratio.*` above 1).")
    if tags.get("bounds.vacuous"):
        lines.append(
            "Vacuous here (at or above the mistakes any learner could make: for a theorem "
            "about this sequence, the examples presented; for one about every sequence of the "
            "data's margin and radius, passes × rows; so they say nothing of this run, and are "
            f"logged without a ratio): {tags['bounds.vacuous']}."
        )
    if "bound.tightest" not in metrics and tags.get("bounds.none"):
        lines.append(f"No mistake bound: {tags['bounds.none']}.")
    if "bound_slack.progress" in metrics:
        factors = {f: metrics[f"bound_slack.{f}"] for f in FACTORS}
        weakest = held_back_by(factors)
        lines.append(
            f"Against {tags.get('bound_slack.bound', 'Novikoff')}, mistakes/bound = "
            + " · ".join(f"{f} {rounded_ratio(v)}" for f, v in factors.items())
            + (f": held back by **{weakest}**." if weakest else ": every factor is 1.")
        )
    return "\n".join(lines)
