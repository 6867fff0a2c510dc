"""Runs measured already (``runner.execute_deferred``'s payloads), written together.

A pool's worker on a store written as rows measured each run of its chunk and wrote it in two
transactions (created RUNNING, then closed): ~5 ms a run of a ~12 ms cheap run, each commit
copying the pages the run changed into the write-ahead log, and the other worker waiting for
the lock meanwhile. The chunk's runs are now written in one transaction when the chunk ends
(``SqliteRuns.write_many``): each run's rows are those its two transactions left, and a worker
killed mid-chunk leaves no run RUNNING (the configs it had are run again by the rerun).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lincls.figures import with_figure
from lincls.tracking import (
    PARAM_VALUE_LIMIT,
    StoreError,
    _points,
    _rows,
    stored_of,
    write_payload,
)
from lincls.tracking.run_rows import new_run_id
from lincls.tracking.tags import NOTE_TAG


def write_measured(
    client, experiment_id: str, payloads: Sequence[Mapping[str, Any]]
) -> list[str | Exception]:
    """Write ``payloads`` (finished or failed runs); each one's run id, or why it was refused.

    On a store written as rows, all in one transaction; if the store refuses one of them (a
    value MLflow refuses), each is written alone so that the others are kept. Any other store,
    or a run with text artifacts, gets ``write_payload`` a run. A store that fails raises
    ``StoreError`` (none of them is then known to be written).
    """
    rows = _rows(client)
    if rows is not None and not any(stored_of(payload).artifacts for payload in payloads):
        runs = [_run(payload) for payload in payloads]
        try:
            return client.call("log_batch", rows.write_many, experiment_id, runs)
        except StoreError:
            raise
        except Exception:  # one run refused: each alone, its own failure its own
            pass
    return [_alone(client, experiment_id, payload) for payload in payloads]


def _alone(client, experiment_id: str, payload: Mapping[str, Any]) -> str | Exception:
    try:
        return write_payload(client, experiment_id, payload)
    except StoreError:
        raise
    except Exception as exc:  # written FAILED where it could be (``write_payload``)
        return exc


def _run(payload: Mapping[str, Any]) -> dict[str, Any]:
    """``SqliteRuns.write_many``'s run of a payload: what ``write_payload`` would write."""
    stored = stored_of(payload)
    run_id = new_run_id()
    finished = payload["status"] == "FINISHED"
    note = stored.tags.get(NOTE_TAG)
    # its description opens with its figure (drawn from its record), whose link needs its id
    final = {NOTE_TAG: with_figure(note, run_id)} if note else {}
    if not finished:  # as ``fail_run`` keeps the error
        final["error"] = str(payload.get("error") or "").strip()[:PARAM_VALUE_LIMIT]
    return {
        "run_id": run_id,
        "run_name": payload["run_name"],
        "tags": stored.tags,
        "params": payload["params"],
        "metrics": _points(stored.metrics, {}),
        "final_tags": final,
        "dataset_input": payload.get("dataset_input"),
        "status": "FINISHED" if finished else "FAILED",
        "start_time": payload["start_time"],
        "end_time": payload["end_time"],
    }
