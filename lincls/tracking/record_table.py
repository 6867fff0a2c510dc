"""Many runs' records read as a table: what ``record.summary`` gives of each, by groups of runs.

A study's records differ run to run in their numbers and a few tags, not in their names: every
run of one learner names the same metrics in the same order, and the runs of one dataset carry
the same tags but for a handful. So each record is inflated by ``record.inflated``, the head
of a format-2 record (``record.Record.table_payload``:
``{"v":2,"m":[names],"l":[names],"t":{tags}}``) is split at its tags, the part
before them parsed once for every run that has it, and the tags parsed once for every run that
has the same; the numbers of the runs that share their names are gathered as bytes and read as
one array at the end, a column per name. ``record.summary``, run by run, cost ~100 µs a run, most
of it parsing the same names again; a record this does not read so (format 1, a record in
several tags, a head of another shape) is read by ``summary``, with the same values.
``tests/test_record.py`` compares the two on every kind of record.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping

import numpy as np
import orjson

from lincls.tracking.record import FORMAT, SEPARATOR, inflated, summary

# A run's row in the study: int32 (a study of up to 2**31 runs), half the memory of int64 for
# the row numbers kept beside each of a million runs' ~150 values until their columns are made
ROW = np.int32

TAGS_AT = b',"t":'  # where a head's tags start (the encoder writes v, m, l, then t)
MEMO = 4_096  # tags remembered at most (those of one dataset's runs come together)


class RecordTable:
    """The records of many runs, added one by one (``add``), read as columns (``numbers``,
    ``texts``): by name, the rows that have a value and their values."""

    def __init__(self, tag_keys: set[str] | None = None) -> None:
        self.tag_keys = tag_keys
        self._names: dict[bytes, dict[str, int] | None] = {}  # a head's part before its tags
        self._tags: dict[bytes, dict[str, str]] = {}
        self._grouped: dict[int, tuple[dict[str, int], list[int], list[bytes]]] = {}
        self._numbers: dict[str, tuple[list, list]] = {}
        self._texts: dict[str, tuple[list, list]] = {}

    def add(self, row: int, parts: Iterable[str]) -> None:
        """The record whose tags' values are ``parts`` (in order), of the run at ``row``."""
        parts = list(parts)
        packed, separator, _ = parts[0].partition(SEPARATOR) if len(parts) == 1 else ("", "", "")
        if separator:
            head, _, numbers = inflated(base64.b64decode(packed)).partition(b"\n")
            cut = head.find(TAGS_AT)
            before = head[:cut] + b"}" if cut >= 0 else head
            names = self._names.get(before, False)
            if names is False:
                names = self._names[before] = _names(before)
            tags = self._tags_of(head[cut + len(TAGS_AT) : -1]) if cut >= 0 else {}
            if names is not None and tags is not None:
                count = max(names.values(), default=-1) + 1  # the last name's column is its own
                if len(numbers) != 8 * count:
                    raise ValueError(f"a run's record of {len(numbers) // 8} numbers where its "
                                     f"head names {count}")  # fmt: skip
                group = self._grouped.get(id(names))
                if group is None:
                    group = self._grouped[id(names)] = (names, [], [])
                group[1].append(row)
                group[2].append(numbers)
                self._add_texts(row, tags)
                return
        latest, recorded = summary(parts)
        for name, value in latest.items():
            found = self._numbers.get(name) or self._numbers.setdefault(name, ([], []))
            found[0].append(row)
            found[1].append(value)
        self._add_texts(row, recorded)

    def _tags_of(self, text: bytes) -> dict[str, str] | None:
        tags = self._tags.get(text)
        if tags is None:
            try:
                tags = orjson.loads(text)
            except orjson.JSONDecodeError:
                return None
            if not isinstance(tags, dict):
                return None
            if len(self._tags) >= MEMO:
                self._tags.clear()
            self._tags[text] = tags
        return tags

    def _add_texts(self, row: int, tags: Mapping[str, str]) -> None:
        for name, text in tags.items():
            if self.tag_keys is not None and name not in self.tag_keys:
                continue
            found = self._texts.get(name) or self._texts.setdefault(name, ([], []))
            found[0].append(row)
            found[1].append(text)

    def numbers(self) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
        """Each metric's (rows, values) parts; a run's value of a name is in one part only."""
        found: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
        for name, (rows, values) in self._numbers.items():
            found.setdefault(name, []).append(
                (np.array(rows, dtype=ROW), np.array(values, dtype=np.float64))
            )
        for names, rows, chunks in self._grouped.values():
            if not names:
                continue
            at = np.array(rows, dtype=ROW)
            table = np.frombuffer(b"".join(chunks), dtype="<f8").reshape(len(rows), -1)
            for name, column in names.items():
                found.setdefault(name, []).append((at, table[:, column]))
        return found

    def texts(self) -> dict[str, tuple[np.ndarray, list[str]]]:
        """Each tag's rows and texts."""
        return {name: (np.array(rows, dtype=ROW), texts)
                for name, (rows, texts) in self._texts.items()}  # fmt: skip


def _names(before: bytes) -> dict[str, int] | None:
    """Each name's column among a head's numbers (its metrics, then its curves' latest values;
    a name given twice keeps its last, as ``summary`` does), from the head's part before its
    tags; None for a head this module does not read (``summary`` reads it)."""
    try:
        head = orjson.loads(before)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(head, dict) or head.get("v") != FORMAT or not set(head) <= {"v", "m", "l"}:
        return None
    names = [*head.get("m", ()), *head.get("l", ())]
    return {name: column for column, name in enumerate(names)}
