"""A run's footprint: what a study's report, its runs and its curves read stays what it read
before runs stored their curves and details in one record (``tests/footprint_golden.json``,
captured from the store as runs wrote it before), over the three ways a run is written (measured
and written in one process, measured by a pool's worker and written by the sweep, or a chunk of
runs written at once by the worker that measured them); and a default run takes at most 16 KB of
store and 6 KB of disk."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import ROOT, compose_config

GOLDEN = ROOT / "tests" / "footprint_golden.json"
STUDY = "footprint"
SMALL = ["dataset.n=50", "dataset.d=5", "dataset.n_test=40"]
# (how the run is written, its overrides): between them every kind of value a run logs — the
# lemmas and a bias, a noisy set, a mini-batch, a likelihood curve, a support set (a metric and a
# curve of one name), the voted perceptron's test-error bound, several orderings, a multiclass
# learner, Winnow, a CSV's column map
CONFIGS: list[tuple[str, list[str]]] = [
    ("deferred", [*SMALL, "seed=0"]),
    ("measured", [*SMALL, "seed=1", "learner.bias=none"]),
    ("deferred", [*SMALL, "dataset=noisy", "learner=passive_aggressive"]),
    ("deferred", [*SMALL, "learner=batch_perceptron", "learner.batch_size=10"]),
    ("measured", [*SMALL, "learner=maxent"]),
    ("deferred", [*SMALL, "learner=kernel_perceptron"]),
    ("measured", [*SMALL, "learner=voted_perceptron", "passes=1"]),
    ("deferred", [*SMALL, "order=shuffled", "orders.permutations=3"]),
    ("measured", [*SMALL, "learner=multiclass_perceptron", "dataset=multiclass"]),
    ("deferred", ["learner=winnow", "dataset=disjunction", "dataset.n=50"]),
    ("measured", ["dataset=playtennis"]),
    ("measured", [*SMALL, "learner=budget_perceptron"]),
    ("execute", [*SMALL, "seed=2"]),
    ("execute", [*SMALL, "seed=3", "dataset=noisy"]),
    ("execute", [*SMALL, "learner=averaged_perceptron"]),
    ("execute", [*SMALL, "learner=second_order_perceptron"]),
    ("execute", [*SMALL, "learner=alma"]),
    ("execute", [*SMALL, "learner=romma"]),
    ("execute", [*SMALL, "learner=arow"]),
    ("execute", [*SMALL, "learner=projectron"]),
    ("execute", [*SMALL, "learner=passive_aggressive", "learner.variant=pa1"]),
    ("execute", [*SMALL, "learner=margin_perceptron"]),
]
# Curves the readers give (and single values, whose history is one point at step 0).
CURVES = [
    "cumulative_mistakes", "cumulative_mistakes_bound", "mistakes_per_pass", "mistakes_per_batch",
    "lemma.progress", "lemma.norm", "lemma.mistakes", "log_likelihood_per_iteration",
    "support_size", "mistakes", "bound.tightest",
]  # fmt: skip
# What differs from one making of the same runs to the next: ids, times, the writing process.
VOLATILE_COLUMNS = {"run_id", "start_time", "parent_run_id", "fit_seconds"}
VOLATILE_TAGS = {"lincls.host", "lincls.pid", "mlflow.source.git.commit", "mlflow.parentRunId",
                 "mlflow.note.content", "mlflow.runColor", "mlflow.user"}  # fmt: skip
RELATIVE = 1e-9  # solvers' last digits may differ between machines; a stored value never does


def build_study(uri: str) -> None:
    """The study ``STUDY``'s runs in the store at ``uri``, written each way a run is written."""
    from lincls import runner, tracking
    from lincls.config.run import RunConfig
    from lincls.tracking.measured import write_measured

    measured = []
    for way, overrides in CONFIGS:
        config = compose_config([*overrides, f"tracking.uri={uri}"])  # SVMs cached beside it
        config["study"] = STUDY
        if way == "execute":
            runner.execute(config)
            continue
        client, experiment_id = tracking.open_experiment(uri)
        payload = runner.execute_deferred(
            RunConfig.of(config), {}, experiment_id, opened=way == "deferred"
        )
        assert payload["status"] == "FINISHED", payload["error"]
        if way == "measured":  # a chunk's runs, written at once as its worker writes them
            measured.append(payload)
            continue
        tracking.write_payload(client, experiment_id, payload)
    written = write_measured(client, experiment_id, measured)
    assert all(isinstance(run_id, str) for run_id in written), written


def _plain(value: Any) -> Any:
    """A frame's cell as JSON holds it (NaN and missing as None)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def observe(uri: str, out: Path) -> dict[str, Any]:
    """What the report, the reader and the API give of the study: runs by config hash."""
    import lincls
    from lincls.experiments import report
    from lincls.tracking import reader

    study = lincls.study(STUDY, store=uri)
    runs = study.runs()
    table = {}
    for _, row in runs.iterrows():
        values = {c: _plain(row[c]) for c in runs.columns if c not in VOLATILE_COLUMNS}
        table[str(row["config_hash"])] = {c: v for c, v in values.items() if v is not None}
    hashes = dict(zip(runs["run_id"], runs["config_hash"], strict=True))
    curves: dict[str, dict[str, list]] = {}
    for name in CURVES:
        frame = study.curves(name)
        for run_id, points in frame.groupby("run", sort=False):
            steps, values = points["step"].tolist(), points["value"].tolist()
            curves.setdefault(hashes[run_id], {})[name] = [
                [s, _plain(v)] for s, v in zip(steps, values, strict=True)
            ]
    whole = reader.runs(uri, study=STUDY)
    by_hash = {}
    for _, row in whole.iterrows():
        # its metrics and params are the runs' above (one reading of the store gives both)
        tags = {c: _plain(row[c]) for c in whole.columns
                    if c.startswith("tags.") and c[len("tags."):] not in VOLATILE_TAGS}  # fmt: skip
        by_hash[row["tags.lincls.config_hash"]] = {c: v for c, v in tags.items() if v is not None}
    assert report.main([STUDY, "--store", uri, "--out", str(out)]) == 0
    text = (out / "report.md").read_text(encoding="utf-8")
    return {
        "columns": [c for c in runs.columns if c not in VOLATILE_COLUMNS],
        "dtypes": {c: str(t) for c, t in runs.dtypes.items() if c not in VOLATILE_COLUMNS},
        "runs": table,
        "curves": curves,
        "reader_columns": sorted(
            c for c in whole.columns if c[len("tags.") :] not in VOLATILE_TAGS
        ),
        "reader": by_hash,
        "report": masked(text),
    }


def masked(report_md: str) -> str:
    """The report's text without what differs between makings: run ids (hex), seconds."""
    text = re.sub(r"\b[0-9a-f]{32}\b", "<run>", report_md)
    return re.sub(r"\d+(\.\d+)? s\b", "<s>", text)


@pytest.fixture(scope="module")
def observed(tmp_path_factory, _migrated_store) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("footprint")
    shutil.copyfile(_migrated_store, tmp / "mlflow.db")
    uri = f"sqlite:///{tmp / 'mlflow.db'}"
    build_study(uri)
    found = observe(uri, tmp / "report")
    if os.environ.get("LINCLS_WRITE_FOOTPRINT_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(found, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return found


FINGERPRINT = "dataset.fingerprint"


def same(ours: Any, golden: Any, where: str) -> list[str]:
    """Where two observed values differ (floats within ``RELATIVE``)."""
    if isinstance(golden, dict) and isinstance(ours, dict):
        problems = [f"{where}: missing {k}" for k in golden if k not in ours]
        problems += [f"{where}: extra {k}" for k in ours if k not in golden]
        for key in golden.keys() & ours.keys():
            problems += same(ours[key], golden[key], f"{where}/{key}")
        return problems
    if isinstance(golden, list) and isinstance(ours, list):
        if len(golden) != len(ours):
            return [f"{where}: {len(ours)} items, {len(golden)} before"]
        return [p for k, (a, b) in enumerate(zip(ours, golden, strict=True))
                for p in same(a, b, f"{where}[{k}]")]  # fmt: skip
    if isinstance(golden, float) and isinstance(ours, (int, float)) and not isinstance(ours, bool):
        return (
            []
            if ours == pytest.approx(golden, rel=RELATIVE, abs=1e-12)
            else [f"{where}: {ours!r}, {golden!r} before"]
        )
    if where.endswith(FINGERPRINT) and isinstance(golden, str):
        # a hash of the generated floats' bytes: generators use BLAS, whose last bits differ by
        # processor (the values are compared above within RELATIVE); only its form is held
        return [] if re.fullmatch(r"[0-9a-f]{16}", str(ours)) else [f"{where}: {ours!r}"]
    return [] if ours == golden else [f"{where}: {ours!r}, {golden!r} before"]


def untracked(found: dict[str, Any]) -> dict[str, Any]:
    """``observe``'s values without how the runs were tracked (the store and its settings,
    whose defaults may change): not what the runs measured."""
    params = [c for c in found["reader_columns"] if c.startswith("params.tracking.")]
    names = {c.rsplit(".", 1)[1] for c in params}  # their names in the runs' table
    out = dict(found)
    out["columns"] = [c for c in found["columns"] if c not in names]
    out["dtypes"] = {c: t for c, t in found["dtypes"].items() if c not in names}
    out["runs"] = {k: {c: v for c, v in row.items() if c not in names}
                   for k, row in found["runs"].items()}  # fmt: skip
    out["reader_columns"] = [c for c in found["reader_columns"] if c not in params]
    return out


@pytest.mark.slow
def test_the_study_reads_as_it_did_before_the_footprint_change(observed):
    golden = untracked(json.loads(GOLDEN.read_text(encoding="utf-8")))
    ours = untracked(observed)
    assert len(golden["runs"]) == len(CONFIGS)
    for part in ("columns", "dtypes", "runs", "curves", "reader_columns", "reader", "report"):
        problems = same(ours[part], golden[part], part)
        assert not problems, "\n".join(problems[:40])


# The budget for a cheap default run: what a million of them may take.
STORE_BYTES = 16 * 1024  # of mlflow.db, after a checkpoint
DISK_BYTES = 6 * 1024  # of files, as du counts them (blocks, folders too)
BUDGET_RUNS = 200


def _disk(folder: Path) -> int:
    """Bytes ``du`` counts under ``folder`` (its blocks, folders included); 0 if it is missing."""
    if not folder.exists():
        return 0
    total = folder.stat().st_blocks * 512
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            total += os.lstat(os.path.join(root, name)).st_blocks * 512
    return total


def _checkpointed_size(db: Path) -> int:
    """The SQLite file's size once its write-ahead log is copied into it and emptied."""
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size


@pytest.mark.slow
def test_a_default_run_takes_at_most_16_kb_of_store_and_6_kb_of_disk(tmp_path):
    from conftest import run_cli

    from lincls import tracking

    home = tmp_path / "home"
    uri = f"sqlite:///{home / 'mlflow.db'}"
    home.mkdir()
    tracking.open_experiment(uri)  # the schema and the experiment: what every store has once
    empty = _checkpointed_size(home / "mlflow.db")
    args = ["-m", f"seed=range(0,{BUDGET_RUNS})", "dataset.n=100", "hydra.launcher.n_jobs=2",
            f"tracking.uri={uri}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]  # fmt: skip
    done = run_cli(args, cwd=tmp_path, env={"LINCLS_HOME": str(home)}, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{BUDGET_RUNS} jobs: {BUDGET_RUNS} finished" in done.stderr
    store = (_checkpointed_size(home / "mlflow.db") - empty) / BUDGET_RUNS
    disk = _disk(home / "mlartifacts") / BUDGET_RUNS
    assert store <= STORE_BYTES and disk <= DISK_BYTES, (store, disk)
    # a run's rows besides its params (the sweep's parent's few rounded away): 3 metrics of
    # one point each, 28 tags, its record among them
    with sqlite3.connect(home / "mlflow.db") as db:
        counts = {t: db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("metrics", "latest_metrics", "tags")}  # fmt: skip
    runs = {t: round(n / BUDGET_RUNS) for t, n in counts.items()}
    assert runs == {"metrics": 3, "latest_metrics": 3, "tags": 28}, runs
