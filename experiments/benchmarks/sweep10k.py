"""A 10,000-config sweep of the sweep section's shape with two workers, end to end (slow section).

The time is the command's wall clock, from starting ``lincls run -m`` to its exit
(Python's start-up, the store's creation and the parent run's close included); a run is lost
when the store does not hold it FINISHED at the end. Target: ≤ 6 minutes, 0 lost.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.sweep import _sweep

CONFIGS = 10_000


def run(quick: bool = False) -> list[Row]:
    """The sweep10k section: one row, the sweep's wall time against 360 s."""
    configs = 200 if quick else CONFIGS
    with tempfile.TemporaryDirectory() as tmp:
        load = os.getloadavg()[0]
        start = time.perf_counter()
        _, children = _sweep(Path(tmp), configs, ["hydra.launcher.n_jobs=2"])
        seconds = time.perf_counter() - start
    finished = sum(r.info.status == "FINISHED" for r in children)
    lost = configs - finished
    note = (
        f"{configs} configs, {finished} FINISHED, {lost} lost; {configs / seconds:.1f} runs/s; "
        f"load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    return [Row("sweep", f"{configs} configs, 2 workers, end to end", seconds, 360.0,
                "target: 6 min", 1.0, None, note)]  # fmt: skip
