"""The documentation: the site builds with --strict (a broken link, anchor or API reference
fails), every example of README.md and docs/ runs and prints what it shows (tests/_docs_examples.py
has the convention), and the README stays within its size."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._docs_examples import (
    REFUSED,
    ROOT,
    blocks,
    commands,
    matches,
    pages,
    run_page,
)

# The examples that cannot run here, each marked in its page: the two make targets and pip
# install (they install), the UI (it serves until stopped), the long reproductions, the
# PostgreSQL, Slurm and Ray how-tos (a database server, a cluster), the example plugin's run and
# check (it must be installed: tests/test_plugins.py and tests/test_check_plugins.py install it),
# and a study of your own (it needs its file: tests/test_docs_reference.py writes it and runs the
# page's command).
SKIPPED = 17
README_BYTES = 10_240
# pages whose examples sweep (seconds to a minute on a busy 2-core machine)
SLOW_PAGES = {"README.md", "getting-started.md", "tutorial.md", "sweeps.md", "notebook.md"}


def test_readme_fits_in_ten_kilobytes():
    assert len((ROOT / "README.md").read_bytes()) <= README_BYTES


def test_every_fence_names_a_language_and_shell_examples_have_prompts():
    for page in pages():
        for block in blocks(page):
            assert block.lang not in REFUSED, f"{block.where}: use ```console with $ prompts"
            if block.lang == "console":
                assert commands(block.text), f"{block.where}: a console block without a $ line"


def test_the_skipped_examples_are_exactly_the_known_ones():
    skipped = [b for page in pages() for b in blocks(page) if b.skip is not None]
    assert len(skipped) == SKIPPED, "\n".join(f"{b.where}: {b.skip}" for b in skipped)


def test_shown_output_matching():
    assert matches("Run …: mistakes=20", "Run 4f3a: mistakes=20\n")
    assert not matches("Run …: mistakes=20", "Run 4f3a: mistakes=21\n")
    assert matches("first\n…\nlast", "first\na\nb\nlast\n")
    assert matches("first\n…\nlast", "first\nlast\n")
    assert not matches("first\nlast", "first\nmiddle\nlast\n")


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=pytest.mark.slow, id=str(p.relative_to(ROOT)))
        if p.name in SLOW_PAGES
        else pytest.param(p, id=str(p.relative_to(ROOT)))
        for p in pages()
        if any(b.skip is None and b.lang in {"console", "python"} for b in blocks(p))
    ],
)
def test_examples_run_and_print_what_they_show(page: Path, tmp_path):
    problems = run_page(page, tmp_path)
    assert not problems, "\n\n".join(problems)


def test_the_tutorials_figures_are_the_ones_its_study_makes():
    """Each figure the tutorial shows is one its report writes: the page's ``ls`` lists it (and
    the page's example test checks that ``ls`` prints that list)."""
    shown = sorted(p.name for p in (ROOT / "docs" / "tutorial").glob("*.png"))
    text = (ROOT / "docs" / "tutorial.md").read_text()
    listing = next(b.text for b in blocks(ROOT / "docs" / "tutorial.md") if "$ ls " in b.text)
    assert len(shown) == 4
    for name in shown:
        assert f"](tutorial/{name})" in text and f"results/tutorial/{name}" in listing


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to list ignored files")
def test_the_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    for page in ["reference/learners", "reference/bounds", "reference/logged", "api/bounds"]:
        assert (site / page / "index.html").is_file(), page
    learners = (site / "reference" / "learners" / "index.html").read_text()
    assert "test_perceptron.py::test_dense_bitwise_equal_to_sklearn" in learners
    bounds = (site / "reference" / "bounds" / "index.html").read_text()
    assert "novikoff_2r" in bounds and "a posteriori" in bounds
    ignored = subprocess.run(["git", "check-ignore", "-q", "site/index.html"], cwd=ROOT)
    assert ignored.returncode == 0
