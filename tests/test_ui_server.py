"""``lincls ui`` as a real server: MLflow's server app without its job runner, on two workers
forked from one process that imported it, within 1 GB of memory for all its processes together.

Without MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false MLflow starts a job runner beside the server:
eight ``huey`` consumer processes of ~250 MB each, for a UI that runs no jobs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from clusters import free_port, wait_until
from conftest import ROOT

from lincls import tracking

GB = 1024**3


def _children() -> dict[int, list[int]]:
    """Every live process's children, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])  # the name may hold spaces or ')'
        children.setdefault(parent, []).append(int(entry))
    return children


def process_tree(root: int) -> dict[int, tuple[str, int]]:
    """{pid: (command line, resident bytes)} of ``root`` and all its descendants."""
    children, pids = _children(), [root]
    for pid in pids:
        pids.extend(children.get(pid, []))
    tree = {}
    for pid in pids:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue  # gone meanwhile
        kb = next((int(x.split()[1]) for x in status.splitlines() if x.startswith("VmRSS:")), 0)
        tree[pid] = (command, kb * 1024)
    return tree


def _store(folder: Path) -> str:
    """A store as runs leave it (``lincls ui`` shows a store, it makes none)."""
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    tracking.open_experiment(uri)
    return uri


def _answers(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status == 200


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_lincls_ui_answers_on_two_workers_without_a_job_runner_within_1_gb(tmp_path):
    port = free_port()
    lincls = Path(sys.executable).with_name("lincls")
    command = [str(lincls)] if lincls.exists() else [sys.executable, "-m", "lincls.experiments.cli"]
    log = tmp_path / "ui.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_SERVER_")}
    env.pop("XDG_RUNTIME_DIR", None)
    env["HOME"] = str(tmp_path)  # where gunicorn would put its control socket
    store = _store(tmp_path)
    started, tree = time.monotonic(), {}
    with log.open("w") as out:
        server = subprocess.Popen(
            [*command, "ui", "--store", store,
             "--host", "127.0.0.1", "--port", str(port)],
            cwd=tmp_path, env={**env, "PYTHONPATH": str(ROOT)}, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,  # its own group, workers included
        )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(f"{base}/"), "lincls ui", 120, (server,), log)
        first_answer = time.monotonic() - started
        # a liveness bound, not the target (~5 s on a quiet machine): the time grows with the load
        assert first_answer <= 60, first_answer
        # both workers up and reading the store (each opens it on its first request)
        for _ in range(4):
            assert _answers(f"{base}/ajax-api/2.0/mlflow/experiments/search?max_results=5")
        time.sleep(3)  # MLflow launches its job runner right after the server: give it time
        tree = process_tree(server.pid)
        commands = [c for c, _ in tree.values()]
        assert not [c for c in commands if "huey" in c], commands
        # lincls ui became gunicorn's arbiter (the same process), which forked the 2 workers
        assert len(tree) == 3, commands
        assert all(" -m gunicorn --preload " in c for c in commands), commands
        family = _children()
        assert sorted(len(family.get(pid, [])) for pid in tree) == [0, 0, 2], commands
        resident = sum(rss for _, rss in tree.values())
        assert resident <= GB, f"{resident / 2**20:.0f} MB in {len(tree)} processes"
        assert not (tmp_path / ".gunicorn").exists()  # no control socket another UI would share
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
    # stopping it stops every process it started
    wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in tree), "stop", 30)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_lincls_ui_workers_stop_when_their_arbiter_is_killed_outright(tmp_path):
    port = free_port()
    log = tmp_path / "ui.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "lincls.experiments.cli", "ui", "--store", _store(tmp_path),
             "--port", str(port)],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        wait_until(lambda: _answers(f"http://127.0.0.1:{port}/health"), "lincls ui", 120,
                   (server,), log)  # fmt: skip
        workers = _children().get(server.pid, [])
        assert len(workers) == 2
        os.kill(server.pid, signal.SIGKILL)  # the arbiter alone, no SIGTERM to its workers
        server.wait(10)
        wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in workers),
                   "the orphaned workers' exit", 30)  # fmt: skip
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
