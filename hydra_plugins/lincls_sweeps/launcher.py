"""The ``lincls`` launcher: sweep jobs in this process (``n_jobs: 1``) or in a process pool.

What a job costs besides its work, measured on a 2-core machine: Hydra composes each job's
config from the defaults list (~60 ms), writes three YAML files into a per-job ``.hydra/``
directory and configures logging per job. The work itself (data, fit, bounds) is ~12 ms for
n = 1000, d = 20, and writing its run ~2 ms on a SQLite store (``tracking.sqlite_runs``), ~30 ms
through MLflow's calls. So this launcher:

- composes once per distinct choice of config groups and derives every other job from it by
  copying its task part and applying the job's value overrides, exactly as Hydra applies
  command-line overrides after composition (``composer.JobComposer``), ~1 ms a job; a job of a
  lincls sweep whose config it can make as plain values (``plain``: value overrides, the
  composition resolved once) runs from them, without OmegaConf, ~0.1 ms;
- writes no per-job ``.hydra/`` output and sets up no per-job logging (the resolved config is
  logged to MLflow as the run's params; ``save_job_config: true`` writes ``config.yaml``);
- with ``n_jobs > 1`` sends only the override lists to a loky process pool whose workers got
  the Hydra state once, at start-up (Hydra's joblib launcher pickles it again for every job);
  the workers write their runs, and this process counts them as they come back;
- on a store written through MLflow's calls (a server, PostgreSQL) the workers of a lincls
  sweep only measure their runs and this process writes them, so a run's writes overlap the next
  run's measuring instead of following it; with ``n_jobs: 1`` this takes one worker, for a
  sweep of at least ``WRITE_BEHIND_JOBS`` jobs. Otherwise ``n_jobs: 1`` runs the jobs in this
  process: a SQLite store's writes are too cheap to pay for a worker's start-up (~3 s).
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.hydra_config import HydraConfig
from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, setup_globals
from hydra.plugins.launcher import Launcher
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig, OmegaConf

from hydra_plugins.lincls_sweeps.composer import JobComposer
from lincls import interrupts  # tiny: Ctrl-C's flag, no heavy imports

# Jobs from which one worker measures and this process writes (below: all in this process).
WRITE_BEHIND_JOBS = 100


@dataclass
class LinclsLauncherConf:
    _target_: str = "hydra_plugins.lincls_sweeps.launcher.LinclsLauncher"
    n_jobs: int = 1  # worker processes measuring runs (1: one after another)
    save_job_config: bool = False  # write <sweep dir>/<job>/config.yaml for every job


def run_one(composer: JobComposer, task_function: TaskFunction, overrides, idx: int) -> JobReturn:
    """Compose and run one job; its failure is caught into the ``JobReturn``."""
    from lincls.sweeps import StoreDown

    ret = JobReturn(overrides=list(overrides), task_name=None)
    if _plain_job(composer, task_function, overrides, ret):
        return ret
    try:
        task_cfg, job_dir = composer.job(overrides, idx)
        if composer.save_job_config:
            job_dir.mkdir(parents=True, exist_ok=True)
            (job_dir / "config.yaml").write_text(OmegaConf.to_yaml(task_cfg))
        ret.cfg = task_cfg
        ret.task_name = str(HydraConfig.get().job.name)
        ret.working_dir = os.getcwd()
        ret.return_value = task_function(task_cfg)
        ret.status = JobStatus.COMPLETED
    except StoreDown:
        raise  # the sweep stops: every later job would wait out the store's budget too
    except Exception as exc:  # kept in the JobReturn, as Hydra's run_job does
        from lincls.config.composition import input_error

        ret.return_value = input_error(exc) or exc  # a config that does not compose: one line
        ret.status = JobStatus.FAILED
    return ret


def _plain_job(composer: JobComposer, task_function: TaskFunction, overrides, ret) -> bool:
    """Run a job of a lincls sweep from its plain config (``JobComposer.plain``), as the task
    would once it resolved its config; False (nothing run) when that config cannot be made so,
    or the task is not lincls's (``lincls_sweep_job``), or each job's config is to be written."""
    from lincls.sweeps import current_sweep

    sweep_job = getattr(task_function, "lincls_sweep_job", None)
    if sweep_job is None or composer.save_job_config:
        return False
    record = current_sweep()
    made = None if record is None else composer.plain(overrides)
    if made is None:
        return False
    outcome = sweep_job(made[0], overrides, record)
    if outcome is None:  # refused before it ran (its orders): composed, it says so as before
        return False
    ret.task_name = composer.task_name
    ret.working_dir = os.getcwd()
    ret.return_value = outcome
    ret.status = JobStatus.COMPLETED
    return True


def _cheap_writes(record) -> bool:
    """Whether the sweep's store writes its runs as rows (``tracking.sqlite_runs``, ~2 ms a run)."""
    from lincls import tracking

    client, _ = tracking.open_experiment(record.tracking_uri, record.experiment)
    return client.rows is not None


def chunk_settings(record: Any, defer: bool, batched: bool) -> dict[str, Any]:
    """What a worker running a chunk of jobs needs of the sweep (``pool._run_in_worker``): its
    record's path, whether the launching process counts the jobs (``pooled``), writes their
    runs (``defer``) or the worker writes a chunk's runs at once (``batched``)."""
    return {"record": None if record is None else record.path, "pooled": record is not None,
            "defer": defer, "batched": batched}  # fmt: skip


def _pool() -> Any:
    """The pool's worker side, as ``sys.modules`` holds it: Hydra's plugin scan loads the modules
    of ``hydra_plugins`` a second time, and a function of the first copy (imported when this
    module was) is not the one its module now names, so it would be pickled by value, with a
    copy of its module's globals (the worker's state set in one copy, read from another)."""
    import importlib

    return importlib.import_module("hydra_plugins.lincls_sweeps.pool")


class LinclsLauncher(Launcher):
    """Runs a sweep's jobs (module docstring)."""

    def __init__(self, n_jobs: int = 1, save_job_config: bool = False) -> None:
        from lincls.errors import check_number

        check_number("hydra.launcher.n_jobs", n_jobs, low=1, integer=True)
        self.n_jobs = int(n_jobs)
        self.save_job_config = bool(save_job_config)
        self.config: DictConfig | None = None
        self.task_function: TaskFunction | None = None
        self.hydra_context: HydraContext | None = None
        self._executor: Any = None  # the pool, once started
        self._starting: threading.Thread | None = None  # starting the pool (``start_workers``)

    def setup(
        self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig
    ) -> None:
        self.config = config
        self.task_function = task_function
        self.hydra_context = hydra_context

    def launch(
        self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int
    ) -> Sequence[JobReturn]:
        """Run every job; a job's exception is kept in its ``JobReturn``, the others go on.

        Returns the ``JobReturn`` of each job that failed (with the job's overrides and error):
        a sweep of a million jobs would hold a million of them, and what finished is counted
        in the sweep's progress file.
        """
        from lincls import sweeps

        setup_globals()
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        total = len(job_overrides)
        record = sweeps.current_sweep()
        cheap = record is not None and _cheap_writes(record)
        in_process = self.n_jobs == 1 and (total < WRITE_BEHIND_JOBS or record is None or cheap)
        if in_process or total == 1:
            composer = JobComposer(
                self.hydra_context.config_loader, self.config, self.save_job_config
            )
            saved = HydraConfig.instance().cfg
            try:
                failed = []
                for k, overrides in enumerate(job_overrides):
                    interrupts.check_interrupt()
                    ret = run_one(composer, self.task_function, overrides, initial_job_idx + k)
                    if ret.status == JobStatus.FAILED:
                        failed.append(ret)
                return failed
            finally:
                HydraConfig.instance().cfg = saved
        numbered = ((list(o), initial_job_idx + k) for k, o in enumerate(job_overrides))
        return self._launch_pool(numbered, total, record, defer=record is not None and not cheap,
                                 batched=cheap)  # fmt: skip

    def _workers(self, jobs: int) -> int:
        return min(self.n_jobs if self.n_jobs > 0 else os.cpu_count() or 1, jobs)

    def start_workers(self, jobs: int) -> None:
        """Start the pool of a sweep of ``jobs`` jobs now, before the sweep checks its configs
        and opens the store, so that the workers' start-up (~3 s of imports, once, in the fork
        server they are forked from: ``pool.worker_context``) overlaps them; ``launch`` then
        finds them ready. Nothing for ``n_jobs: 1`` or a single job. Their state is pickled
        here; handing it to them takes a thread of its own (a worker reads it only once the
        server's imports are done: seconds that this process would wait)."""
        if self.n_jobs != 1 and jobs > 1 and self._executor is None and self._starting is None:
            state = self._state()
            self._starting = threading.Thread(
                target=self._start_pool, args=(self._workers(jobs), state),
                name="lincls-pool-start", daemon=True,
            )  # fmt: skip
            self._starting.start()

    def workers_started(self) -> None:
        """Wait until ``start_workers``'s thread is done: a process forked meanwhile could
        inherit a lock that thread holds (the sweep's check forks one past 20,000 configs)."""
        self._started()

    def _started(self) -> None:
        """Wait for ``start_workers``'s thread (a pool that failed to start is started again)."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None

    def _state(self) -> bytes:
        """What a worker starts from (``pool._init_worker``), pickled now: Hydra's state is read
        while this process goes on checking configs with it."""
        from joblib.externals import cloudpickle

        state = {
            "singletons": Singleton.get_state(),
            "hydra_context": self.hydra_context,
            "config": self.config,
            "task_function": self.task_function,
            "save_job_config": self.save_job_config,
            "parent": os.getpid(),
            "composer": JobComposer,  # the worker's side (``pool``) gets them by name
            "run": run_one,
        }
        return cloudpickle.dumps(state)

    def _start_pool(self, workers: int, state: bytes | None = None) -> None:
        from joblib.externals.loky import get_reusable_executor

        state = self._state() if state is None else state
        pool = _pool()
        pool.quiet_resource_tracker()
        self._executor = get_reusable_executor(
            max_workers=workers,
            initializer=pool._init_worker,
            initargs=(state,),
            reuse=False,
            context=pool.worker_context(),
        )
        for _ in range(workers):
            self._executor.submit(pool._ready)

    def stop_workers(self) -> None:
        """Stop the pool at once (its workers dead when this returns)."""
        self._started()
        if self._executor is not None:
            self._executor.shutdown(wait=True, kill_workers=True)
            self._executor = None

    def _launch_pool(
        self, jobs: Iterator[tuple[list[str], int]], total: int, record: Any, defer: bool,
        batched: bool = False,
    ) -> list[JobReturn]:  # fmt: skip
        """Send ``jobs`` to the pool in chunks (``chunk_size``), at most ``CHUNKS_IN_FLIGHT``
        per worker at a time (a million jobs are never all queued), and count each job as its
        chunk comes back."""
        from concurrent.futures import FIRST_COMPLETED, wait

        sweep = chunk_settings(record, defer, batched)
        workers = self._workers(total)
        self._started()
        if self._executor is None:
            self._start_pool(workers)
        executor, self._executor = self._executor, None
        pool = _pool()
        size = pool.chunk_size(total, workers)
        chunks = iter(lambda: list(itertools.islice(jobs, size)), [])
        pending: set = set()
        failed: list[JobReturn] = []
        try:
            while True:
                room = workers * pool.CHUNKS_IN_FLIGHT - len(pending)
                for chunk in itertools.islice(chunks, room):
                    pending.add(executor.submit(pool._run_in_worker, chunk, sweep))
                if not pending:
                    break
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    interrupts.check_interrupt()
                    for ret in future.result():
                        self._count(record, ret)
                        if ret.status == JobStatus.FAILED:
                            failed.append(ret)
            executor.shutdown(wait=False, kill_workers=True)  # idle: their runs are written
            return failed
        except BaseException:  # stopped (store down, Ctrl-C): the jobs not started never start
            executor.shutdown(wait=True, kill_workers=True)  # dead before the sweep closes its runs
            raise

    @staticmethod
    def _count(record: Any, ret: JobReturn) -> None:
        """In this process: write a job's deferred run, count it in the progress file."""
        from lincls import sweeps

        outcome = ret._return_value
        if record is not None and isinstance(outcome, dict) and "status" in outcome:
            sweeps.write_deferred(record, outcome)
            sweeps.report_progress(record, outcome, " ".join(ret.overrides or ()))
            sweeps.count_store_failure(record, outcome)
