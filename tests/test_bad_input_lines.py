"""Bad input that used to end in a traceback: each is one line naming its field, exit 2, and
nothing in the store (the SQLite file is not even created)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from lincls.errors import LinclsInputError
from lincls.errors import byte_size as _size
from lincls.registry import available_memory, check_memory


def _one_line(done, field: str) -> str:
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {field}: "), lines[0]
    return lines[0]


def test_a_dataset_too_big_for_memory_is_refused_before_allocating(tmp_path):
    done = run_cli(["dataset.n=100000000", "dataset.d=100000",
                    f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"], cwd=tmp_path)  # fmt: skip
    line = _one_line(done, "dataset.n × dataset.d")
    assert "100001000 rows × 100000 columns of float64 need about 218.3 TiB" in line
    assert not (tmp_path / "mlflow.db").exists()


def test_the_memory_estimate_counts_rows_test_rows_columns_and_temporaries():
    have = available_memory()
    assert have > 0
    rows = have // (8 * 3 * 10) + 1  # 10 columns: just over what there is
    with pytest.raises(LinclsInputError) as caught:
        check_memory({"n": rows, "d": 10, "n_test": 0})
    assert caught.value.field == "dataset.n × dataset.d"
    check_memory({"n": rows // 2, "d": 10, "n_test": 0})  # half of it fits
    check_memory({"n": 10**12, "d": 10.5})  # not a generated table's shape: the generator says
    assert _size(72.8 * 2**40) == "72.8 TiB" and _size(512) == "512.0 B"


def test_csv_without_a_path_says_the_path_is_required(tmp_path):
    done = run_cli(["dataset=csv", f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"],
                   cwd=tmp_path)  # fmt: skip
    assert (
        _one_line(done, "dataset.path") == "error: dataset.path: is required: give dataset.path=…"
    )
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize("label", ["1e308", "0.5", "inf", "9007199254740993"])
def test_csv_labels_that_name_no_class_are_one_line_with_their_line(label, tmp_path):
    csv = tmp_path / "data.csv"
    csv.write_text(f"a,b,label\n1,2,-1\n2,1,{label}\n3,3,-1\n0,1,{label}\n")
    done = run_cli(["dataset=csv", f"dataset.path={csv}", "dataset.test_fraction=0",
                    f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"], cwd=tmp_path)  # fmt: skip
    line = _one_line(done, "dataset.label_column")
    assert f"line 3, column 'label': label {label} is not a class" in line
    assert not (tmp_path / "mlflow.db").exists()


def test_csv_labels_that_are_whole_numbers_stay_classes(tmp_path):
    csv = tmp_path / "data.csv"
    csv.write_text("a,b,label\n1,2,-3\n2,1,7.0\n3,3,-3\n0,1,7\n")
    done = run_cli(["dataset=csv", f"dataset.path={csv}", "dataset.test_fraction=0",
                    "certificates.svm=false",
                    f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}"], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]


def test_an_unwritable_certificate_cache_is_one_line_and_no_run(tmp_path, read_only_dir):
    locked, prefix = read_only_dir
    store = tmp_path / "store"
    done = subprocess.run(
        [*prefix, sys.executable, "-m", "lincls.experiments.run", "dataset.n=100",
         f"certificates.cache_dir={locked / 'cache'}", f"tracking.uri=sqlite:///{store / 'm.db'}",
         f"hydra.run.dir={tmp_path / 'run'}"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    line = _one_line(done, "certificates.cache_dir")
    assert line == f"error: certificates.cache_dir: cannot create {locked / 'cache'} " + (
        "(Permission denied)"
    )
    assert not Path(store / "m.db").exists()
