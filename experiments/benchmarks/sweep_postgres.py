"""A 10,000-config sweep with two workers on PostgreSQL, beside the same sweep on SQLite (slow).

The sweep section's shape; PostgreSQL is a throwaway server started as the cluster tests start
it (``tests/clusters/postgres.py``: 127.0.0.1, no fsync) and the sweep writes to it as rows
(``tracking.uri=postgresql://…``). Each time is the command's wall clock; a run is lost when
the store does not hold it FINISHED at the end. Target: PostgreSQL ≤ 1.3× SQLite, 0 lost.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.sweep import LEARNERS

CONFIGS = 10_000
ROOT = Path(__file__).resolve().parents[2]


def sweep(store: Path, uri: str, configs: int) -> tuple[float, int]:
    """Seconds of a sweep of ``configs`` runs (2 workers) into ``uri``; its FINISHED runs."""
    from lincls.tracking import reader

    args = [
        sys.executable, "-m", "lincls.experiments.run", "-m", f"learner={LEARNERS}",
        f"seed=range(0,{max(configs // 4, 1)})", "dataset.n=1000", "dataset.d=20", "passes=10",
        "certificates.svm=false", "certificates.best=false", "hydra.launcher.n_jobs=2",
        f"tracking.uri={uri}", f"certificates.cache_dir={store / 'certificates'}",
        f"hydra.sweep.dir={store / 'sweep'}",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run(args, cwd=store, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return seconds, len(reader.runs(uri, status="FINISHED", role="run"))


def run(quick: bool = False) -> list[Row]:
    """The sweep_postgres section: one row, PostgreSQL's time against SQLite's."""
    sys.path.insert(0, str(ROOT / "tests"))  # the cluster tests' PostgreSQL server
    from clusters.postgres import postgres_server

    configs = 200 if quick else CONFIGS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "sqlite").mkdir()
        (root / "pg").mkdir()
        lite, lite_done = sweep(root / "sqlite", f"sqlite:///{root / 'sqlite' / 'mlflow.db'}",
                                configs)  # fmt: skip
        with postgres_server() as uri:
            pg, pg_done = sweep(root / "pg", uri, configs)
    note = (
        f"{configs} configs; FINISHED: {pg_done} on PostgreSQL, {lite_done} on SQLite "
        f"({configs - pg_done} and {configs - lite_done} lost); {configs / pg:.1f} runs/s on "
        f"PostgreSQL, {configs / lite:.1f} on SQLite; load {os.getloadavg()[0]:.1f} at the end"
    )
    # ratio = SQLite / PostgreSQL: the target 1/1.3 is PostgreSQL at most 1.3× SQLite's time
    return [Row("sweep_postgres", f"{configs} configs, 2 workers, PostgreSQL as rows", pg, lite,
                "the same sweep on SQLite", 1 / 1.3, None, note)]  # fmt: skip
