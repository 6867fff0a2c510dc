"""What lincls says to its users names lincls's own commands: no message of the installed
package (a string it prints, raises or logs, or a comment of its configs, which ``lincls run
--help`` and the reference pages show) advises a ``make`` target, which exists only in a checkout
(a wheel user has ``lincls ui``, ``lincls report``, ``pip install``). Docstrings, read by the
checkout's developers, may name the targets."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from tests._docs_examples import ROOT

PACKAGES = ("lincls", "lincls.experiments", "lincls.conf", "hydra_plugins")


def make_advice() -> re.Pattern:
    """``make <target>`` for each target the Makefile declares phony."""
    phony = re.search(r"^\.PHONY:(.*)$", (ROOT / "Makefile").read_text(), flags=re.MULTILINE)
    assert phony is not None
    return re.compile(rf"\bmake ({'|'.join(map(re.escape, phony.group(1).split()))})\b")


def folders() -> list[Path]:
    """Where the installed packages' modules and configs are."""
    found = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations, name
        found += [Path(p) for p in spec.submodule_search_locations]
    return found


def messages(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings, with their lines."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_no_message_of_the_installed_package_advises_a_make_target():
    advice = make_advice()
    found = []
    for folder in folders():
        for path in sorted(folder.rglob("*.py")):
            found += [
                f"{path}:{line}: {text!r}" for line, text in messages(path) if advice.search(text)
            ]
        for path in sorted(folder.rglob("*.yaml")):
            for line, text in enumerate(path.read_text().splitlines(), 1):
                comment = text.partition("#")[2]
                if advice.search(comment):
                    found.append(f"{path}:{line}: {comment.strip()}")
    assert found == [], "\n".join(found)


def test_the_check_finds_make_advice():
    advice = make_advice()
    assert advice.search("MLflow UI: lincls ui (or make ui), then")
    assert advice.search("install river (make setup)")
    assert not advice.search("the store's folder does not exist; make it first")
