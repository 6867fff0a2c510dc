"""A 100,000-config sweep with two workers into SQLite, end to end (slow; run when named).

The sweep section's shape (``sweep_postgres.sweep``): the command's wall clock from starting
``python -m lincls.experiments.run -m`` to its exit; a run is lost when the store does not hold it
FINISHED at the end. No target on time: the row reports runs per second and the lost count (0).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.sweep_postgres import sweep

CONFIGS = 100_000


def run(quick: bool = False) -> list[Row]:
    """The sweep100k section: one row, the sweep's wall time, runs/s and lost runs."""
    configs = 200 if quick else CONFIGS
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()[0]
        seconds, finished = sweep(Path(tmp), f"sqlite:///{Path(tmp) / 'mlflow.db'}", configs)
    lost = configs - finished
    note = (
        f"{configs} configs, {finished} FINISHED, {lost} lost; {configs / seconds:.1f} runs/s; "
        f"load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    return [Row("sweep", f"{configs} configs, 2 workers, end to end", seconds, note=note)]
