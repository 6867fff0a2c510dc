"""Mean ± std over random orders (LIBOL's protocol) in the report, where the runs logged it.

A run with ``orders.permutations=k`` (or ``orders=k``), k > 1, logs its mistakes' and updates'
mean and std over its k orderings (``mistakes``, ``mistakes_std``, ``updates``,
``updates_std``) and each bound's ratio mean and std (``bound_ratio_mean.<theorem>``,
``bound_ratio_std.<theorem>``); ``lincls.evaluation.measures.record_metrics`` and ``bound_metrics``.
Here they become LIBOL's layout: one row per learner, one column per dataset, each cell
"mean ± std". Runs that share a learner and a dataset label (a seed's replicate, say) are pooled
over all their orderings: the pooled mean and the pooled standard deviation of the orderings'
values, exactly as if one run had fitted them all. The std is the orderings' population std
(NumPy's ``std``, ddof 0), the one the runs log. LIBOL itself (``run_experiment_bc.m`` of
github.com/LIBOL/LIBOL: 20 runs, each ``ol_train`` over a random permutation ``rand_c(1:n, i)``)
prints ``mean(res.err)/n, std(res.err)/n``, a mistake rate with MATLAB's ``std``, which divides
by N − 1: its std is this one times √(N/(N − 1)), 1.026 at N = 20.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from lincls.experiments.report.collect import column
from lincls.experiments.report.tables import labels_of

_RATIO_MEAN = re.compile(r"^metrics\.bound_ratio_mean\.(.+)$")
# the params that say which data a run saw, beside its name (the seed is a replicate: pooled)
_NOT_DATA = {"params.dataset.name", "params.dataset.seed"}


def several_orderings(frame: pd.DataFrame) -> pd.Series:
    """Whether each run fitted more than one ordering (and so logged a std)."""
    return column(frame, "metrics.orders").fillna(1.0) > 1


def dataset_labels(frame: pd.DataFrame) -> pd.Series:
    """Each run's dataset, named with the ``dataset.*`` params that vary among the runs of that
    dataset (``separable (margin=0.05)``), the seed left out; as ``learner_labels`` names
    learners."""
    names = column(frame, "tags.dataset").fillna(column(frame, "params.dataset.name"))
    names = names.astype(object).fillna("?").astype(str)
    labels = names.copy()
    params = [c for c in frame.columns if c.startswith("params.dataset.") and c not in _NOT_DATA]
    for _, group in frame.groupby(names, sort=True):
        varying = [c for c in params if group[c].nunique(dropna=True) > 1]
        for index, row in group[varying].iterrows() if varying else ():
            described = ", ".join(f"{c[len('params.dataset.') :]}={row[c]}" for c in varying)
            labels.loc[index] = f"{names.loc[index]} ({described})"
    return labels


def pooled(counts: pd.Series, means: pd.Series, stds: pd.Series) -> tuple[float, float]:
    """The mean and population std of the union of groups of ``counts`` values with these means
    and population stds: (Σ n m / N, √(Σ n (s² + m²) / N − mean²))."""
    n = counts.to_numpy(dtype=np.float64)
    m = means.to_numpy(dtype=np.float64)
    s = stds.to_numpy(dtype=np.float64)
    total = n.sum()
    mean = float((n * m).sum() / total)
    second = float((n * (s * s + m * m)).sum() / total)
    if len(n) == 1:  # one run: its own numbers, untouched by the rounding of the formula
        return float(m[0]), float(s[0])
    return mean, math.sqrt(max(second - mean * mean, 0.0))


def spread_table(
    frame: pd.DataFrame, metric: str = "mistakes", learners: pd.Series | None = None
) -> pd.DataFrame:
    """Per learner and dataset label, over the runs with several orderings: runs, orderings,
    mean and std of ``metric`` (``mistakes``, ``updates`` or ``bound_ratio.<theorem>``, whose
    mean and std are ``bound_ratio_mean.<theorem>`` and ``bound_ratio_std.<theorem>``)."""
    if metric.startswith("bound_ratio."):
        theorem = metric.split(".", 1)[1]
        mean_col, std_col = f"bound_ratio_mean.{theorem}", f"bound_ratio_std.{theorem}"
    else:
        mean_col, std_col = metric, f"{metric}_std"
    means = column(frame, f"metrics.{mean_col}")
    stds = column(frame, f"metrics.{std_col}")
    keep = several_orderings(frame) & means.notna() & stds.notna()
    columns = ["learner", "dataset", "runs", "orderings", "mean", "std"]
    if not keep.any():
        return pd.DataFrame(columns=columns)
    kept = pd.DataFrame(
        {
            "learner": labels_of(frame, learners)[keep],
            "dataset": dataset_labels(frame)[keep],
            "n": column(frame, "metrics.orders")[keep],
            "mean": means[keep],
            "std": stds[keep],
        }
    )
    rows = []
    for (learner, dataset), group in kept.groupby(["learner", "dataset"], sort=True):
        mean, std = pooled(group["n"], group["mean"], group["std"])
        rows.append([learner, dataset, len(group), int(group["n"].sum()), mean, std])
    return pd.DataFrame(rows, columns=columns)


def libol_layout(table: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """``spread_table``'s rows as LIBOL lays them out: learners × datasets, "mean ± std"."""
    if table.empty:
        return pd.DataFrame()
    pairs = zip(table["mean"], table["std"], strict=True)
    cells = table.assign(cell=[f"{m:.{digits}f} ± {s:.{digits}f}" for m, s in pairs])
    wide = cells.pivot(index="learner", columns="dataset", values="cell")
    return wide.fillna("–").rename_axis(index=None, columns=None)


def _markdown(wide: pd.DataFrame) -> list[str]:
    header = "| learner | " + " | ".join(wide.columns) + " |"
    rule = "|---|" + "---:|" * len(wide.columns)
    rows = [f"| {label} | " + " | ".join(row) + " |" for label, row in wide.iterrows()]
    return [header, rule, *rows]


def bounds_with_spread(frame: pd.DataFrame) -> list[str]:
    """The theorems whose ratio some run logged as mean ± std over its orderings."""
    return sorted({m.group(1) for c in frame.columns if (m := _RATIO_MEAN.match(c))})


def spread_lines(frame: pd.DataFrame, learners: pd.Series | None = None) -> list[str]:
    """The report's section on runs with several orderings; nothing when there are none."""
    mistakes = spread_table(frame, "mistakes", learners)
    if mistakes.empty:
        return []
    orderings = sorted({int(n) for n in column(frame, "metrics.orders").dropna() if n > 1})
    pooled_cells = int((mistakes["runs"] > 1).sum())
    lines = [
        "",
        "## Mistakes over random orders (mean ± std, LIBOL's layout)",
        "",
        f"Each run fitted its config in {', '.join(map(str, orderings))} seeded orderings "
        "(`orders.permutations`); a cell is the mean ± std of the mistakes over those orderings "
        "(population std; LIBOL prints MATLAB's std, ×√(N/(N − 1)), and divides both by n)"
        + (
            f"; cells that pool the orderings of several runs (seeds, other settings): "
            f"{pooled_cells}"
            if pooled_cells
            else ""
        )
        + ".",
        "",
        *_markdown(libol_layout(mistakes)),
    ]
    updates = spread_table(frame, "updates", learners)
    if not updates.empty and not np.allclose(updates["mean"], mistakes["mean"]):
        lines += ["", "Updates (mean ± std):", "", *_markdown(libol_layout(updates))]
    ratio_tables = 0
    for theorem in bounds_with_spread(frame):
        ratios = spread_table(frame, f"bound_ratio.{theorem}", learners)
        if ratios.empty:
            continue
        ratio_tables += 1
        lines += [
            "",
            f"### Ratio to `{theorem}` (mistakes / bound, mean ± std over orderings)",
            "",
            *_markdown(libol_layout(ratios, digits=3)),
        ]
    if ratio_tables:
        lines += [
            "",
            "A bound's ratio is over the orderings where it is not vacuous; the worst "
            "ordering's ratio is in the bound table above.",
        ]
    return lines
