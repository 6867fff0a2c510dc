"""What ``lincls run`` reads before Hydra: its help, and ``--store``.

Hydra's own ``--help`` composes the whole config to print it (~4–7 s with its imports) and lists
every config group option twice (each YAML file and the schema behind it). ``run_help`` is read
from the YAML files of the package ``lincls.conf`` alone, in a process that imports neither
Hydra, MLflow nor numba. ``with_store`` turns ``--store URI`` into the ``tracking.uri`` override,
so the store is one option name across ``lincls run``, ``lincls report`` and ``lincls ui``.
"""

from __future__ import annotations

import importlib.resources
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

from lincls import paths
from lincls.errors import LinclsInputError

CONF_PACKAGE = "lincls.conf"
GROUPS = ("learner", "dataset")  # the config groups a user chooses an option of
SCHEMA_SUFFIX = "_schema"  # the structured config behind a YAML option: not an option itself
HELP_FLAGS = ("-h", "--help")
# Hydra's options that take a value (the next argument), so that value is no override
VALUED = ("--config-dir", "-cd", "--config-path", "-cp", "--config-name", "-cn", "--cfg", "-c",
          "--package", "-p", "--info", "-i", "--experimental-rerun")  # fmt: skip
WIDTH = 96


def conf_dir() -> Path:
    """The folder of the package ``lincls.conf`` (conf/ of a checkout)."""
    return Path(str(importlib.resources.files(CONF_PACKAGE)))


def group_options(group: str, folders: Sequence[Path] = ()) -> list[str]:
    """The options of config group ``group``: its YAML files in ``lincls.conf`` (and in each of
    ``folders``, a ``--config-dir``), never a ``_schema`` node."""
    found = set()
    for root in (conf_dir(), *folders):
        found.update(p.stem for p in (Path(root) / group).glob("*.yaml"))
    if group == "learner":  # and those installed packages register (lincls.plugins)
        from lincls.plugins import group_options as registered

        found.update(registered(group))
    return sorted(name for name in found if not name.endswith(SCHEMA_SUFFIX))


def _summary(path: Path, limit: int) -> str:
    """The first sentence of a YAML file's opening comment, cut to ``limit`` characters."""
    words = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        if not line.startswith("# @package"):
            words.append(line.lstrip("#").strip())
    text = " ".join(words)
    sentence = re.split(r"(?<=[.?!])\s", text, maxsplit=1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rsplit(" ", 1)[0] + " …"


def _wrapped(head: str, items: Sequence[str], indent: int = 4) -> list[str]:
    return textwrap.wrap(
        f"{head}: {', '.join(items)}",
        WIDTH,
        initial_indent="  ",
        subsequent_indent=" " * indent,
        break_on_hyphens=False,
    )


def run_help(program: str = "lincls run") -> str:
    """``lincls run --help``: usage, options, the config groups' options, the experiments (named
    studies), and where runs, Hydra's files and reports go."""
    conf = conf_dir()
    experiments = sorted((conf / "experiment").glob("*.yaml"))
    pad = max((len(p.stem) for p in experiments), default=0) + 2
    try:
        store = paths.resolve_tracking_uri()
    except LinclsInputError as exc:  # the help still shows, saying what is wrong
        store = f"none: {exc}"
    lines = [
        f"usage: {program} [--store URI] [-m] [key=value ...]",
        "",
        "One run: make the data, fit the learner, evaluate the mistake bounds, log one MLflow run.",
        "With -m, a sweep: the comma-separated values of the overrides are crossed into a grid",
        "(learner=perceptron,winnow seed=0,1,2 is 6 configs), each config a child run of one",
        "parent run that carries the sweep's study name.",
        "",
        "options:",
        "  -m, --multirun      sweep the grid of the overrides (and of experiment=NAME's grid)",
        "  experiment=NAME     a named study: its grid, its settings and its study name; with -m",
        "  study=NAME          the study the runs belong to; a sweep without one is the study",
        "                      adhoc-<keys>-<hash> of its overrides, printed when it starts",
        "                      (the same command again: the same study, its FINISHED configs",
        "                      skipped; tracking.skip_finished=false runs them again)",
        "  --store URI         the MLflow store: a tracking URI (sqlite:///…, postgresql://…,",
        "                      http://…) or a path to a SQLite .db file; as tracking.uri=URI",
        "  key=value           any config value: passes=20 dataset.margin=0.05 learner.lr=0.5",
        "  -h, --help          this text",
        "",
        "config groups (group=option):",
        *[line for group in GROUPS for line in _wrapped(group, group_options(group))],
        "",
        f"experiments ({program} -m experiment=NAME):",
        *[f"  {p.stem:<{pad}}{_summary(p, WIDTH - pad - 2)}" for p in experiments],
        "",
        "the config's keys and defaults, composed with any overrides (Hydra's commands):",
        f"  {program} learner=winnow --cfg job     the config a run would get",
        f"  {program} --info                       Hydra's search path and defaults tree",
        f"  {program} --hydra-help                 Hydra's own flags",
        "",
        "where things go:",
        "  runs     the store: --store, else $MLFLOW_TRACKING_URI, else $LINCLS_HOME/mlflow.db,",
        "           else ./results/mlflow.db of the working directory",
        f"           (here and now: {store})",
        "  files    each run's config and log: $LINCLS_HOME/hydra/ (else ./results/hydra/)",
        "  reports  lincls report STUDY writes <home>/<STUDY>/report.md and its plots",
        "           (home: $LINCLS_HOME, else ./results), also logged on the sweep's parent run",
        "  UI       lincls ui [--store URI], then the address it prints",
    ]
    return "\n".join(lines)


def wants_help(argv: Sequence[str]) -> bool:
    """Whether ``lincls run``'s arguments ask for its help (Hydra's parser reads ``-h`` and
    ``--help`` anywhere among them)."""
    return any(arg in HELP_FLAGS for arg in argv)


def store_uri(value: str, field: str = "--store") -> str:
    """The tracking URI of a ``--store`` value (:func:`lincls.paths.store_uri`'s rule)."""
    return paths.store_uri(value, field)


def with_store(argv: Sequence[str]) -> list[str]:
    """``lincls run``'s arguments with ``--store URI`` (or ``--store=URI``) as the override
    ``tracking.uri='URI'``, quoted so that no character of the URI is read as Hydra's syntax
    (a comma would make a sweep), and put among the other overrides: Hydra's parser takes its
    overrides as one run of arguments (``-m a=1 --config-dir d b=2`` is refused)."""
    rest: list[str] = []
    stores: list[str] = []
    items = list(argv)
    while items:
        arg = items.pop(0)
        if arg != "--store" and not arg.startswith("--store="):
            rest.append(arg)
            continue
        if arg == "--store":
            if not items:
                raise LinclsInputError("--store", "needs a tracking URI or a .db file's path")
            value = items.pop(0)
        else:
            value = arg.partition("=")[2]
        quoted = store_uri(value).replace("\\", "\\\\").replace("'", "\\'")
        stores.append(f"tracking.uri='{quoted}'")
    first = next(
        (
            i
            for i, arg in enumerate(rest)
            if "=" in arg and not arg.startswith("-") and (i == 0 or rest[i - 1] not in VALUED)
        ),
        len(rest),
    )
    return [*rest[:first], *stores, *rest[first:]]
