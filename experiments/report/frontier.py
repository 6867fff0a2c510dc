"""The tightness frontier: per theorem, the largest mistakes / bound any run reached, beside what
is provably attainable.

A run's instance is one of four kinds: fixed data (any order but the adversary's), the
restricted game (``order=adversarial``: the adversary only orders given examples), a
constructive game (``dataset=perceptron_game``, ``orthogonal_game``, ``disjunction_game``: the
adversary makes the examples) and a searched instance (``dataset=search``: the worst case a
search found for the run's learner and bound, ``experiment=frontier``), shown with its search and
run. Where searches ran and every instance tried stalls below 1 (below ``MET``), the theorem
looks loose by 1/ratio. Beside the largest ratio of each kind stands the ratio a known
lower-bound construction attains, or "unknown" where none is known to us. A theorem whose
frontier is far below its attainable value is the one to study: the runs did not find its worst
case, or the theorem is loose there.
"""

from __future__ import annotations

import pandas as pd

from lincls.experiments.report.collect import column
from lincls.experiments.report.tables import TIGHTEST, bound_names, learner_labels, orders_of

GAMES = ("perceptron_game", "orthogonal_game", "disjunction_game")
SEARCHED = "searched"
KINDS = ("fixed data", "restricted game", "constructive game", SEARCHED)
MET = 0.95  # a searched ratio this close to 1 meets the bound (a bias's R²/(R² + c²) and the like)
UNKNOWN = "unknown: no lower bound known to us"
NOVIKOFF_GAME = (
    "orthogonal game, d ≥ (R/γ)² an integer: ⌊(R/γ)²⌋ mistakes forced on any learner "
    "(lincls.games.orthogonal); ½ in d = 2 (the planar game against the perceptron)"
)
# theorem → (the attainable ratio as text, the instance that attains it)
ATTAINABLE = {
    "novikoff": ("1", NOVIKOFF_GAME),
    "kernel_novikoff": ("1", "orthogonal game, linear kernel without a bias"),
    "romma": ("1", "orthogonal game without a bias (ROMMA's bound is Novikoff's)"),
    "freund_schapire": (
        "1",
        "orthogonal game over several passes (D = 0: Novikoff's bound; on one pass the bound "
        "is the number of presentations, vacuous)",
    ),
    "novikoff_bias": (
        "→ 1",
        "orthogonal game as R/c → ∞ (c the bias feature): ⌊(R/γ)²⌋ mistakes against "
        "(R² + c²)/γ² at the hidden u",
    ),
    "novikoff_2r": ("≥ ¼", "orthogonal game: ⌊(R/γ)²⌋ against (2R/γ)²; more is unknown"),
}
WINNOW = ("winnow1", "winnow2")


def instance_kinds(frame: pd.DataFrame) -> pd.Series:
    """Each run's kind of instance (``KINDS``)."""
    dataset = column(frame, "params.dataset.name").fillna(column(frame, "tags.dataset"))
    kind = pd.Series(KINDS[0], index=frame.index, dtype=object)
    kind[orders_of(frame) == "adversarial"] = KINDS[1]
    kind[dataset.isin(GAMES)] = KINDS[2]
    kind[dataset == "search"] = SEARCHED
    return kind


def instance_labels(frame: pd.DataFrame) -> pd.Series:
    """Each run as the frontier names it: learner, dataset and what sets its numbers."""
    dataset = column(frame, "params.dataset.name").fillna(column(frame, "tags.dataset"))
    labels = learner_labels(frame) + " on " + dataset.fillna("?").astype(str)
    for key, short in (("d", "d"), ("n_attributes", "N"), ("k", "k"), ("adversary", ""),
                       ("margin", "γ"), ("radius", "R")):  # fmt: skip
        labels = labels + column(frame, f"params.dataset.{key}").map(
            lambda v, s=short: _param_text(v, s)
        )
    labels = labels + orders_of(frame).map(lambda o: "" if o == "fixed" else f" {o}")
    seed = column(frame, "params.seed")
    return labels + seed.map(lambda s: "" if pd.isna(s) else f" s{int(s)}")


def _param_text(value, short: str) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    try:  # a number, logged as text by older runs
        shown = f"{float(value):g}"
    except (TypeError, ValueError):
        shown = str(value)
    return f" {short}={shown}" if short else f" {shown}"


def _winnow_attainable(frame: pd.DataFrame, theorem: str) -> tuple[str, str]:
    """Littlestone's k⌊log₂(N/k)⌋ over the run's own bound, largest over the study's runs."""
    # here, not at the top: the games' package brings the learners (scikit-learn, numba, ~1 s)
    from lincls.games.disjunction import littlestone_lower_bound

    bound = column(frame, f"metrics.bound.{theorem}")

    def number(name: str) -> pd.Series:
        return pd.to_numeric(column(frame, name), errors="coerce")

    n = number("params.dataset.n_attributes").fillna(number("params.dataset.n_features"))
    k = number("params.dataset.k")
    best, where = None, ""
    for index in bound.index[bound.notna() & n.notna() & k.notna()]:
        ratio = littlestone_lower_bound(int(n[index]), int(k[index])) / float(bound[index])
        if best is None or ratio > best:
            best, where = ratio, f"N={int(n[index])}, k={int(k[index])}"
    if best is None:
        return "k⌊log₂(N/k)⌋ / bound", "Littlestone (1988): any learner, N attributes, k literals"
    return (
        f"{_fmt(best)}",
        f"k⌊log₂(N/k)⌋ / bound at {where} (Littlestone 1988; lincls.games.disjunction)",
    )


def _fmt(value: float) -> str:
    return "1" if value == 1.0 else f"{value:.3f}"


def frontier_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per theorem the runs log (``bound.<theorem>``, the tightest of each family left
    out): runs that logged it, the largest ratio per kind of instance ("vacuous" where every
    such run found it vacuous, "—" where none logged it; a searched one names its search and
    run), the run that reached the largest, what is provably attainable, and the factor 1/ratio
    by which the theorem looks loose where searches ran and every run stalls below ``MET``
    (else NaN)."""
    kinds = instance_kinds(frame)
    labels = instance_labels(frame)
    rows = []
    for theorem in [b for b in bound_names(frame) if b not in TIGHTEST]:
        logged = column(frame, f"metrics.bound.{theorem}").notna()
        ratio = column(frame, f"metrics.bound_ratio.{theorem}").where(logged)
        row: dict[str, object] = {"theorem": theorem, "runs": int(logged.sum())}
        for kind in KINDS:
            here = logged & (kinds == kind)
            if not here.any():
                row[kind] = "—"
            elif ratio[here].notna().any():
                row[kind] = _fmt(float(ratio[here].max()))
                if kind == SEARCHED:
                    row[kind] += _searched_by(frame, ratio[here].idxmax())
            else:
                row[kind] = "vacuous"
        if ratio.notna().any():
            top = ratio.idxmax()
            row["largest"] = float(ratio[top])
            row["reached on"] = f"{labels[top]} ({kinds[top]})"
        else:
            row["largest"], row["reached on"] = float("nan"), "vacuous on every run"
        if theorem in WINNOW:
            row["attainable"], row["attained on"] = _winnow_attainable(frame, theorem)
        elif row["largest"] == 1.0 and theorem not in ATTAINABLE:  # a run met the bound
            row["attainable"], row["attained on"] = "1", f"met by {row['reached on']}"
        else:
            row["attainable"], row["attained on"] = ATTAINABLE.get(theorem, ("unknown", UNKNOWN))
        searched = (logged & (kinds == SEARCHED)).any()
        largest = row["largest"]
        loose = searched and 0 < largest < MET
        row["loose by"] = 1.0 / largest if loose else float("nan")
        rows.append(row)
    columns = ["theorem", "runs", *KINDS, "largest", "reached on", "attainable", "attained on",
               "loose by"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _searched_by(frame: pd.DataFrame, index) -> str:
    """A searched run's search and run: " by adaptive, run <id>"."""
    method = column(frame, "params.dataset.method")[index]
    shown = "search" if method is None or pd.isna(method) else str(method)
    return f" by {shown}, run {frame.loc[index, 'run_id']}"


def frontier_section(frame: pd.DataFrame) -> str:
    """The report's section: the table as markdown, with what its columns mean ("" when the runs
    log no mistake bound)."""
    table = frontier_table(frame)
    if table.empty:
        return ""
    lines = [
        "",
        "## Tightness frontier",
        "",
        "Per theorem: the largest mistakes / bound any run reached on each kind of instance "
        "(fixed data; the restricted game, `order=adversarial`, where the adversary orders "
        "given examples; a constructive game, whose adversary makes them; an instance a "
        "search found, `dataset=search`, with its search and the run whose artifact "
        "`dataset/instance.csv` it is), the run that "
        "reached the largest, and the ratio a lower-bound construction provably attains. "
        '"vacuous": logged, but vacuous on every such run; "—": no such run. A theorem far '
        "below its attainable value is the one to study.",
        "",
        "| theorem | runs | fixed data | restricted game | constructive game | searched "
        "| reached on | provably attainable | attained on |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for row in table.itertuples(index=False):
        cells = [row.theorem, str(row.runs), *row[2:6], row[7], row[8], row[9]]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    loose = table[table["loose by"].notna()]
    if not loose.empty:
        lines += ["", f"Searched, and every instance tried stalls below {MET:g} (the searches "
                  "did not find the worst case, or the theorem is loose there):", ""]  # fmt: skip
        for row in loose.itertuples(index=False):
            lines.append(f"- {row.theorem} looks loose by ×{row[-1]:.3g} (its best ratio "
                         f"{row.largest:.4g}, on {row[7]})")  # fmt: skip
    return "\n".join(lines) + "\n"
