"""Datasets read from files: a CSV with a label column (categorical columns one-hot encoded),
an svmlight file, and the shipped PlayTennis table."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from lincls.data.dataset import Dataset
from lincls.errors import LinclsInputError, check_number
from lincls.geometry import max_norm, multiclass_margins

# The largest feature magnitude a file may hold: a run squares and sums features (norms, margins,
# bounds, second-order learners' updates). Measured on 40 rows: from 1e120 confidence_weighted
# divides by zero, from 1e200 the perceptrons' margins are NaN; squares of 1e100 are 1e200, which
# leaves ~1e108 for sums over rows, columns and passes.
FEATURE_MAX = 1e100
FEATURE_RULE = "a feature must be in [-1e100, 1e100], so that a run's sums of squares stay finite"


def split_indices(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded permutation of range(n) cut into train and test index arrays.

    Raises ``LinclsInputError`` (field ``test_fraction``) when the test set would take every row.
    """
    n_test = round(n * test_fraction)
    if n_test >= n:
        # n·f < n − ½ always rounds below n, whichever way a half rounds
        raise LinclsInputError(
            "test_fraction",
            f"leaves no training row: {n} rows × {test_fraction:g} rounds to {n_test} test rows;"
            f" with {n} rows it must be in [0, {(n - 0.5) / n:.4g})",
        )
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def load_csv(
    path: str | Path,
    label_column: str = "label",
    test_fraction: float = 0.0,
    seed: int = 0,
    categorical: Sequence[str] = (),
    field: str = "path",
    name: str | None = None,
    certificate: str | None = None,
) -> Dataset:
    """Read a CSV with a header; ``label_column`` holds the labels, every other column a feature.

    A column of numbers is a feature as it is; a column of text (or one named in
    ``categorical``) becomes one binary feature per value, in place (seed 000 §1: Outlook ∈
    {Rainy, Sunny, Cloudy} → three features). ``params["columns"]`` says which file column and
    value each feature comes from; string labels stay the class names. Errors name the file, and
    the line and column of a bad cell (line 1 is the header); a number must be in [-1e100, 1e100].
    """
    check_number("test_fraction", test_fraction, low=0, high=1, high_open=True)
    path = Path(path)
    if not path.is_file():
        raise LinclsInputError(field, f"no such file: {path}")
    _check_unique_header(path, field)
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
    features = [c for c in frame.columns if c != label_column]
    for column in categorical:
        if column not in features:
            raise LinclsInputError(
                "categorical", f"{column!r} is not a feature column of {path} (columns: {features})"
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
    blocks, columns = [], []
    # Every cell read as a number at once (a column at a time cost minutes at 200,000 columns);
    # a column that is all finite numbers in range is its feature as it is, and any other goes
    # through _feature_block, which names its bad cell or one-hot encodes it.
    cells = frame[features].to_numpy(dtype=object)
    numbers = pd.to_numeric(pd.Series(cells.ravel()), errors="coerce").to_numpy(np.float64)
    numbers = numbers.reshape(cells.shape)
    plain = (np.isfinite(numbers) & (np.abs(numbers) <= FEATURE_MAX)).all(axis=0)
    chosen = set(categorical)
    for j, column in enumerate(features):
        if plain[j] and column not in chosen:
            blocks.append(numbers[:, j : j + 1])
            columns.append({"column": column})
            continue
        where = f"{path} line {{}}, column {column!r}"
        block, names = _feature_block(frame[column], column in categorical, where, field)
        blocks.append(block)
        columns += [{"column": column, **named} for named in names]
    X = np.hstack(blocks) if blocks else np.empty((frame.shape[0], 0), dtype=np.float64)
    y = frame[label_column].to_numpy()
    numeric = pd.to_numeric(frame[label_column], errors="coerce")
    if numeric.notna().all():
        y = numeric.to_numpy()
        # a class is a whole number a float holds exactly (below 2⁵³); 1e308 or 0.5 names no class
        bad = ~np.isfinite(y) | (np.abs(y) >= 2.0**53) | (np.floor(y) != y)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise LinclsInputError(
                "label_column",
                f"{path} line {row + 2}, column {label_column!r}: label {frame[label_column][row]}"
                f" is not a class; numeric labels must be whole numbers in (-2^53, 2^53)"
                " (or write the classes as text)",
            )
    train, test = split_indices(X.shape[0], test_fraction, seed)
    data = dict(name=name or path.stem, X=X[train], y=y[train], X_test=X[test], y_test=y[test])
    params = {
        "path": str(path),
        "label_column": label_column,
        "test_fraction": test_fraction,
        "columns": columns,
        "classes": [c.item() if hasattr(c, "item") else c for c in np.unique(y)],
    }
    if certificate is None:
        return Dataset.plain(**data, params=params)
    classes = np.unique(y)
    record = _certificate_record(certificate)
    if isinstance(record, dict) and "U" in record:
        U = read_multiclass_certificate(certificate, len(classes), X.shape[1], record)
        y_index = np.searchsorted(classes, data["y"])
        gaps = multiclass_margins(data["X"], y_index, U, np.zeros(len(classes)))
        margin = float(gaps.min()) if gaps.size else None
        return Dataset(**data, margin=margin, radius=max_norm(data["X"]), params=params, U=U)
    u, b = read_certificate(certificate, X.shape[1], record)
    return Dataset.certified(**data, u=u, b=b, params=params)


def _certificate_record(path: str | Path) -> Any:
    """A certificate file's JSON, read once; ``LinclsInputError`` if it is none."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise LinclsInputError("certificate", f"{path}: not a certificate ({exc})") from None


def read_multiclass_certificate(
    path: str | Path, classes: int, width: int, record: Any = None
) -> np.ndarray:
    """The matrix U (a row per class, in sorted label order) a JSON file ``{"U": [[...], ...]}``
    gives multiclass data: the certificate a generator's data came with, which a CSV cannot
    carry (``lincls check`` saves it beside a multiclass violation). ``record``: its JSON, if
    read already."""
    record = _certificate_record(path) if record is None else record
    try:
        U = np.asarray(record["U"], dtype=np.float64)
    except (ValueError, KeyError, TypeError) as exc:
        raise LinclsInputError("certificate", f"{path}: not a certificate ({exc})") from None
    if U.shape != (classes, width) or not np.all(np.isfinite(U)):
        raise LinclsInputError(
            "certificate", f"{path}: U must be {classes} rows (one a class) of {width} finite "
            "numbers")  # fmt: skip
    return U


def read_certificate(path: str | Path, width: int, record: Any = None) -> tuple[np.ndarray, float]:
    """The separator (u, b) a JSON file ``{"u": [...], "b": ...}`` gives the data it sits
    beside (a searched instance's ``certificate.json``): what certifies data a CSV cannot carry,
    e.g. the disjunction Winnow's bounds read. ``record``: its JSON, if read already."""
    record = _certificate_record(path) if record is None else record
    try:
        u, b = np.asarray(record["u"], dtype=np.float64), float(record["b"])
    except (ValueError, KeyError, TypeError) as exc:
        raise LinclsInputError("certificate", f"{path}: not a certificate ({exc})") from None
    if u.shape != (width,) or not np.all(np.isfinite(u)) or not np.isfinite(b):
        raise LinclsInputError(
            "certificate", f"{path}: u must be {width} finite numbers and b finite"
        )
    return u, b


def _header(path: Path) -> list[str]:
    """The column names of a CSV's first non-blank line, as pandas reads them; [] when it is no
    CSV text (pandas' read then names what is wrong)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as text:
            return next((row for row in csv.reader(text) if row), [])
    except (UnicodeDecodeError, csv.Error):
        return []


def _check_unique_header(path: Path, field: str) -> None:
    """Refuse a header that names a column twice: pandas would rename the second ``a.1`` (a
    second ``label`` column would become a feature). One pass over the names (a 200,000-column
    header is checked in well under a second), before pandas reads the rows."""
    first: dict[str, int] = {}
    for k, name in enumerate(_header(path)):
        seen = first.setdefault(name, k)
        if seen != k:
            raise LinclsInputError(
                field,
                f"{path} line 1: column names must be unique; {name!r} names columns "
                f"{seen + 1} and {k + 1}",
            )


# Text a float() reads as a number that pandas' to_numeric turns into NaN like any other text.
_NAN_WORDS = ("nan", "+nan", "-nan")


def _feature_block(
    cells: pd.Series, categorical: bool, where: str, field: str
) -> tuple[np.ndarray, list[dict[str, str]]]:
    """One file column as features: (n × k block, what each of the k features is).

    Numbers stay one feature; text (or a column named categorical) is one-hot encoded with
    scikit-learn's ``OneHotEncoder``, one feature per value in order of first appearance, which
    is the seed's order (Rainy, Sunny, Cloudy as its days list them). A column mixing numbers and
    text is refused: a typo in a column of numbers must not silently become categories.
    """
    values = pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64)
    numberlike = ~np.isnan(values) | cells.str.strip().str.lower().isin(_NAN_WORDS).to_numpy()
    if not categorical and numberlike.any():
        bad = ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            mixed = "" if numberlike.all() else " (the column's other cells are numbers)"
            raise LinclsInputError(
                field,
                f"{where.format(row + 2)}: {cells.iloc[row]!r} is not a finite number{mixed}",
            )
        huge = np.abs(values) > FEATURE_MAX
        if huge.any():
            row = int(np.flatnonzero(huge)[0])
            raise LinclsInputError(
                field,
                f"{where.format(row + 2)}: {cells.iloc[row]} is out of range; {FEATURE_RULE}",
            )
        return values[:, np.newaxis], [{}]
    missing = (cells.str.strip() == "").to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise LinclsInputError(field, f"{where.format(row + 2)}: the value is missing")
    from sklearn.preprocessing import OneHotEncoder

    categories = list(pd.unique(cells))
    encoder = OneHotEncoder(categories=[categories], sparse_output=False, dtype=np.float64)
    block = encoder.fit_transform(cells.to_numpy(dtype=object)[:, np.newaxis])
    return block, [{"category": str(c)} for c in categories]


def column_names(columns: Sequence[Mapping[str, str]]) -> list[str]:
    """Each feature's name from a loader's column map: ``Temp``, or ``Outlook=Rainy`` for the
    binary feature of one value of a categorical column."""
    return [
        f"{c['column']}={c['category']}" if "category" in c else str(c["column"]) for c in columns
    ]


PLAYTENNIS = "playtennis.csv"


def load_playtennis(test_fraction: float = 0.0, seed: int = 0) -> Dataset:
    """The shipped PlayTennis table: Outlook (Rainy, Sunny, Cloudy), Temp, PlayTennis (No, Yes).

    Its first three days are seed 000 §1's (day 1, Rainy at 85, becomes ⟨1, 0, 0, 85⟩, −1);
    the other 14 are our own, made so that the days are linearly separable (no play when it
    rains, else play up to 78 degrees and not from 83). Read by ``load_csv``.
    """
    shipped = resources.files("lincls.data") / PLAYTENNIS
    with resources.as_file(shipped) as path:
        return load_csv(
            path, label_column="PlayTennis", test_fraction=test_fraction, seed=seed,
            field="name", name="playtennis",
        )  # fmt: skip


# The largest feature index scikit-learn's svmlight reader takes (a C int; above: OverflowError).
SVMLIGHT_MAX_INDEX = 2**31 - 1


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
                if abs(float(value)) > FEATURE_MAX:
                    return number, f"{value} in {token!r} is out of range; {FEATURE_RULE}"
                previous = int(index)
                if previous > SVMLIGHT_MAX_INDEX:
                    return number, (
                        f"index {previous} in {token!r} is above {SVMLIGHT_MAX_INDEX}, the largest"
                        " feature index allowed"
                    )
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

    ``dense`` returns a dense array instead. Errors name the file and the first bad line; a
    value must be in [-1e100, 1e100].
    """
    from sklearn.datasets import load_svmlight_file

    check_number("test_fraction", test_fraction, low=0, high=1, high_open=True)
    if n_features is not None:
        check_number("n_features", n_features, low=1, high=SVMLIGHT_MAX_INDEX, integer=True)
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
