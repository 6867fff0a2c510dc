"""A sweep's jobs as a lazy grid: the jobs, order and duplicates of Hydra's product made unique by
a walk in order; a line of a million jobs parsed as Hydra's grammar parses it; the precheck's
first bad config named as a walk in order names it."""

from __future__ import annotations

import itertools
import os
import random
import re
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser

from hydra_plugins.lincls_sweeps.grid import Grid, Jobs, Lines
from hydra_plugins.lincls_sweeps.overrides import _integer_line, _parse_line


def listed(grids: list[list[list[str]]]) -> list[list[str]]:
    """The jobs as the sweeper listed them before: each grid's product, kept if not yet listed."""
    jobs: list[list[str]] = []
    for lists in grids:
        for job in itertools.product(*lists):
            if list(job) not in jobs:
                jobs.append(list(job))
    return jobs


def random_grids(rng: random.Random) -> list[list[list[str]]]:
    keys = ["seed", "learner", "learner.lr", "dataset.n", "+extra"]
    grids = []
    for _ in range(rng.randint(1, 4)):
        chosen = rng.sample(keys, rng.randint(1, 4))
        if rng.random() < 0.5:
            chosen = sorted(chosen)  # grids of the same keys in the same order overlap
        grids.append(
            [[f"{k}={rng.randint(0, 3)}" for _ in range(rng.randint(1, 4))] for k in chosen]
        )
    return grids


@pytest.mark.parametrize("seed", range(60))
def test_jobs_are_the_listed_jobs_in_order(seed):
    grids = random_grids(random.Random(seed))
    jobs = Jobs([Grid(lists) for lists in grids])
    expected = listed(grids)
    assert list(jobs) == expected
    assert len(jobs) == len(expected)
    assert [jobs[i] for i in range(len(jobs))] == expected  # random access
    assert jobs[-1] == expected[-1] and jobs[1:3] == expected[1:3]
    assert list(Lines(jobs)) == [" ".join(j) for j in expected]
    assert jobs.lines() == {line for job in expected for line in job}


@pytest.mark.parametrize("seed", range(60))
def test_varying_keys_and_firsts_follow_the_listed_jobs(seed):
    from lincls.sweeps import varying_keys

    grids = random_grids(random.Random(1000 + seed))
    jobs = Jobs([Grid(lists) for lists in grids])
    expected = listed(grids)
    assert jobs.varying() == varying_keys(expected)
    # every choice of the lines but seed's, once at least, each a job of the sweep
    firsts = [tuple(j) for j in jobs.firsts("seed")]
    drop_seed = {tuple(x for x in j if not x.startswith("seed=")) for j in expected}
    assert {tuple(x for x in j if not x.startswith("seed=")) for j in firsts} == drop_seed
    assert set(firsts) <= {tuple(j) for j in expected}


def test_a_line_given_twice_is_one_job_and_a_held_grid_adds_none():
    jobs = Jobs([Grid([["seed=1", "seed=1", "seed=2"]]), Grid([["seed=2", "seed=1"]])])
    assert list(jobs) == [["seed=1"], ["seed=2"]]
    assert jobs.varying() == ("seed",)
    assert len(jobs.grids) == 1  # the second grid's jobs are all the first's


def test_a_million_jobs_cost_their_lines_not_their_product():
    lines = [[f"seed={k}" for k in range(1_000_000)], ["dataset.n=50"], ["study=million"]]
    tracemalloc.start()
    jobs = Jobs([Grid(lines)])
    assert len(jobs) == 1_000_000 and jobs[999_999] == [
        "seed=999999",
        "dataset.n=50",
        "study=million",
    ]
    assert sum(1 for _ in jobs.firsts("seed")) == 1
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200 * 2**20  # the lines' set (~130 MB); the product listed was ~400 MB


class Repository:
    def group_exists(self, key: str) -> bool:
        return key in ("learner", "dataset")


class Loader:
    repository = Repository()


LINES = [
    "seed=0", "seed=5", "seed=-3", "seed=123456789012", "learner.lr=0", "dataset.n=50",
    "learner=3", "a.b_c.d=42", "+x=3", "~seed", "seed=007", "seed=1_000", "seed=+4", "seed=-0",
    "seed=1e3", "seed=5.0", "seed='5'", "seed=abc", "x@pkg=3", "hydra.launcher.n_jobs=2",
]  # fmt: skip


@pytest.mark.parametrize("line", LINES)
def test_an_integer_line_is_parsed_as_hydra_parses_it(line):
    loader = Loader()
    made = _integer_line(loader, {}, line)
    (parsed,) = OverridesParser.create(config_loader=loader).parse_overrides([line])
    if made is None:  # not an integer line: the grammar parses it
        assert _parse_line(loader, line)[0] == parsed
        return
    override, plain = made
    assert override == parsed and type(override._value) is type(parsed._value)
    assert plain == _parse_line(loader, line)[1]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # a bad seed and a bad rest: the first config in order is named, config 2 either way
        (["seed=0,-1", "learner.lr=1,-2"], "learner.lr: must be"),
        (["learner.lr=1,-2", "seed=0,-1"], "seed: must be an integer"),
    ],
)
def test_the_precheck_names_the_first_bad_config_in_order(arguments, message, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "lincls.experiments.run", "-m", *arguments, "dataset.n=20"],
        capture_output=True,
        text=True,
        env={"LINCLS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"error: {message}")
    assert "(config 2 of 4: " in line and "no config was run" in line
    assert not (tmp_path / "mlflow.db").exists()


def _peak_kb(pid: int) -> int:
    """A process's peak resident memory (``VmHWM``), in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


@pytest.mark.slow
def test_a_200000_config_sweep_starts_counts_and_resumes(tmp_path):
    """The command a user types for 200,000 configs: its progress line comes, with the count of
    the whole grid; Ctrl-C says what finished and the command that resumes it; the sweeping
    process stays small (the old list of jobs and their returns grew with the grid)."""
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the process's memory from /proc")
    command = [sys.executable, "-m", "lincls.experiments.run", "-m", "seed=range(0,200000)",
               "dataset.n=30", "certificates.svm=false", "hydra.launcher.n_jobs=2"]  # fmt: skip
    sweep = subprocess.Popen(
        command, cwd=tmp_path, env={**os.environ, "LINCLS_HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines = []
    try:
        deadline = time.monotonic() + 600  # a guard against a hang, not a timing
        for line in sweep.stderr:
            lines.append(line)
            if re.match(r"\[lincls\] [1-9]\d*/200000 done", line) or time.monotonic() > deadline:
                break
        peak = _peak_kb(sweep.pid)
        sweep.send_signal(signal.SIGINT)
        _, rest = sweep.communicate(timeout=120)
    finally:
        sweep.kill()
    lines += rest.splitlines()
    assert sweep.returncode == 130
    assert lines[0].startswith("[lincls] sweep adhoc-seed-") and " 200000 jobs, " in lines[0]
    assert any(re.match(r"\[lincls\] [1-9]\d*/200000 done, 0 failed", line) for line in lines)
    (stop,) = [line for line in lines if line.startswith("[lincls] interrupted: ")]
    finished = int(re.search(r"interrupted: (\d+) of 200000 configs finished", stop).group(1))
    assert 0 < finished < 200000
    assert stop.rstrip().endswith(
        "resume with: python -m lincls.experiments.run -m hydra.launcher.n_jobs=2 "
        "'seed=range(0,200000)' dataset.n=30 certificates.svm=false tracking.skip_finished=true"
    )
    assert peak < 1_500_000  # kB: the bound for a million


def test_firsts_fix_the_keys_a_test_holds_and_are_counted_without_being_made():
    jobs = Jobs([Grid([["learner=a", "learner=b"], ["learner.lr=1", "learner.lr=2"], ["seed=0"]]),
                 Grid([["dataset.n=5", "dataset.n=6"], ["learner.lr=3"]])])  # fmt: skip
    values = lambda key: key in ("learner.lr", "dataset.n", "seed")  # noqa: E731
    assert list(jobs.firsts(values)) == [
        ["learner=a", "learner.lr=1", "seed=0"],
        ["learner=b", "learner.lr=1", "seed=0"],
        ["dataset.n=5", "learner.lr=3"],
    ]
    assert jobs.count_firsts(values) == 3
    assert jobs.count_firsts("seed") == sum(1 for _ in jobs.firsts("seed")) == 6


def test_a_rest_is_known_from_its_keys_as_from_its_parse():
    from hydra_plugins.lincls_sweeps.precheck import _Checker, _rest

    loader, kinds = Loader(), {}
    checker = _Checker(loader, None, lambda: [])
    for job in (["seed=3", "learner=x", "learner.lr=0.5"], ["+extra=1", "seed=4", "dataset=d"],
                ["learner.lr=7", "~dataset.n", "learner=y"], ["seed=5"]):  # fmt: skip
        assert checker._rest(job, kinds) == _rest(loader, job)


def _checked(monkeypatch, bad: set[int], die: bool = False, hang: bool = False):
    """(the first bad rest of 1,000 learning rates as one process walks them, as two do);
    ``bad``: the rates refused; ``die``: the forked process dies on its first check; ``hang``:
    it never ends its first check."""
    from hydra_plugins.lincls_sweeps import precheck
    from lincls.errors import LinclsInputError

    parent = os.getpid()

    def check(composer, job, groups, values, data, booleans):
        if die and os.getpid() != parent:
            os._exit(3)
        if hang and os.getpid() != parent:
            time.sleep(3600)
        rate = int(job[0].partition("=")[2])
        if rate in bad:
            raise LinclsInputError("learner.lr", f"{rate} is bad")
        return None, None, None, None  # a frame with no composition: each checked whole

    monkeypatch.setattr(precheck, "_check_rest", check)
    monkeypatch.setattr(precheck, "JobComposer", lambda loader, config: None)
    forked = _record_forks(monkeypatch)
    rests = [[f"learner.lr={k}", "seed=0"] for k in range(1000)]
    checker = precheck._Checker(Loader(), None, lambda: rests)
    found = checker.run(), checker.split(2)
    assert len(forked) == (1 if len(os.sched_getaffinity(0)) > 1 else 0)  # one core: no fork
    for pid in forked:
        with pytest.raises(ChildProcessError):  # the forked process was waited for
            os.waitpid(pid, os.WNOHANG)
    return found


def _record_forks(monkeypatch) -> list:
    """The pids os.fork returns to this process from now on (one entry for each)."""
    forked = []
    real_fork = os.fork

    def fork():
        pid = real_fork()
        forked.extend([pid] if pid else [])
        return pid

    monkeypatch.setattr(os, "fork", fork)
    return forked


def test_a_sweep_past_the_split_waits_for_its_threads_before_it_forks(monkeypatch):
    """``check_jobs``'s ``quiet`` (the pool's starting thread joined) comes before the fork."""
    from hydra_plugins.lincls_sweeps import precheck

    events = []
    monkeypatch.setattr(precheck, "_check_rest", lambda *args: (None, None, None, None))
    monkeypatch.setattr(precheck, "JobComposer", lambda loader, config: None)
    forked = _record_forks(monkeypatch)
    lines = [f"learner.lr={k}" for k in range(precheck.SPLIT_RESTS)]
    for count, expected in ((precheck.SPLIT_RESTS - 1, []), (precheck.SPLIT_RESTS, ["quiet"])):
        # precheck's own Jobs: Hydra's plugin scan may have run the module again since
        jobs = precheck.Jobs([Grid([lines[:count]])])
        precheck.check_jobs(Loader(), None, jobs, None, lambda: events.append(("quiet", forked[:])))
        assert [name for name, _ in events] == expected
    assert events[0][1] == []  # no process forked before it


@pytest.mark.parametrize(
    ("bad", "first"),
    [
        (set(), None),
        ({700}, 700),  # a block of this process's (700 // 64 = 10)
        ({100}, 100),  # the forked process's (block 1)
        ({130, 70}, 70),  # each finds one: the first in order is named
        ({999, 5, 64}, 5),
    ],
)
def test_two_processes_name_the_first_bad_rest_as_one_does(monkeypatch, bad, first):
    alone, shared = _checked(monkeypatch, bad)
    assert alone == shared or (alone[:2] == shared[:2] and str(alone[2]) == str(shared[2]))
    if first is None:
        assert shared is None
    else:
        number, rest, error = shared
        assert (number, rest) == (first, (f"learner.lr={first}",))
        assert str(error) == f"learner.lr: {first} is bad"


def test_the_rests_of_a_forked_process_that_died_are_checked_here(monkeypatch):
    _, shared = _checked(monkeypatch, {100, 700}, die=True)
    assert shared[:2] == (100, ("learner.lr=100",))


def test_a_forked_process_that_hangs_is_stopped_and_its_rests_checked_here(monkeypatch):
    """A forked process that checks nothing for ``STALL`` seconds (a lock it inherited, say)
    is killed and waited for; the sweep's own process checks its blocks."""
    from hydra_plugins.lincls_sweeps import precheck

    monkeypatch.setattr(precheck, "STALL", 2.0)
    start = time.monotonic()
    _, shared = _checked(monkeypatch, {100, 700}, hang=True)
    assert shared[:2] == (100, ("learner.lr=100",))
    assert time.monotonic() - start < 60  # not the hour the forked process would sleep


def test_a_40000_value_sweep_is_checked_in_two_processes_and_names_the_first_bad(tmp_path):
    """Past ``SPLIT_RESTS`` distinct rests the check is shared with a forked process; the bad
    value first met in order (config 40,001) lies in that process's blocks."""
    out = subprocess.run(
        [sys.executable, "-m", "lincls.experiments.run", "-m", "passes=1,0",
         "learner.lr=range(1,40001)", "dataset.n=20"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={"LINCLS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("error: passes: must be an integer in [1, inf), got 0 (config 40001 ")
    assert line.endswith("of 80000: passes=0 learner.lr=1 dataset.n=20; no config was run)")
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # rests that differ in a learner value alone: checked as the first one's config with
        # their learner section (``precheck._Frame``)
        (["learner.lr=1,2,-3,4"], "learner.lr: must be a number in (0, inf), got -3.0 (config 3 "),
        (["learner.shuffle=true,1"], "learner.shuffle: must be true or false, got 1 (config 2 "),
        # the learning rate is read outside the learner: each config is checked whole
        (["learner.lr=0.1,5", "dataset.margin=${learner.lr}"], "dataset.margin: must be ≤ "),
        (
            ["learner.lr=0.1,5000", "tracking.retry_seconds=${learner.lr}"],
            "tracking.retry_seconds: must be a number in [0, 3600], got 5000.0 (config 2 ",
        ),
    ],
)
def test_configs_that_differ_in_a_learner_value_are_each_checked(arguments, message, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "lincls.experiments.run", "-m", *arguments, "passes=2"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env={"LINCLS_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"error: {message}") and "no config was run" in line
    assert not (tmp_path / "mlflow.db").exists()
