"""Bad input that ended in a traceback, ran a wrong config, or printed Hydra's block: each is one
line naming its field and what it allows, exit 2, for a run and a sweep alike, and nothing in the
store (the SQLite file is not even created)."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, compose_config, run_cli

from lincls.errors import LinclsInputError

LEARNER_KEYS = "bias, intercept_decay, lr, shuffle, stop_when_converged"
# " … ": the line starts with what comes before and ends with what comes after (options may be
# added in between)
LEARNERS = "must be one of adaline, alma, … perceptron, … voted_perceptron, winnow, got 'nosuch'"
EXPERIMENTS = "must be one of bound_verification, … margin_sweep, … real_data, … got 'nosuch'"
FILES = {  # the files' names, less their suffix, are their arguments' placeholders
    "two_rows.csv": "a,b,label\n1,2,1\n2,1,-1\n",
    "label_twice.csv": "label,a,label\n1,2,1\n2,1,-1\n3,3,1\n",
    "feature_twice.csv": "a,a,label\n1,2,1\n2,1,-1\n3,3,1\n",
    "huge_index.svm": "1 1:1 99999999999:2\n-1 2:1\n",
}

# (name, arguments, field, what the line says after "error: <field>: ")
CASES = [
    # tracebacks
    ("csv test set takes every row", ["dataset=csv", "dataset.path={two_rows}",
     "dataset.test_fraction=0.9"], "dataset.test_fraction",
     "leaves no training row: 2 rows × 0.9 rounds to 2 test rows; with 2 rows it must be in "
     "[0, 0.75)"),
    ("svmlight index past a C int", ["dataset=svmlight", "dataset.path={huge_index}"],
     "dataset.path", "{huge_index} line 1: index 99999999999 in '99999999999:2' is above "
     "2147483647, the largest feature index allowed"),
    # silent wrong runs
    ("unknown experiment", ["experiment=nosuch"], "experiment", EXPERIMENTS),
    ("unknown experiment in a sweep", ["-m", "experiment=margin_sweep,nosuch"], "experiment",
     EXPERIMENTS),
    ("empty experiment name", ["tracking.experiment=''"], "tracking.experiment",
     "must be a non-empty name, got ''"),
    ("empty experiment name in a sweep", ["-m", "seed=0,1", "tracking.experiment=''"],
     "tracking.experiment", "must be a non-empty name, got ''"),
    ("csv label column twice", ["dataset=csv", "dataset.path={label_twice}"], "dataset.path",
     "{label_twice} line 1: column names must be unique; 'label' names columns 1 and 3"),
    ("csv feature column twice", ["dataset=csv", "dataset.path={feature_twice}"],
     "dataset.path",
     "{feature_twice} line 1: column names must be unique; 'a' names columns 1 and 2"),
    ("no workers", ["-m", "hydra.launcher.n_jobs=0", "seed=0,1"], "hydra.launcher.n_jobs",
     "must be an integer in [1, inf), got 0"),
    # Hydra's block, and lines that named the wrong field
    ("wrong type", ["passes=1.5"], "passes", "must be an integer, got 1.5"),
    ("wrong type in a sweep", ["-m", "passes=1.5", "seed=0,1"], "passes",
     "must be an integer, got 1.5"),
    ("not a bool", ["certificates.svm=maybe"], "certificates.svm",
     "must be true or false, got 'maybe'"),
    ("null for a name", ["tracking.experiment=null"], "tracking.experiment",
     "must be a string, not null"),
    ("unknown learner", ["learner=nosuch"], "learner", LEARNERS),
    ("unknown learner in a sweep", ["-m", "learner=perceptron,nosuch"], "learner", LEARNERS),
    ("unknown dataset", ["dataset=nosuch"], "dataset",
     "must be one of breast_cancer, csv, … separable, … got 'nosuch'"),
    ("unknown launcher", ["-m", "hydra/launcher=nosuch", "seed=0,1"], "hydra.launcher",
     "must be one of basic, … lincls, … got 'nosuch'"),
    ("unknown key", ["learner.foo=1"], "learner.foo",
     f"is not an option of learner 'perceptron'; its options: {LEARNER_KEYS}"),
    ("unknown key in a sweep", ["-m", "learner.foo=1", "seed=0,1"], "learner.foo",
     f"is not an option of learner 'perceptron'; its options: {LEARNER_KEYS}"),
    ("added key", ["+learner.foo=1"], "learner.foo",
     f"is not an option of learner 'perceptron'; its options: {LEARNER_KEYS}"),
    ("added dataset key", ["+dataset.foo=1"], "dataset.foo",
     "is not an option of dataset 'separable'; its options: d, margin, n, n_test, offset, "
     "radius, seed"),
    ("unknown top-level key", ["nosuch=1"], "nosuch",
     "is not a key of the config; its keys: certificates, dataset, learner, order, orders,"),
    ("one example", ["dataset.n=1"], "dataset.n", "must be an integer in [2, inf), got 1"),
    ("override syntax", ["learner.lr=[1"], "learner.lr", "no viable alternative at input '[1'"),
    ("several values without -m", ["dataset.n=100,abc"], "dataset.n",
     "'100,abc' is several values: sweep them with -m"),
]  # fmt: skip


@pytest.fixture
def files(tmp_path) -> dict[str, str]:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return {name.split(".")[0]: str(tmp_path / name) for name in FILES}


def _only_line(done, field: str) -> str:
    assert done.returncode == 2, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert done.stdout.strip() == "", done.stdout[-2000:]
    assert lines[0].startswith(f"error: {field}: "), lines[0]
    return lines[0]


def _says(line: str, says: str) -> None:
    """``line`` starts with ``says``, or with each of its parts around " … " in turn."""
    position = 0
    for k, part in enumerate(says.split(" … ")):
        found = line.find(part, position)
        assert found == 0 if k == 0 else found >= position, (line, part)
        position = found + len(part)
    assert " … " not in says or position == len(line), (line, says)


@pytest.mark.parametrize("name, arguments, field, says", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_nothing_stored(name, arguments, field, says, files,
                                                         tmp_path):  # fmt: skip
    db = tmp_path / "store" / "mlflow.db"
    arguments = [a.format(**files) for a in arguments]
    done = run_cli([*arguments, f"tracking.uri=sqlite:///{db}"], cwd=tmp_path)
    line = _only_line(done, field)
    _says(line, f"error: {field}: {says.format(**files)}")
    assert not db.exists()


def test_lincls_run_says_the_same_line(tmp_path):
    db = tmp_path / "mlflow.db"
    done = subprocess.run(
        [sys.executable, "-m", "lincls.experiments.cli", "run", "-m", "learner=perceptron,nosuch",
         f"tracking.uri=sqlite:///{db}"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    _says(_only_line(done, "learner"), f"error: learner: {LEARNERS}")
    assert not db.exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_sweep_config_that_does_not_compose_is_refused_before_any_job(workers, tmp_path):
    """Every config of a sweep is composed and checked before its first job, with a pool too:
    the one that does not compose is one line naming its field and the config, and nothing runs
    (not even the config that composes), nothing is stored."""
    db = tmp_path / "mlflow.db"
    done = run_cli(["-m", "dataset.n=100,abc", f"hydra.launcher.n_jobs={workers}",
                    f"tracking.uri=sqlite:///{db}"], cwd=tmp_path)  # fmt: skip
    line = _only_line(done, "dataset.n")
    _says(line, "error: dataset.n: must be an integer, got 'abc' (config 2 of 2: dataset.n=abc "
                "tracking.uri= … ; no config was run)")  # fmt: skip
    assert os.listdir(tmp_path) == []


def _mount_tmpfs(where) -> bool:
    if shutil.which("mount") is None or (hasattr(os, "geteuid") and os.geteuid() != 0):
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                          capture_output=True)  # fmt: skip
    return done.returncode == 0


def test_a_new_store_on_a_full_disk_is_one_line_and_no_file(tmp_path):
    """A 64 KiB file system: MLflow's tables do not fit. The store is made in a file beside it
    and moved in place only when whole, so no half-made store is left (MLflow could not open
    the one it left, and said so in 116 lines)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _mount_tmpfs(disk):
        pytest.skip("needs root and mount to make a small full file system (tmpfs)")
    try:
        db = disk / "mlflow.db"
        done = run_cli(["dataset.n=50", f"tracking.uri=sqlite:///{db}"], cwd=tmp_path)
        line = _only_line(done, "tracking.uri")
        assert line == (
            f"error: tracking.uri: cannot create the store {db} (database or disk is full); "
            "nothing was written"
        )
        assert sorted(p.name for p in disk.iterdir()) == ["mlflow.db.lock"]
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_new_store_is_made_whole(tmp_path):
    """The store made beside its place and moved in: MLflow opens it, a run logs to it."""
    from conftest import runs_of

    db = tmp_path / "mlflow.db"
    done = run_cli(["dataset.n=50", f"tracking.uri=sqlite:///{db}"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Creating initial" not in done.stderr  # MLflow's two lines about making its tables
    assert len(runs_of(f"sqlite:///{db}")) == 1
    assert not (tmp_path / "mlflow.db.new").exists()


def test_an_input_error_survives_a_pool_worker_pickle():
    error = pickle.loads(pickle.dumps(LinclsInputError("dataset.n", "must be an integer")))
    assert (error.field, error.problem) == ("dataset.n", "must be an integer")
    assert str(error) == "dataset.n: must be an integer"


def test_composition_errors_in_process():
    """The translation itself, on Hydra's own exceptions (no subprocess)."""
    from lincls.config.composition import input_error

    expected = {
        "dataset.n=abc": "dataset.n: must be an integer, got 'abc'",
        "dataset.margin=wide": "dataset.margin: must be a number, got 'wide'",
        "dataset.n_test=[1]": "dataset.n_test: must be an integer, got [1]",
        "learner=winnow": None,  # composes
    }
    for override, says in expected.items():
        try:
            compose_config([override])
        except Exception as exc:
            error = input_error(exc)
            assert error is not None and str(error).startswith(says), (override, exc, error)
        else:
            assert says is None, override
    assert input_error(ValueError("not Hydra's")) is None
