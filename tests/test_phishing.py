"""river's Phishing set, read from river's wheel: its shape, labels and split, and one line when
river is not installed."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from lincls.data import phishing
from lincls.errors import LinclsInputError
from lincls.registry import build_dataset


def test_phishing_is_the_shipped_file_split_and_standardized():
    data = build_dataset({"name": "phishing", "seed": 0, "test_fraction": 0.25})
    assert data.X.shape == (938, 9) and data.X_test.shape == (312, 9)
    labels = np.r_[data.y, data.y_test]
    assert set(np.unique(labels)) == {-1, 1} and int((labels == 1).sum()) == 548
    assert np.allclose(data.X.mean(axis=0), 0.0) and np.allclose(data.X.std(axis=0), 1.0)
    raw = phishing.load_phishing(standardize=False, test_fraction=0.0)
    assert raw.X.shape == (1250, 9) and raw.X.min() == 0.0 and raw.X.max() == 1.0


def test_without_river_the_dataset_is_one_line(monkeypatch):
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "river" else found(name, *a)
    )
    with pytest.raises(LinclsInputError, match=r"^dataset\.name: phishing is read from river"):
        build_dataset({"name": "phishing", "seed": 0})
