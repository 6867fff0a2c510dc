"""A sweep's questions to its store: which runs are RUNNING (and whose writer is gone), which
configs of a study are FINISHED.

Asked with SQL where lincls writes the store's rows (SQLite, PostgreSQL): MLflow's search would
import its client and its SQLAlchemy store (~1.4 s of a small sweep's start) to find, most often,
nothing. Elsewhere (a tracking server) through MLflow's search.
"""

from __future__ import annotations

import os
import socket

from lincls import tracking
from lincls.tracking.tags import HASH_TAG, HOST_TAG, PARENT_TAG, PID_TAG, STUDY_TAG


def alive(pid: int) -> bool:
    """Whether the process ``pid`` of this host still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def search_all(client, experiment_id: str, filter_string: str) -> list:
    """Every run of the experiment matching ``filter_string``, through MLflow's search."""
    runs, token = [], None
    while True:
        page = client.search_runs(
            [experiment_id], filter_string=filter_string, max_results=1000, page_token=token
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def mark_dead_runs_killed(client, experiment_id: str) -> list[str]:
    """Close KILLED every RUNNING run whose writing process on this host is gone.

    A sweep killed with ``kill -9`` leaves its parent and the runs in flight RUNNING; they are
    found by the host and pid each run carries. Returns the ids closed.
    """
    host = socket.gethostname()
    closed = []
    for run_id, run_host, pid in running(client, experiment_id):
        if run_host != host or not (pid or "").isdigit():
            continue
        if not alive(int(pid)):
            tracking.end_run(client, run_id, "KILLED")
            closed.append(run_id)
    return closed


RUNNING_SQL = (
    "SELECT r.run_uuid, h.value, p.value FROM runs r "
    "LEFT JOIN tags h ON h.run_uuid = r.run_uuid AND h.key = ? "
    "LEFT JOIN tags p ON p.run_uuid = r.run_uuid AND p.key = ? {parent}"
    "WHERE r.experiment_id = ? AND r.status = 'RUNNING' AND r.lifecycle_stage = 'active'"
)
OF_PARENT_SQL = "JOIN tags a ON a.run_uuid = r.run_uuid AND a.key = ? AND a.value = ? "
CHILDREN_SQL = (
    "SELECT COUNT(*) FROM runs r " + OF_PARENT_SQL + "WHERE r.experiment_id = ? "
    "AND r.status = 'FINISHED' AND r.lifecycle_stage = 'active'"
)
FINISHED_SQL = (
    "SELECT DISTINCT h.value FROM runs r "
    "JOIN tags s ON s.run_uuid = r.run_uuid AND s.key = ? AND s.value = ? "
    "JOIN tags h ON h.run_uuid = r.run_uuid AND h.key = ? "
    "WHERE r.experiment_id = ? AND r.status = 'FINISHED' AND r.lifecycle_stage = 'active'"
)


def _rows_query(client, sql: str, params: tuple) -> list[tuple] | None:
    """``sql`` on the store's rows where lincls writes them (retried as a client call), else
    None: the caller asks MLflow."""
    rows = getattr(client, "rows", None)
    if rows is None:
        return None

    def query() -> list[tuple]:
        return [tuple(row) for row in rows.connection().execute(sql, params).fetchall()]

    return client.call("search_runs", query)


def running(
    client, experiment_id: str, parent: str | None = None
) -> list[tuple[str, str | None, str | None]]:
    """(run id, host tag, pid tag) of every active RUNNING run of the experiment (of the sweep
    ``parent``, if given)."""
    sql = RUNNING_SQL.format(parent=OF_PARENT_SQL if parent else "")
    params = (HOST_TAG, PID_TAG, *((PARENT_TAG, parent) if parent else ()), int(experiment_id))
    found = _rows_query(client, sql, params)
    if found is not None:
        return found
    filter_string = "attributes.status = 'RUNNING'"
    if parent:
        filter_string += f" and tags.`{PARENT_TAG}` = '{parent}'"
    runs = search_all(client, experiment_id, filter_string)
    return [(r.info.run_id, r.data.tags.get(HOST_TAG), r.data.tags.get(PID_TAG)) for r in runs]


def finished_hashes(client, experiment_id: str, study: str) -> tuple[str, ...]:
    """The config hashes of the study's FINISHED runs (what a resumed sweep skips)."""
    found = _rows_query(client, FINISHED_SQL, (STUDY_TAG, study, HASH_TAG, int(experiment_id)))
    if found is None:
        done = search_all(
            client,
            experiment_id,
            f"tags.`{STUDY_TAG}` = '{study}' and attributes.status = 'FINISHED'",
        )
        found = [(r.data.tags.get(HASH_TAG, ""),) for r in done]
    return tuple(sorted({value for (value,) in found} - {"", None}))


def finished_children(client, experiment_id: str, parent: str) -> int:
    """How many active FINISHED runs the sweep ``parent`` has in the store."""
    found = _rows_query(client, CHILDREN_SQL, (PARENT_TAG, parent, int(experiment_id)))
    if found is not None:
        return int(found[0][0])
    filter_string = f"tags.`{PARENT_TAG}` = '{parent}' and attributes.status = 'FINISHED'"
    return len(search_all(client, experiment_id, filter_string))
