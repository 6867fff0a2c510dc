"""The searches for a bound's worst case: what they find, and that the instance found replays
bit for bit through ``dataset=csv`` (the same mistakes and the same bound)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import compose_config

from lincls.evaluation import measure
from lincls.search import replay_overrides, to_csv
from lincls.search.adaptive import adaptive_search
from lincls.search.boolean import boolean_search
from lincls.search.targets import target_of


def test_the_adaptive_search_meets_novikoff_with_fresh_coordinates():
    found = adaptive_search(target_of("novikoff"), rounds=6, seconds=20)
    assert found.ratio == pytest.approx(1.0, abs=1e-12)
    assert found.scored.mistakes == 6  # a longer tight instance is preferred at ratio 1
    assert found.method == "adaptive"


def test_the_search_takes_novikoff_with_a_bias_and_the_margin_perceptron_near_1():
    # the bias feature c = 1 (and the margin perceptron's 2τ/η = 2) leave R²/(R² + c² + 2τ/η) of
    # the ratio: at R = 100, 10⁴/(10⁴ + 1) and 10⁴/(10⁴ + 3)
    for bound, least in (("novikoff_bias", 0.99990), ("margin_perceptron", 0.99970)):
        found = adaptive_search(target_of(bound), rounds=4, seconds=20)
        assert found.ratio >= least, bound
        assert np.linalg.norm(found.X, axis=1).max() == 100.0


def test_the_disjunction_adversary_beats_littlestones_on_winnow2():
    found = boolean_search(target_of("winnow2"), rounds=40, sizes=((16, 1),), seconds=20)
    # 10 mistakes against 3·1·(log₂ 16 + 1) + 2 = 17: Littlestone's adversary and random data
    # gave 0.379
    assert (found.scored.mistakes, found.scored.bound) == (10, 17)
    assert set(np.unique(found.X)) <= {0.0, 1.0}
    assert (found.X[found.y == -1, 0] == 0).all() and (found.X[found.y == 1, 0] == 1).all()


def test_the_csv_holds_every_double_exactly():
    X = np.array([[0.1 + 0.2, -1e-300, 1 / 3], [np.pi, 2.0**-1074, 1e300]])
    lines = to_csv(X, np.array([1, -1])).splitlines()
    assert lines[0] == "x0,x1,x2,label"
    back = np.array([[float(v) for v in line.split(",")[:3]] for line in lines[1:]])
    assert np.array_equal(back, X)


@pytest.mark.parametrize("bound", ["novikoff_bias", "second_order"])
def test_the_instance_found_replays_bit_for_bit_through_dataset_csv(bound, tmp_path):
    target = target_of(bound)
    found = adaptive_search(target, rounds=5, seconds=20)
    path = tmp_path / "instance.csv"
    path.write_text(to_csv(found.X, found.y))
    config = compose_config(replay_overrides(target, str(path)))
    config["certificates"]["cache_dir"] = str(tmp_path / "cache")
    outcome = measure(config)
    assert np.array_equal(outcome.dataset.X, found.X)
    assert outcome.metrics["mistakes"] == found.scored.mistakes
    assert outcome.metrics[f"bound.{bound}"] == found.scored.bound
    assert outcome.metrics[f"bound_ratio.{bound}"] == found.ratio
