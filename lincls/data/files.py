"""Datasets read from files: a CSV with a label column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lincls.data.dataset import Dataset
from lincls.errors import LinclsInputError, check_number


def split_indices(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded permutation of range(n) cut into train and test index arrays."""
    order = np.random.default_rng(seed).permutation(n)
    n_test = round(n * test_fraction)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def load_csv(
    path: str | Path,
    label_column: str = "label",
    test_fraction: float = 0.0,
    seed: int = 0,
    field: str = "path",
) -> Dataset:
    """Read a CSV with a header; ``label_column`` holds the labels, every other column a feature.

    Errors name the file, and the line and column of a bad cell (line 1 is the header).
    """
    check_number("test_fraction", test_fraction, low=0, high=1, high_open=True)
    path = Path(path)
    if not path.is_file():
        raise LinclsInputError(field, f"no such file: {path}")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LinclsInputError(field, f"{path}: not a readable CSV ({first})") from None
    if label_column not in frame.columns:
        raise LinclsInputError(
            "label_column",
            f"{label_column!r} is not a column of {path} (columns: {list(frame.columns)})",
        )
    if frame.shape[0] == 0:
        raise LinclsInputError(field, f"{path}: has a header but no rows")
    features = [c for c in frame.columns if c != label_column]
    X = np.empty((frame.shape[0], len(features)), dtype=np.float64)
    for j, column in enumerate(features):
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise LinclsInputError(
                field,
                f"{path} line {row + 2}, column {column!r}: {frame[column].iloc[row]!r} "
                "is not a finite number",
            )
        X[:, j] = values
    y = frame[label_column].to_numpy()
    numeric = pd.to_numeric(frame[label_column], errors="coerce")
    if numeric.notna().all():
        y = numeric.to_numpy()
    train, test = split_indices(X.shape[0], test_fraction, seed)
    return Dataset.plain(
        name=path.stem,
        X=X[train],
        y=y[train],
        X_test=X[test],
        y_test=y[test],
        params={"path": str(path), "label_column": label_column, "test_fraction": test_fraction},
    )
