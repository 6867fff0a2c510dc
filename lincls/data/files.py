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
    # A short row or an empty cell would otherwise become a label of its own ("" or NaN).
    labels = frame[label_column]
    unlabelled = labels.isna().to_numpy() | (labels.fillna("").str.strip() == "").to_numpy()
    if unlabelled.any():
        row = int(np.flatnonzero(unlabelled)[0])
        raise LinclsInputError(
            field, f"{path} line {row + 2}, column {label_column!r}: the label is missing"
        )
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


def _first_bad_svmlight_line(path: Path) -> tuple[int, str] | None:
    """(line number, reason) of the first line that is not ``label index:value ...``, if any."""
    with open(path, encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            body = line.split("#", 1)[0].split()
            if not body:
                continue
            try:
                float(body[0])
            except ValueError:
                return number, f"label {body[0]!r} is not a number"
            previous = 0
            for token in body[1:]:
                if token.startswith("qid:"):
                    continue
                index, colon, value = token.partition(":")
                try:
                    ok = colon == ":" and int(index) > previous and np.isfinite(float(value))
                except ValueError:
                    ok = False
                if not ok:
                    return number, (
                        f"{token!r} is not index:value with increasing indices ≥ 1 "
                        "and a finite value"
                    )
                previous = int(index)
    return None


def load_svmlight(
    path: str | Path,
    test_fraction: float = 0.0,
    seed: int = 0,
    n_features: int | None = None,
    dense: bool = False,
    field: str = "path",
) -> Dataset:
    """Read an svmlight/libsvm file (``label index:value ...``, 1-based indices) as CSR.

    ``dense`` returns a dense array instead. Errors name the file and the first bad line.
    """
    from sklearn.datasets import load_svmlight_file

    check_number("test_fraction", test_fraction, low=0, high=1, high_open=True)
    if n_features is not None:
        check_number("n_features", n_features, low=1, integer=True)
    path = Path(path)
    if not path.is_file():
        raise LinclsInputError(field, f"no such file: {path}")
    bad = _first_bad_svmlight_line(path)
    if bad is not None:
        raise LinclsInputError(field, f"{path} line {bad[0]}: {bad[1]}")
    try:
        X, y = load_svmlight_file(str(path), n_features=n_features, zero_based=False)
    except ValueError as exc:
        raise LinclsInputError(field, f"{path}: {str(exc).splitlines()[0]}") from None
    if X.shape[0] == 0:
        raise LinclsInputError(field, f"{path}: no examples")
    X = X.astype(np.float64).tocsr()
    X.sort_indices()
    if dense:
        X = X.toarray()
    train, test = split_indices(X.shape[0], test_fraction, seed)
    return Dataset.plain(
        name=path.stem, X=X[train], y=y[train], X_test=X[test], y_test=y[test],
        params={"path": str(path), "test_fraction": test_fraction, "dense": dense},
    )  # fmt: skip
