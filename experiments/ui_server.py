"""Settings of the gunicorn server `lincls ui` runs
(`gunicorn -c python:lincls.experiments.ui_server`).

gunicorn's uvicorn workers do not watch their arbiter: killed outright (SIGKILL, an out-of-memory
kill), it would leave its two workers serving on with no one to stop them. Each worker asks the
kernel for SIGTERM when its parent dies (Linux's ``PR_SET_PDEATHSIG``), which stops it as
gunicorn stops it.

On SIGINT (Ctrl-C, or a notebook's ``Popen.send_signal``) the arbiter asks its workers for a quick
stop with SIGQUIT, which uvicorn's worker only notes in a flag its server never reads: the arbiter
waited out its 30 s ``graceful_timeout`` and then killed them ("Worker … was sent SIGKILL!
Perhaps out of memory?"). Each worker now ends at once on SIGQUIT (``post_worker_init``); SIGTERM
stays uvicorn's graceful stop, which ends a request in flight first.

A worker just forked still holds the arbiter's signal handler, which only queues the signal in
the worker's copy of the arbiter: a stop sent before the worker set its own handlers was lost, and
the arbiter waited 30 s for a worker that then served on (seen on a loaded machine, where the
second worker boots after the first already answers). ``post_fork`` ends the worker at once on a
stop it got before or while it boots.

Once its workers are gone, the arbiter's interpreter took ~1.9 s of CPU to tear down the MLflow
app it preloaded (no system call, no Python frame: module teardown and the last collections), and
longer on a loaded machine (past 5 s seen). ``on_exit`` ends it with its exit status instead.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import queue
import signal
import sys
from typing import Any, NoReturn

PR_SET_PDEATHSIG = 1  # prctl option, <linux/prctl.h>
# gunicorn ≥ 25 opens a control socket at one path per user ($XDG_RUNTIME_DIR or ~/.gunicorn):
# two `lincls ui` at once would share it, and nothing of the UI's is managed through it
control_socket_disable = True


STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT)


def post_fork(server: Any, worker: Any) -> None:
    """gunicorn's hook in a worker just forked: a stop ends it while it boots (uvicorn's worker sets
    its own handlers later), and SIGTERM comes to it when the arbiter dies."""
    for stop in STOPS:
        signal.signal(stop, _exit_now)
    if _stop_queued(server):
        _exit_now()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the arbiter's own stop still stops it
        return
    if os.getppid() != worker.ppid:  # the arbiter died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


def post_worker_init(worker: Any) -> None:
    """gunicorn's hook in a worker about to serve: SIGQUIT (the arbiter's quick stop) ends it now.

    uvicorn's worker hands SIGQUIT to ``worker.handle_exit``, looked up when its loop starts, after
    this hook: an attribute of the instance wins over its class's method.
    """
    worker.handle_exit = _exit_now


def on_exit(server: Any) -> NoReturn:
    """gunicorn's hook in the arbiter just before it exits, its workers stopped: exit now, with
    the status gunicorn would exit with (a ``HaltServer``'s, being handled, else 0)."""
    halted = sys.exc_info()[1]
    status = getattr(halted, "exit_status", 0)
    logging.shutdown()  # gunicorn's log lines are written before the process goes
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status if isinstance(status, int) else 1)


def _stop_queued(server: Any) -> bool:
    """Whether a stop reached this worker before ``post_fork`` (the arbiter's handler queued it)."""
    signals = getattr(server, "SIG_QUEUE", None)
    stopped = False
    while signals is not None:
        try:
            stopped = signals.get_nowait() in STOPS or stopped
        except queue.Empty:
            break
    return stopped


def _exit_now(*_: Any) -> NoReturn:
    # a quick stop serves nothing more; the UI only reads the store, there is nothing to flush
    os._exit(0)
