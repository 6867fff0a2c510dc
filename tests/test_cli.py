"""The ``lincls`` command's edges: its help and version, ``lincls run --help`` without Hydra,
one ``--store`` option for run, report and ui, ``_schema`` nodes that are no option, a run's
line, an ad-hoc sweep's own study, and ``lincls ui`` stopping on a signal."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from clusters import free_port, wait_until
from conftest import ROOT, runs_of
from hydra.core.config_store import ConfigStore

import lincls
from lincls.errors import LinclsInputError
from lincls.experiments import cli, run
from lincls.experiments.arguments import group_options, run_help, store_uri, with_store

TINY = ["dataset.n=40", "dataset.d=2", "dataset.n_test=10", "certificates.svm=false", "passes=2"]
USAGE = cli.usage()  # the commands of cli.COMMANDS, each with its own --help


def lincls_command(args: list[str], cwd: Path, env: dict | None = None, timeout: float = 300):
    """``lincls …`` in a subprocess (the installed script, else its module)."""
    script = Path(sys.executable).with_name("lincls")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "lincls.experiments.cli"]
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([*command, *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


def _home(tmp_path: Path) -> dict[str, str]:
    """An environment whose default store is ``<tmp_path>/mlflow.db``."""
    os.environ.pop("MLFLOW_TRACKING_URI", None)  # the child's copy is built from os.environ
    return {"LINCLS_HOME": str(tmp_path)}


def test_version_and_help_name_the_commands(tmp_path):
    done = lincls_command(["--version"], tmp_path)
    assert (done.returncode, done.stdout) == (0, f"lincls {lincls.__version__}\n")
    done = lincls_command(["--help"], tmp_path)
    assert done.returncode == 0 and done.stdout.splitlines()[0] == USAGE
    assert {"run", "report", "ui"} <= set(re.match(r"usage: lincls \{(.*?)\}", USAGE)[1].split(","))
    assert "lincls run -m experiment=bound_verification" in done.stdout
    assert "lincls report bound_verification" in done.stdout and "lincls ui" in done.stdout
    bare = lincls_command([], tmp_path)
    assert bare.returncode == 2 and bare.stdout.splitlines()[0] == USAGE
    wrong = lincls_command(["nosuch"], tmp_path)
    assert wrong.returncode == 2
    commands = ", ".join(cli.COMMANDS)
    assert wrong.stderr == f"error: command: must be one of {commands}, got 'nosuch'\n"


def test_run_help_is_lincls_s_own_and_imports_neither_hydra_mlflow_nor_numba(tmp_path, monkeypatch):
    env = _home(tmp_path)
    done = lincls_command(["run", "--help"], tmp_path, env)
    assert done.returncode == 0 and done.stderr == ""
    text = done.stdout
    assert text.splitlines()[0] == "usage: lincls run [--store URI] [-m] [key=value ...]"
    assert "_schema" not in text and "powered by Hydra" not in text
    for group in ("learner", "dataset"):
        options = group_options(group)
        assert len(options) >= 19 and "perceptron" in group_options("learner")
        block = re.search(rf"^  {group}: (.*(?:\n    .*)*)", text, re.M)[1]
        listed = " ".join(block.split())
        assert listed == ", ".join(options)  # every option once, in order, nothing else
    for experiment in group_options("experiment"):
        assert re.search(rf"^  {experiment} +\S", text, re.M), experiment
    for says in ("-m, --multirun", "experiment=NAME", "--store URI", "--cfg job", "--info",
                 "--hydra-help", "$MLFLOW_TRACKING_URI", "$LINCLS_HOME/mlflow.db",
                 "./results/mlflow.db", "lincls report STUDY", "lincls ui"):  # fmt: skip
        assert says in text, says
    assert f"(here and now: sqlite:///{tmp_path / 'mlflow.db'})" in text
    # the help is answered before anything heavy is imported
    heavy = "('hydra', 'mlflow', 'numba', 'sklearn')"
    probe = ("import sys; from lincls.experiments import cli; cli.main(['run', '-h']); "
             f"print(sorted(m for m in {heavy} if m in sys.modules))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env={**os.environ, **env}, cwd=tmp_path, timeout=60)  # fmt: skip
    assert loaded.stdout.splitlines()[-1] == "[]", loaded.stderr
    monkeypatch.setenv("LINCLS_HOME", str(tmp_path))
    assert loaded.stdout.rstrip("\n").rsplit("\n", 1)[0] == run_help()


def test_the_module_s_help_names_it_and_hydra_s_config_stays_reachable(tmp_path):
    done = subprocess.run([sys.executable, "-m", "lincls.experiments.run", "--help"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m lincls.experiments.run [--store URI] [-m]")
    config = lincls_command(["run", "learner=winnow", "--cfg", "job"], tmp_path)
    assert config.returncode == 0, config.stderr[-2000:]
    assert "learner:\n  name: winnow\n" in config.stdout
    assert not (tmp_path / "results").exists()  # nothing run, nothing stored


def test_store_is_a_uri_or_a_db_file_and_becomes_a_quoted_override(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert store_uri("runs.db") == f"sqlite:///{tmp_path / 'runs.db'}"
    assert store_uri("postgresql://u@h/db") == "postgresql://u@h/db"
    assert with_store(["-m", "seed=0,1", "--store", "a,b.db"]) == [
        "-m", f"tracking.uri='sqlite:///{tmp_path / 'a,b.db'}'", "seed=0,1",
    ]  # fmt: skip
    # Hydra reads its overrides as one run of arguments: the store joins them, not an option
    assert with_store(["-m", "experiment=x", "--config-dir", "d", "--store=sqlite:///s.db"]) == [
        "-m", "tracking.uri='sqlite:///s.db'", "experiment=x", "--config-dir", "d",
    ]  # fmt: skip
    assert with_store(["--cfg", "job", "--store", "x.db"])[-1] == (
        f"tracking.uri='sqlite:///{tmp_path / 'x.db'}'"
    )
    with pytest.raises(LinclsInputError, match=r"^--store: must be a tracking URI .* got 'x.txt'"):
        store_uri("x.txt")
    with pytest.raises(LinclsInputError, match=r"^--store: needs a tracking URI"):
        with_store(["seed=1", "--store"])


def test_a_run_s_line_ends_with_its_ratio_name_and_ui_page_and_lands_in_its_store(tmp_path, store):
    db = Path(store[len("sqlite:///") :])
    home = tmp_path / "home"  # the default store is elsewhere: the line says which store
    done = lincls_command(["run", *TINY, "--store", str(db)], tmp_path, _home(home))
    assert done.returncode == 0, done.stderr[-3000:]
    line = done.stdout.strip().splitlines()[-1]
    shape = (r"run (?P<id>[0-9a-f]{32}): mistakes=(?P<m>\d+), bound\.tightest=(?P<b>[\d.]+), "
             r"train_accuracy=[\d.]+, test_accuracy=[\d.]+, ratio=(?P<r>[\d.]+); "
             r"name '(?P<name>[^']+)'; see: lincls ui --store (?P<store>\S+), then "
             r"http://127\.0\.0\.1:5000/#/experiments/(?P<exp>\d+)/runs/(?P=id)")  # fmt: skip
    found = re.fullmatch(shape, line)
    assert found, line
    assert found["store"] == store
    assert float(found["r"]) == pytest.approx(int(found["m"]) / float(found["b"]), rel=1e-3)
    (stored,) = runs_of(store)
    assert stored.info.run_id == found["id"] and stored.info.run_name == found["name"]
    assert stored.info.experiment_id == found["exp"]
    assert stored.data.metrics["bound_ratio.tightest"] == pytest.approx(float(found["r"]), 1e-3)
    assert not (home / "mlflow.db").exists()  # nothing in the default store


def test_report_and_ui_take_store_and_name_their_command(tmp_path, store):
    db = str(Path(store[len("sqlite:///") :]))
    helped = lincls_command(["report", "--help"], tmp_path)
    assert helped.stdout.startswith("usage: lincls report [-h] [--store URI]")
    assert "--tracking-uri" not in helped.stdout
    by_path = lincls_command(["report", "--store", db, "nosuch"], tmp_path)
    by_old_name = lincls_command(["report", "--tracking-uri", store, "nosuch"], tmp_path)
    assert by_path.returncode == by_old_name.returncode == 2
    assert (
        by_path.stderr
        == by_old_name.stderr
        == (f"error: experiment: no experiment named 'lincls' in {store}\n")
    )
    bad = lincls_command(["report", "--store", "notes.txt"], tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("error: --store: must be a tracking URI")
    ui = lincls_command(["ui", "--help"], tmp_path)
    assert ui.stdout.startswith("usage: lincls ui [-h] [--store URI]")


def _schemas() -> list[tuple[str, str]]:
    """(group, name) of every ``_schema`` node in Hydra's ConfigStore groups."""
    store = ConfigStore.instance()
    return [
        (group, name.removesuffix(".yaml"))
        for group in ("learner", "dataset", "tracking")
        for name in store.list(group)
        if name.removesuffix(".yaml").endswith("_schema")
    ]


def test_no_schema_node_is_an_option_of_its_group_in_a_run_or_a_sweep(capsys):
    schemas = _schemas()
    assert len(schemas) == 1 + len(group_options("learner")) + len(group_options("dataset"))
    for group, name in schemas:
        valid = {"dataset": "separable,", "learner": "perceptron,"}.get(group, "")
        for arguments in ([f"{group}={name}"], ["-m", f"{group}={valid}{name}"]):
            with pytest.raises(SystemExit) as stopped:
                run.check_arguments(arguments)
            assert stopped.value.code == 2
            said = capsys.readouterr().err
            if group == "tracking":
                expected = (f"error: tracking: has no options to choose, got '{name}'; set its "
                            "keys instead (tracking.<key>=…)\n")  # fmt: skip
            else:
                expected = (f"error: {group}: must be one of {', '.join(group_options(group))}, "
                            f"got '{name}'\n")  # fmt: skip
            assert said == expected, arguments


def test_a_study_s_grid_naming_a_schema_is_refused_before_anything_is_stored(tmp_path):
    folder = tmp_path / "extra" / "experiment"
    folder.mkdir(parents=True)
    (folder / "schemas.yaml").write_text(
        "# @package _global_\nstudy: schemas\nhydra:\n  sweeper:\n    params:\n"
        "      dataset: separable,separable_schema\n"
    )
    done = lincls_command(["run", "-m", "experiment=schemas", "--config-dir",
                           str(tmp_path / "extra"), "--store", "new.db"], tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        f"error: dataset: must be one of {', '.join(group_options('dataset'))}, "
        "got 'separable_schema'\n"
    )
    assert sorted(os.listdir(tmp_path)) == ["extra"]


@pytest.mark.slow
def test_each_ad_hoc_sweep_is_its_own_study_and_the_same_command_resumes_its_own(tmp_path, store):
    def sweep(seeds: str, *more: str) -> subprocess.CompletedProcess:
        args = ["run", "-m", f"seed={seeds}", *TINY, "--store", store, *more,
                f"hydra.sweep.dir={tmp_path / 'sweeps' / str(len(more))}-{seeds[0]}"]  # fmt: skip
        done = lincls_command(args, tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        return done

    first, second = sweep("0,1"), sweep("2,3")
    studies = []
    for done in (first, second):
        start = done.stderr.splitlines()[0]
        found = re.match(r"\[lincls\] sweep (adhoc-seed-[0-9a-f]{6}): 2 jobs, .*; its report: "
                         r"lincls report (\S+) --store (\S+)$", start)  # fmt: skip
        assert found and found[1] == found[2] and found[3] == store, start  # not the default store
        studies.append(found[1])
    assert studies[0] != studies[1]
    by_study: dict[str, list[str]] = {}
    for stored in runs_of(store):
        tags = stored.data.tags
        by_study.setdefault(tags["lincls.study"], []).append(tags["lincls.role"])
    assert {s: sorted(r) for s, r in by_study.items()} == {
        s: ["run", "run", "sweep"] for s in studies
    }
    again = sweep("0,1", "tracking.skip_finished=true")  # the same command: the same study
    assert f"[lincls] sweep {studies[0]}: 2 jobs: 0 finished, 0 failed, 2 skipped" in again.stderr


def _answers(port: int) -> bool:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as response:
        return response.status == 200


@pytest.mark.slow
@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_lincls_ui_stops_within_5_s_of_a_signal_to_its_process(tmp_path, store, signal_name):
    port = free_port()
    log = tmp_path / "ui.log"
    script = Path(sys.executable).with_name("lincls")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "lincls.experiments.cli"]
    with log.open("w") as out:
        server = subprocess.Popen(
            [*command, "ui", "--store", store, "--port", str(port)], cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group: what is left of it can be cleaned up
        )  # fmt: skip
    try:
        wait_until(lambda: _answers(port), "lincls ui", 120, (server,), log)
        server.send_signal(getattr(signal, signal_name))  # its process alone, as a notebook does
        server.wait(5)  # raises TimeoutExpired after 5 s
        said = log.read_text()
        assert "SIGKILL" not in said and "Shutting down: Master" in said, said[-2000:]
        assert server.returncode == 0
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


HALTING_ARBITER = """
import sys
from gunicorn.errors import HaltServer
from lincls.experiments import ui_server

print("halting", flush=True)
if sys.argv[1] == "worker failed to boot":
    try:
        raise HaltServer("Worker failed to boot.", 3)
    except HaltServer:
        ui_server.on_exit(None)
try:
    raise StopIteration  # gunicorn's arbiter halts on SIGTERM in this handler
except StopIteration:
    ui_server.on_exit(None)
print("torn down")
"""


@pytest.mark.parametrize(("how", "status"), [("stopped", 0), ("worker failed to boot", 3)])
def test_the_ui_arbiter_exits_at_once_with_gunicorns_status(how, status):
    """The arbiter skips its interpreter's teardown (~1.9 s of CPU, past 5 s on a loaded machine)
    and keeps the exit status gunicorn gives a halt."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", HALTING_ARBITER, how], capture_output=True,
                          text=True, timeout=60, env=env)  # fmt: skip
    assert (done.returncode, done.stdout) == (status, "halting\n"), done.stderr


BOOTING_WORKER = """
import os, queue, signal, sys, time
from types import SimpleNamespace
from lincls.experiments import ui_server

arbiter = SimpleNamespace(SIG_QUEUE=queue.SimpleQueue())
if sys.argv[1] == "queued":  # the stop came while the worker still held the arbiter's handler
    arbiter.SIG_QUEUE.put_nowait(signal.SIGQUIT)
ui_server.post_fork(arbiter, SimpleNamespace(ppid=os.getppid()))
print("booting", flush=True)
os.kill(os.getpid(), signal.SIGTERM)  # a stop while it boots, before uvicorn sets its handlers
time.sleep(30)
print("served on")
"""


@pytest.mark.parametrize("when", ["queued", "while booting"])
def test_a_ui_worker_stopped_before_it_serves_ends_at_once(when):
    """A stop the arbiter sent a worker before the worker set its own handlers is not lost (it
    was: the arbiter then waited 30 s and killed it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", BOOTING_WORKER, when], capture_output=True,
                          text=True, timeout=20, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ("" if when == "queued" else "booting\n")
