"""A sweep's progress: the shared record of finished jobs, the console view, the headline.

Every job appends one JSON line to the sweep's progress file (status, learner label, tightest
bound ratio, whether a bound broke): one short append is atomic across the processes of any
launcher. From that file come the console's progress and, at the end, the sweep's headline.

On a terminal the console shows a live bar (done/total, failed, rate, ETA) redrawn in place; when
stderr is not a terminal, one line each ~10 s or 5 % of the jobs, and one summary line at the
end — a 10,000-job sweep prints tens of lines, not 10,000.

The ETA is the mean duration of the finished jobs of each kind (their config-group choices) times
the jobs of that kind still to run, over the parallelism measured so far; a kind without a
finished job yet costs the mean of all finished jobs, so there is an ETA from the first finished
job on (waiting for a job of every kind showed none for 12 of a 3-learner sweep's 18 jobs). It is
never negative. It counts down between jobs (the launching process redraws it from the progress
file), and once a job in flight has outlived it the view says so ("ETA ?")
instead of showing a number the sweep has already passed.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

LINE_SECONDS = 10.0  # without a terminal: a line at least this often …
LINE_FRACTION = 0.05  # … or each time this fraction of the jobs is done


def append(progress_file: str, entry: Mapping[str, Any]) -> None:
    """Add a finished job to the progress file."""
    with open(progress_file, "a") as handle:
        handle.write(json.dumps(dict(entry), separators=(",", ":")) + "\n")


# Per file: the bytes read so far and what its entries add up to (``Summary``). A job reads only
# what was appended since: re-reading the whole file after each of 10,000 jobs would parse 5·10⁷
# lines. The entries themselves are not kept: a million of them were ~700 MB.
_READ: dict[str, tuple[int, Summary]] = {}
_READING = threading.Lock()  # the view's ticker reads the file beside the jobs' own reports


KIND_GROUPS = ("learner", "dataset")  # the config groups whose choice sets what a job costs


def job_kind(line: str) -> str:
    """What a job's duration is estimated from: its choices of ``KIND_GROUPS`` (``learner=…``,
    ``dataset=…``); jobs that choose none share the kind ``""``."""
    items = (item.lstrip("+~") for item in line.split() if "=" in item)
    return " ".join(sorted(item for item in items if item.partition("=")[0] in KIND_GROUPS))


def job_kinds(lines: Iterable[str]) -> dict[str, int]:
    """How many of a sweep's jobs (override lines) are of each kind."""
    return dict(Counter(job_kind(line) for line in lines))


@dataclass
class Tally:
    """Per job kind: the jobs done and the seconds the finished (or failed) ones took, kept as
    the progress file is read, so an estimate after each of 10,000 jobs does not walk them all."""

    done: Counter = field(default_factory=Counter)
    runs: Counter = field(default_factory=Counter)  # jobs with a duration
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, entry: Mapping[str, Any]) -> None:
        """Count one progress entry."""
        kind = job_kind(str(entry.get("job", "")))
        self.done[kind] += 1
        if entry.get("status") != "skipped" and entry.get("seconds") is not None:
            self.runs[kind] += 1
            self.seconds[kind] = self.seconds.get(kind, 0.0) + float(entry["seconds"])

    def estimate(self, kinds: Mapping[str, int], elapsed: float) -> float | None:
        """``estimate`` of the entries counted so far."""
        runs = sum(self.runs.values())
        overall = sum(self.seconds.values()) / runs if runs else None
        left = 0.0
        for kind, count in kinds.items():
            todo = count - self.done[kind]
            if todo <= 0:
                continue
            if self.runs[kind]:
                left += todo * self.seconds[kind] / self.runs[kind]
            elif overall is not None:  # no job of this kind yet: the mean of all jobs so far
                left += todo * overall
            else:
                return None
        worked = sum(self.seconds.values())
        if left == 0.0:
            return 0.0
        if worked <= 0.0 or elapsed <= 0.0:
            return None
        return left / max(worked / elapsed, 1e-9)


def estimate(entries: list[dict], kinds: Mapping[str, int], elapsed: float) -> float | None:
    """Seconds until the sweep's last job is done, or None before any job has a duration.

    Each job not yet done costs the mean ``seconds`` of the finished (or failed) jobs of its kind,
    or of all jobs while its kind has none;
    their sum is divided by the parallelism measured so far (job-seconds done per second of wall
    clock), so it holds for one process and for a pool alike.
    """
    tally = Tally()
    for entry in entries:
        tally.add(entry)
    return tally.estimate(kinds, elapsed)


@dataclass
class Summary:
    """What a progress file's entries add up to, counted as they are read: statuses, the ETA's
    tally, the headline's numbers, and which jobs (override lines) have no finished run."""

    statuses: Counter = field(default_factory=Counter)
    tally: Tally = field(default_factory=Tally)
    violations: int = 0
    ratios: dict[str, list[float]] = field(default_factory=dict)  # label → finished ratios
    posterior: dict[str, list[float]] = field(default_factory=dict)
    done: set[int] = field(default_factory=set)  # hashes of jobs finished or skipped
    problems: dict[str, dict] = field(default_factory=dict)  # job → its failed entry

    @property
    def entries(self) -> int:
        """How many entries were read."""
        return sum(self.statuses.values())

    def add(self, entry: dict) -> None:
        """Count one entry (a later entry of a job replaces its earlier one)."""
        status = entry.get("status")
        self.statuses[status] += 1
        self.tally.add(entry)
        self.violations += bool(entry.get("violated"))
        job = str(entry.get("job"))
        if status in ("finished", "skipped"):
            self.done.add(hash(job))
            self.problems.pop(job, None)
        else:
            self.done.discard(hash(job))
            self.problems[job] = entry
        if status == "finished":
            label = entry.get("label") or "?"
            for key, by_label in (("ratio", self.ratios), ("posterior_ratio", self.posterior)):
                if entry.get(key) is not None:
                    by_label.setdefault(label, []).append(float(entry[key]))

    def missing(self, jobs: Iterable[str]) -> list[tuple[str, dict | None]]:
        """(job, its failed entry or None: never reported) of each of ``jobs`` without a
        finished (or skipped) entry."""
        return [(job, self.problems.get(job)) for job in jobs if hash(job) not in self.done]

    def reported(self, job: str) -> bool:
        """Whether ``job`` has an entry."""
        return hash(job) in self.done or job in self.problems


def read(progress_file: str) -> list[dict]:
    """The entries of a progress file (a line cut short by a dying writer is skipped), parsed
    anew: for a few; a sweep's own counts come from ``summary``."""
    entries = []
    with open(progress_file, "rb") as handle:
        for line in handle:
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return entries


def summary(progress_file: str) -> Summary:
    """What the progress file's entries add up to, read up to its end (only what was appended
    since the last read is parsed)."""
    with _READING:
        return _read(progress_file)


def _read(progress_file: str) -> Summary:
    offset, summed = _READ.get(progress_file, (0, Summary()))
    with open(progress_file, "rb") as handle:
        if handle.seek(0, 2) < offset:  # written anew (a new sweep in the same place)
            offset, summed = 0, Summary()
        handle.seek(offset)
        tail = handle.read()
    complete = tail[: tail.rfind(b"\n") + 1]  # a line still being written waits for next time
    for line in complete.decode().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        summed.add(entry)
    _READ[progress_file] = (offset + len(complete), summed)
    return summed


@dataclass
class Counts:
    """Jobs done, failed, skipped among ``total``, since ``started`` (epoch seconds), and the ETA
    (``estimate``) made at ``made`` (None: no basis yet)."""

    total: int
    started: float
    done: int = 0
    failed: int = 0
    skipped: int = 0
    eta: float | None = None
    made: float = 0.0

    @classmethod
    def of_file(
        cls, progress_file: str, total: int, started: float, kinds: Mapping[str, int] = ()
    ) -> Counts:
        """The counts of a progress file, read up to its end (only what was appended since the
        last read is parsed, and the statuses are counted as they come); with the sweep's job
        ``kinds``, the ETA."""
        with _READING:
            summed = _read(progress_file)
            now = time.time()
            eta = summed.tally.estimate(kinds, now - started) if kinds else None
            statuses = summed.statuses
            return cls(total, started, summed.entries, statuses["failed"], statuses["skipped"],
                       eta, now)  # fmt: skip

    def remaining(self, now: float | None = None) -> str:
        """The ETA as shown at ``now``: counted down since it was made, ``?`` once a job in flight
        has outlived it, ``–`` without a basis."""
        if self.eta is None:
            return "–"
        left = self.eta - ((now or time.time()) - self.made)
        if left < 0 and self.done < self.total:
            return "?"
        return f"{max(0.0, left):.0f} s"  # max(0.0, -0.0) is 0.0: never "-0 s"

    def line(self, now: float | None = None) -> str:
        """``[lincls] 120/200 done, 1 failed, 0 skipped, 5.2 runs/s, 23 s elapsed, ETA 15 s``."""
        now = now or time.time()
        elapsed = now - self.started
        rate = self.done / elapsed if elapsed > 0 else math.nan
        return (
            f"[lincls] {self.done}/{self.total} done, {self.failed} failed, {self.skipped} "
            f"skipped, {rate:.1f} runs/s, {elapsed:.0f} s elapsed, ETA {self.remaining(now)}"
        )


@dataclass
class View:
    """The console view of one process: a bar on a terminal, else throttled lines."""

    stream: TextIO | None = None  # None: sys.stderr as it is when drawing
    last_line: float = 0.0
    last_step: int = 0
    drawn: int = 0  # the length of the bar on screen, 0 when there is none
    lock: Any = field(default_factory=threading.RLock, repr=False)
    halt: threading.Event | None = field(default=None, repr=False)  # set: the ticker stops

    @property
    def out(self) -> TextIO:
        """Where the view writes."""
        return self.stream or sys.stderr

    @property
    def live(self) -> bool:
        """Whether the stream is a terminal (the bar redraws in place)."""
        return bool(getattr(self.out, "isatty", lambda: False)())

    def show(self, counts: Counts) -> None:
        """Show the counts: redraw the bar, or print a line if one is due."""
        with self.lock:
            if self.live:
                self._draw(counts)
                return
            step = int(counts.done / max(counts.total, 1) / LINE_FRACTION)
            now = time.time()
            if step > self.last_step or now - self.last_line >= LINE_SECONDS:
                if counts.done < counts.total:  # the summary line says the rest
                    print(counts.line(now), file=self.out, flush=True)
                self.last_step, self.last_line = step, now

    def follow(
        self,
        progress_file: str,
        total: int,
        started: float,
        kinds: Mapping[str, int],
        interval: float | None = None,
    ) -> None:
        """In the launching process: redraw from the progress file every ``interval`` seconds (1 on
        a terminal, ``LINE_SECONDS`` else) until ``stop``, so the ETA counts down, and says "?"
        when a job outlives it, while no job finishes."""
        self.stop()
        halt = self.halt = threading.Event()
        every = interval or (1.0 if self.live else LINE_SECONDS)

        def tick() -> None:
            last: Counts | None = None
            while not halt.wait(every):
                try:
                    counts = Counts.of_file(progress_file, total, started, kinds)
                except OSError:  # the sweep's directory is gone: nothing left to show
                    return
                if last is not None and counts.done == last.done:  # no job came: count down
                    counts.eta, counts.made = last.eta, last.made
                last = counts
                with self.lock:
                    if not halt.is_set() and counts.done < counts.total:
                        self.show(counts)

        threading.Thread(target=tick, name="lincls-progress", daemon=True).start()

    def stop(self) -> None:
        """Stop redrawing (``follow``)."""
        if self.halt is not None:
            self.halt.set()
            self.halt = None

    def _draw(self, counts: Counts) -> None:
        from tqdm import tqdm

        width = shutil.get_terminal_size((100, 20)).columns or 100  # a new pty may say 0
        postfix = f"failed={counts.failed}, skipped={counts.skipped}, ETA {counts.remaining()}"
        elapsed = time.time() - counts.started
        bar = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]"
        text = tqdm.format_meter(counts.done, counts.total, elapsed, ncols=width, prefix="[lincls]",
                                 unit="run", postfix=postfix, bar_format=bar)  # fmt: skip
        self.out.write("\r" + text.ljust(self.drawn))
        self.out.flush()
        self.drawn = len(text)

    def close(self) -> None:
        """End the bar's line (the summary line comes after it)."""
        with self.lock:
            if self.drawn:
                self.out.write("\n")
                self.out.flush()
                self.drawn = 0
