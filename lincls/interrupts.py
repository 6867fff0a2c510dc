"""Ctrl-C during a sweep: remembered, raised between jobs, and never printed as a traceback.

A KeyboardInterrupt raised inside a weak-reference callback (SQLAlchemy has some) is swallowed
by Python, so the sweep's SIGINT handler also remembers it and the launchers ask between jobs.
"""

from __future__ import annotations

import sys
from typing import Any

_INTERRUPTED = [False]


def on_interrupt(signum: int, frame: Any) -> None:
    """The sweep's SIGINT handler: remember it, and raise KeyboardInterrupt where we are."""
    _INTERRUPTED[0] = True
    raise KeyboardInterrupt


def unraisable(hook_args: Any) -> None:
    """``sys.unraisablehook`` during a sweep: a Ctrl-C swallowed in a weak-reference callback is
    not printed as a traceback (``on_interrupt`` remembered it; it is raised between jobs)."""
    if hook_args.exc_type is not None and issubclass(hook_args.exc_type, KeyboardInterrupt):
        return
    sys.__unraisablehook__(hook_args)


def check_interrupt() -> None:
    """Raise KeyboardInterrupt if Ctrl-C came (the flag is cleared: it is raised once)."""
    if _INTERRUPTED[0]:
        _INTERRUPTED[0] = False
        raise KeyboardInterrupt
