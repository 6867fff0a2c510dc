"""A sweep's headline: what its parent run's description and metrics say of its progress file."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from lincls.tracking.progress import Summary


def _key(label: str) -> str:
    """A learner label as a metric key part (MLflow allows letters, digits, _ - . / and space)."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w.\- /]+", " ", label)).strip()


@dataclass(frozen=True)
class Headline:
    """A sweep's result in a few numbers: what the parent run's description and metrics say."""

    runs: int
    failed: int
    skipped: int
    violations: int
    ratios: dict[str, tuple[int, float, float]]  # label → (runs, median, max) of tightest ratio
    # the same for the tightest a posteriori bound (one that reads the run's own mistakes)
    posterior: dict[str, tuple[int, float, float]] = field(default_factory=dict)

    @classmethod
    def of(cls, entries: list[dict]) -> Headline:
        """The headline of a progress file's entries."""
        summed = Summary()
        for entry in entries:
            summed.add(entry)
        return cls.of_summary(summed)

    @classmethod
    def of_summary(cls, summed: Summary) -> Headline:
        """The headline of what a progress file's entries add up to."""
        return cls(
            runs=summed.statuses["finished"],
            failed=summed.statuses["failed"],
            skipped=summed.statuses["skipped"],
            violations=summed.violations,
            ratios=_by_label(summed.ratios),
            posterior=_by_label(summed.posterior),
        )

    def metrics(self) -> dict[str, float]:
        """``sweep.runs``, ``.failed``, ``.skipped``, ``.violations`` and per learner label
        ``tightest_ratio.median/<label>`` and ``tightest_ratio.max/<label>``."""
        values = {
            "sweep.runs": float(self.runs),
            "sweep.failed": float(self.failed),
            "sweep.skipped": float(self.skipped),
            "sweep.violations": float(self.violations),
        }
        for label, (_, median, largest) in self.ratios.items():
            values[f"tightest_ratio.median/{_key(label)}"] = median
            values[f"tightest_ratio.max/{_key(label)}"] = largest
        for label, (_, median, largest) in self.posterior.items():
            values[f"tightest_a_posteriori_ratio.median/{_key(label)}"] = median
            values[f"tightest_a_posteriori_ratio.max/{_key(label)}"] = largest
        return values

    def description(self, study: str, status: str) -> str:
        """The parent run's description (markdown): the headline and a table per learner."""
        lines = [
            f"Sweep of study **{study}**: {status}. {self.runs} runs finished, "
            f"**{self.failed} failed**, {self.skipped} skipped (already finished); "
            f"**{self.violations} bound violations**.",
        ]
        for ratios, family in ((self.ratios, "a priori"), (self.posterior, "a posteriori")):
            if not ratios:
                continue
            lines += [
                "",
                f"Tightest {family} bound's ratio (mistakes / smallest non-vacuous {family} "
                "bound; 1 = mistakes equal it) per learner:",
                "",
                "| learner | runs | median | max |",
                "|---|---:|---:|---:|",
            ]
            lines += [
                f"| {label} | {n} | {median:.4g} | {largest:.4g} |"
                for label, (n, median, largest) in ratios.items()
            ]
        lines += [
            "",
            "The study report (tables, slopes, plots) is `report/report.html` among this run's "
            "artifacts once `lincls report` has written it.",
        ]
        return "\n".join(lines)

    def summary_line(self, study: str, total: int, seconds: float, parent: str) -> str:
        """The console's last line."""
        rate = (self.runs + self.failed) / seconds if seconds > 0 else math.nan
        return (
            f"[lincls] sweep {study}: {total} jobs: {self.runs} finished, {self.failed} failed, "
            f"{self.skipped} skipped in {seconds:.0f} s ({rate:.1f} runs/s); "
            f"{self.violations} bound violations; parent run {parent}"
        )


def _by_label(by_label: dict[str, list[float]]) -> dict[str, tuple[int, float, float]]:
    """Label → (runs, median, max) of each label's ratios."""
    return {
        label: (len(values), float(_median(values)), max(values))
        for label, values in sorted(by_label.items())
    }


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
