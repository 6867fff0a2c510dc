"""A throwaway PostgreSQL server on 127.0.0.1 with one empty database for MLflow.

initdb and pg_ctl refuse to run as root, so as root they run as the ``postgres`` user (through
``runuser``) in a data directory that user owns; as anyone else they run as that user. The server
listens on 127.0.0.1 only, with trust authentication for local connections and no fsync (a test
database: losing it in a crash costs nothing).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

from clusters import Unavailable, free_port, is_root, short_tmpdir, tail_of, which


def bindir() -> Path:
    """Where the server's programs are: ``pg_config --bindir``, else PATH, else the newest
    version under Debian's ``/usr/lib/postgresql/<version>/bin``."""
    with contextlib.suppress(Unavailable, OSError, subprocess.SubprocessError):
        out = subprocess.run(
            [which("pg_config"), "--bindir"], capture_output=True, text=True, check=True
        )
        candidate = Path(out.stdout.strip())
        if (candidate / "initdb").is_file():
            return candidate
    with contextlib.suppress(Unavailable):
        return Path(which("initdb")).parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if not versions:
        raise Unavailable("PostgreSQL's server programs (initdb, pg_ctl) are not installed")
    return versions[-1].parent


@contextlib.contextmanager
def postgres_server(database: str = "mlflow") -> Iterator[str]:
    """Start a server, create ``database``; yield its ``postgresql://`` URI; stop and delete."""
    bin_ = bindir()
    if is_root():
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            raise Unavailable("no `postgres` user to run initdb as (root may not)") from None
        as_owner = [which("runuser"), "-u", "postgres", "--"]
    else:
        owner, as_owner = pwd.getpwuid(os.geteuid()), []
    port = free_port()
    with short_tmpdir("lincls-pg-") as root:
        os.chown(root, owner.pw_uid, owner.pw_gid)
        data, log = root / "data", root / "server.log"

        def run(*args: str) -> None:
            done = subprocess.run(
                [*as_owner, *args], cwd=root, capture_output=True, text=True, timeout=120
            )
            if done.returncode != 0:
                raise RuntimeError(f"{args[0]} failed:\n{done.stdout}\n{done.stderr}")

        run(str(bin_ / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
            "-E", "UTF8", "--no-sync", "--no-instructions")  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        try:
            run(str(bin_ / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                "-w", "-t", "60", "start")  # fmt: skip
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n{tail_of(log)}") from None
        try:
            run(str(bin_ / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                database)  # fmt: skip
            yield f"postgresql://postgres@127.0.0.1:{port}/{database}"
        finally:
            subprocess.run(
                [*as_owner, str(bin_ / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                cwd=root,
                capture_output=True,
                timeout=120,
            )
