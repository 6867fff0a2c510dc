"""Start a Ray cluster, run sweeps through a Ray launcher on it, stop it.

    python -m clusters.ray_sweep RESULT.json [--nodes N] [--launcher NAME]
        [--remove-node-at RUNS --store DB] [--again] -- OVERRIDES...

runs ``lincls run -m hydra/launcher=NAME`` (default ``ray``, Hydra's) with the cluster's address
and the given overrides, and writes the sweep's exit code, output and the cluster's alive nodes
to RESULT.json. ``--remove-node-at RUNS``: once the SQLite store DB holds RUNS finished runs, the
last worker node is stopped (its raylet and workers gone) while the sweep goes on. ``--again``:
the same command is run a second time on the nodes left (a resume). The test runs it in a
network namespace of its own with only a loopback interface (``unshare --net``, as root), so Ray,
which takes a node's address from the route to the outside, finds 127.0.0.1 and every process of
the cluster talks over it.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from clusters import stop
from clusters.ray_cluster import alive_nodes, ray_cluster, ray_env

FINISHED = "SELECT COUNT(*) FROM runs WHERE status = 'FINISHED'"


def _finished(store: Path) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30) as db:
            return db.execute(FINISHED).fetchone()[0]
    except sqlite3.Error:  # not made yet
        return 0


def main(argv: list[str]) -> int:
    cut = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("result", type=Path)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--launcher", default="ray")
    parser.add_argument("--remove-node-at", type=int, default=0)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--again", action="store_true")
    args = parser.parse_args(argv[:cut])
    overrides = argv[cut + 1 :]
    began = time.monotonic()
    processes: list = []
    result: dict = {"runs": []}
    with ray_cluster(nodes=args.nodes, processes=processes) as address:
        started = time.monotonic() - began
        result.update(address=address, nodes=alive_nodes(address, ray_env()),
                      start_seconds=started)  # fmt: skip
        command = [sys.executable, "-m", "lincls.experiments.run", "-m",
                   f"hydra/launcher={args.launcher}", f"hydra.launcher.ray.init.address={address}",
                   "+hydra.launcher.ray.init.object_store_memory=null", *overrides]  # fmt: skip
        for attempt in range(2 if args.again else 1):
            begun = time.monotonic()
            sweep = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=ray_env())  # fmt: skip
            removed = None
            if attempt == 0 and args.remove_node_at:
                while sweep.poll() is None and _finished(args.store) < args.remove_node_at:
                    time.sleep(0.2)
                if sweep.poll() is None:
                    removed = _finished(args.store)
                    stop(processes[-1], timeout=10)  # the last worker node
            _, stderr = sweep.communicate(timeout=1500)
            result["runs"].append({"returncode": sweep.returncode, "stderr": stderr[-20000:],
                                   "seconds": time.monotonic() - begun,
                                   "removed_at": removed})  # fmt: skip
        result["nodes_after"] = alive_nodes(address, ray_env())
    result["returncode"] = result["runs"][0]["returncode"]
    result["stderr"] = result["runs"][0]["stderr"]
    result["sweep_seconds"] = result["runs"][0]["seconds"]
    result["total_seconds"] = time.monotonic() - began
    args.result.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
