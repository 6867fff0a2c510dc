"""A run on an existing SQLite store loads no MLflow: the store is checked, the experiment found
and the run written with SQL, and a batch is checked against MLflow's limits without MLflow's
validators (``lincls.tracking.plain``) only where those validators would pass it unchanged."""

from __future__ import annotations

import pytest
from conftest import run_cli, runs_of
from mlflow.exceptions import MlflowException
from mlflow.utils.validation import _validate_metric, _validate_param, _validate_tag

from lincls.tracking.plain import plain_batch, plain_dataset, plain_name

NAMES = [
    "mistakes", "bound_ratio.tightest", "mlflow.runName", "a b", "curve/step", "x-y",
    "é", "a:b", "", ".", "..", "../x", "/x", "a//b", "a/./b", "a/", "x" * 250, "x" * 251,
    "tab\tname", "semi;colon", "a\nb", "ok_1.2-3",
]  # fmt: skip


def mlflow_accepts(check, *args) -> bool:
    try:
        check(*args)
    except MlflowException:
        return False
    return True


@pytest.mark.parametrize("name", NAMES)
def test_a_plain_name_is_one_mlflow_takes_as_it_is(name):
    if plain_name(name):
        assert mlflow_accepts(_validate_param, name, "v")
        assert mlflow_accepts(_validate_tag, name, "v")
        assert mlflow_accepts(_validate_metric, name, 1.0, 0, 0)


def test_the_plain_reading_takes_lincls_names_and_leaves_the_rest_to_mlflow():
    assert [n for n in NAMES if plain_name(n)] == [
        "mistakes", "bound_ratio.tightest", "mlflow.runName", "a b", "curve/step", "x-y", "é",
        "x" * 250, "ok_1.2-3",
    ]  # fmt: skip
    assert plain_batch({"p": "v" * 6000}, [("m", 1.5, 0, 0), ("m", 2, 1, 1)], {"t": "v" * 8000})
    assert not plain_batch({"p": "v" * 6001}, [], {})  # MLflow truncates or refuses: its call
    assert not plain_batch({}, [], {"t": "v" * 8001})
    assert not plain_batch({}, [("m", True, 0, 0)], {})  # a bool is no metric value to MLflow
    assert not plain_batch({}, [("m", 1.0, -1, 0)], {})
    assert not plain_batch({}, [("m", 1.0, 0, 0.5)], {})
    assert plain_dataset({"name": "n", "digest": "d" * 36, "source": "{}"})
    assert not plain_dataset({"name": "n", "digest": "d" * 37, "source": "{}"})


def test_a_run_on_an_existing_store_imports_no_mlflow(tmp_path):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    small = ["dataset.n=200", "dataset.d=5", "dataset.n_test=50", f"tracking.uri={uri}"]
    first = run_cli(small, tmp_path)  # makes the store and the experiment through MLflow
    assert first.returncode == 0, first.stderr
    # the second run's imports, as ``python -X importtime`` lists them on stderr
    second = run_cli([*small, "seed=1"], tmp_path, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert second.returncode == 0, second.stderr
    imported = {line.rpartition("|")[2].strip() for line in second.stderr.splitlines()}
    assert "lincls.runner" in imported
    assert not {name for name in imported if name.split(".")[0] in ("mlflow", "sqlalchemy")}
    runs = runs_of(uri)
    assert len(runs) == 2 and {r.info.status for r in runs} == {"FINISHED"}
    assert {r.data.params["seed"] for r in runs} == {"0", "1"}
