"""Reading a million runs: the report, the notebook API and the UI on a study of ``RUNS`` runs
(slow: the store takes a while to build; run when named).

The store is ``report.build_store``'s: a real sweep of 40 configs whose runs are copied as rows
until its study has ``RUNS`` runs, each its own config hash, record and figure, as a sweep's
runs are. It stands in for ``sweep1m``'s study (hours to run) when only its reading is timed:
its runs are the default config's (``dataset.n=100 dataset.d=5``), each a few hundred bytes
more than a ``sweep1m`` run. Each row is a command a user types, timed to its exit in a process
of its own, with that process's peak memory (``wait4``):

1. ``lincls report STUDY`` (targets ≤ 120 s and ≤ 4 GB);
2. ``lincls.study(STUDY).runs()`` in a fresh Python (the same targets);
3. ``lincls ui``'s first page of the study's runs, newest first, and of lincls's view
   (``sweep1m.first_rows``; target ≤ 10 s).
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from lincls.experiments.bench import Row
from lincls.experiments.benchmarks.report import build_store
from lincls.experiments.benchmarks.sweep1m import _timed, first_rows, store_bytes

RUNS = 1_000_000
API = "import sys, lincls; print(len(lincls.study(sys.argv[1]).runs()))"


def _study(home: Path) -> str:
    with sqlite3.connect(home / "mlflow.db") as db:
        (study,) = db.execute(
            "SELECT value FROM tags WHERE key = 'lincls.study' LIMIT 1"
        ).fetchone()
    return study


def run(quick: bool = False) -> list[Row]:
    """The read1m section: the report, the API and the UI's first rows on ``RUNS`` runs."""
    runs = 2_000 if quick else RUNS
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        start = time.perf_counter()
        build_store(home, runs)
        built = time.perf_counter() - start
        database, _ = store_bytes(home)
        study = _study(home)
        load = os.getloadavg()[0]
        python = sys.executable
        report, report_memory = _timed(
            [python, "-m", "lincls.experiments.report", study, "--out", str(home / "report")], home
        )
        api, api_memory = _timed([python, "-c", API, study], home)
        pages = first_rows(home, study)
    note = (f"a study of {runs} runs copied from a 40-config sweep (built in {built:.0f} s; "
            f"mlflow.db {database / 1e9:.2f} GB, {database / runs / 1e3:.1f} KB a run); "
            f"load {load:.1f} before the report")  # fmt: skip
    return [
        Row("read1m", f"`lincls report STUDY`, {runs} runs", report, 120.0, "target: 120 s",
            1.0, None, f"at most {report_memory:.2f} GB of memory (target ≤ 4 GB); {note}"),
        Row("read1m", f"`lincls.study(STUDY).runs()`, {runs} runs", api, 120.0, "target: 120 s",
            1.0, None, f"at most {api_memory:.2f} GB of memory (target ≤ 4 GB)"),
        *(Row("read1m", f"`lincls ui`: the first rows of {name} (runs/search)", seconds, 10.0,
              "target: 10 s", 1.0, None, f"{shown} runs in the first page")
          for name, (seconds, shown) in pages.items()),
    ]  # fmt: skip
