"""The notebook API: ``lincls.run`` in a loop against a one-worker sweep of the same configs.

The configs: the default run at n = 100 (``dataset.n=100``), seeds 0 … N−1, each seed a new
dataset whose SVM certificate is solved once and cached beside the store, in both. The sweep is
the command a user types, ``lincls run -m 'seed=range(0,N)' dataset.n=100`` on a new SQLite
store, one worker; its time a run is its wall clock less that of the same command for one seed
(start-up, the store's creation, the first run's warm-up), over N − 1: each job's composition,
precheck, run, write and progress line. ``lincls.run`` runs the same seeds in this process, after
a warm-up call on another seed, with ``store=`` a new SQLite store (written as a sweep writes) and
without one (measured only, no certificate cached). ratio = the sweep's seconds a run / ours
(target ≥ 0.67: a call costs at most ~1.5× a sweep job). The note says how many Hydra
compositions the calls made: one per choice of config groups.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ["dataset.n=100"]
TARGET = 0.67  # sweep seconds a run / lincls.run's: a call at most ~1.5× a sweep job


def _sweep_wall(folder: Path, seeds: int) -> float:
    """The wall seconds of ``lincls run -m 'seed=range(0,seeds)' dataset.n=100``, one worker,
    on a new store in ``folder`` (which is made; its certificates cached beside it)."""
    folder.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LINCLS_HOME": str(folder)}
    command = [sys.executable, "-m", "lincls.experiments.run", "-m", f"seed=range(0,{seeds})",
               *CONFIG, f"tracking.uri=sqlite:///{folder / 'mlflow.db'}"]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(command, cwd=folder, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _api_loop(folder: Path, seeds: int, store: bool) -> tuple[float, int]:
    """(seconds a call, Hydra compositions made) of ``lincls.run`` over ``seeds`` seeds, with
    a new store in ``folder`` when ``store`` (else nothing written)."""
    import lincls
    from lincls.api.compose import composer

    folder.mkdir()
    where = {"store": folder / "mlflow.db"} if store else {}
    lincls.run(dataset={"n": 100}, seed=seeds, **where)  # warm-up: a seed the loop does not run
    made = composer().compositions
    start = time.perf_counter()
    for seed in range(seeds):
        lincls.run(dataset={"n": 100}, seed=seed, **where)
    return (time.perf_counter() - start) / seeds, composer().compositions - made


def run(quick: bool = False) -> list[Row]:
    """The notebook section: ``lincls.run`` a call, with and without a store, against a
    one-worker sweep job of the same configs."""
    seeds = 20 if quick else 300
    saved = os.environ.get("LINCLS_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["LINCLS_HOME"] = str(root / "home")  # nothing of ours in ./results
        try:
            load = os.getloadavg()[0]
            startup = _sweep_wall(root / "sweep1", 1)
            swept = (_sweep_wall(root / "sweep", seeds) - startup) / (seeds - 1)
            stored, made_stored = _api_loop(root / "api_store", seeds, store=True)
            measured, made_measured = _api_loop(root / "api_plain", seeds, store=False)
        finally:
            if saved is None:
                os.environ.pop("LINCLS_HOME", None)
            else:
                os.environ["LINCLS_HOME"] = saved
    note = (f"{seeds} seeds, n = 100; the sweep's start-up {startup:.2f} s left out; "
            f"load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    return [
        Row("notebook", "`lincls.run(..., store=)` a call", stored, swept,
            "`lincls run -m`, 1 worker, a job", TARGET, None,
            f"{note}; {made_stored} Hydra compositions in the loop"),
        Row("notebook", "`lincls.run(...)` a call, no store", measured, swept,
            "`lincls run -m`, 1 worker, a job", TARGET, None,
            f"{note}; {made_measured} Hydra compositions in the loop"),
    ]  # fmt: skip
