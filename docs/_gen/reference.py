"""The reference pages, written from the code (``make reference``, through ``pages.py`` beside
this file, which keeps them in docs/reference/ and fails the build on one that differs).

Learners and datasets come from ``lincls.registry`` with their schemas (``lincls.config``) and the
comments of their YAML files (``conf/``); bounds from ``lincls.bounds.REGISTRY``; the config keys
from the schemas; the peer checks from the tests that compare a learner with scikit-learn or river.
The metrics and tags a run logs are in ``logged.py`` beside this file.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf"
TESTS = ROOT / "tests"
# the two bounds whose statement function is not named after the bound (``<name>`` or
# ``<name>_bound`` in the module that registers it)
STATEMENTS = {"voted_fs99": "voted_test_error", "mira_pa1_kesler": "mira_bound"}
PEER_PACKAGES = ("sklearn", "river")


def prose(text: str) -> str:
    """Text read alike by MkDocs and a code forge: ``<``, ``>`` and ``&`` written as entities
    outside code spans (a raw ``<home>`` would be taken for an HTML tag and vanish)."""
    parts = str(text).split("`")
    for i in range(0, len(parts), 2):  # the even parts lie outside code spans
        parts[i] = parts[i].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def cell(text: str) -> str:
    """Text fit for one Markdown table cell: ``prose`` on one line, a pipe escaped."""
    return prose(" ".join(str(text).split())).replace("|", "\\|")


def code(text: str) -> str:
    """``text`` as code in a table cell: each alternative of a type union its own code span,
    joined by an escaped pipe (``str | None`` in one span shows its backslash on the site, and
    splits the cell on a forge)."""
    alternatives = [" ".join(part.split()) for part in str(text).split("|")]
    return " \\| ".join(f"`{part}`" for part in alternatives)


def doc_text(obj: object) -> str:
    """An object's docstring, dedented, reST's ``double backticks`` as Markdown code."""
    doc = inspect.getdoc(obj) or ""
    return re.sub(r"``([^`]+)``", r"`\1`", doc)


def first_paragraph(obj: object) -> str:
    """The first paragraph of an object's docstring, on one line."""
    return " ".join(doc_text(obj).split("\n\n")[0].split())


def yaml_comments(path: Path, section: str = "") -> dict[str, str]:
    """``key: value  # comment`` of a config file: each key's comment, at the top level or in
    the block ``section:``."""
    found: dict[str, str] = {}
    if not path.is_file():
        return found
    lines = path.read_text().splitlines()
    if section:
        start = lines.index(f"{section}:") + 1
        end = next((i for i in range(start, len(lines)) if not lines[i].startswith(" ")), None)
        lines = [line.strip() for line in lines[start:end]]
    key = None  # the key whose comment a comment-only line continues
    for line in lines:
        match = re.match(r"^([A-Za-z_]\w*):[^#]*#\s*(.*)$", line)
        if match:
            key = match.group(1)
            found[key] = match.group(2)
        elif key is not None and line.strip().startswith("#"):
            found[key] += " " + line.strip().lstrip("#").strip()
        else:
            key = None
    return found


def yaml_title(path: Path) -> str:
    """The comment lines a config file opens with (Hydra's ``# @package`` line left out)."""
    lines = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        if not line.startswith("#"):
            break
        if not line.startswith("# @package"):
            lines.append(line.lstrip("# ").strip())
    return " ".join(lines)


def schema_table(schema: type, yaml: Path, prefix: str, section: str = "") -> list[str]:
    """The options of a schema: key, type, default and its config file's comment."""
    comments = yaml_comments(yaml, section)
    rows = ["| key | type | default | meaning (the config file's comment) |", "|---|---|---|---|"]
    for f in dataclasses.fields(schema):
        if f.name == "name":
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = "–"
        if str(default) == "???":
            default = "required"
        if dataclasses.is_dataclass(default):
            shown = f"its keys: [`{f.name}.*`](#{f.name})"
        elif default in ("–", "required"):
            shown = default
        else:
            shown = code(default)
        rows.append(
            f"| `{prefix}{f.name}` | {code(f.type)} | {shown} | {cell(comments.get(f.name, ''))} |"
        )
    return rows


def peer_checks() -> dict[str, list[str]]:
    """Per learner class name, the tests (``file::test``) that compare it with a peer: a test
    whose body, or a helper it calls, names both the class and a class imported from scikit-learn
    or river."""
    found: dict[str, list[str]] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        source = path.read_text()
        tree = ast.parse(source)
        peers = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and (node.module or "").split(".")[0] in PEER_PACKAGES
            for alias in node.names
            if alias.name[0].isupper() and not alias.name.endswith(("Warning", "Error"))
        }
        if not peers:
            continue
        funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}

        def text(name: str, seen: set[str], source=source, funcs=funcs) -> str:
            if name in seen:
                return ""
            seen.add(name)
            calls = {x.id for x in ast.walk(funcs[name]) if isinstance(x, ast.Name)} & set(funcs)
            own = ast.get_source_segment(source, funcs[name]) or ""
            return own + "".join(text(c, seen) for c in sorted(calls))

        for name in funcs:
            if not name.startswith("test"):
                continue
            body = text(name, set())
            if not any(re.search(rf"\b{re.escape(p)}\b", body) for p in peers):
                continue
            for word in set(re.findall(r"\b[A-Z]\w*\b", body)):
                found.setdefault(word, []).append(f"{path.name}::{name}")
    return found


def built_in_learners() -> dict[str, type]:
    """The learners lincls ships, by config name (none a plugin registered in this process)."""
    from lincls.plugins import LEARNERS as PLUGINS
    from lincls.registry import LEARNERS

    return {name: cls for name, cls in LEARNERS.items() if name not in PLUGINS}


def built_in_bounds() -> list:
    """The ``BoundSpec`` of each bound lincls ships (none a plugin registered in this process)."""
    from lincls import bounds
    from lincls.plugins import BOUNDS as PLUGINS

    return [spec for spec in bounds.REGISTRY if spec.name not in PLUGINS]


def bound_family_literals(module) -> set[str]:
    """The learner families (``bound_family``) a bound module names."""
    return set(re.findall(r'"([a-z_]+)"', inspect.getsource(module)))


def learners_page() -> str:
    from lincls.config import LEARNER_SCHEMAS

    peers = peer_checks()
    out = [
        "# Learners",
        "",
        "Written from the code (`make reference`): each learner of `lincls.registry.LEARNERS` (the "
        "name `learner=…` takes), its docstring, its options from its schema in "
        "`lincls.config` with the comments of `conf/learner/<name>.yaml`, the bounds that may "
        "apply to it, and the tests that hold it to a peer implementation.",
        "",
    ]
    for name, cls in built_in_learners().items():
        family = cls.__dict__.get("bound_family")
        if isinstance(family, property):
            family_text = "depends on its options (a property)"
            family_value = None
        else:
            family_value = family
            family_text = f"`{family}`" if family else "none: no mistake bound covers the rule"
        specs = []
        if family_value or isinstance(family, property):
            for spec in built_in_bounds():
                module = inspect.getmodule(spec.check)
                literals = bound_family_literals(module)
                if family_value in literals or (
                    isinstance(family, property) and "perceptron" in literals
                ):
                    specs.append(spec.name)
        yaml = CONF / "learner" / f"{name}.yaml"
        out += [f"## `{name}`", "", f"`{cls.__module__}.{cls.__name__}`", ""]
        rule, _, rest = doc_text(cls).partition("\n\n")
        out += [" ".join(rule.split()), ""]
        if rest.strip():  # numpydoc sections: as written, not as Markdown headings
            out += ['??? note "Its docstring: parameters and attributes"', "", "    ```text"]
            out += [f"    {line}".rstrip() for line in rest.splitlines()]
            out += ["    ```", ""]
        if yaml_title(yaml):
            out += [f"Its config file says: {prose(yaml_title(yaml))}", ""]
        out += [f"**Bound family:** {family_text}."]
        if specs:
            links = ", ".join(f"[`{s}`](bounds.md#{s})" for s in specs)
            out += [f"**Bounds that may apply:** {links} (each checks the run's options)."]
        out.append("")
        schema = LEARNER_SCHEMAS.get(name)
        if schema is not None:
            out += ["**Options** (`learner.<key>=…`):", "", *schema_table(schema, yaml, ""), ""]
        checks = sorted(set(peers.get(cls.__name__, [])))
        if checks:
            out += ["**Peer checks** (tests comparing it with scikit-learn or river):", ""]
            out += [f"- `tests/{c}`" for c in checks]
        else:
            out += ["**Peer checks:** none (no test compares it with scikit-learn or river)."]
        out.append("")
    return "\n".join(out)


def source_status(spec) -> tuple[str, str]:
    """(status, citation) of a bound as its registry entry records it (``BoundSpec.source``)."""
    source = getattr(spec, "source", None)
    if source is None:
        return "not recorded", "the registry records no source for this bound"
    return source.status, source.citation


def bounds_page() -> str:
    from lincls import bounds

    out = [
        "# Bounds",
        "",
        "Written from `lincls.bounds.REGISTRY` (`make reference`). For each bound: the statement "
        "(the docstring of the function that computes it), the learner family it covers, its "
        "family (a priori or a posteriori, see [the two families](../explanation/families.md)), "
        "whether it is evaluated at a best comparator ([best comparators]"
        "(../explanation/best-comparators.md)), and its source as the registry records it "
        "(`BoundSpec.source`): *published* (a paper's theorem as published, its statement read), "
        "*derived* (proved in lincls for the rule it runs), *not read* (a paper's theorem whose "
        "statement was not read, checked numerically only) or *not covered* (the paper's "
        "theorem does not cover what lincls computes), with its citation.",
        "",
        "| bound | kind | family | about | best comparator | source |",
        "|---|---|---|---|---|---|",
    ]
    sections = []
    for spec in built_in_bounds():
        module = inspect.getmodule(spec.check)
        func_name = STATEMENTS.get(spec.name)
        func = getattr(module, func_name, None) if func_name else None
        for candidate in (spec.name, f"{spec.name}_bound"):
            func = func or getattr(module, candidate, None)
        statement = doc_text(func) if func else ""
        status, citation = source_status(spec)
        families = sorted(bound_family_literals(module) & known_families())
        best = "yes" if spec.best is not None else "no (not a convex set, or not defined)"
        about = "the presented sequence" if spec.sequence else "every sequence of its γ and R"
        if spec.kind != "mistakes":
            about = "the final hypothesis's expected test error"
        fam = "a posteriori" if spec.family == bounds.A_POSTERIORI else "a priori"
        out.append(
            f"| [`{spec.name}`](#{spec.name}) | {spec.kind} | {fam} | {about} "
            f"| {best.split(' ')[0]} | {status} |"
        )
        sections += [f"## `{spec.name}` {{ #{spec.name} }}", ""]
        where = f"{module.__name__}.{func.__name__}" if func else module.__name__
        sections += [f"`{where}`", "", statement or first_paragraph(module), ""]
        sections += [
            f"- **Covers:** learners whose `bound_family` is "
            f"{', '.join(f'`{f}`' for f in families) or 'named in its module'}; the check "
            f"`{module.__name__}.{spec.check.__name__}` says on each run why it does not apply.",
            f"- **Kind:** {spec.kind}; **family:** {fam}; **about:** {about}.",
            f"- **Best comparator:** {best}.",
            f"- **Source:** {status}: {cell(citation)}.",
            "",
        ]
    return "\n".join([*out, "", *sections])


def known_families() -> set[str]:
    """Every learner family value a learner class declares."""
    return {
        c.__dict__.get("bound_family")
        for c in built_in_learners().values()
        if isinstance(c.__dict__.get("bound_family"), str)
    } | {"perceptron"}


def dataset_options() -> dict[str, Callable[..., Any]]:
    """Every option of the config group ``dataset`` (its YAML files, as ``lincls run`` lists
    them) with the function that makes or loads it, in the registry's order; an option without a
    function, or a function without an option, is an error (the page would miss or invent one)."""
    import lincls.search  # noqa: F401  (registers dataset=search, above the registry)
    from lincls.experiments.arguments import group_options
    from lincls.registry import DATASETS

    options = group_options("dataset")
    unmatched = sorted(set(options) ^ set(DATASETS))
    if unmatched:
        raise LookupError(
            f"datasets without both a conf/dataset/ file and a function in DATASETS: {unmatched}"
        )
    return dict(DATASETS)


def datasets_page() -> str:
    from lincls.config import DATASET_SCHEMAS

    out = [
        "# Datasets",
        "",
        "Written from the options of the config group `dataset` (`make reference`; the files "
        "`conf/dataset/<name>.yaml`) and `lincls.registry.DATASETS`: the name `dataset=…` "
        "takes, the function that makes or loads it, its docstring, and its options from its "
        "schema with the comments of its YAML file.",
        "",
    ]
    for name, func in dataset_options().items():
        yaml = CONF / "dataset" / f"{name}.yaml"
        out += [f"## `{name}`", "", f"`{func.__module__}.{func.__name__}`", ""]
        if yaml_title(yaml):
            out += [prose(yaml_title(yaml)), ""]
        out += [textwrap.indent(first_paragraph(func), ""), ""]
        schema = DATASET_SCHEMAS.get(name)
        if schema is not None:
            out += ["Options (`dataset.<key>=…`):", "", *schema_table(schema, yaml, ""), ""]
    return "\n".join(out)


def config_page() -> str:
    from lincls.config import CertificatesConfig, RunSchema, TrackingConfig

    yaml = CONF / "config.yaml"
    out = [
        "# Configuration keys",
        "",
        "Written from the schemas of `lincls.config` (`make reference`; with the comments of "
        "`conf/config.yaml`). Every key is typed: a wrong type, an unknown key or a value out of "
        "range is refused in one line naming the key, exit status 2, nothing written. The "
        "learner's and dataset's keys are on the [learners](learners.md) and "
        "[datasets](datasets.md) pages.",
        "",
        "## Top level",
        "",
        *schema_table(RunSchema, yaml, ""),
        "",
        "## `tracking.*`",
        "",
        *schema_table(TrackingConfig, yaml, "tracking.", "tracking"),
        "",
        "## `certificates.*`",
        "",
        *schema_table(CertificatesConfig, yaml, "certificates.", "certificates"),
        "",
        "## Studies",
        "",
        "The named studies of `conf/experiment/` (`experiment=<name>`), with their files' "
        "opening comments:",
        "",
    ]
    for path in sorted((CONF / "experiment").glob("*.yaml")):
        out.append(f"- `{path.stem}`: {cell(yaml_title(path))}")
    return "\n".join(out) + "\n"


PAGES = {
    "reference/learners.md": learners_page,
    "reference/bounds.md": bounds_page,
    "reference/datasets.md": datasets_page,
    "reference/config.md": config_page,
}
