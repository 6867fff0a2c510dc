"""``lincls check`` on the multiclass learners: the multiclass orthogonal game and the adaptive
search's multiclass moves reach the multiclass perceptron's and MIRA's bounds, hold them, and
break a bound that lacks the factor 2 of 2R²/γ², with a replay that reproduces the violation."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from conftest import compose_config
from test_check_plugins import _replays, _run, plugin_site

from lincls.bounds import REGISTRY, holds
from lincls.evaluation import measure
from lincls.experiments import check
from lincls.registry import build_learner
from lincls.search.adaptive import adaptive_search
from lincls.search.instance import Target
from lincls.search.multiclass import candidate, separating_matrix

HALVED_BOUNDS = '''
"""The multiclass bounds without their factor 2: wrong on purpose (a test of lincls check)."""
from lincls.bounds import REGISTRY
from lincls.learners import MIRA, MulticlassPerceptron
from lincls.plugins import Bound, register_bound


def _halved(name, learner):
    spec = next(s for s in REGISTRY if s.name == name)
    register_bound(Bound(
        f"{name}_halved", learner, theorem=f"none: half of {name}, wrong on purpose",
        rule=f"the rule of {name}", value=lambda facts: spec.value(facts) / 2.0,
        check=spec.check, status="not covered",
    ))


def register():
    _halved("multiclass_perceptron", MulticlassPerceptron)
    _halved("mira_pa1_kesler", MIRA)
'''


def test_a_multiclass_learner_plays_the_multiclass_game_and_is_searched_adaptively():
    games = [c["dataset"] for c in check.game_configs({"name": "mira"})]
    assert [(g["name"], g["n_classes"], g["margin"], g["radius"], g["d"]) for g in games] == [
        ("multiclass_orthogonal_game", 3, 0.1, 1.0, 150),
        ("multiclass_orthogonal_game", 4, 0.35, 1.0, 20),
        ("multiclass_orthogonal_game", 3, 3.0, 10.0, 20),
    ]
    binary = {c["dataset"]["name"] for c in check.game_configs({"name": "perceptron"})}
    assert binary == {"orthogonal_game"}
    assert check.searched_bounds({"name": "multiclass_perceptron"}) == ["multiclass_perceptron"]
    assert check.searched_bounds({"name": "mira"}) == ["mira_pa1_kesler"]
    assert check.adversary_of({"name": "mira"}) == "adaptive"


@pytest.mark.parametrize(
    ("learner", "bound"),
    [("multiclass_perceptron", "multiclass_perceptron"), ("mira", "mira_pa1_kesler")],
)
def test_the_games_force_their_rounds_and_meet_the_bound_near_three_quarters(learner, bound):
    """N = 150, 10, 16 mistakes in the first pass (a later pass may add a few: the bias feature's
    offsets); at R = 10 the ratio to 2R'²/γ², R'² = 101, is at least 16·9/202 = 0.713."""
    ratios = []
    for config, rounds in zip(check.game_configs({"name": learner}), (150, 10, 16), strict=True):
        m = check._measured(config).metrics
        assert rounds <= m["mistakes"] <= rounds + 3 and holds(m["mistakes"], m[f"bound.{bound}"])
        ratios.append(m[f"bound_ratio.{bound}"])
    assert 0.375 <= ratios[0] <= 0.4 and 0.713 <= ratios[2] <= 0.75 + 1e-9


@pytest.mark.parametrize(
    ("learner", "bound"),
    [("multiclass_perceptron", "multiclass_perceptron"), ("mira", "mira_pa1_kesler")],
)
def test_check_reaches_the_multiclass_bound_and_exits_0(learner, bound, capsys, tmp_path):
    code = check.main([learner, "--instances", "4", "--seconds", "3", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert re.search(rf"^lincls check {learner}: 7 instances and 1 search in \d+ s$", printed,
                     re.M), printed  # fmt: skip
    found = re.search(rf"^\s+{bound}\s+largest mistakes / bound\s+(\S+)\s+on (.*)$", printed, re.M)
    assert found and 0.9 <= float(found[1]) <= 1.0, printed  # two classes: 2R²/γ² nearly met
    assert "VIOLATED" not in printed and "not reached" not in printed


def test_the_multiclass_search_certifies_its_sequence_with_the_svm_matrix():
    target = Target(build_learner({"name": "multiclass_perceptron"}, 3, 0), "multiclass_perceptron")
    found = adaptive_search(target, rounds=4, radii=(100.0,), seconds=None)
    assert found.U is not None and found.U.shape == (np.unique(found.y).shape[0], 4)
    assert abs(np.linalg.norm(found.U) - 1.0) <= 1e-12
    assert found.scored.mistakes >= 2 and 0.99 <= found.ratio <= 1.0
    # the SVM's U separates with the data's largest margin: rows (−1, 1)/√2 for e₁ → 1, e₂ → 0
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    U = separating_matrix(X, np.array([1, 0]))
    assert U == pytest.approx(np.array([[-0.5, 0.5], [0.5, -0.5]]), abs=1e-6)
    assert separating_matrix(X, np.array([1, 1])) is None  # one class: no certificate


def test_the_unsure_candidate_ties_every_class_score():
    learner = build_learner({"name": "mira", "bias": "none"}, 1, 0)
    learner.fit(np.eye(5)[:3], [0, 1, 2])
    rng = np.random.default_rng(0)
    x, used = candidate("unsure", np.eye(5)[:3], 3, learner, 5, 2.0, rng)
    assert used == 4 and np.linalg.norm(x) == pytest.approx(2.0)
    assert np.ptp(learner.coef_ @ x) <= 1e-12  # the learner's scores all equal: its tie


@pytest.fixture
def halved():
    """The multiclass perceptron's 2R²/γ² without its factor 2, in the registry for this test."""
    true = next(s for s in REGISTRY if s.name == "multiclass_perceptron")
    spec = replace(true, name="multiclass_halved", best=None,
                   value=lambda facts: true.value(facts) / 2.0)  # fmt: skip
    REGISTRY.append(spec)
    yield spec.name
    REGISTRY.remove(spec)


def test_the_game_breaks_a_bound_without_its_factor_2_and_the_replay_reproduces(
    halved, capsys, tmp_path
):
    """At K = 3, γ = 3, R = 10: N = 16 mistakes, above (R² + 1)/γ'² = 101/9.375 = 10.77 at the
    game's U, whose margin is R·√(K/(N(K−1))) = 10·√(3/32) (the multiclass SVMs' on the
    learner's (x, 1) would be tighter, but a bound without a best comparator takes the U)."""
    code = check.main(["multiclass_perceptron", "--instances", "0", "--seconds", "1",
                       "--out", str(tmp_path)])  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 1, printed
    found = re.search(r"^multiclass_halved: (\S+) mistakes > bound (\S+) on game "
                      r"multiclass_orthogonal_game seed=0$", printed, re.M)  # fmt: skip
    assert found and float(found[1]) >= 16
    assert float(found[2]) == pytest.approx(101 / 9.375, rel=1e-5)
    replay = re.search(r"replay:\s+lincls run (.*)", printed).group(1).split()
    assert any(w.startswith("dataset.certificate=") for w in replay)
    config = compose_config(replay)
    config["certificates"]["cache_dir"] = str(tmp_path / "cache")
    outcome = measure(config)
    assert f"{outcome.metrics['mistakes']:g}" == found[1]
    assert outcome.metrics["bound.multiclass_halved"] == pytest.approx(float(found[2]), rel=1e-5)
    assert not holds(outcome.metrics["mistakes"], outcome.metrics["bound.multiclass_halved"])


@pytest.fixture(scope="module")
def halved_site(tmp_path_factory):
    """A folder holding the halved bounds' module and a dist-info naming its entry point."""
    return plugin_site(tmp_path_factory.mktemp("halved"), "halved_bounds", HALVED_BOUNDS)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("learner", "bound"),
    [("multiclass_perceptron", "multiclass_perceptron_halved"), ("mira", "mira_pa1_kesler_halved")],
)
def test_check_catches_a_plugins_halved_multiclass_bound_with_defaults(
    learner, bound, halved_site, tmp_path
):
    import time

    started = time.perf_counter()
    done = _run(["check", learner], halved_site, tmp_path)
    assert time.perf_counter() - started < 60, done.stdout
    assert done.returncode == 1, done.stdout + done.stderr
    assert "and 2 searches in" in done.stdout  # the built-in bound and the plugin's
    assert re.search(rf"^{bound}: \S+ mistakes > bound \S+ on game multiclass_orthogonal_game",
                     done.stdout, re.M), done.stdout  # fmt: skip
    _replays(done.stdout, bound, halved_site, tmp_path)


def test_a_search_run_of_a_multiclass_bound_saves_its_matrix_and_replays(tmp_path):
    """``dataset=search`` for MIRA's bound: the instance's U is its certificate artifact, and the
    CSV replayed with it logs the same mistakes and bound."""
    import json

    import lincls.search  # noqa: F401  (registers dataset=search)
    from lincls.errors import LinclsInputError
    from lincls.evaluation import prepare

    cache = f"certificates.cache_dir={tmp_path / 'cache'}"
    outcome = measure(compose_config(["learner=mira", "dataset=search",
                                      "dataset.bound=mira_pa1_kesler", cache]))  # fmt: skip
    m = outcome.metrics
    assert m["mistakes"] >= 2 and 0.99 <= m["bound_ratio.mira_pa1_kesler"] <= 1.0
    for name, text in outcome.artifacts.items():
        (tmp_path / name.rpartition("/")[2]).write_text(text)
    U = np.array(json.loads((tmp_path / "certificate.json").read_text())["U"])
    assert U.shape[0] == np.unique(outcome.dataset.y).shape[0]
    replay = ["learner=mira", "dataset=csv", f"dataset.path={tmp_path / 'instance.csv'}",
              "dataset.test_fraction=0", "passes=3", "order=fixed",
              f"dataset.certificate={tmp_path / 'certificate.json'}", cache]  # fmt: skip
    again = measure(compose_config(replay)).metrics
    assert again["mistakes"] == m["mistakes"]
    assert again["bound.mira_pa1_kesler"] == pytest.approx(m["bound.mira_pa1_kesler"], rel=1e-9)
    with pytest.raises(LinclsInputError, match=r"^dataset.bound: mira_pa1_kesler is a bound of"):
        prepare(compose_config(["learner=multiclass_perceptron", "dataset=search",
                                "dataset.bound=mira_pa1_kesler"]))  # fmt: skip
