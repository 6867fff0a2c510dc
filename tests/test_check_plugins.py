"""``lincls check`` referees plugins' learners and bounds.

The plugin is installed as a user installs it, into a temporary folder found through its entry
point: the example package (``examples/lincls-example``: the normalized perceptron, its bound and
the bound halved, wrong on purpose).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_plugins import NAME, RIGHT, WRONG, install_example


@pytest.fixture(scope="module")
def example_site(tmp_path_factory) -> Path:
    """The example package installed into a temporary folder (its PYTHONPATH)."""
    target = tmp_path_factory.mktemp("site")
    install_example(target, tmp_path_factory.mktemp("build"))
    return target


def _run(words: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``lincls …`` (the command beside this interpreter) in ``cwd``, ``site`` on its path, its
    store and temporary folders in ``cwd``."""
    command = shutil.which("lincls", path=str(Path(sys.executable).parent))
    (cwd / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(site), "LINCLS_HOME": str(cwd / "home"),
           "TMPDIR": str(cwd / "tmp")}  # fmt: skip
    env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run([command, *words], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


@pytest.mark.slow
def test_check_catches_a_plugins_wrong_bound_with_defaults(example_site, tmp_path):
    started = time.perf_counter()
    done = _run(["check", NAME], example_site, tmp_path)
    assert time.perf_counter() - started < 60, done.stdout
    assert done.returncode == 1, done.stdout + done.stderr
    summary = re.search(r"^lincls check \S+: \d+ instances and (\d+) searches", done.stdout, re.M)
    assert summary and int(summary[1]) == 2, done.stdout  # both plugin bounds searched
    assert re.search(rf"^\s+{RIGHT}\s+largest mistakes / bound\s+(0\.\d+|1\.0000)\s", done.stdout,
                     re.M), done.stdout  # fmt: skip
    assert f"\n{WRONG}: " in done.stdout and f"\n{RIGHT}: " not in done.stdout


@pytest.mark.slow
def test_check_searches_a_named_plugin_bound_and_passes_the_right_one(example_site, tmp_path):
    done = _run(["check", NAME, RIGHT, "--instances", "10", "--seconds", "2"], example_site,
                tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "and 1 searches" in done.stdout and "VIOLATED" not in done.stdout
    assert re.search(rf"^\s+{RIGHT}\s+largest mistakes / bound", done.stdout, re.M)
    assert WRONG not in done.stdout
    refused = _run(["check", NAME, "no_such_bound"], example_site, tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith("error: bound: one of ")
    assert RIGHT in refused.stderr
