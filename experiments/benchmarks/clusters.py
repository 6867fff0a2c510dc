"""A config's cost on a cluster against the local pool's (slow): the same ``CONFIGS`` cheap configs
swept by the local pool (``hydra.launcher.n_jobs=2``), by ``lincls_slurm`` on a one-node Slurm
cluster and by ``lincls_ray`` on a two-node Ray cluster (one CPU each), both started here on
127.0.0.1 as the cluster tests start them (``tests/clusters``; Slurm needs root, Ray runs in a
network namespace of its own). Each time is the sweep's own, from its parent run's start to its
end (a cluster's start-up is not a config's cost); target: each cluster ≤ 1.5× the local pool.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from lincls.experiments.bench import Row

CONFIGS = 2_000
CHEAP = ["learner.lr=1.0", "dataset.n=100", "dataset.d=5", "dataset.n_test=50",
         "certificates.svm=false"]  # fmt: skip
ROOT = Path(__file__).resolve().parents[2]
SWEEP_SPAN = """
SELECT (r.end_time - r.start_time) / 1000.0 FROM runs r
JOIN tags t ON t.run_uuid = r.run_uuid AND t.key = 'lincls.role' AND t.value = 'sweep'
"""


def _args(folder: Path, configs: int) -> list[str]:
    folder.mkdir()
    return [f"study={folder.name}", f"seed=range(0,{configs})", *CHEAP,
            f"tracking.uri=sqlite:///{folder / 'mlflow.db'}", f"hydra.sweep.dir={folder / 'sweep'}",
            f"certificates.cache_dir={folder / 'certificates'}"]  # fmt: skip


def _span(folder: Path) -> float:
    """The sweep's seconds from its parent run's start to its end."""
    with sqlite3.connect(folder / "mlflow.db") as db:
        (seconds,) = db.execute(SWEEP_SPAN).fetchone()
    return float(seconds)


def _sweep(args: list[str], cwd: Path, env: dict) -> None:
    command = [sys.executable, "-m", "lincls.experiments.run", "-m", *args]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])


def run(quick: bool = False) -> list[Row]:
    """The clusters section: Slurm's and Ray's sweep against the local pool's."""
    sys.path.insert(0, str(ROOT / "tests"))
    from clusters.slurm import slurm_cluster
    from test_clusters import cli_env, in_own_network

    configs = 40 if quick else CONFIGS
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        local = root / "local"
        _sweep([*_args(local, configs), "hydra.launcher.n_jobs=2"], root, cli_env())
        pool = _span(local)
        slurm = root / "slurm"
        with slurm_cluster() as env:
            _sweep([*_args(slurm, configs), "hydra/launcher=lincls_slurm",
                    "hydra.launcher.cpus_per_task=1", "hydra.launcher.timeout_min=30"], root,
                   cli_env(SLURM_CONF=env["SLURM_CONF"]))  # fmt: skip
        ray = root / "ray"
        args = _args(ray, configs)
        result = root / "ray.json"
        command = [sys.executable, "-m", "clusters.ray_sweep", str(result), "--nodes", "2",
                   "--launcher", "lincls_ray", "--", *args]  # fmt: skip
        subprocess.run(in_own_network(command), cwd=root, env=cli_env(), check=True,
                       capture_output=True)  # fmt: skip
        outcome = json.loads(result.read_text())
        if outcome["returncode"] != 0:
            raise RuntimeError(outcome["stderr"][-3000:])
        load = os.getloadavg()[0]
        for name, folder in (("lincls_slurm, one node of 2 CPUs", slurm),
                             ("lincls_ray, two nodes of 1 CPU", ray)):  # fmt: skip
            seconds = _span(folder)
            rows.append(Row("clusters", f"{configs} cheap configs, {name}", seconds, pool,
                            "the local pool, 2 workers", 1 / 1.5, None,
                            f"{configs / seconds:.1f} runs/s against {configs / pool:.1f}; "
                            f"load {load:.1f} at the end"))  # fmt: skip
    return rows
