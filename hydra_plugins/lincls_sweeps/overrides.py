"""A sweep's override lines as Hydra parses them, parsed once per distinct line.

Hydra's override grammar costs ~0.5 ms a line and a sweep's jobs repeat their lines, so each
line's parse is kept per config loader, except the lines that set a key to an integer: a seed
sweep has a million distinct ``seed=k``; they are made from the parse of ``key=0``, a copy with
the value set (~5 µs), and not kept. Past ``CACHED_LINES`` no other line is kept either, so a
sweep's processes do not grow with its size.
"""

from __future__ import annotations

import copy
import re
import weakref
from collections.abc import Sequence
from typing import Any

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, ValueType

# Per config loader: each override line's parse and whether it is a plain value.
_PARSED: weakref.WeakKeyDictionary[Any, dict[str, tuple[Override, bool]]] = (
    weakref.WeakKeyDictionary()
)
CACHED_LINES = 100_000
# ``key=<integer>`` as Hydra's grammar reads an int (no sign but -, no leading zero, no _)
_INTEGER_LINE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)=(-?[1-9][0-9]*|0)"
)


def _parse_line(loader, line: str) -> tuple[Override, bool]:
    """(Hydra's parse of one override line, whether it is a plain value override)."""
    (override,) = OverridesParser.create(config_loader=loader).parse_overrides([line])
    plain = not (override.is_delete() or override.is_add() or override.is_hydra_override())
    return override, plain and not loader.repository.group_exists(override.key_or_group)


def _integer_line(loader, parsed: dict, line: str) -> tuple[Override, bool] | None:
    """``key=<integer>`` parsed as Hydra parses it, from the parse of ``key=0`` (kept)."""
    match = _INTEGER_LINE.fullmatch(line)
    if match is None:
        return None
    key = match.group(1)
    template = f"{key}=0"
    if template not in parsed:
        parsed[template] = _parse_line(loader, template)
    override, value = parsed[template]
    if override.value_type is not ValueType.ELEMENT or override.package is not None:
        return None
    made = copy.copy(override)
    made._value = int(match.group(2))
    made.input_line = line
    return made, value


def integer_value(line: str) -> int | None:
    """The integer a ``key=<integer>`` line sets (as Hydra's grammar reads it), else None."""
    match = _INTEGER_LINE.fullmatch(line)
    return None if match is None else int(match.group(2))


def split_group_overrides(
    loader, overrides: Sequence[str]
) -> tuple[list[Override], list[Override]]:
    """(overrides that change the defaults list, plain value overrides) of one job."""
    parsed = _PARSED.setdefault(loader, {})
    groups, values = [], []
    for line in overrides:
        found = parsed.get(line) or _integer_line(loader, parsed, line)
        if found is None:
            found = _parse_line(loader, line)
            if len(parsed) < CACHED_LINES:
                parsed[line] = found
        override, value = found
        (values if value else groups).append(override)
    return groups, values
