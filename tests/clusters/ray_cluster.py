"""A two-node Ray cluster on 127.0.0.1: a head node and one worker node, one CPU each.

Each node is a ``ray start --block`` process in a session of its own, so stopping it stops what it
started (its GCS, raylet and workers) and nothing else on the machine. Every port a node takes
is a free one picked here (two nodes on one host would otherwise both want the defaults), and
the object stores are kept small.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from clusters import Unavailable, free_ports, short_tmpdir, start, stop, tail_of, wait_until

OBJECT_STORE_BYTES = 80 * 1024 * 1024  # Ray's floor is 75 MiB

ALIVE_NODES = """
import json, sys, ray
ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
print(json.dumps(sorted(n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"])))
"""


# The cluster's own token: Ray turns token authentication on by itself once a token exists in
# ~/.ray (any local ray.init makes one), so the nodes, the checks and the sweep all name this one.
TOKEN = secrets.token_hex(32)


def ray_env() -> dict:
    """The environment of the nodes and their clients: this cluster's token, no usage reporting,
    no address or token inherited from outside."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
    return {
        **env,
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": TOKEN,
    }


def node_ports() -> list[str]:
    ports = free_ports(6)
    names = [
        "--node-manager-port",
        "--object-manager-port",
        "--dashboard-agent-listen-port",
        "--dashboard-agent-grpc-port",
        "--runtime-env-agent-port",
        "--metrics-export-port",
    ]
    return [f"{name}={port}" for name, port in zip(names, ports, strict=True)]


def alive_nodes(address: str, env: dict) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", ALIVE_NODES, address],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    if done.returncode != 0:
        return []
    return json.loads(done.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def ray_cluster(nodes: int = 2, processes: list | None = None) -> Iterator[str]:
    """Start a head and ``nodes - 1`` worker nodes; yield the head's ``host:port``; stop them.
    ``processes`` (a list) gets each node's ``ray start`` process, the head's first: stopping a
    worker's removes its node."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise Unavailable("ray is not installed (the `ray` extra)") from None
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.is_file():
        raise Unavailable(f"no `ray` command beside {sys.executable}")
    env = ray_env()
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1",
              f"--object-store-memory={OBJECT_STORE_BYTES}", "--disable-usage-stats"]  # fmt: skip
    processes = [] if processes is None else processes
    with short_tmpdir("lincls-ray-") as root:
        head_port, client_port, dashboard_port = free_ports(3)
        address = f"127.0.0.1:{head_port}"
        try:
            log = root / "head.log"
            head = start(
                [str(ray_cli), "start", "--head", f"--port={head_port}",
                 f"--ray-client-server-port={client_port}", f"--dashboard-port={dashboard_port}",
                 "--include-dashboard=false",
                 f"--temp-dir={root / 'ray'}", *common, *node_ports()],
                log,
                env=env,
                cwd=root,
            )  # fmt: skip
            processes.append(head)
            wait_until(lambda: len(alive_nodes(address, env)) == 1, "ray head", 120, (head,), log)
            for k in range(1, nodes):
                log = root / f"worker{k}.log"
                worker = start(
                    [str(ray_cli), "start", f"--address={address}", *common, *node_ports()],
                    log,
                    env=env,
                    cwd=root,
                )  # fmt: skip
                processes.append(worker)
                wait_until(
                    lambda k=k: len(alive_nodes(address, env)) == k + 1,
                    f"ray worker node {k}",
                    120,
                    (head, worker),
                    log,
                )
            yield address
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\nhead log:\n{tail_of(root / 'head.log')}") from None
        finally:
            for process in reversed(processes):
                stop(process, timeout=10)  # a head waits ~30 s for its workers otherwise
