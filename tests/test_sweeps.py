"""Sweeps end to end: the parent run, launchers, failure isolation, resume after kill -9,
progress, and a real ``mlflow server`` — all through the real CLI into real stores."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, runs_of

SMALL = ["dataset.n=200", "dataset.d=5", "dataset.n_test=50", "certificates.svm=false"]
GRID = ["learner.lr=0.5,1,2", "dataset.margin=0.1,0.2", "seed=0,1"]  # 12 configs


def _split(runs):
    parents = [r for r in runs if r.data.tags.get("lincls.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("lincls.role") == "run"]
    return parents, children


def _configs(children) -> Counter:
    return Counter(
        (r.data.params["learner.lr"], r.data.params["dataset.margin"], r.data.params["seed"])
        for r in children
    )


LAUNCHERS = {
    "lincls": [],
    "lincls pool": ["hydra.launcher.n_jobs=2"],
    "basic": ["hydra/launcher=basic"],
    "joblib": ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
    "submitit_local": ["hydra/launcher=submitit_local"],
}


@pytest.mark.slow
@pytest.mark.parametrize("launcher", list(LAUNCHERS))
def test_a_12_config_sweep_has_one_parent_and_12_finished_children(launcher, tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli(
        ["-m", *GRID, *SMALL, *LAUNCHERS[launcher], f"tracking.uri={uri}",
         f"hydra.sweep.dir={tmp_path / 'sweep'}"],
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    parents, children = _split(runs_of(uri))
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    assert parents[0].data.tags["lincls.jobs"] == "12"
    assert len(children) == 12 and {r.info.status for r in children} == {"FINISHED"}
    assert set(_configs(children).values()) == {1}
    assert {r.data.tags["mlflow.parentRunId"] for r in children} == {parents[0].info.run_id}
    assert len({r.data.tags["lincls.config_hash"] for r in children}) == 12
    summary = "12 jobs: 12 finished, 0 failed, 0 skipped"
    assert summary in done.stderr.splitlines()[-1]  # the launching process's last line
    if launcher != "submitit_local":  # submitit keeps its jobs' output in its own log files
        assert "[lincls] 11/12 done, 0 failed" in done.stderr
        assert "ETA" in done.stderr


# max_vectors=3 fails inside the fit, after its run started (bad input is refused before any
# job: tests/test_bad_input_table.py)
FAILING = ["learner=voted_perceptron", "learner.max_vectors=3,100000", "dataset.margin=0.1,0.2"]


@pytest.mark.parametrize("launcher", ["lincls", "lincls pool", "joblib"])
def test_failed_configs_are_failed_runs_the_rest_finish_and_the_sweep_exits_nonzero(
    launcher, tmp_path
):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli(
        ["-m", *FAILING, "seed=0,1", *SMALL, *LAUNCHERS[launcher], f"tracking.uri={uri}",
         f"hydra.sweep.dir={tmp_path / 'sweep'}"],
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-3000:]
    parents, children = _split(runs_of(uri))
    assert len(parents) == 1 and parents[0].info.status == "FAILED"
    assert len(children) == 8
    keys = ("learner.max_vectors", "dataset.margin", "seed")
    status = {
        tuple(r.data.params[k] for k in keys): (r.info.status, r.data.tags.get("error", ""))
        for r in children
    }
    for (cap, _, _), (state, error) in status.items():
        if cap == "3":  # fails inside the fit, after its run started
            assert state == "FAILED" and "max_vectors" in error
        else:
            assert state == "FINISHED" and error == ""
    assert "4 of 8 configs failed" in done.stderr
    listed = [
        line for line in done.stderr.splitlines() if line.startswith("  learner=voted_perceptron ")
    ]
    assert len(listed) == 4


def _progress(sweep_dir: Path) -> int:
    """Jobs done so far by the one sweep in ``sweep_dir`` (its record is under its parent's id)."""
    return sum(len(p.read_text().splitlines()) for p in sweep_dir.glob(".lincls/*/progress.log"))


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["lincls", "lincls pool"])
def test_a_sweep_killed_with_kill_9_completes_on_a_rerun(launcher, tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    args = [
        "-m", "seed=range(0,24)", *SMALL, *LAUNCHERS[launcher], "tracking.skip_finished=true",
        f"tracking.uri={uri}", f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(
        [sys.executable, "-m", "lincls.experiments.run", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, workers included
    )
    deadline = time.time() + 120
    while _progress(tmp_path / "sweep") < 6 and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_after = _progress(tmp_path / "sweep")
    assert 6 <= killed_after < 24, "the sweep should be killed mid-way"

    again = run_cli(args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    runs = runs_of(uri)
    parents, children = _split(runs)
    assert [r.info.status for r in runs if r.info.status == "RUNNING"] == []
    assert sorted(r.info.status for r in parents) == ["FINISHED", "KILLED"]
    finished = Counter(r.data.params["seed"] for r in children if r.info.status == "FINISHED")
    assert finished == Counter(str(s) for s in range(24))  # every config FINISHED exactly once
    (killed,) = [r for r in parents if r.info.status == "KILLED"]
    before = [r for r in children if r.data.tags["mlflow.parentRunId"] == killed.info.run_id]
    kept = sum(r.info.status == "FINISHED" for r in before)
    assert kept >= 6 and {r.info.status for r in before} <= {"FINISHED", "KILLED"}
    assert f"24 jobs: {24 - kept} finished, 0 failed, {kept} skipped" in again.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_a_sweep_against_a_real_mlflow_server(tmp_path):
    port = _free_port()
    mlflow = Path(sys.executable).with_name("mlflow")
    server = subprocess.Popen(
        [str(mlflow), "server", "--backend-store-uri", f"sqlite:///{tmp_path / 'server.db'}",
         "--default-artifact-root", str(tmp_path / "artifacts"), "--host", "127.0.0.1",
         "--port", str(port), "--workers", "1"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.5)
        done = run_cli(
            ["-m", "seed=0,1", "learner.lr=1,2", *SMALL, f"tracking.uri={uri}",
             f"hydra.sweep.dir={tmp_path / 'sweep'}"],
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        parents, children = _split(runs_of(uri))
        assert len(parents) == 1 and parents[0].info.status == "FINISHED"
        assert len(children) == 4 and {r.info.status for r in children} == {"FINISHED"}
        assert all("mistakes" in r.data.metrics for r in children)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    assert server.poll() is not None


@pytest.mark.slow
def test_make_run_path_the_bound_verification_study_then_its_report(tmp_path):
    """The real named study through the CLI (one seed, two workers), then the report on it."""
    from matplotlib.image import imread
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = run_cli(
        ["-m", "experiment=bound_verification", "seed=0", "hydra.launcher.n_jobs=2",
         f"tracking.uri={uri}", f"hydra.sweep.dir={tmp_path / 'sweep'}",
         f"certificates.cache_dir={tmp_path / 'certificates'}"],
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    parents, children = _split(runs_of(uri))
    assert len(parents) == 1
    assert len(children) == 3 * 4 * 2 * 2 + 3 * 2 + 2 * 2 + 2 * 6 + 4 + 3 * 2 + 2 * 2
    assert {r.info.status for r in children} == {"FINISHED"}
    assert {r.data.tags["bound_violated"] for r in children} == {"false"}
    tight = [r for r in children if r.data.tags["dataset"] == "orthonormal"]
    for run in tight:  # mistakes = d = (R/γ)²: the count meets the bound, and the ratio reads 1
        assert run.data.metrics["mistakes"] == int(run.data.params["dataset.d"])
        assert run.data.metrics["bound_ratio.tightest"] == 1.0
    # No run that breaks nothing shows a ratio above 1, anywhere
    for run in children:
        ratios = {k: v for k, v in run.data.metrics.items() if k.startswith("bound_ratio.")}
        assert all(v <= 1.0 for v in ratios.values()), (run.info.run_name, ratios)
    games = [r for r in children if r.data.tags["dataset"] == "perceptron_game"]
    orthogonal = [r for r in games if r.data.params["dataset.d"] == "100"]
    for run in orthogonal:  # ⌊(R/γ)²⌋ mistakes: exactly the bound where (R/γ)² is a whole number
        square = (1.0 / float(run.data.params["dataset.margin"])) ** 2
        assert run.data.metrics["mistakes"] == int(square + 1e-9)
        if abs(square - round(square)) < 1e-9:
            assert run.data.metrics["bound_ratio.tightest"] == 1.0
    plane = [
        r.data.metrics["bound_ratio.tightest"]
        for r in games
        if r.data.params["dataset.d"] == "2" and r.data.params["learner.bias"] == "none"
    ]
    assert len(plane) == 6 and 0.48 <= min(plane) and max(plane) <= 0.54 + 1e-9
    for run in games:  # every presentation a mistake: Freund–Schapire says nothing here
        assert run.data.tags["bounds.vacuous"] == "freund_schapire"
        assert run.data.tags["bound.tightest"] != "freund_schapire"

    out = tmp_path / "report"
    reported = subprocess.run(
        [sys.executable, "-m", "lincls.experiments.report", "bound_verification",
         "--tracking-uri", uri, "--out", str(out)],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True,
    )  # fmt: skip
    assert reported.returncode == 0, reported.stderr[-3000:]
    text = (out / "report.md").read_text()
    assert "Violations in all: **0**" in text
    assert "`orthonormal`: 6 runs, tightest a priori bound ratio 1.0 to 1.0" in text
    pictures = sorted(out.glob("*.png"))
    assert {p.name for p in pictures} >= {"mistakes_vs_bound.png", "decision_boundaries.png"}
    for picture in pictures:
        pixels = imread(picture)
        assert pixels.shape[0] >= 300 and pixels.std() > 0
    client = MlflowClient(tracking_uri=uri)
    logged = {a.path for a in client.list_artifacts(parents[0].info.run_id, "report")}
    assert {f"report/{p.name}" for p in pictures} | {"report/report.md"} <= logged


SHARED = ["alma", "arow", "averaged_perceptron", "budget_perceptron", "confidence_weighted",
          "forgetron", "kernel_perceptron", "learning_rate_perceptron", "margin_perceptron",
          "mira", "passive_aggressive", "perceptron", "projectron", "romma",
          "second_order_perceptron", "voted_perceptron"]  # fmt: skip


def test_sweep_shares_data(tmp_path):
    """A sweep's jobs of one dataset share its data and cached certificates in their process
    (``lincls.runner.LastData``, ``lincls.geometry.cache``); each of its runs, here one per
    learner and two passes each, logs what that config measures alone."""
    from lincls.api.compose import compose_run
    from lincls.evaluation import measure

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    small = ["dataset.n=60", "dataset.d=4", "dataset.n_test=20"]
    done = run_cli(
        ["-m", f"learner={','.join(SHARED)}", "passes=1,2", *small, f"tracking.uri={uri}",
         f"hydra.sweep.dir={tmp_path / 'sweep'}"],
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    _, children = _split(runs_of(uri))
    assert len(children) == 2 * len(SHARED)
    compared = 0
    for run in children:
        learner, passes = run.data.params["learner.name"], run.data.params["passes"]
        alone = measure(compose_run([f"learner={learner}", f"passes={passes}", *small,
                                     f"certificates.cache_dir={tmp_path / 'alone'}"]))  # fmt: skip
        names = [k for k in alone.metrics if k == "mistakes" or k.startswith("bound.")]
        compared += len(names)
        for name in names:
            assert run.data.metrics[name] == pytest.approx(alone.metrics[name], rel=1e-12), (
                learner, passes, name)  # fmt: skip
    assert compared > 2 * len(children)  # mistakes and bounds: 94 of them
