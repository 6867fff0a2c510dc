"""Orders: fixed, shuffled per pass, adversarial (seed 000 §3.2's game), and several orderings."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import compose_config

from lincls import bounds, evaluation
from lincls.data import make_orthonormal, make_separable
from lincls.errors import LinclsInputError
from lincls.geometry import certify
from lincls.learners import AveragedPerceptron, PassiveAggressive, Perceptron, VotedPerceptron
from lincls.orders import fit_in_order, ordering_seed


def _cert(data):
    return certify(data.X, np.where(data.y > 0, 1.0, -1.0), data.u, data.b, "generator")


def test_adversary_beats_the_mean_of_random_orders_on_twenty_separable_sets():
    ratios = []
    for seed in range(20):
        data = make_separable(60, 5, 0.05, 1.0, offset=0.2 * (seed % 3), seed=seed, n_test=0)
        cert = _cert(data)
        shuffled = []
        for k in range(8):
            model = Perceptron(max_passes=1000)
            fit_in_order(model, data.X, data.y, "shuffled", k, seed)
            shuffled.append(model.mistakes_)
        model = Perceptron(max_passes=1000)
        shown = fit_in_order(model, data.X, data.y, "adversarial", 0, seed, cert)
        bound = bounds.novikoff_bias(data.radius, cert.margin, cert.b, 1.0)
        assert model.converged_ and shown.sum() == model.n_steps_ == model.mistakes_
        assert model.mistakes_ >= np.mean(shuffled), (seed, model.mistakes_, shuffled)
        assert bounds.holds(model.mistakes_, bound)
        ratios.append(model.mistakes_ / bound)
    assert 0 < min(ratios) and max(ratios) <= 1


def test_runner_reports_the_adversarial_ratio_to_the_bound(tmp_path):
    common = ["dataset.n=100", "dataset.d=5", f"certificates.cache_dir={tmp_path}"]
    adversarial = evaluation.measure(compose_config([*common, "order=adversarial"]))
    shuffled = evaluation.measure(compose_config([*common, "order=shuffled", "orders=5"]))
    a, s = adversarial.metrics, shuffled.metrics
    assert adversarial.tags["order"] == "adversarial"
    assert a["mistakes"] >= s["mistakes"]
    assert a["bound_ratio.novikoff_bias"] == pytest.approx(a["mistakes"] / a["bound.novikoff_bias"])
    assert a["bound_ratio.novikoff_bias"] > s["bound_ratio.novikoff_bias"]


def test_several_orderings_log_mean_and_spread_and_the_worst_ordering(tmp_path):
    config = compose_config(
        ["order=shuffled", "orders=6", "dataset.n=150", f"certificates.cache_dir={tmp_path}"]
    )
    outcome = evaluation.measure(config)
    data = outcome.dataset
    counts = []
    for k in range(6):
        model = Perceptron(max_passes=10)
        fit_in_order(model, data.X, data.y, "shuffled", k, config["seed"])
        counts.append(model.mistakes_)
    m = outcome.metrics
    assert m["mistakes"] == pytest.approx(np.mean(counts), rel=1e-15)
    assert m["mistakes_std"] == pytest.approx(np.std(counts), rel=1e-12)
    assert (m["mistakes_min"], m["mistakes_max"]) == (min(counts), max(counts))
    # Novikoff's bound does not depend on the order: its ratio is the worst ordering's
    assert m["bound_ratio.novikoff_bias"] == pytest.approx(max(counts) / m["bound.novikoff_bias"])
    assert evaluation.measure(config).metrics | {"fit_seconds": 0} == m | {"fit_seconds": 0}


def test_fixed_orderings_permute_once_and_name_original_rows():
    data = make_separable(50, 3, 0.05, 1.0, seed=1, n_test=0)
    base = Perceptron(max_passes=50)
    assert fit_in_order(base, data.X, data.y, "fixed", 0).tolist() == [base.n_passes_] * 50
    reference = Perceptron(max_passes=50).fit(data.X, data.y)
    assert base.mistake_indices_.tolist() == reference.mistake_indices_.tolist()
    other = Perceptron(max_passes=50)
    fit_in_order(other, data.X, data.y, "fixed", 3, seed=7)
    perm = np.random.default_rng(ordering_seed(7, 3)).permutation(50)
    direct = Perceptron(max_passes=50).fit(data.X[perm], data.y[perm])
    assert other.mistake_indices_.tolist() == perm[direct.mistake_indices_].tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda: Perceptron(bias="none"),
        lambda: AveragedPerceptron(bias="none"),
        lambda: VotedPerceptron(bias="none"),
        lambda: PassiveAggressive(variant="pa", bias="none"),
    ],
)
def test_adversary_plays_against_each_learner_and_forces_every_mistake_on_the_tight_instance(
    make,
):
    data = make_orthonormal(d=20)
    model = make()
    fit_in_order(model, data.X, data.y, "adversarial", 0, 0, _cert(data))
    assert model.mistakes_ == 20 and model.converged_  # every example once: d mistakes
    assert model.score(data.X, data.y) == 1.0


def test_bad_orders_are_one_line_errors():
    with pytest.raises(LinclsInputError, match=r"^order: must be one of 'fixed', 'shuffled'"):
        evaluation.prepare(compose_config(["order=random"]))
    with pytest.raises(LinclsInputError, match=r"^orders: must be an integer in \[1, inf\)"):
        evaluation.prepare(compose_config(["orders=0"]))


def test_adversarial_runs_are_deterministic_with_seeded_tie_breaks(tmp_path):
    config = compose_config(
        ["order=adversarial", "orders=3", "dataset=orthonormal", "dataset.d=12",
         f"certificates.cache_dir={tmp_path}"]
    )  # fmt: skip
    first, again = evaluation.measure(config), evaluation.measure(config)
    assert first.metrics | {"fit_seconds": 0} == again.metrics | {"fit_seconds": 0}
    assert np.array_equal(first.learner.coef_, again.learner.coef_)
    # with the default bias the adversary's worst ordering stays within Novikoff's bound
    assert first.metrics["mistakes_max"] <= first.metrics["bound.novikoff_bias"]
