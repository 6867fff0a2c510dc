"""Settings of the gunicorn server `lincls ui` runs
(`gunicorn -c python:lincls.experiments.ui_server`).

gunicorn's uvicorn workers do not watch their arbiter: killed outright (SIGKILL, an out-of-memory
kill), it would leave its two workers serving on with no one to stop them. Each worker asks the
kernel for SIGTERM when its parent dies (Linux's ``PR_SET_PDEATHSIG``), which stops it as
gunicorn stops it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
from typing import Any

PR_SET_PDEATHSIG = 1  # prctl option, <linux/prctl.h>


def post_fork(server: Any, worker: Any) -> None:
    """gunicorn's hook in a worker just forked: SIGTERM to it when the arbiter dies."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the arbiter's own stop still stops it
        return
    if os.getppid() != worker.ppid:  # the arbiter died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)
