"""The report's numbers: per-learner bound tables, violations, scaling slopes, dataset families.

Each function takes the runs frame of ``collect`` (one row per run) and returns a table or a list
of fits; a violation is decided by ``lincls.bounds.holds``, the one rule the runner uses too.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from lincls.bounds import family_of, holds, source_of
from lincls.experiments.report.collect import column
from lincls.tracking.describe import held_back_by

THEORY_SLOPE_GAMMA = -2.0  # Novikoff: M ≤ (R/γ)², reached on worst-case orders
THEORY_SLOPE_RADIUS = 2.0
_BOUND = re.compile(r"^metrics\.bound\.([^.]+)$")
TIGHTEST = ("tightest", "tightest_a_posteriori")  # per family: a priori, a posteriori


def learner_labels(frame: pd.DataFrame) -> pd.Series:
    """Each run's learner label: its ``learner_label`` tag (the learner and the options that pick
    its update rule, e.g. ``perceptron (bias=none)``), plus the other ``learner.*`` params that
    vary among runs with that label: runs of different rules or settings are not pooled. Runs
    logged before the tag existed get the learner's name and every varying param."""
    names = column(frame, "tags.learner").fillna(column(frame, "params.learner.name"))
    names = names.fillna("?").astype(str)
    tagged = column(frame, "tags.learner_label")
    base = tagged.astype(object).fillna(names).astype(str)  # an all-missing column is float
    labels = base.astype(object)
    prefix = "params.learner."
    params = [c for c in frame.columns if c.startswith(prefix) and c != f"{prefix}name"]
    for label, group in frame[params].groupby(base, sort=True):  # not every column: 0.1 s
        shown = {c for c in params if f"{c[len(prefix) :]}=" in label}
        varying = [c for c in params if c not in shown and group[c].nunique(dropna=False) > 1]
        if not varying:
            continue
        # a group's labels at once, made once per distinct setting of its varying params
        # (setting them row by row copied the whole column each time: quadratic in the runs;
        # texts made run by run took ~10 s at a million runs)
        inner = label[:-1] + ", " if label.endswith(")") else label + " ("
        setting = group.groupby(varying, dropna=False, sort=False).ngroup().to_numpy()
        firsts = group.iloc[np.unique(setting, return_index=True)[1]]
        described = pd.Series(inner, index=firsts.index, dtype=object)
        for k, c in enumerate(varying):
            values = firsts[c].astype(object).map(str)
            described = described + ("" if k == 0 else ", ") + f"{c[len(prefix) :]}=" + values
        labels.loc[group.index] = (described + ")").to_numpy()[setting]
    return labels.astype(str)


def labels_of(frame: pd.DataFrame, learners: pd.Series | None) -> pd.Series:
    """``learners`` (the frame's ``learner_labels``, made once by a caller that needs them
    often: ~1.4 s at a million runs), else made here."""
    return learner_labels(frame) if learners is None else learners


def orders_of(frame: pd.DataFrame) -> pd.Series:
    """The order each run presented its data in (the runner's tag, else the config's)."""
    return column(frame, "tags.order").fillna(column(frame, "params.order")).fillna("fixed")


def bound_names(frame: pd.DataFrame) -> list[str]:
    """The mistake bounds logged (``bound.<name>``), the tightest of each family last."""
    names = sorted({m.group(1) for c in frame.columns if (m := _BOUND.match(c))} - set(TIGHTEST))
    return names + [t for t in TIGHTEST if f"metrics.bound.{t}" in frame.columns]


def bound_family(bound: str) -> str:
    """``a priori`` or ``a posteriori`` (a bound that reads the run's own mistakes)."""
    if bound in TIGHTEST:
        return "a posteriori" if bound == TIGHTEST[1] else "a priori"
    return family_of(bound).replace("_", " ")


def vacuous(frame: pd.DataFrame, bound: str) -> pd.Series:
    """Whether ``bound`` was vacuous in each run (at or above the examples it presented: the
    runner's tag ``bounds.vacuous``); such a run logs the value and no ratio."""
    # once per distinct text (a map of each run's took ~1 s a bound at a million runs)
    codes, texts = pd.factorize(column(frame, "tags.bounds.vacuous"))
    found = np.array([bound in str(names).split(", ") for names in texts] + [False])  # -1: none
    return pd.Series(found[codes], index=frame.index)


def violations(frame: pd.DataFrame, bound: str) -> pd.Series:
    """Whether each run broke ``bound`` (``lincls.bounds.holds``: relative tolerance 1e-9).

    A run with several orderings logs the mean mistakes but each bound at its worst ordering, so
    there the logged ratio (worst ordering's mistakes / its bound) is compared with 1.
    """
    mistakes = column(frame, "metrics.mistakes")
    value = column(frame, f"metrics.bound.{bound}")
    ratio = column(frame, f"metrics.bound_ratio.{bound}")
    several = (column(frame, "metrics.orders").fillna(1.0) > 1).to_numpy()
    m, v, r = (series.to_numpy(float) for series in (mistakes, value, ratio))
    broke = np.where(several, ~holds(r, 1.0), ~holds(m, v))  # holds compares arrays as numbers
    return pd.Series(broke, index=frame.index) & value.notna()


BOUND_COLUMNS = [
    "learner", "bound", "family", "runs", "vacuous", "violations", "median_ratio", "max_ratio",
    "source",
]  # fmt: skip


def bound_source(bound: str) -> str:
    """What ``bound`` is (``lincls.bounds.Source``: "published: …", "derived: …", …); "–" for
    the tightest of a family, which is one of the others per run."""
    if bound in TIGHTEST:
        return "–"
    source = source_of(bound)
    return "not registered in this lincls" if source is None else str(source)


def bound_table(frame: pd.DataFrame, learners: pd.Series | None = None) -> pd.DataFrame:
    """Per learner and bound: its family, runs, vacuous runs, violations, median and max ratio,
    and its source (``bound_source``).

    The ratios are over the runs where the bound is not vacuous (those log no ratio).
    """
    labels = labels_of(frame, learners)
    rows = []
    for bound in bound_names(frame):
        has = column(frame, f"metrics.bound.{bound}").notna()
        broke = violations(frame, bound)
        empty = vacuous(frame, bound)
        ratio = column(frame, f"metrics.bound_ratio.{bound}")
        for label in sorted(labels[has].unique()):
            mine = has & (labels == label)
            rows.append(
                {
                    "learner": label,
                    "bound": bound,
                    "family": bound_family(bound),
                    "runs": int(mine.sum()),
                    "vacuous": int(empty[mine].sum()),
                    "violations": int(broke[mine].sum()),
                    "median_ratio": float(ratio[mine].median()),
                    "max_ratio": float(ratio[mine].max()),
                    "source": bound_source(bound),
                }
            )
    table = pd.DataFrame(rows, columns=BOUND_COLUMNS)
    return table.sort_values(["learner", "bound"], key=_tightest_last, kind="stable").reset_index(
        drop=True
    )


def _tightest_last(column: pd.Series) -> pd.Series:
    if column.name == "bound":
        return column.map(lambda b: (b in TIGHTEST, b))
    return column


@dataclass
class SlopeFit:
    """log M = a + s_γ log γ + s_R log R over one learner × dataset × order (NaN: not fitted)."""

    learner: str
    dataset: str
    order: str
    runs: int
    slope_gamma: float = math.nan
    slope_radius: float = math.nan
    rms: float = math.nan
    note: str = ""
    identity: bool = False  # every run met its bound exactly: the slopes restate the bound


def dataset_labels(frame: pd.DataFrame) -> pd.Series:
    """The dataset of each run; a perceptron game with its dimension (d = 2 and d ≥ (R/γ)²
    are different games: the plane's player forces half of what the orthogonal one does)."""
    name = column(frame, "tags.dataset").fillna("?").astype(str)
    d = column(frame, "params.dataset.d").astype(object).fillna("?").astype(str)
    return name.where(name != "perceptron_game", name + " d=" + d)


SLACK_FACTORS = ("progress", "angle", "norm")


def slack_table(frame: pd.DataFrame, learners: pd.Series | None = None) -> pd.DataFrame:
    """Per learner × dataset: the median of each Novikoff slack factor and the smallest one.

    The factors multiply to mistakes / bound (``lincls.evaluation.slack``); the smallest median is
    the one that keeps the runs furthest from their bound, named only when it is below 1 by more
    than rounding (a run at its bound is held back by nothing: "–").
    """
    factors = {f: column(frame, f"metrics.bound_slack.{f}") for f in SLACK_FACTORS}
    logged = factors["progress"].notna()
    keys = pd.DataFrame({"learner": labels_of(frame, learners), "dataset": dataset_labels(frame)})
    rows = []
    for (learner, dataset), group in keys[logged].groupby(["learner", "dataset"]):
        medians = {f: float(factors[f].loc[group.index].median()) for f in SLACK_FACTORS}
        rows.append(
            {"learner": learner, "dataset": dataset, "runs": int(group.shape[0]), **medians,
             "held_back_by": held_back_by(medians) or "–"}
        )  # fmt: skip
    columns = ["learner", "dataset", "runs", *SLACK_FACTORS, "held_back_by"]
    return pd.DataFrame(rows, columns=columns)


def distinct_configurations(frame: pd.DataFrame, learners: pd.Series | None = None) -> pd.Series:
    """Which runs are the first of their configuration: runs on the same data (dataset
    fingerprint) with the same learner label and order are one configuration, their seeds
    aside, unless the seed also orders the data (a shuffled or adversarial order, several
    orderings). A run without a fingerprint counts as its own configuration."""
    fingerprint = column(frame, "tags.dataset.fingerprint")
    order = orders_of(frame).astype(str)
    several = column(frame, "metrics.orders").fillna(1.0) > 1
    seeded = (order != "fixed") | several
    seed = column(frame, "params.seed").astype(object).where(seeded, "")
    own = pd.Series(frame.index.astype(str), index=frame.index)
    key = pd.DataFrame(
        {
            "fingerprint": fingerprint.astype(object).where(fingerprint.notna(), own),
            "learner": labels_of(frame, learners),
            "order": order,
            "seed": seed.astype(str),
        }
    )
    return ~key.duplicated()


def fit_slopes(frame: pd.DataFrame, learners: pd.Series | None = None) -> list[SlopeFit]:
    """Least-squares slopes of log mistakes on log γ (``margin``) and log R (``radius``).

    One fit per learner × dataset × order, over its distinct configurations
    (``distinct_configurations``: a seed that gives the same data and order is the same point
    again) with mistakes > 0; a variable that is the same in every run is left out of the fit,
    and a fit that cannot be made says why. A group whose every run meets its tightest bound
    exactly is marked an identity: its slopes restate the bound's exponents (the instance is
    built so), they are not evidence about the learner.
    """
    learners = labels_of(frame, learners)  # once: the keys and the configurations use them
    keys = pd.DataFrame(
        {
            "learner": learners,
            "dataset": dataset_labels(frame),
            "order": orders_of(frame).astype(str),
        }
    )
    distinct = distinct_configurations(frame, learners)
    mistakes = column(frame, "metrics.mistakes")
    gamma = column(frame, "metrics.margin")
    radius = column(frame, "metrics.radius")
    ratio = column(frame, "metrics.bound_ratio.tightest")
    fits = []
    for (learner, dataset, order), group in keys.groupby(["learner", "dataset", "order"]):
        index = group.index[distinct.loc[group.index].to_numpy()]
        m, g, r = (s.loc[index].to_numpy(float) for s in (mistakes, gamma, radius))
        usable = np.isfinite(m) & np.isfinite(g) & np.isfinite(r) & (m > 0) & (g > 0) & (r > 0)
        fit = SlopeFit(learner, dataset, order, int(usable.sum()))
        fits.append(fit)
        notes = []
        if len(index) < group.shape[0]:
            notes.append(
                f"{group.shape[0]} runs, {len(index)} distinct configurations (seeds that "
                "give the same data and order are one point)"
            )
        if (~usable).any():
            notes.append(f"{int((~usable).sum())} runs without mistakes, γ or R left out")
        log_m, log_g, log_r = np.log(m[usable]), np.log(g[usable]), np.log(r[usable])
        vary_g = usable.any() and np.ptp(log_g) > 1e-9
        vary_r = usable.any() and np.ptp(log_r) > 1e-9
        columns = [np.ones_like(log_m)]
        columns += [log_g] if vary_g else []
        columns += [log_r] if vary_r else []
        design = np.column_stack(columns)
        if not (vary_g or vary_r):
            notes.append("not fitted: γ and R are the same in every run")
        elif fit.runs < design.shape[1]:
            notes.append(f"not fitted: {fit.runs} runs for {design.shape[1]} coefficients")
        elif np.linalg.matrix_rank(design) < design.shape[1]:
            notes.append("not fitted: γ and R vary together (R/γ the same in every run)")
        else:
            coef, *_ = np.linalg.lstsq(design, log_m, rcond=None)
            fit.rms = float(np.sqrt(np.mean((design @ coef - log_m) ** 2)))
            k = 1
            if vary_g:
                fit.slope_gamma, k = float(coef[k]), k + 1
            else:
                notes.append("γ the same in every run")
            if vary_r:
                fit.slope_radius = float(coef[k])
            else:
                notes.append("R the same in every run")
            fit.identity = bool((ratio.loc[index[usable]] == 1.0).all())
            if fit.identity:
                notes.insert(
                    0,
                    "identity, not evidence: every run meets its tightest bound exactly (the "
                    "instance is built so), so the slopes restate the bound",
                )
        fit.note = "; ".join(notes)
    return fits


def family_ranges(frame: pd.DataFrame) -> pd.DataFrame:
    """Per dataset family: runs with a bound, the min and max ratio of the tightest a priori
    bound (never a vacuous one: ``lincls.evaluation.measures.bound_metrics``)."""
    ratio = column(frame, "metrics.bound_ratio.tightest")
    dataset = dataset_labels(frame)
    rows = []
    for name in sorted(dataset.unique()):
        mine = ratio[(dataset == name) & ratio.notna()]
        rows.append(
            {
                "dataset": name,
                "runs": int((dataset == name).sum()),
                "bounded_runs": int(mine.shape[0]),
                "min_ratio": float(mine.min()) if mine.shape[0] else math.nan,
                "max_ratio": float(mine.max()) if mine.shape[0] else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=["dataset", "runs", "bounded_runs", "min_ratio", "max_ratio"])


def hyperplane_table(frame: pd.DataFrame, learners: pd.Series | None = None) -> pd.DataFrame:
    """Per learner: how close its hyperplanes come to the maximum margin (seed 004).

    Over the runs that logged ``hyperplane.margin_to_max`` (separable data with the SVM
    certificate): their number, the median, smallest and largest ratio, and the median fraction
    of training examples the hyperplane puts on the wrong side or on it (``nonpositive``).
    """
    ratio = column(frame, "metrics.hyperplane.margin_to_max")
    wrong = column(frame, "metrics.hyperplane.nonpositive")
    labels = labels_of(frame, learners)
    rows = []
    for label in sorted(labels[ratio.notna()].unique()):
        mine = ratio.notna() & (labels == label)
        rows.append(
            {
                "learner": label,
                "runs": int(mine.sum()),
                "median_ratio": float(ratio[mine].median()),
                "min_ratio": float(ratio[mine].min()),
                "max_ratio": float(ratio[mine].max()),
                "median_nonpositive": float(wrong[mine].median()),
            }
        )
    columns = ["learner", "runs", "median_ratio", "min_ratio", "max_ratio", "median_nonpositive"]
    return pd.DataFrame(rows, columns=columns)
