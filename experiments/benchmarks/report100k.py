"""The report on 100,000 runs: reading them, and the whole ``lincls report`` (slow section).

The store is ``report.build_store``'s: a real sweep of 40 configs whose runs are copied (as rows,
through the sweep's writer) until the sweep has ``RUNS`` children, each its own config hash,
each with its record and a description showing its figure, as a sweep's runs have. Rows:
``tracking.reader.runs`` over the study (every run as one table) against ``mlflow.search_runs``
on ``PEER_RUNS`` of the runs, scaled to all of them; and the whole ``lincls report PARENT``
process, figure pass included (target ≤ 60 s), after which every run's page shows its figure,
drawn from its record (no file).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.report import build_store, figures_shown, timed_report

RUNS = 100_000
PEER_RUNS = 10_000


READ = (
    "import sys, time; from lincls.tracking import reader; start = time.perf_counter(); "
    "table = reader.runs(sys.argv[1], status=None, role='run'); "
    "print(time.perf_counter() - start, len(table))"
)


def _read_elsewhere(uri: str) -> tuple[float, int]:
    """(seconds, runs) of ``reader.runs`` over the store, in a process of its own as a user's
    notebook holds no connection to the store (this one does: MLflow's client's pool)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", READ, uri], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    seconds, found = done.stdout.split()
    return float(seconds), int(found)


def run(quick: bool = False) -> list[Row]:
    """The report100k section: the reader and the report on ``RUNS`` runs."""
    import mlflow
    from mlflow.tracking import MlflowClient
    from mlflow.tracking._tracking_service.utils import _use_tracking_uri

    runs = 400 if quick else RUNS
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        uri, parent = build_store(root, runs)
        built = time.perf_counter() - start
        client = MlflowClient(tracking_uri=uri)
        experiment_id = client.get_experiment_by_name("lincls").experiment_id
        read, found = _read_elsewhere(uri)
        if found != runs:
            raise RuntimeError(f"the reader found {found} runs of {runs}")
        reported = timed_report(uri, parent, root / "report")
        try:  # the command's time is printed whatever the count says
            shown, recorded, files = figures_shown(uri, root)
        except RuntimeError as exc:
            shown, recorded, files = f"not counted ({exc})", 0, 0
        peer_runs = min(PEER_RUNS, runs)
        start = time.perf_counter()
        with _use_tracking_uri(uri):
            mlflow.search_runs([experiment_id], max_results=peer_runs)
        peer = (time.perf_counter() - start) * runs / peer_runs
    load = os.getloadavg()[0]
    note = f"{runs} runs (store built in {built:.0f} s); load {load:.1f} at the end"
    peer_note = f"search_runs timed on {peer_runs} runs, scaled; {note}"
    return [
        Row("report100k", f"lincls.tracking.reader.runs, {runs} runs", read, peer, "search_runs",
            None, None, peer_note),
        Row("report100k", f"lincls report PARENT, {runs} runs", reported, 60.0,
            "target: 60 s", 1.0, None, f"{note}; afterwards {shown} runs show their figure "
            f"({recorded} drawn from their records, {files} files on disk)"),
    ]  # fmt: skip
