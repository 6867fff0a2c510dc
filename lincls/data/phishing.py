"""river's Phishing websites set, read from the installed wheel (no download).

river ships ``river/datasets/phishing.csv.gz``: 1,250 web pages, 9 features in [0, 1] and the
label ``is_phishing`` (1 or 0), the first dataset of river's binary-classification examples (UCI's
"Website Phishing"). The file is found through the package's location on the path, without
importing river (river is in the test extra, not in what a run needs: without it the dataset is
refused in one line).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

from lincls.data.dataset import Dataset
from lincls.data.files import split_indices
from lincls.errors import LinclsInputError, check_number

PHISHING = ("datasets", "phishing.csv.gz")  # inside the river package
ROWS, FEATURES = 1250, 9
LABEL = "is_phishing"


def phishing_path() -> Path:
    """Where the installed river keeps the file; ``LinclsInputError`` if it is missing."""
    spec = importlib.util.find_spec("river")
    if spec is None or spec.origin is None:
        raise LinclsInputError(
            "name", "phishing is read from river's wheel: install river (pip install river)"
        )
    path = Path(spec.origin).parent.joinpath(*PHISHING)
    if not path.is_file():
        raise LinclsInputError("name", f"river at {spec.origin} ships no {'/'.join(PHISHING)}")
    return path


def load_phishing(standardize: bool = True, test_fraction: float = 0.25, seed: int = 0) -> Dataset:
    """The 1,250 pages, labels +1 (phishing) and −1, split into train and test by a seeded
    permutation (``split_indices``); ``standardize`` centres and scales every feature with the
    training split's mean and std (the test split uses the same)."""
    check_number("test_fraction", test_fraction, low=0, high=1, high_open=True)
    if not isinstance(standardize, bool):
        raise LinclsInputError("standardize", f"must be true or false, got {standardize!r}")
    table = pd.read_csv(phishing_path())
    if table.shape != (ROWS, FEATURES + 1) or table.columns[-1] != LABEL:
        raise LinclsInputError("name", f"phishing: expected {ROWS}×{FEATURES + 1}, {table.shape}")
    X = table.drop(columns=LABEL).to_numpy(dtype=np.float64)
    y = np.where(table[LABEL].to_numpy() == 1, 1, -1)
    train, test = split_indices(X.shape[0], test_fraction, seed)
    X_train, X_test = X[train], X[test]
    if standardize:
        mean, std = X_train.mean(axis=0), X_train.std(axis=0)
        std[std == 0.0] = 1.0  # a constant feature stays 0
        X_train, X_test = (X_train - mean) / std, (X_test - mean) / std
    return Dataset.plain(
        name="phishing", X=np.ascontiguousarray(X_train), y=y[train],
        X_test=np.ascontiguousarray(X_test), y_test=y[test],
        params={"standardize": standardize, "test_fraction": test_fraction, "seed": seed},
    )  # fmt: skip
