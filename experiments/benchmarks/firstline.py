"""A million-config sweep's first progress line, timed from the command's start (slow).

The million-run issue's item 1: a 1,000,000-config sweep prints its first progress line within
60 s, and the sweeping process stays under 1.5 GB. Two grids, each the command a user types with
two workers into a fresh SQLite store, timed from its start to its first ``k/N done`` line, then
interrupted as Ctrl-C does:

- ``seed=range(0,1000000)``: a million datasets, whose configs differ in the seed alone (its
  precheck checks the rest once and each seed's line);
- ``learner.lr=range(1,1000001)``: a million configs of one dataset that differ in a learner
  value, each checked as its run would check it: the precheck's worst case.

The peak memory is the sweeping process's own (``VmHWM`` at that line). ratio = 60 s / ours.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row

CONFIGS = 1_000_000
BOUND = 60.0  # seconds to the first progress line
MEMORY = 1.5  # GB the sweeping process may hold
GRIDS = {
    "seeds": lambda n: [f"seed=range(0,{n})"],
    "learning rates": lambda n: [f"learner.lr=range(1,{n + 1})"],
}


def _peak_gb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1e6
    return float("nan")


def first_line(grid: list[str], configs: int) -> tuple[float, float]:
    """(seconds to the first progress line, the sweeping process's peak GB then) of
    ``lincls run -m <grid> dataset.n=50 hydra.launcher.n_jobs=2`` in a fresh home."""
    done = re.compile(rf"\[lincls\] [1-9]\d*/{configs} done")
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
        command = [sys.executable, "-m", "lincls.experiments.run", "-m", *grid, "dataset.n=50",
                   "hydra.launcher.n_jobs=2"]  # fmt: skip
        start = time.perf_counter()
        sweep = subprocess.Popen(
            command, cwd=home, env={**env, "LINCLS_HOME": home},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            for line in sweep.stderr:
                if done.match(line):
                    seconds, peak = time.perf_counter() - start, _peak_gb(sweep.pid)
                    break
            else:
                raise RuntimeError(f"{grid}: no progress line (exit {sweep.wait()})")
            sweep.send_signal(signal.SIGINT)
            sweep.communicate(timeout=300)
        finally:
            sweep.kill()
            sweep.wait()
    return seconds, peak


def run(quick: bool = False) -> list[Row]:
    """The firstline section: one row a grid."""
    configs = 20_000 if quick else CONFIGS
    rows = []
    for name, grid in GRIDS.items():
        load = os.getloadavg()[0]
        seconds, peak = first_line(grid(configs), configs)
        verdict = "met" if peak <= MEMORY else "MISSED"
        rows.append(Row(
            "firstline", f"{configs} configs ({name}): the first progress line", seconds,
            BOUND, f"the issue's bound ({BOUND:.0f} s)", 1.0,
            note=f"the sweeping process at most {peak:.2f} GB then (≤ {MEMORY} GB: {verdict}); "
            f"load {load:.1f} at the start",
        ))  # fmt: skip
    return rows
