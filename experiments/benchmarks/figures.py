"""Run figures: a sweep's rate with figures on against the same sweep with figures off.

Each run's figure (``lincls.figures``: cumulative mistakes under the bound, Novikoff's lemmas)
is drawn by the report, not by the sweep, because one figure costs more than most runs. Two
sweeps of the same ``N`` configs (the ``sweep`` section's shape, the lincls launcher in one
process) run into fresh SQLite stores; after the first ("figures on") the report's figure pass
(``experiments.report.figures.picture_runs``) draws and logs every run's figure and colour, the
second ("figures off") gets none. A sweep's time is its parent run's, from its creation before
the first job to its close after the last. ratio = the rate with figures on / the rate with
them off (target ≥ 0.9: the figures may not slow a sweep by more than 10 %). A second row puts
what a sweep drawing its figures itself would pay (its time plus the figure pass's) against the
sweep without them: the reason they are drawn afterwards.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from experiments.bench import Row
from experiments.benchmarks.sweep import _sweep


def run(quick: bool = False) -> list[Row]:
    """The figures section: a sweep with figures on and off, and the figures' own cost."""
    from mlflow.tracking import MlflowClient

    from experiments.report.collect import runs_frame
    from experiments.report.figures import picture_runs

    configs = 20 if quick else 200
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        timed = {}
        for name in ("on", "off"):
            store = root / name
            store.mkdir()
            seconds, children = _sweep(store, configs, [])
            timed[name] = (seconds / len(children), store, children)
        per_run_on, store, children = timed["on"]
        client = MlflowClient(tracking_uri=f"sqlite:///{store / 'mlflow.db'}")
        start = time.perf_counter()
        drawn, colored = picture_runs(client, runs_frame(children))
        figures = (time.perf_counter() - start) / len(children)
        per_run_off = timed["off"][0]
    note = (
        f"{len(children)} configs; figures drawn by the report afterwards: {drawn} figures, "
        f"{colored} colours, {figures * 1e3:.0f} ms a run"
    )
    return [
        Row("figures", "a run of a sweep, figures on", per_run_on, per_run_off,
            "figures off", 0.9, None, note),
        Row("figures", "a run, its figure drawn in the sweep", per_run_on + figures,
            per_run_off, "figures off", None, None,
            "what drawing each figure in its run would cost a sweep"),
    ]  # fmt: skip
