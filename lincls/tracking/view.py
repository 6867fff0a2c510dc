"""The experiment's shared view of MLflow's runs table (listed under Views, opened by
``ui_path``): its columns and widths, its filter, and the Chart tab's two charts of the runs'
mistakes and their tightest bounds. Stored as one experiment tag (``VIEW_TAG``); ``view_state``
is that tag's text. The columns' numbers are tags each run writes (``shown_tags``), rounded where
its metrics are not."""

from __future__ import annotations

import json
from collections.abc import Mapping

from lincls.config.games import GAME_SCHEMAS
from lincls.tracking.describe import rounded, rounded_ratio

VIEW_KEY = "lincls"  # the experiment's shared view of the runs table, listed under Views
VIEW_NAME = "lincls"
# A fixed date (2026-01-01 UTC) as the view's creation: the tag stays the same string from one
# process to the next, so ``open_experiment`` rewrites it only when the view itself changed.
VIEW_CREATED_MS = 1767225600000
# The runs table's columns in the order they are shown, each wide enough for its header and for
# its usual values (MLflow's UI cuts both with an ellipsis and no tooltip). In a 1400×900 window,
# after MLflow's pinned checkbox (73 px) and Created (150 px) columns, the name (its learner, γ,
# R and seed first: ``tags.run_name``), the ratio, the learner and the dataset are in view
# without scrolling; then the mistakes, the bound, the data's margin and radius, the slack.
RUN_NAME_COLUMN = "attributes.`Run Name`"
VIEW_WIDTHS = {
    RUN_NAME_COLUMN: 330,  # "perceptron[feature] γ=0.05 R=1 s4 separable": 277 px, 44 of padding
    "tags.`ratio`": 90,
    "tags.`learner_label`": 320,  # "passive_aggressive (bias=feature, variant=pa1)": 290 px
    "tags.`dataset`": 130,
    "tags.`mistakes`": 100,
    "tags.`bound`": 80,
    "tags.`bound.tightest`": 200,
    "tags.`γ`": 70,
    "tags.`R`": 70,
    "tags.`bound_violated`": 160,
    "tags.`slack.progress`": 150,
    "tags.`slack.angle`": 120,
    "tags.`slack.norm`": 120,
    "attributes.`Dataset`": 300,  # its name, shape, digest and context
}
VIEW_COLUMNS = [column for column in VIEW_WIDTHS if column != RUN_NAME_COLUMN]
# MLflow's runs table shows a metric with every digit of its float (7.999999999999998): the
# view's numbers are text tags each run writes beside its metrics (which keep full precision),
# rounded to what they mean (``describe.rounded``); a run written before has none there (its
# metrics are under Columns, and sort). Tag → (metric, is a ratio).
SHOWN = {
    "ratio": ("bound_ratio.tightest", True),
    "mistakes": ("mistakes", False),
    "bound": ("bound.tightest", False),
    "γ": ("margin", False),
    "R": ("radius", False),
    "slack.progress": ("bound_slack.progress", True),
    "slack.angle": ("bound_slack.angle", True),
    "slack.norm": ("bound_slack.norm", True),
}
# The Chart tab compares a selection: the first runs of the table (the ten closest to their
# bound, in the view's order), the others hidden until their eye in the table is clicked (or
# the eye menu's "Show all"). Drawing every run of a study at once tangles 168 curves.
VIEW_CHART_SELECTION = "FIRST_10_RUNS"  # MLflow's runsHiddenMode
VIEW_CHART_RUNS = 10
VIEW_CHART_HEIGHT = 400  # px; the two charts side by side (MLflow puts 3 in a row, 360 px high)


def shown_tags(metrics: Mapping[str, float]) -> dict[str, str]:
    """The run's tags the view's columns show: its metrics of ``SHOWN`` rounded, as text."""
    return {
        tag: (rounded_ratio if ratio else rounded)(metrics[metric])
        for tag, (metric, ratio) in SHOWN.items()
        if metric in metrics
    }


# The charts of the view's Chart tab, drawn from the runs' metrics (a run's curves are in its
# record, drawn in its figure: ``lincls.tracking.record``): each run's mistakes against its
# tightest a priori bound, and its ratio mistakes / bound.
VIEW_SECTION = "lincls-bounds"
_CARD = {"deleted": False, "isGenerated": False}


def _chart(kind: str, uuid: str, title: str, **keys: object) -> dict:
    """A chart of the runs table's Chart tab (MLflow's card of ``kind``) in ``VIEW_SECTION``."""
    return {**_CARD, "uuid": f"lincls-{uuid}", "type": kind, "runsCountToCompare": VIEW_CHART_RUNS,
            "metricSectionId": VIEW_SECTION, "displayName": title, **keys}  # fmt: skip


VIEW_CHARTS = [
    _chart(
        "SCATTER", "mistakes-bound", "mistakes against the tightest bound",
        xaxis={"key": "bound.tightest", "type": "METRIC"},
        yaxis={"key": "mistakes", "type": "METRIC"},
    ),
    _chart(
        "BAR", "ratio", "mistakes / tightest bound",
        metricKey="bound_ratio.tightest", selectedMetricKeys=["bound_ratio.tightest"],
    ),
]  # fmt: skip


VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
# The datasets built to meet their bounds (the games, the tight orthonormal instance): their
# ratio is 1, or the fraction the game forces, by proof, so sorted by ratio they would fill the
# first screen. The view leaves them out; the report's tightness frontier shows them, and a
# violation among them is counted in the sweep's headline all the same.
FORCED_DATASETS = (*GAME_SCHEMAS, "orthonormal")  # every game, and the orthonormal search
# MLflow's search grammar: comparisons joined by AND (no OR, no NOT LIKE on tags, no free text:
# a bare word is refused with HTTP 400). The view's filter, in the search box, is one example.
RUNS_FILTER = "tags.`lincls.role` = 'run'" + "".join(
    f" AND tags.dataset != '{name}'" for name in FORCED_DATASETS
)
# Filters to type in the search box (the experiment's description and the docs list them).
SEARCH_EXAMPLES = (
    "tags.learner = 'perceptron'",
    "tags.learner_label LIKE 'perceptron (%' AND tags.dataset = 'separable'",
    "tags.dataset LIKE '%game'",
    "metrics.`bound_ratio.tightest` > 0.5",
)


def view_ui_state() -> dict:
    """The runs table as lincls reads it, in the keys MLflow's UI keeps a table's state under:
    the runs of every sweep (never a sweep's parent, which has no bound) but those on data built
    to meet its bound (``FORCED_DATASETS``), sorted by the ratio to their tightest bound, with
    their bounds, ratios and slack as columns (rounded: ``SHOWN``), and in the Chart tab their
    mistakes against their bounds (``VIEW_CHARTS``) for the first ``VIEW_CHART_RUNS`` runs.

    Sorted by a metric, the UI does not fetch the parents of the runs it lists (it does for the
    start-time order), so the table and its charts hold the runs alone."""
    return {
        "searchFilter": RUNS_FILTER,
        "orderByKey": "metrics.`bound_ratio.tightest`",
        "orderByAsc": False,
        "startTime": "ALL",
        "lifecycleFilter": "Active",
        "datasetsFilter": [],
        "modelVersionFilter": "All Runs",
        "selectedColumns": VIEW_COLUMNS,
        "columnOrder": list(VIEW_WIDTHS),
        "columnWidths": dict(VIEW_WIDTHS),
        "runsHiddenMode": VIEW_CHART_SELECTION,
        "compareRunSections": [{**_CARD, "uuid": VIEW_SECTION, "name": "Mistakes and their bounds",
                                "display": True, "isReordered": False,
                                "columns": len(VIEW_CHARTS), "cardHeight": VIEW_CHART_HEIGHT}],
        "compareRunCharts": VIEW_CHARTS,
        "hideEmptyCharts": False,
        "useGroupedValuesInCharts": False,
    }  # fmt: skip


def view_state() -> str:
    """The experiment's view tag: ``view_ui_state`` in the envelope MLflow's UI lists saved views
    from (name, creation time, the state as a JSON string), so the Views menu shows it."""
    state = json.dumps(view_ui_state())
    return json.dumps(
        {"name": VIEW_NAME, "createdAt": VIEW_CREATED_MS, "updatedAt": VIEW_CREATED_MS,
         "state": state}
    )  # fmt: skip


def ui_path(experiment_id: str) -> str:
    """The UI page of an experiment's runs in lincls's view, in the model-training workflow (the
    UI otherwise opens on its GenAI pages: a setting of the browser, not of the store)."""
    return (
        f"#/experiments/{experiment_id}/runs?viewStateShareKey={VIEW_KEY}"
        "&workflowType=machine_learning"
    )
