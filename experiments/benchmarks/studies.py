"""Studies: the property checks on studies of the size users reach (the tests marked ``study``:
10,000 runs or instances a theorem, each against its bound), run here rather than in
``make test``, which checks the same properties on their 300- to 1,500-instance versions (the
random instances of every theorem: 1,000 a theorem there).

Each test is a row: its wall time and its outcome (``passed``, else ``FAILED`` with pytest's
one-line reason). Two workers, as ``make test`` runs. ``--quick`` runs the small versions instead
(a smoke test of the harness). The section needs the source tree's ``tests/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from lincls.experiments.bench import Row

ROOT = Path(__file__).resolve().parents[2]
QUICK = ["-k", "fifteen_hundred or three_hundred_instances"]


def _outcome(case: ElementTree.Element) -> str:
    """``passed``, or ``FAILED``/``skipped`` with pytest's first line of why."""
    for kind, word in (("failure", "FAILED"), ("error", "FAILED"), ("skipped", "skipped")):
        found = case.find(kind)
        if found is not None:
            message = (found.get("message") or "").splitlines()[:1]
            return " ".join([word, *message])[:200]
    return "passed"


def _row(case: ElementTree.Element) -> Row:
    where = case.get("file") or case.get("classname")
    return Row("studies", f"{where}::{case.get('name')}", float(case.get("time") or 0.0),
               note=_outcome(case))  # fmt: skip


def run(quick: bool = False) -> list[Row]:
    """One row a study test: its seconds and outcome."""
    tests = ROOT / "tests"
    if not tests.is_dir():
        return [Row("studies", "tests/ not found", 0.0, note="the section needs the source tree")]
    selection = QUICK if quick else ["-m", "study"]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "studies.xml"
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
             "-o", "junit_family=xunit1", f"--junitxml={report}", *selection, str(tests)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False,
        )  # fmt: skip
        if not report.exists():
            return [Row("studies", "pytest", 0.0, note="FAILED: pytest wrote no report")]
        cases = ElementTree.parse(report).getroot().iter("testcase")
        return [_row(case) for case in cases]
