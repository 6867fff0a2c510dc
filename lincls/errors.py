"""One error type for bad input, so every entry point can print it as a single line."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Iterable
from typing import Any


class LinclsInputError(ValueError):
    """Bad input: the message names the field and what is allowed, on one line."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        # pickled with its two arguments (a pool's worker sends it back to the sweep)
        return type(self), (self.field, self.problem)


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception's message as one line (the first line, cut to ``limit`` characters)."""
    text = str(getattr(exc, "message", None) or exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _bound(x: float) -> str:
    """A range end as written: whole numbers in full (4294967295, not 4.29497e+09)."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def check_number(
    field: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    why: str | None = None,
) -> None:
    """Raise ``LinclsInputError`` unless ``value`` is a finite number in the stated range;
    ``why`` (what sets the range) follows the value in the message."""
    kind = "an integer" if integer else "a number"
    lo = "-inf" if low is None else _bound(low)
    hi = "inf" if high is None else _bound(high)
    left = "(" if low_open or low is None else "["
    right = ")" if high_open or high is None else "]"
    interval = f"{left}{lo}, {hi}{right}"
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    ok = ok and math.isfinite(float(value))
    if ok and integer:
        ok = float(value).is_integer()
    if ok and low is not None:
        ok = float(value) > low if low_open else float(value) >= low
    if ok and high is not None:
        ok = float(value) < high if high_open else float(value) <= high
    if not ok:
        reason = f": {why}" if why else ""
        raise LinclsInputError(field, f"must be {kind} in {interval}, got {value!r}{reason}")


# The largest radius a generator takes: ‖x‖² (every bound's R², every kernel's x·x) must stay a
# finite float, which it does below ~1.34e154.
MAX_RADIUS = 1e150


def check_radius(radius: Any, field: str = "radius") -> None:
    """``check_number`` for a data radius: a number in (0, MAX_RADIUS]."""
    check_number(field, radius, low=0, low_open=True, high=MAX_RADIUS,
                 why="‖x‖² must stay a finite float")  # fmt: skip


def check_choice(field: str, value: Any, allowed: Iterable[Any]) -> None:
    """Raise ``LinclsInputError`` unless ``value`` is one of ``allowed``."""
    allowed = list(allowed)
    if value not in allowed:
        names = ", ".join(repr(a) for a in allowed)
        raise LinclsInputError(field, f"must be one of {names}, got {value!r}")


def check_name(field: str, value: Any) -> None:
    """Raise ``LinclsInputError`` unless ``value`` is a string with something besides spaces."""
    if not isinstance(value, str) or not value.strip():
        raise LinclsInputError(field, f"must be a non-empty name, got {value!r}")


def available_memory() -> int:
    """Bytes of memory this machine can give now (MemAvailable; all of it where that is unknown)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def byte_size(count: float) -> str:
    """A number of bytes as people read it: 146.0 TiB, 512.0 B."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024 or unit == "PiB":
            return f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} PiB"  # pragma: no cover


def check_fits(field: str, value: Any, *, each: int, extra: int = 0, what: str) -> None:
    """Raise ``LinclsInputError`` unless ``value`` is an integer ≥ 1 whose allocation, ``value``
    + ``extra`` items of ``each`` bytes (``what``: one item, as the message names it), fits in the
    memory available now; the message names the largest value that fits."""
    check_number(field, value, low=1, integer=True)
    have = available_memory()
    high = max(have // max(each, 1) - extra, 0)
    if int(value) > high:
        count = int(value) + extra
        raise LinclsInputError(
            field, f"must be an integer in [1, {high}], got {value!r}: {what} takes "
            f"{byte_size(each)}, {count} of them {byte_size(count * each)}, and this machine has "
            f"{byte_size(have)} of memory available")  # fmt: skip
