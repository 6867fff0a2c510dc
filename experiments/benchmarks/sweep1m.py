"""A million-config study on one machine, end to end (slow: hours; run when named).

Each step is the command a user types, timed from its start to its exit:

1. ``lincls run -m experiment=million hydra.launcher.n_jobs=2``: 20 margins × 10 radii × 50 seeds
   (10,000 datasets of 50 points, each certified once) × 10 learners × 10 numbers of passes, every
   bound at its best comparator; its runs per second, runs FINISHED, and the store's size:
   ``mlflow.db`` after a checkpoint, and every other file of the home (``du``);
2. ``lincls report million``: seconds and the process's peak memory (targets ≤ 120 s, ≤ 4 GB);
3. ``lincls ui``: the first page of runs as the UI's runs table asks for it (``runs/search``;
   the lincls app answers a page of 1,000 runs), of the study newest first and of lincls's view
   (the page ``lincls report`` links to: its filter, sorted by ratio), each timed from the
   request once the server answers (target ≤ 10 s).

The home is a fresh temporary folder, or ``$LINCLS_SWEEP1M_HOME`` (kept): there the same
command again completes a study it stopped short of, and the row counts the runs it added.
``--quick`` runs 2,000 configs (one seed, one radius): the harness's check, not the study.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.tracking.view import RUNS_FILTER, view_ui_state

CONFIGS = 1_000_000
STUDY = "million"
QUICK = ["seed=0", "dataset.radius=1"]  # 20 margins × 10 learners × 10 passes: 2,000
ROOT = Path(__file__).resolve().parents[2]
PAGE = 100  # rows the UI's runs table asks for first


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return {**env, "LINCLS_HOME": str(home), "PYTHONPATH": str(ROOT)}


def _timed(command: list[str], home: Path) -> tuple[float, float]:
    """(seconds, peak memory in GB) of ``command`` (which must exit 0), run in ``home``."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=home, env=_env(home), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)  # this child's own peak, not the largest child's
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command[2:5]}: {errors[-2000:]}")
    return seconds, usage.ru_maxrss / 2**20  # KB


def store_bytes(home: Path) -> tuple[int, int]:
    """(bytes of ``mlflow.db`` after a checkpoint, bytes of every other file of ``home``)."""
    db = home / "mlflow.db"
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    others = sum(
        path.stat().st_blocks * 512
        for path in home.rglob("*")
        if path.is_file() and not path.name.startswith("mlflow.db")
    )
    return db.stat().st_size, others


def ui_requests(study: str = STUDY) -> dict[str, dict]:
    """The runs searches the UI makes first (``PAGE`` rows asked; the lincls app answers a page
    of 1,000): the study's runs newest first, and lincls's view (its filter, sorted by ratio)."""
    return {
        "the study, newest first": {"max_results": PAGE, "run_view_type": 1,
                                    "order_by": ["attributes.start_time DESC"],
                                    "filter": f"tags.`lincls.study` = '{study}'"},
        "lincls's view": {"max_results": PAGE, "run_view_type": 1, "filter": RUNS_FILTER,
                          "order_by": [f"{view_ui_state()['orderByKey']} DESC"]},
    }  # fmt: skip


def first_rows(home: Path, study: str = STUDY) -> dict[str, tuple[float, int]]:
    """For each of ``ui_requests``: (seconds of the request, runs it returned), asked of a
    ``lincls ui`` started on ``home``'s store once it answers, in that order."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    lincls = Path(sys.executable).with_name("lincls")
    env = {**_env(home), "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    server = subprocess.Popen([str(lincls), "ui", "--port", str(port)], cwd=home, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600  # a store's indexes are made before it answers
        while True:
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("lincls ui did not answer") from None
                time.sleep(0.1)
        with urllib.request.urlopen(
            f"{base}/ajax-api/2.0/mlflow/experiments/get-by-name?experiment_name=lincls"
        ) as answer:
            experiment = json.load(answer)["experiment"]["experiment_id"]
        timed = {}
        for name, body in ui_requests(study).items():
            request = urllib.request.Request(
                f"{base}/ajax-api/2.0/mlflow/runs/search",
                data=json.dumps({"experiment_ids": [experiment], **body}).encode(),
                headers={"Content-Type": "application/json"},
            )
            start = time.perf_counter()
            with urllib.request.urlopen(request, timeout=1800) as answer:
                found = json.load(answer).get("runs", [])
            timed[name] = (time.perf_counter() - start, len(found))
        return timed
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)


def finished_runs(home: Path, study: str = STUDY) -> int:
    """The study's FINISHED runs in ``home``'s store (0 without one), counted in SQL."""
    db = home / "mlflow.db"
    if not db.is_file():
        return 0
    with sqlite3.connect(db) as connection:
        (count,) = connection.execute(
            "SELECT COUNT(*) FROM runs r JOIN tags s ON s.run_uuid = r.run_uuid "
            "AND s.key = 'lincls.study' AND s.value = ? JOIN tags o ON o.run_uuid = r.run_uuid "
            "AND o.key = 'lincls.role' AND o.value = 'run' WHERE r.status = 'FINISHED'",
            (study,),
        ).fetchone()
    return count


def _home() -> contextlib.AbstractContextManager:
    kept = os.environ.get("LINCLS_SWEEP1M_HOME")
    if kept:
        Path(kept).mkdir(parents=True, exist_ok=True)
        return contextlib.nullcontext(kept)
    return tempfile.TemporaryDirectory()


def run(quick: bool = False) -> list[Row]:
    """The sweep1m section: the sweep, its store, its report and the UI's first rows."""
    configs = 2_000 if quick else CONFIGS
    python = sys.executable
    with _home() as folder:
        home = Path(folder)
        before = finished_runs(home)
        load = os.getloadavg()[0]
        sweep, _ = _timed([python, "-m", "lincls.experiments.run", "-m", "experiment=million",
                           "hydra.launcher.n_jobs=2", *(QUICK if quick else [])], home)  # fmt: skip
        finished = finished_runs(home)
        database, files = store_bytes(home)
        report, memory = _timed([python, "-m", "lincls.experiments.report", STUDY, "--out",
                                 str(home / "report")], home)  # fmt: skip
        pages = first_rows(home)
    per_run = (database + files) / max(finished, 1)
    added = finished - before
    resumed = f", {before} of them there before (a resumed study)" if before else ""
    return [
        Row("sweep1m", f"{configs} configs, 2 workers, the whole sweep", sweep,
            note=f"{finished} FINISHED ({configs - finished} lost{resumed}); {added / sweep:.1f} "
            f"runs/s; mlflow.db {database / 1e9:.2f} GB, other files {files / 1e9:.2f} GB "
            f"({per_run / 1e3:.1f} KB a run); load {load:.1f} at the start"),
        Row("sweep1m", f"`lincls report {STUDY}` of its {finished} runs", report,
            note=f"target ≤ 120 s; at most {memory:.2f} GB of memory (target ≤ 4 GB)"),
        *(Row("sweep1m", f"`lincls ui`: the first rows of {name} (runs/search)", seconds,
              note=f"{shown} runs in the first page; target ≤ 10 s")
          for name, (seconds, shown) in pages.items()),
    ]  # fmt: skip
