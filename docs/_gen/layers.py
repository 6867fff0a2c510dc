"""MkDocs hook: the architecture page's layers, drawn at every build from ``LAYERS`` in
``tests/test_layers.py`` (the list the layer test enforces), so the page cannot drift from it.

Each listed module or package is shown with the first paragraph of its docstring and, for a
package, the public modules directly under it that take its layer (a module's layer is that of
the longest listed prefix of its name). The layer test is read, not imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LAYERS_TEST = ROOT / "tests" / "test_layers.py"
PAGE = "explanation/architecture.md"
MARK = "<!-- layers -->"


def literal(name: str) -> Any:
    """The value of the layer test's top-level assignment ``name = …`` (a literal)."""
    for node in ast.parse(LAYERS_TEST.read_text()).body:
        if isinstance(node, ast.AnnAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        else:
            continue
        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
            return ast.literal_eval(node.value)
    raise LookupError(f"{LAYERS_TEST.name} has no {name}")


def modules() -> dict[str, Path]:
    """Every module of the project's packages by dotted name, as the layer test walks them."""
    found = {}
    for folder, package in literal("PACKAGES").items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


def owner(module: str, listed: list[str]) -> str:
    """The longest listed prefix of a module's name: the entry that gives it its layer."""
    best = ""
    for prefix in listed:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    return best


def summary(path: Path | None) -> str:
    """The first paragraph of a module's docstring, on one line, fit for a table cell."""
    if path is None:
        return "(a namespace package)"
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    return re.sub(r"``([^`]+)``", r"`\1`", text).replace("|", "\\|")


def layers_table() -> str:
    """The layers, lowest first: each listed name, what it is, and the modules it holds."""
    layers = literal("LAYERS")
    listed = [name for names in layers for name in names]
    found = modules()
    rows = ["| layer | module | what it is | its modules at this layer |", "|---|---|---|---|"]
    for k, names in enumerate(layers):
        for name in names:
            rooms = sorted(
                rest
                for module in found
                if module.startswith(name + ".")
                and owner(module, listed) == name
                and "." not in (rest := module[len(name) + 1 :])
                and not rest.startswith("_")
            )
            shown = ", ".join(f"`{room}`" for room in rooms)
            rows.append(f"| {k} | `{name}` | {summary(found.get(name))} | {shown} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Put the layers table where the architecture page marks it (the build fails without it)."""
    if page.file.src_uri != PAGE:
        return markdown
    if MARK not in markdown:
        raise ValueError(f"{PAGE} lost its mark {MARK}: the layers table has nowhere to go")
    return markdown.replace(MARK, layers_table())
