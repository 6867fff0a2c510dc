"""Sweeps: one parent MLflow run per multirun, failure isolation, resume and progress.

The launching process (``hydra_plugins.lincls_sweeps.LinclsSweeper``) opens the store once —
creating and migrating a SQLite database there, before any job starts, because several workers
that each find no database and create it at the same time can leave it unusable — marks the
runs of killed sweeps KILLED, creates the parent run, and writes a small JSON record of the
sweep that every job reads (its path travels in the environment variable ``LINCLS_SWEEP``, so
it reaches in-process, joblib, submitit and Ray workers alike). Each job
(``run_job``) then:

- skips its config when ``tracking.skip_finished`` is on and a FINISHED run with the same
  config hash exists (a re-run of a killed sweep completes it, each config FINISHED once);
- runs it as a child of the parent (tag ``mlflow.parentRunId``), never raising: a config that
  fails is a FAILED run with its error (bad input too, found before the fit), and the sweep
  goes on;
- appends one line to the sweep's progress file (``tracking.progress``): the console shows jobs
  done / total, failures, the rate and an ETA (a live bar on a terminal, a line every ~10 s or
  5 % otherwise), and the parent run gets its headline from that file at the end.

At the end (whatever happens: in a ``finally``) the sweeper closes the parent FINISHED only if
every config has a FINISHED run, else FAILED; it lists the configs without one (failed, with their
error; not run, counted) and the command that runs them, and exits non-zero (``finish_sweep``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from lincls import tracking
from lincls.config.run import RunConfig
from lincls.runner import LastData, execute, execute_deferred, refused_run
from lincls.tracking import progress, sweep_runs
from lincls.tracking.headline import Headline
from lincls.tracking.store import (
    DEFAULT_MAX_STORE_FAILURES,
    DEFAULT_RETRY_SECONDS,
    one_line,
)
from lincls.tracking.tags import (
    ADHOC_STUDY,
    LABEL_TAG,
    NOTE_TAG,
    OVERRIDES_TAG,
    PARENT_TAG,
    ROLE_TAG,
    STUDY_TAG,
    VARYING_TAG,
    commit_tags,
    config_hash,
    process_tags,
)

SWEEP_ENV = "LINCLS_SWEEP"


@dataclass(frozen=True)
class SweepRecord:
    """What every job of a sweep needs to know: the store, the parent run, the size."""

    tracking_uri: str
    experiment: str
    experiment_id: str
    parent_run_id: str
    study: str
    total: int
    started: float
    progress_file: str
    finished: tuple[str, ...] = ()  # config hashes of the study's FINISHED runs at the start
    varying: tuple[str, ...] = ()  # the override keys whose value differs between jobs
    retry_seconds: float = DEFAULT_RETRY_SECONDS  # a run's wait for a store that does not answer
    max_store_failures: int = DEFAULT_MAX_STORE_FAILURES  # runs in a row before the sweep stops
    path: str = ""  # where this record is: unique to the sweep (under its parent run's id)
    kinds: dict[str, int] = field(default_factory=dict)  # jobs per kind (``progress.job_kind``)

    def save(self, path: Path) -> None:
        """Write the record as JSON at ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, path: str | Path) -> SweepRecord:
        """Read a record written by ``save``."""
        fields = json.loads(Path(path).read_text())
        fields["finished"] = frozenset(fields.get("finished", ()))
        fields["varying"] = tuple(fields.get("varying", ()))
        fields["kinds"] = dict(fields.get("kinds", {}))
        return cls(**fields)


def varying_keys(jobs: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The override keys whose value is not the same in every job (what a run name shows)."""
    values: dict[str, set[str]] = {}
    for job in jobs:
        for item in job:
            key, _, value = item.partition("=")
            values.setdefault(key.lstrip("+~"), set()).add(value)
    return tuple(
        sorted(k for k, v in values.items() if len(v) > 1 or any(k not in _keys(j) for j in jobs))
    )


def _keys(job: Sequence[str]) -> set[str]:
    return {item.partition("=")[0].lstrip("+~") for item in job}


def start_sweep(
    config: RunConfig | Mapping[str, Any],
    total: int,
    sweep_dir: Path,
    overrides: Sequence[str] = (),
    varying: Sequence[str] = (),
    kinds: dict[str, int] | None = None,
    study: str | None = None,
) -> SweepRecord:
    """In the launching process: open (create, migrate) the store, clean up, make the parent.

    The sweep's study is the config's ``study`` (a named study sets it), else ``study`` (the
    sweeper's ``adhoc_study``), else ``adhoc``.

    The record and progress file go to ``<sweep_dir>/.lincls/<parent run id>/``: a place no other
    sweep shares, even one started in the same directory at the same moment. ``config``: the
    first job's (a plain one is checked and made a ``RunConfig``).
    """
    config = RunConfig.of(config)
    settings = config.tracking
    uri = tracking.resolve_tracking_uri(settings.uri)
    experiment = settings.experiment or tracking.DEFAULT_EXPERIMENT
    retry_seconds = settings.budget
    client, experiment_id = tracking.open_experiment(uri, experiment, retry_seconds)
    sweep_runs.mark_dead_runs_killed(client, experiment_id)
    study = config.study or study or ADHOC_STUDY
    tags = {
        ROLE_TAG: "sweep",
        STUDY_TAG: study,
        "lincls.jobs": str(total),
        OVERRIDES_TAG: " ".join(overrides)[: tracking.PARAM_VALUE_LIMIT],
        **process_tags(),
        **commit_tags(),
    }
    parent = tracking.start_run(client, experiment_id, study, tags)
    record_path = (Path(sweep_dir) / ".lincls" / parent / "sweep.json").resolve()
    progress_file = record_path.with_name("progress.log")
    progress_file.parent.mkdir(parents=True, exist_ok=True)
    progress_file.write_text("")
    finished: tuple[str, ...] = ()
    if settings.skip_finished:
        finished = sweep_runs.finished_hashes(client, experiment_id, study)
    record = SweepRecord(
        uri,
        experiment,
        experiment_id,
        parent,
        study,
        total,
        time.time(),
        str(progress_file),
        finished,
        tuple(varying),
        retry_seconds,
        settings.max_store_failures,
        str(record_path),
        dict(kinds or {}),
    )
    record.save(record_path)
    VIEW.follow(record.progress_file, record.total, record.started, record.kinds)
    return record


def adhoc_study(jobs: Iterable[Sequence[str]], varying: Sequence[str] | None = None) -> str:
    """The study of a sweep whose config names none: ``adhoc-<keys>-<hash>``, from its jobs'
    override lists, so different sweeps are different studies and the same command again is the
    same study (a re-run with ``tracking.skip_finished=true`` resumes it). ``keys`` are the keys
    that vary (``varying``, when known: ``varying_keys`` of the jobs); the tracking settings
    (the store, retries) and Hydra's are left out of both."""
    kept = sorted(
        " ".join(sorted(i for i in job if not i.lstrip("+~").startswith(IGNORED_KEYS)))
        for job in jobs
    )
    digest = hashlib.sha256("\n".join(kept).encode()).hexdigest()[:6]
    if varying is None:
        varying = varying_keys([line.split() for line in kept])
    keys = [k for k in varying if k != "study" and not k.startswith(IGNORED_KEYS)]
    named = "-".join(keys)
    named = named if len(named) <= 40 else named[:40].rsplit("-", 1)[0] + "-…"
    return f"{ADHOC_STUDY}-{named}-{digest}" if named else f"{ADHOC_STUDY}-{digest}"


IGNORED_KEYS = ("tracking.", "hydra.")  # what names no ad-hoc study


def unfinished(record: SweepRecord, jobs: Iterable[str]) -> list[tuple[str, str | None, bool]]:
    """(job, why, sure) of every job of the sweep (its override line) without a FINISHED run, as
    its progress file says: ``why`` is the job's error, or None for a job that never reported
    (not run: the sweep stopped first); not ``sure`` when the job may have a FINISHED run after
    all (it never reported, or the store failed it: a write it never saw answered may land)."""
    missing = []
    for job, entry in progress.summary(record.progress_file).missing(jobs):
        if entry is None:
            missing.append((job, None, False))
        else:
            missing.append((job, str(entry.get("error") or "failed"), not entry.get("store")))
    return missing


def finish_sweep(
    record: SweepRecord,
    jobs: Iterable[str],
    interrupted: bool = False,
    store_down: bool = False,
) -> tuple[Headline, list[tuple[str, str | None]], str]:
    """Close the sweep: (headline, the jobs without a FINISHED run, the parent's status).

    The parent is closed FINISHED only if every job has a FINISHED run (skipped: one from an
    earlier sweep), else FAILED (KILLED on Ctrl-C), with its headline as description and metrics.
    Which jobs lack a run comes from the progress file; one it cannot be sure of (the store failed
    it, or it never reported) is looked up among the parent's FINISHED runs. A run left RUNNING
    under the parent is closed KILLED on Ctrl-C (the run in flight); otherwise it is a run whose
    write the store failed, or a second run a retried creation made (its first request answered
    late): it is deleted (MLflow's deletion, undone from its UI's trash), so a config has one run
    once a resume completes it. When the store does not answer, the parent stays RUNNING (the
    next sweep on the store closes it) and, with ``store_down``, the store gets one short try
    instead of a whole retry budget.
    """
    VIEW.stop()
    VIEW.close()
    missing = unfinished(record, jobs)
    client, _ = tracking.open_experiment(record.tracking_uri, record.experiment)
    if store_down:
        client.retry_seconds = min(client.retry_seconds, 5.0)
    children = f"tags.`{PARENT_TAG}` = '{record.parent_run_id}'"
    try:
        if not interrupted and not all(sure for _, _, sure in missing):
            done = sweep_runs.search_all(
                client, record.experiment_id, f"{children} and attributes.status = 'FINISHED'"
            )
            written = {r.data.tags.get(OVERRIDES_TAG) for r in done}
            limit = tracking.PARAM_VALUE_LIMIT
            missing = [m for m in missing if m[0][:limit] not in written]
        for run_id, _, _ in sweep_runs.running(client, record.experiment_id, record.parent_run_id):
            if interrupted:
                tracking.end_run(client, run_id, "KILLED")
            else:
                client.delete_run(run_id)
    except tracking.StoreError:
        pass  # said by the caller's summary; the run is closed KILLED by the next sweep
    status = "KILLED" if interrupted else "FAILED" if missing else "FINISHED"
    headline = Headline.of_summary(progress.summary(record.progress_file))
    if interrupted or store_down or missing:
        headline = _as_stored(headline, client, record, missing)
    try:
        note = {NOTE_TAG: headline.description(record.study, status)}
        tracking.finish_run(
            client, record.parent_run_id, {}, headline.metrics(), {}, note, None, status
        )
    except tracking.StoreError:
        pass
    return headline, [(job, why) for job, why, _ in missing], status


def _as_stored(headline: Headline, client, record: SweepRecord, missing: list) -> Headline:
    """``headline`` with the counts the store and the list of missing jobs give: a stopped
    sweep's workers finished runs whose chunks never came back (Ctrl-C said 13 finished where the
    store held 15), and a run the store failed may have landed after all (its summary said 2
    failed and listed one)."""
    failed = sum(why is not None for _, why, _ in missing)
    try:
        finished = sweep_runs.finished_children(client, record.experiment_id, record.parent_run_id)
    except tracking.StoreError:
        return replace(headline, failed=min(headline.failed, failed))
    return replace(headline, runs=finished, failed=failed)


def current_sweep(sweep_dir: str | Path | None = None) -> SweepRecord | None:
    """The sweep this process runs a job of, if any: from ``LINCLS_SWEEP`` (set by the sweeper,
    and by Hydra's ``hydra.job.env_set`` on the workers of other launchers), else the one record
    in the job's ``sweep_dir``."""
    path = os.environ.get(SWEEP_ENV)
    if not path and sweep_dir is not None:
        found = sorted((Path(sweep_dir) / ".lincls").glob("*/sweep.json"))
        path = str(found[0]) if len(found) == 1 else None
    if not path or not Path(path).is_file():
        return None
    return _load_cached(path)


_RECORDS: dict[str, SweepRecord] = {}


def _load_cached(path: str) -> SweepRecord:
    if path not in _RECORDS:
        _RECORDS[path] = SweepRecord.load(path)
    return _RECORDS[path]


# Set in the workers of the lincls launcher's process pool. POOLED: the launching process counts
# a job when the worker returns it. DEFERRED (a store written through MLflow's calls, ~30 ms a
# run): a job measures its run and returns it, and the launching process writes it while the
# worker measures the next. A store written as rows (~3 ms a run) is written by the workers:
# BATCHED, a chunk's runs at once when the chunk ends (``tracking.measured``).
POOLED = False
DEFERRED = False
BATCHED = False
SHARED_DATA = LastData()  # the data of this process's last job, for the next job of that dataset


def run_job(
    config: RunConfig | Mapping[str, Any], overrides: Sequence[str], record: SweepRecord
) -> dict:
    """One job of a sweep: skip, or run as a child of the parent; never raises on a bad config.

    ``config``: the job's, typed here once (``RunConfig.of``) when it is a plain one; one that is
    refused is a FAILED run with its params and error, like any failure of a job.
    Returns ``{"status": "finished" | "failed" | "skipped", "run_id": ..., "error": ...}``, and
    with ``DEFERRED`` the run to write as ``"payload"`` (run id None until it is written).
    """
    line = " ".join(overrides)
    started = time.perf_counter()  # the job's duration feeds the sweep's ETA
    outcome: dict[str, Any] = {"status": "finished", "run_id": None, "error": None}
    refusal: Exception | None = None
    try:
        config = RunConfig.of(config)
    except Exception as exc:  # raised again where a run's failure is recorded
        config, refusal = RunConfig.unchecked(config), exc
    skip = bool(config.tracking.skip_finished)
    tags = {
        PARENT_TAG: record.parent_run_id,
        ROLE_TAG: "run",
        STUDY_TAG: record.study,
        OVERRIDES_TAG: line[: tracking.PARAM_VALUE_LIMIT],
        VARYING_TAG: " ".join(
            item for item in overrides if item.partition("=")[0].lstrip("+~") in record.varying
        )[: tracking.PARAM_VALUE_LIMIT],
    }
    if skip and config_hash(config) in record.finished:
        outcome["status"] = "skipped"
    elif DEFERRED or BATCHED:
        # a refused config again as given: its refusal becomes the payload's failure
        payload = execute_deferred(
            config.raw if refusal else config, tags, record.experiment_id, SHARED_DATA,
            opened=not BATCHED,
        )  # fmt: skip
        outcome.update(payload=payload, error=payload["error"])
        outcome.update(_result(payload["metrics"], payload["tags"]))
        outcome["status"] = "finished" if payload["status"] == "FINISHED" else "failed"
        outcome["seconds"] = time.perf_counter() - started
        return outcome  # the launching process writes it and reports progress
    else:
        client, experiment_id = tracking.open_experiment(
            record.tracking_uri, record.experiment, record.retry_seconds, record.experiment_id
        )
        try:
            if refusal is not None:
                raise refusal
            done = execute(config, extra_tags=tags, shared=SHARED_DATA)
            outcome.update(run_id=done.run_id, **_result(done.metrics, done.tags))
        except tracking.StoreError as exc:  # the run is lost to the store, not to its config
            outcome.update(status="failed", error=str(exc), store_error=True)
        except Exception as exc:  # isolate the failure: the sweep goes on
            outcome.update(status="failed", error=f"{type(exc).__name__}: {exc}")
            outcome["run_id"] = getattr(exc, "lincls_run_id", None)
            if outcome["run_id"] is None:  # refused before its run existed: record it
                try:
                    outcome["run_id"] = refused_run(client, experiment_id, config.raw, tags, exc)
                except tracking.StoreError as store_exc:
                    outcome.update(error=str(store_exc), store_error=True)
    outcome["seconds"] = time.perf_counter() - started
    if not POOLED:  # in a pool, the launching process counts the job when it has it
        report_progress(record, outcome, line)
        count_store_failure(record, outcome)
    return outcome


class StoreDown(Exception):
    """The store failed ``max_store_failures`` runs in a row: the sweep stops."""


_STORE_FAILURES = [0]  # runs in a row that this process could not write


def count_store_failure(record: SweepRecord, outcome: Mapping[str, Any]) -> None:
    """Count a run the store failed (a written one resets the count); raise ``StoreDown``
    when ``record.max_store_failures`` come in a row."""
    if not outcome.get("store_error"):
        _STORE_FAILURES[0] = 0
        return
    _STORE_FAILURES[0] += 1
    if _STORE_FAILURES[0] >= record.max_store_failures:
        _STORE_FAILURES[0] = 0
        raise StoreDown(
            f"the store failed {record.max_store_failures} runs in a row; last: {outcome['error']}"
        )


def _result(metrics: Mapping[str, float], tags: Mapping[str, str]) -> dict[str, Any]:
    """What the sweep's headline needs of a run: its learner label, tightest ratio of each
    family (a priori, a posteriori), violation."""
    return {
        "label": tags.get(LABEL_TAG),
        "ratio": metrics.get("bound_ratio.tightest"),
        "posterior_ratio": metrics.get("bound_ratio.tightest_a_posteriori"),
        "violated": tags.get("bound_violated") == "true",
    }


VIEW = progress.View()  # this process's console view of the sweep


def report_progress(record: SweepRecord, outcome: Mapping[str, Any], line: str) -> None:
    """Count a finished job (its override line ``line``) in the sweep's progress file and update
    the console view. A failed job's entry keeps its error's first line, and whether the store
    failed it (``store``)."""
    keys = ("status", "label", "ratio", "posterior_ratio", "violated", "seconds")
    entry = {k: outcome.get(k) for k in keys}
    entry["job"] = line
    if outcome["status"] == "failed":
        entry["error"] = one_line(str(outcome.get("error") or ""))
        if outcome.get("store_error"):
            entry["store"] = True
    progress.append(record.progress_file, entry)
    if outcome["status"] == "failed":
        VIEW.close()
        print(f"[lincls] failed: {line}: {outcome['error']}", file=sys.stderr, flush=True)
    VIEW.show(
        progress.Counts.of_file(record.progress_file, record.total, record.started, record.kinds)
    )


def write_deferred(record: SweepRecord, outcome: dict[str, Any]) -> None:
    """In the launching process: write a run a pool worker measured (``DEFERRED``)."""
    payload = outcome.pop("payload", None)
    if payload is None:
        return
    client, experiment_id = tracking.open_experiment(
        record.tracking_uri, record.experiment, record.retry_seconds
    )
    try:
        outcome["run_id"] = tracking.write_payload(client, experiment_id, payload)
    except tracking.StoreError as exc:
        outcome.update(status="failed", error=str(exc), store_error=True)
