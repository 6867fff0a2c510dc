"""The learned hyperplane's margins (seed 004): per example y(w·x + b) and y(w·x + b)/‖w‖, the
hyperplane's margin (the minimum) and its ratio to the data's maximum margin (the SVM)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import Perceptron as SkPerceptron

from lincls.data import make_separable
from lincls.evaluation import RunPlan, fit_and_evaluate
from lincls.evaluation.hyperplane import HISTOGRAM_ARTIFACT, hyperplane_margins, margin_histogram
from lincls.learners import (
    AveragedPerceptron,
    KernelPerceptron,
    MarginPerceptron,
    MulticlassPerceptron,
    Perceptron,
    VotedPerceptron,
)


def by_hand(X, y_signed, w, b):
    """Each example's functional and geometric margin, one exactly rounded sum per row."""
    rows = X.toarray() if sp.issparse(X) else np.asarray(X)
    functional = np.array(
        [y * (math.fsum(wj * xj for wj, xj in zip(w, row, strict=True)) + b)
         for row, y in zip(rows, y_signed, strict=True)]
    )  # fmt: skip
    norm = math.sqrt(math.fsum(wj * wj for wj in w))
    return functional, functional / norm


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_margins_equal_a_computation_by_hand(layout):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((300, 12)) * rng.uniform(0.01, 100.0, size=12)
    X[rng.random(X.shape) < 0.6] = 0.0  # sparse enough for CSR to matter
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    w, b = rng.standard_normal(12) * 3.0, -0.75
    data = sp.csr_matrix(X) if layout == "csr" else X
    found = hyperplane_margins(data, y, w, b)
    functional, geometric = by_hand(X, y, w, b)
    np.testing.assert_allclose(found.functional, functional, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(found.geometric, geometric, rtol=1e-12, atol=1e-12)
    assert found.functional_margin == pytest.approx(functional.min(), rel=1e-12)
    assert found.margin == pytest.approx(geometric.min(), rel=1e-12)
    assert found.norm == pytest.approx(math.sqrt(math.fsum(w * w)), rel=1e-15)


def test_a_zero_weight_vector_has_no_geometric_margin():
    found = hyperplane_margins(np.eye(3), np.array([1.0, -1.0, 1.0]), np.zeros(3), 0.5)
    assert found.geometric is None and found.margin is None
    assert found.functional.tolist() == [0.5, -0.5, 0.5]


def _data(layout, offset=0.3, seed=3):
    data = make_separable(200, 6, 0.05, 1.0, offset=offset, seed=seed, n_test=0)
    if layout == "csr":
        from dataclasses import replace

        data = replace(data, X=sp.csr_matrix(data.X), X_test=sp.csr_matrix(data.X_test))
    return data


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize(
    ("learner", "certificate"),
    [
        (Perceptron(bias="feature"), "svm"),
        (Perceptron(bias="r2"), "svm"),
        (Perceptron(bias="none"), "svm_homogeneous"),
        (AveragedPerceptron(), "svm"),
        (VotedPerceptron(), "svm"),
        (MarginPerceptron(tau=1.0), "svm"),
    ],
    ids=["feature", "r2", "none", "averaged", "voted", "margin"],
)
def test_a_runs_hyperplane_metrics_equal_a_computation_by_hand(
    layout, learner, certificate, tmp_path
):
    # bias="none" gets data through the origin: a homogeneous hyperplane cannot separate others
    data = _data(layout, offset=0.0 if learner.bias == "none" else 0.3)
    learner.set_params(max_passes=200)
    outcome = fit_and_evaluate(learner, data, RunPlan(svm=True, cache_dir=str(tmp_path)))
    m, tags = outcome.metrics, outcome.tags
    w, b = outcome.learner.coef_[0], float(outcome.learner.intercept_[0])
    y = np.where(data.y == outcome.learner.classes_[1], 1.0, -1.0)
    functional, geometric = by_hand(data.X, y, w, b)
    assert m["hyperplane.functional_margin"] == pytest.approx(functional.min(), rel=1e-12)
    assert m["hyperplane.margin"] == pytest.approx(geometric.min(), rel=1e-12)
    for q in (5, 25, 50, 75, 95):
        assert m[f"hyperplane.margin_q{q:02d}"] == pytest.approx(
            np.quantile(geometric, q / 100), rel=1e-12, abs=1e-15
        )
    assert m["hyperplane.nonpositive"] == np.mean(functional <= 0)
    # the data's maximum margin, for the learner's class of hyperplanes
    assert tags["hyperplane.max_margin.certificate"] == certificate
    assert m["hyperplane.max_margin"] == m[f"certificate.{certificate}.margin"]
    assert m["hyperplane.margin_to_max"] == m["hyperplane.margin"] / m["hyperplane.max_margin"]
    if m["converged"] == 1.0 or isinstance(learner, AveragedPerceptron):
        assert 0.0 < m["hyperplane.margin_to_max"] <= 1.0 + 1e-6  # no hyperplane beats the SVM
    histogram = json.loads(outcome.artifacts[HISTOGRAM_ARTIFACT])
    assert sum(histogram["counts"]) == 200 and len(histogram["counts"]) == 20
    assert histogram["edges"][0] == m["hyperplane.margin"]
    assert histogram["edges"][-1] == pytest.approx(geometric.max(), rel=1e-12)


def test_the_margin_perceptron_comes_closer_to_the_maximum_margin_as_tau_grows(tmp_path):
    data = _data("dense")
    plan = RunPlan(svm=True, cache_dir=str(tmp_path))
    ratios = {}
    for tau in (0.0, 1.0, 2.0, 10.0):  # τ = 0 is the perceptron
        learner = MarginPerceptron(tau=tau, max_passes=200, stop_when_converged=True)
        outcome = fit_and_evaluate(learner, data, plan)
        assert outcome.metrics["converged"] == 1.0
        assert outcome.metrics["hyperplane.nonpositive"] == 0.0
        ratios[tau] = outcome.metrics["hyperplane.margin_to_max"]
    # measured: 0.2052, 0.7500, 0.8797, 0.9648 of the SVM's margin
    assert ratios == pytest.approx({0.0: 0.2052, 1.0: 0.7500, 2.0: 0.8797, 10.0: 0.9648}, abs=1e-4)
    assert ratios[0.0] < ratios[1.0] < ratios[2.0] < ratios[10.0] <= 1.0 + 1e-6
    # the averaged perceptron stopped after its first clean pass: its mean still errs on 2 of 200
    averaged = fit_and_evaluate(AveragedPerceptron(max_passes=200, stop_when_converged=True),
                                data, plan)  # fmt: skip
    assert averaged.metrics["hyperplane.nonpositive"] == 0.01
    assert averaged.metrics["hyperplane.margin_to_max"] < 0


def test_functional_margins_equal_scikit_learns_decision_function():
    data = _data("dense", seed=11)
    ours = Perceptron(bias="feature", stop_when_converged=False, max_passes=5).fit(data.X, data.y)
    peer = SkPerceptron(shuffle=False, tol=None, max_iter=5).fit(data.X, data.y)
    assert ours.coef_.tobytes() == peer.coef_.tobytes()
    y = np.where(data.y == peer.classes_[1], 1.0, -1.0)
    found = hyperplane_margins(data.X, y, peer.coef_[0], float(peer.intercept_[0]))
    np.testing.assert_allclose(found.functional, y * peer.decision_function(data.X), rtol=1e-13)


def test_a_zero_activation_counts_as_nonpositive():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [2.0, 2.0]])
    y = np.array([1.0, 1.0, -1.0, 1.0])
    found = hyperplane_margins(X, y, np.array([1.0, 0.0]), 0.0)  # x_2 lies on the boundary
    assert found.functional.tolist() == [1.0, 0.0, 1.0, 2.0]
    assert found.margin == 0.0
    record = json.loads(margin_histogram(found))
    assert record["max_margin"] is None and sum(record["counts"]) == 4


def test_learners_without_one_hyperplane_log_none(tmp_path):
    data = _data("dense")
    plan = RunPlan(svm=False)
    for learner in (MulticlassPerceptron(), KernelPerceptron(kernel="rbf")):
        outcome = fit_and_evaluate(learner, data, plan)
        assert not any(k.startswith("hyperplane.") for k in outcome.metrics), type(learner)
        assert HISTOGRAM_ARTIFACT not in outcome.artifacts


def test_without_the_svm_there_is_no_ratio_and_the_voted_rule_says_which_hyperplane():
    data = _data("dense")
    outcome = fit_and_evaluate(VotedPerceptron(max_passes=3), data, RunPlan(svm=False))
    assert "hyperplane.margin" in outcome.metrics
    assert "hyperplane.margin_to_max" not in outcome.metrics
    assert "c-weighted mean" in outcome.tags["hyperplane.rule"]


def test_same_data_and_seed_give_identical_margins(tmp_path):
    plan = RunPlan(order="shuffled", seed=5, svm=True, cache_dir=str(tmp_path))
    runs = [fit_and_evaluate(AveragedPerceptron(max_passes=4), _data("csr"), plan) for _ in "ab"]
    first, second = (
        {k: v for k, v in r.metrics.items() if k.startswith("hyperplane.")} for r in runs
    )
    assert first == second and len(first) == 11
    assert runs[0].artifacts == runs[1].artifacts


def test_equal_margins_of_a_rotated_square_get_one_histogram_bin():
    # The corners of a square about the line through its centre parallel to a side: every
    # geometric margin is 1 up to rounding, a range numpy cannot split into 20 bins.
    corners = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    one_bin = 0
    for angle in np.linspace(0.0, 2.0 * np.pi, 300, endpoint=False):
        turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        found = hyperplane_margins(corners @ turn.T, y, turn[:, 0], 0.0)
        record = json.loads(margin_histogram(found))
        assert sum(record["counts"]) == 4
        edges = np.array(record["edges"])
        assert np.all(edges[1:] > edges[:-1])
        assert edges[0] <= found.margin and edges[-1] >= found.geometric.max()
        if len(record["counts"]) == 1:  # exactly where numpy refuses 20 bins
            with pytest.raises(ValueError, match="Too many bins"):
                np.histogram(found.geometric, bins=20)
            one_bin += 1
        else:
            assert len(record["counts"]) == 20
    assert one_bin > 100  # 117 of the 300 angles here
