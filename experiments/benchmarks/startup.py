"""Start-up: one run as a user starts it (``python -m lincls.experiments.run``, a fresh process) and
``lincls --help``, wall time, best of a few.

A run on an existing SQLite store loads no MLflow (the store is checked and the run written with
SQL), nor matplotlib, scipy's optimisers or the solver unless its config needs them. What it
cannot skip is the floor column: a process importing scikit-learn's estimator base (which
imports scipy.stats), numba and Hydra, the pieces every run uses. The first run of a new store
makes the store through MLflow and pays MLflow's import. A small sweep (``SWEEP`` default configs,
six seeds, one worker, on an existing store) is timed whole, from the command to its exit.
Targets: one run ≤ 2.5 s, the six-config sweep ≤ 4 s, ``lincls --help`` and ``lincls run --help``
≤ 1 s each (the note says met or MISSED). ``lincls ui``: seconds from its start to
its first answer (``/health``), beside MLflow's own ``mlflow server --app-name lincls`` with two
workers and no job runner; target ≤ 5 s.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from lincls.experiments.bench import Row

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["dataset.n=1000", "dataset.d=20"]
SWEEP = ["-m", "seed=range(0,6)"]  # six default configs


def _wall(command: list[str], cwd: Path, repeat: int) -> float:
    """The best wall time of ``repeat`` runs of ``command`` (each must exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def _answered(command: list[str], cwd: Path, port: int, env: dict[str, str]) -> float:
    """Seconds from starting the server ``command`` to its first answer on ``port``."""
    start = time.perf_counter()
    server = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        while server.poll() is None and time.perf_counter() - start < 120:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                    return time.perf_counter() - start
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"{command[:3]} did not answer")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)


def _ui(cwd: Path, repeat: int) -> tuple[float, float]:
    """Best seconds to a first answer: (``lincls ui``, ``mlflow server --app-name lincls``)."""
    python = Path(sys.executable)
    uri = f"sqlite:///{cwd / 'mlflow.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    best = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, command in enumerate((
            [str(python.with_name("lincls")), "ui", "--store", uri, "--port"],
            [str(python.with_name("mlflow")), "server", "--app-name", "lincls", "--workers", "2",
             "--backend-store-uri", uri, "--port"],
        )):  # fmt: skip
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            best[i] = min(best[i], _answered([*command, str(port)], cwd, port, env))
    return best[0], best[1]


def _verdict(seconds: float, target: float) -> str:
    return f"target ≤ {target:g} s: {'met' if seconds <= target else 'MISSED'}"


def run(quick: bool = False) -> list[Row]:
    """The startup section: one run's wall time against the imports it cannot skip."""
    repeat = 2 if quick else 5
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        store = f"tracking.uri=sqlite:///{cwd / 'mlflow.db'}"
        one = [python, "-m", "lincls.experiments.run", *SMALL, store]
        first = _wall(one, cwd, 1)  # makes the store, through MLflow
        warm = _wall(one, cwd, repeat)
        swept = _wall([python, "-m", "lincls.experiments.run", *SWEEP, store,
                       f"hydra.sweep.dir={cwd / 'sweeps'}"], cwd, repeat)  # fmt: skip
        floor = _wall([python, "-c", "import sklearn.base, numba, hydra"], cwd, repeat)
        bare = _wall([python, "-c", "pass"], cwd, repeat)
        lincls = str(Path(python).with_name("lincls"))
        helped = _wall([lincls, "--help"], cwd, repeat)
        run_helped = _wall([lincls, "run", "--help"], cwd, repeat)
        ui, mlflow_server = _ui(cwd, 1 if quick else 3)
    return [
        Row("startup", "one run, existing SQLite store", warm, None, "", None, floor,
            f"{_verdict(warm, 2.5)}; floor: importing sklearn.base, numba and hydra"),
        Row("startup", "a sweep of 6 default configs, existing store", swept, None, "", None,
            floor, f"{_verdict(swept, 4.0)}; one worker, the whole command"),
        Row("startup", "one run, new store (made through MLflow)", first, None, "", None, floor,
            "the first run of a store pays MLflow's import"),
        Row("startup", "`lincls --help`", helped, None, "", None, bare,
            f"{_verdict(helped, 1.0)}; floor: `python -c pass`"),
        Row("startup", "`lincls run --help`", run_helped, None, "", None, bare,
            f"{_verdict(run_helped, 1.0)}; read from lincls.conf's YAML files, no Hydra import "
            "(Hydra's own help: 4–7 s)"),
        Row("startup", "`lincls ui`: first answer", ui, mlflow_server,
            "mlflow server --app-name lincls, 2 workers", None, None, _verdict(ui, 5.0)),
    ]  # fmt: skip
