"""``lincls check``'s statistical check of an expectation bound: Freund & Schapire's voted
perceptron bound holds over many i.i.d. samples, a wrong one (divided by 20) is caught with its
confidence stated, and the printed command replays the verdict."""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import replace

import pytest

from lincls.bounds import REGISTRY
from lincls.experiments import check
from lincls.experiments.expectation import TRAIN, check_expectations, sample

VOTE = {"name": "voted_perceptron", "prediction": "vote", "bias": "none"}


@pytest.fixture
def twentieth():
    """``voted_fs99`` divided by 20, registered as a plugin's bound would be."""
    voted = next(s for s in REGISTRY if s.name == "voted_fs99")
    spec = replace(
        voted, name="voted_twentieth",
        value=lambda f: replace(voted.value(f), value=voted.value(f).value / 20),
        best=lambda f: (lambda v: v if isinstance(v, str) else replace(v, value=v.value / 20))(
            voted.best(f)),
    )  # fmt: skip
    REGISTRY.append(spec)
    yield spec.name
    REGISTRY.remove(spec)


def test_the_samples_are_i_i_d_draws_of_the_margin_distribution():
    import numpy as np

    rng = np.random.default_rng(3)
    unit = np.array([1.0, 0.0, 0.0, 0.0, 0.0])
    X, y = sample(rng, unit, 500)
    assert X.shape == (500, 5) and np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert (np.abs(X @ unit) >= 0.5).all() and (y == np.sign(X @ unit)).all()


def test_the_voted_bound_holds_over_the_samples_and_a_twentieth_of_it_does_not(twentieth):
    results = {r.name: r for r in check_expectations(VOTE, ["voted_fs99", twentieth], 2000, 0)}
    right, wrong = results["voted_fs99"], results[twentieth]
    assert right.samples == wrong.samples == 2000 and right.errors == wrong.errors
    assert not right.violated and wrong.violated
    assert right.bound_mean == pytest.approx(20 * wrong.bound_mean, rel=1e-12)
    # the bound is ~×10 the error here: its mean far above the error's upper reach
    assert right.bound_mean > 5 * right.errors / right.samples
    assert right.error_low < right.errors / right.samples < right.bound_mean < right.bound_high


def test_a_learner_the_bound_does_not_cover_draws_one_sample_only():
    started = time.perf_counter()
    assert check_expectations({"name": "perceptron"}, ["voted_fs99"], 100000, 0) == []
    # one that refuses the sphere's data (Winnow takes x ≥ 0 only) is left out the same way
    assert check_expectations({"name": "winnow"}, ["voted_fs99"], 100000, 0) == []
    assert time.perf_counter() - started < 10


@pytest.mark.slow
def test_check_catches_the_wrong_expectation_bound_and_prints_its_replay(twentieth, capsys):
    code = check.main(["voted_perceptron", twentieth, "learner.bias=none", "--samples", "2000"])
    printed = capsys.readouterr().out
    assert code == 1
    line = re.search(rf"^  {twentieth} \(expectation: 2000 samples of {TRAIN + 1} i\.i\.d\. "
                     r"examples\): test error ([0-9.]+) .*: VIOLATED at confidence 99%$",
                     printed, re.M)  # fmt: skip
    assert line, printed
    replay = re.search(r"replay:\s+(lincls check .*)", printed)[1]
    assert replay == (f"lincls check voted_perceptron {twentieth} learner.bias=none "
                      "--samples 2000 --seed 0")  # fmt: skip
    # the printed command gives the same verdict on the same samples
    assert check.main(shlex.split(replay)[2:]) == 1
    assert capsys.readouterr().out.count(line[0]) == 1
