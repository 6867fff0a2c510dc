"""Facts about the peers the README states: PassiveAggressive's bias rules against river's
PAClassifier, and one-class training, refused by every learner as scikit-learn's own check
(check_classifiers_one_label) allows."""

from __future__ import annotations

import numpy as np
import pytest
from river.linear_model import PAClassifier
from sklearn.utils.estimator_checks import check_classifiers_one_label

from lincls.errors import LinclsInputError
from lincls.learners import PassiveAggressive
from lincls.registry import LEARNERS


def pa_stream(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 120)), int(rng.integers(1, 8))
    X = rng.standard_normal((n, d)) * rng.uniform(0.1, 5.0) + rng.uniform(-2, 2, d)
    y = np.where(X @ rng.standard_normal(d) + rng.normal(0, 0.5, n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]  # both classes
    return X, y


def river_pa(X, y, mode, C):
    """river's PAClassifier over the stream once: (mistakes as y·(w·x + b) ≤ 0, w, b)."""
    model = PAClassifier(C=C, mode=mode)
    mistakes = 0
    for row, label in zip(X, y, strict=True):
        x = dict(enumerate(row.tolist()))
        score = sum(model.weights[j] * v for j, v in x.items()) + model.intercept
        mistakes += label * score <= 0
        model.learn_one(x, bool(label > 0))
    weights = np.array([model.weights[j] for j in range(X.shape[1])])
    return mistakes, weights, model.intercept


@pytest.mark.parametrize("seed", range(20))
def test_pa_sklearn_bias_rule_is_rivers_pa_classifier(seed):
    # river: ‖x‖² without the bias, b += τ·y: our bias="sklearn". Our default, bias="feature",
    # counts the constant feature in ‖x‖² (PA on (x, 1), the paper's bounds' setting) and differs.
    X, y = pa_stream(seed)
    variant, mode = [("pa", 0), ("pa1", 1), ("pa2", 2)][seed % 3]
    C = [0.01, 0.5, 1.0, 10.0][seed % 4]
    mistakes, weights, intercept = river_pa(X, y, mode, C)
    ours = PassiveAggressive(variant=variant, C=C, bias="sklearn", max_passes=1).fit(X, y)
    assert ours.mistakes_ == mistakes
    np.testing.assert_allclose(ours.coef_[0], weights, rtol=1e-10, atol=1e-12)
    assert ours.intercept_[0] == pytest.approx(intercept, rel=1e-10, abs=1e-12)
    default = PassiveAggressive(variant=variant, C=C, max_passes=1).fit(X, y)
    assert default.bias == "feature"
    assert np.abs(default.intercept_[0] - intercept) > 1e-6


BINARY_DATA = (np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]), np.array([1, 1, 1]))


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_one_class_training_is_refused_on_one_line(name):
    with pytest.raises(LinclsInputError) as info:
        LEARNERS[name]().fit(*BINARY_DATA)
    message = str(info.value)
    assert message.startswith("y: needs") and "got one class (" in message
    assert "\n" not in message
    # scikit-learn's own check accepts it: a ValueError that names the class
    check_classifiers_one_label(name, LEARNERS[name]())
