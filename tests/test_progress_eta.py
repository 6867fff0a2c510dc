"""An honest ETA: from the durations of finished jobs of the same kind, none until there is a
basis, counted down between jobs, and "?" once a job in flight has outlived it."""

from __future__ import annotations

import io
import time

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


def test_no_eta_until_every_kind_left_has_a_finished_job():
    game = "learner=perceptron dataset=perceptron_game dataset.margin=0.02"
    plain = "learner=perceptron dataset=separable seed=0"
    assert progress.estimate([], KINDS, 1.0) is None
    assert progress.estimate([entry(plain, 0.5)], KINDS, 1.0) is None  # no game has finished
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
