"""Sweeps on real clusters started here, on 127.0.0.1: many sweeps at once through an MLflow
server over PostgreSQL (``make server DB=postgresql://…``), a sweep through Hydra's Ray launcher
on a two-node Ray cluster, and one through ``submitit_slurm`` on a one-node Slurm cluster; and at
cluster size, chunks of configs losing a node or a task: 20,000 configs through ``lincls_ray``
into PostgreSQL on three nodes, 5,000 through ``lincls_slurm`` as array tasks.

Every count is read back from the store itself, in SQL: FINISHED child runs grouped by the
config-hash tag, so a lost config is a missing hash and a duplicated one a count above 1. The
tests never run at the same time on a small machine: the suite's scheduler gives this whole file
to one xdist worker (``TOGETHER`` in ``conftest.py``), and each holds one file lock besides (for
any other way of running them). Each is bounded by pytest-timeout.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shlex
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from contextlib import ExitStack, closing
from pathlib import Path

import pytest
from clusters import Unavailable, free_port, is_root, start, stop, tail_of, wait_until
from conftest import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("one_cluster_at_a_time"),
]

SMALL = ["dataset.n=100", "dataset.d=5", "dataset.n_test=50", "certificates.svm=false"]

# The children of every sweep, one row per run: status, study, config hash, the swept values and
# the parent run.
CHILDREN = """
SELECT r.status, s.value, h.value, lr.value, seed.value, p.value
FROM runs r
JOIN tags role ON role.run_uuid = r.run_uuid AND role.key = 'lincls.role' AND role.value = 'run'
JOIN tags s ON s.run_uuid = r.run_uuid AND s.key = 'lincls.study'
JOIN tags h ON h.run_uuid = r.run_uuid AND h.key = 'lincls.config_hash'
JOIN params lr ON lr.run_uuid = r.run_uuid AND lr.key = 'learner.lr'
JOIN params seed ON seed.run_uuid = r.run_uuid AND seed.key = 'seed'
JOIN tags p ON p.run_uuid = r.run_uuid AND p.key = 'mlflow.parentRunId'
"""
PARENTS = """
SELECT r.status, s.value, j.value, r.run_uuid
FROM runs r
JOIN tags role ON role.run_uuid = r.run_uuid AND role.key = 'lincls.role' AND role.value = 'sweep'
JOIN tags s ON s.run_uuid = r.run_uuid AND s.key = 'lincls.study'
JOIN tags j ON j.run_uuid = r.run_uuid AND j.key = 'lincls.jobs'
"""


@pytest.fixture
def one_cluster_at_a_time(tmp_path_factory):
    """Hold a lock that every worker of this session shares while a cluster test runs."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's directory, above each worker's own
    with open(root / "clusters.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


FINISHED = "SELECT run_uuid FROM runs WHERE status = 'FINISHED'"
SWEEP_SPANS = """
SELECT r.start_time, r.end_time FROM runs r
JOIN tags role ON role.run_uuid = r.run_uuid AND role.key = 'lincls.role' AND role.value = 'sweep'
"""


def query(connect, sql: str) -> list[tuple]:
    with closing(connect()) as connection, closing(connection.cursor()) as cursor:
        cursor.execute(sql)
        return [tuple(row) for row in cursor.fetchall()]


def sweep_command(args: list[str], tmp: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "lincls.experiments.run", "-m", *args, *SMALL,
            f"hydra.sweep.dir={tmp / name}",
            f"certificates.cache_dir={tmp / 'certificates'}"]  # fmt: skip


def documented_run(cluster: str) -> list[str]:
    """The ``lincls run`` command the scale-out page shows for ``cluster`` ("Slurm", "Ray"), its
    arguments after ``lincls`` as a user types them: the tests run it, placeholders filled."""
    from _docs_examples import blocks

    for block in blocks(ROOT / "docs" / "howto" / "scale-out.md"):
        if block.skip and f"needs a {cluster} cluster" in block.skip:
            for line in block.text.replace("\\\n", " ").splitlines():
                if line.startswith("$ lincls run "):
                    return shlex.split(line[2:], comments=True)[1:]
    raise AssertionError(f"the scale-out page shows no `lincls run` on {cluster}")


def cli_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS")}
    return {**env, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]), **extra}


def check_store(connect, studies: dict[str, tuple[str, int]]) -> Counter:
    """Each study (name → learner.lr, seeds) is one FINISHED parent whose children are its
    configs, each FINISHED exactly once, and nothing else was logged. Returns runs per hash."""
    parents = query(connect, PARENTS)
    children = query(connect, CHILDREN)
    assert query(connect, "SELECT COUNT(*) FROM runs") == [(len(parents) + len(children),)]
    assert sorted(p[:3] for p in parents) == sorted(
        ("FINISHED", study, str(n)) for study, (_, n) in studies.items()
    )
    parent_of = {study: run_id for _, study, _, run_id in parents}
    assert Counter(status for status, *_ in children) == {
        "FINISHED": sum(n for _, n in studies.values())
    }
    assert all(parent == parent_of[study] for _, study, _, _, _, parent in children)
    per_hash = Counter(h for _, _, h, *_ in children)
    assert set(per_hash.values()) == {1}  # 0 duplicated
    expected = {(study, lr, str(seed)) for study, (lr, n) in studies.items() for seed in range(n)}
    logged = [(study, lr, seed) for _, study, _, lr, seed, _ in children]
    assert len(logged) == len(expected) and set(logged) == expected  # 0 lost
    return per_hash


def sqlite_store(path: Path):
    return lambda: sqlite3.connect(path)


def enter(stack: ExitStack, cluster):
    """Start ``cluster`` (a context manager) on ``stack``, or skip saying what is missing."""
    try:
        return stack.enter_context(cluster)
    except Unavailable as exc:
        pytest.skip(str(exc))


def report(name: str, seconds: float, per_hash: Counter) -> None:
    print(
        f"\n[clusters] {name}: {seconds:.0f} s, {len(per_hash)} configs FINISHED, "
        f"max {max(per_hash.values())} run per config hash",
        file=sys.stderr,
    )


# ---------------------------------------------------------------------------------------------
# PostgreSQL behind `make server`: 4 sweeps × 50 configs writing at once


def make_server(make: str, db: str, port: int, artifacts: Path, log: Path) -> subprocess.Popen:
    """``make server`` with this interpreter's virtualenv, never re-installing it."""
    venv = Path(sys.prefix)
    return start(
        [make, "--no-print-directory", "-C", str(ROOT), "-o", f"{venv}/.installed", "server",
         f"VENV={venv}", "HOST=127.0.0.1", f"PORT={port}", f"DB={db}",
         f"ARTIFACTS={artifacts}"],
        log,
        env=cli_env(),
    )  # fmt: skip


def healthy(uri: str) -> bool:
    with urllib.request.urlopen(f"{uri}/health", timeout=2) as reply:
        return reply.status == 200


@pytest.mark.timeout(1200)  # with the wait for the lock
def test_four_sweeps_of_50_write_at_once_through_a_server_over_postgresql(tmp_path):
    psycopg = pytest.importorskip("psycopg", reason="the `postgres` extra is not installed")
    from clusters.postgres import postgres_server

    began = time.monotonic()
    with ExitStack() as stack:
        make = shutil.which("make")
        if make is None:
            pytest.skip("`make` is not installed")
        db = enter(stack, postgres_server())
        port = free_port()
        server = make_server(make, db, port, tmp_path / "artifacts", tmp_path / "server.log")
        stack.callback(stop, server)
        uri = f"http://127.0.0.1:{port}"
        wait_until(lambda: healthy(uri), "make server", 180, (server,), tmp_path / "server.log")
        studies = {f"pg{k}": (str(float(k + 1)), 50) for k in range(4)}
        sweeps = {}
        for study, (lr, n) in studies.items():
            args = [
                f"study={study}",
                f"learner.lr={lr}",
                f"seed=range(0,{n})",
                f"tracking.uri={uri}",
            ]
            log = stack.enter_context(open(tmp_path / f"{study}.log", "wb"))
            sweeps[study] = subprocess.Popen(
                sweep_command(args, tmp_path, study),
                cwd=tmp_path,
                env=cli_env(),
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            stack.callback(sweeps[study].kill)  # a no-op once it has exited
        for study, sweep in sweeps.items():
            code = sweep.wait(timeout=600)
            assert code == 0, tail_of(tmp_path / f"{study}.log")
        stop(server)
        assert server.poll() is not None
        per_hash = check_store(lambda: psycopg.connect(db), studies)
        assert len(per_hash) == 200
        spans = query(lambda: psycopg.connect(db), SWEEP_SPANS)
        assert len(spans) == 4
        assert max(start for start, _ in spans) < min(end for _, end in spans)  # all 4 at once
    report("PostgreSQL, 4 sweeps × 50 configs through make server", time.monotonic() - began,
           per_hash)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Ray: a head and a worker node, a sweep through Hydra's Ray launcher


def in_own_network(command: list[str]) -> list[str]:
    """``command`` in a new network namespace with only loopback, when this user may make one."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or shutil.which("ip", path="/sbin")
    if not is_root() or unshare is None or ip is None:
        return command
    try:  # with no route out, Ray takes the host name's address: it must be a loopback one
        if not socket.gethostbyname(socket.gethostname()).startswith("127."):
            return command
    except OSError:
        return command
    probe = subprocess.run([unshare, "--net", "--", ip, "link", "set", "lo", "up"],
                           capture_output=True, timeout=30)  # fmt: skip
    if probe.returncode != 0:
        return command
    return [unshare, "--net", "--", "sh", "-c", f'"{ip}" link set lo up && exec "$@"', "sh",
            *command]  # fmt: skip


@pytest.mark.timeout(1200)  # with the wait for the lock
def test_a_sweep_through_hydras_ray_launcher_on_a_two_node_ray_cluster(tmp_path):
    for module in ("ray", "hydra_plugins.hydra_ray_launcher"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the `ray` extra)")
    began = time.monotonic()
    store = tmp_path / "mlflow.db"
    studies = {"ray": ("1.0", 16)}
    overrides = ["study=ray", "learner.lr=1.0", "seed=range(0,16)", f"tracking.uri=sqlite:///{store}",
                 *SMALL, f"hydra.sweep.dir={tmp_path / 'sweep'}",
                 f"certificates.cache_dir={tmp_path / 'certificates'}"]  # fmt: skip
    result = tmp_path / "result.json"
    command = [sys.executable, "-m", "clusters.ray_sweep", str(result), "--", *overrides]
    done = subprocess.run(
        in_own_network(command),
        cwd=tmp_path,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=800,
    )
    assert done.returncode == 0, done.stderr[-10000:]
    outcome = json.loads(result.read_text())
    assert outcome["returncode"] == 0, outcome["stderr"][-10000:]
    assert outcome["nodes"] == ["127.0.0.1", "127.0.0.1"]  # a head and a worker node, alive
    per_hash = check_store(sqlite_store(store), studies)
    assert len(per_hash) == 16
    report(
        f"Ray, 16 configs on 2 nodes (cluster up in {outcome['start_seconds']:.0f} s, "
        f"sweep {outcome['sweep_seconds']:.0f} s)",
        time.monotonic() - began,
        per_hash,
    )


RAY_CONFIGS = 20_000


@pytest.mark.timeout(2400)  # with the wait for the lock
def test_lincls_ray_runs_20000_configs_into_postgresql_and_a_removed_node_loses_nothing(tmp_path):
    """``hydra/launcher=lincls_ray`` on three nodes, the store a PostgreSQL database: 20,000
    configs in chunks the launcher sizes. The last worker node is stopped once 8,000 runs are
    written: the sweep names the configs of the chunks it held as not run and exits 1; the same
    command again, on the two nodes left, runs exactly those (each config FINISHED once, counted
    in the store by config hash)."""
    for module in ("ray", "psycopg"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (the `ray` and `postgres` extras)")
    began = time.monotonic()
    typed = documented_run("Ray")  # the scale-out page's command, the cluster's address in it
    assert f"seed=range(0,{RAY_CONFIGS})" in typed and "hydra/launcher=lincls_ray" in typed, typed
    home = tmp_path / "results"  # the sweep's folders and certificate cache, as a user's
    result = tmp_path / "result.json"
    command = [sys.executable, "-m", "clusters.ray_sweep", str(result), "--nodes", "3",
               "--command", "--remove-node-at", "8000", "--postgres", "--again",
               "--", *typed]  # fmt: skip
    done = subprocess.run(in_own_network(command), cwd=tmp_path, env=cli_env(LINCLS_HOME=str(home)),
                          capture_output=True, text=True, timeout=2300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-10000:]
    outcome = json.loads(result.read_text())
    first, again = outcome["runs"]
    assert outcome["nodes"] == ["127.0.0.1"] * 3 and outcome["nodes_after"] == ["127.0.0.1"] * 2
    assert first["removed_at"] is not None, first["stderr"][-5000:]
    assert first["removed_at"] < RAY_CONFIGS, first["stderr"][-5000:]
    assert first["returncode"] == 1, first["stderr"][-10000:]
    assert "a Ray task (jobs #" in first["stderr"], first["stderr"][-10000:]
    assert "configs have no FINISHED run" in first["stderr"], first["stderr"][-10000:]
    assert again["returncode"] == 0, again["stderr"][-10000:]
    per_hash = Counter(h for _, h in outcome["children"])
    assert len(per_hash) == RAY_CONFIGS and set(per_hash.values()) == {1}  # 0 lost, 0 duplicated
    assert {status for status, _ in outcome["children"]} == {"FINISHED"}  # none left RUNNING
    report(
        f"Ray, {RAY_CONFIGS:,} configs into PostgreSQL on 3 nodes, one removed at "
        f"{first['removed_at']} runs (sweep {first['seconds']:.0f} s, resume "
        f"{again['seconds']:.0f} s)",
        time.monotonic() - began,
        per_hash,
    )


# ---------------------------------------------------------------------------------------------
# Slurm: a one-node cluster, a sweep through submitit_slurm, the store a SQLite file both share


@pytest.mark.timeout(1200)  # with the wait for the lock
def test_a_sweep_through_submitit_slurm_on_a_one_node_slurm_cluster(tmp_path):
    from clusters.slurm import array_task_states, slurm_cluster

    began = time.monotonic()
    store = tmp_path / "mlflow.db"
    studies = {"slurm": ("1.0", 8)}
    with ExitStack() as stack:
        slurm_env = enter(stack, slurm_cluster())
        args = ["hydra/launcher=submitit_slurm", "hydra.launcher.timeout_min=10",
                "hydra.launcher.cpus_per_task=1", "study=slurm", "learner.lr=1.0",
                "seed=range(0,8)", f"tracking.uri=sqlite:///{store}"]  # fmt: skip
        done = subprocess.run(
            sweep_command(args, tmp_path, "sweep"),
            cwd=tmp_path,
            env=cli_env(SLURM_CONF=slurm_env["SLURM_CONF"]),
            capture_output=True,
            text=True,
            timeout=700,
        )
        assert done.returncode == 0, done.stderr[-10000:]
        # a task's result is back before its process has ended: the sweep may exit first
        deadline = time.monotonic() + 60
        states = array_task_states(slurm_env)
        while "RUNNING" in states and time.monotonic() < deadline:
            time.sleep(0.5)
            states = array_task_states(slurm_env)
    assert states == ["COMPLETED"] * 8  # the 8 jobs ran as Slurm array tasks, and finished
    per_hash = check_store(sqlite_store(store), studies)
    assert len(per_hash) == 8
    report("Slurm, 8 configs through submitit_slurm", time.monotonic() - began, per_hash)


SLURM_CONFIGS = 5_000


@pytest.mark.timeout(1500)  # with the wait for the lock
def test_lincls_slurm_runs_5000_configs_as_array_tasks_and_a_killed_task_loses_nothing(tmp_path):
    """``hydra/launcher=lincls_slurm``: 5,000 configs in chunks the launcher sizes from the grid
    and the cluster's CPUs (5 array tasks of 1,000). One task killed while it runs: the sweep
    names the configs it had not written as not run and exits 1; the same command again runs
    exactly those (each config FINISHED once, counted in the store by config hash)."""
    psycopg = pytest.importorskip("psycopg", reason="the `postgres` extra is not installed")
    from clusters.postgres import postgres_server
    from clusters.slurm import array_tasks, cancel, slurm_cluster, task_count

    began = time.monotonic()
    typed = documented_run("Slurm")  # the scale-out page's command, on this cluster's partition
    assert f"seed=range(0,{SLURM_CONFIGS})" in typed and "hydra/launcher=lincls_slurm" in typed
    with ExitStack() as stack:
        db = enter(stack, postgres_server())
        store = lambda: psycopg.connect(db)  # noqa: E731
        filled = [f"tracking.uri={db}" if arg.startswith("tracking.uri=") else
                  arg.replace("partition=cpu", "partition=lincls") for arg in typed]  # fmt: skip
        command = [sys.executable, "-m", "lincls.experiments.cli", *filled]
        slurm_env = enter(stack, slurm_cluster())
        env = cli_env(SLURM_CONF=slurm_env["SLURM_CONF"], LINCLS_HOME=str(tmp_path / "results"))
        log = stack.enter_context(open(tmp_path / "sweep.log", "w"))
        sweep = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                 stderr=log)  # fmt: skip
        try:
            deadline = time.monotonic() + 600
            running: list[dict] = []
            while not running and time.monotonic() < deadline and sweep.poll() is None:
                tasks = array_tasks(slurm_env)
                running = [t for t in tasks if t["JobState"] == "RUNNING"]
                time.sleep(0.2)
            assert running, "no array task ran"
            assert task_count(array_tasks(slurm_env)) == 5  # 5,000 configs, 1,000 a task
            # both running tasks have written batches of their runs: the killed one's are kept
            while len(query(store, FINISHED)) < 300 and sweep.poll() is None:
                time.sleep(0.5)
            killed = running[0]
            cancel(slurm_env, killed["ArrayJobId"], killed["ArrayTaskId"])
            sweep.wait(timeout=1200)
        finally:
            if sweep.poll() is None:
                sweep.kill()
        stderr = (tmp_path / "sweep.log").read_text()
        assert sweep.returncode == 1, stderr[-5000:]
        task = f"Slurm task {killed['ArrayJobId']}_{killed['ArrayTaskId']}"
        assert task in stderr, stderr[-5000:]
        finished = query(store, CHILDREN)
        assert {s for s, *_ in finished} == {"FINISHED"}  # none left RUNNING
        missing = SLURM_CONFIGS - len(finished)
        # the killed task's chunk less the batches it wrote (all of it if, on a loaded machine,
        # the 300 runs came from the other task before it wrote one: batches are unit-tested)
        assert 0 < missing <= 1000, stderr[-5000:]
        assert f"{missing} of {SLURM_CONFIGS} configs have no FINISHED run" in stderr, stderr[
            -5000:
        ]
        again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=1200)  # fmt: skip
        assert again.returncode == 0, again.stderr[-5000:]
        assert f"{len(finished)} skipped" in again.stderr, again.stderr[-5000:]
        children = query(store, CHILDREN)
    per_hash = Counter(h for _, _, h, *_ in children)
    assert len(per_hash) == SLURM_CONFIGS and set(per_hash.values()) == {1}  # 0 lost, 0 dup.
    assert {status for status, *_ in children} == {"FINISHED"}
    assert sorted(int(seed) for *_, seed, _ in children) == list(range(SLURM_CONFIGS))
    report(f"Slurm, {SLURM_CONFIGS:,} configs in 5 array tasks, one killed with {missing} configs "
           "unwritten, then resumed", time.monotonic() - began, per_hash)  # fmt: skip
