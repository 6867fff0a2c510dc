"""The ``lincls`` command: ``lincls run …`` (the Hydra app), ``lincls report …``, ``lincls ui``.

    lincls run learner.bias=none dataset.margin=0.05          # one run
    lincls run -m experiment=bound_verification               # a study
    lincls report bound_verification                          # its report, also on the parent run
    lincls ui --port 5001                                     # the MLflow UI over the local store

``python -m experiments.run`` and ``python -m experiments.report`` work as before.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from lincls import tracking
from lincls.errors import LinclsInputError
from lincls.paths import sqlite_path

USAGE = "usage: lincls {run,report,ui} [arguments]  (lincls <command> --help for each)"
# The UI runs no MLflow jobs: without this, MLflow's server starts its job runner (8 huey consumer
# processes of ~250 MB each). Two workers, so one slow page does not hold up the others.
UI_ENV = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
UI_WORKERS = 2


def ui_command(argv: Sequence[str]) -> list[str]:
    """The ``mlflow server --app-name lincls`` command line for ``lincls ui`` arguments (the UI
    opening on model training: ``experiments.ui_app``)."""
    parser = argparse.ArgumentParser(prog="lincls ui", description="The MLflow UI over a store.")
    parser.add_argument("--store", help="the tracking store (default: the one runs log to)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args(argv)
    uri = tracking.resolve_tracking_uri(args.store)
    command = [
        str(Path(sys.executable).with_name("mlflow")) if shutil.which("mlflow") is None
        else "mlflow",
        "server", "--app-name", "lincls", "--backend-store-uri", uri, "--host", args.host,
        "--port", str(args.port), "--workers", str(UI_WORKERS),
    ]  # fmt: skip
    root = tracking.artifact_root(uri)
    if root is not None:
        command += ["--default-artifact-root", root]
        db = sqlite_path(uri)
        db.parent.mkdir(parents=True, exist_ok=True)
    return command


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``lincls <command> …``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE + "\n\n" + (__doc__ or "").split("\n\n")[1])
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        from experiments import run

        sys.argv = ["lincls run", *rest]
        run.cli()
        return 0
    if command == "report":
        from experiments import report

        return report.main(rest)
    if command == "ui":
        args = ui_command(rest)
        host, port = args[args.index("--host") + 1], args[args.index("--port") + 1]
        store = args[args.index("--backend-store-uri") + 1]
        try:  # made with its view if missing; a store lincls must not open is one line
            _, experiment_id = tracking.open_experiment(store)
        except LinclsInputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except tracking.StoreError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        page = tracking.ui_path(experiment_id)
        print(f"lincls: the runs as lincls reads them: http://{host}:{port}/{page}", flush=True)
        # MLflow's own command in this process: mlflow, already imported, is not imported again
        os.environ.update(UI_ENV)
        from mlflow.cli import cli

        return cli.main(args[1:], prog_name="mlflow")
    print(f"error: command: must be one of run, report, ui, got {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
