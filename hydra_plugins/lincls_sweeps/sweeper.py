"""The ``lincls`` sweeper: Hydra's grid sweep, wrapped in one parent MLflow run.

It expands the overrides (and ``hydra.sweeper.params``) into the cartesian grid as Hydra's basic
sweeper does, then, in the launching process and before any job starts: checks every value of
every config (``precheck``: a bad one exits 2 with its line and its config, nothing stored, no
config run), opens the store once (creating and migrating SQLite there), closes KILLED the runs
of sweeps that were killed, and creates the parent run (``lincls.sweeps.start_sweep``). The jobs
run on any launcher. The parent is closed in a ``finally`` (Hydra 1.3 skips ``on_multirun_end``
when a job fails, so a callback could not promise it): FINISHED only if every config has a
FINISHED run, else FAILED. A config without one — failed, refused by the store, not composed, not
run — is listed (the ones not run, counted), with the command that runs them, and the sweep exits
with status 1.

Hydra's basic sweeper composes every job's config once to validate it before launching, and
the launcher composes it again (~60 ms each here); this one composes one job per distinct
choice of config groups whole (a bad name fails fast), and derives the others from it to check
their values (``precheck``, ~1.6 ms a config).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.plugins import Plugins
from hydra.core.utils import JobStatus
from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf, open_dict

from hydra_plugins.lincls_sweeps.grid import Grid, Jobs, Lines
from lincls import interrupts  # tiny: Ctrl-C's flag, no heavy imports


@dataclass
class LinclsSweeperConf:
    _target_: str = "hydra_plugins.lincls_sweeps.sweeper.LinclsSweeper"
    # key → comma-separated values, swept like command-line overrides (a study's grid); a dict
    # even when empty, so hydra.sweeper.params={…} or .KEY=… merge into it outside a study
    params: dict[str, str] | None = field(default_factory=dict)
    # several such grids: the sweep is their union (e.g. one grid per dataset family, whose
    # keys differ); each is crossed with ``params`` and the command line
    grids: list[dict[str, str]] | None = field(default=None)


def _key_lines(overrides: list[Any]) -> dict[str, list[str]]:
    """Each key's override lines, as ``BasicSweeper.split_arguments`` makes them before taking
    their product (an interval, which no grid enumerates, refused as one line naming its key)."""

    lines: dict[str, list[str]] = {}
    for override in overrides:
        key = override.get_key_element()
        if not override.is_sweep_override():
            lines[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            lines[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
            if not lines[key]:  # an empty range: no job at all, where Hydra's sweeper raised
                from lincls.errors import LinclsInputError

                raise LinclsInputError(
                    key, f"{override.input_line} sweeps no value: give it at least one"
                )
        else:  # interval(…): a range to sample, which a grid cannot enumerate
            from lincls.errors import LinclsInputError

            raise LinclsInputError(
                key, f"{override.input_line} is an interval, which a grid cannot enumerate; "
                "give values (a,b,c), range(start,stop,step) or choice(a,b)")  # fmt: skip
    return lines


class LinclsSweeper(Sweeper):
    """A grid sweep inside one parent MLflow run (module docstring)."""

    def __init__(
        self, params: dict[str, str] | None = None, grids: list[dict[str, str]] | None = None
    ) -> None:
        self.params = dict(params or {})
        self.grids = [dict(g) for g in grids or []]
        self.config: DictConfig | None = None
        self.hydra_context: HydraContext | None = None
        self.launcher = None

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config = config
        self.hydra_context = hydra_context
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def jobs(self, arguments: list[str]) -> Jobs:
        """Every job's override list: the study's grids crossed with the command line, each job
        once, as a lazy sequence (``grid.Jobs``: a million jobs cost their lines, not a list).

        A key given on the command line replaces the study's values for it. Each grid's keys and
        lines are those of Hydra's basic sweeper (``BasicSweeper.split_arguments``): a key given
        twice keeps its first place and its last values.
        """
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        given = parser.parse_overrides(arguments)
        on_command_line = {o.get_key_element() for o in given}
        grids = []
        for grid in self.grids or [{}]:
            merged = {**self.params, **grid}
            params = parser.parse_overrides([f"{k}={v}" for k, v in merged.items()])
            params = [o for o in params if o.get_key_element() not in on_command_line]
            grids.append(Grid(list(_key_lines(params + given).values())))
        return Jobs(grids)

    def _validate(self, jobs: Jobs) -> None:
        """Compose one job per distinct choice of config groups (fails fast on a bad name)."""
        from hydra_plugins.lincls_sweeps.overrides import split_group_overrides

        loader = self.hydra_context.config_loader

        def value(key: str) -> bool:  # a key set to a value picks no group, whatever value
            try:
                return bool(split_group_overrides(loader, [f"{key}=0"])[1])
            except Exception:  # not Hydra's syntax so: its jobs are composed, and say why
                return False

        seen: set[tuple[str, ...]] = set()
        for job in jobs.firsts(value):  # a million learning rates: one job here
            groups, _ = split_group_overrides(loader, job)
            key = tuple(o.input_line for o in groups)
            if key not in seen:
                seen.add(key)
                loader.load_sweep_config(self.config, list(job))

    def sweep(self, arguments: list[str]) -> Any:
        """Run the grid; the parent run is created first and closed whatever happens.

        Exits 2 with one line on bad input before anything is stored; 1 with the summary when a
        config has no FINISHED run (failed, or not run: the store stopped answering); 130 with
        one line on Ctrl-C.
        """
        from lincls import sweeps

        jobs = self.jobs(list(arguments))
        # a pool's workers start now: their start-up overlaps the checks and the store's opening
        start_workers = getattr(self.launcher, "start_workers", None)
        if start_workers is not None:
            start_workers(len(jobs))
        try:
            record = self._start(jobs, arguments)
        except BaseException:
            stop_workers = getattr(self.launcher, "stop_workers", None)
            if stop_workers is not None:
                stop_workers()
            raise
        print(
            f"[lincls] sweep {record.study}: {len(jobs)} jobs, parent run "
            f"{record.parent_run_id}, store {record.tracking_uri}; its report: "
            f"{report_command(record.study, record.tracking_uri)}",
            file=sys.stderr,
            flush=True,
        )
        with open_dict(self.config):  # the jobs of Hydra's other launchers find the record so
            self.config.hydra.job.env_set[sweeps.SWEEP_ENV] = record.path
        previous = os.environ.get(sweeps.SWEEP_ENV)
        os.environ[sweeps.SWEEP_ENV] = record.path
        stopped, interrupted = None, False
        lines = Lines(jobs)
        returns: Any = None
        handler = signal.signal(signal.SIGINT, interrupts.on_interrupt)
        hook, sys.unraisablehook = sys.unraisablehook, interrupts.unraisable
        try:
            returns = self.launcher.launch(jobs, initial_job_idx=0)
            self._count_unreported(record, returns)
        except sweeps.StoreDown as exc:
            stopped = str(exc)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            signal.signal(signal.SIGINT, handler)
            sys.unraisablehook = hook
            if previous is None:
                os.environ.pop(sweeps.SWEEP_ENV, None)
            else:
                os.environ[sweeps.SWEEP_ENV] = previous
            headline, missing, _ = sweeps.finish_sweep(
                record, lines, interrupted=interrupted, store_down=stopped is not None
            )
        if interrupted:
            self._interrupted(headline, len(jobs), arguments)
        seconds = time.time() - record.started
        print(headline.summary_line(record.study, len(jobs), seconds, record.parent_run_id),
              file=sys.stderr, flush=True)  # fmt: skip
        failed = [(job, why) for job, why in missing if why is not None]
        if failed:
            print(
                f"[lincls] {len(failed)} of {len(jobs)} configs failed "
                f"(parent run {record.parent_run_id}):",
                file=sys.stderr,
            )
            for job, why in failed:
                print(f"  {job}: {why}", file=sys.stderr)
        not_run = len(missing) - len(failed)
        if not_run:
            print(f"[lincls] {not_run} of {len(jobs)} configs not run", file=sys.stderr)
        if stopped is not None:
            print(f"[lincls] sweep stopped: {stopped}. When the store answers again, "
                  f"{self._resume(arguments)} completes it", file=sys.stderr)  # fmt: skip
            sys.exit(1)
        if missing:
            print(f"[lincls] {len(missing)} of {len(jobs)} configs have no FINISHED run; run them "
                  f"with: {self._resume(arguments)}", file=sys.stderr)  # fmt: skip
            sys.exit(1)
        return returns

    @staticmethod
    def _count_unreported(record: Any, returns: Any) -> None:
        """A job that failed before its task ran (its config did not compose) reported nothing:
        it is counted failed in the progress file, with its error."""
        from lincls.errors import LinclsInputError
        from lincls.tracking import progress
        from lincls.tracking.store import one_line

        summed = progress.summary(record.progress_file)
        for ret in returns or ():
            line = " ".join(ret.overrides or ())
            if ret.status == JobStatus.FAILED and not summed.reported(line):
                error = ret._return_value
                if not isinstance(error, LinclsInputError):
                    error = f"{type(error).__name__}: {one_line(error)}"
                entry = {"status": "failed", "job": line, "error": one_line(str(error))}
                progress.append(record.progress_file, entry)

    def _start(self, jobs: Jobs, arguments: list[str]) -> Any:
        """Check the jobs, open the store, make the parent run: the sweep's record. Bad input
        exits 2 with one line, a store that does not answer exits 1."""
        from hydra_plugins.lincls_sweeps.precheck import check_jobs
        from lincls import sweeps
        from lincls.config.composition import check_no_schema
        from lincls.errors import LinclsInputError
        from lincls.tracking import progress

        loader = self.hydra_context.config_loader
        try:  # a schema chosen as an option (a study's grid too), then every value
            lines = jobs.lines()
            check_no_schema(([line] for line in lines), loader.get_group_options)
            self._validate(jobs)
            quiet = getattr(self.launcher, "workers_started", None)  # no thread at a fork
            check_jobs(loader, self.config, jobs, lines, quiet)
        except LinclsInputError as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2)
        sweep_dir = Path(str(self.config.hydra.sweep.dir))
        # tracking settings may be swept too, but one sweep writes to one store: the first job's
        first = self.hydra_context.config_loader.load_sweep_config(self.config, list(jobs[0]))
        with open_dict(first):
            del first["hydra"]
        task_config = OmegaConf.to_container(first, resolve=True)
        try:
            return sweeps.start_sweep(
                task_config,
                len(jobs),
                sweep_dir,
                list(arguments),
                jobs.varying(),
                progress.job_kinds(" ".join(job) for job in jobs),
                sweeps.adhoc_study(jobs, jobs.varying()),  # when the config names no study
            )
        except (LinclsInputError, sweeps.tracking.StoreError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            sys.exit(2 if isinstance(exc, LinclsInputError) else 1)

    def _resume(self, arguments: list[str]) -> str:
        """The command that runs this sweep again, skipping the configs already FINISHED."""
        import shlex

        program = sys.argv[0]
        if Path(program).name == "run.py":
            program = "python -m lincls.experiments.run"
        hydra = [o for o in self.config.hydra.overrides.hydra if not o.startswith("hydra.mode=")]
        given = [a for a in [*hydra, *arguments] if not a.startswith("tracking.skip_finished=")]
        return " ".join([program, "-m", *map(shlex.quote, given), "tracking.skip_finished=true"])

    def _interrupted(self, headline: Any, total: int, arguments: list[str]) -> None:
        """Ctrl-C: one line (what finished, what did not, how to resume), exit 130."""
        done = headline.runs + headline.failed + headline.skipped
        print(
            f"[lincls] interrupted: {headline.runs} of {total} configs finished, "
            f"{headline.failed} failed, {total - done} not run; resume with: "
            f"{self._resume(arguments)}",
            file=sys.stderr,
            flush=True,
        )
        sys.exit(130)


def report_command(study: str, uri: str) -> str:
    """The ``lincls report`` command of ``study`` in the store at ``uri``, as typed here: with
    ``--store`` unless ``uri`` is the store the command finds by itself."""
    import shlex

    from lincls.paths import resolve_tracking_uri

    command = f"lincls report {shlex.quote(study)}"
    if uri != resolve_tracking_uri(None):
        command += f" --store {shlex.quote(uri)}"
    return command
