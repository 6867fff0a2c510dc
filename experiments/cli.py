"""The ``lincls`` command: ``lincls run …`` (the Hydra app), ``lincls report …``, ``lincls ui``.

    lincls run learner.bias=none dataset.margin=0.05          # one run
    lincls run -m experiment=bound_verification               # a study
    lincls run --store runs.db learner=winnow                 # a run in another store
    lincls report bound_verification                          # its report, also on the parent run
    lincls ui --port 5001                                     # the MLflow UI over the local store

``python -m lincls.experiments.run`` and ``python -m lincls.experiments.report`` work as before.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
import uuid
from collections.abc import Callable, Sequence

from lincls import tracking
from lincls.errors import LinclsInputError
from lincls.experiments.arguments import run_help, store_uri, wants_help, with_store
from lincls.tracking.store import check_store_file

UI_WORKERS = 2  # so one slow page does not hold up the others
UI_APP = "lincls.experiments.ui_app:create_app()"
ARTIFACTS_URI = "mlflow-artifacts:/"  # MLflow's server's default root when it serves artifacts


def ui_environment(uri: str, artifact_root: str | None) -> dict[str, str]:
    """The variables ``mlflow server --app-name lincls --backend-store-uri uri
    [--default-artifact-root artifact_root]`` gives its server (set by MLflow's CLI and by
    ``mlflow.server._run_server``), with MLflow's job runner off.

    Written out so that ``lincls ui`` starts the server without importing MLflow's CLI (1.5–3 s
    of its start); ``tests/test_ui.py`` holds them equal to MLflow's own launch. The job runner
    is off because the UI runs no jobs: with it MLflow starts 8 ``huey`` consumer processes of
    ~250 MB each.
    """
    env = {
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false",
        "MLFLOW_SERVER_X_FRAME_OPTIONS": os.environ.get("MLFLOW_SERVER_X_FRAME_OPTIONS")
        or "SAMEORIGIN",
        "MLFLOW_ENABLE_WORKSPACES": "false",
        "MLFLOW_TRACKING_URI": uri,
        "MLFLOW_REGISTRY_URI": uri,
        "_MLFLOW_SERVER_FILE_STORE": uri,
        "_MLFLOW_SERVER_REGISTRY_STORE": uri,
        "_MLFLOW_SERVER_ARTIFACT_ROOT": artifact_root or ARTIFACTS_URI,
        "_MLFLOW_SERVER_SERVE_ARTIFACTS": "true",
        "_MLFLOW_SERVER_ARTIFACT_DESTINATION": "./mlartifacts",
        "MLFLOW_SERVER_SECRETS_CACHE_TTL": "60",
        "MLFLOW_SERVER_SECRETS_CACHE_MAX_SIZE": "1000",
        "_MLFLOW_SERVER_BOOT_ID": uuid.uuid4().hex,
        "_MLFLOW_IN_JOB_EXECUTOR": "false",
        "_MLFLOW_SGI_NAME": "uvicorn",
    }
    return env


def ui_command(argv: Sequence[str]) -> tuple[list[str], dict[str, str], str]:
    """The server ``lincls ui`` runs for its arguments: (command line, environment, store URI).

    MLflow's server app as lincls serves it (``lincls.experiments.ui_app``) in gunicorn, uvicorn's
    workers, the app imported once before the workers are forked (``--preload``): MLflow's own
    ``mlflow server`` has each of uvicorn's workers import the app (~3.5 s each, at once on
    the machine's cores) after its CLI's own import, twice the start-up and the memory.
    """
    parser = argparse.ArgumentParser(prog="lincls ui", description="The MLflow UI over a store.")
    parser.add_argument(
        "--store",
        metavar="URI",
        help="the MLflow store: a tracking URI or a path to a SQLite .db file (default: the "
        "one runs log to: $MLFLOW_TRACKING_URI, else $LINCLS_HOME/mlflow.db, else "
        "./results/mlflow.db)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="5000")  # read by check_address: one line if bad
    args = parser.parse_args(argv)
    port = check_address(args.host, args.port)
    uri = tracking.resolve_tracking_uri(args.store and store_uri(args.store))
    host = f"[{args.host}]" if ":" in args.host else args.host
    command = [
        sys.executable, "-m", "gunicorn", "--preload", "--workers", str(UI_WORKERS),
        "--worker-class", "uvicorn.workers.UvicornWorker", "--bind", f"{host}:{port}",
        "--timeout", "0", "--config", "python:lincls.experiments.ui_server", UI_APP,
    ]  # fmt: skip
    return command, ui_environment(uri, tracking.artifact_root(uri)), uri


def check_address(host: str, port: str) -> int:
    """The port ``lincls ui`` serves on, once ``host`` and ``port`` are an address this machine
    can listen on now (``LinclsInputError`` naming ``--port`` or ``--host`` otherwise): the
    server would find out only after its seconds of start-up, in a block of lines."""
    import socket

    try:
        number = int(port)
    except ValueError:
        number = None
    if number is None or not 1 <= number <= 65535:
        raise LinclsInputError("--port", f"must be an integer in [1, 65535], got {port!r}")
    try:
        found = socket.getaddrinfo(host, number, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        problem = getattr(exc, "strerror", None) or str(exc)
        raise LinclsInputError(
            "--host", f"{host!r} is no address of this machine ({problem}); e.g. 127.0.0.1, or "
            "0.0.0.0 for every interface") from None  # fmt: skip
    family, kind, protocol, _, address = found[0]
    with socket.socket(family, kind, protocol) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind(address)
        except OSError as exc:
            taken = exc.errno == errno.EADDRINUSE
            problem = "is in use (another server listens there)" if taken else (
                f"cannot be listened on here ({exc.strerror})")  # fmt: skip
            field = "--port" if taken or exc.errno == errno.EACCES else "--host"
            raise LinclsInputError(
                field, f"{host}:{number} {problem}; choose another --port or --host"
            ) from None
    return number


def run_main(argv: list[str]) -> int:
    """``lincls run …``: its help without Hydra, ``--store`` as ``tracking.uri``, then Hydra."""
    if wants_help(argv):
        print(run_help())
        return 0
    try:
        argv = with_store(argv)
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from hydra_plugins.lincls_sweeps.pool import start_fork_server

    start_fork_server(argv)  # a sweep's pool: its server imports beside the run module's
    from lincls.experiments import run

    sys.argv = ["lincls run", *argv]
    run.cli()
    return 0


def report_main(argv: list[str]) -> int:
    """``lincls report …``."""
    from lincls.experiments import report

    return report.main(argv, prog="lincls report")


def ui_main(argv: list[str]) -> int:
    """``lincls ui …``: check the store, print its address, become the server (``exec``)."""
    try:
        args, env, store = ui_command(argv)
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bind = args[args.index("--bind") + 1]
    try:  # the UI shows a store runs made: it makes none; a store lincls must not open is one line
        check_store_file(store, "--store")
        _, experiment_id = tracking.open_experiment(store)
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except tracking.StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    page = tracking.ui_path(experiment_id)
    print(f"lincls: the runs as lincls reads them: http://{bind}/{page}", flush=True)
    os.environ.update(env)
    sys.stdout.flush()
    os.execv(sys.executable, args)  # the server in this process: its signals reach it


# name → handler of its arguments (exit code); a new command is one entry here
COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "run": run_main,
    "report": report_main,
    "ui": ui_main,
    "check": lambda rest: _check_main(rest),
}


def _check_main(argv: list[str]) -> int:
    """``lincls check LEARNER [BOUND]``: the referee (``lincls.experiments.check``)."""
    from lincls.experiments import check

    return check.main(argv)


def usage() -> str:
    """The one-line usage of ``lincls``."""
    names = ",".join(COMMANDS)
    return f"usage: lincls {{{names}}} [arguments] | --version  (lincls <command> --help: each)"


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch ``lincls <command> …``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--version"], ["-V"]):
        from lincls import __version__

        print(f"lincls {__version__}")
        return 0
    if not argv or argv[0] in ("-h", "--help"):
        print(usage() + "\n\n" + (__doc__ or "").split("\n\n")[1])
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    handler = COMMANDS.get(command)
    if handler is None:
        print(f"error: command: must be one of {', '.join(COMMANDS)}, got {command!r}",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        return handler(rest)
    except BrokenPipeError:  # the reader of stdout left (lincls report … | head -1): end quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
        return 128 + signal.SIGPIPE  # as a command that SIGPIPE ended


if __name__ == "__main__":
    raise SystemExit(main())
