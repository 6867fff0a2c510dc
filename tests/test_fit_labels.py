"""The fit's label path: classes and ±1 labels in one pass, the same as the long way; partial_fit
refuses changed classes as scikit-learn does."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Perceptron as SkPerceptron

from lincls.errors import LinclsInputError
from lincls.learners import AveragedPerceptron, MulticlassPerceptron, Perceptron
from lincls.learners._base import binary_classes, fast_binary_labels


def labels_of(values, n=1000, seed=0, dtype=None):
    """``n`` labels drawn from ``values`` in random order, the first of ``values`` first."""
    rng = np.random.default_rng(seed)
    y = np.asarray(values, dtype=dtype)[rng.integers(0, len(values), n)]
    y[0] = values[0]
    return y


@pytest.mark.parametrize(
    "y",
    [
        labels_of([0, 1]),
        labels_of([1, 0]),  # the first label is the larger class
        labels_of([7, -3], dtype=np.int32),
        labels_of([200, 3], dtype=np.uint8),
        labels_of([True, False]),
        labels_of([1.0, -1.0]),
        labels_of([-1.0, 4.0], dtype=np.float32),
        np.r_[np.full(500, 2), np.full(500, 5)],  # a long run of the first class
        np.r_[np.full(999, 5), [2]],  # the second class only at the end
    ],
)
def test_one_pass_equals_the_long_way(y):
    classes, signed = fast_binary_labels(y)
    expected = binary_classes(y)
    assert classes.dtype == expected.dtype and np.array_equal(classes, expected)
    assert signed.dtype == np.float64
    assert np.array_equal(signed, np.where(y == expected[1], 1.0, -1.0))


@pytest.mark.parametrize(
    "y",
    [
        np.full(10, 3),  # one class
        np.r_[labels_of([0, 1], n=999), [2]],  # a third class, last
        np.r_[[2], labels_of([0, 1], n=999)],  # a third class, first
        labels_of(["ham", "spam"]),
        labels_of([0.5, 1.0]),  # continuous: scikit-learn's error, the long way
        labels_of([0.0, 1.0], dtype=np.float16),
    ],
)
def test_one_pass_leaves_the_rest_to_the_long_way(y):
    assert fast_binary_labels(y) is None


def test_fit_on_continuous_labels_raises_as_sklearn_does():
    X = np.random.default_rng(1).standard_normal((30, 3))
    y = labels_of([0.0, 0.5], n=30)
    with pytest.raises(ValueError, match="Unknown label type") as ours:
        Perceptron().fit(X, y)
    with pytest.raises(ValueError, match="Unknown label type") as peer:
        SkPerceptron().fit(X, y)
    assert type(ours.value) is type(peer.value) is ValueError


def test_fit_labels_give_sklearn_weights_whatever_their_values():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((300, 6))
    y = np.where(X @ rng.standard_normal(6) > 0, 9, 4).astype(np.int16)
    ours = Perceptron(stop_when_converged=False, max_passes=3).fit(X, y)
    peer = SkPerceptron(shuffle=False, tol=None, max_iter=3).fit(X, y)
    assert ours.classes_.tolist() == [4, 9] and ours.classes_.dtype == np.int16
    assert np.array_equal(ours.coef_, peer.coef_)
    assert np.array_equal(ours.intercept_, peer.intercept_)


@pytest.mark.parametrize(
    "y_of",
    [
        lambda k: k,
        lambda k: (k * 2.0 - 3.0).astype(np.float32),
        lambda k: np.array(["a", "b", "c", "d"])[k],
    ],
)
def test_multiclass_labels_are_class_indices(y_of):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 5))
    k = np.argmax(X @ rng.standard_normal((5, 4)), axis=1)
    reference = MulticlassPerceptron(max_passes=2).fit(X, k)
    model = MulticlassPerceptron(max_passes=2).fit(X, y_of(k))
    assert model.classes_.tolist() == np.unique(y_of(k)).tolist()
    assert np.array_equal(model.coef_, reference.coef_)
    assert np.array_equal(model.mistake_indices_, reference.mistake_indices_)
    with pytest.raises(ValueError, match="Unknown label type"):
        MulticlassPerceptron().fit(X, k + 0.25)


# scikit-learn's test_NB_partial_fit_no_first_classes checks that a later call with other
# classes raises a ValueError saying they are "not the same as on last call to partial_fit".
@pytest.mark.parametrize("make", [Perceptron, AveragedPerceptron, MulticlassPerceptron])
def test_partial_fit_refuses_other_classes(make):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 4))
    y = (X[:, 0] > 0).astype(int)
    model = make().partial_fit(X, y, classes=np.unique(y))
    coef, record = model.coef_.copy(), model.mistake_indices_.copy()
    with pytest.raises(ValueError, match="is not the same as on last call to partial_fit") as info:
        model.partial_fit(X, y, classes=np.arange(42))
    assert isinstance(info.value, LinclsInputError)
    message = str(info.value)
    assert message.startswith("classes: [0, 1, 2, ") and message.endswith("was [0, 1]")
    assert "\n" not in message
    # nothing learned from the refused call
    assert np.array_equal(model.coef_, coef) and np.array_equal(model.mistake_indices_, record)
    # the same classes, in any order, or none at all, go on
    model.partial_fit(X, y, classes=[1, 0])
    model.partial_fit(X, y)
    assert model.n_passes_ == 3


def test_sklearn_refuses_other_classes_with_the_same_exception_type():
    X = np.random.default_rng(5).standard_normal((20, 3))
    y = np.arange(20) % 2
    peer = SkPerceptron().partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="is not the same as on last call to partial_fit"):
        peer.partial_fit(X, y, classes=np.arange(42))


def test_naive_bayes_partial_fit_refuses_other_classes_and_keeps_its_counts():
    from lincls.learners import NaiveBayesLinear

    rng = np.random.default_rng(6)
    X = (rng.random((50, 4)) > 0.5).astype(float)
    y = (X[:, 0] > 0).astype(int)
    model = NaiveBayesLinear().partial_fit(X, y, classes=[0, 1])
    coef = model.coef_.copy()
    with pytest.raises(ValueError, match="is not the same as on last call to partial_fit"):
        model.partial_fit(X, y, classes=[0, 1, 2])
    assert np.array_equal(model.coef_, coef)
    model.partial_fit(X, y, classes=[1, 0])  # the same classes go on: the counts add up
    twice = NaiveBayesLinear().fit(np.vstack([X, X]), np.concatenate([y, y]))
    assert np.allclose(model.coef_, twice.coef_, rtol=1e-12, atol=0)


def test_one_class_names_the_label_as_written():
    X = np.zeros((5, 2))
    with pytest.raises(LinclsInputError) as info:
        Perceptron().fit(X, np.full(5, 7))
    assert "got one class (7)" in str(info.value)
    with pytest.raises(LinclsInputError) as info:
        Perceptron().fit(X, np.array(["yes"] * 5))
    assert "got one class ('yes')" in str(info.value)
