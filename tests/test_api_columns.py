"""``Study.runs`` types logged texts with Arrow's number parser where it reads them as pandas'
``to_numeric`` does, and with pandas itself everywhere else: the same column either way."""

from __future__ import annotations

import itertools
import warnings

import pandas as pd
import pytest

from lincls.api import columns

TEXTS = ["1", "-3", "+5", "05", "1.0", " 7", "1e5", "1E5", ".5", "5.", "1e5 ", "-0.0", "1e-320",
         "1e400", "inf", "-inf", "+inf", "INF", "Infinity", "nan", "NaN", "nan ", "x", "0x10",
         "0b1", "1_000", "True", "99999999999999999999", "-9223372036854775808", "٣", "１",
         None]  # fmt: skip


def _typed(values: pd.Series, kind: type) -> pd.Series | str:
    try:
        return columns.typed(values, kind)
    except Exception as exc:  # the pandas path's own failures must stay the same
        return type(exc).__name__


@pytest.mark.parametrize("kind", [int, float])
@pytest.mark.parametrize("dtype", ["str", object])
def test_arrow_and_pandas_type_every_pair_of_texts_alike(kind, dtype, monkeypatch):
    fast = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # pandas' own casts of odd texts
        for first, second in itertools.product(TEXTS, TEXTS):
            values = pd.Series([first, second, "2"], dtype=dtype)
            ours = _typed(values, kind)
            with monkeypatch.context() as patched:
                patched.setattr(columns, "_cast", lambda *a: None)
                theirs = _typed(values, kind)
            if isinstance(ours, str) or isinstance(theirs, str):
                assert ours == theirs, (first, second)
                continue
            fast += columns._cast(values, columns.pa.float64() if kind is float else
                                  columns.pa.int64()) is not None  # fmt: skip
            assert ours.dtype == theirs.dtype, (first, second)
            assert [repr(v) for v in ours] == [repr(v) for v in theirs], (first, second)
    assert fast >= (25 if kind is int else 100)  # the fast path is taken, and agrees
