"""Indexes lincls adds to an MLflow store, so that a page of a big study is found without
reading the whole study.

MLflow indexes its tables by run id and key only. Asked for the first 1,000 runs of an
experiment by start time or by a metric, a database must then read and sort every run (the UI's
first page of a 1,000,000-run study: ~20 s), and SQLite, sorting by a metric, compares every run
with every other (it scans the metric's rows once per run: a 100,000-run study sorted by the view's
ratio did not answer in 11 minutes). With these indexes a page is read in index order and the
reading stops at its last run (``lincls.experiments.ui_search``); the runs still RUNNING, which a
sweep looks for when it ends, are listed from an index of those few runs only; a study's runs,
and a sweep's, are listed from an index of their tag (``lincls.tracking.long_rows.whole_info``).

The names start with ``lincls_``, so they never meet MLflow's; ``CREATE INDEX IF NOT EXISTS``
makes them once (seconds on a million runs) and is a no-op after. They are an optimisation: a
store that cannot take them (read-only, another process making them at the same moment) is
read as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# tags whose (value, run) pairs have an index of their own: tag -> index
TAG_INDEXES = {
    "lincls.study": "lincls_tags_study",
    "lincls.role": "lincls_tags_role",
    "mlflow.parentRunId": "lincls_tags_parent",
}
INDEXES = {
    # a page by start time (the UI's default order)
    "lincls_runs_experiment_start": "runs (experiment_id, start_time)",
    # a page by a metric (lincls's view sorts by bound_ratio.tightest)
    "lincls_latest_metrics_key_value": "latest_metrics (key, value)",
    # a sweep's RUNNING runs, found when it ends or resumes: an index of those runs only
    "lincls_runs_running": "runs (experiment_id) WHERE status = 'RUNNING'",
    # a study's runs, a sweep's runs and the runs (not sweeps) among them, found without a
    # lookup of each run's tags (the reader's query of a million runs: 25 s -> 1 s)
    **{name: f"tags (value, run_uuid) WHERE key = '{key}'" for key, name in TAG_INDEXES.items()},
}


def index_statements() -> list[str]:
    """The ``CREATE INDEX IF NOT EXISTS`` statements of ``INDEXES`` (SQLite and PostgreSQL)."""
    return [f"CREATE INDEX IF NOT EXISTS {name} ON {spec}" for name, spec in INDEXES.items()]


def add_indexes(execute: Callable[[str], Any]) -> bool:
    """Make ``INDEXES`` with ``execute`` (a connection's, committing each statement); whether all
    exist now. A statement that fails (a read-only store, a lock held too long, a race with
    another process making the same index) is left: the store is read as before."""
    made = True
    for statement in index_statements():
        try:
            execute(statement)
        except Exception:  # an index is an optimisation: never a reason to fail the caller
            made = False
    return made
