"""The lincls entry point: ``python -m lincls.experiments.run [overrides]``, or ``-m`` for a sweep.

One job = make data → fit → bounds → one batched MLflow write. Bad input prints one line naming
the field and what is allowed, and exits 2 — Hydra's composition errors too (a wrong type, an
unknown key, an unknown config group option or experiment), for a run and a sweep alike, before
anything is stored.
"""

from __future__ import annotations

import sys

from hydra_plugins.lincls_sweeps.pool import start_fork_server

if __name__ == "__main__":  # a sweep's pool: its server imports beside this module's ~1.5 s
    start_fork_server(sys.argv[1:])

import atexit
import contextlib
import importlib.resources
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from lincls import tracking
from lincls.config import register_configs
from lincls.config.checks import check_booleans, parse_overrides, resolved
from lincls.config.composition import check_group_choices, input_error
from lincls.config.run import RunConfig
from lincls.errors import LinclsInputError
from lincls.experiments.arguments import GROUPS, group_options, run_help, wants_help, with_store
from lincls.orders import canonical_orders
from lincls.paths import check_home
from lincls.runner import execute
from lincls.sweeps import current_sweep, run_job
from lincls.tracking.store import StoreError
from lincls.tracking.tags import run_name_of

register_configs()
# The configs are the package lincls.conf (conf/ of the checkout); listed from disk for studies.
CONF_PACKAGE = "lincls.conf"
CONF = Path(str(importlib.resources.files(CONF_PACKAGE)))


class Refused(SystemExit):
    """A run refused before anything was stored (its line printed): the exit status."""


def sweep_job(config: dict, overrides: Sequence[str], sweep: Any) -> dict | None:
    """A job of a lincls sweep from its config as plain containers, resolved: what ``main``
    does with a sweep job's config once it has resolved it (the lincls launcher calls this
    directly when it can make that config without OmegaConf: ``hydra_plugins.lincls_sweeps
    .plain``). None, with nothing run, for orders it cannot read: ``main`` refuses them."""
    try:
        config = canonical_orders(config)
    except LinclsInputError:
        return None
    return run_job(config, list(overrides), sweep)


def _with_sweep_job(task: Any) -> Any:
    task.lincls_sweep_job = sweep_job  # kept by hydra.main's wrapper (functools.wraps)
    return task


@hydra.main(version_base="1.3", config_path=f"pkg://{CONF_PACKAGE}", config_name="config")
@_with_sweep_job
def main(cfg: DictConfig) -> float | dict | None:
    """Run one config; return its mistakes (the value a Hydra sweeper would minimise)."""
    # orders.permutations=k and orders=k are one config: one spelling in params and hash
    try:
        config = canonical_orders(resolved(cfg))
    except LinclsInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise Refused(2) from None
    hydra_config = HydraConfig.get()
    multirun = hydra_config.mode == RunMode.MULTIRUN
    # the sweep's record is in its directory too, relative to where it was launched (runtime.cwd)
    sweep_dir = Path(hydra_config.runtime.cwd, hydra_config.sweep.dir)
    sweep = current_sweep(sweep_dir) if multirun else None
    if sweep is not None:  # a job of a lincls sweep: a child of its parent run, never raises
        outcome = run_job(config, list(HydraConfig.get().overrides.task), sweep)
        return outcome
    try:
        check_booleans(cfg, parse_overrides(hydra_config.overrides.task))
        run_config = RunConfig.from_container(config)  # typed once here, and handed down
        outcome = execute(run_config)
    except (LinclsInputError, StoreError) as exc:
        if multirun:
            raise
        print(f"error: {exc}", file=sys.stderr)
        code = 2 if isinstance(exc, LinclsInputError) else 1
        if hasattr(exc, "lincls_run_id"):  # the run exists (FAILED): its directory stays
            sys.exit(code)
        raise Refused(code) from None
    print(run_line(run_config, outcome))
    return outcome.metrics.get("mistakes")


def run_line(config: RunConfig, outcome: Any) -> str:
    """One run's console line: its numbers, the tightest ratio (mistakes / bound), its name and
    the address of its page in the UI ``lincls ui`` serves (with ``--store`` off the default)::

        run <id>: mistakes=14, bound.tightest=48.522, …, ratio=0.2885; name 'perceptron[…] γ=…';
        see: lincls ui, then http://127.0.0.1:5000/#/experiments/1/runs/<id>
    """
    metrics = outcome.metrics
    shown = ("mistakes", "bound.tightest", "train_accuracy", "test_accuracy")
    summary = ", ".join(f"{k}={metrics[k]:g}" for k in shown if k in metrics)
    if metrics.get("bound_ratio.tightest") is not None:
        summary += f", ratio={metrics['bound_ratio.tightest']:.4g}"
    uri = tracking.resolve_tracking_uri(config.tracking.uri)
    _, experiment_id = tracking.open_experiment(
        uri, config.tracking.experiment or tracking.DEFAULT_EXPERIMENT
    )  # opened by the run: this process's cached client
    ui = "lincls ui" if uri == tracking.default_tracking_uri() else f"lincls ui --store {uri}"
    page = f"http://127.0.0.1:5000/#/experiments/{experiment_id}/runs/{outcome.run_id}"
    name = run_name_of(config, outcome.tags)
    return f"run {outcome.run_id}: {summary}; name {name!r}; see: {ui}, then {page}"


def refuse(error: LinclsInputError) -> None:
    """Print ``error`` as its one line and exit 2."""
    print(f"error: {error}", file=sys.stderr, flush=True)
    sys.exit(2)


def check_arguments(argv: Sequence[str]) -> None:
    """Refuse, before Hydra composes anything, overrides it cannot parse, an experiment that
    does not exist (Hydra skips a missing option of the ``optional`` experiment group and would
    run the default config) and a schema chosen as a group's option. Arguments Hydra's own
    parser refuses are left to it."""
    from hydra._internal.utils import get_args_parser
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        args, _ = get_args_parser().parse_known_args(list(argv))
    except SystemExit:
        return
    modes = [args.run, args.multirun, args.cfg is not None, args.shell_completion,
             args.info is not None]  # fmt: skip
    if sum(map(bool, modes)) > 1:  # Hydra raised a ValueError (a 20-line traceback)
        refuse(LinclsInputError(
            "--multirun", "only one of -m/--multirun, --run, --cfg, --info and "
            "--shell-completion may be given"))  # fmt: skip
    try:
        overrides = OverridesParser.create().parse_overrides(list(args.overrides))
    except Exception as exc:
        error = input_error(exc)
        if error is None:
            raise
        refuse(error)
    folders = [Path(args.config_dir)] if args.config_dir else []
    try:  # the groups' YAML options; a schema (``learner=perceptron_schema``) is none of them
        for group in ("experiment", *GROUPS):
            check_group_choices(overrides, group, group_options(group, folders))
        check_group_choices(overrides, "tracking", [])  # its keys are set, it has no options
    except LinclsInputError as exc:
        refuse(exc)


@contextlib.contextmanager
def one_line_errors() -> Iterator[None]:
    """Make Hydra's composition errors one line and exit 2, instead of its block and exit 1.

    Hydra prints them in ``run_and_report``, around its composition, the sweeper and the launcher
    alike; this puts a guard inside it, which turns the errors ``composition.input_error`` knows
    into their line and leaves every other exception to Hydra.
    """
    import hydra._internal.utils as hydra_utils

    report = hydra_utils.run_and_report

    def run_and_report(func):
        def guarded():
            try:
                return func()
            except Exception as exc:
                error = input_error(exc)
                if error is None:
                    raise
                refuse(error)

        return report(guarded)

    hydra_utils.run_and_report = run_and_report
    try:
        yield
    finally:
        hydra_utils.run_and_report = report


def single_run(argv: Sequence[str]) -> bool:
    """Whether the arguments make one run whatever the configs say: no ``--multirun``, no
    ``hydra.mode`` override, no config from elsewhere (no lincls config sets ``hydra.mode``:
    ``tests/test_run.py``), none of Hydra's other commands."""
    from hydra._internal.utils import get_args_parser

    try:
        args, _ = get_args_parser().parse_known_args(list(argv))
    except SystemExit:
        return False
    if args.multirun or args.config_dir or args.config_path or args.config_name or args.cfg:
        return False
    if args.info or args.shell_completion or args.hydra_help or args.help:
        return False
    return not any(o.lstrip("+~").startswith("hydra.mode") for o in args.overrides)


@contextlib.contextmanager
def mode_known(single: bool) -> Iterator[None]:
    """Skip Hydra's composition of the whole config just to read ``hydra.mode`` (~0.3 s of a
    run's start) when ``single``: that mode is then unset, and Hydra makes a run of it, as it
    does on the mode it would have read."""
    from hydra._internal.hydra import Hydra

    get_mode = Hydra.get_mode
    if single:
        Hydra.get_mode = lambda self, config_name, overrides: None
    try:
        yield
    finally:
        Hydra.get_mode = get_mode


@contextlib.contextmanager
def no_litter() -> Iterator[None]:
    """Take away what Hydra made for a run that was then ``Refused``: the run's output
    directory, with the ``.hydra/`` files and the empty log in it, and the directories above it
    that were made for it. Hydra makes them before the task starts, and the task is what checks
    the values; a directory that holds anything else stays, and so does a log with lines in it.
    """
    import hydra._internal.hydra as hydra_main

    run_job = hydra_main.run_job

    def tidy_run_job(**kwargs):
        config = kwargs["config"]
        saved = HydraConfig.instance().cfg
        HydraConfig.instance().set_config(config)  # the run dir may read hydra's own fields
        try:  # resolved once: Hydra's ${now:} is cached in the config, so run_job reads the same
            directory = Path(str(OmegaConf.select(config, kwargs["job_dir_key"]))).absolute()
        finally:
            HydraConfig.instance().cfg = saved
        made = [p for p in (directory, *directory.parents) if not p.exists()]
        try:
            return run_job(**kwargs)
        except Refused:
            remove_outputs(directory, made, config.hydra.output_subdir)
            raise

    hydra_main.run_job = tidy_run_job
    try:
        yield
    finally:
        hydra_main.run_job = run_job


def remove_outputs(directory: Path, made: Sequence[Path], subdir: str | None) -> None:
    """Remove Hydra's files of a run in ``directory`` (its saved configs, its log while empty),
    then those of the directories ``made`` for it that are empty, the deepest first."""
    import logging

    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, logging.FileHandler):
            log = Path(handler.baseFilename)
            if log.parent == directory:
                handler.close()
                root.removeHandler(handler)
                if log.is_file() and log.stat().st_size == 0:
                    log.unlink()
    if subdir is not None:
        saved = directory / subdir
        for name in ("config.yaml", "hydra.yaml", "overrides.yaml"):
            (saved / name).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            saved.rmdir()
    for path in made:
        with contextlib.suppress(OSError):  # not empty: something else is in it
            path.rmdir()


def cli() -> None:
    """``lincls run`` (``python -m lincls.experiments.run``): Hydra's app, bad input one line; the
    process ends when the app returns (``end_process``)."""
    program = sys.argv[0] if sys.argv[0] == "lincls run" else "python -m lincls.experiments.run"
    if wants_help(sys.argv[1:]):  # lincls's help, not Hydra's
        print(run_help(program))
        end_process(0)
    try:
        sys.argv[1:] = with_store(sys.argv[1:])
        check_home()  # Hydra makes its run folder there before any value is checked
    except LinclsInputError as exc:
        refuse(exc)
    try:
        check_arguments(sys.argv[1:])
        with one_line_errors(), mode_known(single_run(sys.argv[1:])), no_litter():
            main()
    except SystemExit as done:
        end_process(done.code)
    end_process(0)


def end_process(code: object) -> NoReturn:
    """End the process as ``sys.exit(code)`` would, without its last step.

    As Python's own exit does, the threads' exit hooks run and the threads that are not daemons
    are waited for (``threading._shutdown``: Hydra's joblib launcher leaves its workers to such
    threads), then the exit handlers run
    (logging's flush, a pool's children stopped, every ``atexit`` function) and the standard
    streams are flushed; what is skipped is the interpreter freeing every module's objects one
    by one, ~0.5 s after a run and ~2.5 s after a sweep of two workers (numba's, scikit-learn's,
    MLflow's modules), for memory the operating system takes back at once. Everything a run
    writes is committed or closed before its job returns, and a sweep's parent run before its
    last line.
    """
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): the message on stderr, status 1
        print(code, file=sys.stderr)
        status = 1
    shutdown = getattr(threading, "_shutdown", None)  # what Python's exit calls first
    if shutdown is None:
        sys.exit(status)
    shutdown()  # threads' exit hooks (a pool's executor told to stop), then joined
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    cli()
