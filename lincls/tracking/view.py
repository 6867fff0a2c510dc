"""The experiment's shared view of MLflow's runs table (listed under Views, opened by
``ui_path``): its columns and widths, its filter, and the Chart tab's overlays of a curve and its
bound. Stored as one experiment tag (``VIEW_TAG``); ``view_state`` is that tag's text."""

from __future__ import annotations

import json

VIEW_KEY = "lincls"  # the experiment's shared view of the runs table, listed under Views
VIEW_NAME = "lincls"
# A fixed date (2026-01-01 UTC) as the view's creation: the tag stays the same string from one
# process to the next, so ``open_experiment`` rewrites it only when the view itself changed.
VIEW_CREATED_MS = 1767225600000
# The runs table's columns in the order they are shown, each wide enough for its header and for
# its widest usual value (MLflow's UI cuts both with an ellipsis and no tooltip): the run's name,
# the ratio to its tightest bound, what it is made of, then its slack factors and data.
RUN_NAME_COLUMN = "attributes.`Run Name`"
VIEW_WIDTHS = {
    RUN_NAME_COLUMN: 460,
    "metrics.`bound_ratio.tightest`": 190,
    "metrics.`mistakes`": 110,
    "tags.`bound.tightest`": 200,
    "metrics.`bound.tightest`": 190,
    "tags.`learner_label`": 260,
    "metrics.`margin`": 180,
    "metrics.`radius`": 180,
    "tags.`bound_violated`": 160,
    "metrics.`bound_slack.progress`": 210,
    "metrics.`bound_slack.angle`": 200,
    "metrics.`bound_slack.norm`": 200,
    "attributes.`Dataset`": 230,
}
VIEW_COLUMNS = [column for column in VIEW_WIDTHS if column != RUN_NAME_COLUMN]
# Every run in the Chart tab, not MLflow's first 10 (``runsHiddenMode``), each in its own colour
# (``mlflow.runColor``, set by the report).
VIEW_CHART_RUNS = 1000


# The charts of the view's Chart tab that overlay a curve and its bound: MLflow draws one chart
# per metric unless a chart names several (selectedMetricKeys).
VIEW_SECTION = "lincls-bounds"
OVERLAYS = [
    ("cumulative_mistakes", "cumulative_mistakes_bound", "cumulative mistakes and their bound"),
    ("lemma.progress", "lemma.mistakes", "Novikoff's progress lemma and the mistakes"),
]
_CARD = {"deleted": False, "isGenerated": False}


def overlay_chart(curve: str, bound: str, title: str) -> dict:
    """A line chart of the runs table's Chart tab drawing ``curve`` and ``bound`` together."""
    return {
        **_CARD,
        "uuid": f"lincls-{curve}",
        "type": "LINE",
        "runsCountToCompare": VIEW_CHART_RUNS,
        "metricSectionId": VIEW_SECTION,
        "displayName": title,
        "metricKey": curve,
        "selectedMetricKeys": [curve, bound],
        "lineSmoothness": 0,
        "xAxisScaleType": "linear",
        "scaleType": "linear",
        "range": {},
        "xAxisKey": "step",
        "selectedXAxisMetricKey": "",
        "yAxisKey": "metric",
        "yAxisExpressions": [],
        "ignoreOutliers": False,
        "useGlobalXaxisKey": False,
        "useGlobalLineSmoothing": False,
    }


VIEW_TAG = f"mlflow.sharedViewState.{VIEW_KEY}"
RUNS_FILTER = "tags.`lincls.role` = 'run'"


def view_ui_state() -> dict:
    """The runs table as lincls reads it, in the keys MLflow's UI keeps a table's state under:
    the runs of every sweep (never a sweep's parent, which has no curves), sorted by the ratio to
    their tightest bound, with their bounds, ratios and slack as columns, and in the Chart tab
    each curve drawn over its bound (``OVERLAYS``) for every run.

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
        "runsHiddenMode": "SHOW_ALL",
        "compareRunSections": [{**_CARD, "uuid": VIEW_SECTION, "name": "Mistakes and their bounds",
                                "display": True, "isReordered": False}],
        "compareRunCharts": [overlay_chart(*pair) for pair in OVERLAYS],
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


def share_view(client, experiment_id: str) -> None:
    """Store ``view_state`` as the experiment's shared view ``lincls`` (``ui_path`` opens it)."""
    client.set_experiment_tag(experiment_id, VIEW_TAG, view_state())


def ui_path(experiment_id: str) -> str:
    """The UI page of an experiment's runs in lincls's view, in the model-training workflow (the
    UI otherwise opens on its GenAI pages: a setting of the browser, not of the store)."""
    return (
        f"#/experiments/{experiment_id}/runs?viewStateShareKey={VIEW_KEY}"
        "&workflowType=machine_learning"
    )
