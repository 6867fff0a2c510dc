"""scikit-learn's shipped datasets (breast_cancer, digits, iris, wine), read from the package.

No download: these four are files inside scikit-learn. Binary learners need two classes: pick
them with ``classes=[a, b]`` (the other examples are dropped) or make one class against the rest
with ``positive=a`` (labels +1 for it, −1 for the rest). ``standardize`` centres and scales every
feature with the training split's mean and standard deviation (the test split uses the same).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn import datasets as sk_datasets

from lincls.data.dataset import Dataset
from lincls.data.files import split_indices
from lincls.errors import LinclsInputError, check_number

LOADERS: dict[str, Callable] = {
    "breast_cancer": sk_datasets.load_breast_cancer,
    "digits": sk_datasets.load_digits,
    "iris": sk_datasets.load_iris,
    "wine": sk_datasets.load_wine,
}


def load_sklearn_set(
    name: str,
    classes: Sequence[int] | None = None,
    positive: int | None = None,
    standardize: bool = False,
    test_fraction: float = 0.25,
    seed: int = 0,
) -> Dataset:
    """One of scikit-learn's shipped sets, optionally reduced to two classes and standardized."""
    if name not in LOADERS:
        raise LinclsInputError("name", f"must be one of {sorted(LOADERS)}, got {name!r}")
    check_number("test_fraction", test_fraction, low=0, high=1, high_open=True)
    if not isinstance(standardize, bool):
        raise LinclsInputError("standardize", f"must be true or false, got {standardize!r}")
    bunch = LOADERS[name]()
    X, y = np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target)
    available = sorted(int(c) for c in np.unique(y))
    if classes is not None and positive is not None:
        raise LinclsInputError("positive", "give classes or positive, not both")
    if classes is not None:
        classes = list(classes)
        if (
            len(classes) < 2
            or len(set(classes)) != len(classes)
            or not set(classes) <= set(available)
        ):
            raise LinclsInputError(
                "classes", f"must be ≥ 2 distinct classes of {available}, got {classes}"
            )
        keep = np.isin(y, classes)
        X, y = X[keep], y[keep]
    if positive is not None:
        if positive not in available:
            raise LinclsInputError("positive", f"must be one of {available}, got {positive!r}")
        y = np.where(y == positive, 1, -1)
    train, test = split_indices(X.shape[0], test_fraction, seed)
    X_train, X_test = X[train], X[test]
    if standardize:
        mean, std = X_train.mean(axis=0), X_train.std(axis=0)
        std[std == 0.0] = 1.0  # a constant feature stays 0
        X_train, X_test = (X_train - mean) / std, (X_test - mean) / std
    return Dataset.plain(
        name=name, X=np.ascontiguousarray(X_train), y=y[train],
        X_test=np.ascontiguousarray(X_test), y_test=y[test],
        params={"classes": classes, "positive": positive, "standardize": standardize,
                "test_fraction": test_fraction, "seed": seed},
    )  # fmt: skip


def _loader(name: str) -> Callable[..., Dataset]:
    def load(**options) -> Dataset:
        return load_sklearn_set(name, **options)

    load.__name__ = f"load_{name}"
    load.__doc__ = f"scikit-learn's {name} set (``load_sklearn_set``)."
    return load


load_breast_cancer = _loader("breast_cancer")
load_digits = _loader("digits")
load_iris = _loader("iris")
load_wine = _loader("wine")
