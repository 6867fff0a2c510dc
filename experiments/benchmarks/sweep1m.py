"""A million-config study on one machine, end to end (slow: hours; run when named).

Each step is the command a user types, timed from its start to its exit, in a fresh home:

1. ``lincls run -m study=sweep1m 'seed=range(0,N)' dataset.n=50 hydra.launcher.n_jobs=2``
   (the default config otherwise: a dataset a seed, its SVM certificates and best comparators,
   every bound); its runs per second, runs FINISHED, and the store's size: ``mlflow.db`` after a
   checkpoint, and every other file of the home (``du``);
2. ``lincls report sweep1m``: seconds and the process's peak memory (targets ≤ 120 s, ≤ 4 GB);
3. ``lincls ui``: the first page of the study's runs as the UI's runs table asks for it
   (``runs/search``, newest first; the lincls app answers a page of 1,000 runs), timed from
   the request once the server answers (target ≤ 10 s).

``--quick`` runs 2,000 configs: the harness's check, not the study.
"""

from __future__ import annotations

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

CONFIGS = 1_000_000
STUDY = "sweep1m"
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


def first_rows(home: Path, study: str = STUDY) -> tuple[float, int]:
    """(seconds of the UI's first request for ``study``'s runs, runs it returned)."""
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
        deadline = time.monotonic() + 300
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
        body = {"experiment_ids": [experiment], "max_results": PAGE, "run_view_type": 1,
                "order_by": ["attributes.start_time DESC"],
                "filter": f"tags.`lincls.study` = '{study}'"}  # fmt: skip
        request = urllib.request.Request(
            f"{base}/ajax-api/2.0/mlflow/runs/search", data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=600) as answer:
            found = json.load(answer).get("runs", [])
        return time.perf_counter() - start, len(found)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(60)


def run(quick: bool = False) -> list[Row]:
    """The sweep1m section: the sweep, its store, its report and the UI's first rows."""
    from lincls.tracking import reader

    configs = 2_000 if quick else CONFIGS
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        load = os.getloadavg()[0]
        sweep, _ = _timed([python, "-m", "lincls.experiments.run", "-m", f"study={STUDY}",
                           f"seed=range(0,{configs})", "dataset.n=50",
                           "hydra.launcher.n_jobs=2"], home)  # fmt: skip
        uri = f"sqlite:///{home / 'mlflow.db'}"
        finished = len(reader.runs(uri, status="FINISHED", role="run"))
        database, files = store_bytes(home)
        report, memory = _timed([python, "-m", "lincls.experiments.report", STUDY, "--out",
                                 str(home / "report")], home)  # fmt: skip
        ui, shown = first_rows(home)
    per_run = (database + files) / max(finished, 1)
    return [
        Row("sweep1m", f"{configs} configs, 2 workers, the whole sweep", sweep,
            note=f"{finished} FINISHED ({configs - finished} lost); {configs / sweep:.1f} "
            f"runs/s; mlflow.db {database / 1e9:.2f} GB, other files {files / 1e9:.2f} GB "
            f"({per_run / 1e3:.1f} KB a run); load {load:.1f} at the start"),
        Row("sweep1m", f"`lincls report {STUDY}` of its {finished} runs", report,
            note=f"target ≤ 120 s; at most {memory:.2f} GB of memory (target ≤ 4 GB)"),
        Row("sweep1m", "`lincls ui`: the study's first rows (runs/search)", ui,
            note=f"{shown} runs in the first page; target ≤ 10 s"),
    ]  # fmt: skip
