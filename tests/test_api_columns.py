"""``Study.runs`` types logged texts with Arrow's number parser where it reads them as pandas'
``to_numeric`` does, and booleans by one ``isin`` where every text is one: pandas itself
everywhere else, and the same column either way."""

from __future__ import annotations

import itertools
import warnings

import pandas as pd
import pytest

from lincls.api import columns

TEXTS = ["1", "-3", "+5", "05", "1.0", " 7", "1e5", "1E5", ".5", "5.", "1e5 ", "-0.0", "1e-320",
         "1e400", "inf", "-inf", "+inf", "INF", "Infinity", "nan", "NaN", "nan ", "x", "0x10",
         "0b1", "1_000", "True", "False", "true", "false", "TRUE", "99999999999999999999",
         "-9223372036854775808", "٣", "１", None]  # fmt: skip


def _typed(values: pd.Series, kind: type) -> pd.Series | str:
    try:
        typed = columns.typed(values, kind)
        assert typed.index.equals(values.index)
        return typed
    except Exception as exc:  # the pandas path's own failures must stay the same
        return type(exc).__name__


@pytest.mark.parametrize("kind", [int, float, bool])
@pytest.mark.parametrize("dtype", ["str", object])
def test_arrow_and_pandas_type_every_pair_of_texts_alike(kind, dtype, monkeypatch):
    fast = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # pandas' own casts of odd texts
        for first, second in itertools.product(TEXTS, TEXTS):
            values = pd.Series([first, second, "True" if kind is bool else "2"], dtype=dtype)
            ours = _typed(values, kind)
            with monkeypatch.context() as patched:
                patched.setattr(columns, "_cast", lambda *a: None)
                patched.setattr(columns, "BOOL_TEXTS", ())  # pandas' map of each text
                theirs = _typed(values, kind)
            if isinstance(ours, str) or isinstance(theirs, str):
                assert ours == theirs, (first, second)
                continue
            fast += bool(values.isin(columns.BOOL_TEXTS).all()) if kind is bool else \
                columns._cast(values, columns.pa.float64() if kind is float else
                              columns.pa.int64()) is not None  # fmt: skip
            assert ours.dtype == theirs.dtype, (first, second)
            assert [repr(v) for v in ours] == [repr(v) for v in theirs], (first, second)
    assert fast >= {int: 25, float: 100, bool: 16}[kind]  # the fast path is taken, and agrees
