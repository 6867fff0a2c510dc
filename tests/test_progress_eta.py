"""An honest ETA: from the durations of finished jobs of the same kind (of all jobs while a kind
has none), from the first finished job on, counted down between jobs, "?" once a job in flight
has outlived it, never negative."""

from __future__ import annotations

import io
import re
import time

import pytest
from conftest import run_cli

from lincls.tracking import progress

KINDS = {"dataset=perceptron_game learner=perceptron": 2, "dataset=separable learner=perceptron": 3}


def entry(line: str, seconds: float, status: str = "finished") -> dict:
    return {"job": line, "status": status, "seconds": seconds}


def test_a_jobs_kind_is_its_config_group_choices():
    line = "learner=perceptron dataset=perceptron_game dataset.margin=0.02 seed=1"
    assert progress.job_kind(line) == "dataset=perceptron_game learner=perceptron"
    assert progress.job_kind("seed=3 +learner.lr=2") == ""
    assert progress.job_kinds(["learner=a seed=0", "learner=a seed=1", "seed=2"]) == {
        "learner=a": 2,
        "": 1,
    }


def test_an_eta_from_the_first_finished_job_each_kind_by_its_own_mean_once_it_has_one():
    game = "learner=perceptron dataset=perceptron_game dataset.margin=0.02"
    plain = "learner=perceptron dataset=separable seed=0"
    assert progress.estimate([], KINDS, 1.0) is None  # no job has a duration yet
    # no game has finished: the 2 games left cost the mean of all jobs (0.5 s) like the 2 plain
    # runs left, 4 × 0.5 s of work, done at 0.5 s of work per 1 s of wall clock: 4 s
    assert progress.estimate([entry(plain, 0.5)], KINDS, 1.0) == 4.0
    # a skipped job has no duration: no basis yet
    assert progress.estimate([entry(plain, 0.0, "skipped")], KINDS, 1.0) is None
    # one game (90 s) and one plain run (0.5 s) done in 90.5 s of one process: 90 + 2 × 0.5 left
    entries = [entry(plain, 0.5), entry(game, 90.0)]
    assert progress.estimate(entries, KINDS, 90.5) == 91.0
    # the same work done by two workers in half the time: half the ETA
    assert progress.estimate(entries, KINDS, 45.25) == 45.5
    # a skipped job counts as done but says nothing of the time a job takes
    skipped = [*entries, entry(plain, 0.0, "skipped")]
    assert progress.estimate(skipped, KINDS, 90.5) == 90.5
    done = [*entries, entry(game, 80.0), entry(plain, 1.0), entry(plain, 1.5)]
    assert progress.estimate(done, KINDS, 200.0) == 0.0


def test_the_eta_counts_down_and_says_so_once_a_job_has_outlived_it():
    counts = progress.Counts(total=5, started=0.0, done=2, eta=20.0, made=100.0)
    assert counts.remaining(100.0) == "20 s"
    assert counts.remaining(112.0) == "8 s"
    assert counts.remaining(121.0) == "?"  # a job in flight has run past the estimate
    assert "ETA ?" in counts.line(121.0)
    assert progress.Counts(total=5, started=0.0, done=2).remaining(5.0) == "–"


def test_the_eta_is_never_negative_once_every_job_is_done():
    # the last job came in 0.4 s after an estimate of 0.1 s: 0 s, not "-0 s"; while jobs remain,
    # an estimate passed is "?"
    done = progress.Counts(total=5, started=0.0, done=5, eta=0.1, made=100.0)
    assert done.remaining(100.4) == "0 s" and done.line(100.4).endswith("ETA 0 s")
    assert progress.Counts(total=5, started=0.0, done=5, eta=0.0, made=1.0).remaining(1.0) == "0 s"
    assert progress.Counts(total=5, started=0.0, done=4, eta=0.1, made=1.0).remaining(1.4) == "?"


def test_the_launching_process_redraws_while_no_job_finishes(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "LINE_SECONDS", 0.05)
    log = tmp_path / "progress.log"
    plain = "learner=perceptron dataset=separable seed=0"
    game = "learner=perceptron dataset=perceptron_game dataset.margin=0.01"
    for item in (entry(plain, 0.01), entry(game, 0.02)):
        progress.append(str(log), item)
    out = io.StringIO()
    view = progress.View(stream=out)
    view.follow(str(log), 5, time.time() - 0.03, KINDS, interval=0.05)
    time.sleep(0.6)  # the estimate (~0.04 s) is long past: a job in flight has outlived it
    view.stop()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3 and all(line.startswith("[lincls] 2/5 done") for line in lines)
    assert lines[-1].endswith("ETA ?")
    printed = len(lines)
    time.sleep(0.2)
    assert len(out.getvalue().splitlines()) == printed  # stopped


@pytest.mark.slow
def test_a_3_learner_sweep_shows_an_eta_from_its_first_finished_job_and_never_a_negative_one(
    tmp_path, store
):
    learners = "learner=perceptron,averaged_perceptron,passive_aggressive"
    args = ["-m", learners, "dataset=separable,noisy", "seed=0,1,2", "dataset.n=40", "dataset.d=2",
            "dataset.n_test=10", "certificates.svm=false", "passes=2", f"tracking.uri={store}",
            f"hydra.sweep.dir={tmp_path / 'sweep'}"]  # fmt: skip
    done = run_cli(args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    shown = {}  # jobs done → the ETA its progress line showed
    for line in done.stderr.splitlines():
        found = re.match(r"\[lincls\] (\d+)/18 done, .* ETA (.+)$", line)
        if found:
            shown[int(found.group(1))] = found.group(2)
    # without a terminal a line comes at each 5 % of the jobs: one per job of 18
    assert sorted(shown) == list(range(1, 18)), done.stderr[-3000:]
    # before, a kind without a finished job meant no ETA: "–" until job 12 of this grid order
    assert all(re.fullmatch(r"\d+ s", eta) for eta in shown.values()), shown
    assert int(shown[17].split()[0]) <= int(shown[1].split()[0])  # one job left, not 17
