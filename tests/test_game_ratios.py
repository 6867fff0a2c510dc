"""The closed forms of ``lincls.games.ratios`` against the ratio a run logs on the orthogonal game:
the run's own bound at its best comparator, divided into its mistakes."""

from __future__ import annotations

import math

import pytest

import lincls
from lincls.games.ratios import (
    alma_orthogonal,
    cw_orthogonal,
    forgetron_orthogonal,
    projectron_plus_orthogonal,
    scw1_orthogonal,
)


def logged(learner: dict, bound: str, margin: float, radius: float, passes: int):
    game = {"name": "orthogonal_game", "margin": margin, "radius": radius, "d": 500}
    result = lincls.run(learner, game, passes=passes)
    row = result.bounds.loc[bound]
    return result.mistakes, float(row["ratio"]), bool(row["vacuous"])


def cw_learner(variant: str, eta: float, **more) -> dict:
    return {"name": "confidence_weighted", "variant": variant, "eta": eta, "bias": "none",
            "stop_when_converged": False, **more}  # fmt: skip


SCW1_GAMES = [(0.55, 0.1, 1.0), (0.7, 0.5, 2.0), (0.9, 0.25, 1.0), (0.501, 1.0, 10.0)]


@pytest.mark.parametrize(("eta", "margin", "radius"), SCW1_GAMES)
def test_scw1_on_the_orthogonal_game_is_one_over_root_one_plus_phi_squared(eta, margin, radius):
    mistakes, ratio, vacuous = logged(cw_learner("scw1", eta, C=100.0), "scw1", margin, radius, 3)
    assert mistakes == math.floor((radius / margin) ** 2 + 1e-9) and not vacuous
    assert ratio == pytest.approx(scw1_orthogonal(eta), rel=1e-9)
    assert ratio < 1.0


@pytest.mark.parametrize(("eta", "margin", "radius"), [(0.55, 0.1, 1.0), (0.6, 0.5, 0.5),
                                                       (0.5001, 1.0, 10.0)])  # fmt: skip
def test_cw_on_the_orthogonal_game_is_the_derived_form(eta, margin, radius):
    _, ratio, vacuous = logged(cw_learner("cw", eta), "cw", margin, radius, 3)
    assert not vacuous
    assert ratio == pytest.approx(cw_orthogonal(eta, radius), rel=1e-9)


def test_both_forms_tend_to_one_as_eta_tends_to_a_half():
    assert scw1_orthogonal(0.9) == pytest.approx(0.6151808703, rel=1e-9)
    assert cw_orthogonal(0.6, 1.0) == pytest.approx(0.7127010746, rel=1e-9)
    assert 1 - 1e-12 < scw1_orthogonal(0.5 + 1e-7) < 1.0
    assert 1 - 1e-12 < cw_orthogonal(0.5 + 1e-7, 1.0) < 1.0


@pytest.mark.parametrize(("alpha", "margin", "passes"), [(1.0, 0.05, 3), (1.0, 0.5, 5),
                                                         (0.8, 0.1, 10)])  # fmt: skip
def test_alma_on_the_orthogonal_game_stays_below_a_half(alpha, margin, passes):
    learner = {"name": "alma", "alpha": alpha, "stop_when_converged": False}
    mistakes, ratio, vacuous = logged(learner, "alma", margin, 1.0, passes)
    assert not vacuous
    assert ratio == pytest.approx(alma_orthogonal(alpha, int(mistakes)), rel=1e-9)
    assert ratio < 0.5


@pytest.mark.parametrize(("margin", "budget", "half"), [(1.0, 100, True), (0.5, 400, True),
                                                        (0.5, 100, False)])  # fmt: skip
def test_the_forgetron_on_the_orthogonal_game_is_a_half_where_the_theorem_reaches(
    margin, budget, half
):
    learner = {"name": "forgetron", "bias": "none", "budget": budget, "stop_when_converged": False}
    mistakes, ratio, vacuous = logged(learner, "forgetron", margin, 1.0, 5)
    form = forgetron_orthogonal(int(mistakes), budget)
    if half:
        assert ratio == pytest.approx(0.5, rel=1e-12) and form == 0.5
    else:  # U = 1.17 < √4: the comparator that makes every loss 0 is out of the theorem's reach
        assert math.isnan(form) and (vacuous or ratio < 0.5)


@pytest.mark.parametrize(("eta", "margin"), [(1e-6, 0.5), (1e-3, 0.5), (1e-4, 0.1)])
@pytest.mark.parametrize("rule", ["dogma", "paper"])
def test_projectron_plus_on_the_orthogonal_game_tends_to_one_as_eta_tends_to_zero(
    eta, margin, rule
):
    learner = {"name": "projectron", "plus": True, "bias": "none", "margin_rule": rule, "eta": eta}
    bound = "projectron_plus_paper" if rule == "paper" else "projectron_plus"
    mistakes, ratio, vacuous = logged(learner, bound, margin, 1.0, 3)
    assert not vacuous
    form = projectron_plus_orthogonal(eta, int(mistakes), paper=rule == "paper")
    assert ratio == pytest.approx(form, rel=1e-9) and ratio < 1.0
