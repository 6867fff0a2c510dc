"""Long (run id, name, value) rows gathered batch by batch into one column per name.

The reader streams MLflow's long tables (params, latest metrics, tags) and each run's record in
batches: a batch's rows go to their (name, run) cells by integer codes and the batch is dropped,
so a study of a million runs never holds its ~50 million long rows (each with its 32-character
run id) at once, only the columns they make. Where two rows give a run's value of one name (a
record's value, then a tag set on the run later), the one added last is kept.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lincls.tracking.record import RECORD_TAG, continuation
from lincls.tracking.record_table import ROW, RecordTable


class Positions:
    """The runs' order: each run id's row (a dict, built once; a batch looks up only its
    distinct run ids)."""

    def __init__(self, run_ids: Sequence[str]) -> None:
        self.count = len(run_ids)
        self._row = {run_id: k for k, run_id in enumerate(run_ids)}

    def of(self, run_ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Each id's row, -1 for a run not among them."""
        if isinstance(run_ids, pa.ChunkedArray):
            run_ids = run_ids.combine_chunks()
        codes = pc.dictionary_encode(run_ids)
        row = np.array([self._row.get(run_id, -1) for run_id in codes.dictionary.to_pylist()],
                       dtype=ROW)  # fmt: skip
        return row[codes.indices.to_numpy(zero_copy_only=False)] if len(row) else row

    def get(self, run_id: str) -> int:
        return self._row.get(run_id, -1)


class Wide:
    """Columns of one kind (numbers or texts) over the runs of ``positions``, filled by
    ``add`` (long rows) or ``put`` (one name's values)."""

    def __init__(self, positions: Positions, numeric: bool) -> None:
        self.positions = positions
        self.numeric = numeric
        self._parts: dict[str, list[tuple[np.ndarray, pa.Array]]] = {}

    def put(self, name: str, rows: np.ndarray, values: pa.Array) -> None:
        """Values of ``name`` for the runs at ``rows``."""
        if len(rows):
            self._parts.setdefault(name, []).append((rows, values))

    def add(self, batch: pa.RecordBatch | pa.Table) -> None:
        """(run id, name, value) rows; rows of runs not chosen are left out."""
        if not batch.num_rows:
            return
        rows = self.positions.of(batch.column(0))
        chosen = rows >= 0
        if not chosen.all():
            batch, rows = batch.filter(pa.array(chosen)), rows[chosen]
            if not len(rows):
                return
        names = batch.column(1)
        if isinstance(names, pa.ChunkedArray):
            names = names.combine_chunks()
        codes = pc.dictionary_encode(names)
        code = codes.indices.to_numpy(zero_copy_only=False)
        by_name = np.argsort(code, kind="stable")  # a name's rows in their order
        bounds = np.searchsorted(code[by_name], np.arange(len(codes.dictionary) + 1))
        values = batch.column(2)
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        typed = pa.float64() if self.numeric else pa.large_string()
        for j, name in enumerate(codes.dictionary.to_pylist()):
            picked = by_name[bounds[j] : bounds[j + 1]]
            self.put(name, rows[picked], values.take(picked).cast(typed))

    def under(self, later: Wide) -> Wide:
        """These columns with ``later``'s values added after them (kept where both have one)."""
        for name, parts in later._parts.items():
            self._parts.setdefault(name, []).extend(parts)
        later._parts.clear()
        return self

    def frame(self, prefix: str) -> pd.DataFrame:
        """One column per name (``prefix`` + name, sorted), in the runs' order: NaN where a run
        has no number; a text column pandas' ``str`` (NaN where a run has none), or None
        throughout where no run has a text."""
        count = self.positions.count
        columns = {}
        for name in sorted(self._parts):
            parts = self._parts.pop(name)  # let each name's parts go once its column is made
            if self.numeric:
                column = np.full(count, np.nan)
                for rows, values in parts:
                    column[rows] = values.to_numpy(zero_copy_only=False)  # null: NaN
                columns[f"{prefix}{name}"] = column
                continue
            at = np.full(count, -1, dtype=np.int64)  # a position in the joined texts
            start = 0
            for rows, values in parts:
                at[rows] = np.arange(start, start + len(values))
                start += len(values)
            text = pa.concat_arrays([values for _, values in parts])
            taken = text.take(pa.array(at, mask=at < 0))
            columns[f"{prefix}{name}"] = (
                taken.to_pandas() if taken.null_count < count else [None] * count
            )
        # copy=False: each column its own block, not stacked into one (a copy of them all)
        return pd.DataFrame(columns, index=range(count), copy=False)


@contextmanager
def without_cyclic_gc() -> Iterator[None]:
    """No cyclic collection while records are decoded: they make no cycles, and the collector
    ran every 700 new containers over a heap that grows with the study (~40% of the decoding
    time at 100,000 runs)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def add_records(
    metrics: Wide,
    tags: Wide,
    rows: np.ndarray,
    firsts: Iterable[str],
    continued: Mapping[int, list[str]],
    tag_keys: set[str] | None,
) -> None:
    """The records of the runs at ``rows`` (their first tags' values ``firsts``; ``continued``:
    a row's further parts, in order) as their metrics' latest values and their tags (those of
    ``tag_keys``; None: all)."""
    table = RecordTable(tag_keys)
    with without_cyclic_gc():
        for row, first in zip(rows.tolist(), firsts, strict=True):
            more = continued.get(row)
            table.add(row, [first, *more] if more else [first])
    for name, parts in table.numbers().items():
        for at, values in parts:
            metrics.put(name, at, pa.array(values, pa.float64()))
    for name, (at, texts) in table.texts().items():
        tags.put(name, at, pa.array(texts, pa.large_string()))


def add_record_rows(metrics: Wide, tags: Wide, chunks: pa.Table, tag_keys: set[str] | None) -> None:
    """``add_records`` of (run id, key, value) rows of record tags (every part of each run)."""
    if not chunks.num_rows:
        return
    positions = metrics.positions
    parts: dict[int, dict[str, str]] = {}
    for run_id, key, value in zip(*(chunks[c].to_pylist() for c in ("run_id", "key", "value")),
                                  strict=True):  # fmt: skip
        row = positions.get(run_id)
        if row >= 0:
            parts.setdefault(row, {})[key] = value
    firsts = {row: found[RECORD_TAG] for row, found in parts.items() if RECORD_TAG in found}
    continued = {row: continuation(found) for row, found in parts.items()}
    rows = np.fromiter(firsts, dtype=np.int64, count=len(firsts))
    add_records(metrics, tags, rows, firsts.values(), continued, tag_keys)
