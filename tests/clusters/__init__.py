"""Real clusters on this machine for the scaling-out tests: PostgreSQL, Ray and Slurm.

Each helper starts its daemons on 127.0.0.1 in a short-lived directory of its own (short, under
the system's temp dir: Unix socket paths must stay under 108 bytes), yields what a sweep needs to
reach it, and stops exactly the processes it started. A helper raises ``Unavailable`` when this
machine lacks what it needs (a binary, root); the tests turn that into a skip with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path


class Unavailable(RuntimeError):
    """This machine cannot run the cluster (the message says what is missing)."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_ports(n: int) -> list[int]:
    """``n`` distinct free ports."""
    ports: list[int] = []
    while len(ports) < n:
        port = free_port()
        if port not in ports:
            ports.append(port)
    return ports


@contextlib.contextmanager
def short_tmpdir(prefix: str) -> Iterator[Path]:
    """A fresh directory under the system's temp dir, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def wait_until(
    check: Callable[[], bool],
    what: str,
    timeout: float,
    processes: tuple[subprocess.Popen, ...] = (),
    log: Path | None = None,
) -> None:
    """Poll ``check`` every 0.25 s; fail with ``what`` (and the log's tail) on a time-out or
    when one of ``processes`` exits first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except OSError:
            pass
        dead = [p for p in processes if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            reason = f"exited with {dead[0].returncode}" if dead else f"not within {timeout:.0f} s"
            tail = tail_of(log) if log is not None else ""
            raise RuntimeError(f"{what}: {reason}\n{tail}")
        time.sleep(0.25)


def tail_of(path: Path, chars: int = 3000) -> str:
    """The end of a log file, or '' when it is not there."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def start(args: list[str], log: Path, env: dict | None = None, cwd: Path | None = None):
    """A daemon in its own session (so its whole process group can be stopped), output to
    ``log``."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )


def session_of(leader: int) -> list[int]:
    """The processes of the session ``leader`` started (with ``start``), whatever their group."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.getsid(int(entry.name)) == leader:
                    members.append(int(entry.name))
    return members


def stop(process: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM to the process group a ``start`` made; after ``timeout``, SIGKILL to every process
    still in its session (a daemon's children may have made groups of their own)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=timeout)
    for pid in session_of(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def is_root() -> bool:
    return os.geteuid() == 0


def which(name: str, *more_dirs: Path) -> str:
    """The path of executable ``name`` on PATH, the sbin directories or ``more_dirs``."""
    path = os.pathsep.join(
        [os.environ.get("PATH", ""), "/usr/sbin", "/sbin", *(str(d) for d in more_dirs)]
    )
    found = shutil.which(name, path=path)
    if found is None:
        raise Unavailable(f"`{name}` is not installed (`make system` installs it as root)")
    return found
