"""A sweep's questions to its store give the same answers through SQL as through MLflow's search."""

from __future__ import annotations

import shutil

from mlflow.tracking import MlflowClient

from lincls import tracking
from lincls.tracking import sweep_runs


def test_running_and_finished_runs_read_with_sql_equal_mlflow_s_search(tmp_path, _migrated_store):
    shutil.copyfile(_migrated_store, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client, experiment_id = tracking.open_experiment(uri)
    assert client.rows is not None  # lincls writes this store's rows: the SQL path
    made = {}
    cases = [  # (status, study, parent, host, pid, config hash)
        ("RUNNING", "s", "p1", "h1", "11", "a"), ("RUNNING", "s", "p2", "h2", None, "b"),
        ("FINISHED", "s", "p1", "h1", "12", "c"), ("FINISHED", "s", "p1", "h1", "13", "c"),
        ("FINISHED", "t", "p1", "h1", "14", "d"), ("FAILED", "s", "p1", "h1", "15", "e"),
        ("RUNNING", "s", "p1", None, None, None),
    ]  # fmt: skip
    for k, (status, study, parent, host, pid, config) in enumerate(cases):
        tags = {"lincls.study": study, "mlflow.parentRunId": parent, "lincls.host": host,
                "lincls.pid": pid, "lincls.config_hash": config}  # fmt: skip
        run_id = tracking.start_run(client, experiment_id, f"r{k}", {
            key: value for key, value in tags.items() if value is not None})  # fmt: skip
        if status != "RUNNING":
            tracking.end_run(client, run_id, status)
        made[run_id] = cases[k]
    mlflow = MlflowClient(uri)  # no rows writer: MLflow's search
    for parent in (None, "p1", "p2"):
        by_sql = sorted(sweep_runs.running(client, experiment_id, parent))
        assert by_sql == sorted(sweep_runs.running(mlflow, experiment_id, parent))
        expected = sorted(
            (run_id, host, pid) for run_id, (status, _, p, host, pid, _) in made.items()
            if status == "RUNNING" and parent in (None, p)
        )  # fmt: skip
        assert by_sql == expected
    assert sweep_runs.finished_hashes(client, experiment_id, "s") == ("c",)
    assert sweep_runs.finished_hashes(mlflow, experiment_id, "s") == ("c",)
    assert sweep_runs.finished_hashes(client, experiment_id, "t") == ("d",)
