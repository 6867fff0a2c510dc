"""The cluster launchers' chunks (``hydra_plugins.lincls_sweeps.clusters``): their size, their
jobs' numbers, and how a Slurm task that ended without a result is told from one still running
(the clusters themselves: ``tests/test_clusters.py``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from hydra_plugins.lincls_sweeps import clusters
from hydra_plugins.lincls_sweeps.clusters import chunk_size, chunks


@pytest.mark.parametrize(
    ("total", "slots", "given", "size"),
    [
        (8, 2, 3, 3),  # as given
        (8, 2, 0, 2),  # 4 chunks: two a slot
        (2000, 2, 0, 500),
        (5000, 2, 0, 1000),  # at most MAX_CHUNK
        (1_000_000, 256, 0, 1000),
        (3, 256, 0, 1),  # at least one job
        (0, 4, 0, 1),
    ],
)
def test_a_chunk_holds_the_jobs_spread_over_two_chunks_a_slot(total, slots, given, size):
    assert chunk_size(total, slots, given) == size


def test_chunks_keep_the_jobs_numbers_and_order():
    jobs = [[f"seed={k}"] for k in range(7)]
    assert chunks(jobs, 10, 3) == [
        [(["seed=0"], 10), (["seed=1"], 11), (["seed=2"], 12)],
        [(["seed=3"], 13), (["seed=4"], 14), (["seed=5"], 15)],
        [(["seed=6"], 16)],
    ]


def test_a_negative_chunk_size_is_refused_in_one_line():
    from lincls.errors import LinclsInputError

    with pytest.raises(LinclsInputError, match=r"hydra\.launcher\.chunk_size"):
        clusters.LinclsRayLauncher(ray={}, chunk_size=-1)


class FakeTask:
    def __init__(self, job_id: str, folder: Path, returns=None):
        self.job_id = job_id
        self.paths = SimpleNamespace(result_pickle=folder / f"{job_id}.pkl")
        self._returns = returns

    def results(self):
        return [self._returns]


def test_a_slurm_task_that_ended_without_a_result_loses_its_chunk(tmp_path, monkeypatch):
    """Task 0 wrote its result; task 1 was cancelled; task 2 runs, then writes its result."""
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")  # a Slurm client here
    monkeypatch.setattr(clusters, "POLL_SECONDS", 0.0)
    monkeypatch.setattr(clusters, "RESULT_GRACE_SECONDS", 0.0)
    tasks = [FakeTask(f"7_{k}", tmp_path, returns=[f"chunk {k}"]) for k in range(3)]
    tasks[0].paths.result_pickle.touch()
    polls = []

    def states(scontrol, array_job):
        polls.append(array_job)
        if len(polls) == 3:
            tasks[2].paths.result_pickle.touch()
        return {"7_0": "COMPLETED", "7_1": "CANCELLED by 0", "7_2": "RUNNING"}

    monkeypatch.setattr(clusters, "_slurm_states", states)
    found = {task.job_id: returns for task, _, returns in clusters._slurm_results(tasks, [1, 2, 3])}
    assert found["7_0"] == ["chunk 0"] and found["7_2"] == ["chunk 2"]
    assert isinstance(found["7_1"], RuntimeError) and "CANCELLED" in str(found["7_1"])
    assert set(polls) == {"7"}


def test_a_chunk_writes_its_runs_in_batches_as_it_goes(monkeypatch):
    """A task's chunk of 150 jobs on a store written as rows writes 64, 64 and 22 runs, each
    batch once measured: a task killed midway loses at most one batch of measured runs."""
    from hydra.core.utils import JobReturn, JobStatus

    from hydra_plugins.lincls_sweeps import pool

    events: list[str] = []

    def run(composer, task_function, overrides, idx):
        events.append("run")
        ret = JobReturn(overrides=overrides, _return_value={"payload": idx})
        ret.status = JobStatus.COMPLETED
        return ret

    monkeypatch.setattr(pool, "_WORKER", {"run": run, "composer": None, "task_function": None})
    monkeypatch.setattr(
        pool, "_write_chunk", lambda returns: events.append(f"write {len(returns)}")
    )
    settings = {"record": None, "pooled": False, "defer": False, "batched": True}
    returns = pool._run_in_worker([([f"seed={k}"], k) for k in range(150)], settings)
    assert [r.overrides for r in returns] == [[f"seed={k}"] for k in range(150)]
    assert events == ["run"] * 64 + ["write 64"] + ["run"] * 64 + ["write 64"] + ["run"] * 22 + [
        "write 22"
    ]


def test_the_test_clusters_array_tasks_are_counted_with_their_pending_ranges():
    from clusters.slurm import task_count

    rows = [{"ArrayTaskId": "0"}, {"ArrayTaskId": "1"}, {"ArrayTaskId": "2-4%5"}]
    assert task_count(rows) == 5
    assert task_count([{"ArrayTaskId": "3,5-6"}]) == 3
