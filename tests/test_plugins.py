"""Plugins: a learner and its bounds registered by another package (``lincls.plugins``).

In this process the example package (``examples/lincls-example``) is imported from its folder and
registered by hand; the slow tests install it into a temporary folder and find it, as any installed
package is found, through its entry point in the dist-info there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, compose_config, runs_of

from lincls import bounds, plugins, registry
from lincls.errors import LinclsInputError
from lincls.evaluation import measure

EXAMPLE = ROOT / "examples" / "lincls-example"
NAME = "normalized_perceptron"
RIGHT, WRONG = "normalized_novikoff", "normalized_novikoff_halved"


@pytest.fixture
def example():
    """The example package registered in this process; unregistered afterwards."""
    sys.path.insert(0, str(EXAMPLE))
    import lincls_example

    lincls_example.register()
    yield lincls_example
    for name in (NAME, RIGHT, WRONG):
        plugins.unregister(name)
    registry.learners()  # in step again: the registry and the bounds drop them
    bounds.plugin_bounds()
    sys.path.remove(str(EXAMPLE))


def game(margin: float, radius: float, cache: Path, d: int = 20) -> dict:
    """A run of the example learner against the orthogonal game, 3 passes."""
    return {
        "learner": {"name": NAME},
        "dataset": {"name": "orthogonal_game", "d": d, "margin": margin, "radius": radius,
                    "seed": 5},
        "passes": 3, "seed": 5, "order": "fixed", "orders": 1,
        "certificates": {"svm": True, "cache_dir": str(cache)}, "tracking": {},
    }  # fmt: skip


# --- in this process ------------------------------------------------------------------------


def test_a_registered_learner_composes_and_builds_with_the_runs_passes_and_seed(example):
    config = compose_config([f"learner={NAME}", "learner.lr=0.5", "passes=3", "seed=4"])
    assert config["learner"] == {
        "name": NAME, "stop_when_converged": True, "shuffle": False, "lr": 0.5,
    }  # fmt: skip
    learner = registry.build_learner(config["learner"], passes=3, seed=4)
    assert type(learner) is example.NormalizedPerceptron
    assert (learner.lr, learner.max_passes, learner.random_state) == (0.5, 3, 4)
    with pytest.raises(LinclsInputError, match=r"^learner\.tau: is not an option .* lr, shuffle"):
        registry.build_learner({**config["learner"], "tau": 1.0}, passes=3, seed=4)
    with pytest.raises(LinclsInputError, match=r"^learner\.lr: must be a number in \(0, inf\)"):
        registry.build_learner({**config["learner"], "lr": 0.0}, passes=3, seed=4)


def test_the_orthogonal_game_forces_floor_r_over_gamma_squared_and_breaks_the_halved_bound(
    example, tmp_path
):
    # (0.9/0.3)² computes as 9.000000000000002: the game still plays ⌊·⌋ = 9 rounds
    for margin, radius, forced in ((0.3, 0.9, 9), (0.15, 1.0, 44), (0.25, 1.0, 16)):
        outcome = measure(game(margin, radius, tmp_path, d=50))
        metrics, tags = outcome.metrics, outcome.tags
        assert metrics["mistakes"] == forced
        assert metrics[f"bound.{RIGHT}"] == pytest.approx(forced, rel=1e-9)
        assert metrics[f"bound_ratio.{RIGHT}"] <= 1.0 + 1e-9  # met exactly, never broken
        assert metrics[f"bound.{WRONG}"] == pytest.approx(forced / 2, rel=1e-9)
        assert metrics[f"bound_ratio.{WRONG}"] == pytest.approx(2.0, rel=1e-9)
        assert tags["bound_violated"] == "true"
        assert tags[f"bound_source.{RIGHT}"].startswith("derived: plugin (in-process): Novikoff")


def test_the_bounds_apply_to_their_learner_only(example, tmp_path):
    config = {**game(0.3, 0.9, tmp_path), "learner": {"name": "perceptron", "bias": "none"}}
    outcome = measure(config)
    assert outcome.metrics["mistakes"] == 9
    assert f"bound.{RIGHT}" not in outcome.metrics and f"bound.{WRONG}" not in outcome.metrics
    assert (
        f"{RIGHT}: not a NormalizedPerceptron (the rule it covers: on y·w·x ≤ 0"
        in (outcome.tags["bounds.skipped"])
    )
    assert bounds.family_of(RIGHT) == "a_priori"


def test_the_property_test_finds_the_wrong_bound_and_never_the_right_one(example, tmp_path):
    import test_bounds_every_option as every

    assert NAME in every.plugin_learners()
    broken, games, runs = set(), 0, 0
    for seed in range(400):
        config = every.random_config(seed, str(tmp_path))
        if config["learner"]["name"] != NAME:
            continue
        runs += 1
        found = {v[4] for v in every.violations_of(config)}
        assert f"bound_ratio.{RIGHT}" not in found
        if config["dataset"]["name"] == "orthogonal_game":
            games += 1
            assert f"bound_ratio.{WRONG}" in found
        broken |= found
    assert runs >= 10 and games >= 3
    assert {f"bound_ratio.{WRONG}", "bound_violated"} <= broken


def test_unregistering_removes_the_learner_option_and_bounds(example):
    assert NAME in registry.learners()
    assert [s.name for s in bounds.plugin_bounds()] == [RIGHT, WRONG]
    assert [s.name for s in bounds.REGISTRY[-2:]] == [RIGHT, WRONG]
    plugins.unregister(NAME)
    plugins.unregister(RIGHT)
    assert NAME not in registry.learners()
    assert [s.name for s in bounds.plugin_bounds()] == [WRONG]
    assert RIGHT not in {s.name for s in bounds.REGISTRY}
    with pytest.raises(LinclsInputError, match=r"^learner\.name: must be one of .*'normalized"):
        registry.build_learner({"name": NAME}, passes=1, seed=0)


def test_bad_registrations_are_refused_in_one_line(example):
    from lincls_example.learner import NormalizedPerceptronConfig

    with pytest.raises(LinclsInputError, match="'perceptron': is a built-in learner's name"):
        plugins.register_learner("perceptron", example.NormalizedPerceptron, object)
    with pytest.raises(LinclsInputError, match="must be lower-case letters"):
        plugins.register_learner("My-Rule", example.NormalizedPerceptron, object)
    with pytest.raises(LinclsInputError, match="schema must be a dataclass with a `name` field"):
        plugins.register_learner("my_rule", example.NormalizedPerceptron, dict)
    with pytest.raises(LinclsInputError, match="tau not fields of NormalizedPerceptronConfig"):
        plugins.register_learner(
            "my_rule", example.NormalizedPerceptron, NormalizedPerceptronConfig, {"tau": 1.0}
        )
    bound = plugins.Bound("my_bound", example.NormalizedPerceptron, " ", "w += y·x", float)
    with pytest.raises(LinclsInputError, match="theorem must say which theorem"):
        plugins.register_bound(bound)
    with pytest.raises(LinclsInputError, match="status must be one of published, derived"):
        plugins.register_bound(plugins.dataclasses.replace(bound, theorem="T", status="proved"))
    assert "my_rule" not in plugins.LEARNERS and "my_bound" not in plugins.BOUNDS


def _fake_dist(site: Path, value: str) -> None:
    """A dist-info in ``site`` whose one entry point, ``broken``, is ``value``."""
    info = site / "broken_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[lincls.plugins]\nbroken = {value}\n")


def test_a_plugin_that_fails_to_load_prints_one_line_naming_its_entry_point(tmp_path):
    _fake_dist(tmp_path, "no_such_module_here:register")
    code = (
        "from lincls import plugins; plugins.load_plugins(); plugins.load_plugins(); "
        "print(sorted(plugins.FAILED), sorted(plugins.LEARNERS))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        "lincls: plugin 'broken' (no_such_module_here:register) failed to load: "
        "ModuleNotFoundError: No module named 'no_such_module_here'"
    ]  # once, though asked twice
    assert done.stdout.strip() == "['broken'] []"


# --- installed ------------------------------------------------------------------------------


def install_example(target: Path, scratch: Path) -> None:
    """pip-install the example package into ``target`` (from a copy: a build writes beside its
    sources). Without build isolation first; a venv whose setuptools cannot build a wheel by
    itself (no ``wheel``, setuptools < 70.1) gets pip's isolated build environment instead."""
    source = scratch / "lincls-example"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    base = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    done = subprocess.run([*base, "--no-build-isolation", str(source)], capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    if done.returncode != 0 and "bdist_wheel" in done.stdout + done.stderr:
        done = subprocess.run([*base, str(source)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example package installed into a temporary folder (its PYTHONPATH)."""
    target = tmp_path_factory.mktemp("site")
    install_example(target, tmp_path_factory.mktemp("build"))
    assert (target / "lincls_example-0.1.0.dist-info" / "entry_points.txt").read_text().split() == [
        "[lincls.plugins]", f"{NAME}", "=", "lincls_example:register",
    ]  # fmt: skip
    return target


def lincls(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    """The ``lincls`` command beside this interpreter, the installed plugin on its path."""
    command = shutil.which("lincls", path=str(Path(sys.executable).parent))
    env = {**os.environ, "PYTHONPATH": str(site), "LINCLS_HOME": str(cwd)}
    env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run([command, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


@pytest.mark.slow
def test_installed_a_sweep_runs_it_beside_the_perceptron_and_the_report_lists_its_bound(
    installed, tmp_path
):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # two worker processes: each loads the entry point when it first builds a learner
    args = ["run", "-m", f"learner={NAME},perceptron", f"tracking.uri={uri}", "study=plugin_demo"]
    done = lincls([*args, "hydra.launcher.n_jobs=2"], installed, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "2 jobs: 2 finished, 0 failed" in done.stdout + done.stderr
    children = [r for r in runs_of(uri) if "learner.name" in r.data.params]
    assert sorted(r.data.params["learner.name"] for r in children) == [NAME, "perceptron"]
    mine = next(r for r in children if r.data.params["learner.name"] == NAME)
    assert mine.data.metrics[f"bound.{RIGHT}"] >= mine.data.metrics["mistakes"]
    assert mine.data.tags[f"bound_source.{RIGHT}"].startswith(
        "derived: plugin (entry point normalized_perceptron (lincls_example:register)): Novikoff"
    )
    report = lincls(["report", "plugin_demo", "--tracking-uri", uri, "--out",
                     str(tmp_path / "report")], installed, tmp_path)  # fmt: skip
    assert report.returncode == 0, report.stderr
    rows = [line for line in (tmp_path / "report" / "report.md").read_text().splitlines()
            if line.startswith(f"| {NAME} | normalized_novikoff")]  # fmt: skip
    assert [row.split(" | ")[1] for row in rows] == [RIGHT, WRONG]
    assert " | derived: plugin " in rows[0] and " | not covered: plugin " in rows[1]


@pytest.mark.slow
def test_installed_the_orthogonal_game_forces_its_mistakes_through_the_command_line(
    installed, tmp_path
):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    done = lincls(["run", f"learner={NAME}", "dataset=orthogonal_game", "dataset.margin=0.3",
                   "dataset.radius=0.9", "dataset.d=20", "passes=2", f"tracking.uri={uri}"],
                  installed, tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run,) = runs_of(uri)
    assert run.data.metrics["mistakes"] == 9  # ⌊(0.9/0.3)²⌋
    assert run.data.metrics[f"bound.{RIGHT}"] == pytest.approx(9.0, rel=1e-9)
    assert run.data.metrics[f"bound.{WRONG}"] == pytest.approx(4.5, rel=1e-9)
    assert run.data.tags["bound_violated"] == "true"


PROPERTY = """
import json, sys
sys.path.insert(0, sys.argv[1])
import test_bounds_every_option as every
found, games = {}, 0
for seed in range(400):
    config = every.random_config(seed, sys.argv[2])
    if config["learner"]["name"] != "normalized_perceptron":
        continue
    games += config["dataset"]["name"] == "orthogonal_game"
    for v in every.violations_of(config):
        found[v[4]] = found.get(v[4], 0) + 1
print(json.dumps({"learners": sorted(every.plugin_learners()), "games": games, "found": found}))
"""


@pytest.mark.slow
def test_installed_the_property_test_draws_the_plugin_and_finds_only_the_wrong_bound(
    installed, tmp_path
):
    env = {**os.environ, "PYTHONPATH": str(installed)}
    done = subprocess.run(
        [sys.executable, "-c", PROPERTY, str(ROOT / "tests"), str(tmp_path)], env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["learners"] == [NAME] and result["games"] >= 3
    # every game breaks the halved bound (and so the run's flag); nothing breaks the theorem
    assert result["found"][f"bound_ratio.{WRONG}"] == result["games"]
    assert result["found"]["bound_violated"] == result["games"]
    assert f"bound_ratio.{RIGHT}" not in result["found"]
