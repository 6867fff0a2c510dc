"""The tags a run carries and the names they go by, shared by single runs, sweeps and reports.

A run is tagged from its creation with what it is (learner, dataset, config hash, lincls version,
git commit), which study it belongs to and its role (``run``, or ``sweep`` for a sweep's parent),
and which process writes it (host and pid, so a later sweep can tell a dead writer).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Mapping
from typing import Any

import lincls
from lincls import tracking

ADHOC_STUDY = "adhoc"
ROLE_TAG = "lincls.role"
STUDY_TAG = "lincls.study"
HASH_TAG = "lincls.config_hash"
OVERRIDES_TAG = "lincls.overrides"
HOST_TAG = "lincls.host"
PID_TAG = "lincls.pid"
PARENT_TAG = "mlflow.parentRunId"
COMMIT_TAG = "mlflow.source.git.commit"


def study_of(config: Mapping[str, Any]) -> str:
    """The study a config belongs to (the top-level ``study`` key), else ``adhoc``."""
    return str(config.get("study") or ADHOC_STUDY)


def process_tags() -> dict[str, str]:
    """Where a run is being written from, so a later sweep can tell a dead writer."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}


def commit_tags() -> dict[str, str]:
    """The git commit of the source tree, when it is a checkout."""
    commit = tracking.git_commit()
    return {COMMIT_TAG: commit} if commit else {}


def config_hash(config: Mapping[str, Any]) -> str:
    """A stable hash of a resolved config, tracking settings left out."""
    body = {k: v for k, v in config.items() if k != "tracking"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_tags(config: Mapping[str, Any], extra_tags: Mapping[str, str] | None = None) -> dict:
    """The tags a run carries from its creation: version, config hash, names, study, writer."""
    return {
        "lincls.version": lincls.__version__,
        HASH_TAG: config_hash(config),
        "learner": str((config.get("learner") or {}).get("name")),
        "dataset": str((config.get("dataset") or {}).get("name")),
        ROLE_TAG: "run",
        STUDY_TAG: study_of(config),
        **process_tags(),
        **(extra_tags or {}),
        **commit_tags(),
    }


def run_name_of(config: Mapping[str, Any], tags: Mapping[str, str]) -> str:
    """``tracking.run_name``, else ``<learner>-<dataset>``."""
    return (config.get("tracking") or {}).get("run_name") or f"{tags['learner']}-{tags['dataset']}"
