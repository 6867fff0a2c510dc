"""The study report: ``python -m lincls.experiments.report [STUDY_OR_PARENT_RUN_ID]``.

Reads the runs of a sweep (a parent run id), of a study (every FINISHED run tagged with its name,
one per config hash, the newest) or, with no argument, of the latest sweep, from MLflow into
pandas, and writes ``results/<study>/``: ``report.md`` (bounds per learner, violations, ratios,
scaling slopes, dataset families), PNG plots and ``runs.csv``. The same files are logged as
artifacts of the sweep's parent run (under ``report/``), so the MLflow UI shows them.

    python -m lincls.experiments.report                       # the latest sweep
    python -m lincls.experiments.report bound_verification    # every run of a study
    python -m lincls.experiments.report 3f2a...e1             # one sweep, by its parent run id

Bad input (an unknown study or run id, an empty store) prints one line and exits non-zero.

The steps, one module each: ``collect`` reads the runs into a frame, ``tables`` computes the
bound tables and slope fits, ``plots`` draws the figures (``PLOTS``), ``render`` writes the
markdown; ``write_report`` here runs them in that order.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from lincls import tracking
from lincls.errors import LinclsInputError
from lincls.experiments.report.collect import (
    PAGE_SIZE,
    ROLE_RUN,
    ROLE_SWEEP,
    TAGS_KEPT,
    Selection,
    artifact_uri,
    dataset_config,
    metric_histories,
    open_store,
    runs_frame,
    search_all,
    select_runs,
)
from lincls.experiments.report.figures import FIGURE_TAGS, figure_state, picture_runs
from lincls.experiments.report.frontier import frontier_section
from lincls.experiments.report.html import HTML_FILE, artifact_markdown, render_html
from lincls.experiments.report.plots import (
    BOUNDARY_RUNS,
    CURVE_METRIC,
    CURVE_RUNS,
    PLOT_FILES,
    PLOTS,
    Plot,
    PlotInput,
    curve_sample,
    planar_runs,
    plot_bound_ratios,
    plot_cumulative,
    plot_decision_boundaries,
    plot_mistakes_vs_bound,
    plot_mistakes_vs_gamma,
)
from lincls.experiments.report.render import (
    REPORT_FILE,
    RUNS_FILE,
    TOLERANCE,
    render,
    start_runs_csv,
)
from lincls.experiments.report.studies import study_sections
from lincls.experiments.report.tables import (
    THEORY_SLOPE_GAMMA,
    THEORY_SLOPE_RADIUS,
    SlopeFit,
    bound_names,
    bound_table,
    family_ranges,
    fit_slopes,
    learner_labels,
    orders_of,
    slack_table,
    violations,
)
from lincls.tracking.store import check_store_file

__all__ = [
    "BOUNDARY_RUNS",
    "CURVE_METRIC",
    "CURVE_RUNS",
    "HTML_FILE",
    "PAGE_SIZE",
    "PLOTS",
    "PLOT_FILES",
    "REPORT_FILE",
    "ROLE_RUN",
    "ROLE_SWEEP",
    "RUNS_FILE",
    "TAGS_KEPT",
    "THEORY_SLOPE_GAMMA",
    "THEORY_SLOPE_RADIUS",
    "TOLERANCE",
    "Plot",
    "PlotInput",
    "Selection",
    "SlopeFit",
    "artifact_markdown",
    "bound_names",
    "bound_table",
    "curve_sample",
    "dataset_config",
    "family_ranges",
    "fit_slopes",
    "learner_labels",
    "main",
    "metric_histories",
    "open_store",
    "orders_of",
    "planar_runs",
    "plot_bound_ratios",
    "plot_cumulative",
    "plot_decision_boundaries",
    "plot_mistakes_vs_bound",
    "plot_mistakes_vs_gamma",
    "render",
    "render_html",
    "runs_frame",
    "safe_name",
    "search_all",
    "select_runs",
    "slack_table",
    "violations",
    "write_report",
]

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def write_report(client, selection: Selection, out_dir: Path) -> list[Path]:
    """Write report.md, the plots and runs.csv into ``out_dir``; the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in (
        REPORT_FILE,
        RUNS_FILE,
        HTML_FILE,
        *PLOT_FILES,
    ):  # no stale plot from an earlier report
        (out_dir / name).unlink(missing_ok=True)
    runs = selection.runs
    runs_written = start_runs_csv(portable_runs(runs), out_dir / RUNS_FILE)  # while we draw
    curves = metric_histories(client, curve_sample(runs)["run_id"], CURVE_METRIC)
    learners = learner_labels(runs)  # once: the plots and tables each group by them
    data = PlotInput(runs, curves, learners)
    plots = {plot.file: plot.draw(data, out_dir / plot.file) for plot in PLOTS}
    tables = (bound_table(runs, learners), fit_slopes(runs, learners), family_ranges(runs))
    text = render(selection, *tables, plots, slack=slack_table(runs, learners), learners=learners)
    text += frontier_section(runs, learners)  # per theorem: largest ratio beside the attainable
    extra, extra_files = study_sections(client, runs, out_dir)  # a reproduced paper's section
    text += extra
    (out_dir / REPORT_FILE).write_text(text, encoding="utf-8")
    runs_written()
    page = render_html(text, out_dir, f"lincls study {selection.study}")
    (out_dir / HTML_FILE).write_text(page, encoding="utf-8")
    drawn = [out_dir / name for name, why in plots.items() if why is None]
    return [out_dir / REPORT_FILE, out_dir / RUNS_FILE, *drawn, *extra_files, out_dir / HTML_FILE]


# Params that say where the run was made (the store's path, a cache directory): runs.csv leaves
# them out, so that a report says nothing of the machine it was made on.
MACHINE_PARAMS = ("params.tracking.uri", "params.certificates.cache_dir")


def portable_runs(runs):
    """The runs table as runs.csv holds it: without ``MACHINE_PARAMS``, a dataset's path reduced
    to its file name."""
    table = runs.drop(columns=[c for c in MACHINE_PARAMS if c in runs.columns])
    if "params.dataset.path" in table.columns:
        table["params.dataset.path"] = table["params.dataset.path"].map(
            lambda path: Path(path).name if isinstance(path, str) else path
        )
    return table


def log_report(client, run_id: str, files: list[Path]) -> None:
    """Log the report's files as artifacts ``report/`` of ``run_id`` (the sweep's parent), with a
    report.md whose links open the run's artifacts: copied where the run's artifacts are on the
    local disk, else through MLflow's client."""
    import shutil
    import tempfile

    root = tracking.local_artifacts(artifact_uri(client, run_id))
    with tempfile.TemporaryDirectory() as tmp:
        for path in files:
            if path.name == REPORT_FILE:
                text = artifact_markdown(path.read_text(encoding="utf-8"), run_id)
                path = Path(tmp) / REPORT_FILE
                path.write_text(text, encoding="utf-8")
            if root is None:
                client.log_artifact(run_id, str(path), artifact_path="report")
            else:
                (root / "report").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, root / "report" / path.name)


def _mlflow_error(exc: BaseException) -> bool:
    """Whether ``exc`` is MLflow's (a store read with SQL never imports MLflow, so none came)."""
    errors = sys.modules.get("mlflow.exceptions")
    return errors is not None and isinstance(exc, errors.MlflowException)


def safe_name(study: str) -> str:
    """A study name as a directory name."""
    return _SAFE_NAME.sub("_", study).strip("._") or "study"


def main(
    argv: Sequence[str] | None = None, prog: str = "python -m lincls.experiments.report"
) -> int:
    """The command line (``prog`` in its usage); returns the exit code (2 on bad input)."""
    from lincls.experiments.arguments import store_uri

    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "target", nargs="?", help="a study name or a sweep's parent run id (default: latest sweep)"
    )
    parser.add_argument(
        "--store",
        metavar="URI",
        help="the MLflow store: a tracking URI or a path to a SQLite .db file (default: "
        "$MLFLOW_TRACKING_URI, else $LINCLS_HOME/mlflow.db, else results/mlflow.db here)",
    )
    # the option's former name, still read
    parser.add_argument("--tracking-uri", dest="store", help=argparse.SUPPRESS)
    parser.add_argument("--experiment", default=tracking.DEFAULT_EXPERIMENT)
    parser.add_argument(
        "--out",
        type=Path,
        help="where the files go (default: <home>/<study>/, home as for the store)",
    )
    args = parser.parse_args(argv)
    try:
        uri = tracking.resolve_tracking_uri(args.store and store_uri(args.store))
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        check_store_file(uri, "--store")  # one line, and never an empty store made
        client, experiment_id = open_store(uri, args.experiment)
        # each run's figure state read with it, in the reader's one pass over the tags
        selection = select_runs(client, experiment_id, args.target, tag_sql=FIGURE_TAGS)
        state = figure_state(selection.runs)
        out_dir = args.out or tracking.home() / safe_name(selection.study)
        if out_dir.exists() and not out_dir.is_dir():
            raise LinclsInputError("--out", f"{out_dir} is a file, not a directory")
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LinclsInputError("--out", f"cannot make {out_dir} ({exc.strerror})") from None
        if not os.access(out_dir, os.W_OK):
            raise LinclsInputError("--out", f"{out_dir} is not writable by this user")
        files = write_report(client, selection, out_dir)
        # runs outside a sweep have no parent to log to; a running sweep's report is not final
        if selection.parents and selection.parents[0] not in selection.running:
            log_report(client, selection.parents[0], files)
        drawn, colored = picture_runs(client, experiment_id, selection.runs, state)
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not _mlflow_error(exc):
            raise
        print(f"error: --store: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    logged = ""
    if selection.parents and selection.parents[0] not in selection.running:
        logged = f"; also artifacts report/ of run {selection.parents[0]}"
    for parent, (jobs, made) in selection.running.items():
        print(f"note: sweep {parent} is still running: {max(jobs - made, 0)} of its {jobs} "
              "configs have no run yet; this report covers the runs written so far")  # fmt: skip
    logged += f"; run figures drawn: {drawn}, run colours set: {colored}"
    print(
        f"report: {out_dir / REPORT_FILE} "
        f"({selection.runs.shape[0]} runs of study {selection.study!r}{logged})"
    )
    page = tracking.ui_path(experiment_id)
    if uri == tracking.default_tracking_uri():
        print(f"MLflow UI: lincls ui, then http://127.0.0.1:5000/{page}")
    else:
        print(f"MLflow UI: lincls ui --store {uri}, then http://127.0.0.1:5000/{page}")
    return 0
