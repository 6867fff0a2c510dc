"""Opening a store: a database that is not this MLflow's store is refused in one line and left as
it was, and a store that cannot be reached costs at most the retry budget, opening included."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import time
from pathlib import Path

import pytest
from clusters import free_port
from conftest import run_cli, runs_of

from lincls import tracking
from lincls.errors import LinclsInputError
from lincls.tracking.schema import schema_head
from lincls.tracking.store import StoreError

SMALL = ["dataset.n=200", "dataset.d=5", "dataset.n_test=50", "certificates.svm=false"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _cli(tmp_path: Path, uri: str, extra: list[str] = ()) -> tuple[object, float]:
    started = time.monotonic()
    done = run_cli([*SMALL, f"tracking.uri={uri}", f"hydra.run.dir={tmp_path / 'run'}", *extra],
                   cwd=tmp_path)  # fmt: skip
    return done, time.monotonic() - started


def _foreign(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("create table foo(x)")
        db.execute("insert into foo values (1)")
    return path


def _text(path: Path) -> Path:
    path.write_text("a,b\n1,2\n")
    return path


def _directory(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.parametrize(
    ("make", "says"),
    [(_foreign, "is not an MLflow store (its tables: foo); refused"),
     (_text, "is not a SQLite database; refused"),
     (_directory, "is a directory, not a SQLite file")],
    ids=["foreign sqlite", "text file", "directory"],
)  # fmt: skip
def test_a_file_that_is_no_mlflow_store_is_refused_in_one_line_and_left_untouched(
    make, says, tmp_path
):
    target = make(tmp_path / "theirs.db")
    before = None if target.is_dir() else target.read_bytes()
    done, _ = _cli(tmp_path, f"sqlite:///{target}", ["tracking.retry_seconds=3"])
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [f"error: tracking.uri: {target} {says}" + (
        ", so as not to write into it: give a new file or an MLflow store" if make is _foreign
        else " (lincls writes an MLflow store or a new file): give another file"
        if make is _text else "")]  # fmt: skip
    if before is None:
        assert list(target.iterdir()) == []
    else:
        assert target.read_bytes() == before  # same bytes: not a table added, not a page touched
    assert not (tmp_path / "mlartifacts").exists()


def test_a_foreign_file_is_refused_by_a_sweep_too_and_untouched(tmp_path):
    target = _foreign(tmp_path / "theirs.db")
    before = _digest(target)
    done = run_cli(["-m", "seed=0,1", *SMALL, f"tracking.uri=sqlite:///{target}",
                    f"hydra.sweep.dir={tmp_path / 'sweep'}"], cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: tracking.uri: {target} is not an ")
    assert _digest(target) == before


def test_an_empty_file_and_an_empty_sqlite_database_become_stores(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()
    blank = tmp_path / "blank.db"
    sqlite3.connect(blank).execute("vacuum").connection.close()
    for path in (empty, blank):
        done, _ = _cli(tmp_path, f"sqlite:///{path}")
        assert done.returncode == 0, done.stderr[-3000:]
        assert [r.info.status for r in runs_of(f"sqlite:///{path}")] == ["FINISHED"]


def _with_revision(store: str, revision: str) -> Path:
    path = Path(store[len("sqlite:///") :])
    with sqlite3.connect(path) as db:
        db.execute("update alembic_version set version_num = ?", (revision,))
    return path


def _older_revision() -> str:
    from alembic.script import ScriptDirectory
    from mlflow.store.db.utils import _get_alembic_config

    return (
        ScriptDirectory.from_config(_get_alembic_config(""))
        .get_revision(schema_head())
        .down_revision
    )


def test_a_store_of_an_unknown_schema_revision_names_both_and_what_to_do(store, tmp_path):
    import mlflow

    path = _with_revision(store, "0123456789ab")
    before = _digest(path)
    done, _ = _cli(tmp_path, store)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [
        f"error: tracking.uri: the store {path} has an unknown MLflow schema revision "
        f"0123456789ab and MLflow {mlflow.__version__} needs {schema_head()}: it was made by "
        "another (likely newer) MLflow: use that version, or a new store"
    ]
    assert _digest(path) == before


def test_a_store_of_an_older_schema_revision_says_to_upgrade_it(store):
    older = _older_revision()
    path = _with_revision(store, older)
    before = _digest(path)
    with pytest.raises(LinclsInputError) as caught:
        tracking.open_experiment(store, retry_seconds=3)
    message = str(caught.value)
    assert message.startswith(f"tracking.uri: the store {path} has an older MLflow schema "
                              f"revision {older} and MLflow ")  # fmt: skip
    assert message.endswith(f"needs {schema_head()}: back it up, then run `mlflow db upgrade "
                            f"{store}`")  # fmt: skip
    assert _digest(path) == before


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> float:
    """The CLI's time to a refusal that costs no budget (start-up, data, the URI's check)."""
    done, seconds = _cli(tmp_path_factory.mktemp("baseline"), "garbage://x")
    assert done.returncode == 2
    return seconds


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["postgresql", "directory", "text file"])
def test_an_unreachable_or_unusable_store_ends_within_the_budget_with_one_line(
    kind, baseline, tmp_path
):
    """The issue's measures: 118–176 s and a 181–196-line traceback; now the budget (3 s) and
    the CLI's start-up."""
    pytest.importorskip("psycopg2" if kind == "postgresql" else "sqlite3")
    uri = {
        "postgresql": f"postgresql://u:p@127.0.0.1:{free_port()}/x",
        "directory": f"sqlite:///{_directory(tmp_path / 'a_dir')}",
        "text file": f"sqlite:///{_text(tmp_path / 'notes.txt')}",
    }[kind]
    done, seconds = _cli(tmp_path, uri, ["tracking.retry_seconds=3"])
    assert seconds - baseline <= 3 + 5, (seconds, baseline)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: tracking.uri: "), done.stderr[-3000:]
    if kind == "postgresql":
        assert done.returncode == 1
        assert lines[0].startswith("error: tracking.uri: the database postgresql://u:***@127.0.0.1")
        assert "did not answer for " in lines[0] and "p@" not in lines[0]
    else:
        assert done.returncode == 2


def test_opening_a_database_server_that_does_not_answer_costs_the_budget():
    uri = f"postgresql://u:p@127.0.0.1:{free_port()}/x"
    pytest.importorskip("psycopg2")
    started = time.monotonic()
    with pytest.raises(StoreError) as caught:
        tracking.open_experiment(uri, retry_seconds=3)
    seconds = time.monotonic() - started
    assert 1.5 <= seconds <= 3.0 + 1.0  # retried with back-off, not past the budget
    assert "\n" not in str(caught.value)


def test_a_store_file_copied_from_this_mlflow_opens(store, tmp_path):
    copy = tmp_path / "copy.db"
    shutil.copyfile(store[len("sqlite:///") :], copy)
    client, experiment_id = tracking.open_experiment(f"sqlite:///{copy}", "copied")
    assert client.get_experiment(experiment_id).name == "copied"


@pytest.mark.slow
def test_a_postgresql_store_opens_and_one_of_another_revision_is_refused():
    psycopg = pytest.importorskip("psycopg", reason="the `postgres` extra is not installed")
    from clusters import Unavailable
    from clusters.postgres import postgres_server

    try:
        server = postgres_server()
        db = server.__enter__()
    except Unavailable as exc:
        pytest.skip(str(exc))
    try:
        _, experiment_id = tracking.open_experiment(db, "pg", retry_seconds=5)
        tracking._OPENED.clear()
        assert tracking.open_experiment(db, "pg", retry_seconds=5)[1] == experiment_id
        with psycopg.connect(db) as connection:
            connection.execute("update alembic_version set version_num = '0123456789ab'")
        tracking._OPENED.clear()
        with pytest.raises(LinclsInputError) as caught:
            tracking.open_experiment(db, "pg", retry_seconds=5)
        assert "unknown MLflow schema revision 0123456789ab" in str(caught.value)
    finally:
        tracking._OPENED.clear()
        server.__exit__(None, None, None)


def test_the_schema_graph_read_as_text_is_alembics():
    """``schema_head`` reads MLflow's migration files as text (milliseconds, no MLflow import);
    alembic's script directory must see the same revisions, parents and head."""
    from alembic.script import ScriptDirectory
    from mlflow.store.db.utils import _get_alembic_config, _get_latest_schema_revision

    from lincls.tracking.schema import _migrations

    script = ScriptDirectory.from_config(_get_alembic_config(""))
    graph = {rev.revision: tuple(rev._all_down_revisions) for rev in script.walk_revisions()}
    assert len(graph) > 60
    assert _migrations() == graph
    assert schema_head() == _get_latest_schema_revision()


def _dump(db: Path) -> dict:
    """A SQLite store's schema and every row, the experiments' times left out."""
    with sqlite3.connect(db) as connection:
        schema = sorted(connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        rows = {}
        for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'"):
            cursor = connection.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            rows[table] = sorted(
                tuple(v for n, v in zip(names, row, strict=True) if not n.endswith("_time"))
                for row in cursor
            )
    return {"schema": schema, "rows": rows}


def test_a_new_store_copied_from_the_template_is_the_store_mlflow_makes(tmp_path, monkeypatch):
    """MLflow makes a store by running every migration (seconds); lincls keeps the first one it
    made in the user's cache and copies it, its Default experiment placed as MLflow places it."""
    from mlflow.tracking._tracking_service import utils

    from lincls.tracking.creation import _template, create

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    made = tmp_path / "made.db"
    create(made)  # by MLflow: every migration; the result kept as the template
    template = _template()
    assert template.is_file() and template.parent == tmp_path / "cache" / "lincls"

    def no_migrations(*args, **kwargs):
        raise AssertionError("MLflow made the store again")

    monkeypatch.setattr(utils, "_get_sqlalchemy_store", no_migrations)
    copied = tmp_path / "copied.db"
    create(copied)
    assert _dump(copied) == _dump(made)
    with sqlite3.connect(copied) as connection:
        (location,) = connection.execute(
            "SELECT artifact_location FROM experiments WHERE experiment_id = 0"
        ).fetchone()
    assert location == f"{tmp_path / 'mlruns'}/0"


def test_a_new_store_is_made_with_lincls_s_experiment_and_opened_without_mlflow(
    tmp_path, monkeypatch
):
    """A new store is made with the experiment its first command writes to, described; for
    lincls's own, the template holds it too, so a copy is the store MLflow and lincls make and
    the command that makes it never imports MLflow."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore
    from mlflow.tracking._tracking_service import utils

    from lincls.tracking import DEFAULT_EXPERIMENT, _new_experiment
    from lincls.tracking.creation import _template, create

    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.chdir(tmp_path)
    made = tmp_path / "made.db"
    create(made, _new_experiment(f"sqlite:///{made}", DEFAULT_EXPERIMENT))  # MLflow makes both
    template = _template(_new_experiment(f"sqlite:///{made}", DEFAULT_EXPERIMENT))
    assert template.is_file() and template != _template()

    def no_mlflow(*args, **kwargs):
        raise AssertionError("MLflow made the store or the experiment again")

    monkeypatch.setattr(utils, "_get_sqlalchemy_store", no_mlflow)
    monkeypatch.setattr(SqlAlchemyStore, "create_experiment", no_mlflow)
    copied = tmp_path / "copied.db"
    create(copied, _new_experiment(f"sqlite:///{copied}", DEFAULT_EXPERIMENT))
    assert _dump(copied) == _dump(made)
    with sqlite3.connect(copied) as connection:
        rows = connection.execute("SELECT name, artifact_location FROM experiments").fetchall()
    assert sorted(rows) == [("Default", f"{tmp_path / 'mlruns'}/0"),
                            ("lincls", (tmp_path / "mlartifacts").as_uri())]  # fmt: skip

    # the command a user types, into a new store: its run written, MLflow never imported
    fresh = tmp_path / "fresh" / "mlflow.db"
    fresh.parent.mkdir()
    done = run_cli([*SMALL, f"tracking.uri=sqlite:///{fresh}"],
                   cwd=fresh.parent, env={"XDG_CACHE_HOME": str(cache),
                                          "PYTHONPROFILEIMPORTTIME": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}  # fmt: skip
    assert "lincls.tracking" in imported and "mlflow" not in imported
    assert [(r.info.status, r.info.experiment_id) for r in runs_of(f"sqlite:///{fresh}")] == [
        ("FINISHED", "1")
    ]
