"""The set-up in two commands: declared dependencies and their bounds, the Makefile's targets, CI,
the README's opening lines, and results/ kept out of git."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib

import pytest
from conftest import ROOT
from packaging.requirements import Requirement

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def requirements(entries: list[str]) -> dict[str, Requirement]:
    return {(r := Requirement(entry)).name: r for entry in entries}


@pytest.mark.parametrize(
    ("name", "allowed", "refused"),
    [
        ("hydra-core", ["1.3.0", "1.3.2"], ["1.2.0", "1.4.0"]),
        ("mlflow", ["3.7.0", "3.17.2"], ["3.6.0", "2.22.0"]),
        ("numpy", ["2.0.0", "2.4.6"], ["1.26.4"]),
        ("scikit-learn", ["1.8.0", "1.9.1"], ["1.7.2", "1.10.0"]),
        ("pandas", ["2.2.0"], []),
        ("numba", ["0.60.0"], []),
        ("matplotlib", ["3.8.0"], []),
    ],
)
def test_runtime_dependencies_and_their_bounds(name, allowed, refused):
    declared = requirements(PYPROJECT["project"]["dependencies"])
    assert name in declared
    assert all(declared[name].specifier.contains(v) for v in allowed), declared[name]
    assert not any(declared[name].specifier.contains(v) for v in refused), declared[name]


def test_the_full_mlflow_and_a_dev_extra_with_pytest_and_hypothesis():
    # the skinny package can neither serve `mlflow ui` nor use its own SQLite default
    assert "mlflow-skinny" not in requirements(PYPROJECT["project"]["dependencies"])
    dev = requirements(PYPROJECT["project"]["optional-dependencies"]["dev"])
    assert {"pytest", "hypothesis"} <= set(dev)


def dry_run(target: str) -> list[str]:
    """The commands ``make <target>`` would run from scratch (every prerequisite remade)."""
    done = subprocess.run(
        ["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHON": "python3"},
    )  # fmt: skip
    return done.stdout.splitlines()


def setup(lock: str) -> list[str]:
    """The set-up lines: a venv, uv in it, the lock's pinned packages, then the project itself."""
    uv = ".venv/tools/bin/uv pip install --quiet --python .venv/bin/python"
    return [
        "test -x .venv/bin/python || python3 -m venv .venv",
        ".venv/bin/python -m pip install --quiet --target .venv/tools uv==0.13.8",
        f"{uv} --require-hashes --compile-bytecode -r requirements/{lock}.lock",
        f"{uv} --no-deps -e .",
    ]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(
    ("target", "runs"),
    [
        (
            "run",
            [
                ".venv/bin/python -m lincls.experiments.run -m experiment=bound_verification",
                ".venv/bin/python -m lincls.experiments.report bound_verification",
            ],
        ),
        ("test", [".venv/bin/python -m ruff check .", ".venv/bin/python -m pytest -q -n auto"]),
        ("bench", ["-m lincls.experiments.bench"]),
        ("ui", ["lincls ui --store sqlite:///", "--host 127.0.0.1"]),
        (
            "server",
            [
                "mlflow server --app-name lincls --backend-store-uri sqlite:///",
                "--host 127.0.0.1",
                "--workers 1",
            ],
        ),
    ],
)
def test_every_make_target_sets_up_the_venv_first(target, runs):
    lines = dry_run(target)
    lock, other = ("test", "run") if target == "test" else ("run", "test")
    for expected in setup(lock):
        assert expected in lines, lines
    # a run installs only what a run needs: no test, cluster or database extras
    assert not [x for x in lines if f"requirements/{other}.lock" in x], lines
    last = max(lines.index(step) for step in setup(lock))
    for command in runs:
        at = [i for i, line in enumerate(lines) if command in line]
        assert at and at[0] > last, (command, lines)
    if target == "ui":
        store = f"sqlite:///{ROOT / 'results' / 'mlflow.db'}"
        assert any(store in line for line in lines), lines


def test_ci_runs_make_test():
    script = ROOT / ".ci" / "run"
    assert os.access(script, os.X_OK)
    assert re.search(r"^make test$", script.read_text(), flags=re.MULTILINE)


def test_readme_opens_with_make_run_and_make_test():
    first_block = (ROOT / "README.md").read_text().split("```")[1]
    lines = first_block.splitlines()[1:]
    commands = [line.split("#")[0].removeprefix("$ ").strip() for line in lines]
    assert commands[:2] == ["make run", "make test"]


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_results_are_ignored_apart_from_their_readme():
    def ignored(path: str) -> bool:
        done = subprocess.run(["git", "check-ignore", "-q", path], cwd=ROOT, check=False)
        return done.returncode == 0

    assert ignored("results/mlflow.db") and ignored("results/mlartifacts/x/y.png")
    assert ignored("results/bench.md") and ignored("results/hydra/runs/a/b.yaml")
    assert not ignored("results/README.md")
    assert (ROOT / "results" / "README.md").is_file()


def readme_row(title: str) -> set[str]:
    """The plain names in backticks of the row ``| [<title>](…) | … |`` of the README's table."""
    text = (ROOT / "README.md").read_text()
    row = text.split(f"| [{title}](", 1)[1].split("\n", 1)[0]
    return set(re.findall(r"`([a-z_0-9]+)`", row))


@pytest.mark.parametrize(("title", "group"), [("Datasets", "dataset"), ("Learners", "learner")])
def test_readme_lists_every_config_option(title, group):
    assert readme_row(title) == {path.stem for path in (ROOT / "conf" / group).glob("*.yaml")}
