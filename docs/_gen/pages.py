"""The generated reference pages, kept in docs/reference/ so that they read in the repository (on
a code forge, from the README's links) as they do on the site.

``make reference`` (``python docs/_gen/pages.py``) writes each from the code; ``--check`` lists
those that differ from what the code gives now and exits 1. As a MkDocs hook it fails the build on
a page that differs, so the site never shows a stale one (``tests/test_docs_reference.py`` checks
the same).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:  # its neighbours, imported as a hook and as a script alike
    sys.path.insert(0, HERE)
import logged  # noqa: E402
import reference  # noqa: E402

DOCS = Path(__file__).resolve().parents[1]
PAGES: dict[str, Callable[[], str]] = {
    **reference.PAGES,
    "reference/logged.md": logged.logged_page,
}
COMMAND = "make reference (or: python docs/_gen/pages.py)"


def generated() -> dict[str, str]:
    """Each page's path under docs/ → its text as the code gives it now."""
    return {uri: build().rstrip("\n") + "\n" for uri, build in PAGES.items()}


def stale(pages: dict[str, str] | None = None) -> list[str]:
    """The pages whose file in docs/ is missing or differs from ``pages`` (generated if None)."""
    pages = generated() if pages is None else pages
    return [
        uri
        for uri, text in pages.items()
        if not (DOCS / uri).is_file() or (DOCS / uri).read_text() != text
    ]


def write() -> list[str]:
    """Write every page that differs; the pages written."""
    pages = generated()
    changed = stale(pages)
    for uri in changed:
        (DOCS / uri).write_text(pages[uri])
    return changed


def on_pre_build(config) -> None:
    """Fail the site's build on a reference page that differs from what the code gives."""
    from mkdocs.exceptions import PluginError

    changed = stale()
    if changed:
        raise PluginError(
            f"{', '.join(f'docs/{u}' for u in changed)} differ from what the code gives: {COMMAND}"
        )


def main(argv: list[str] | None = None) -> int:
    """Write the pages (or, with --check, list those that differ); the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if one differs")
    args = parser.parse_args(argv)
    if args.check:
        changed = stale()
        for uri in changed:
            print(f"docs/{uri} differs from what the code gives: {COMMAND}")
        return 1 if changed else 0
    for uri in write():
        print(f"wrote docs/{uri}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
