"""A chunk's measured runs written at once (``lincls.tracking.measured``): each run's status,
values and error as it was measured, and a run whose values the store refuses fails alone."""

from __future__ import annotations

from conftest import runs_of

from lincls import tracking
from lincls.tracking.measured import write_measured

T0 = 1_700_000_000_000


def _payload(name: str, **changes) -> dict:
    payload = {
        "run_name": name,
        "tags": {"lincls.role": "run", "note": f"run {name}"},
        "params": {"learner.name": "perceptron", "seed": name},
        "metrics": {"mistakes": 3.0, "bound": 7.5},
        "curves": {},
        "status": "FINISHED",
        "error": None,
        "start_time": T0,
        "end_time": T0 + 40,
    }
    return {**payload, **changes}


def test_a_chunk_is_written_with_each_runs_status_values_and_times(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client, experiment_id = tracking.open_experiment(uri)
    failed = _payload("b", status="FAILED", error="ValueError: dataset.n must be ≥ 1", metrics={})
    ids = write_measured(client, experiment_id, [_payload("a"), failed, _payload("c")])
    assert all(isinstance(run_id, str) for run_id in ids) and len(set(ids)) == 3
    runs = {run.info.run_id: run for run in runs_of(uri)}
    a, b, c = (runs[run_id] for run_id in ids)
    assert [a.info.status, b.info.status, c.info.status] == ["FINISHED", "FAILED", "FINISHED"]
    assert (a.info.start_time, a.info.end_time) == (T0, T0 + 40)
    assert a.data.metrics == {"mistakes": 3.0, "bound": 7.5} and b.data.metrics == {}
    assert c.data.params == {"learner.name": "perceptron", "seed": "c"}
    assert b.data.tags["error"] == "ValueError: dataset.n must be ≥ 1"
    assert a.data.tags["mlflow.runName"] == "a" and "error" not in a.data.tags


def test_a_run_whose_values_the_store_refuses_fails_alone(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client, experiment_id = tracking.open_experiment(uri)
    refused = _payload("b", params={"": "a param without a name"})
    ids = write_measured(client, experiment_id, [_payload("a"), refused, _payload("c")])
    assert isinstance(ids[0], str) and isinstance(ids[2], str)
    assert isinstance(ids[1], Exception) and "params" in str(ids[1])
    statuses = {run.info.run_name: run.info.status for run in runs_of(uri)}
    assert statuses == {"a": "FINISHED", "b": "FAILED", "c": "FINISHED"}
