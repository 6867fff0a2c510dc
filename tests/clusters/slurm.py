"""A one-node Slurm cluster on 127.0.0.1: munged, slurmctld and slurmd from Debian's munge and
slurm-wlm, each in the foreground of a process this helper started and stops.

The node is this host (its short name), at 127.0.0.1, with every CPU the machine has. munged runs
with a key made for the cluster and a socket in the cluster's directory; slurm.conf names that
socket, so clients find it through ``SLURM_CONF`` alone. There is no accounting database
(``sacct`` answers that accounting is disabled; submitit then reads each job's result file).
slurmd must run as root to start jobs, so the cluster needs root.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Iterator

from clusters import Unavailable, free_ports, is_root, short_tmpdir, start, stop, wait_until, which

# KillWait: a cancelled task gets SIGTERM, which submitit's job ignores, and SIGKILL KillWait
# seconds later (30 by default: a task then often finishes its chunk first); here it dies at once.
CONF = """\
ClusterName=lincls
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge.socket
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
MailProg={true}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
ReturnToService=2
KillWait=2
MinJobAge=3600
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=lincls Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""


def node_name() -> str:
    return socket.gethostname().split(".")[0]


def node_state(env: dict) -> str:
    """The node's state as ``sinfo`` reports it ('' while slurmctld does not answer)."""
    done = subprocess.run(
        [which("sinfo"), "-h", "-N", "-o", "%T"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    return done.stdout.strip() if done.returncode == 0 else ""


@contextlib.contextmanager
def slurm_cluster() -> Iterator[dict]:
    """Start munged, slurmctld and slurmd; yield the environment for Slurm's clients
    (``SLURM_CONF`` set); stop them and delete their state."""
    if not is_root():
        raise Unavailable("slurmd needs root to start jobs")
    mungekey, munged = which("mungekey"), which("munged")
    slurmctld, slurmd = which("slurmctld"), which("slurmd")
    which("sbatch")
    true = which("true")
    processes: list[subprocess.Popen] = []
    with short_tmpdir("lincls-slurm-") as root:
        for sub in ("state", "spool"):
            (root / sub).mkdir()
        subprocess.run(
            [mungekey, "--create", f"--keyfile={root / 'munge.key'}"],
            check=True,
            capture_output=True,
            timeout=30,
        )
        ctld_port, slurmd_port = free_ports(2)
        node = node_name()
        conf = root / "slurm.conf"
        conf.write_text(
            CONF.format(
                node=node,
                ctld_port=ctld_port,
                slurmd_port=slurmd_port,
                root=root,
                true=true,
                cpus=os.cpu_count() or 1,
            )
        )
        env = {**os.environ, "SLURM_CONF": str(conf)}
        try:
            munge_log = root / "munged.log"
            processes.append(
                start(
                    [
                        munged,
                        "--foreground",
                        "--force",
                        f"--socket={root / 'munge.socket'}",
                        f"--key-file={root / 'munge.key'}",
                        f"--pid-file={root / 'munged.pid'}",
                        f"--seed-file={root / 'munged.seed'}",
                        f"--log-file={munge_log}",
                    ],
                    root / "munged.out",
                )
            )
            wait_until(lambda: (root / "munge.socket").exists(), "munged", 30, tuple(processes),
                       root / "munged.out")  # fmt: skip
            processes.append(
                start([slurmctld, "-D", "-i", "-f", str(conf)], root / "slurmctld.out", env=env)
            )
            processes.append(
                start([slurmd, "-D", "-N", node, "-f", str(conf)], root / "slurmd.out", env=env)
            )
            wait_until(lambda: node_state(env) == "idle", "slurm node idle", 120,
                       tuple(processes), root / "slurmctld.log")  # fmt: skip
            yield env
        finally:
            if len(processes) == 3:  # jobs still there when the test failed: end them first
                with contextlib.suppress(Unavailable, subprocess.SubprocessError, OSError):
                    subprocess.run(
                        [which("scancel"), "--user=root"], env=env, capture_output=True, timeout=30
                    )
            for process in reversed(processes):
                stop(process, timeout=30)


def array_task_states(env: dict) -> list[str]:
    """The state of every array task Slurm remembers (``MinJobAge`` keeps finished ones an
    hour)."""
    return [task["JobState"] for task in array_tasks(env) if task["JobState"]]


def array_tasks(env: dict) -> list[dict[str, str]]:
    """Every array task Slurm remembers: its ``JobId``, ``ArrayJobId``, ``ArrayTaskId`` and
    ``JobState``."""
    done = subprocess.run(
        [which("scontrol"), "show", "job", "-o"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=True,
    )
    keys = ("JobId", "ArrayJobId", "ArrayTaskId", "JobState")
    tasks = []
    for line in done.stdout.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        if "ArrayTaskId" in fields:
            tasks.append({key: fields.get(key, "") for key in keys})
    return tasks


def task_count(tasks: list[dict[str, str]]) -> int:
    """How many array tasks ``array_tasks`` lists: Slurm shows the pending ones of an array job
    as one row (``ArrayTaskId=2-4%5``: tasks 2 to 4, at most 5 at once)."""
    total = 0
    for task in tasks:
        for part in task["ArrayTaskId"].split("%")[0].split(","):
            first, _, last = part.partition("-")
            total += int(last or first) - int(first) + 1
    return total


def cancel(env: dict, array_job: str, task: str) -> None:
    """Kill array task ``task`` of ``array_job`` as a pre-empting scheduler would (SIGKILL)."""
    subprocess.run(
        [which("scancel"), "--full", "--signal=KILL", f"{array_job}_{task}"],
        env=env,
        timeout=30,
        check=True,
        capture_output=True,
    )
