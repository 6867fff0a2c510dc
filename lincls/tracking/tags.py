"""The tags a run carries and the names they go by, shared by single runs, sweeps and reports.

A run is tagged from its creation with what it is (learner, dataset, config hash, lincls version,
git commit), which study it belongs to and its role (``run``, or ``sweep`` for a sweep's parent),
and which process writes it (host and pid, so a later sweep can tell a dead writer).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import subprocess
from collections.abc import Mapping
from typing import Any

import lincls
from lincls.config.run import RunConfig
from lincls.paths import project_root

ADHOC_STUDY = "adhoc"
ROLE_TAG = "lincls.role"
STUDY_TAG = "lincls.study"
HASH_TAG = "lincls.config_hash"
OVERRIDES_TAG = "lincls.overrides"
VARYING_TAG = "lincls.varying"  # this run's values of the keys its sweep varies
HOST_TAG = "lincls.host"
PID_TAG = "lincls.pid"
PARENT_TAG = "mlflow.parentRunId"
COMMIT_TAG = "mlflow.source.git.commit"
LABEL_TAG = "learner_label"
NOTE_TAG = "mlflow.note.content"  # the run's description in the MLflow UI
SOURCE_TAGS = {"mlflow.source.name": "lincls", "mlflow.source.type": "LOCAL"}

# The learner options that make a different update rule, not just another setting of one: the
# label shows them always (a report or a Group by never pools bias=none with bias=feature).
RULE_OPTIONS = (
    "bias", "variant", "kernel", "schedule", "prediction", "solver",
    "aggressive", "plus", "diagonal",
)  # fmt: skip
# Compact names of config keys in run names.
SHORT = {"dataset.margin": "γ", "dataset.radius": "R", "dataset.n": "n", "dataset.d": "d"}
DEFAULT_ORDER = "fixed"  # conf/config.yaml's order: names leave it out


def study_of(config: RunConfig | Mapping[str, Any]) -> str:
    """The study a config belongs to (the top-level ``study`` key), else ``adhoc``."""
    return str(RunConfig.of(config, checked=False).study or ADHOC_STUDY)


def process_tags() -> dict[str, str]:
    """Where a run is being written from, so a later sweep can tell a dead writer."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}


@functools.cache
def git_commit() -> str | None:
    """The commit of the source tree, when lincls runs from a git checkout."""
    root = project_root()
    if root is None:
        return None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def commit_tags() -> dict[str, str]:
    """The git commit of the source tree, when it is a checkout."""
    commit = git_commit()
    return {COMMIT_TAG: commit} if commit else {}


def learner_label(learner_cfg: Mapping[str, Any]) -> str:
    """``name (bias=…, variant=…)``: the learner and the options that choose its update rule."""
    name = str(learner_cfg.get("name"))
    rule = [f"{k}={learner_cfg[k]}" for k in RULE_OPTIONS if learner_cfg.get(k) is not None]
    if learner_cfg.get("plus") and learner_cfg.get("margin_rule") is not None:
        # Projectron++'s margin step: the paper's rule and DOGMA's are two rules, two rows
        rule.append(f"margin_rule={learner_cfg['margin_rule']}")
    return f"{name} ({', '.join(rule)})" if rule else name


def _short(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def run_name(config: RunConfig | Mapping[str, Any], overrides: str = "") -> str:
    """A compact name that tells runs apart: learner[rule], γ, R, seed, dataset, the order when
    not the default ``fixed``, then the other values the sweep set for this run (``overrides``),
    e.g. ``perceptron[none] γ=0.05 R=1 s0 separable lr=0.1``.

    What a sweep most often varies comes first (the learner, the data's margin and radius, the
    seed): MLflow's UI cuts a long name at its end (the runs table's column, the Chart tab's list
    of ~150 px), and the dataset has its own column in the view. Every part of the config a sweep
    sets is in the name, so two configs never share one.
    A plain ``config`` is read as given (``RunConfig.unchecked``): a refused one is named too."""
    config = RunConfig.of(config, checked=False)
    learner, dataset = config.learner, config.dataset
    rule = [str(learner[k]) for k in RULE_OPTIONS if learner.get(k) is not None]
    parts = [f"{learner.get('name')}[{','.join(rule)}]" if rule else str(learner.get("name"))]
    shown = {"learner", "dataset", "order", "seed", "study", "experiment"}
    shown |= {f"learner.{k}" for k in RULE_OPTIONS} | {"learner.name", "dataset.name"}
    for key in ("dataset.margin", "dataset.radius"):
        value = dataset.get(key.split(".")[1])
        if value is not None:
            parts.append(f"{SHORT[key]}={_short(value)}")
            shown.add(key)
    parts.append(f"s{0 if config.seed is None else config.seed}")
    parts.append(str(dataset.get("name")))
    order = str(config.order)
    if order != DEFAULT_ORDER:
        parts.append(order)
    for item in overrides.split():
        key, _, value = item.partition("=")
        key = key.lstrip("+~")
        if key not in shown and not key.startswith(("hydra", "tracking")):
            shown.add(key)
            parts.append(f"{SHORT.get(key, key.rpartition('.')[2])}={value}")
    return " ".join(parts)


def config_hash(config: RunConfig | Mapping[str, Any]) -> str:
    """A stable hash of a resolved config, tracking settings left out: of a ``RunConfig``, that
    of the container it was built from (``raw``), so typing it changed no hash."""
    raw = config.raw if isinstance(config, RunConfig) else config
    body = {k: v for k, v in raw.items() if k != "tracking"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_tags(
    config: RunConfig | Mapping[str, Any], extra_tags: Mapping[str, str] | None = None
) -> dict:
    """The tags a run carries from its creation: version, config hash, names, study, writer.
    A plain ``config`` is read as given (``RunConfig.unchecked``): a refused one is tagged too."""
    config = RunConfig.of(config, checked=False)
    return {
        "lincls.version": lincls.__version__,
        HASH_TAG: config_hash(config),
        "learner": str(config.learner.get("name")),
        LABEL_TAG: learner_label(config.learner),
        "dataset": str(config.dataset.get("name")),
        ROLE_TAG: "run",
        STUDY_TAG: study_of(config),
        **process_tags(),
        **SOURCE_TAGS,
        **(extra_tags or {}),
        **commit_tags(),
    }


def run_name_of(config: RunConfig | Mapping[str, Any], tags: Mapping[str, str]) -> str:
    """``tracking.run_name``, else ``run_name`` of the config and its sweep overrides."""
    config = RunConfig.of(config, checked=False)
    given = config.tracking.run_name
    return given or run_name(config, tags.get(VARYING_TAG, tags.get(OVERRIDES_TAG, "")))
