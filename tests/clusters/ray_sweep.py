"""Start a Ray cluster, run sweeps through a Ray launcher on it, stop it.

    python -m clusters.ray_sweep RESULT.json [--nodes N] [--launcher NAME | --command]
        [--remove-node-at RUNS] [--store DB | --postgres] [--again] -- OVERRIDES...

runs ``lincls run -m hydra/launcher=NAME`` (default ``ray``, Hydra's) with the cluster's address
and the given overrides (``--command``: OVERRIDES are a whole ``lincls`` command line, as the docs
show it, its ``HEAD:6379`` the cluster's address and its PostgreSQL URI the server's), and writes
the sweep's exit code, output and the cluster's alive nodes to RESULT.json. ``--postgres``: the
sweep's store is a PostgreSQL server started here, in the same network, and RESULT.json gets each
child run's status and config hash read back from it. ``--remove-node-at RUNS``: once the store
(that server, or the SQLite file DB) holds RUNS finished runs, the last worker node is stopped
(its raylet and workers gone) while the sweep goes on. ``--again``: the same command is run a
second time on the nodes left (a resume). The test runs it in a network namespace of its own with
only a loopback interface (``unshare --net``, as root), so Ray, which takes a node's address from
the route to the outside, finds 127.0.0.1 and every process of the cluster talks over it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from clusters import stop
from clusters.ray_cluster import alive_nodes, ray_cluster, ray_env

FINISHED = "SELECT COUNT(*) FROM runs WHERE status = 'FINISHED'"
# each child run's status and config hash
CHILDREN = """
SELECT r.status, h.value FROM runs r
JOIN tags role ON role.run_uuid = r.run_uuid AND role.key = 'lincls.role' AND role.value = 'run'
JOIN tags h ON h.run_uuid = r.run_uuid AND h.key = 'lincls.config_hash'
"""


def _sqlite_finished(store: Path) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30) as db:
            return db.execute(FINISHED).fetchone()[0]
    except sqlite3.Error:  # not made yet
        return 0


def _postgres_rows(uri: str, sql: str) -> list[tuple]:
    import psycopg

    try:
        with psycopg.connect(uri, connect_timeout=30) as db:
            return [tuple(row) for row in db.execute(sql).fetchall()]
    except psycopg.errors.UndefinedTable:  # MLflow has not made its tables yet
        return []


def _finished_counter(args: argparse.Namespace, uri: str | None) -> Callable[[], int]:
    if uri is None:
        return lambda: _sqlite_finished(args.store)
    return lambda: (_postgres_rows(uri, FINISHED) or [(0,)])[0][0]


def _filled(arg: str, address: str, uri: str | None) -> str:
    """A documented command's argument with its placeholders filled: the head's address, and the
    store this cluster writes to."""
    if arg.startswith("tracking.uri=postgresql://") and uri is not None:
        return f"tracking.uri={uri}"
    return arg.replace("HEAD:6379", address)


def main(argv: list[str]) -> int:
    cut = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("result", type=Path)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--launcher", default="ray")
    parser.add_argument("--command", action="store_true")
    parser.add_argument("--remove-node-at", type=int, default=0)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--again", action="store_true")
    args = parser.parse_args(argv[:cut])
    overrides = argv[cut + 1 :]
    began = time.monotonic()
    processes: list = []
    result: dict = {"runs": []}
    with contextlib.ExitStack() as stack:
        uri = None
        if args.postgres:
            from clusters.postgres import postgres_server

            uri = stack.enter_context(postgres_server())
            if not args.command:
                overrides.append(f"tracking.uri={uri}")
        address = stack.enter_context(ray_cluster(nodes=args.nodes, processes=processes))
        started = time.monotonic() - began
        result.update(address=address, nodes=alive_nodes(address, ray_env()),
                      start_seconds=started)  # fmt: skip
        if args.command:
            filled = [_filled(arg, address, uri) for arg in overrides]
            command = [sys.executable, "-m", "lincls.experiments.cli", *filled]
        else:
            command = [sys.executable, "-m", "lincls.experiments.run", "-m",
                       f"hydra/launcher={args.launcher}",
                       f"hydra.launcher.ray.init.address={address}",
                       "+hydra.launcher.ray.init.object_store_memory=null", *overrides]  # fmt: skip
        result["command"] = command
        for attempt in range(2 if args.again else 1):
            begun = time.monotonic()
            # its output to a file: a pipe unread while the store is watched could fill and stall it
            said = args.result.with_name(f"{args.result.stem}.sweep{attempt}.log")
            with open(said, "w") as log:
                sweep = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log,
                                         env=ray_env())  # fmt: skip
            removed = None
            if attempt == 0 and args.remove_node_at:
                finished = _finished_counter(args, uri)
                while sweep.poll() is None and finished() < args.remove_node_at:
                    time.sleep(0.5)
                if sweep.poll() is None:
                    removed = finished()
                    stop(processes[-1], timeout=10)  # the last worker node
            sweep.wait(timeout=1500)
            stderr = said.read_text()
            result["runs"].append({"returncode": sweep.returncode, "stderr": stderr[-20000:],
                                   "seconds": time.monotonic() - begun,
                                   "removed_at": removed})  # fmt: skip
        result["nodes_after"] = alive_nodes(address, ray_env())
        if uri is not None:
            result["children"] = _postgres_rows(uri, CHILDREN)
    result["returncode"] = result["runs"][0]["returncode"]
    result["stderr"] = result["runs"][0]["stderr"]
    result["sweep_seconds"] = result["runs"][0]["seconds"]
    result["total_seconds"] = time.monotonic() - began
    args.result.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
