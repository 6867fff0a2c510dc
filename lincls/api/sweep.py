"""``lincls.sweep``: a grid run by the sweeper, as ``lincls run -m`` runs it, in a process of its
own; its progress lines go to this process's stderr (a notebook shows them as the CLI's).
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lincls.api.compose import hydra_value, run_overrides, sweep_line
from lincls.api.study import EXPERIMENT, Study, study
from lincls.errors import LinclsInputError, check_number
from lincls.paths import store_uri

_PARENT = re.compile(r"parent run ([0-9a-f]{32})")
_ERROR = re.compile(r"^error: (?P<field>[^:]+): (?P<problem>.*)$")


class SweepError(RuntimeError):
    """A sweep that exited non-zero: its message is the sweep's last error line; ``returncode``
    and ``parent_run_id`` (None: it stopped before making one) say what is left."""

    def __init__(self, message: str, returncode: int, parent_run_id: str | None) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.parent_run_id = parent_run_id


def sweep_command(
    grid: Mapping[str, Sequence[Any]],
    learner: str | Mapping[str, Any],
    dataset: str | Mapping[str, Any],
    study_name: str | None,
    uri: str,
    jobs: int,
    fixed: Mapping[str, Any],
    overrides: Sequence[str] = (),
) -> list[str]:
    """The command line of the sweep: ``python -m lincls.experiments.run -m <overrides>``."""
    if not isinstance(grid, Mapping):
        raise LinclsInputError("grid", f"must be a dict of key → list of values, got {grid!r}")
    check_number("jobs", jobs, low=1, integer=True)
    swept = [sweep_line(str(key), values) for key, values in grid.items()]
    # the grid last, as Hydra's own lines: a swept learner or dataset is not chosen again
    lines = run_overrides(learner, dataset, fixed, [*overrides, *swept])
    lines.append(f"tracking.uri={hydra_value('store', uri)}")
    if study_name is not None:
        lines.append(f"study={hydra_value('study', study_name)}")
    if jobs != 1:
        lines.append(f"hydra.launcher.n_jobs={int(jobs)}")
    return [sys.executable, "-m", "lincls.experiments.run", "-m", *lines]


def _run_passing_stderr(command: list[str]) -> tuple[int, list[str]]:
    """Run ``command``; each of its stderr lines is written to this process's stderr as it
    comes; (exit status, its stderr lines). Its stdout is read (so it never blocks) and dropped:
    a sweep's jobs print nothing there that the progress lines do not say."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    drain = threading.Thread(target=process.stdout.read, daemon=True)
    drain.start()
    lines = []
    try:
        for line in process.stderr:
            lines.append(line.rstrip("\n"))
            sys.stderr.write(line)
            sys.stderr.flush()
    except BaseException:  # Ctrl-C in the notebook: the sweep is told, as the CLI's would be
        process.send_signal(2)
        process.wait()
        raise
    drain.join()
    return process.wait(), lines


def sweep(
    grid: Mapping[str, Sequence[Any]],
    *,
    learner: str | Mapping[str, Any] = "perceptron",
    dataset: str | Mapping[str, Any] = "separable",
    study: str | None = None,
    store: str | Path | None = None,
    jobs: int = 1,
    overrides: Sequence[str] = (),
    **fixed: Any,
) -> Study:
    """Run every config of ``grid`` (config key → list of values: ``{"dataset.n": [100, 200]}``)
    through the sweeper, as ``lincls run -m`` does: one parent run, a child run per config,
    the progress lines on stderr; return the sweep's ``Study``.

    ``learner``, ``dataset``, ``fixed`` keys and ``overrides``: as for ``lincls.run``; ``study``
    tags the runs (None: ``adhoc``); ``jobs`` > 1 measures in that many processes. Bad input
    raises ``LinclsInputError`` before anything is stored; a sweep in which a config has no
    FINISHED run raises ``SweepError`` with the sweep's last error line.

    >>> demo = lincls.sweep({"dataset.n": [40, 60], "learner.lr": [0.5, 1.0]},
    ...                     dataset={"n_test": 20}, study="demo", store=store)
    >>> demo
    Study('demo': 4 runs, parent run ...)
    """
    uri = store_uri(store)
    command = sweep_command(grid, learner, dataset, study, uri, jobs, fixed, overrides)
    code, lines = _run_passing_stderr(command)
    parent = next((m.group(1) for line in lines if (m := _PARENT.search(line))), None)
    if code != 0:
        errors = [line for line in lines if line.startswith("error: ")]
        if code == 2 and errors and (found := _ERROR.match(errors[-1])):
            raise LinclsInputError(found.group("field"), found.group("problem"))
        last = errors[-1] if errors else next((x for x in reversed(lines) if x.strip()), "")
        raise SweepError(last.strip() or f"the sweep exited with status {code}", code, parent)
    if parent is None:
        raise SweepError("the sweep named no parent run", code, None)
    return study_of(parent, uri)


def study_of(parent: str, uri: str) -> Study:
    """The ``Study`` of the sweep whose parent run is ``parent``."""
    return study(parent, uri, EXPERIMENT)
