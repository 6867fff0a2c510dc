"""lincls installs anywhere: pyproject's package list holds every package folder of the checkout and
its data, and the wheel built from the checkout, installed in a fresh venv beside the run lock's
pinned dependencies, runs a sweep, a report and one run in any directory, importing nothing from
the checkout."""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tomllib
import zipfile
from contextlib import closing
from pathlib import Path

import pytest
from conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
PACKAGES: list[str] = SETUPTOOLS["packages"]
PACKAGE_DIR: dict[str, str] = SETUPTOOLS.get("package-dir", {})
PACKAGE_DATA: dict[str, list[str]] = SETUPTOOLS.get("package-data", {})
VERSION = PYPROJECT["project"]["version"]
# the checkout's folders that hold code, and the packages they are installed as
SOURCE_ROOTS = {
    "lincls": "lincls",
    "experiments": "lincls.experiments",
    "hydra_plugins": "hydra_plugins",
}
UV = ROOT / ".venv" / "tools" / "bin" / "uv"
# what the build reads besides the package folders (the readme and license pyproject names)
BUILD_FILES = ["pyproject.toml", "README.md", "LICENSE"]
NOT_SHIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")
STUDY = "wheel"
SWEEP = ["learner.lr=0.5,1", "seed=0,1", "dataset.n=100", "dataset.n_test=100"]
FAST = ["certificates.svm=false", f"study={STUDY}"]  # no SVM solve: the run is the point, not it
# the perceptron started at zero makes the same mistakes at any lr (w scales with it); these are
# the counts of dataset.n=100 at seeds 0 and 1
MISTAKES = {"0": 20, "1": 28}


def folder_of(package: str) -> Path:
    """The checkout's folder of a dotted package, as setuptools maps it (package-dir, else the
    dotted path)."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in PACKAGE_DIR:
            return ROOT / PACKAGE_DIR[prefix] / Path(*parts[cut:])
    return ROOT / Path(*parts)


def package_of(folder: Path) -> str:
    """The dotted package a folder of a source root is installed as."""
    top, *rest = folder.relative_to(ROOT).parts
    return ".".join((SOURCE_ROOTS[top], *rest))


def code_folders() -> list[Path]:
    """Every folder of the source roots holding Python files (an ``__init__.py`` or modules)."""
    folders = {p.parent for top in SOURCE_ROOTS for p in (ROOT / top).rglob("*.py")}
    return sorted(f for f in folders if "__pycache__" not in f.parts)


def test_every_code_folder_is_a_listed_package():
    missing = [f"{package_of(f)} ({f.relative_to(ROOT)})" for f in code_folders()]
    missing = [m for m in missing if m.split()[0] not in PACKAGES]
    assert not missing, f"add to [tool.setuptools] packages in pyproject.toml: {missing}"
    assert len(code_folders()) >= 10  # the walk found the subpackages, not only the roots


def test_every_listed_package_has_its_folder():
    for package in PACKAGES:
        folder = folder_of(package)
        assert folder.is_dir(), (package, folder)
        # Hydra's plugin folder is a namespace shared with other plugins: no __init__.py of ours
        assert (folder / "__init__.py").is_file() == (package != "hydra_plugins"), package
    assert folder_of("lincls.experiments.report") == ROOT / "experiments" / "report"
    assert folder_of("lincls.conf") == ROOT / "conf"


def data_files(package: str) -> set[str]:
    """The files beside a package's modules that must ship with it (not Python, not a
    subpackage's, not hidden), relative to its folder."""
    folder = folder_of(package)
    found = set()
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in rel.parts:
            continue
        if any(part.startswith(".") for part in rel.parts):
            continue
        if any(
            (parent / "__init__.py").is_file()
            for parent in path.parents
            if folder in parent.parents
        ):
            continue  # inside a subpackage: its own entry covers it
        found.add(rel.as_posix())
    return found


def matched(package: str) -> set[str]:
    """The files of a package's folder its package-data globs select (setuptools globs them the
    same way: ``*`` stops at ``/``)."""
    folder = folder_of(package)
    patterns = PACKAGE_DATA.get(package, []) + PACKAGE_DATA.get("", []) + PACKAGE_DATA.get("*", [])
    return {
        Path(hit).as_posix()
        for pattern in patterns
        for hit in glob.glob(pattern, root_dir=folder, recursive=True)
        if (folder / hit).is_file()
    }


def test_every_config_yaml_and_data_file_is_package_data():
    yamls = {p.relative_to(ROOT / "conf").as_posix() for p in (ROOT / "conf").rglob("*.yaml")}
    assert {"config.yaml", "learner/perceptron.yaml", "dataset/separable.yaml"} <= yamls
    assert not yamls - matched("lincls.conf"), "add a glob to package-data lincls.conf"
    for package in PACKAGES:
        unmatched = data_files(package) - matched(package)
        assert not unmatched, f"{package}: not in its package-data globs: {sorted(unmatched)}"
    assert "playtennis.csv" in matched("lincls.data")


# --- the wheel, built from the checkout and installed away from it (slow) ---


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what could point a command at the checkout or at
    another store: PYTHONPATH, an active venv, MLflow's and lincls's store variables."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "LINCLS_HOME"}
    # bytecode cached in the throwaway venv spares each command compiling MLflow's imports anew
    drop |= {"PYTHONDONTWRITEBYTECODE", "MLFLOW_TRACKING_URI", "MLFLOW_REGISTRY_URI"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def check(command: list, cwd: Path, env: dict | None = None, timeout: float = 300) -> str:
    """Run ``command``; fail with its stderr's and stdout's tails unless it exits 0. Returns its
    stdout and stderr together."""
    line = " ".join(map(str, command))
    try:
        done = subprocess.run(
            [str(c) for c in command], cwd=cwd, env=env or clean_env(), capture_output=True,
            text=True, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"timed out after {timeout} s: {line}\n{tails(exc.stderr, exc.stdout)}")
    assert done.returncode == 0, (
        f"exit {done.returncode}: {line}\n{tails(done.stderr, done.stdout)}"
    )
    return done.stdout + done.stderr


def tails(stderr: str | bytes | None, stdout: str | bytes | None) -> str:
    """The last lines of a command's stderr and stdout, for a failure message."""

    def last(text: str | bytes | None, lines: int) -> str:
        text = text.decode(errors="replace") if isinstance(text, bytes) else text or ""
        return "\n".join(text.splitlines()[-lines:])

    return f"--- stderr (tail) ---\n{last(stderr, 40)}\n--- stdout (tail) ---\n{last(stdout, 15)}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built by uv (setuptools from the registry) from a copy of the checkout's build
    inputs, so the build's build/ and egg-info land in a temporary directory, not the checkout."""
    if not UV.is_file():
        pytest.skip(f"needs uv at {UV.relative_to(ROOT)} (make setup)")
    src = tmp_path_factory.mktemp("src")
    for name in BUILD_FILES:
        shutil.copy2(ROOT / name, src / name)
    for top in {*SOURCE_ROOTS, "conf"}:
        shutil.copytree(ROOT / top, src / top, ignore=NOT_SHIPPED)
    out = tmp_path_factory.mktemp("dist")
    build = [UV, "build", "--quiet", "--wheel", "--out-dir", out, "--python", sys.executable]
    check([*build, src], cwd=src, timeout=600)
    (found,) = out.glob("lincls-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding the run lock's pinned dependencies and the wheel; its bin/."""
    root = tmp_path_factory.mktemp("venv") / "venv"
    check([UV, "venv", "--quiet", "--python", sys.executable, root], cwd=root.parent)
    python = root / "bin" / "python"
    install = [UV, "pip", "install", "--quiet", "--python", python]
    check(
        [*install, "--require-hashes", "-r", ROOT / "requirements" / "run.lock"],
        cwd=root.parent,
        timeout=900,
    )
    check([*install, "--no-deps", wheel], cwd=root.parent)
    return root / "bin"


@pytest.mark.slow
def test_the_wheel_holds_the_packages_configs_and_license(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    dist_info = f"lincls-{VERSION}.dist-info"
    assert wheel.name == f"lincls-{VERSION}-py3-none-any.whl"
    assert {n.split("/")[0] for n in names} == {"lincls", "hydra_plugins", dist_info}, names
    for must in [
        "lincls/conf/config.yaml",
        "lincls/conf/learner/perceptron.yaml",
        "lincls/conf/dataset/separable.yaml",
        "lincls/conf/experiment/bound_verification.yaml",
        "lincls/experiments/run.py",
        "lincls/experiments/cli.py",
        "lincls/experiments/report/__main__.py",
        "hydra_plugins/lincls_sweeps/sweeper.py",
        "hydra_plugins/lincls_sweeps/launcher.py",
        "lincls/data/playtennis.csv",
        f"{dist_info}/licenses/LICENSE",
    ]:
        assert must in names, must
    assert "hydra_plugins/__init__.py" not in names  # would hide other plugins' namespace
    # every module and config of the checkout, where the installed package has it
    expected = {
        f"lincls/conf/{p.relative_to(ROOT / 'conf').as_posix()}"
        for p in (ROOT / "conf").rglob("*.yaml")
    }
    for folder in code_folders():
        base = package_of(folder).replace(".", "/")
        expected |= {f"{base}/{p.name}" for p in folder.glob("*.py")}
    assert not expected - names, sorted(expected - names)
    with zipfile.ZipFile(wheel) as archive:
        license_text = archive.read(f"{dist_info}/licenses/LICENSE").decode()
        metadata = archive.read(f"{dist_info}/METADATA").decode()
        entry_points = archive.read(f"{dist_info}/entry_points.txt").decode()
    assert license_text == (ROOT / "LICENSE").read_text()
    assert "License-Expression: MIT" in metadata.splitlines()
    assert "lincls = lincls.experiments.cli:main" in entry_points.splitlines()


def study_runs(store: Path) -> dict[tuple[str, str], float]:
    """(lr, seed) → mistakes of the study's runs in a SQLite store, read with SQL (no MLflow
    import in this process); the sweep's parent run has no mistakes."""
    query = """
        SELECT lr.value, seed.value, m.value FROM latest_metrics m
        JOIN params lr ON lr.run_uuid = m.run_uuid AND lr.key = 'learner.lr'
        JOIN params seed ON seed.run_uuid = m.run_uuid AND seed.key = 'seed'
        JOIN tags t ON t.run_uuid = m.run_uuid AND t.key = 'lincls.study' AND t.value = ?
        WHERE m.key = 'mistakes'"""
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        return {(lr, seed): mistakes for lr, seed, mistakes in db.execute(query, (STUDY,))}


@pytest.fixture(scope="module")
def swept(venv, tmp_path_factory) -> tuple[Path, str]:
    """The 4-config sweep run by the installed ``lincls`` in a fresh directory: (that directory,
    the sweep's output)."""
    work = tmp_path_factory.mktemp("work")
    return work, check([venv / "lincls", "run", "-m", *SWEEP, *FAST], cwd=work)


@pytest.mark.slow
def test_installed_lincls_sweeps_and_reports_where_it_runs(venv, swept):
    work, out = swept
    assert check([venv / "lincls", "--version"], cwd=work).strip() == f"lincls {VERSION}"
    store = work / "results" / "mlflow.db"
    # the lincls sweeper ran (Hydra found the installed plugin) and logged to this directory
    assert f"[lincls] sweep {STUDY}: 4 jobs: 4 finished, 0 failed" in out, out
    assert f"store sqlite:///{store}" in out, out
    assert str(ROOT) not in out
    assert study_runs(store) == {
        (lr, seed): float(MISTAKES[seed]) for lr in ("0.5", "1.0") for seed in ("0", "1")
    }

    out = check([venv / "lincls", "report", STUDY], cwd=work)
    report = work / "results" / STUDY / "report.md"
    assert f"report: {report} (4 runs of study '{STUDY}'" in out, out
    text = report.read_text()
    assert text.startswith(f"# Study `{STUDY}`") and "- Runs: 4 FINISHED" in text, text[:500]
    assert (work / "results" / STUDY / "runs.csv").read_text().count("\n") == 5  # header + 4


@pytest.mark.slow
def test_installed_lincls_logs_to_lincls_home(venv, tmp_path):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    one = ["learner.lr=0.5", "seed=1", *SWEEP[2:], *FAST]
    out = check([venv / "lincls", "run", *one], cwd=work, env=clean_env(LINCLS_HOME=str(home)))
    # the printed count is the sweep's for the same config
    assert re.search(r"mistakes=(\d+),", out).group(1) == str(MISTAKES["1"]), out
    # the store and its certificates go to LINCLS_HOME, nothing into the working directory
    assert (home / "mlflow.db").is_file() and (home / "certificates").is_dir()
    assert list(work.iterdir()) == []
    assert study_runs(home / "mlflow.db") == {("0.5", "1"): float(MISTAKES["1"])}


IMPORTS = """
import importlib, importlib.resources, importlib.util, json, pkgutil, sys
import hydra_plugins.lincls_sweeps, lincls
from lincls.paths import project_root
failed = {}
for package in (lincls, hydra_plugins.lincls_sweeps):  # every module, as installed
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith(".__main__"):  # runs a command when imported
            try:
                importlib.import_module(module.name)
            except Exception as exc:
                failed[module.name] = repr(exc)
from hydra.core.plugins import Plugins
from hydra.plugins.launcher import Launcher
from hydra.plugins.sweeper import Sweeper
print(json.dumps({
    "files": [getattr(m, "__file__", None) or "" for m in list(sys.modules.values())],
    "failed": failed,
    "imported": sorted(n for n in sys.modules if n.startswith(("lincls", "hydra_plugins.lincls"))),
    "lincls": lincls.__file__,
    "version": lincls.__version__,
    "top_level": [n for n in ("experiments", "conf") if importlib.util.find_spec(n)],
    "project_root": str(project_root()),
    "plugins": [p.__name__ for k in (Sweeper, Launcher) for p in Plugins.instance().discover(k)],
    "path": sys.path,
    "data": [
        (importlib.resources.files("lincls.conf") / "learner" / "perceptron.yaml").is_file(),
        (importlib.resources.files("lincls.data") / "playtennis.csv").is_file(),
    ],
}))
"""


@pytest.mark.slow
def test_installed_package_imports_nothing_from_the_checkout(venv, tmp_path):
    site = json.loads(check([venv / "python", "-c", IMPORTS], cwd=tmp_path))
    prefix = str(venv.parent)
    assert site["lincls"].startswith(prefix) and site["lincls"].endswith(
        "site-packages/lincls/__init__.py"
    )
    assert site["version"] == VERSION
    assert site["failed"] == {}  # every module of the wheel imports in the installed layout
    # the walk imported every module the checkout has, each from the venv (below)
    modules = {
        package_of(f) if p.stem == "__init__" else f"{package_of(f)}.{p.stem}"
        for f in code_folders()
        for p in f.glob("*.py")
        if p.stem != "__main__"
    }
    assert "lincls.api" in modules and "hydra_plugins.lincls_sweeps.sweeper" in modules
    assert not modules - set(site["imported"]), sorted(modules - set(site["imported"]))
    assert site["top_level"] == []  # no generic top-level experiments or conf package
    assert site["project_root"] == "None"  # installed: no source tree to find
    # Hydra finds the plugins in the installed namespace, beside the launchers from the lock
    assert {"LinclsSweeper", "LinclsLauncher", "JoblibLauncher"} <= set(site["plugins"])
    assert not [f for f in site["files"] if f.startswith(str(ROOT))]
    assert not [p for p in site["path"] if p.startswith(str(ROOT))]
    assert site["data"] == [True, True]  # the configs and the shipped table, read as resources


API = """
import json, lincls
result = lincls.run(
    {"name": "perceptron", "lr": 0.5}, {"name": "separable", "n": 100, "n_test": 100}, seed=1,
    certificates={"svm": False},
)
runs = lincls.study(%r).runs()
print(json.dumps({
    "mistakes": result.mistakes,
    "runs": {f"{r.lr:g},{r.seed}": r.mistakes for r in runs.itertuples()},
}))
"""


@pytest.mark.slow
def test_installed_python_api_matches_the_cli(venv, swept):
    work, _ = swept
    got = json.loads(check([venv / "python", "-c", API % STUDY], cwd=work).splitlines()[-1])
    # the same config through the API, the CLI's sweep and `lincls run` makes the same mistakes
    assert got["mistakes"] == MISTAKES["1"]
    assert got["runs"] == {f"{lr},{seed}": n for lr in ("0.5", "1") for seed, n in MISTAKES.items()}
