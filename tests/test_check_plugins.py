"""``lincls check`` referees plugins' learners and bounds, and every reproducer it prints replays.

The plugins are installed as a user installs them, into a temporary folder found through its
entry points: the example package (``examples/lincls-example``: the normalized perceptron, its
bound and the bound halved, wrong on purpose), and a package of wrong bounds of built-in learners
written here (Novikoff halved for the perceptron without a bias, which needs a separator through
the origin; Winnow2 halved, which needs the disjunction as its certificate; PA-I × 0.8; the
second-order bound without its log term). A violation's printed
``lincls run`` command is run as printed and must log the same mistakes and bound value.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import runs_of
from test_plugins import NAME, RIGHT, WRONG, install_example

WRONG_BOUNDS = '''
"""Bounds of built-in learners, halved: wrong on purpose (a test of lincls check)."""
import math

from lincls.bounds import REGISTRY
from lincls.learners import PassiveAggressive, Perceptron, Winnow
from lincls.learners.second_order import SecondOrderPerceptron
from lincls.plugins import Bound, register_bound


def _wrong(name, learner, suffix, change):
    spec = next(s for s in REGISTRY if s.name == name)

    def value(facts):
        found = spec.value(facts)
        return change(getattr(found, "value", found), getattr(found, "details", {}))

    register_bound(Bound(
        f"{name}_{suffix}", learner, theorem=f"none: {name} {suffix}, wrong on purpose",
        rule=f"the rule of {name}", value=value, check=spec.check, status="not covered",
    ))


def _no_log(value, details):
    # (D + sqrt(spread * ln det))/gamma without its log: (D + sqrt(spread))/gamma
    gamma, deficit, log_det = details["gamma"], details["deficit"], details["log_det"]
    if log_det <= 0.0:
        return value
    return (deficit + (value * gamma - deficit) / math.sqrt(log_det)) / gamma


def register():
    _wrong("novikoff", Perceptron, "halved", lambda value, details: value / 2.0)
    _wrong("winnow2", Winnow, "halved", lambda value, details: value / 2.0)
    _wrong("pa1", PassiveAggressive, "scaled", lambda value, details: 0.8 * value)
    _wrong("second_order", SecondOrderPerceptron, "no_log", _no_log)
'''


@pytest.fixture(scope="module")
def example_site(tmp_path_factory) -> Path:
    """The example package installed into a temporary folder (its PYTHONPATH)."""
    target = tmp_path_factory.mktemp("site")
    install_example(target, tmp_path_factory.mktemp("build"))
    return target


def plugin_site(site: Path, module: str, source: str) -> Path:
    """``site`` holding the module ``module`` (its ``source``) and a dist-info naming its
    ``register`` as a ``lincls.plugins`` entry point: a package as installed, for PYTHONPATH."""
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    name = module.replace("_", "-")
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[lincls.plugins]\n{module} = {module}:register\n")
    return site


@pytest.fixture(scope="module")
def wrong_site(tmp_path_factory) -> Path:
    """The wrong bounds' package, installed in a temporary folder."""
    return plugin_site(tmp_path_factory.mktemp("wrong"), "wrong_bounds", WRONG_BOUNDS)


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


def _violation(printed: str, bound: str) -> tuple[str, str, list[str]]:
    """The mistakes and bound value printed for ``bound``'s violation, and its replay command."""
    found = re.search(rf"^{bound}: (\S+) mistakes > bound (\S+) on .*?\n(?:  .*\n)*?"
                      r"  replay:   lincls (run .*)$", printed, re.M)  # fmt: skip
    assert found, printed
    return found[1], found[2], shlex.split(found[3])


def _replays(printed: str, bound: str, site: Path, cwd: Path) -> None:
    """Run ``bound``'s printed replay as printed: its one run logs the same violation."""
    mistakes, value, replay = _violation(printed, bound)
    done = _run(replay, site, cwd)
    assert done.returncode == 0, done.stderr
    (run,) = runs_of(f"sqlite:///{cwd / 'home' / 'mlflow.db'}")
    metrics = run.data.metrics
    assert (f"{metrics['mistakes']:g}", f"{metrics[f'bound.{bound}']:.6g}") == (mistakes, value)
    assert metrics["mistakes"] > metrics[f"bound.{bound}"]


@pytest.mark.slow
def test_check_catches_a_plugins_wrong_bound_with_defaults_and_its_replay_reproduces(
    example_site, tmp_path
):
    started = time.perf_counter()
    done = _run(["check", NAME], example_site, tmp_path)
    assert time.perf_counter() - started < 60, done.stdout
    assert done.returncode == 1, done.stdout + done.stderr
    summary = re.search(r"^lincls check \S+: \d+ instances and (\d+) searches", done.stdout, re.M)
    assert summary and int(summary[1]) == 2, done.stdout  # both plugin bounds searched
    assert re.search(rf"^\s+{RIGHT}\s+largest mistakes / bound\s+(0\.\d+|1\.0000)\s", done.stdout,
                     re.M), done.stdout  # fmt: skip
    assert f"\n{WRONG}: " in done.stdout and f"\n{RIGHT}: " not in done.stdout
    _replays(done.stdout, WRONG, example_site, tmp_path)


@pytest.mark.slow
def test_check_searches_a_named_plugin_bound_and_passes_the_right_one(example_site, tmp_path):
    done = _run(["check", NAME, RIGHT, "--instances", "10", "--seconds", "2"], example_site,
                tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "and 1 search in" in done.stdout and "VIOLATED" not in done.stdout
    assert re.search(rf"^\s+{RIGHT}\s+largest mistakes / bound", done.stdout, re.M)
    assert WRONG not in done.stdout
    refused = _run(["check", NAME, "no_such_bound"], example_site, tmp_path)
    assert refused.returncode == 2 and refused.stderr.startswith("error: bound: one of ")
    assert RIGHT in refused.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "arguments, bound",
    [(["perceptron", "learner.bias=none"], "novikoff_halved"), (["winnow"], "winnow2_halved")],
    ids=["homogeneous", "winnow"],
)
def test_a_wrong_bound_needing_its_certificate_replays_as_printed(
    arguments, bound, wrong_site, tmp_path
):
    done = _run(["check", arguments[0], bound, *arguments[1:]], wrong_site, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    _replays(done.stdout, bound, wrong_site, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(
    "learner, bound",
    [("passive_aggressive", "pa1_scaled"), ("second_order_perceptron", "second_order_no_log")],
    ids=["pa1", "second_order"],
)
def test_check_catches_a_subtly_wrong_bound_with_defaults_within_a_minute(
    learner, bound, wrong_site, tmp_path
):
    """With every option at its default and no bound named, a bound a fifth too small (PA-I)
    or missing its log-determinant factor (the second-order perceptron's) is caught, and its
    replay logs the same violation."""
    started = time.perf_counter()
    done = _run(["check", learner], wrong_site, tmp_path)
    assert time.perf_counter() - started < 60, done.stdout
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"\n{bound}: " in done.stdout
    _replays(done.stdout, bound, wrong_site, tmp_path)
