"""The worker side of the lincls launcher's process pool: Hydra's state arrives once per worker,
then chunks of jobs (``chunk_size`` of them a task) are run one after another."""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from typing import Any

from hydra.core.singleton import Singleton
from hydra.core.utils import JobReturn, JobStatus, setup_globals

_WORKER: dict[str, Any] = {}

# What a worker imports to run a job (~3 s, most of it scikit-learn, SciPy and pandas): the fork
# server imports it once and every worker is forked from it, ready (``worker_context``). Not the
# entry module itself: a forked worker runs the launching process's main module as its own
# (multiprocessing's ``__mp_main__``), and runpy warns of one imported already.
PRELOAD = [
    "lincls.runner",
    "lincls.sweeps",
    "lincls.orders",
    "lincls.experiments.arguments",
    "hydra_plugins.lincls_sweeps.pool",
]


def worker_context() -> Any:
    """How the pool starts its workers: forked from a fork server that has imported ``PRELOAD``
    (multiprocessing's ``forkserver``) where the platform has one, else loky's own start (a
    fresh interpreter a worker, each importing everything itself). On two cores the workers'
    imports ran beside the sweep's checks and the store's opening: one server's import instead
    of one a worker leaves the launching process a core of its own for them."""
    import multiprocessing

    from joblib.externals.loky.backend.context import get_context

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    context = get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


TRACKER_WARNINGS = [
    "ignore::UserWarning:joblib.externals.loky.backend.resource_tracker",
    "ignore::UserWarning:multiprocessing.resource_tracker",  # the fork server's pool's
]


def quiet_resource_tracker() -> None:
    """Keep the resource trackers (processes the pool starts) from warning about temporary
    folders and semaphores already gone when a stopped pool's workers are killed (Ctrl-C, a
    store that stopped answering): lines after the one a stopped sweep prints, about nothing
    that went wrong."""
    given = os.environ.get("PYTHONWARNINGS", "")
    missing = [w for w in TRACKER_WARNINGS if w not in given.split(",")]
    if missing:
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [given, *missing]))


def start_fork_server(arguments: Sequence[str]) -> None:
    """Start the pool's fork server as a sweep's command starts, when its arguments choose this
    launcher (the default) with more than one worker (``hydra.launcher.n_jobs=K``, K > 1): the
    server's imports of ``PRELOAD`` (~2.5 s in a process of their own) then run beside the
    command's own imports, composition and checks. Started once the sweep has its jobs
    (``start_workers``), they ended after the store was open, and the first jobs waited for them.
    ``start_workers`` forks the workers from this server; a command that stops before (bad input)
    leaves nothing: the server ends with the process that started it."""
    workers = None
    for argument in arguments:
        key, _, value = argument.lstrip("+").partition("=")
        if key == "hydra/launcher" and value != "lincls":
            return
        if key == "hydra.launcher.n_jobs":
            workers = value
    if not any(a in ("-m", "--multirun") for a in arguments) or workers is None:
        return
    try:
        if int(workers) < 2:
            return
    except ValueError:
        return  # the launcher refuses it in one line
    context = worker_context()
    if context is None:
        return
    from multiprocessing import forkserver

    quiet_resource_tracker()  # before the resource tracker the server starts with
    forkserver.ensure_running()


def _init_worker(state: bytes) -> None:
    """A worker's start: ``state`` is what the launcher pickled (``LinclsLauncher._state``)."""
    import signal

    state = pickle.loads(state)

    # Ctrl-C is the launching process's to handle: it stops the pool and says what finished
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(state["parent"])
    setup_globals()
    Singleton.set_state(state["singletons"])
    composer = state["composer"](
        state["hydra_context"].config_loader, state["config"], state["save_job_config"]
    )
    _WORKER.update(composer=composer, task_function=state["task_function"], run=state["run"])


PARENT_POLL_SECONDS = 0.5


def _die_with(parent: int) -> None:
    """End this worker as soon as the sweep's process (``parent``) is gone.

    A sweep killed with ``kill -9`` cannot stop its pool: its workers went on with the jobs they
    had (40–45 s, 5–7 runs written after the kill), and a resume started meanwhile could run a
    config a second time. A thread watches the sweep's process and kills the worker (SIGKILL, as
    its parent was: a run in flight is left RUNNING for the next sweep to close): at once through
    a pidfd where Linux has one, else within ``PARENT_POLL_SECONDS``. A forked worker's parent is
    the fork server, so the sweep is watched by its pid. Linux's ``PR_SET_PDEATHSIG`` is not
    used: it fires when the *thread* that started the worker ends.
    """
    import select
    import signal
    import threading
    import time

    def watch() -> None:
        try:
            handle = os.pidfd_open(parent)
        except ProcessLookupError:
            handle = None  # gone already
        except (AttributeError, OSError):  # no pidfd here
            from lincls.tracking.sweep_runs import alive

            while alive(parent):
                time.sleep(PARENT_POLL_SECONDS)
            handle = None
        if handle is not None:
            select.select([handle], [], [])  # readable once the process has ended
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="lincls-parent-watch", daemon=True).start()


def _ready() -> None:
    """A worker's first task: none (starting, it ran ``_init_worker``)."""


# Runs a worker writes at once: a cluster task's chunk of 1,000 writes as it goes, so a task
# killed midway loses at most this many measured runs, not its whole chunk's
WRITE_BATCH = 64


def _run_in_worker(chunk: list[tuple[list[str], int]], sweep: dict[str, Any]) -> list[JobReturn]:
    """Run a chunk of jobs (override list, number) one after another; their returns."""
    from lincls import sweeps

    # the workers may have started before the sweep's record existed (``start_workers``)
    if sweep["record"] is not None:
        os.environ[sweeps.SWEEP_ENV] = sweep["record"]
    sweeps.POOLED, sweeps.DEFERRED = sweep["pooled"], sweep["defer"]
    sweeps.BATCHED = sweep.get("batched", False)
    returns: list[JobReturn] = []
    written = 0
    for overrides, idx in chunk:
        ret = _WORKER["run"](_WORKER["composer"], _WORKER["task_function"], overrides, idx)
        if ret.status == JobStatus.FAILED and not _picklable(ret._return_value):
            ret.return_value = RuntimeError(repr(ret._return_value))
        ret.cfg = None  # the parent has no use for it; keep the reply small
        returns.append(ret)
        if sweeps.BATCHED and len(returns) - written == WRITE_BATCH:
            _write_chunk(returns[written:])
            written = len(returns)
    if sweeps.BATCHED:
        _write_chunk(returns[written:])
    return returns


def _write_chunk(returns: list[JobReturn]) -> None:
    """Write the runs a chunk measured (``sweeps.BATCHED``) in one go; each job's outcome gets
    its run id, or the store's failure (the launching process counts it as a lost run)."""
    from lincls import sweeps, tracking
    from lincls.tracking.measured import write_measured

    outcomes = [ret._return_value for ret in returns if isinstance(ret._return_value, dict)]
    outcomes = [outcome for outcome in outcomes if "payload" in outcome]
    if not outcomes:
        return
    record = sweeps.current_sweep()
    payloads = [outcome.pop("payload") for outcome in outcomes]
    try:
        client, experiment_id = tracking.open_experiment(
            record.tracking_uri, record.experiment, record.retry_seconds, record.experiment_id
        )
        run_ids = write_measured(client, experiment_id, payloads)
    except tracking.StoreError as exc:
        for outcome in outcomes:
            outcome.update(status="failed", error=str(exc), store_error=True)
        return
    for outcome, written in zip(outcomes, run_ids, strict=True):
        if isinstance(written, Exception):  # its values refused: the job failed
            outcome.update(status="failed", error=f"{type(written).__name__}: {written}")
        else:
            outcome["run_id"] = written


def _picklable(value: Any) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


# Chunks a worker may have queued: enough that it never waits for the next, few enough that a
# stopped sweep leaves little queued and the jobs waiting are never a million futures.
CHUNKS_IN_FLIGHT = 3
MAX_CHUNK = 64  # jobs a chunk holds at most: the progress line moves at least this often


def chunk_size(total: int, workers: int) -> int:
    """Jobs a pool's task runs: ~1/50 of each worker's share (so the progress moves smoothly and
    the last chunks end together), at most ``MAX_CHUNK``, at least 1. A task costs its worker a
    round trip to this process (~1 ms): a cheap run is ~10 ms."""
    return max(1, min(MAX_CHUNK, total // (max(workers, 1) * 50)))
