"""The checks of plain arrays (``lincls.learners._plain``) give scikit-learn's answers: the same
arrays, ``n_features_in_``, classes, scores and predictions, and the same refusals, where the
general path (``validate_data``, ``check_classification_targets``, ``LinearClassifierMixin``)
would have been taken."""

from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

import lincls.learners
from lincls.learners import OnlineBinaryClassifier, Perceptron, _plain
from lincls.learners._base import sorted_classes

RNG = np.random.default_rng(7)
# the prediction path all learners share; the peer checks of each rule are in its own tests
ANY_LEARNER = Perceptron
X64 = RNG.normal(size=(30, 4))
LABELS = np.where(X64[:, 0] + 0.3 * X64[:, 1] > 0, 3, -2)


def _inputs() -> dict[str, tuple[object, object]]:
    """(X, y) of every kind: plain ones and each way of not being plain."""
    with_nan = X64.copy()
    with_nan[3, 1] = np.nan
    return {
        "float64": (X64, LABELS),
        "float32": (X64.astype(np.float32), LABELS),
        "bool labels": (X64, LABELS > 0),
        "uint8 labels": (X64, (LABELS > 0).astype(np.uint8)),
        "float labels": (X64, LABELS.astype(float)),
        "fractional labels": (X64, LABELS + 0.5),
        "NaN labels": (X64, np.where(LABELS > 0, np.nan, 1.0)),
        "huge labels": (X64, np.where(LABELS > 0, 1e300, -1e300)),
        "text labels": (X64, np.where(LABELS > 0, "yes", "no")),
        "Fortran order": (np.asfortranarray(X64), LABELS),
        "int X": (np.round(X64 * 10).astype(np.int64), LABELS),
        "a view of every other row": (X64[::2], LABELS[::2]),
        "lists": (X64.tolist(), LABELS.tolist()),
        "data frame": (pd.DataFrame(X64, columns=list("abcd")), pd.Series(LABELS)),
        "sparse": (sp.csr_matrix(X64), LABELS),
        "NaN in X": (with_nan, LABELS),
        "1-d X": (X64[:, 0], LABELS),
        "no rows": (X64[:0], LABELS[:0]),
        "no columns": (X64[:, :0], LABELS),
        "column labels": (X64, LABELS[:, None]),
        "lengths differ": (X64, LABELS[:-1]),
    }


def _outcome(call):
    try:
        return "ok", call()
    except Exception as exc:  # the refusal is part of the answer
        return "refused", (type(exc), str(exc))


def _same(ours, theirs) -> None:
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "refused":
        assert ours[1] == theirs[1]
        return
    for mine, its in zip(ours[1], theirs[1], strict=True):
        if sp.issparse(its):
            assert sp.issparse(mine) and (mine != its).nnz == 0
            continue
        assert type(mine) is type(its) and mine.dtype == its.dtype and mine.shape == its.shape
        assert np.array_equal(mine, its, equal_nan=mine.dtype.kind == "f")


@pytest.mark.parametrize("reset", [True, False])
@pytest.mark.parametrize("kind", list(_inputs()))
def test_the_layout_check_answers_as_validate_data(kind, reset):
    X, y = _inputs()[kind]
    ours, theirs = Perceptron(), Perceptron()
    if not reset:  # a later call: the estimator saw 4 features of a plain array
        ours.n_features_in_ = theirs.n_features_in_ = 4
    settings = dict(accept_sparse="csr", dtype=[np.float64, np.float32], order="C",
                    accept_large_sparse=False, ensure_all_finite=False)  # fmt: skip
    _same(
        _outcome(lambda: ours._validate_layout(X, y, reset=reset)),
        _outcome(lambda: validate_data(theirs, X, y, reset=reset, **settings)),
    )
    assert getattr(ours, "n_features_in_", None) == getattr(theirs, "n_features_in_", None)
    assert hasattr(ours, "feature_names_in_") == hasattr(theirs, "feature_names_in_")


def test_plain_arrays_take_the_plain_path_and_others_do_not():
    """The cases above are not all decided by the general path."""
    plain = {k for k, (X, y) in _inputs().items() if _plain.layout(Perceptron(), X, y, True)}
    # NaN too: this check leaves X's values to ``check_finite``, as ensure_all_finite=False does
    assert plain == {
        "float64",
        "float32",
        "bool labels",
        "uint8 labels",
        "float labels",
        "NaN in X",
    }


@pytest.mark.parametrize(
    "labels",
    [LABELS, LABELS > 0, (LABELS > 0).astype(np.uint16), np.arange(30) % 3, np.zeros(30, int),
     LABELS.astype(float), LABELS.astype(np.float32), LABELS + 0.5, np.where(LABELS > 0, "a", "b"),
     LABELS[:0], np.where(LABELS > 0, np.nan, 1.0), np.where(LABELS > 0, np.inf, 1.0),
     np.where(LABELS > 0, 1e300, -1e300), np.where(LABELS > 0, 2.0**53, 0.0)],
    ids=["int", "bool", "uint16", "three classes", "one class", "float", "float32", "continuous",
         "text", "empty", "NaN", "inf", "huge", "2^53"],
)  # fmt: skip
def test_the_classes_are_scikit_learns(labels):
    def theirs():
        check_classification_targets(labels)
        classes = np.unique(labels)
        if classes.shape[0] < 2:
            raise ValueError("one class")
        return classes

    mine, its = _outcome(lambda: sorted_classes(labels)), _outcome(theirs)
    assert mine[0] == its[0]
    if mine[0] == "ok":
        assert mine[1].dtype == its[1].dtype and np.array_equal(mine[1], its[1])
    elif its[1][1] != "one class":  # scikit-learn's own refusal, word for word
        assert mine[1] == its[1]


def _binary_learners() -> list[type]:
    for module in pkgutil.iter_modules(lincls.learners.__path__):
        importlib.import_module(f"lincls.learners.{module.name}")
    found, todo = [], [OnlineBinaryClassifier]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            public = not sub.__module__.rpartition(".")[2].startswith("_")  # not a base
            if sub.__module__.startswith("lincls.learners") and public:
                found.append(sub)
    return sorted(set(found), key=lambda c: c.__name__)


@pytest.mark.parametrize("labels", [np.int64, np.float64])
@pytest.mark.parametrize("learner_class", _binary_learners(), ids=lambda c: c.__name__)
def test_predictions_and_scores_are_scikit_learns_bit_for_bit(learner_class, labels):
    X = np.abs(X64)  # the multiplicative rules take features ≥ 0
    y = np.where(X[:, 0] > X[:, 1], 1, -1).astype(labels)
    learner = learner_class().fit(X, y)
    for data in (X, X.astype(np.float32), np.abs(RNG.normal(size=(9, 4)))):
        expected = LinearClassifierMixin.predict(learner, data)
        if type(learner).decision_function is OnlineBinaryClassifier.decision_function:
            scores = LinearClassifierMixin.decision_function(learner, data)
            assert np.array_equal(learner.decision_function(data), scores)
            assert learner.decision_function(data).dtype == scores.dtype
        if type(learner).predict is OnlineBinaryClassifier.predict:
            predicted = learner.predict(data)
            assert predicted.dtype == expected.dtype and np.array_equal(predicted, expected)


@pytest.mark.parametrize("kind", ["NaN in X", "1-d X", "int X", "sparse", "data frame"])
def test_scores_of_other_inputs_are_scikit_learns_own(kind):
    learner = ANY_LEARNER().fit(X64, LABELS)
    data = _inputs()[kind][0]
    mine = _outcome(lambda: learner.predict(data))
    its = _outcome(lambda: LinearClassifierMixin.predict(learner, data))
    assert mine[0] == its[0]
    if mine[0] == "ok":
        assert np.array_equal(mine[1], its[1])
    else:
        assert mine[1] == its[1]


def test_a_linear_learner_still_logs_its_weights_on_2_d_data():
    """The report draws a 2-D run's boundary from ``weights.coef.*``, logged for a learner whose
    score is w·x + b: this base's score is that score (it was left out when the base got it)."""
    from lincls.evaluation.measures import weight_metrics
    from lincls.registry import build_dataset

    data = build_dataset({"name": "plane", "n": 40, "margin": 0.1, "radius": 1.0})
    learner = Perceptron().fit(data.X, data.y)
    weights = weight_metrics(learner, data)
    assert set(weights) == {"weights.coef.0", "weights.coef.1", "weights.intercept"}
    assert weights["weights.coef.1"] == float(learner.coef_[0, 1])
