"""The cluster launchers of lincls sweeps: Slurm (``hydra/launcher=lincls_slurm``, Hydra's submitit
launcher) and Ray (``hydra/launcher=lincls_ray``, Hydra's Ray launcher), a task per chunk of
configs, not per config.

Hydra's own launchers start a Slurm array task (a fresh Python: ~2 s of imports) or a Ray task
(with its config composed in the launching process first, ~60 ms) for every config, whose work
is ~10 ms. Here each task gets a chunk of jobs (``chunk_size``: from the grid and the slots the
cluster offers, or as given) and runs them as the local pool's worker does (``pool``): Hydra's
state once, a job's config derived from the composition, the chunk's runs written in one
transaction on a store written as rows (PostgreSQL, SQLite), else returned and written here.
The launching process counts each job as its chunk comes back.

A task that never comes back (a Slurm task killed or pre-empted, a Ray node removed) loses only
its chunk's runs: a chunk's runs are written when it ends, so a dead task leaves none of them
half-written. Its configs have no FINISHED run, the sweep says so and exits 1, and the same
command again runs exactly those. Ray does not retry a chunk (a retry after its runs were
written would write them twice).
"""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, setup_globals
from hydra.plugins.launcher import Launcher

from hydra_plugins.hydra_submitit_launcher.config import SlurmQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher

# Chunks per slot: a few, so the last ones end together and a lost task loses little.
CHUNKS_PER_SLOT = 2
# Jobs a chunk holds at most unless given: a Slurm task's start-up (~2 s) over ~1,000 cheap runs
# (~7 ms each) is ~0.3 of their time.
MAX_CHUNK = 1000


def chunk_size(total: int, slots: int, given: int = 0) -> int:
    """Jobs a task runs: ``given`` when positive, else the jobs spread over ``CHUNKS_PER_SLOT``
    chunks a slot, at most ``MAX_CHUNK``, at least 1."""
    if given > 0:
        return int(given)
    return max(1, min(MAX_CHUNK, math.ceil(total / (max(slots, 1) * CHUNKS_PER_SLOT))))


def chunks(job_overrides, initial_job_idx: int, size: int) -> list[list[tuple[list[str], int]]]:
    """The jobs (override list, number) in chunks of ``size``."""
    numbered = [(list(o), initial_job_idx + k) for k, o in enumerate(job_overrides)]
    return [numbered[k : k + size] for k in range(0, len(numbered), size)]


def sweep_settings() -> tuple[Any, dict[str, Any]]:
    """The sweep's record (None outside a lincls sweep) and what a chunk's task needs of it:
    where the record is, and whether its runs are written by the task as rows (``batched``) or
    returned to be written here (``defer``)."""
    from hydra_plugins.lincls_sweeps.launcher import _cheap_writes
    from lincls import sweeps

    record = sweeps.current_sweep()
    cheap = record is not None and _cheap_writes(record)
    settings = {"record": None if record is None else record.path, "pooled": record is not None,
                "defer": record is not None and not cheap, "batched": cheap}  # fmt: skip
    return record, settings


def run_chunk(
    hydra_context: Any, config: Any, task_function: Any, singletons: Any, chunk: list,
    settings: dict[str, Any],
) -> list[JobReturn]:  # fmt: skip
    """In a cluster task: Hydra's state (once per process: a Ray worker runs many chunks), then
    the chunk's jobs one after another, as the local pool's worker runs them."""
    import importlib

    from hydra_plugins.lincls_sweeps.composer import JobComposer
    from hydra_plugins.lincls_sweeps.launcher import run_one

    pool = importlib.import_module("hydra_plugins.lincls_sweeps.pool")  # ``launcher._pool``
    token = (settings["record"], id(config))
    if pool._WORKER.get("token") != token:
        setup_globals()
        Singleton.set_state(singletons)
        composer = JobComposer(hydra_context.config_loader, config, False)
        pool._WORKER.update(composer=composer, task_function=task_function, run=run_one,
                            token=token)  # fmt: skip
    return pool._run_in_worker(chunk, settings)


def count(record: Any, returns: list[JobReturn], failed: list[JobReturn]) -> None:
    """Count a chunk's jobs as the local pool's are (``LinclsLauncher._count``)."""
    from hydra_plugins.lincls_sweeps.launcher import LinclsLauncher

    for ret in returns:
        LinclsLauncher._count(record, ret)
        if ret.status == JobStatus.FAILED:
            failed.append(ret)


def lost(where: str, chunk: list, exc: BaseException) -> None:
    """Say that a task never came back: its jobs have no run (the sweep names them)."""
    first, last = chunk[0][1], chunk[-1][1]
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    print(f"[lincls] {where} (jobs #{first}-#{last}, {len(chunk)} configs) ended without "
          f"returning: {why}", file=sys.stderr, flush=True)  # fmt: skip


@dataclass
class LinclsSlurmConf(SlurmQueueConf):
    _target_: str = "hydra_plugins.lincls_sweeps.clusters.LinclsSlurmLauncher"
    chunk_size: int = 0  # jobs an array task runs (0: from the grid and array_parallelism)


class LinclsSlurmLauncher(SlurmLauncher):
    """Hydra's submitit Slurm launcher, an array task per chunk of jobs (module docstring)."""

    def __init__(self, chunk_size: int = 0, **params: Any) -> None:
        from lincls.errors import check_number

        check_number("hydra.launcher.chunk_size", chunk_size, low=0, integer=True)
        super().__init__(**params)
        self.chunk_size = int(chunk_size)

    def __call__(self, singletons: Any, chunk: list, settings: dict[str, Any]) -> list[JobReturn]:
        """An array task: its chunk's jobs."""
        return run_chunk(self.hydra_context, self.config, self.task_function, singletons, chunk,
                         settings)  # fmt: skip

    def _executor(self) -> Any:
        """submitit's Slurm executor with this launcher's parameters (as Hydra's launcher makes
        it: ``max_num_timeout`` at its making, the queue's others prefixed ``slurm_`` but for
        the ones every queue shares)."""
        import submitit
        from omegaconf import OmegaConf

        from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf

        params = dict(self.params)
        folder = params.pop("submitit_folder")
        executor = submitit.AutoExecutor(
            folder=folder, cluster="slurm", slurm_max_num_timeout=params.pop("max_num_timeout", 0)
        )
        shared = set(OmegaConf.structured(BaseQueueConf).keys())
        executor.update_parameters(
            **{key if key in shared else f"slurm_{key}": value for key, value in params.items()}
        )
        return executor

    def launch(self, job_overrides, initial_job_idx: int) -> list[JobReturn]:
        """Run every job, an array task a chunk; the ``JobReturn`` of each job that failed."""
        setup_globals()
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        record, settings = sweep_settings()
        slots = min(int(self.params.get("array_parallelism") or 1),
                    _slurm_cpus(self.params.get("partition")) or sys.maxsize)  # fmt: skip
        size = chunk_size(len(job_overrides), slots, self.chunk_size)
        parts = chunks(job_overrides, initial_job_idx, size)
        singletons = Singleton.get_state()
        tasks = self._executor().map_array(
            self, [singletons] * len(parts), parts, [settings] * len(parts)
        )
        failed: list[JobReturn] = []
        for task, chunk, returns in _slurm_results(tasks, parts):
            if isinstance(returns, BaseException):
                lost(f"Slurm task {task.job_id}", chunk, returns)
            else:
                count(record, returns, failed)
        return failed


# Slurm's states of a task that ended; one that ended without writing its result lost its chunk
ENDED = frozenset({"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
                   "OUT_OF_MEMORY", "PREEMPTED", "REVOKED", "TIMEOUT"})  # fmt: skip
POLL_SECONDS = 1.0
# How long a task's result may take to appear on the shared filesystem after Slurm says it ended.
RESULT_GRACE_SECONDS = 30.0


def _slurm_cpus(partition: str | None) -> int | None:
    """The CPUs of ``partition`` (None: of the largest partition), as ``sinfo`` counts them
    (allocated/idle/other/total); None when it does not answer."""
    import shutil
    import subprocess

    sinfo = shutil.which("sinfo")
    if sinfo is None:
        return None
    done = subprocess.run([sinfo, "-h", "-o", "%C", *(["-p", partition] if partition else [])],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    totals = [line.split("/")[-1] for line in done.stdout.split()]
    totals = [int(total) for total in totals if total.isdigit()]
    return max(totals) if done.returncode == 0 and totals else None


def _slurm_states(scontrol: str, array_job: str) -> dict[str, str] | None:
    """The state of each task of ``array_job`` that ``scontrol`` lists on its own line, by its
    id (``<array job>_<task>``: tasks still pending together are one line of a range, and not
    listed); None when Slurm no longer knows the job."""
    import subprocess

    done = subprocess.run([scontrol, "show", "job", "-o", array_job], capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    if done.returncode != 0:
        return None
    states = {}
    for line in done.stdout.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        task = fields.get("ArrayTaskId", "")
        if task.isdigit():
            states[f"{array_job}_{task}"] = fields.get("JobState", "")
    return states


def _returned(task: Any) -> Any:
    """A task's returns, or why it has none (killed, pre-empted, out of time, its jobs raised
    out of it)."""
    try:
        return task.results()[0]
    except Exception as exc:
        return exc


def _slurm_results(tasks: list, parts: list) -> Any:
    """(task, chunk, its returns or why it has none) for each array task as it ends: its result
    file, else Slurm's word (``scontrol``) that it ended without one. A cluster without
    accounting has no ``sacct``, through which submitit learns that a task died: it would wait
    for that task's result forever. Without ``scontrol``, submitit's own wait."""
    import shutil
    import time

    scontrol = shutil.which("scontrol")
    if scontrol is None:
        for task, chunk in zip(tasks, parts, strict=True):
            yield task, chunk, _returned(task)
        return
    pending = dict(zip(tasks, parts, strict=True))
    ended_at: dict[Any, float] = {}
    while pending:
        states = _slurm_states(scontrol, str(next(iter(pending)).job_id).split("_")[0])
        now = time.monotonic()
        for task in list(pending):
            if task.paths.result_pickle.exists():
                yield task, pending.pop(task), _returned(task)
                continue
            state = "" if states is None else states.get(str(task.job_id), "PENDING")
            if states is not None and state.split()[0] not in ENDED:
                ended_at.pop(task, None)  # pending or running
                continue
            # ended without a result so far: it may still reach the shared filesystem
            if now - ended_at.setdefault(task, now) > RESULT_GRACE_SECONDS:
                why = f"Slurm's state {state}" if state else "Slurm no longer knows it"
                yield task, pending.pop(task), RuntimeError(f"{why}, and no result")
        if pending:
            time.sleep(POLL_SECONDS)


@dataclass
class LinclsRayConf:
    _target_: str = "hydra_plugins.lincls_sweeps.clusters.LinclsRayLauncher"
    # ray.init's arguments (address: a running cluster's, null: one of its own) and ray.remote's
    ray: dict[str, Any] = field(default_factory=lambda: {"init": {"address": None}, "remote": {}})
    chunk_size: int = 0  # jobs a Ray task runs (0: from the grid and the cluster's CPUs)


class LinclsRayLauncher(Launcher):
    """Hydra's Ray launcher's configuration, a Ray task per chunk of jobs (module docstring)."""

    def __init__(self, ray: Any, chunk_size: int = 0) -> None:
        from omegaconf import OmegaConf

        from lincls.errors import check_number

        check_number("hydra.launcher.chunk_size", chunk_size, low=0, integer=True)
        given = OmegaConf.to_container(ray, resolve=True) if OmegaConf.is_config(ray) else ray
        self.init = dict((given or {}).get("init") or {})
        self.remote = dict((given or {}).get("remote") or {})
        self.chunk_size = int(chunk_size)
        self.config: Any = None
        self.task_function: Any = None
        self.hydra_context: Any = None

    def setup(self, *, hydra_context: Any, task_function: Any, config: Any) -> None:
        self.config = config
        self.task_function = task_function
        self.hydra_context = hydra_context

    def launch(self, job_overrides, initial_job_idx: int) -> list[JobReturn]:
        """Run every job, a Ray task a chunk, at most two chunks a CPU at a time; the
        ``JobReturn`` of each job that failed."""
        import ray

        setup_globals()
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        record, settings = sweep_settings()
        if not ray.is_initialized():
            ray.init(**{k: v for k, v in self.init.items() if v is not None or k == "address"})
        slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        parts = chunks(job_overrides, initial_job_idx,
                       chunk_size(len(job_overrides), slots, self.chunk_size))  # fmt: skip
        task = ray.remote(run_chunk).options(max_retries=0, **self.remote)
        state = (self.hydra_context, self.config, self.task_function, Singleton.get_state())
        shared = [ray.put(value) for value in state]
        waiting = iter(parts)
        pending: dict[Any, list] = {}
        failed: list[JobReturn] = []
        while True:
            for chunk in itertools.islice(waiting, slots * CHUNKS_PER_SLOT - len(pending)):
                pending[task.remote(*shared, chunk, settings)] = chunk
            if not pending:
                return failed
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                chunk = pending.pop(ref)
                try:
                    returns = ray.get(ref)
                except ray.exceptions.RayError as exc:  # its node removed, its worker killed
                    lost("a Ray task", chunk, exc)
                    continue
                count(record, returns, failed)
