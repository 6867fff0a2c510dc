"""A run's record: what a run logs beyond the rows MLflow's UI reads, in one tag.

As MLflow's rows a value is dear: a metric is a row of ``metrics`` and one of ``latest_metrics``
under five indexes between them (~490 bytes of SQLite), a tag ~150 bytes before its value, and a
curve one metric row a point. A run of ~60 metrics, ~40 tags and ~70 curve points took ~72 KB of
store that way, and its figure and margin histogram, three small files in folders of their own,
~22 KB of disk. So a run writes as rows only what the runs table of the UI and its filters read:
the tags it is created with (``lincls.tracking.tags.run_tags``), ``STORED_TAGS`` (the view's
columns and the description) and ``STORED_METRICS`` (the view's sort and chart). The rest — its
other metrics and tags, its curves and its margin histogram — is its record: compact JSON
heads of its names, texts and steps, each followed by its numbers as float64 (``Record.encode``:
what a table of runs reads first, then the curves' points and the files), deflated
against a dictionary of what records usually hold (``record_dictionary``: the names, the skipped
bounds' reasons, the curves' steps; it halves a record), in base64, as the tag ``RECORD_TAG``
(continued in ``lincls.record.1``, … past the 8,000 characters MLflow keeps of a tag). Its
figure is drawn from the record when the UI asks for it (``lincls.experiments.ui_app``), so it
takes no disk.

The readers give a record's values as the rows they stand for (``Record.latest``,
``Record.history``): a metric as ``metrics.<name>``, a curve's latest point as MLflow's latest
metric of its name, a tag as ``tags.<name>``, a curve as its points (and a single value as one
point at step 0, as MLflow's history of it), with the values MLflow would have stored (±inf as
the largest float, as MLflow stores it).
"""

from __future__ import annotations

import base64
import json
import math
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson

from lincls.figures import FIGURE_FILE, draw_run_figure
from lincls.tracking.plain import MAX_TAG_VALUE, plain_name
from lincls.tracking.record_dictionary import DICTIONARY
from lincls.tracking.tags import NOTE_TAG
from lincls.tracking.view import SHOWN

RECORD_TAG = "lincls.record"
# A record longer than a tag holds goes on in numbered tags; more than this many is refused.
MAX_PARTS = 16
RECORD_KEYS = (RECORD_TAG, *(f"{RECORD_TAG}.{k}" for k in range(1, MAX_PARTS)))
# Format 2 writes two payloads (what a table of runs reads, then the curves' points and the
# files) joined by SEPARATOR (no base64 character), so that a table of a million runs inflates
# and parses only the first (~2 KB of a default run's ~5). Format 1 (one payload, every name,
# step, tag and file in its head) is still read. Both deflate against ``record_dictionary``.
FORMAT = 2
SEPARATOR = "."
# The metrics a run writes as MLflow metrics: the view's sort, and the two its chart draws.
STORED_METRICS = ("bound_ratio.tightest", "mistakes", "bound.tightest")
# The tags it writes as tags: the view's columns (and its rounded numbers), the description.
STORED_TAGS = frozenset({NOTE_TAG, "bound.tightest", "bound_violated", *SHOWN})
# Text artifacts a record holds instead of files (small, and every binary linear run has one).
# (``lincls.evaluation.hyperplane.HISTOGRAM_ARTIFACT``, named here: readers import no learner)
RECORD_FILES = ("hyperplane/margin_histogram.json",)
LARGEST = 1.7976931348623157e308  # MLflow stores ±inf as the largest float of that sign
Curve = list[tuple[int, float]]


def _stored(value: float) -> float:
    """A curve point's value as MLflow stores it (±inf as the largest float; NaN kept)."""
    value = float(value)
    if math.isinf(value):
        return LARGEST if value > 0 else -LARGEST
    return value


@dataclass
class Record:
    """A run's record: metrics (single values), tags, curves ((step, value) points) and text
    files, by name."""

    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    curves: dict[str, Curve] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    def latest(self) -> dict[str, float]:
        """Each metric and curve's latest value, as MLflow's ``latest_metrics`` would hold it:
        the point of the greatest step, then value (a NaN compared as 0, as MLflow stores it),
        a single value being a point at step 0."""
        return latest_values(
            self.metrics,
            {name: ([s for s, _ in points], [v for _, v in points])
             for name, points in self.curves.items()},
        )  # fmt: skip

    def history(self, name: str) -> Curve:
        """The points MLflow's history of ``name`` would hold, by step then value: the curve's,
        and a single value as a point at step 0 (a point logged twice held once)."""
        points = list(self.curves.get(name, ()))
        if name in self.metrics and (0, self.metrics[name]) not in points:
            points.append((0, self.metrics[name]))
        return sorted(points, key=lambda p: (p[0], 0.0 if math.isnan(p[1]) else p[1]))

    def encode(self) -> dict[str, str]:
        """The record as its tags (``RECORD_KEYS``, as many as it needs): its two payloads
        (``table_payload``, ``points_payload``), each deflated, in base64, joined by
        ``SEPARATOR``."""
        packed = SEPARATOR.join(
            base64.b64encode(_deflated(payload)).decode("ascii")
            for payload in (self.table_payload(), self.points_payload())
        )
        parts = [packed[k : k + MAX_TAG_VALUE] for k in range(0, len(packed), MAX_TAG_VALUE)]
        if len(parts) > MAX_PARTS:
            raise ValueError(f"a run's record of {len(packed):,} characters: more than "
                             f"{MAX_PARTS} tags of {MAX_TAG_VALUE:,}")  # fmt: skip
        return dict(zip(RECORD_KEYS, parts, strict=False))

    def table_payload(self) -> bytes:
        """What a table of runs reads of the record: a JSON head (the format, the metrics'
        names, the names of the curves' latest values, the tags), a newline, then the metrics'
        values and the curves' latest values (``latest``) as float64 (little endian). A number
        read back from bytes costs a fraction of one parsed from text, and is exactly the float
        it was."""
        stored = {name: ([int(s) for s, _ in points], [_stored(v) for _, v in points])
                  for name, points in self.curves.items()}  # fmt: skip
        latest = latest_values(self.metrics, stored)  # of the values read back
        later = [name for name in latest if name in self.curves]
        head: dict = {"v": FORMAT}
        if self.metrics:
            head["m"] = list(self.metrics)
        if later:
            head["l"] = later
        if self.tags:
            head["t"] = self.tags
        return _payload(head, [*self.metrics.values(), *(latest[name] for name in later)])

    def points_payload(self) -> bytes:
        """The rest: a JSON head (each curve's steps, the files), a newline, then each curve's
        values as float64 (±inf as MLflow stores it, ``_stored``)."""
        head: dict = {}
        if self.curves:
            head["c"] = {name: [int(s) for s, _ in points] for name, points in self.curves.items()}
        if self.files:
            head["f"] = self.files
        return _payload(head, [_stored(v) for points in self.curves.values() for _, v in points])


def _payload(head: dict, numbers: list[float]) -> bytes:
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False)  # no raw newline
    return text.encode() + b"\n" + np.asarray(numbers, dtype="<f8").tobytes()


def _deflated(payload: bytes) -> bytes:
    deflate = zlib.compressobj(9, zdict=DICTIONARY)
    return deflate.compress(payload) + deflate.flush()


def latest_values(
    metrics: Mapping[str, float], curves: Mapping[str, tuple[list[int], list[float]]]
) -> dict[str, float]:
    """``Record.latest`` of ``metrics`` and ``curves`` given as (steps, values): a curve's
    point of the greatest step (the one point there, found without a point made, as nearly
    always), else of the greatest step then value."""
    found = dict(metrics)
    for name, (steps, values) in curves.items():
        if not steps:
            continue
        top = max(steps)
        if name not in metrics and steps.count(top) == 1:
            found[name] = values[steps.index(top)]
            continue
        every = list(zip(steps, values, strict=True))
        if name in metrics:
            every.append((0, metrics[name]))
        found[name] = max(every, key=lambda p: (p[0], 0.0 if math.isnan(p[1]) else p[1]))[1]
    return found


# zlib's stream header with a preset dictionary: 2 bytes (FDICT set in the second), then the
# dictionary's Adler-32
DICT_HEADER = 6
FDICT = 0x20
_PRIMED: dict[bytes, Any] = {}  # an inflater past a stream's header, by header


def inflated(deflated: bytes) -> bytes:
    """A payload deflated against ``DICTIONARY``, inflated: from a copy of an inflater that has
    read the stream's header and set the dictionary already (setting the 20 KB dictionary was
    most of a small payload's inflating: 97 -> 47 us a run with the head's reading below)."""
    header = deflated[:DICT_HEADER]
    primed = _PRIMED.get(header)
    if primed is None and len(deflated) > DICT_HEADER and deflated[1] & FDICT:
        primed = zlib.decompressobj(zdict=DICTIONARY)
        if primed.decompress(header) or primed.unconsumed_tail:
            primed = None  # not a header alone: inflate as a whole
        elif len(_PRIMED) < 64:  # one header a dictionary: a few at most
            _PRIMED[header] = primed
    if primed is None:
        inflate = zlib.decompressobj(zdict=DICTIONARY)
        return inflate.decompress(deflated) + inflate.flush()
    inflate = primed.copy()
    return inflate.decompress(deflated[DICT_HEADER:]) + inflate.flush()


def _opened(packed: str) -> tuple[dict, list[float]]:
    """A payload's head and its numbers, from its deflated base64 text."""
    payload = inflated(base64.b64decode(packed))
    text, _, numbers = payload.partition(b"\n")
    return orjson.loads(text), np.frombuffer(numbers, dtype="<f8").tolist()


def _checked(values: list[float], count: int) -> list[float]:
    if count != len(values):
        raise ValueError(f"a run's record of {len(values)} numbers where its head names {count}")
    return values


def _table(parts: Iterable[str]) -> tuple[dict, list[float], str | None]:
    """A record's first payload (format 2's table, format 1's whole record): its head and
    numbers; and its second payload still packed (None: format 1)."""
    first, separator, points = "".join(parts).partition(SEPARATOR)
    head, values = _opened(first)
    version = head.get("v")
    if version not in (1, FORMAT) or (version == 1) != (not separator):
        raise ValueError(f"a run's record of format {version!r}, not 1 or {FORMAT}")
    if version == 1:
        return head, _checked(values, _v1_count(head)), None
    return head, _checked(values, len(head.get("m", ())) + len(head.get("l", ()))), points


def _v1_count(head: dict) -> int:
    return len(head.get("m", ())) + sum(map(len, head.get("c", {}).values()))


def _curves(head: dict, values: list[float]) -> dict[str, tuple[list[int], list[float]]]:
    """Each curve of a head's ``c`` as (steps, values), its points from ``values`` in order."""
    curves, at = {}, 0
    for name, steps in head.get("c", {}).items():
        curves[name] = (steps, values[at : at + len(steps)])
        at += len(steps)
    return curves


def decode(parts: Iterable[str]) -> Record:
    """The record whose tags' values are ``parts``, in the order of ``RECORD_KEYS``."""
    head, values, points = _table(parts)
    names = head.get("m", ())
    metrics = dict(zip(names, values, strict=False))
    if points is None:  # format 1: the curves' points follow the metrics'
        rest, numbers = head, values[len(names) :]
    else:
        rest, numbers = _opened(points)
        _checked(numbers, sum(map(len, rest.get("c", {}).values())))
    curves = {name: list(zip(steps, found, strict=True))
              for name, (steps, found) in _curves(rest, numbers).items()}  # fmt: skip
    return Record(metrics, head.get("t", {}), curves, rest.get("f", {}))


def summary(parts: Iterable[str]) -> tuple[dict[str, float], dict[str, str]]:
    """A record's latest values (``Record.latest``) and tags, from its tags' values in order:
    what a table of runs reads of it (of format 2, its first payload alone)."""
    head, values, points = _table(parts)
    names = head.get("m", ())
    latest = dict(zip(names, values, strict=False))
    if points is None:
        return latest_values(latest, _curves(head, values[len(names) :])), head.get("t", {})
    latest.update(zip(head.get("l", ()), values[len(names) :], strict=True))
    return latest, head.get("t", {})


def parts_of(tags: Mapping[str, str]) -> list[str]:
    """A run's record tags' values in order (none: the run has no record)."""
    return [tags[RECORD_TAG], *continuation(tags)] if RECORD_TAG in tags else []


def continuation(tags: Mapping[str, str]) -> list[str]:
    """A record's parts after its first, in order (``RECORD_KEYS``), from its tags."""
    found = []
    for key in RECORD_KEYS[1:]:
        if key not in tags:
            break
        found.append(tags[key])
    return found


def read(tags: Mapping[str, str]) -> Record | None:
    """The record among a run's ``tags``, None for a run without one (written before runs kept
    records, or failed before it measured anything)."""
    parts = parts_of(tags)
    return decode(parts) if parts else None


def recorded_artifacts(tags: Mapping[str, str]) -> dict[str, str]:
    """The text artifacts a run's record stands for, by path (none: the run has no record): its
    figure, drawn from its curves and its tightest bound's name as the run drew it before
    (``lincls.figures``), and the record's files."""
    record = read(tags)
    if record is None:
        return {}
    figure = draw_run_figure(record.curves, tags.get("bound.tightest", ""))
    return {FIGURE_FILE: figure, **record.files}


@dataclass
class Written:
    """What a run writes: MLflow metrics and tags (its record among them) and text files."""

    metrics: dict[str, float]
    tags: dict[str, str]
    artifacts: dict[str, str]


def written(
    metrics: Mapping[str, float],
    tags: Mapping[str, str],
    curves: Mapping[str, Iterable[tuple[int, float]]],
    artifacts: Mapping[str, str],
) -> Written:
    """How a measured run is stored: ``STORED_METRICS`` and ``STORED_TAGS`` as MLflow's, the
    rest in its record, and the text artifacts the record does not hold as files.

    A metric that is not finite is not logged (MLflow's metrics hold none); a name or value MLflow
    would change or refuse stays a row, so MLflow's checks see it as before; a stored metric
    that is also a curve goes to the record whole, so its latest value stays its curve's."""
    record = Record(curves={name: [(int(s), float(v)) for s, v in points]
                            for name, points in curves.items()})  # fmt: skip
    kept_metrics: dict[str, float] = {}
    for name, value in metrics.items():
        value = float(value)
        if not math.isfinite(value):
            continue
        if (name in STORED_METRICS and name not in record.curves) or not plain_name(name):
            kept_metrics[name] = value
        else:
            record.metrics[name] = value
    kept_tags: dict[str, str] = {}
    for name, value in tags.items():
        text = str(value)
        if name in STORED_TAGS or not plain_name(name) or len(text) > MAX_TAG_VALUE:
            kept_tags[name] = text
        else:
            record.tags[name] = text
    files = {}
    for name, text in artifacts.items():
        if name in RECORD_FILES:
            record.files[name] = text
        else:
            files[name] = text
    return Written(kept_metrics, {**kept_tags, **record.encode()}, files)
