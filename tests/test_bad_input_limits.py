"""The limits behind issue 33's lines, at their edges: the largest value each allows is taken,
the next is refused with a line naming it. Memory is pinned to 1 GiB so the numbers are exact."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import CONF, compose_config
from hydra import compose, initialize_config_dir

from lincls import errors
from lincls.config.checks import check_booleans, parse_overrides
from lincls.config.run import check_writable
from lincls.errors import LinclsInputError
from lincls.evaluation import prepare
from lincls.games import make_disjunction_game, make_orthogonal_game, make_perceptron_game
from lincls.games.disjunction import least_rows
from lincls.orders import canonical_orders

GIB = 2**30


@pytest.fixture
def one_gib(monkeypatch):
    monkeypatch.setattr(errors, "available_memory", lambda: GIB)


def _prepare(overrides: list[str]) -> None:
    prepare(canonical_orders(compose_config(overrides)))


def _refused(overrides: list[str]) -> str:
    with pytest.raises(LinclsInputError) as caught:
        _prepare(overrides)
    return str(caught.value)


@pytest.mark.parametrize("learner, extra", [("forgetron", 1), ("budget_perceptron", 0)])
def test_a_budget_is_refused_past_the_support_set_memory_holds(learner, extra, one_gib):
    largest = GIB // 184 - extra  # 20 features + norm, coefficient, kernel value: 23 float64
    _prepare([f"learner={learner}", f"learner.budget={largest}", "dataset.n=20"])
    line = _refused([f"learner={learner}", f"learner.budget={largest + 1}", "dataset.n=20"])
    assert line == (
        f"learner.budget: must be an integer in [1, {largest}], got {largest + 1}: a support "
        "vector of 20 features (with its norm, coefficient and kernel value) takes 184.0 B, "
        f"{largest + 1 + extra} of them 1.0 GiB, and this machine has 1.0 GiB of memory available"
    )


def test_a_budget_is_checked_against_a_games_width_too(one_gib):
    line = _refused(["learner=forgetron", "learner.budget=10000000", "dataset=orthogonal_game"])
    largest = GIB // 824 - 1  # the game's 100 features + 3 values a vector, budget + 1 of them
    assert line.startswith(f"learner.budget: must be an integer in [1, {largest}], got 10000000: ")
    assert "a support vector of 100 features" in line  # the game's d = 100


def test_orderings_are_refused_past_what_memory_holds(one_gib):
    each = 24 * 1000 + 8 * 20 + 4096  # 1000 rows × 20 columns
    _prepare([f"orders.permutations={GIB // each}"])
    line = _refused([f"orders={GIB // each + 1}", "order=shuffled"])
    assert line == (
        f"orders.permutations: must be an integer in [1, {GIB // each}], got {GIB // each + 1}: "
        "an ordering of 1000 rows × 20 columns (its learner, presentations, record) takes 27.6 "
        "KiB, 38001 of them 1.0 GiB, and this machine has 1.0 GiB of memory available"
    )


def test_the_disjunction_game_takes_the_largest_n_that_fits_and_refuses_the_next():
    assert least_rows(2_097_151, 1, "littlestone", True) * 2_097_151 <= 50_000_000
    make_disjunction_game(n_attributes=2_097_151, k=1)
    with pytest.raises(LinclsInputError, match=r"^n_attributes: must be an integer in \[1, "
                       r"2097151\], got 2097152: the littlestone adversary holds at least 24 "
                       "rows"):  # fmt: skip
        make_disjunction_game(n_attributes=2_097_152, k=1)
    make_disjunction_game(n_attributes=8190, k=1, adversary="additive")  # 4095 Hadamard rows
    with pytest.raises(LinclsInputError, match=r"^n_attributes: must be an integer in \[1, 8190\]"):
        make_disjunction_game(n_attributes=8191, k=1, adversary="additive")
    with pytest.raises(LinclsInputError, match=r"^k: is too large for any n_attributes: "):
        make_disjunction_game(n_attributes=10**6, k=10**5)


def test_the_perceptron_game_names_the_setting_that_makes_it_too_large():
    make_perceptron_game(margin=6.33e-4).check_size(10)  # 2,495,706 rounds × 2 × 10 passes
    with pytest.raises(LinclsInputError, match=r"^dataset\.margin: must be a number in "
                       r"\(0\.000632456, 1\], got 0\.000632: the game plays ⌊\(R/γ\)²⌋ \+ 1 = "
                       "2,503,606 rounds a pass"):  # fmt: skip
        make_perceptron_game(margin=6.32e-4).check_size(10)
    make_perceptron_game(rounds=2_500_000).check_size(10)
    with pytest.raises(
        LinclsInputError,
        match=r"^dataset\.rounds: must be an integer in "
        r"\[1, 2500000\], got 2500001: passes × rounds × d must stay within",
    ):
        make_perceptron_game(rounds=2_500_001).check_size(10)  # fmt: skip
    with pytest.raises(
        LinclsInputError, match=r"^dataset\.d: must be an integer in \[2, 5000000\]"
    ):
        make_perceptron_game(d=5_000_001, rounds=1).check_size(10)


def test_the_orthogonal_game_names_the_margin_or_the_d_that_makes_it_too_large():
    make_orthogonal_game(d=7070, margin=0.0119)  # ⌊(R/γ)²⌋ = 7061 rounds of 7070 values
    with pytest.raises(LinclsInputError, match=r"^margin: must be a number in \(0\.0118913, 1\]"):
        make_orthogonal_game(d=8000, margin=0.0118)
    with pytest.raises(LinclsInputError, match=r"^d: must be an integer in \[7061, 7081\], got "
                       "7082: ⌊\\(R/γ\\)²⌋ = 7061 rounds × d must stay within"):  # fmt: skip
        make_orthogonal_game(d=7082, margin=0.0119)


def test_a_game_refuses_a_learner_it_cannot_play_before_the_run():
    line = _refused(["dataset=perceptron_game", "learner=maxent"])
    assert line == "learner: the perceptron game needs a binary online learner, not MaxEnt"


@pytest.mark.parametrize(
    "override, says",
    [("learner.aggressive=2", "got 2"), ("learner.aggressive=on", "got 'on'"),
     ("learner.aggressive=0", "got 0"), ("learner.aggressive='true'", "got 'true'"),
     ("learner.aggressive=TRUE", None), ("learner.aggressive=false", None)],
)  # fmt: skip
def test_a_true_or_false_option_takes_true_or_false_only(override, says):
    overrides = ["learner=romma", override]
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    if says is None:
        check_booleans(cfg, parse_overrides(overrides))
        return
    with pytest.raises(LinclsInputError) as caught:
        check_booleans(cfg, parse_overrides(overrides))
    assert str(caught.value) == f"learner.aggressive: must be true or false, {says}"


def test_a_cache_directory_is_checked_without_being_left_behind(tmp_path):
    check_writable("certificates.cache_dir", str(tmp_path / "a" / "b"))
    assert os.listdir(tmp_path) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(LinclsInputError) as caught:
        check_writable("certificates.cache_dir", str(tmp_path / "file" / "c"))
    assert str(caught.value) == (
        f"certificates.cache_dir: cannot create {tmp_path / 'file' / 'c'} (Not a directory)"
    )
    with pytest.raises(LinclsInputError) as caught:
        check_writable("certificates.cache_dir", str(tmp_path / "file"))
    assert str(caught.value) == f"certificates.cache_dir: {tmp_path / 'file'} is not a directory"


def test_runs_checking_one_new_cache_directory_at_once_all_pass(tmp_path):
    """Four sweeps share a cache path that does not exist yet; each run checks it. A check
    that made and removed the folder once refused a run whose check saw it vanish."""
    target = str(tmp_path / "shared" / "certificates")

    def check_many(_):
        for _ in range(300):
            check_writable("certificates.cache_dir", target)
        return True

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(check_many, range(8))) == [True] * 8
    assert os.listdir(tmp_path) == []
