"""Reading a study's runs from MLflow into pandas: one row per run, one column per value.

A report covers the latest sweep, a sweep by its parent run id, or a study by name (its FINISHED
runs over every sweep, one per config hash, the newest); ``select_runs`` picks them and says how
many it left out and why. Nothing here draws or formats: the other modules work on the frame.
The runs are read with SQL (``tracking.reader``) where the store is a database it reads, else page
by page through MLflow's ``search_runs``: the same table either way.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lincls.errors import LinclsInputError
from lincls.tracking import reader
from lincls.tracking.record_rows import client_curve_names, histories, latest_of
from lincls.tracking.record_rows import curve_names as record_curve_names

PAGE_SIZE = 1000  # runs per search_runs page
ROLE_SWEEP = "sweep"
ROLE_RUN = "run"
TAGS_KEPT = (
    "learner",
    "learner_label",
    "dataset",
    "order",
    "bound_violated",
    "bound.tightest",
    "bound.tightest_a_posteriori",
    "bounds.vacuous",
    "bounds.none",
    "lincls.study",
    "lincls.role",
    "lincls.config_hash",
    "mlflow.parentRunId",
    "dataset.fingerprint",
)
Curve = list[tuple[int, float]]  # (step, value) points of one logged metric


@dataclass
class Selection:
    """The runs a report covers: a study's name, its FINISHED runs and the sweeps they came from.

    ``parents`` are the sweeps' parent run ids, newest first (the report is logged to the
    first); ``left_out`` counts runs of those sweeps that are not in ``runs`` and why;
    ``running`` the sweeps among them that are still writing runs.
    """

    study: str
    runs: pd.DataFrame
    parents: list[str]
    left_out: dict[str, int] = field(default_factory=dict)
    # the sweeps of ``parents`` still running: parent id → (configs, configs with a run so far)
    running: dict[str, tuple[int, int]] = field(default_factory=dict)


class Store:
    """A store the report reads: its URI, and MLflow's client, made when a call first needs it
    (a database store is read and written with SQL; MLflow's client costs ~1.3 s to import)."""

    def __init__(self, uri: str) -> None:
        self.tracking_uri = uri
        self._client: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            from mlflow.tracking import MlflowClient

            self._client = MlflowClient(tracking_uri=self.tracking_uri)
        return getattr(self._client, name)


def open_store(uri: str, experiment: str):
    """A client of an existing store and the id of ``experiment`` in it (never creates either)."""
    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///") :]).is_file():
        raise LinclsInputError("tracking-uri", f"no MLflow store at {uri} (run a sweep first)")
    client = Store(uri)
    engine = reader.engine_for(uri)
    if engine is not None:
        try:
            found = reader.experiment_id_of(engine, experiment)
        finally:
            engine.dispose()
    else:
        named = client.get_experiment_by_name(experiment)
        found = None if named is None else named.experiment_id
    if found is None:
        raise LinclsInputError("experiment", f"no experiment named {experiment!r} in {uri}")
    return client, found


def artifact_uri(client, run_id: str) -> str:
    """Where the run ``run_id`` keeps its artifacts."""
    engine = reader.engine_for(str(getattr(client, "tracking_uri", "") or ""))
    if engine is None:
        return client.get_run(run_id).info.artifact_uri
    import sqlalchemy

    try:
        with engine.connect() as db:
            return (
                db.execute(
                    sqlalchemy.text("SELECT artifact_uri FROM runs WHERE run_uuid = :id"),
                    {"id": run_id},
                ).scalar()
                or ""
            )
    finally:
        engine.dispose()


def search_all(
    client, experiment_id: str, filter_string: str = "", page_size: int = PAGE_SIZE
) -> list:
    """Every run of ``experiment_id`` matching ``filter_string``, newest first, page by page."""
    runs: list = []
    token = None
    while True:
        page = client.search_runs(
            [experiment_id],
            filter_string=filter_string,
            max_results=page_size,
            order_by=["attributes.start_time DESC"],
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def runs_frame(runs: Sequence, tag_keys: Sequence[str] = TAGS_KEPT) -> pd.DataFrame:
    """MLflow runs as a table: run_id, start_time, status, ``params.*``, ``metrics.*``, ``tags.*``
    (a run's record's values among them, as the rows they stand for).

    Rows are sorted by start time (then id), so the same runs always give the same table.
    """
    rows = []
    for run in runs:
        row: dict[str, Any] = {
            "run_id": run.info.run_id,
            "run_name": run.info.run_name,
            "start_time": run.info.start_time,
            "status": run.info.status,
        }
        recorded, record_tags = latest_of(run.data.tags)
        tags = {**record_tags, **run.data.tags}
        row.update({f"params.{k}": v for k, v in run.data.params.items()})
        row.update({f"metrics.{k}": v for k, v in {**recorded, **run.data.metrics}.items()})
        row.update({f"tags.{k}": tags[k] for k in tag_keys if k in tags})
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["run_id", "run_name", "start_time", "status"])
    if rows:
        frame = pd.DataFrame(rows)
        frame = frame.sort_values(["start_time", "run_id"], kind="stable").reset_index(drop=True)
    fixed = ["run_id", "run_name", "start_time", "status"]
    rest = sorted(c for c in frame.columns if c not in fixed)
    return frame[fixed + rest]


def _quoted(field_name: str, value: str) -> str:
    if "'" in value or "\\" in value:
        raise LinclsInputError(field_name, f"must not contain quotes or backslashes, got {value!r}")
    return f"'{value}'"


def _finished_unique(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """FINISHED runs, one per config hash (the newest), by start time then run id; how many
    others were left out, and why. The rows are chosen on the few columns that choose them and
    taken once (each copy of a million runs' table is ~2 GB)."""
    left_out: dict[str, int] = {}
    status = frame["status"]
    for name, count in status[status != "FINISHED"].value_counts().items():
        left_out[f"not FINISHED ({name})"] = int(count)
    keys = ["start_time", "run_id"]
    hashes = "tags.lincls.config_hash"
    chosen = frame[[*keys, hashes] if hashes in frame.columns else keys].reset_index(drop=True)
    chosen = chosen[(status == "FINISHED").to_numpy()]  # its index: the rows' positions
    chosen = chosen.sort_values(keys, kind="stable")  # oldest first; (start, id) is unique
    if hashes in chosen.columns:
        newest = ~chosen[hashes].fillna(chosen["run_id"]).duplicated(keep="last")
        if not newest.all():
            left_out["older run of the same config"] = int((~newest).sum())
        chosen = chosen[newest]
    if np.array_equal(chosen.index, np.arange(len(frame))):
        return frame.reset_index(drop=True), left_out  # every run, in order: no copy of them
    return frame.take(chosen.index).reset_index(drop=True), left_out


def rows_frame(rows: reader.Rows) -> pd.DataFrame:
    """Runs read with SQL (the tags of ``TAGS_KEPT``) as ``runs_frame`` makes them of MLflow's
    runs: the same columns, values and dtypes; ``rows``' params, metrics and tags are moved into
    it (left empty). Each column is put in order as it is made (the table made, sorted and
    reordered was three copies of a million runs' ~2 GB)."""
    info = rows.info
    if info.empty:
        return runs_frame([])
    order = info[["start_ms", "run_id"]].sort_values(["start_ms", "run_id"], kind="stable")
    at = order.index.to_numpy()
    if np.array_equal(at, np.arange(len(at))):
        at = None  # read in this order (``oldest_first``): the columns as they are
    data: dict[str, Any] = {
        name: info[column].to_numpy()[slice(None) if at is None else at].tolist()
        for name, column in (("run_id", "run_id"), ("run_name", "name"),
                             ("start_time", "start_ms"), ("status", "status"))
    }  # fmt: skip
    # "metrics." < "params." < "tags.": the names sorted. ``rows`` gives up each kind's table
    # once it is taken, so that the runs are never held twice.
    for kind in ("metrics", "params", "tags"):
        wide = getattr(rows, kind)
        setattr(rows, kind, wide.iloc[:, :0])
        for name in sorted(wide.columns):
            data[name] = wide[name].array if at is None else wide[name].array.take(at)
        del wide
    return pd.DataFrame(data, copy=False)  # the columns just taken: no copy of them again


def read_runs(
    client,
    experiment_id: str,
    tags: dict[str, str],
    page_size: int = PAGE_SIZE,
    tag_keys: Sequence[str] = TAGS_KEPT,
    tag_sql: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The runs of ``experiment_id`` with every tag of ``tags`` (name: value) as ``runs_frame``
    gives them (the tags ``tag_keys``): read with SQL where ``tracking.reader`` reads the store,
    else searched page by page. ``tag_sql``: tags read besides, as SQL expressions of their rows
    (``reader.read_rows``), where the store is read with SQL; searched runs have none of them."""
    for value in tags.values():
        _quoted("study", value)
    tag_sql = dict(tag_sql or {})
    engine = reader.engine_for(str(getattr(client, "tracking_uri", "") or ""))
    if engine is None:
        clauses = [f"tags.`{key}` = '{value}'" for key, value in tags.items()]
        found = search_all(client, experiment_id, " and ".join(clauses), page_size)
        return runs_frame(found, tag_keys)
    try:
        keys = (*tag_keys, *tag_sql)
        rows = reader.read_rows(engine, experiment_id, tags, tag_keys=keys, oldest_first=True,
                                tag_sql=tag_sql)  # fmt: skip
        return rows_frame(rows)
    finally:
        engine.dispose()


def _text(run: pd.Series, name: str) -> str | None:
    value = run.get(name)
    return value if isinstance(value, str) else None


def select_runs(
    client,
    experiment_id: str,
    target: str | None = None,
    page_size: int = PAGE_SIZE,
    tag_sql: Mapping[str, str] | None = None,
) -> Selection:
    """The runs to report: the latest sweep (``target`` None), a sweep by its parent run id, or a
    study by name (its FINISHED runs over every sweep, one per config hash, the newest);
    ``tag_sql`` as ``read_runs``."""
    sweeps = read_runs(
        client, experiment_id, {"lincls.role": ROLE_SWEEP}, page_size, (*TAGS_KEPT, *SWEEP_TAGS)
    )
    sweeps = sweeps.sort_values(  # newest first, as MLflow's search orders them
        ["start_time", "run_id"], ascending=[False, True], kind="stable"
    ).reset_index(drop=True)
    by_id = {run["run_id"]: run for _, run in sweeps.iterrows()}
    if target is None or target in by_id:
        if not by_id:
            raise LinclsInputError(
                "study",
                "no sweep in this experiment yet (run one: python -m lincls.experiments.run -m)",
            )
        parent = by_id[target] if target is not None else sweeps.iloc[0]
        parent_id = parent["run_id"]
        children = read_runs(client, experiment_id, {"mlflow.parentRunId": parent_id}, page_size,
                             tag_sql=tag_sql)  # fmt: skip
        study = _text(parent, "tags.lincls.study") or _text(parent, "run_name") or parent_id
        parents = [parent_id]
    else:
        study = target
        children = read_runs(client, experiment_id,
                             {"lincls.study": target, "lincls.role": ROLE_RUN}, page_size,
                             tag_sql=tag_sql)  # fmt: skip
        studies = [_text(run, "tags.lincls.study") for run in by_id.values()]
        if children.empty:
            known = sorted(set(studies) - {None, ""})
            raise LinclsInputError(
                "study",
                f"no study and no sweep run id {target!r} in this experiment "
                f"(studies: {', '.join(known) or 'none'})",
            )
        parents = [run_id for run_id, name in zip(by_id, studies, strict=True) if name == target]
    runs, left_out = _finished_unique(children)
    if runs.empty:
        raise LinclsInputError("study", f"{study!r} has no FINISHED runs yet")
    if target is not None and target not in by_id:
        # Only the sweeps that still contribute a run; the report goes to the newest of them.
        used = set(runs.get("tags.mlflow.parentRunId", pd.Series(dtype=object)).dropna())
        parents = [p for p in parents if p in used] or parents
    return Selection(study, runs, parents, left_out, still_running(by_id, parents, children))


SWEEP_TAGS = ("lincls.jobs", "lincls.host", "lincls.pid")  # a sweep's size and writer


def _writing(parent: pd.Series) -> bool:
    """Whether a RUNNING sweep's process still runs (one on another host is taken at its word;
    one on this host whose process is gone was killed, and the next sweep closes it)."""
    import socket

    from lincls.tracking.sweep_runs import alive

    host, pid = _text(parent, "tags.lincls.host"), _text(parent, "tags.lincls.pid") or ""
    return host != socket.gethostname() or not pid.isdigit() or alive(int(pid))


def still_running(
    by_id: dict[str, pd.Series], parents: Sequence[str], children: pd.DataFrame
) -> dict[str, tuple[int, int]]:
    """The sweeps of ``parents`` still writing runs: (configs, configs with a run so far)."""
    made = column(children, "tags.mlflow.parentRunId").value_counts()
    running = {}
    for parent_id in parents:
        parent = by_id[parent_id]
        if parent["status"] == "RUNNING" and _writing(parent):
            jobs = _text(parent, "tags.lincls.jobs") or ""
            running[parent_id] = (int(jobs) if jobs.isdigit() else 0, int(made.get(parent_id, 0)))
    return running


def metric_histories(client, run_ids: Iterable[str], key: str) -> dict[str, Curve]:
    """Each run's logged history of metric ``key`` as (step, value) points, by run id, in
    MLflow's order (a run's record's curve as its history: ``tracking.record``): read with SQL
    where ``tracking.reader`` reads the store (MLflow's query of one run's history scans every
    run's points of the metric: 0.5 s a run at 100,000 runs)."""
    run_ids = list(run_ids)
    engine = reader.engine_for(str(getattr(client, "tracking_uri", "") or ""))
    if engine is not None:
        try:
            return reader.curves_of(engine, run_ids, [key], by_time=True)[key]
        finally:
            engine.dispose()
    return histories(client, run_ids, [key])[key]


def curve_names(client, run_ids: Sequence[str]) -> list[str]:
    """The curves the runs ``run_ids`` logged (any of them), sorted: read with SQL where
    ``tracking.reader`` reads the store, else through MLflow's client."""
    engine = reader.engine_for(str(getattr(client, "tracking_uri", "") or ""))
    if engine is None:
        return sorted(client_curve_names(client, run_ids))
    try:
        return sorted(record_curve_names(engine, run_ids))
    finally:
        engine.dispose()


def column(frame: pd.DataFrame, name: str) -> pd.Series:
    """The column ``name`` of ``frame``, or all NaN when no run logged it."""
    if name in frame.columns:
        return frame[name]
    return pd.Series(np.nan, index=frame.index, dtype=float)


def _value(text: Any) -> Any:
    """A logged param back as the value it was (MLflow stores ``str(value)``; None, logged as
    "null" by older runs, is now left out)."""
    if not isinstance(text, str):
        return text
    if text == "null":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return float(text)  # inf, nan
        except ValueError:
            return text


# ``dataset.*`` params the data add to the config (a CSV's column map): not loader arguments
DATA_PARAMS = ("columns",)


def dataset_config(run: pd.Series) -> dict[str, Any]:
    """The run's ``dataset`` config, rebuilt from its logged ``dataset.*`` params."""
    prefix = "params.dataset."
    return {
        key[len(prefix) :]: _value(value)
        for key, value in run.items()
        if key.startswith(prefix) and isinstance(value, str)
        and key[len(prefix) :] not in DATA_PARAMS
    }  # fmt: skip
