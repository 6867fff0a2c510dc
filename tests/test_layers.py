"""The house rules: imports go one way (no cycles, lower layers know nothing of higher ones) and
no source file grows past 450 lines."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from conftest import ROOT

# folder → the package it is installed as (the wheel maps experiments/ into lincls)
PACKAGES = {
    "lincls": "lincls",
    "experiments": "lincls.experiments",
    "hydra_plugins": "hydra_plugins",
}
MAX_LINES = 450

# Lowest first. A module may import from its own layer or below, never above. A new module gets a
# layer here, so where it sits is decided once, in one place. ``lincls.geometry`` (its ``__init__``)
# is array arithmetic (norms, margins) that knows nothing of lincls, so data and learners may use
# it; its modules that use them sit higher, by entries of their own (the longest listed prefix of a
# name gives a module its layer). ``plugins`` holds what other packages register; the registries
# above it take from it when used.
LAYERS: list[tuple[str, ...]] = [
    (
        "lincls",
        "lincls.errors",
        "lincls.paths",
        "lincls.config",
        "lincls.geometry",
        "lincls.plugins",
    ),
    ("lincls.data",),
    ("lincls.learners",),
    (
        "lincls.geometry.active_set",
        "lincls.geometry.certificates",
        "lincls.geometry.comparators",
        "lincls.geometry.kkt",
        "lincls.geometry.newton",
        "lincls.geometry.programs",
    ),
    ("lincls.bounds",),
    (
        "lincls.orders",
        "lincls.games",
        "lincls.registry",
        "lincls.evaluation",
    ),
    # searches for a bound's worst case: they play the games and score with the evaluation
    ("lincls.search",),
    # the store and its guard, the writers, the reader, tags and progress: one package
    ("lincls.tracking",),
    ("lincls.runner", "lincls.sweeps", "lincls.interrupts"),
    ("lincls.experiments", "lincls.api", "hydra_plugins"),
]


def source_files() -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    modules = {}
    for folder, package in PACKAGES.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((package, *parts))] = path
    return modules


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports, anywhere in the file (function-level imports too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def resolve(target: str) -> None:
        while target and target not in known:  # `from a.b import c` where c is not a module
            target = target.rpartition(".")[0]
        if target and target != name:
            found.add(target)

    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                resolve(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                resolve(full if full in known else base)
    return found


# The one import allowed to go up: the package's front door. ``lincls.run``, ``sweep``,
# ``studies`` and ``study`` are the top layer's API, imported by ``lincls.__getattr__`` when first
# asked for, so ``import lincls`` loads none of it (and closes no cycle: nothing below runs it).
FRONT_DOOR = {"lincls": {"lincls.api"}}
GRAPH = {
    name: imports_of(name, path, set(source_files())) - FRONT_DOOR.get(name, set())
    for name, path in sorted(source_files().items())
}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> int:
    """The layer of a module: that of the longest listed prefix of its name."""
    best, rank = "", -1
    for k, names in enumerate(LAYERS):
        for prefix in names:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
                best, rank = prefix, k
    return rank


def test_the_walk_sees_the_imports_it_should():
    assert "lincls.tracking" in GRAPH["lincls.runner"]
    assert "lincls.learners._base" in GRAPH["lincls.evaluation"]  # `from x import name`
    assert "lincls.learners.perceptron" in GRAPH["lincls.learners"]  # a package's __init__
    assert "lincls.registry" in GRAPH["lincls.experiments.report.plots"] or any(
        "lincls.registry" in GRAPH[m] for m in GRAPH if m.startswith("lincls.experiments.report")
    )  # an import inside a function counts


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert cycles(GRAPH) == []


def test_every_module_has_a_layer():
    assert [m for m in GRAPH if layer_of(m) < 0] == []


def test_imports_go_down_the_layers():
    upward = [
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module, targets in GRAPH.items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]
    assert upward == []


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_source_file_is_over_450_lines(module):
    lines = len(source_files()[module].read_text().splitlines())
    assert lines <= MAX_LINES, f"{module}: {lines} lines"


def test_entry_modules_are_imported_by_their_installed_name():
    """``experiments/`` is ``lincls.experiments`` once installed; an import by the folder's name
    would fail there, and in a checkout load a second copy of the module."""
    folder_imports = []
    for path in [*ROOT.glob("*/**/*.py"), *ROOT.glob("*.py")]:
        if ".venv" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            folder_imports += [(path.name, n) for n in names if n.split(".")[0] == "experiments"]
    assert folder_imports == []


def test_the_architecture_page_is_drawn_from_these_layers():
    """The docs' architecture page shows ``LAYERS`` through its build hook, so it cannot drift."""
    spec = importlib.util.spec_from_file_location("layers_hook", ROOT / "docs/_gen/layers.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    assert hook.MARK in (ROOT / "docs" / hook.PAGE).read_text()
    table = hook.layers_table()
    assert [
        n for k, names in enumerate(LAYERS) for n in names if f"| {k} | `{n}` |" not in table
    ] == []
