"""Start a two-node Ray cluster, run one sweep through Hydra's Ray launcher on it, stop it.

    python -m clusters.ray_sweep RESULT.json -- OVERRIDES...

runs ``lincls run -m hydra/launcher=ray`` with the cluster's address and the given
overrides, and writes the sweep's exit code, output and the cluster's alive nodes to RESULT.json.
The test runs it in a network namespace of its own with only a loopback interface (``unshare
--net``, as root), so Ray, which takes a node's address from the route to the outside, finds
127.0.0.1 and every process of the cluster talks over it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from clusters.ray_cluster import alive_nodes, ray_cluster, ray_env


def main(argv: list[str]) -> int:
    result_path, overrides = Path(argv[0]), argv[argv.index("--") + 1 :]
    began = time.monotonic()
    with ray_cluster(nodes=2) as address:
        started = time.monotonic() - began
        nodes = alive_nodes(address, ray_env())
        args = ["-m", "hydra/launcher=ray", f"hydra.launcher.ray.init.address={address}",
                "+hydra.launcher.ray.init.object_store_memory=null", *overrides]  # fmt: skip
        sweep = subprocess.run(
            [sys.executable, "-m", "lincls.experiments.run", *args],
            capture_output=True,
            text=True,
            env=ray_env(),
            timeout=600,
        )
        swept = time.monotonic() - began - started
    result = {
        "address": address,
        "nodes": nodes,
        "returncode": sweep.returncode,
        "stderr": sweep.stderr[-20000:],
        "start_seconds": started,
        "sweep_seconds": swept,
        "total_seconds": time.monotonic() - began,
    }
    result_path.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
