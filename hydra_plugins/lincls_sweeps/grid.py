"""A sweep's jobs as a lazy sequence: the union of cartesian grids, without duplicates.

Hydra's basic sweeper lists every job (``itertools.product`` of each key's override lines), and a
union of grids was made unique by looking each job up in the list made so far: quadratic, and a
list of a million jobs of lists of strings is hundreds of megabytes. Here a grid keeps only its
keys' lines; job ``i`` is computed from ``i`` (mixed radix, the last key fastest, as
``itertools.product`` orders them), so a million jobs cost their lines, not their products.

Duplicates, as before, are dropped keeping the first: within one grid a line given twice
(``seed=1,1``) is kept once (the product of each key's distinct lines is the product with its
later repeats dropped); a job of a later grid is dropped when an earlier grid holds it (same keys
in the same order, each line among that key's), a test of ``k`` set lookups per grid, so no set
of seen jobs is kept. Only a grid with such duplicates stores which of its jobs it keeps.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload


class Grid:
    """One cartesian grid: each key's override lines, in the order Hydra's sweeper gives them."""

    def __init__(self, lists: Sequence[Sequence[str]]) -> None:
        self.lists = [list(dict.fromkeys(lines)) for lines in lists]  # distinct, first kept
        self.sets = [frozenset(lines) for lines in self.lists]
        self.sizes = [len(lines) for lines in self.lists]
        self.size = 1
        for n in self.sizes:
            self.size *= n

    def __len__(self) -> int:
        return self.size

    def job(self, index: int) -> list[str]:
        """Job ``index`` (0 ≤ index < len): the line of each key."""
        lines = [""] * len(self.lists)
        for position in range(len(self.lists) - 1, -1, -1):
            index, digit = divmod(index, self.sizes[position])
            lines[position] = self.lists[position][digit]
        return lines

    def __iter__(self) -> Iterator[list[str]]:
        return (list(job) for job in itertools.product(*self.lists))

    def holds(self, job: Sequence[str]) -> bool:
        """Whether ``job`` is one of this grid's jobs."""
        return len(job) == len(self.sets) and all(
            line in lines for line, lines in zip(job, self.sets, strict=True)
        )


class Jobs(Sequence):
    """The union of ``grids`` in order, each job once (module docstring): a sequence of override
    lists, computed as they are asked for."""

    def __init__(self, grids: Sequence[Grid]) -> None:
        self.grids = [g for g in grids if len(g)]
        # per grid: None (all its jobs kept) or the indices of the jobs kept
        self.kept: list[array | None] = []
        for k, grid in enumerate(self.grids):
            earlier = self.grids[:k]
            if not any(_may_overlap(grid, other) for other in earlier):
                self.kept.append(None)
                continue
            indices = array("q")
            for index, job in enumerate(grid):
                if not any(other.holds(job) for other in earlier):
                    indices.append(index)
            self.kept.append(indices)
        # a grid all of whose jobs an earlier one holds adds nothing (nor keys to ``varying``)
        pairs = [(g, k) for g, k in zip(self.grids, self.kept, strict=True) if k is None or len(k)]
        self.grids, self.kept = [g for g, _ in pairs], [k for _, k in pairs]
        self.sizes = [
            len(g) if kept is None else len(kept)
            for g, kept in zip(self.grids, self.kept, strict=True)
        ]
        self.starts = list(itertools.accumulate([0, *self.sizes]))

    def __len__(self) -> int:
        return self.starts[-1]

    @overload
    def __getitem__(self, index: int) -> list[str]: ...
    @overload
    def __getitem__(self, index: slice) -> list[list[str]]: ...
    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        g = next(k for k in range(len(self.grids)) if index < self.starts[k + 1])
        local = index - self.starts[g]
        kept = self.kept[g]
        return self.grids[g].job(local if kept is None else kept[local])

    def __iter__(self) -> Iterator[list[str]]:
        for grid, kept in zip(self.grids, self.kept, strict=True):
            if kept is None:
                yield from grid
            else:
                yield from (grid.job(i) for i in kept)

    def firsts(self, key: str | Callable[[str], bool]) -> Iterator[list[str]]:
        """A job for each distinct choice of every line but ``key``'s, with ``key`` at its first
        line (the first job in order that makes that choice): what a check that does not depend
        on ``key``'s value needs to see. A seed sweep's million jobs are one here. ``key`` may
        be a test of a line's key (``+``, ``~`` and all): every key it holds is fixed."""
        fixed = _fixing(key)
        for grid in self.grids:
            lists = [lines[:1] if fixed(_key(lines[0])) else lines for lines in grid.lists]
            yield from (list(job) for job in itertools.product(*lists))

    def count_firsts(self, key: str | Callable[[str], bool]) -> int:
        """How many jobs ``firsts(key)`` gives, without making them."""
        fixed = _fixing(key)
        return sum(
            math.prod(1 if fixed(_key(lines[0])) else len(lines) for lines in grid.lists)
            for grid in self.grids
        )

    def lines(self) -> set[str]:
        """Every override line some job has."""
        return {line for grid in self.grids for lines in grid.lists for line in lines}

    def varying(self) -> tuple[str, ...]:
        """The keys whose value is not the same in every job, or that some job lacks (as
        ``lincls.sweeps.varying_keys`` finds them over the listed jobs)."""
        values: dict[str, set[str]] = {}
        present: Counter = Counter()
        for grid in self.grids:
            for lines in grid.lists:
                key = lines[0].partition("=")[0].lstrip("+~")
                present[key] += 1
                values.setdefault(key, set()).update(line.partition("=")[2] for line in lines)
        everywhere = len(self.grids)
        return tuple(sorted(k for k, v in values.items() if len(v) > 1 or present[k] < everywhere))


def _fixing(key: str | Callable[[str], bool]) -> Callable[[str], bool]:
    """The test of a line's key that ``Jobs.firsts`` takes, from a key or a test."""
    return key if callable(key) else key.__eq__


def _key(line: str) -> str:
    """An override line's key (``+``, ``~`` and all)."""
    return line.partition("=")[0]


def _may_overlap(grid: Grid, other: Grid) -> bool:
    """Whether ``grid`` and ``other`` can share a job: same number of keys, each position's lines
    meeting."""
    return len(grid.sets) == len(other.sets) and all(
        a & b for a, b in zip(grid.sets, other.sets, strict=True)
    )


class Lines(Sequence):
    """Each job of ``jobs`` as one line (its overrides joined by spaces), made when asked for."""

    def __init__(self, jobs: Sequence[Sequence[str]]) -> None:
        self.jobs = jobs

    def __len__(self) -> int:
        return len(self.jobs)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [" ".join(job) for job in self.jobs[index]]
        return " ".join(self.jobs[index])

    def __iter__(self) -> Iterator[str]:
        return (" ".join(job) for job in self.jobs)
