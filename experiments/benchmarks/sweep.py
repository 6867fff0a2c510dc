"""Sweeps: runs per second of a whole multirun, against the floor of its MLflow calls alone.

A sweep of ``N`` configs (4 learners × N/4 seeds, a new dataset per seed; n = 1000, d = 20,
≤ 10 passes, every bound on the generator's certificate and at its best comparator — the default
``certificates.best=true`` — the full logging; no SVM certificate, whose cost — once per dataset
— the bounds section measures) runs through the real CLI into a fresh SQLite store with the
lincls launcher in one process and with a pool of 2 workers, and (for comparison, on fewer
configs) Hydra's joblib launcher. A sweep's time is its parent run's, from its creation before
the first job to its close after the last, so Python's start-up is not counted. The floor
replays the same runs — each child's params, metrics and curves — into another fresh store with
only the MLflow calls a run needs (create, one batched log, end), twice, and keeps the faster:
what a harness writing through MLflow's client cannot beat. ratio = floor's seconds a run / ours
(≥ 0.9 is the target for one worker); for two workers the ratio is against one worker (target
≥ 1.5). lincls writes a SQLite store's runs as MLflow's rows with SQL (``tracking.sqlite_runs``),
which is how a sweep, measuring as well as writing, beats the floor; the floor is MLflow's client
calls, in one process, on a store in the same (WAL) mode. The best comparators' share is the
same one-worker sweep run again with ``certificates.best=false``: their seconds a run (the
difference) against the rest of a run's (the sweep without them), target ≤ 1×.
The slow section ``sweep10k`` times a 10,000-config sweep of this shape end to end.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row

LEARNERS = "perceptron,averaged_perceptron,passive_aggressive,margin_perceptron"


def _sweep(
    store: Path, configs: int, launcher: list[str], best: bool = False
) -> tuple[float, list]:
    """Run a sweep of ``configs`` runs, best comparators on when ``best``; (seconds from parent
    start to end, its children)."""
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{store / 'mlflow.db'}"
    seeds = max(configs // 4, 1)
    args = [
        sys.executable, "-m", "lincls.experiments.run", "-m", f"learner={LEARNERS}",
        f"seed=range(0,{seeds})", "dataset.n=1000", "dataset.d=20", "passes=10",
        "certificates.svm=false", f"certificates.best={str(best).lower()}",
        f"tracking.uri={uri}", f"certificates.cache_dir={store / 'certificates'}",
        f"hydra.sweep.dir={store / 'sweep'}", *launcher,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(args, cwd=store, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("lincls")
    runs = client.search_runs([experiment.experiment_id], max_results=50000)
    (parent,) = [r for r in runs if r.data.tags.get("lincls.role") == "sweep"]
    children = [r for r in runs if r.data.tags.get("lincls.role") == "run"]
    seconds = (parent.info.end_time - parent.info.start_time) / 1e3
    return seconds, children


def _floor(store: Path, children: list, trials: int = 2) -> float:
    """Seconds to write the same runs (as a search gave them) with only the run's calls:
    the faster of ``trials`` replays, each into a fresh store (a replay's time varies by ~1.5×
    with the machine's state; the faster one is the floor's best, against which ours is put)."""
    from lincls import tracking

    payloads = as_logged(children)
    best = math.inf
    for trial in range(trials):
        uri = f"sqlite:///{store / f'floor{trial}.db'}"
        budgeted, experiment_id = tracking.open_experiment(uri, "floor")
        client = budgeted.client  # MLflow's own client: MLflow's calls, not lincls's SQL rows
        start = time.perf_counter()
        for params, metrics, curves, tags in payloads:
            run_id = tracking.start_run(client, experiment_id, tags.get("mlflow.runName"), tags)
            tracking.finish_run(client, run_id, params, metrics, curves, {})
        best = min(best, time.perf_counter() - start)
    return best


WITHOUT_BEST = "lincls launcher, 1 worker, certificates.best=false"


def as_logged(children: list) -> list[tuple]:
    """Each run (as a search gave it) as logged: (params, metrics, curves, tags), its curves
    among its tags (its record: ``lincls.tracking.record``), none as metric history."""
    return [(run.data.params, run.data.metrics, {}, run.data.tags) for run in children]


def run(quick: bool = False) -> list[Row]:
    """The sweep section: one worker, two workers, Hydra's joblib launcher, the floor, and the
    best comparators' share of a run."""
    configs = 40 if quick else 1000
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        results = {}
        for name, launcher, count, best in (
            ("lincls launcher, 1 worker", [], configs, True),
            ("lincls launcher, 2 workers", ["hydra.launcher.n_jobs=2"], configs, True),
            ("Hydra joblib launcher, 2 workers", ["hydra/launcher=joblib",
                                                  "hydra.launcher.n_jobs=2"], configs // 5, True),
            (WITHOUT_BEST, [], configs, False),
        ):  # fmt: skip
            store = root / name.replace(" ", "_").replace(",", "").replace("=", "_")
            store.mkdir()
            seconds, children = _sweep(store, count, launcher, best)
            finished = sum(r.info.status == "FINISHED" for r in children)
            results[name] = (seconds / len(children), len(children), finished, store, children)
        one, count, finished, store, children = results["lincls launcher, 1 worker"]
        floor = _floor(store, children) / len(children)
        rest = results[WITHOUT_BEST][0]
        for name, (per_run, count, finished, _, _) in results.items():
            lost = count - finished
            note = f"{count} configs, {finished} FINISHED, {lost} lost; {1 / per_run:.1f} runs/s"
            if name == "lincls launcher, 2 workers":
                rows.append(
                    Row("sweep", f"a run, {name}", per_run, one, "1 worker", 1.5, floor, note)
                )
            else:
                target = 0.9 if name == "lincls launcher, 1 worker" else None
                rows.append(
                    Row("sweep", f"a run, {name}", per_run, floor, "floor (MLflow calls only)",
                        target, floor, note)
                )  # fmt: skip
        share = max(one - rest, 1e-9)  # the best comparators' seconds a run
        rows.append(
            Row("sweep", "best comparators of a run, 1 worker", share, rest,
                "the rest of the run", 1.0, None,
                f"{share / rest:.2f}× the rest: {one * 1e3:.1f} ms a run with them, "
                f"{rest * 1e3:.1f} ms without")
        )  # fmt: skip
    return rows
