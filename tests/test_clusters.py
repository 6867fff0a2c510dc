"""Sweeps on real clusters started here, on 127.0.0.1: many sweeps at once through an MLflow
server over PostgreSQL (``make server DB=postgresql://…``), a sweep through Hydra's Ray launcher
on a two-node Ray cluster, and one through ``submitit_slurm`` on a one-node Slurm cluster.

Every count is read back from the store itself, in SQL: FINISHED child runs grouped by the
config-hash tag, so a lost config is a missing hash and a duplicated one a count above 1. The
three tests share one xdist group (``make test`` runs ``--dist loadgroup``), so they never run at
the same time on a small machine; each is bounded by pytest-timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from contextlib import ExitStack, closing
from pathlib import Path

import pytest
from clusters import Unavailable, free_port, short_tmpdir, start, stop, tail_of, wait_until
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("clusters")]

SMALL = ["dataset.n=100", "dataset.d=5", "dataset.n_test=50", "certificates.svm=false"]

# The children of every sweep, one row per run: status, study, config hash and the swept values.
CHILDREN = """
SELECT r.status, s.value, h.value, lr.value, seed.value
FROM runs r
JOIN tags role ON role.run_uuid = r.run_uuid AND role.key = 'lincls.role' AND role.value = 'run'
JOIN tags s ON s.run_uuid = r.run_uuid AND s.key = 'lincls.study'
JOIN tags h ON h.run_uuid = r.run_uuid AND h.key = 'lincls.config_hash'
JOIN params lr ON lr.run_uuid = r.run_uuid AND lr.key = 'learner.lr'
JOIN params seed ON seed.run_uuid = r.run_uuid AND seed.key = 'seed'
"""
PARENTS = """
SELECT r.status, s.value, j.value
FROM runs r
JOIN tags role ON role.run_uuid = r.run_uuid AND role.key = 'lincls.role' AND role.value = 'sweep'
JOIN tags s ON s.run_uuid = r.run_uuid AND s.key = 'lincls.study'
JOIN tags j ON j.run_uuid = r.run_uuid AND j.key = 'lincls.jobs'
"""


def query(connect, sql: str) -> list[tuple]:
    with closing(connect()) as connection, closing(connection.cursor()) as cursor:
        cursor.execute(sql)
        return [tuple(row) for row in cursor.fetchall()]


def sweep_command(args: list[str], tmp: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "experiments.run", "-m", *args, *SMALL,
            f"hydra.sweep.dir={tmp / name}",
            f"certificates.cache_dir={tmp / 'certificates'}"]  # fmt: skip


def cli_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "RAY_ADDRESS")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def check_store(connect, studies: dict[str, tuple[str, int]]) -> Counter:
    """Every study's configs FINISHED exactly once, nothing else logged; the hash counts."""
    children = query(connect, CHILDREN)
    parents = query(connect, PARENTS)
    assert sorted(parents) == sorted(("FINISHED", s, str(n)) for s, (_, n) in studies.items())
    assert Counter(status for status, *_ in children) == {
        "FINISHED": sum(n for _, n in studies.values())
    }
    per_hash = Counter(h for _, _, h, _, _ in children)
    assert set(per_hash.values()) == {1}  # 0 duplicated
    expected = {(s, lr, str(seed)) for s, (lr, n) in studies.items() for seed in range(n)}
    logged = [(s, lr, seed) for _, s, _, lr, seed in children]
    assert len(logged) == len(expected) and set(logged) == expected  # 0 lost
    return per_hash


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


def make_server(db: str, port: int, artifacts: Path, log: Path) -> subprocess.Popen:
    """``make server`` with this interpreter's virtualenv, never re-installing it."""
    make = shutil.which("make")
    if make is None:
        raise Unavailable("`make` is not installed")
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


@pytest.mark.timeout(900)
def test_four_sweeps_of_50_write_at_once_through_a_server_over_postgresql(tmp_path):
    psycopg = pytest.importorskip("psycopg", reason="the `postgres` extra is not installed")
    from clusters.postgres import postgres_server

    began = time.monotonic()
    with ExitStack() as stack:
        db = enter(stack, postgres_server())
        port = free_port()
        server = make_server(db, port, tmp_path / "artifacts", tmp_path / "server.log")
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
        for study, sweep in sweeps.items():
            code = sweep.wait(timeout=600)
            assert code == 0, tail_of(tmp_path / f"{study}.log")
        stop(server)
        assert server.poll() is not None
        per_hash = check_store(lambda: psycopg.connect(db), studies)
        assert len(per_hash) == 200
    report("PostgreSQL, 4 sweeps × 50 configs through make server", time.monotonic() - began,
           per_hash)  # fmt: skip
