"""Sections of the report that belong to one study (a reproduction of a paper), appended to the
common report when the runs hold that study's runs: ``fs99`` (Freund & Schapire 1999) and
``kwa97`` (Kivinen, Warmuth & Auer 1997)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from lincls.experiments.report import fs99, kwa97


def study_sections(client, runs: pd.DataFrame, out_dir: Path) -> tuple[str, list[Path]]:
    """The markdown of every study section that applies to ``runs``, and the figures it wrote
    into ``out_dir``."""
    lines: list[str] = []
    drawn: list[Path] = []
    if fs99.is_fs99(runs):
        more, files = fs99.section(client, runs, out_dir)
        lines += more
        drawn += files
    if kwa97.is_kwa97(runs):
        more, files = kwa97.section(client, runs, out_dir)
        lines += more
        drawn += files
    return "".join(f"{line}\n" for line in lines), drawn
