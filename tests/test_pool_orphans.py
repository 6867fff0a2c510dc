"""A pool sweep killed with ``kill -9`` leaves no worker behind: each watches its launching
process and ends with it (before: workers went on 40–45 s, writing 5–7 more runs), though its
parent is the pool's fork server."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clusters import wait_until
from conftest import ROOT

SMALL = ["dataset.n=200", "dataset.d=5", "dataset.n_test=50", "certificates.svm=false"]


def _parents() -> dict[int, int]:
    """Each process's parent, now."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = (entry / "stat").read_text()
                parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def _descendants(root: int) -> set[int]:
    """The processes below ``root`` now (children, their children, …)."""
    parents = _parents()
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _progress(sweep_dir: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in sweep_dir.glob(".lincls/*/progress.log"))


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_killed_pool_sweeps_workers_are_gone_within_5_s(tmp_path):
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads processes from /proc")
    sweep_dir = tmp_path / "sweep"
    sweep = subprocess.Popen(
        [sys.executable, "-m", "lincls.experiments.run", "-m", "seed=range(0,200)", *SMALL,
         "hydra.launcher.n_jobs=2", f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}",
         f"hydra.sweep.dir={sweep_dir}"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        wait_until(lambda: _progress(sweep_dir) >= 5, "5 jobs done", 240, (sweep,))
        workers = _descendants(sweep.pid)
        assert len(workers) >= 2  # the pool's two workers (and loky's resource tracker)
        parents = _parents()
        # the workers are forked from one fork server, the sweep's child, not the sweep's own
        forked = {pid for pid in workers if parents.get(pid) != sweep.pid}
        assert len(forked) == 2 and len({parents[pid] for pid in forked}) == 1
        os.kill(sweep.pid, signal.SIGKILL)  # the launching process alone, not its group
        sweep.wait()
        killed = time.monotonic()
        while any(map(_alive, workers)) and time.monotonic() - killed < 5:
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "workers outlived the sweep by 5 s"
        written = _progress(sweep_dir)
        time.sleep(2)
        assert _progress(sweep_dir) == written  # nothing runs on
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sweep.pid, signal.SIGKILL)


_SERVER = (
    "import sys; import multiprocessing.forkserver as server; "
    "from hydra_plugins.lincls_sweeps.pool import start_fork_server; "
    "start_fork_server(sys.argv[1:]); print(server._forkserver._forkserver_pid is not None)"
)


@pytest.mark.parametrize(
    ("arguments", "started"),
    [
        (["-m", "seed=range(0,4)", "hydra.launcher.n_jobs=2"], True),
        (
            ["--multirun", "learner.lr=1,2", "++hydra.launcher.n_jobs=3", "hydra/launcher=lincls"],
            True,
        ),
        (["seed=3", "hydra.launcher.n_jobs=2"], False),  # one run: no pool
        (["-m", "seed=range(0,4)"], False),  # n_jobs: 1, the jobs in the process
        (["-m", "seed=range(0,4)", "hydra.launcher.n_jobs=1"], False),
        (["-m", "seed=range(0,4)", "hydra.launcher.n_jobs=x"], False),  # refused in one line later
        (["-m", "seed=range(0,4)", "hydra.launcher.n_jobs=2", "hydra/launcher=lincls_ray"], False),
    ],
)
def test_a_sweeps_pool_server_starts_with_the_command_only_for_a_pool(arguments, started):
    """``lincls run -m … hydra.launcher.n_jobs=K`` (K > 1, the lincls launcher) starts the fork
    server its workers are forked from as it starts, so that its imports run beside the
    command's; any other command starts none."""
    done = subprocess.run([sys.executable, "-c", _SERVER, *arguments], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(started)]
    assert done.stderr == ""  # the server ends with the process, quietly
