"""The reference pages (``docs/_gen/reference.py``): every dataset option listed, and the config
page rendered as written (no raw ``<home>`` eaten as a tag, no escaped pipe shown in code, no
Hydra ``@package`` line in a study's description)."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from types import ModuleType

import markdown
import yaml

from lincls.experiments.arguments import group_options
from tests._docs_examples import COMMAND_TIMEOUT, ROOT, environment

GEN = ROOT / "docs" / "_gen"


def hook(name: str) -> ModuleType:
    """The docs' generator module ``docs/_gen/<name>.py``, loaded as MkDocs loads a hook."""
    sys.path.insert(0, str(GEN))
    try:
        spec = importlib.util.spec_from_file_location(f"docs_gen_{name}", GEN / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(GEN))
    return module


def html(text: str) -> str:
    """A page's Markdown as the site renders it (the Markdown extensions of mkdocs.yml)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    extensions = [e if isinstance(e, str) else next(iter(e)) for e in config["markdown_extensions"]]
    return markdown.markdown(text, extensions=extensions)


def test_the_datasets_page_lists_every_option_of_the_dataset_group():
    page = hook("reference").datasets_page()
    listed = re.findall(r"^## `(\w+)`", page, flags=re.MULTILINE)
    assert sorted(listed) == group_options("dataset")
    assert "search" in listed and "`lincls.search.game.make_search_game`" in page


def test_the_config_page_renders_what_its_sources_say():
    text = hook("reference").config_page()
    page = html(text)
    # the store's default, with its <home> shown (was eaten as an HTML tag: sqlite:////mlflow.db)
    assert "sqlite:///&lt;home&gt;/mlflow.db" in page
    assert "sqlite:////mlflow.db" not in re.sub(r"<[^>]+>", "", page)
    # a union type: one code span each side of a plain pipe (was `str \| None` shown literally)
    assert "<code>str</code> | <code>None</code>" in page
    assert not re.search(r"<code>[^<]*\\\|", page), "a backslash-pipe shown in code"
    # a comment continued on the next line is read whole
    assert "home: $LINCLS_HOME, else results/ where lincls runs" in page
    # the studies: their descriptions, never Hydra's package line
    studies = [line for line in text.splitlines() if line.startswith("- `")]
    assert len(studies) == len(list((ROOT / "conf" / "experiment").glob("*.yaml")))
    assert not [line for line in studies if "@package" in line or "_global_" in line]
    assert re.search(r"<code>margin_sweep</code>: Mistakes against the margin", page)


def test_the_committed_reference_pages_are_what_the_code_gives():
    """docs/reference/ holds the generated pages, so they read in the repository too; one that
    differs from what the code gives now is remade by ``make reference``."""
    pages = hook("pages")
    assert pages.stale() == [], f"stale reference pages: {pages.COMMAND}"


def test_the_readmes_links_point_at_files_of_the_repository():
    """On a code forge a link of the README opens a file of the repository: none may point at a
    page that exists only in the built site."""
    text = (ROOT / "README.md").read_text()
    links = {link for link in re.findall(r"\]\(([^)#\s]+)", text) if "://" not in link}
    if (ROOT / ".git").exists():
        listed = subprocess.run(
            ["git", "ls-files", "--", *sorted(links)], cwd=ROOT, capture_output=True, text=True,
            check=True,
        ).stdout.split()  # fmt: skip
    else:
        listed = [link for link in links if (ROOT / link).is_file()]
    assert sorted(links - set(listed)) == []
    for page in ("learners", "bounds", "datasets", "config"):
        assert f"docs/reference/{page}.md" in links, page


def test_a_plugin_needs_no_private_module_of_lincls():
    """The learner base class is public (``lincls.learners``), the old path still works, and the
    example plugin imports nothing private of lincls."""
    import lincls.learners
    from lincls.learners import _base

    assert lincls.learners.OnlineBinaryClassifier is _base.OnlineBinaryClassifier
    assert lincls.learners.initial_weights is _base.initial_weights
    private = []
    for path in sorted((ROOT / "examples").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            private += [f"{path.name}: {n}" for n in names if n.startswith("lincls.") and "._" in n]
    assert private == []


def test_the_plugin_api_page_documents_the_plugin_api_from_the_code():
    """docs/api/plugins.md renders, from their docstrings, register_learner, register_bound,
    Bound and the learner contract (the three methods a learner class provides)."""
    import lincls.learners

    page = (ROOT / "docs" / "api" / "plugins.md").read_text()
    for name in ("register_learner", "register_bound", "Bound"):
        assert re.search(rf"::: lincls\.plugins\n(    .*\n)*        - {name}\n", page), name
    assert "::: lincls.learners.OnlineBinaryClassifier" in page
    contract = lincls.learners.OnlineBinaryClassifier.__doc__ or ""
    for method in ("_check_params", "_init_weights", "_run_pass"):
        assert f"        - {method}\n" in page and f"``{method}" in contract, method
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    assert "api/plugins.md" in str(nav)


def test_a_study_of_your_own_runs_from_a_folder_of_yours(tmp_path):
    """The sweeps page's own study: its YAML written where the page says, in a folder outside the
    checkout, and its command run there as the page shows it (``--config-dir``, which a wheel
    install needs: its ``conf/`` is inside site-packages); the runs carry the study's name."""
    page = (ROOT / "docs" / "howto" / "sweeps.md").read_text()
    section = page.split("### A study of your own", 1)[1]
    where = re.search(r"This one is `([^`]+\.yaml)`", section).group(1)
    study_yaml = re.search(r"```yaml\n(.*?)```", section, flags=re.DOTALL).group(1)
    command = re.search(r"```console\n\$ (.*)\n```", section).group(1)
    name = yaml.safe_load(study_yaml)["study"]
    assert command.split()[0] == "lincls" and "--config-dir" in command
    assert not tmp_path.is_relative_to(ROOT)
    (tmp_path / where).parent.mkdir(parents=True)
    (tmp_path / where).write_text(study_yaml)
    done = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=environment(tmp_path), capture_output=True,
        text=True, timeout=COMMAND_TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"sweep {name}: 4 jobs: 4 finished, 0 failed" in done.stdout + done.stderr

    import lincls

    runs = lincls.study(name, store=tmp_path / "results" / "mlflow.db").runs()
    assert len(runs) == 4
    assert sorted(runs["learner"]) == ["passive_aggressive"] * 2 + ["perceptron"] * 2
