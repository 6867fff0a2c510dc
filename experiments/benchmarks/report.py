"""The report a user types, ``lincls report STUDY``, against MLflow's own listing of the same runs
(slow section).

A real sweep of ``RUNS`` cheap configs (``dataset.n=100 dataset.d=5 passes=2
certificates.svm=false``, four learners × seeds, ``hydra.launcher.n_jobs=2``) runs through the
CLI into a fresh SQLite store. The row times the whole ``lincls report STUDY`` process (Python's
start, reading the runs, the tables, the plots, runs.csv, the HTML, logging the report to the
parent, every run's figure and colour) against MLflow's ``search_runs`` listing the same runs in
this process (page by page, as a client reads a study): target ≤ 0.6× its time. Afterwards every
run's page must show its figure: the runs whose description links it and whose record draws it
(``lincls.tracking.record``) are counted, and the figure files on disk (none but a report's).

``build_store`` (also the ``report100k`` section's) makes a store of any size from a real sweep
whose runs are copied as rows, each copy with its own config hash, record and description.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.sweep import _sweep, as_logged

RUNS = 2_000
CHEAP = ["dataset.n=100", "dataset.d=5", "passes=2", "certificates.svm=false"]
LEARNERS = "perceptron,averaged_perceptron,passive_aggressive,margin_perceptron"
STUDY = "report_bench"


def build_store(root: Path, runs: int, seed_configs: int = 40) -> tuple[str, str]:
    """A store whose one sweep has ``runs`` FINISHED children, each showing its own figure as a
    run of a sweep does (drawn from its record, a copy of its template's); (its URI, the
    parent's run id). The copies are written as a pool's worker writes a chunk's runs
    (``SqliteRuns.write_many``, ``COPIES_AT_ONCE`` a transaction)."""
    from lincls import tracking

    _, children = _sweep(root, seed_configs, [])
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client, experiment_id = tracking.open_experiment(uri)
    parent = children[0].data.tags["mlflow.parentRunId"]
    templates = as_logged(children)
    copies = range(runs - len(children))
    if client.rows is not None:  # its indexes' pages in memory while millions of rows go in
        client.rows.connection().execute("PRAGMA cache_size=-1000000")  # KB: 1 GB
    for start in range(0, len(copies), COPIES_AT_ONCE):
        batch = [
            _copy(templates[k % len(templates)], k) for k in copies[start : start + COPIES_AT_ONCE]
        ]
        if client.rows is None:
            for copy in batch:
                run_id = tracking.start_run(client, experiment_id, copy["run_name"], copy["tags"])
                tracking.finish_run(client, run_id, copy["params"], copy["values"], {},
                                    _finish_tags(copy, run_id))  # fmt: skip
            continue
        for copy in batch:
            copy.update(final_tags=_finish_tags(copy, copy["run_id"]), status="FINISHED",
                        metrics=tracking._points(copy.pop("values"), {}))  # fmt: skip
        client.rows.write_many(experiment_id, batch)
    if client.rows is not None:  # the reader's Arrow driver reads only a file no one here holds
        client.rows.close()
    return uri, parent


COPIES_AT_ONCE = 1000


def _copy(template: tuple, k: int) -> dict:
    """Copy ``k`` of a logged run: its own name, config hash and id."""
    import uuid

    from lincls.tracking.tags import NOTE_TAG

    params, metrics, _, tags = template
    name = f"{tags.get('mlflow.runName', 'run')} copy {k}"
    note = tags.get(NOTE_TAG, "").split("\n\n", 1)[-1]  # without the template's figure
    tags = {**tags, "lincls.config_hash": f"copy{k:07d}", "mlflow.runName": name}
    tags.pop("mlflow.runColor", None)
    now = int(time.time() * 1000)
    return {"run_id": uuid.uuid4().hex, "run_name": name, "tags": tags, "params": params,
            "values": metrics, "note": note, "start_time": now, "end_time": now}  # fmt: skip


def _finish_tags(copy: dict, run_id: str) -> dict:
    from lincls.figures import with_figure
    from lincls.tracking.tags import NOTE_TAG

    return {NOTE_TAG: with_figure(copy["note"], run_id)}


def timed_report(uri: str, target: str, out: Path) -> float:
    """Seconds of the whole ``lincls report TARGET`` process, as a user types it."""
    command = [sys.executable, "-m", "lincls.experiments.report", target, "--tracking-uri", uri,
               "--out", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return seconds


def figures_shown(uri: str, root: Path) -> tuple[int, int, int]:
    """(runs whose description shows their figure, runs among them whose record draws it,
    figure files on disk)."""
    from lincls.experiments.report.figures import _sql_state
    from lincls.figures import FIGURE_FILE
    from lincls.tracking import reader
    from lincls.tracking.record import RECORD_TAG

    engine = reader.engine_for(uri)
    if engine is None:
        raise RuntimeError(f"the store at {uri} could not be opened with SQL to count its figures")
    try:
        import sqlalchemy

        with engine.connect() as db:
            ids = [r for (r,) in db.execute(sqlalchemy.text("SELECT run_uuid FROM runs"))]
            recorded = {r for (r,) in db.execute(
                sqlalchemy.text("SELECT run_uuid FROM tags WHERE key = :key"), {"key": RECORD_TAG}
            )}  # fmt: skip
        shown, _ = _sql_state(engine, ids)
    finally:
        engine.dispose()
    files = len(list(root.rglob(FIGURE_FILE)))
    return len(shown), len(shown & recorded), files


def search_seconds(uri: str) -> tuple[float, int]:
    """MLflow's ``search_runs`` over every run of the store, page by page; (seconds, runs)."""
    from mlflow.tracking import MlflowClient

    from lincls.experiments.report.collect import search_all

    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.get_experiment_by_name("lincls").experiment_id
    search_all(client, experiment_id, page_size=10)  # the client's imports and store, made once
    start = time.perf_counter()
    found = search_all(client, experiment_id)
    return time.perf_counter() - start, len(found)


def run(quick: bool = False) -> list[Row]:
    """The report section: ``lincls report`` of a cheap sweep against ``search_runs``."""
    runs = 40 if quick else RUNS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        uri = f"sqlite:///{root / 'mlflow.db'}"
        command = [
            sys.executable, "-m", "lincls.experiments.run", "-m", f"learner={LEARNERS}",
            f"seed=range(0,{runs // 4})", *CHEAP, f"study={STUDY}", "hydra.launcher.n_jobs=2",
            f"tracking.uri={uri}", f"certificates.cache_dir={root / 'certificates'}",
            f"hydra.sweep.dir={root / 'sweep'}",
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        peer, listed = search_seconds(uri)
        seconds = timed_report(uri, STUDY, root / "report")
        shown, recorded, files = figures_shown(uri, root)
    load = os.getloadavg()[0]
    note = (
        f"{runs} runs (+ the sweep's parent: {listed} listed by search_runs); afterwards "
        f"{shown} runs show their figure ({recorded} drawn from their records, {files} files on "
        f"disk); load {load:.1f} at the end"
    )
    return [Row("report", f"lincls report STUDY, {runs} cheap runs", seconds, peer,
                "search_runs, same store", 1 / 0.6, None, note)]  # fmt: skip
