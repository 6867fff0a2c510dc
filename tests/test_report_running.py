"""A report of a study whose sweep is still writing runs says so and stays off the sweep's parent:
it is not final."""

from __future__ import annotations

import os
import shutil
import socket

from conftest import compose_config
from mlflow.entities import RunTag
from mlflow.tracking import MlflowClient

from lincls import runner
from lincls.experiments import report


def test_a_running_sweep_is_named_with_its_configs_not_run_yet(tmp_path, _migrated_store, capsys):
    shutil.copyfile(_migrated_store, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client, experiment_id = runner.tracking.open_experiment(uri)
    tags = {"lincls.role": "sweep", "lincls.study": "growing", "lincls.jobs": "5",
            "lincls.host": socket.gethostname(), "lincls.pid": str(os.getpid())}  # fmt: skip
    parent = client.create_run(experiment_id, run_name="growing", tags=tags).info.run_id
    for seed in range(2):  # 2 of its 5 configs written, the sweep still RUNNING
        config = compose_config([f"seed={seed}", "dataset.n=40", "dataset.d=3", "passes=1",
                                 f"tracking.uri={uri}"])  # fmt: skip
        config["study"] = "growing"
        run_id = runner.execute(config).run_id
        client.log_batch(run_id, tags=[RunTag("mlflow.parentRunId", parent),
                                       RunTag("lincls.role", "run")])  # fmt: skip
    out = tmp_path / "out"
    assert report.main(["growing", "--tracking-uri", uri, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    said = f"sweep {parent} is still running: 3 of its 5 configs have no run yet"
    assert f"note: {said}; this report covers the runs written so far" in printed
    assert "also artifacts report/" not in printed
    text = (out / "report.md").read_text()
    assert f"**Sweep `{parent}` is still running**: 3 of its 5 configs have no run yet" in text
    assert MlflowClient(uri).list_artifacts(parent) == []  # not attached as if final
    # once the sweep is over, the same report is attached to it and says nothing of running
    MlflowClient(uri).set_terminated(parent, "FINISHED")
    assert report.main(["growing", "--tracking-uri", uri, "--out", str(out)]) == 0
    assert f"also artifacts report/ of run {parent}" in capsys.readouterr().out
    assert "still running" not in (out / "report.md").read_text()
    assert [a.path for a in MlflowClient(uri).list_artifacts(parent)] == ["report"]


def test_a_sweep_left_running_by_a_dead_process_is_not_called_running():
    import pandas as pd

    from lincls.experiments.report.collect import still_running

    gone = {"status": "RUNNING", "tags.lincls.jobs": "4", "tags.lincls.host": socket.gethostname(),
            "tags.lincls.pid": str(2**22 + 7)}  # fmt: skip
    alive = {**gone, "tags.lincls.pid": str(os.getpid())}
    elsewhere = {**gone, "tags.lincls.host": "another-host"}
    children = pd.DataFrame({"tags.mlflow.parentRunId": ["b", "b", "c"]})
    by_id = {k: pd.Series(v) for k, v in {"a": gone, "b": alive, "c": elsewhere}.items()}
    assert still_running(by_id, ["a", "b", "c"], children) == {"b": (4, 2), "c": (4, 1)}
