"""The report on a big study: ``experiments.report`` over a store of 10,000 runs (slow section).

The store is a real sweep of 40 configs (the sweep section's shape) whose runs are then copied,
with the floor's direct writes (create, one batched log with both curves, end), until the
sweep's parent has 10,000 children, each with its own config hash so the report keeps them all.
The row times ``python -m experiments.report <parent run id>`` in this process: reading the runs,
the tables, the plots and logging the report to the parent. Target: ≤ 60 s.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from experiments.bench import Row
from experiments.benchmarks.sweep import _sweep, as_logged

RUNS = 10_000


def build_store(root: Path, runs: int, seed_configs: int = 40) -> tuple[str, str]:
    """A store whose one sweep has ``runs`` FINISHED children; (its URI, the parent's run id)."""
    from mlflow.tracking import MlflowClient

    from lincls import tracking

    _, children = _sweep(root, seed_configs, [])
    uri = f"sqlite:///{root / 'mlflow.db'}"
    source = MlflowClient(tracking_uri=uri)
    client, experiment_id = tracking.open_experiment(uri)
    parent = children[0].data.tags["mlflow.parentRunId"]
    templates = as_logged(children, source)
    for copy in range(runs - len(children)):
        params, metrics, curves, tags = templates[copy % len(templates)]
        name = f"{tags.get('mlflow.runName', 'run')} copy {copy}"
        tags = {**tags, "lincls.config_hash": f"copy{copy:06d}", "mlflow.runName": name}
        run_id = tracking.start_run(client, experiment_id, name, tags)
        tracking.finish_run(client, run_id, params, metrics, curves, {})
    return uri, parent


def run(quick: bool = False) -> list[Row]:
    """The report section: seconds for ``experiments.report`` on a sweep of ``RUNS`` runs."""
    from experiments import report

    runs = 200 if quick else RUNS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        uri, parent = build_store(root, runs)
        built = time.perf_counter() - start
        start = time.perf_counter()
        code = report.main([parent, "--tracking-uri", uri, "--out", str(root / "report")])
        seconds = time.perf_counter() - start
        if code != 0:
            raise RuntimeError(f"experiments.report exited {code}")
    load = os.getloadavg()[0]
    note = f"{runs} runs (store built in {built:.0f} s); load {load:.1f} at the end"
    return [Row("report", f"experiments.report, {runs} runs", seconds, 60.0, "target: 60 s",
                1.0, None, note)]  # fmt: skip
