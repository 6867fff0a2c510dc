"""Shared fixtures: a real MLflow store (SQLite in a tmp dir) and Hydra composition of conf/."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from lincls.config import register_configs

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"

register_configs()
# Every `mlflow server` a test starts (and a `make server` it runs) inherits this: without it
# MLflow starts a job runner of ~8 huey consumers (~250 MB each) beside a server that runs no jobs.
os.environ.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
# Test files whose tests must share one xdist worker, one at a time: the cluster tests (each
# starts a cluster that takes both cores), the browser's and the wheel's (one build, one browser).
TOGETHER = ("tests/test_clusters.py", "tests/test_browser.py", "tests/test_wheel.py")


@functools.cache
def _shares_a_module_fixture(path: str) -> bool:
    """Whether the test file ``path`` makes a module-scoped fixture (a study swept, a server
    started): its tests then run on one worker, which makes the fixture once, not once each."""
    try:
        return 'scope="module"' in (ROOT / path).read_text()
    except OSError:  # a node id of another root
        return False


def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduler with each file of ``TOGETHER`` one scope, and each file with a
    module-scoped fixture, and every other test its own. xdist's ``loadgroup`` cannot do it under
    pytest 9 (it renames a test's node id, which pytest 9 derives anew), and a lock alone leaves
    the other worker idle while it waits."""
    from xdist.scheduler import LoadScopeScheduling

    class TogetherScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            together = path in TOGETHER or _shares_a_module_fixture(path)
            return path if together else nodeid

    return TogetherScheduling(config, log)


_STORE_VARIABLES = ("MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI")
_STORE_AT_START = {name: os.environ.get(name) for name in _STORE_VARIABLES}


@pytest.fixture(autouse=True)
def _store_variables_as_at_start():
    """Each test ends with MLflow's store variables as pytest started with them: MLflow's own
    in-process calls (``set_tracking_uri``, its server's handlers) write MLFLOW_TRACKING_URI into
    ``os.environ``, and a later test's sweep in the same worker then wrote to that store."""
    yield
    for name, value in _STORE_AT_START.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    tracking = sys.modules.get("mlflow.tracking._tracking_service.utils")
    if tracking is not None:  # MLflow's own in-process default store, which set_tracking_uri set
        tracking._tracking_uri = None


@pytest.fixture(scope="session")
def _migrated_store(tmp_path_factory) -> Path:
    """An empty SQLite store with MLflow's schema, made once (migrating takes seconds)."""
    from mlflow.tracking import MlflowClient

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    MlflowClient(tracking_uri=f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def store(tmp_path, _migrated_store) -> str:
    """A fresh, empty SQLite tracking store in a temporary directory (a copy of the template)."""
    shutil.copyfile(_migrated_store, tmp_path / "mlflow.db")
    return f"sqlite:///{tmp_path / 'mlflow.db'}"


@contextlib.contextmanager
def sweep_master(overrides: list[str]) -> Iterator[tuple[Any, Any]]:
    """(Hydra, the master config of a sweep with ``overrides``) as Hydra's multirun composes it,
    while Hydra is initialised with ``conf/``."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        hydra = GlobalHydra.instance().hydra
        master = hydra.compose_config(
            "config", list(overrides), run_mode=RunMode.MULTIRUN, with_log_configuration=False
        )
        yield hydra, master


def compose_config(overrides: list[str] | None = None) -> dict:
    """``conf/config.yaml`` composed with ``overrides`` and resolved to plain containers."""
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides or [])
    return OmegaConf.to_container(cfg, resolve=True)


def run_cli(args: list[str], cwd: Path, env: dict | None = None, timeout: float = 300):
    """``python -m lincls.experiments.run`` in a subprocess; returns the CompletedProcess."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "lincls.experiments.run", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def as_read(run):
    """An MLflow run with its record's values among its metrics and tags, as lincls's readers
    give them (``lincls.tracking.record``: a curve's latest point as its metric), its record's
    own tags left out; a run without a record as it is."""
    from mlflow.entities import Metric, Param, Run, RunData, RunTag

    from lincls.tracking.record import RECORD_KEYS
    from lincls.tracking.record_rows import latest_of

    metrics, tags = latest_of(run.data.tags)
    if not metrics and not tags:
        return run
    stamp = run.info.end_time or 0
    data = RunData(
        metrics=[Metric(k, v, stamp, 0) for k, v in {**metrics, **run.data.metrics}.items()],
        params=[Param(k, v) for k, v in run.data.params.items()],
        tags=[RunTag(k, v) for k, v in {**tags, **run.data.tags}.items() if k not in RECORD_KEYS],
    )
    return Run(run.info, data, run.inputs)


def runs_of(uri: str, experiment: str = "lincls"):
    """All runs of ``experiment`` in the store at ``uri``, as read (``as_read``)."""
    from mlflow.tracking import MlflowClient

    if uri.startswith("sqlite:///") and not Path(uri[len("sqlite:///") :]).exists():
        return []  # never created: nothing was logged (and querying would create it)
    client = MlflowClient(tracking_uri=uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return []
    return [as_read(run) for run in client.search_runs([exp.experiment_id], max_results=10000)]


def without_root_rights() -> list[str] | None:
    """A command prefix that drops root's right to write any directory (CAP_DAC_OVERRIDE), so a
    read-only directory is read-only to the command; [] for other users; None without setpriv."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"] if setpriv else None


@pytest.fixture
def read_only_dir(tmp_path) -> tuple[Path, list[str]]:
    """(a directory made read-only, the command prefix that makes it read-only to root too);
    skips where setpriv is missing."""
    prefix = without_root_rights()
    if prefix is None:
        pytest.skip("needs setpriv (util-linux) to drop root's rights")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    return locked, prefix
