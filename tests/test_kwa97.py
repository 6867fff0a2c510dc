"""The kwa97 study (Kivinen, Warmuth & Auer 1997): the perceptron's and Winnow's mistakes on
monotone disjunctions as N grows, on random data and against the disjunction games."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import compose_config

from lincls import evaluation, runner
from lincls.experiments.report import main as report_main
from lincls.experiments.report.kwa97 import growth_fit

RANDOM = ["dataset=disjunction", "dataset.k=2", "dataset.n=2000", "dataset.n_test=100"]
PLAIN = ["passes=1", "certificates.svm=false", "certificates.best=false"]
N_VALUES = (16, 64, 256)


def mistakes(learner: str, overrides: list[str]) -> float:
    config = compose_config([f"learner={learner}", *overrides, *PLAIN])
    return evaluation.measure(config).metrics["mistakes"]


def test_the_fits_tell_linear_from_logarithmic_growth():
    n = np.array([16, 32, 64, 128])
    linear = growth_fit(n, 3 + 0.5 * n)
    assert linear.slope_n == pytest.approx(0.5) and linear.r2_n == pytest.approx(1.0)
    assert linear.kind == "linear"
    logarithmic = growth_fit(n, 2 * np.log2(n))
    assert logarithmic.slope_log == pytest.approx(2.0) and logarithmic.kind == "logarithmic"
    assert logarithmic.loglog < 0.5 < linear.loglog


def test_on_random_data_the_perceptron_grows_linearly_and_winnow_logarithmically():
    per = [mistakes("perceptron", [*RANDOM, f"dataset.n_features={n}"]) for n in N_VALUES]
    win = [mistakes("winnow", [*RANDOM, f"dataset.n_features={n}"]) for n in N_VALUES]
    assert per == [31.0, 101.0, 311.0]
    assert win == [12.0, 22.0, 29.0]
    per_fit, win_fit = growth_fit(np.array(N_VALUES), per), growth_fit(np.array(N_VALUES), win)
    assert per_fit.kind == "linear" and per_fit.slope_n > 1.0 and per_fit.loglog > 0.7
    assert win_fit.kind == "logarithmic" and win_fit.slope_log == pytest.approx(4.25)


def test_the_additive_adversary_forces_half_of_n_on_the_perceptron_not_on_winnow():
    game = ["dataset=disjunction_game", "dataset.k=2", "dataset.adversary=additive"]
    for n in (16, 64):
        per = mistakes("perceptron", [*game, f"dataset.n_attributes={n}"])
        assert per == n + 1 >= (n + 2 - 1) / 2  # every row of the game is a mistake
        assert mistakes("winnow", [*game, f"dataset.n_attributes={n}"]) == {16: 13, 64: 21}[n]


@pytest.mark.slow
def test_the_report_has_the_table_and_the_statements(store, tmp_path):
    for learner in ("perceptron", "winnow"):
        for n in (16, 32, 64):
            common = [f"learner={learner}", *PLAIN, "study=kwa97", f"tracking.uri={store}"]
            runner.execute(compose_config([*common, *RANDOM, f"dataset.n_features={n}"]))
            game = ["dataset=disjunction_game", "dataset.k=2", f"dataset.n_attributes={n}"]
            runner.execute(compose_config([*common, *game, "dataset.adversary=additive"]))
    assert report_main(["kwa97", "--tracking-uri", store, "--out", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "## Kivinen, Warmuth & Auer (1997) reproduced: the perceptron against Winnow" in text
    for setting in ("random", "additive adversary"):
        for learner in ("perceptron", "winnow"):
            assert f"| {setting} | {learner} | 2 | " in text
    assert "| random | perceptron | 2 | 31 | " in text  # mistakes at N = 16, as measured above
    assert "“an adversary can force any additive algorithm to make (N + k − 1)/2" in text
    assert "**not available**" in text
    assert (tmp_path / "kwa97_mistakes.png").stat().st_size > 1000
