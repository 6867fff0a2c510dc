"""The report's runs frame (every value a logged string or float, ``params.`` / ``metrics.`` /
``tags.`` prefixes) as a notebook reads it: params typed as the config schemas declare them,
plain column names.

The naming rule, in order:

1. ``learner.name`` and ``dataset.name`` are ``learner`` and ``dataset``;
2. any other param is the last part of its key (``learner.lr`` → ``lr``, ``dataset.n`` → ``n``)
   when no other column of the frame would have that name; else its whole key
   (``dataset.margin`` stays ``dataset.margin`` beside the metric ``margin``, ``dataset.seed``
   beside the run's ``seed``);
3. metrics keep their names (``mistakes``, ``bound.novikoff``, ``bound_ratio.tightest``);
4. a few tags, renamed: ``study``, ``parent_run_id``, ``learner_label``, ``tightest`` (the
   tightest a priori bound's name; its value is the metric ``bound.tightest``),
   ``tightest_a_posteriori``, ``vacuous`` (the vacuous bounds' names), ``bound_violated``,
   ``config_hash``.

A param is typed by its schema's field (``lincls.config``): int, float, bool (a column with a
missing value: pandas' nullable ``Int64`` / ``boolean``) or string; a key no schema declares (or
that the runs' schemas declare differently) is typed by its values. The param ``study`` is left
out: the tag ``study`` holds it.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lincls.config import (
    DATASET_SCHEMAS,
    LEARNER_SCHEMAS,
    CertificatesConfig,
    RunSchema,
    TrackingConfig,
)

TAG_NAMES = {
    "tags.lincls.study": "study",
    "tags.mlflow.parentRunId": "parent_run_id",
    "tags.learner_label": "learner_label",
    "tags.bound.tightest": "tightest",
    "tags.bound.tightest_a_posteriori": "tightest_a_posteriori",
    "tags.bounds.vacuous": "vacuous",
    "tags.bound_violated": "bound_violated",
    "tags.lincls.config_hash": "config_hash",
}
INFO = ("run_id", "run_name", "status", "start_time")
GROUP_NAMES = {"params.learner.name": "learner", "params.dataset.name": "dataset"}
SECTIONS = {"tracking": TrackingConfig, "certificates": CertificatesConfig}
_INT = re.compile(r"^[+-]?\d+$")


def _hints(schema: Any) -> dict[str, Any]:
    if not dataclasses.is_dataclass(schema):
        return {}
    try:
        return typing.get_type_hints(schema)
    except Exception:  # an annotation that does not evaluate here: typed by its values
        return {}


def _kind(annotation: Any) -> type | None:
    """int, float, bool or str for a field annotated so (``X | None`` too); else None."""
    if annotation in (int, float, bool, str):
        return annotation
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(kinds) == 1 and kinds[0] in (int, float, bool, str):
            return kinds[0]
    return None


def declared_kind(key: str, learners: Iterable[str], datasets: Iterable[str]) -> type | None:
    """The type the config declares for the param ``key`` (dotted) in runs of these learners
    and datasets; None when none declares it or they differ."""
    group, _, rest = key.partition(".")
    if group in ("learner", "dataset") and rest and "." not in rest:
        registry = LEARNER_SCHEMAS if group == "learner" else DATASET_SCHEMAS
        names = learners if group == "learner" else datasets
        kinds = {_kind(_hints(registry.get(name)).get(rest)) for name in names}
    elif group in SECTIONS and rest and "." not in rest:
        kinds = {_kind(_hints(SECTIONS[group]).get(rest))}
    elif not rest:
        kinds = {_kind(_hints(RunSchema).get(group))}
    else:
        return None
    return kinds.pop() if len(kinds) == 1 else None


def _inferred(values: pd.Series) -> type:
    """The type every logged text of a column reads as: int, float, bool, else str."""
    texts = values.dropna().astype(str)
    if texts.empty:
        return str
    if texts.map(lambda t: bool(_INT.match(t))).all():
        return int
    if texts.isin(["True", "False", "true", "false"]).all():
        return bool
    try:
        texts.astype(float)
    except ValueError:
        return str
    return float


def typed(values: pd.Series, kind: type | None) -> pd.Series:
    """A column of logged texts as ``kind`` (None: as its values read)."""
    kind = kind or _inferred(values)
    present = values.notna()
    if kind is float or (kind is int and present.all()):
        numbers = _cast(values, pa.float64() if kind is float else pa.int64())
        if numbers is not None:
            return numbers
    try:
        if kind is bool:
            if values.isin(BOOL_TEXTS).all():  # (a map of a million texts takes ~3 s)
                return pd.Series(values.isin(("True", "true")).to_numpy(), index=values.index,
                                 name=values.name)  # fmt: skip
            mapped = values.map({"True": True, "False": False, "true": True, "false": False})
            return mapped.astype(bool) if present.all() else mapped.astype("boolean")
        if kind is int:
            numbers = pd.to_numeric(values, errors="raise")
            return numbers.astype(np.int64) if present.all() else numbers.astype("Int64")
        if kind is float:
            return pd.to_numeric(values, errors="raise").astype(np.float64)
    except (TypeError, ValueError):  # a text the declared type cannot read: kept as logged
        pass
    return values.astype(object).where(present, None)


BOOL_TEXTS = ("True", "False", "true", "false")


def _cast(values: pd.Series, to: pa.DataType) -> pd.Series | None:
    """``values`` read as numbers by Arrow's parser (~20x pandas' ``to_numeric``: seconds a
    column at a million runs); None where it reads a text otherwise than a plain number (then
    pandas reads it, as it always has)."""
    try:
        texts = pa.array(values.array, from_pandas=True)
        if pa.types.is_integer(to) and not pc.all(pc.match_substring_regex(texts, _INT.pattern)):
            return None  # Arrow reads "0x10" as 16; pandas refuses it
        numbers = pc.cast(texts, to)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError):
        return None
    read = numbers.to_numpy(zero_copy_only=False)
    if read.dtype.kind == "f" and np.isnan(read).sum() > numbers.null_count:
        return None  # a text "nan": pandas refuses it (the column stays texts)
    return pd.Series(read, index=values.index, name=values.name)


def plain_names(columns: Iterable[str]) -> dict[str, str]:
    """Each prefixed column's plain name (module docstring), unambiguous among them all."""
    columns = list(columns)
    fixed = {c: c for c in columns if c in INFO}
    fixed |= {c: TAG_NAMES[c] for c in columns if c in TAG_NAMES}
    fixed |= {c: c[len("metrics.") :] for c in columns if c.startswith("metrics.")}
    fixed |= {c: GROUP_NAMES[c] for c in columns if c in GROUP_NAMES}
    params = [c for c in columns if c.startswith("params.") and c not in GROUP_NAMES]
    lasts = [c.rsplit(".", 1)[-1] for c in params]
    taken = set(fixed.values())
    names = dict(fixed)
    for column, last in zip(params, lasts, strict=True):
        whole = column[len("params.") :]
        short = last if lasts.count(last) == 1 and last not in taken else whole
        names[column] = short if short not in taken else column  # a whole key a metric has too
    return names


def typed_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The report's runs frame as ``Study.runs`` gives it (module docstring): info, then the
    learner and dataset, the other params by name, the metrics, the chosen tags."""
    names = plain_names(frame.columns)
    learners = set(frame.get("params.learner.name", pd.Series(dtype=object)).dropna())
    datasets = set(frame.get("params.dataset.name", pd.Series(dtype=object)).dropna())
    data: dict[str, Any] = {}
    for column in INFO:
        if column in frame.columns:
            data[column] = frame[column]
    if "start_time" in data:
        data["start_time"] = pd.to_datetime(frame["start_time"], unit="ms", utc=True)
    params = sorted(  # the param ``study`` is the tag's value when set: the tag is kept
        (c for c in frame.columns if c.startswith("params.") and c != "params.study"),
        key=lambda c: (c not in GROUP_NAMES, names[c]),
    )
    for column in params:
        kind = declared_kind(column[len("params.") :], learners, datasets)
        data[names[column]] = typed(frame[column], kind)
    for column in sorted(c for c in frame.columns if c.startswith("metrics.")):
        data[names[column]] = frame[column].astype(np.float64)
    for column in TAG_NAMES:
        if column in frame.columns:
            values = frame[column]
            data[names[column]] = typed(values, bool) if column.endswith("violated") else values
    # copy=False: the columns kept as they are (stacking the metrics copied ~1 GB at 1M runs)
    return pd.DataFrame(data, index=frame.index, copy=False).reset_index(drop=True)
