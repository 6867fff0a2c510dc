"""Stores that hold: bad store settings are one line; many sweeps may open one new SQLite file at
once; a tracking server that dies stops a sweep in bounded time, and a re-run completes it;
Ctrl-C is one line and exit 130. Real processes, real stores, a real ``mlflow server``."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from clusters import free_port, start, stop, wait_until
from conftest import ROOT, run_cli, runs_of
from mlflow.tracking import MlflowClient

from lincls.errors import LinclsInputError
from lincls.tracking import record
from lincls.tracking.store import Budgeted, StoreError, check_uri

SMALL = ["dataset.n=200", "dataset.d=5", "dataset.n_test=50", "certificates.svm=false"]


# --- the URI, checked before anything is stored ---------------------------------------------


@pytest.mark.parametrize(
    "uri", ["garbage://x", "sqlite://relative.db", "no-scheme-at-all", "ftp://host/db"]
)
def test_a_uri_of_no_store_names_tracking_uri_and_the_schemes(uri):
    with pytest.raises(LinclsInputError) as caught:
        check_uri(uri)
    message = str(caught.value)
    assert message.startswith("tracking.uri: ")
    assert "\n" not in message and repr(uri) in message


@pytest.mark.parametrize(
    "uri", ["http://127.0.0.1:5000", "postgresql+psycopg://u:p@h/db", "mysql://u:p@h/db"]
)
def test_uris_of_real_stores_pass(uri):
    check_uri(uri)


def test_garbage_uri_is_one_line_exit_2_and_nothing_stored(tmp_path):
    done = run_cli(["tracking.uri=garbage://x", *SMALL], cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: tracking.uri: must be a path ending in .db or start with one of sqlite://, http"
    )
    assert "file://" not in lines[0]  # a folder store, which MLflow refuses, is not offered
    assert not list(tmp_path.rglob("*.db"))


def test_a_sweep_with_a_garbage_uri_is_one_line_exit_2(tmp_path):
    done = run_cli(["-m", "seed=0,1", "tracking.uri=garbage://x", *SMALL,
                    f"hydra.sweep.dir={tmp_path / 'sweep'}"], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: tracking.uri: ")


@pytest.mark.parametrize(
    ("override", "field"),
    [("tracking.retry_seconds=-1", "tracking.retry_seconds"),
     ("tracking.max_store_failures=0", "tracking.max_store_failures")],
)  # fmt: skip
def test_store_budgets_out_of_range_are_one_line(override, field, tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli([override, f"tracking.uri={uri}", *SMALL], cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith(f"error: {field}: must be")
    assert runs_of(uri) == []


def test_a_store_in_a_read_only_directory_is_one_line_naming_tracking_uri(tmp_path, read_only_dir):
    locked, prefix = read_only_dir
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.time()
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "lincls.experiments.run", *SMALL,
         f"tracking.uri=sqlite:///{locked / 'mlflow.db'}", f"hydra.run.dir={tmp_path / 'run'}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: tracking.uri: the store {locked / 'mlflow.db'} is in a directory this user "
        "cannot write"
    ]
    assert time.time() - started < 30  # no minute of retries
    assert not (locked / "mlflow.db").exists()


# --- the retry budget -----------------------------------------------------------------------


class _Flaky:
    """A stand-in for a client whose store answers only from the ``ok_from``-th call on."""

    def __init__(self, ok_from: int, error: Exception) -> None:
        self.calls, self.ok_from, self.error = 0, ok_from, error

    def get_experiment_by_name(self, name):
        self.calls += 1
        if self.calls < self.ok_from:
            raise self.error
        return name


def test_a_transient_failure_is_retried_and_the_call_answers():
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import TEMPORARILY_UNAVAILABLE

    flaky = _Flaky(3, MlflowException("locked", error_code=TEMPORARILY_UNAVAILABLE))
    assert Budgeted(flaky, "sqlite:///x.db", 10).get_experiment_by_name("e") == "e"
    assert flaky.calls == 3


def test_a_store_that_never_answers_costs_the_budget_then_one_line(monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "1")
    flaky = _Flaky(10**9, ConnectionRefusedError(111, "Connection refused"))
    started = time.monotonic()
    with pytest.raises(StoreError) as caught:
        Budgeted(flaky, "http://127.0.0.1:9", 3).get_experiment_by_name("e")
    seconds = time.monotonic() - started
    assert 1.0 <= seconds <= 3.0  # attempts start until budget − one request timeout
    assert flaky.calls >= 3
    message = str(caught.value)
    assert message.startswith("tracking.uri: the store http://127.0.0.1:9 did not answer")
    assert "\n" not in message


def test_a_mistake_in_the_request_is_not_retried():
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import RESOURCE_DOES_NOT_EXIST

    flaky = _Flaky(10**9, MlflowException("no such run", error_code=RESOURCE_DOES_NOT_EXIST))
    with pytest.raises(MlflowException):
        Budgeted(flaky, "sqlite:///x.db", 30).get_experiment_by_name("e")
    assert flaky.calls == 1


# --- many sweeps opening one new SQLite store -----------------------------------------------


def _sweep(tmp: Path, uri: str, seeds: str, extra: list[str] = ()) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "lincls.experiments.run", "-m", f"seed={seeds}", *SMALL, *extra,
         f"tracking.uri={uri}"],
        cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.parametrize(("sweeps", "trials"), [(2, 5), (8, 2)])
def test_sweeps_started_at_once_on_a_fresh_sqlite_store_all_finish(sweeps, trials, tmp_path):
    """``trials`` trials of ``sweeps`` sweeps of 3 configs each, with the default (timestamped)
    sweep directory: every run FINISHED under its own parent, the file's integrity intact."""
    for trial in range(trials):
        tmp = tmp_path / f"trial{trial}"
        tmp.mkdir()
        uri = f"sqlite:///{tmp / 'mlflow.db'}"
        processes = [_sweep(tmp, uri, f"{3 * k},{3 * k + 1},{3 * k + 2}") for k in range(sweeps)]
        outputs = [p.communicate(timeout=600) for p in processes]
        codes = [p.returncode for p in processes]
        assert codes == [0] * sweeps, [err[-2000:] for _, err in outputs]
        runs = runs_of(uri)
        parents = [r for r in runs if r.data.tags.get("lincls.role") == "sweep"]
        children = [r for r in runs if r.data.tags.get("lincls.role") == "run"]
        assert len(parents) == sweeps and len(children) == 3 * sweeps
        assert {r.info.status for r in runs} == {"FINISHED"}
        per_parent = Counter(r.data.tags["mlflow.parentRunId"] for r in children)
        assert per_parent == {p.info.run_id: 3 for p in parents}
        seeds = Counter(int(r.data.params["seed"]) for r in children)
        assert seeds == dict.fromkeys(range(3 * sweeps), 1)
        with sqlite3.connect(tmp / "mlflow.db") as db:
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        # each sweep's record and progress in a place of its own
        records = list(tmp.glob("results/hydra/sweeps/*/.lincls/*/progress.log"))
        assert sorted(len(r.read_text().splitlines()) for r in records) == [3] * sweeps


# --- a tracking server that dies mid-sweep --------------------------------------------------


def _server(tmp: Path, port: int) -> subprocess.Popen:
    mlflow = Path(sys.executable).with_name("mlflow")
    process = start(
        [str(mlflow), "server", "--backend-store-uri", f"sqlite:///{tmp / 'server.db'}",
         "--default-artifact-root", str(tmp / "artifacts"), "--host", "127.0.0.1",
         "--port", str(port), "--workers", "1"],
        tmp / "server.log",
    )  # fmt: skip

    def up() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    wait_until(up, "the mlflow server answers", 120, log=tmp / "server.log")
    return process


def _progress(root: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in root.rglob(".lincls/*/progress.log"))


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_dying_server_stops_the_sweep_in_two_minutes_and_a_rerun_completes_it(tmp_path):
    port = free_port()
    uri = f"http://127.0.0.1:{port}"
    server = _server(tmp_path, port)
    sweep = _sweep(tmp_path, uri, "range(0,30)", ["tracking.skip_finished=true"])
    try:
        wait_until(lambda: _progress(tmp_path) >= 4, "4 jobs done", 300, (sweep,))
    finally:
        stop(server, timeout=0)  # SIGTERM, then SIGKILL to what is left of it
    killed = time.time()
    _, err = sweep.communicate(timeout=300)
    assert time.time() - killed <= 120, err[-3000:]
    assert sweep.returncode == 1, err[-3000:]
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    summary = next(
        i
        for i, line in enumerate(lines)
        if line.startswith("[lincls] sweep adhoc-seed-") and ": 30 jobs:" in line
    )
    assert " finished, 3 failed, " in lines[summary]
    # the configs the store failed, listed; the ones not run, counted; how to resume
    assert lines[summary + 1].startswith("[lincls] 3 of 30 configs failed (parent run ")
    listed = lines[summary + 2 : summary + 5]
    assert all(line.startswith("  seed=") and "did not answer" in line for line in listed)
    done = int(lines[summary].split(": ")[2].split(" finished")[0])
    assert lines[summary + 5] == f"[lincls] {30 - done - 3} of 30 configs not run"
    assert lines[-1].startswith("[lincls] sweep stopped: the store failed 3 runs in a row")
    assert "tracking.skip_finished=true" in lines[-1] and len(lines) == summary + 7
    assert sum(1 for line in lines if line.startswith("[lincls] failed:")) == 3

    server = _server(tmp_path, port)
    try:
        rerun = _sweep(tmp_path, uri, "range(0,30)", ["tracking.skip_finished=true"])
        _, err = rerun.communicate(timeout=600)
        assert rerun.returncode == 0, err[-3000:]
        runs = runs_of(uri)
    finally:
        stop(server)
    children = [r for r in runs if r.data.tags.get("lincls.role") == "run"]
    finished = Counter(int(r.data.params["seed"]) for r in children if r.info.status == "FINISHED")
    assert finished == dict.fromkeys(range(30), 1)
    assert not [r for r in runs if r.info.status == "RUNNING"]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_pool_on_a_server_store_has_its_runs_written_by_the_launching_process(tmp_path):
    """A store written through MLflow's calls: the workers measure, the launching process writes
    (tracking.write_payload); every run whole, each dataset input and artifact there."""
    port = free_port()
    uri = f"http://127.0.0.1:{port}"
    server = _server(tmp_path, port)
    try:
        failing = ["hydra.launcher.n_jobs=2", "learner=voted_perceptron", "learner.max_vectors=3"]
        sweep = _sweep(tmp_path, uri, "range(0,6)", failing)
        _, err = sweep.communicate(timeout=600)
        assert sweep.returncode == 1, err[-3000:]  # each fails inside its fit: six FAILED runs
        sweep = _sweep(tmp_path, uri, "range(0,6)", ["hydra.launcher.n_jobs=2"])
        _, err = sweep.communicate(timeout=600)
        assert sweep.returncode == 0, err[-3000:]
        runs = runs_of(uri)
        client = MlflowClient(uri)
        children = [r for r in runs if r.data.tags.get("lincls.role") == "run"]
        statuses = Counter(r.info.status for r in children)
        assert statuses == {"FAILED": 6, "FINISHED": 6}
        for run in children:
            if run.info.status == "FAILED":
                assert "max_vectors" in run.data.tags["error"]
                continue
            assert run.data.metrics["mistakes"] >= 0 and "bound.tightest" in run.data.metrics
            assert run.data.params["dataset.n"] == "200"
            assert [d.dataset.digest for d in run.inputs.dataset_inputs] != []
            # its curves and histogram in its record (through the server's calls too), no file
            found = record.read(client.get_run(run.info.run_id).data.tags)
            assert len(found.curves["cumulative_mistakes"]) > 1 and len(found.files) == 1
            assert client.list_artifacts(run.info.run_id) == []
    finally:
        stop(server)


# --- Ctrl-C -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("launcher", [[], ["hydra.launcher.n_jobs=2"]], ids=["lincls", "pool"])
def test_ctrl_c_is_one_line_exit_130_and_the_store_left_right(launcher, tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    sweep = _sweep(tmp_path, uri, "range(0,200)", launcher)
    wait_until(lambda: _progress(tmp_path) >= 3, "3 jobs done", 300, (sweep,))
    before = _progress(tmp_path)
    os.killpg(sweep.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole group
    _, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 130, err[-3000:]
    lines = err.strip().splitlines()
    after = lines[next(i for i, line in enumerate(lines) if "interrupted" in line) :]
    assert len(after) <= 3, after
    assert "Traceback" not in err
    line = after[0]
    assert line.startswith("[lincls] interrupted: ") and " of 200 configs finished" in line
    assert line.endswith("tracking.skip_finished=true") and "resume with: " in line
    runs = runs_of(uri)
    assert not [r for r in runs if r.info.status == "RUNNING"]
    parent = next(r for r in runs if r.data.tags.get("lincls.role") == "sweep")
    assert parent.info.status == "KILLED"
    assert before <= sum(r.info.status == "FINISHED" for r in runs) < 200
    # the line counts what the store holds, the runs of chunks that never came back included
    said = int(line.split("interrupted: ", 1)[1].split(" of ", 1)[0])
    children = [r for r in runs if r.data.tags.get("lincls.role") == "run"]
    assert said == sum(r.info.status == "FINISHED" for r in children)
