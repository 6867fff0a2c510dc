"""``make bench``: lincls against its peers, timed side by side in one process.

Each section (a module of ``lincls.experiments.benchmarks``, ``run(quick) -> list[Row]``) times our
implementation and the peer on the same data, BLAS pinned to one thread, best of several repeats.
The table goes to stdout and to ``results/bench.md``.

    python -m lincls.experiments.bench                 # every section
    python -m lincls.experiments.bench perceptron      # some sections
    python -m lincls.experiments.bench --quick         # small sizes, a smoke test of the harness
    python -m lincls.experiments.bench sweep10k report # the slow sections (minutes), if named
    python -m lincls.experiments.bench report100k sweep_postgres  # slower still (PostgreSQL)
    python -m lincls.experiments.bench sweep100k       # a 100,000-config sweep (about an hour)
    python -m lincls.experiments.bench throughput      # 2 × 2,000 cheap configs, whole commands
    python -m lincls.experiments.bench firstline       # a million configs' first progress line
    python -m lincls.experiments.bench studies         # the 10,000-instance property tests
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

from threadpoolctl import threadpool_limits  # noqa: E402

SECTIONS = ["perceptron", "online", "kernel", "multiclass", "bounds", "comparators",
            "certificates", "batch", "maxent", "sweep", "figures", "matrix", "startup",
            "notebook"]  # fmt: skip
SLOW_SECTIONS = [
    "sweep10k",
    "report",
    "report100k",
    "sweep_postgres",
    "sweep100k",
    "throughput",
    "studies",
    "sweep1m",
    "firstline",
    "read1m",
    "pg_writers",
    "clusters",
]  # minutes each: run only when named


@dataclass
class Row:
    """One comparison: seconds for ours and the peer; ratio = peer / ours (> 1: we are faster)."""

    section: str
    case: str
    ours: float
    peer: float | None = None
    peer_name: str = ""
    target: float | None = None
    floor: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """How many times faster than the peer."""
        return None if self.peer is None else self.peer / self.ours

    @property
    def verdict(self) -> str:
        """'met' / 'MISSED' against the target ratio, '' without one."""
        if self.target is None or self.ratio is None:
            return ""
        return "met" if self.ratio >= self.target else "MISSED"


def best_time(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> float:
    """The smallest wall time of ``repeat`` calls of ``fn`` after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f"{seconds * 1e3:.2f} ms" if seconds < 10 else f"{seconds:.1f} s"


def render(rows: list[Row]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| section | case | ours | peer | peer is | ratio (peer/ours) | target | "
        "floor | ours/floor | note |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}×"
        target = "" if r.target is None else f"≥ {r.target:g}× {r.verdict}"
        floor = "" if r.floor is None else f"{r.ours / r.floor:.2f}"
        lines.append(
            f"| {r.section} | {r.case} | {_fmt(r.ours)} | {_fmt(r.peer)} | {r.peer_name} | "
            f"{ratio} | {target} | {_fmt(r.floor)} | {floor} | {r.note} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections and write ``results/bench.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "sections", nargs="*", metavar="SECTION", help=f"any of {SECTIONS + SLOW_SECTIONS}"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes (harness smoke test)")
    parser.add_argument("--out", default=str(Path("results") / "bench.md"))
    args = parser.parse_args(argv)
    unknown = sorted(set(args.sections) - set(SECTIONS) - set(SLOW_SECTIONS))
    if unknown:
        parser.error(f"sections: unknown {unknown}; allowed: {SECTIONS + SLOW_SECTIONS}")
    rows: list[Row] = []
    with threadpool_limits(limits=1):
        for name in args.sections or SECTIONS:
            module = importlib.import_module(f"lincls.experiments.benchmarks.{name}")
            section_rows = module.run(quick=args.quick)
            print(render(section_rows), flush=True)
            rows.extend(section_rows)
    header = (
        f"# lincls benchmarks\n\nMachine: {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}; BLAS and numba pinned to one thread; best of "
        "several repeats after a warm-up. ratio = peer seconds / our seconds.\n\n"
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(header + render(rows) + "\n")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
