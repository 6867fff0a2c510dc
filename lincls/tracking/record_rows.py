"""Runs' records read back as the rows they stand for (``lincls.tracking.record``).

The reader gathers each run's record's values among its columns (``lincls.tracking.wide``); a
``mlflow.search_runs`` frame gains its columns (``expand_frame``); a run's curve comes
from its record, or, for a run written before runs kept records, from MLflow's metric history
(``curves_of`` with SQL, ``histories`` through MLflow's client). So every reader gives a run's
values as it gave them when they were MLflow's rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from lincls.tracking.record import RECORD_KEYS, Record, decode, parts_of, read, summary

LONG_TAGS = pa.schema([("run_id", pa.string()), ("key", pa.string()), ("value", pa.string())])
IDS_PER_QUERY = 10_000  # run ids bound in one query (SQLite's limit on variables is 32,766)
Curve = list[tuple[int, float]]


def _parts(chunks: pa.Table) -> dict[str, list[str]]:
    """Each run's record tags' values in order, from (run id, key, value) rows of them."""
    parts: dict[str, dict[str, str]] = {}
    for run_id, key, value in zip(*(chunks[c].to_pylist() for c in ("run_id", "key", "value")),
                                  strict=True):  # fmt: skip
        parts.setdefault(run_id, {})[key] = value
    ordered = {run_id: parts_of(found) for run_id, found in parts.items()}
    return {run_id: found for run_id, found in ordered.items() if found}


def records_of(chunks: pa.Table) -> dict[str, Record]:
    """The records in (run id, key, value) rows of record tags, by run id."""
    return {run_id: decode(found) for run_id, found in _parts(chunks).items()}


def expand_frame(frame: Any) -> Any:
    """A ``mlflow.search_runs`` frame with each run's record as the columns its rows would have
    made (``metrics.<name>``, NaN where a run has none; ``tags.<name>``, None), its record's own
    tag columns dropped."""
    columns = [f"tags.{key}" for key in RECORD_KEYS if f"tags.{key}" in frame.columns]
    if not columns:
        return frame
    records = []
    for values in zip(*(frame[c].tolist() for c in columns), strict=True):
        parts = parts_of({k: v for k, v in zip(RECORD_KEYS, values, strict=False)
                          if isinstance(v, str)})  # fmt: skip
        records.append(decode(parts) if parts else None)
    added: dict[str, list] = {}
    for index, record in enumerate(records):
        if record is None:
            continue
        for prefix, values, null in (("metrics.", record.latest(), math.nan),
                                     ("tags.", record.tags, None)):  # fmt: skip
            for name, value in values.items():
                column = added.setdefault(f"{prefix}{name}", [null] * len(records))
                column[index] = value
    frame = frame.drop(columns=columns)
    for name, column in added.items():
        if name in frame.columns:  # a value also stored as a row: that row's, where a run has one
            column = [v if (isinstance(v, str) or not _missing(v)) else c
                      for v, c in zip(frame[name].tolist(), column, strict=True)]  # fmt: skip
        frame[name] = column
    return frame


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def curves_of(
    engine: Any, run_ids: Sequence[str], keys: Iterable[str], by_time: bool = False
) -> dict[str, dict[str, list]]:
    """Each metric of ``keys``: every run's logged points as (step, value), ordered by step then
    timestamp (``by_time``: by timestamp, step then value, as MLflow's ``get_metric_history``),
    NaN where MLflow stored a NaN, by run id: from a run's record (its points by step then value:
    a run's points share one timestamp) and MLflow's metric history."""
    import sqlalchemy

    keys = list(keys)
    out: dict[str, dict[str, list]] = {key: {run_id: [] for run_id in run_ids} for key in keys}
    if not keys or not len(run_ids):
        return out
    wanted = set(run_ids)
    order = "timestamp, step, value" if by_time else "step, timestamp"
    sql = (
        "SELECT run_uuid, key, step, CASE WHEN is_nan THEN NULL ELSE value END FROM metrics "
        f"WHERE {{}} IN :keys ORDER BY run_uuid, key, {order}"
    )
    # a few runs by id, through the index on (run, key, step): "key || ''" keeps SQLite off the
    # key's index, which holds every run's points of it (1.5 s for 8 runs of 100,000 so); many
    # runs, every run's points of the keys
    few = len(wanted) <= IDS_PER_QUERY
    where = "run_uuid IN :ids AND key || ''" if few else "key"
    statement = sqlalchemy.text(sql.format(where)).bindparams(
        *(sqlalchemy.bindparam(name, expanding=True) for name in ("keys", "ids")[: 1 + few])
    )
    bound = {"keys": keys, "ids": sorted(wanted)} if few else {"keys": keys}
    with engine.connect() as db:
        for run_id, key, step, value in db.execute(statement, bound):
            if run_id in wanted:
                out[key][run_id].append((int(step), float("nan") if value is None else value))
        for run_id, record in _stored_records(db, sorted(wanted)).items():
            for key in keys:
                out[key][run_id] += record.history(key)
    return out


def _stored_records(db: Any, run_ids: Sequence[str]) -> dict[str, Record]:
    """The records of ``run_ids`` (those that have one), read over connection ``db``."""
    import sqlalchemy

    statement = sqlalchemy.text(
        "SELECT run_uuid, key, value FROM tags WHERE key IN :keys AND run_uuid IN :ids"
    ).bindparams(*(sqlalchemy.bindparam(n, expanding=True) for n in ("keys", "ids")))
    rows: list[tuple] = []
    for k in range(0, len(run_ids), IDS_PER_QUERY):
        chunk = {"keys": list(RECORD_KEYS), "ids": list(run_ids[k : k + IDS_PER_QUERY])}
        rows += [tuple(row) for row in db.execute(statement, chunk)]
    columns = list(zip(*rows, strict=True)) if rows else [[], [], []]
    return records_of(pa.table([pa.array(c, pa.string()) for c in columns], schema=LONG_TAGS))


def curve_names(engine: Any, run_ids: Sequence[str]) -> set[str]:
    """The curves the runs ``run_ids`` logged: their records' and the metrics MLflow holds at a
    step past 0 (a run written before runs kept records)."""
    import sqlalchemy

    statement = sqlalchemy.text(
        "SELECT DISTINCT key FROM metrics WHERE run_uuid IN :ids AND step > 0"
    ).bindparams(sqlalchemy.bindparam("ids", expanding=True))
    names: set[str] = set()
    with engine.connect() as db:
        for k in range(0, len(run_ids), IDS_PER_QUERY):
            chunk = {"ids": list(run_ids[k : k + IDS_PER_QUERY])}
            names.update(row[0] for row in db.execute(statement, chunk))
        for record in _stored_records(db, list(run_ids)).values():
            names.update(record.curves)
    return names


def client_curve_names(client: Any, run_ids: Iterable[str]) -> set[str]:
    """``curve_names`` through MLflow's client (a run without a record: its metrics that MLflow
    holds more than one point of)."""
    names: set[str] = set()
    for run_id in run_ids:
        run = client.get_run(run_id)
        record = read(run.data.tags)
        if record is not None:
            names.update(record.curves)
            continue
        names.update(k for k in run.data.metrics if len(client.get_metric_history(run_id, k)) > 1)
    return names


def history(client: Any, run_id: str, key: str, record: Record | None = None) -> Curve:
    """One run's logged points of ``key`` through MLflow's client, by step then time: MLflow's
    metric history and its record's (``record``, else read from the run's tags)."""
    if record is None:
        record = read(client.get_run(run_id).data.tags) or Record()
    points = sorted((p.step, p.timestamp, p.value) for p in client.get_metric_history(run_id, key))
    return [(int(step), float(value)) for step, _, value in points] + record.history(key)


def histories(
    client: Any, run_ids: Iterable[str], keys: Iterable[str]
) -> dict[str, dict[str, Curve]]:
    """``history`` of each key of ``keys`` and run of ``run_ids`` (each run's tags read once):
    {key: {run id: points}}."""
    keys = list(keys)
    out: dict[str, dict[str, Curve]] = {key: {} for key in keys}
    for run_id in run_ids:
        record = read(client.get_run(run_id).data.tags) or Record()
        for key in keys:
            out[key][run_id] = history(client, run_id, key, record)
    return out


def latest_of(tags: Mapping[str, str]) -> tuple[dict[str, float], dict[str, str]]:
    """A run's record's values as MLflow's latest metrics and tags would hold them (none: it
    has no record), from the run's ``tags``."""
    parts = parts_of(tags)
    return summary(parts) if parts else ({}, {})
