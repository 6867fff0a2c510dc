"""Whether a batch is plainly within MLflow's limits, judged without importing MLflow.

The SQL writers store what MLflow's client would (``sqlite_runs``), so they check a batch as
MLflow does. MLflow's validators cost its import (~1 s a process, most of a single run's start).
A batch lincls writes is almost always plain: names of letters, digits and ``_ . - / space``
that are their own normal path, values within the length limits, metric values and times that
are numbers. Those are accepted here; anything else goes to MLflow's own validators, which
truncate, refuse and word the refusal as MLflow does (``tests/test_sqlite_runs.py`` compares).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

# MLflow's names: word characters, ``. - / space`` and, except on Windows, ``:`` (left to it).
_NAME = re.compile(r"[\w.\- /]+")
MAX_KEY = 250  # MLflow's MAX_ENTITY_KEY_LENGTH
MAX_PARAM_VALUE = 6000  # MAX_PARAM_VAL_LENGTH: longer values MLflow truncates or refuses
MAX_TAG_VALUE = 8000  # MAX_TAG_VAL_LENGTH
# MLflow's dataset limits (MAX_DATASET_NAME_SIZE, _DIGEST_SIZE, _SOURCE_SIZE, _PROFILE_SIZE)
MAX_DATASET = {"name": 500, "digest": 36, "source": 65535, "profile": 16777215}


def plain_name(name: object) -> bool:
    """A param, metric or tag name MLflow accepts as it is, by a conservative reading."""
    if not isinstance(name, str) or len(name) > MAX_KEY or _NAME.fullmatch(name) is None:
        return False
    normal = posixpath.normpath(name)  # MLflow refuses a name that is not its own normal path
    return normal == name and normal != "." and not normal.startswith(("..", "/"))


def plain_batch(
    params: Mapping[str, str],
    metrics: Iterable[tuple[str, float, int, int]],
    tags: Mapping[str, str],
) -> bool:
    """Whether MLflow's checks of a batch would pass every entry unchanged."""
    for key, value in params.items():
        if not plain_name(key) or len(str(value)) > MAX_PARAM_VALUE:
            return False
    for key, value in tags.items():
        if not plain_name(key) or len(str(value)) > MAX_TAG_VALUE:
            return False
    names: set[str] = set()
    for key, value, timestamp, step in metrics:
        if type(value) is not float and type(value) is not int:
            return False
        if type(timestamp) is not int or timestamp < 0 or type(step) is not int:
            return False
        if key not in names:
            if not plain_name(key):
                return False
            names.add(key)
    return True


def plain_dataset(dataset: Mapping[str, str]) -> bool:
    """Whether a run's dataset input (``name``, ``digest``, ``source``, ``profile``) is within
    MLflow's limits as it is."""
    for field, limit in MAX_DATASET.items():
        value = dataset.get(field, "{}" if field == "source" else None)
        if value is None and field == "profile":
            continue
        if not isinstance(value, str) or len(value) > limit:
            return False
    return True


def plain_file_location(location: str) -> bool:
    """An artifact location of the form ``file:///absolute/path`` (no query or fragment): the
    run's artifact URI is the location, its id and ``artifacts`` joined with ``/``."""
    return location.startswith("file:///") and not any(c in location for c in "?#\\")
