"""Bad input at the edges a user meets: one line naming the field and the fix, exit 2, and
nothing made first (no folder, lock file, store or run); the home, a store's folder, the
certificate cache, a path given as a tracking URI, the UI's address, a store of no scheme, a
study's curves, a sweeper's grid outside a named study, and a report piped into ``head``."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from lincls.errors import LinclsInputError

SMALL = ["dataset.n=30", "dataset.n_test=10", "certificates.svm=false"]
FIX = "set LINCLS_HOME to a folder this user can write"


def cli(*arguments: str, cwd: Path, env: dict[str, str] | None = None, prefix=(), **kw):
    """``lincls ARGUMENTS`` (``lincls.experiments.cli``) in ``cwd``, MLFLOW_TRACKING_URI unset
    unless ``env`` sets it; the CompletedProcess."""
    base = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "lincls.experiments.cli", *arguments], cwd=cwd,
        env={**base, "PYTHONPATH": str(ROOT), **(env or {})}, text=True, timeout=300, **kw,
    )  # fmt: skip


def refused(done: subprocess.CompletedProcess, start: str) -> str:
    """The one line of a refusal that exits 2 and starts ``error: <start>``."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {start}"), lines[0]
    return lines[0]


@pytest.fixture
def work(tmp_path) -> Path:
    """An empty working folder."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def test_an_empty_lincls_home_is_unset_so_everything_goes_to_results(work):
    root_hydra = Path("/hydra").exists()
    done = cli("run", *SMALL, cwd=work, env={"LINCLS_HOME": ""}, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert (work / "results" / "mlflow.db").is_file()  # the default store makes its own folder
    assert (work / "results" / "hydra" / "runs").is_dir()  # was /hydra/runs/…
    assert Path("/hydra").exists() == root_hydra


@pytest.mark.parametrize("kind", ["a file", "under a file", "unmakeable"])
def test_a_home_that_cannot_be_written_is_one_line(kind, work, tmp_path):
    (tmp_path / "file").write_text("x")
    home = {"a file": tmp_path / "file", "under a file": tmp_path / "file" / "home",
            "unmakeable": Path("/proc/lincls-home")}[kind]  # fmt: skip
    if kind == "unmakeable" and not Path("/proc/self").is_dir():
        pytest.skip("needs /proc")
    done = cli("run", *SMALL, cwd=work, env={"LINCLS_HOME": str(home)}, capture_output=True)
    line = refused(done, "LINCLS_HOME: ")
    assert str(home) in line and line.endswith(FIX)
    assert not home.exists() or home.is_file()
    assert sorted(os.listdir(tmp_path)) == ["file", "work"] and os.listdir(work) == []


def test_a_read_only_home_is_one_line(read_only_dir, work):
    locked, prefix = read_only_dir
    inside = locked / "home"
    for home, says in ((locked, f"{locked} is not writable by this user"),
                       (inside, f"cannot create {inside} (Permission denied)")):  # fmt: skip
        done = cli("run", *SMALL, cwd=work, env={"LINCLS_HOME": str(home)}, prefix=prefix,
                      capture_output=True)  # fmt: skip
        assert refused(done, "LINCLS_HOME: ") == f"error: LINCLS_HOME: {says}; {FIX}"
        assert os.listdir(locked) == [] and os.listdir(work) == []


@pytest.mark.parametrize("form", ["uri", "path", "environment"])
def test_a_store_in_a_folder_that_does_not_exist_is_refused_and_not_made(form, work, tmp_path):
    db = tmp_path / "nonexistent_dir" / "x.db"
    home = tmp_path / "home"
    given = {"uri": ["--store", f"sqlite:///{db}"], "path": ["--store", str(db)], "environment": []}
    env = {"LINCLS_HOME": str(home)}
    if form == "environment":
        env["MLFLOW_TRACKING_URI"] = f"sqlite:///{db}"
    done = cli("run", *given[form], *SMALL, cwd=work, env=env, capture_output=True)
    line = refused(done, "tracking.uri: ")
    assert line == (f"error: tracking.uri: the store's folder {db.parent} does not exist; make it "
                    "first, or give a .db file in a folder that exists")  # fmt: skip
    assert not db.parent.exists() and not home.exists() and os.listdir(work) == []


def test_the_api_refuses_a_store_whose_folder_does_not_exist(tmp_path, monkeypatch):
    import lincls

    monkeypatch.setenv("LINCLS_HOME", str(tmp_path / "home"))
    with pytest.raises(LinclsInputError) as raised:
        lincls.run("perceptron", "separable", store=tmp_path / "nowhere" / "x.db", passes=1)
    assert raised.value.field == "tracking.uri" and "does not exist" in raised.value.problem
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_a_cache_folder_that_cannot_be_made_is_one_line_before_any_run(work, tmp_path):
    db = tmp_path / "store.db"
    done = cli("run", "--store", str(db), "certificates.cache_dir=/proc/nope", *SMALL,
                  "certificates.svm=true", cwd=work, env={"LINCLS_HOME": str(tmp_path / "home")},
                  capture_output=True)  # fmt: skip
    line = refused(done, "certificates.cache_dir: ")
    assert line.endswith(": cannot create /proc/nope (No such file or directory)")
    assert sorted(os.listdir(tmp_path)) == ["work"] and os.listdir(work) == []  # no store, no run


@pytest.mark.parametrize("how", ["tracking.uri", "MLFLOW_TRACKING_URI"])
def test_a_path_that_is_no_db_file_as_the_store_is_one_line(how, work, tmp_path):
    path = tmp_path / "some" / "path"
    overrides = [f"tracking.uri={path}"] if how == "tracking.uri" else []
    env = {"LINCLS_HOME": str(tmp_path / "home")}
    if how == "MLFLOW_TRACKING_URI":
        env["MLFLOW_TRACKING_URI"] = str(path)
    done = cli("run", *overrides, *SMALL, cwd=work, env=env, capture_output=True)
    assert refused(done, f"{how}: ") == (
        f"error: {how}: must be a tracking URI (sqlite:///…, postgresql://…, http://…) or a path "
        f"to a .db file, got '{path}'"
    )
    assert sorted(os.listdir(tmp_path)) == ["work"] and os.listdir(work) == []


def test_a_db_path_as_tracking_uri_is_a_sqlite_store_as_for_store(work, tmp_path):
    db = tmp_path / "runs.db"
    env = {"LINCLS_HOME": str(tmp_path / "home")}
    done = cli("run", f"tracking.uri={db}", *SMALL, cwd=work, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert f"lincls ui --store sqlite:///{db}," in done.stdout
    with sqlite3.connect(db) as store:
        assert store.execute("SELECT status FROM runs").fetchall() == [("FINISHED",)]


def test_a_folder_store_uri_is_one_line(work, tmp_path):
    uri = f"file://{tmp_path / 'mlruns'}"
    env = {"LINCLS_HOME": str(tmp_path / "home")}
    done = cli("run", f"tracking.uri={uri}", *SMALL, cwd=work, env=env, capture_output=True)
    assert refused(done, "tracking.uri: MLflow writes no folder store").endswith(
        "give a SQLite file: a path ending in .db, or sqlite:///<path>.db"
    )
    assert sorted(os.listdir(tmp_path)) == ["work"] and os.listdir(work) == []


@pytest.fixture
def busy_port():
    """A port a server listens on (not a lincls UI's)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


@pytest.mark.parametrize(
    "arguments, says",
    [
        (["--port", "99999"], "--port: must be an integer in [1, 65535], got '99999'"),
        (["--port", "-1"], "--port: must be an integer in [1, 65535], got '-1'"),
        (["--port", "abc"], "--port: must be an integer in [1, 65535], got 'abc'"),
        (["--host", "nosuch.invalid"], "--host: 'nosuch.invalid' is no address of this machine"),
        (
            ["--port", "{busy}"],
            "--port: 127.0.0.1:{busy} is in use (another server listens there); "
            "choose another --port or --host",
        ),
    ],
)
def test_a_ui_address_it_cannot_listen_on_is_one_line_at_once(arguments, says, busy_port,
                                                              work, tmp_path):  # fmt: skip
    home = tmp_path / "home"
    arguments = [a.format(busy=busy_port) for a in arguments]
    start = time.monotonic()
    done = cli("ui", *arguments, cwd=work, env={"LINCLS_HOME": str(home)}, capture_output=True)
    took = time.monotonic() - start
    assert refused(done, says.format(busy=busy_port).partition(" ")[0])
    assert done.stderr.startswith(f"error: {says.format(busy=busy_port)}")
    assert done.stdout == ""  # no address of a UI that will not start
    assert took < 10, took  # was 10-17 s: the server's start, then its error
    assert not home.exists() and os.listdir(work) == []


def test_a_store_of_no_scheme_is_lincls_error_in_the_api_and_the_report(work, tmp_path):
    import lincls

    for call in (lambda: lincls.studies(store="nowhere://x"),
                 lambda: lincls.study("s", store="nowhere://x")):  # fmt: skip
        with pytest.raises(LinclsInputError) as raised:
            call()
        assert raised.value.field == "store"
        assert raised.value.problem.startswith(
            "must be a path ending in .db or start with one of sqlite://"
        )
    done = cli("report", "s", "--store", "nowhere://x", cwd=work,
                  env={"LINCLS_HOME": str(tmp_path / "home")}, capture_output=True)  # fmt: skip
    refused(done, "--store: must be a path ending in .db or start with one of sqlite://")
    assert sorted(os.listdir(tmp_path)) == ["work"] and os.listdir(work) == []


@pytest.fixture(scope="module")
def one_run_study(tmp_path_factory) -> tuple[Path, Path]:
    """(home, store) holding one run of the study ``edges``."""
    home = tmp_path_factory.mktemp("edges")
    done = cli("run", "study=edges", *SMALL, cwd=home, env={"LINCLS_HOME": str(home)},
                  capture_output=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return home, home / "mlflow.db"


def test_a_report_whose_reader_left_ends_quietly(one_run_study):
    home, _ = one_run_study
    read, write = os.pipe()
    os.close(read)  # the reader left before the first line (lincls report … | head -0)
    try:
        done = cli("report", "edges", cwd=home, env={"LINCLS_HOME": str(home)}, stdout=write,
                      stderr=subprocess.PIPE)  # fmt: skip
    finally:
        os.close(write)
    assert done.stderr == ""  # was a BrokenPipeError traceback
    assert done.returncode == 141  # as a command SIGPIPE ended
    assert (home / "edges" / "report.md").is_file()


def test_a_curve_no_run_logged_names_those_they_did(one_run_study):
    import lincls

    _, db = one_run_study
    study = lincls.study("edges", store=db)
    assert len(study.curves("cumulative_mistakes")) > 0
    with pytest.raises(LinclsInputError) as raised:
        study.curves("nope")
    assert raised.value.field == "curve"
    assert raised.value.problem.startswith(
        "no run of study 'edges' logged 'nope'; its runs' curves: "
    )
    assert "cumulative_mistakes, " in raised.value.problem
    from mlflow.tracking import MlflowClient

    from lincls.tracking.record_rows import client_curve_names

    listed = raised.value.problem.rpartition("curves: ")[2].split(", ")
    run_ids = list(study.selection.runs["run_id"])  # the same names through MLflow's client
    assert sorted(client_curve_names(MlflowClient(f"sqlite:///{db}"), run_ids)) == listed


@pytest.mark.parametrize("multirun", [[], ["-m"]])
@pytest.mark.parametrize(
    "grid", ["hydra.sweeper.params={seed:'0,1'}", "hydra.sweeper.params.seed=0"]
)
def test_a_sweeper_grid_key_outside_a_named_study_is_one_line(grid, multirun, work, tmp_path):
    home = tmp_path / "home"
    done = cli("run", *multirun, grid, *SMALL, cwd=work, env={"LINCLS_HOME": str(home)},
                  capture_output=True)  # fmt: skip
    assert refused(done, "hydra.sweeper.params.seed: ") == (
        "error: hydra.sweeper.params.seed: is not a key of hydra.sweeper.params; sweep it on the "
        "command line (-m seed=a,b), or add it to the grid (+hydra.sweeper.params.seed=a,b)"
    )
    assert not home.exists() and os.listdir(work) == []


def test_a_folder_store_passes_where_mlflow_is_told_to_allow_it(monkeypatch):
    from lincls.tracking.store import check_uri

    with pytest.raises(LinclsInputError):
        check_uri("file:///tmp/mlruns")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    check_uri("file:///tmp/mlruns")
