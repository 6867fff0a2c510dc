"""The report as markdown: ``report.md`` from the selection, the tables, the fits and the plots.

Only formatting happens here; the numbers come from ``tables`` and the figures from ``plots``
(a plot that was left out is one line saying why). Another format is another renderer beside
this one, taking the same arguments.
"""

from __future__ import annotations

import math
import os
import signal
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from lincls.bounds import RELATIVE_TOLERANCE
from lincls.experiments.report.collect import Selection, column
from lincls.experiments.report.plots import PLOTS
from lincls.experiments.report.spread import spread_lines
from lincls.experiments.report.tables import (
    THEORY_SLOPE_GAMMA,
    THEORY_SLOPE_RADIUS,
    TIGHTEST,
    SlopeFit,
    hyperplane_table,
    labels_of,
)

REPORT_FILE = "report.md"
RUNS_FILE = "runs.csv"
TOLERANCE = f"{RELATIVE_TOLERANCE:g}".replace("e-0", "e-")  # as written: 1e-9


# Which theorems speak of the presented sequence itself (``BoundSpec.sequence``), by the names the
# report gives them, and which of every sequence of the data's margin and radius
# (``tests/test_vacuity_words.py`` holds both lists equal to the registry's).
SEQUENCE_THEOREMS = {
    "Freund–Schapire's": ("freund_schapire",),
    "second-order": ("second_order",),
    "AROW": ("arow",),
    "CW": ("cw",),
    "SCW": ("scw1", "scw2"),
    "Forgetron": ("forgetron",),
    "Projectron": ("projectron", "projectron_plus", "projectron_plus_paper"),
}
EVERY_SEQUENCE_THEOREMS = {
    "Novikoff's and its kin": ("novikoff", "novikoff_bias", "novikoff_2r", "kernel_novikoff",
                               "margin_perceptron", "multiclass_perceptron"),
    "PA": ("pa", "pa1", "pa2", "mira_pa1_kesler"),
    "ROMMA": ("romma",),
    "ALMA": ("alma",),
    "Winnow": ("winnow1", "winnow2"),
    "Mohri–Rostamizadeh": ("mohri_rostamizadeh",),
}  # fmt: skip
VACUITY_RULE = (
    "A bound is **vacuous** on a run when no learner could make as many mistakes as it "
    "allows: a theorem about the presented sequence itself ("
    + ", ".join(SEQUENCE_THEOREMS)
    + ") at or above the examples the run presented; a theorem about every sequence of the "
    "data's margin and radius, however long ("
    + ", ".join(EVERY_SEQUENCE_THEOREMS)
    + "), at or above the most examples the run could present (passes × rows). A vacuous "
    "bound is counted in `vacuous`, has no ratio and is never a run's tightest."
)


def _num(x: float) -> str:
    """A ratio or slope for the table: 6 significant digits, always with a decimal point."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    text = f"{x:.6g}"
    return text if any(c in text for c in ".en") else f"{text}.0"


def _slope(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:+.3f}"


def _slack_lines(slack: pd.DataFrame | None) -> list[str]:
    """Which factor of Novikoff's proof keeps each learner × dataset from its bound."""
    if slack is None or slack.empty:
        return []
    lines = [
        "",
        "## Where the runs lose to Novikoff's bound",
        "",
        "mistakes / (R/γ)² = progress · angle · norm, each ≤ 1 (seed 000, Lemmas 1–2): progress "
        "= (kγ / w·u)², below 1 when mistakes moved w towards u by more than γ; angle = "
        "cos²(w, u); norm = ‖w‖² / (kR²), below 1 when mistakes grew ‖w‖² by less than R². "
        "Medians over the runs; the smallest holds the runs back.",
        "",
        "| learner | dataset | runs | progress | angle | norm | held back by |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for row in slack.itertuples(index=False):
        lines.append(
            f"| {row.learner} | {row.dataset} | {row.runs} | {_num(row.progress)} | "
            f"{_num(row.angle)} | {_num(row.norm)} | {row.held_back_by} |"
        )
    return lines


def _margin_lines(margins: pd.DataFrame) -> list[str]:
    """Per learner, its hyperplanes' margin as a fraction of the maximum margin (seed 004)."""
    if margins.empty:
        return []
    lines = [
        "",
        "## How close the learned hyperplanes come to the maximum margin",
        "",
        "The learned hyperplane's margin min y(w·x + b)/‖w‖ over the training data, divided by "
        "the data's maximum margin (the hard-margin SVM for the same class of hyperplanes: with "
        "an offset, or through the origin for a learner without a bias); separable data only. "
        "1 is the maximum-margin hyperplane; ≤ 0 one that puts a training example on the "
        "wrong side or on it (the fraction of such examples: `wrong side`).",
        "",
        "| learner | runs | median ratio | min ratio | max ratio | wrong side (median) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in margins.itertuples(index=False):
        lines.append(
            f"| {row.learner} | {row.runs} | {_num(row.median_ratio)} | {_num(row.min_ratio)} | "
            f"{_num(row.max_ratio)} | {_num(row.median_nonpositive)} |"
        )
    return lines


def running_lines(running: Mapping[str, tuple[int, int]]) -> list[str]:
    """A line for each sweep still writing runs: the report is of the runs so far."""
    return [
        f"- **Sweep `{parent}` is still running**: {max(jobs - made, 0)} of its {jobs} configs "
        "have no run yet, so this report covers the runs written so far (run it again when "
        "the sweep ends; it is not logged to the running sweep)."
        for parent, (jobs, made) in running.items()
    ]


def render(
    selection: Selection,
    table: pd.DataFrame,
    fits: list[SlopeFit],
    families: pd.DataFrame,
    plots: Mapping[str, str | None],
    slack: pd.DataFrame | None = None,
    margins: pd.DataFrame | None = None,
    learners: pd.Series | None = None,
) -> str:
    """``report.md``: the tables and, per plot, its image or the line saying why it is left out.

    ``margins`` (``tables.hyperplane_table``) and ``learners`` (the runs' ``learner_labels``) are
    computed from the runs when not given.
    """
    runs = selection.runs
    learners = labels_of(runs, learners)
    margins = hyperplane_table(runs, learners) if margins is None else margins
    flagged = int((column(runs, "tags.bound_violated") == "true").sum())
    lines = [
        f"# Study `{selection.study}`",
        "",
        f"- Runs: {runs.shape[0]} FINISHED (one per config, the newest)"
        + (
            "; left out: " + ", ".join(f"{n} {why}" for why, n in sorted(left_out.items()))
            if (left_out := selection.left_out)
            else ""
        ),
        "- Sweeps (parent runs, newest first): "
        + (", ".join(f"`{p}`" for p in selection.parents) or "none (runs outside any sweep)"),
        *running_lines(selection.running),
        f"- Learners: {', '.join(sorted(learners.unique()))}; datasets: "
        f"{', '.join(sorted(column(runs, 'tags.dataset').dropna().unique()))}",
        f"- Runs the runner tagged `bound_violated=true`: {flagged}",
        "",
        "## Mistake bounds per learner",
        "",
    ]
    if table.empty:
        lines.append("No run logged a mistake bound (see the runs' `bounds.skipped` tag).")
    else:
        total = int(table.loc[~table["bound"].isin(TIGHTEST), "violations"].sum())
        empty = table.loc[~table["bound"].isin(TIGHTEST), "vacuous"]
        lines += [
            f"A violation is mistakes > bound beyond the relative tolerance "
            f"{TOLERANCE} of "
            "`lincls.bounds.holds`; the ratio is mistakes / bound (1 = mistakes equal the "
            "bound). A priori bounds are functions of the data and a comparator; a posteriori "
            "ones (Mohri–Rostamizadeh) read the run's own mistake rounds, so the two are ranked "
            "apart: `tightest` is each run's smallest a priori bound, `tightest_a_posteriori` "
            "its smallest a posteriori one. " + VACUITY_RULE,
            "",
            "| learner | bound | family | runs | vacuous | violations | median ratio | max ratio "
            "| source |",
            "|---|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for row in table.itertuples(index=False):
            lines.append(
                f"| {row.learner} | {row.bound} | {row.family} | {row.runs} | {row.vacuous} | "
                f"{row.violations} | {_num(row.median_ratio)} | {_num(row.max_ratio)} | "
                f"{row.source} |"
            )
        lines += [
            "",
            f"Violations in all: **{total}**. Vacuous bound values in all: **{int(empty.sum())}**.",
        ]
    lines += ["", "## Dataset families", ""]
    for row in families.itertuples(index=False):
        if row.bounded_runs == 0:
            lines.append(f"- `{row.dataset}`: {row.runs} runs, none with a mistake bound")
            continue
        # A tight instance computes its bound as e.g. 9.000000000000002 for 9: 1 up to rounding.
        met = abs(row.min_ratio - 1.0) <= RELATIVE_TOLERANCE >= abs(row.max_ratio - 1.0)
        exact = f" (every run meets its bound: ratio 1 within {TOLERANCE})" if met else ""
        lines.append(
            f"- `{row.dataset}`: {row.runs} runs, tightest a priori bound ratio "
            f"{_num(row.min_ratio)} to {_num(row.max_ratio)}{exact}"
        )
    lines += [
        "",
        "## Scaling with γ and R",
        "",
        "Least squares log M = a + s_γ log γ + s_R log R per learner × dataset × order, with γ "
        "and R the certified margin and radius logged by each run. Novikoff's (R/γ)² gives "
        f"s_γ = {THEORY_SLOPE_GAMMA:+g} and s_R = {THEORY_SLOPE_RADIUS:+g} on worst-case orders "
        "(the orthonormal instance is one); a friendly order makes fewer mistakes and flatter "
        "slopes. rms is the residual in natural-log units. Each fit is over distinct "
        "configurations; a fit whose every run meets its bound exactly is marked an identity "
        "(its slopes are the bound's exponents by construction, not a finding).",
        "",
        "| learner | dataset | order | runs | s_γ | s_R | rms | note |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for fit in fits:
        lines.append(
            f"| {fit.learner} | {fit.dataset} | {fit.order} | {fit.runs} | "
            f"{_slope(fit.slope_gamma)} | {_slope(fit.slope_radius)} | "
            f"{'–' if math.isnan(fit.rms) else f'{fit.rms:.3g}'} | {fit.note} |"
        )
    lines += _slack_lines(slack)
    lines += _margin_lines(margins)
    lines += spread_lines(runs, learners)  # mean ± std over orderings, where runs logged it
    lines += ["", "## Plots", ""]
    for plot in PLOTS:
        why = plots.get(plot.file, "not drawn")
        if why is None:
            lines += [f"### {plot.title}", "", f"![{plot.title}]({plot.file})", ""]
        else:
            lines += [f"### {plot.title}", "", f"Left out: {why}.", ""]
    lines += [f"The runs, one per row: [`{RUNS_FILE}`]({RUNS_FILE}).", ""]
    return "\n".join(lines)


def _quoting_characters() -> str:
    """The ASCII characters that make ``csv.writer`` (pandas' writer, QUOTE_MINIMAL, "\\n" line
    ends) quote a field, asked of the module itself."""
    import csv
    import io

    found = []
    for code in range(128):
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow([f"a{chr(code)}b", "c"])
        if out.getvalue().startswith('"'):
            found.append(chr(code))
    return "".join(found)


def _csv_kind(values: pd.Series) -> str | None:
    """How ``_csv_cells`` writes a column: "number", "text", "empty" (no value at all), or None
    where ``DataFrame.to_csv`` would format it otherwise (another dtype)."""
    if values.dtype.kind in "fi":
        return "number"
    if isinstance(values.dtype, pd.StringDtype):
        return "text"
    if values.dtype == object and values.isna().all():
        return "empty"
    return None


def float_texts(values: Any) -> Any:
    """numpy's text of each float64 of ``values`` (``astype(str)``: Python's ``repr``), as an
    Arrow text array made by Arrow's cast (a million runs' ~10 million distinct numbers took
    ~25 s in numpy). The cast writes the same shortest digits in another layout: fixed from
    1e-6 to below 1e10, with no ".0" and one-digit exponents, where ``repr`` is fixed from 1e-4
    to below 1e16. A text whose layout differs by a ".0" or an exponent's zero is mended, and
    numpy writes the few whose layouts differ more (``tests/test_runs_csv.py``). A shortest text
    names one number, so which layout a number takes is known from its size."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    values = np.asarray(values, dtype=np.float64)
    texts = pc.cast(pa.array(values), pa.large_string())
    size = np.abs(values)
    with np.errstate(invalid="ignore"):  # NaN compares false: written as the cast writes it
        apart = ((size >= 1e-6) & (size < 1e-4)) | ((size >= 1e10) & (size < 1e16))
        short = (size >= 1e-9) & (size < 1e-6)  # the cast's e-7 is repr's e-07
        whole = (size < 1e10) & (values == np.trunc(values))  # the cast's 12 is repr's 12.0
    point, empty = pa.scalar(".0", pa.large_string()), pa.scalar("", pa.large_string())
    for mask, mend in (
        (short, lambda cast: pc.replace_substring(cast, "e-", "e-0")),
        (whole, lambda cast: pc.binary_join_element_wise(cast, point, empty)),
    ):
        if mask.any():
            texts = pc.replace_with_mask(texts, mask, mend(texts.filter(mask)))
    if apart.any():
        numpy = pa.array(values[apart].astype(str).astype(object), pa.large_string())
        texts = pc.replace_with_mask(texts, apart, numpy)
    return texts


def _csv_cells(values: pd.Series, kind: str, quoting: str) -> Any:
    """One column's cells (of ``_csv_kind`` ``kind``) as ``DataFrame.to_csv`` writes them, as an
    Arrow text array."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if kind == "number":  # numpy's text of each distinct value (by its bits: -0.0)
        array = values.to_numpy()
        bits, where = np.unique(array.view(np.int64), return_inverse=True)
        distinct = bits.view(array.dtype)
        if array.dtype == np.float64:
            text = pc.if_else(pa.array(np.isnan(distinct)), "", float_texts(distinct))
        else:
            text = pa.array(distinct.astype(str).astype(object), type=pa.large_string())
        return text.take(pa.array(where))
    if kind == "empty":
        return pa.array([""] * len(values), type=pa.large_string())
    # each distinct text quoted once (most of a study's params have a value or a few)
    encoded = pa.array(values.array, type=pa.large_string()).dictionary_encode()
    cells = encoded.dictionary
    pattern = "[" + "".join("\\\\" + c if c in "\\\\]^-[" else c for c in quoting) + "]"
    quote = pc.match_substring_regex(cells, pattern)
    if pc.any(quote).as_py():
        mark, empty = pa.scalar('"', pa.large_string()), pa.scalar("", pa.large_string())
        quoted = pc.binary_join_element_wise(
            mark, pc.replace_substring(cells, '"', '""'), mark, empty
        )
        cells = pc.if_else(quote, quoted, cells)
    return pc.fill_null(cells.take(encoded.indices), "")


# Rows formatted and written at a time: a million runs' cells are ~2 GB of text at once
CSV_ROWS = 65_536


def start_runs_csv(table: pd.DataFrame, path: Path) -> Callable[[], None]:
    """Start ``write_runs_csv(table, path)``; the call returned waits until the file is written.
    Where the system forks (Linux) and the table is long, a child process writes it while the
    report draws (a million runs' file takes ~50 s of one core); a child that fails leaves the
    file to be written here when waited for. Elsewhere the file is written before returning."""
    if sys.platform != "linux" or len(table) <= CSV_ROWS:
        write_runs_csv(table, path)
        return lambda: None
    import multiprocessing

    sys.stdout.flush()  # a child would write the parent's unwritten lines again
    sys.stderr.flush()
    try:
        child = multiprocessing.get_context("fork").Process(
            target=_write_in_child, args=(table, path), name="lincls-runs-csv", daemon=True
        )
        child.start()
    except OSError:  # no process to be had: write it here
        write_runs_csv(table, path)
        return lambda: None

    def wait() -> None:
        child.join()
        if child.exitcode != 0:
            write_runs_csv(table, path)

    return wait


def _write_in_child(table: pd.DataFrame, path: Path) -> None:
    """``write_runs_csv`` in the child: Ctrl-C is the parent's to handle, and a failure is its
    exit status (the parent writes the file again), never a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        write_runs_csv(table, path)
    except BaseException:
        os._exit(1)


def write_runs_csv(table: pd.DataFrame, path) -> None:
    """``table.to_csv(path, index=False)``, the same bytes, its columns formatted and joined as
    Arrow arrays (pandas formats and writes cell by cell: 6.3 s for 100,000 runs), ``CSV_ROWS``
    rows at a time: each distinct number of those rows is formatted once, as pandas formats it."""
    import csv
    import functools
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    quoting = _quoting_characters()
    kinds = [_csv_kind(table[name]) for name in table.columns]
    if len(kinds) < 2 or table.columns.duplicated().any() or None in kinds:
        table.to_csv(path, index=False)  # a single column quotes an empty cell; other dtypes
        return
    header = io.StringIO()
    csv.writer(header, lineterminator="\n").writerow(list(table.columns))
    with open(path, "wb") as out:
        out.write(header.getvalue().encode("utf-8"))
        text = functools.partial(pa.scalar, type=pa.large_string())
        for first in range(0, len(table), CSV_ROWS):
            part = table.iloc[first : first + CSV_ROWS]
            columns = [_csv_cells(part[name], kind, quoting)
                       for name, kind in zip(table.columns, kinds, strict=True)]  # fmt: skip
            rows = pc.binary_join_element_wise(*columns, text(","))
            lines = pc.binary_join_element_wise(rows, text(""), text("\n"))  # row, line end
            offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
            start, stop = offsets[lines.offset], offsets[lines.offset + len(lines)]
            out.write(memoryview(lines.buffers()[2])[start:stop])
