"""The tightness frontier: per theorem, the largest mistakes / bound any run reached, beside what
is provably attainable.

A run's instance is one of four kinds: fixed data (any order but the adversary's), the
restricted game (``order=adversarial``: the adversary only orders given examples), a
constructive game (``dataset=perceptron_game``, ``orthogonal_game``,
``multiclass_orthogonal_game``, ``disjunction_game``: the adversary makes the examples) and a
searched instance (``dataset=search``: the worst case a search found for the run's learner and
bound, ``experiment=frontier``), shown with its search and
run. Where searches ran and every instance tried stalls below 1 (below ``MET``), the theorem
looks loose by 1/ratio. Beside the largest ratio of each kind stands the ratio a known
lower-bound construction attains, or "unknown" where none is known to us. A theorem whose
frontier is far below its attainable value is the one to study: the runs did not find its worst
case, or the theorem is loose there.
"""

from __future__ import annotations

import pandas as pd

from lincls.config.games import GAME_SCHEMAS
from lincls.experiments.report.collect import column
from lincls.experiments.report.tables import TIGHTEST, bound_names, labels_of, orders_of

GAMES = tuple(GAME_SCHEMAS)  # the constructive games, by dataset name
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
    "multiclass_perceptron": (
        "→ 1",
        "multiclass orthogonal game (lincls.games.multiclass) with the bias feature, K = 2, as "
        "R/γ → ∞: ⌊2(R/γ)²⌋ mistakes against 2(R² + 1)/γ²; K/(2(K − 1)) without a bias",
    ),
    "mira_pa1_kesler": (
        "→ 1",
        "multiclass orthogonal game with the bias feature, K = 2, as R/γ → ∞ (max(2R², 1/M)/γ² "
        "is 2R²/γ² there)",
    ),
    "novikoff_2r": ("≥ ¼", "orthogonal game: ⌊(R/γ)²⌋ against (2R/γ)²; more is unknown"),
    # closed forms of lincls.games.ratios (derived there, checked against runs)
    "scw1": (
        "→ 1",
        "orthogonal game without a bias, ≥ 2 passes: 1/√(1 + φ²), → 1 as η → ½ "
        "(attained in the limit)",
    ),
    "cw": (
        "→ 1",
        "orthogonal game without a bias, ≥ 2 passes: 4/((1 + s)²(1 + 2φ²R²)), "
        "s = √(1 + 8φ²R²), → 1 as η → ½ (attained in the limit)",
    ),
    "alma": (
        "≥ ½",
        "orthogonal game, α = 1: N/(2N + 4), → ½ as N = ⌊(R/γ)²⌋ grows; at most ½ on this "
        "game, more is unknown",
    ),
    "projectron_plus": (
        "→ 1",
        "orthogonal game, R = 1, no bias: 1 − 2√(ηN), → 1 as η → 0 (attained in the limit)",
    ),
    "projectron_plus_paper": (
        "→ 1",
        "orthogonal game, R = 1, no bias: (1 − √(ηN))², → 1 as η → 0 (attained in the limit)",
    ),
    "forgetron": (
        "≥ ½",
        "orthogonal game, R = 1, N = (1/γ)² ≤ B, √N ≤ U: ½ exactly; at most ½ on this game, "
        "more is unknown",
    ),
}
# A theorem's options (learner.<key>) its domain ranges over: the frontier calls a theorem loose
# only where its runs tried two values or more of each, and a search or a game. A theorem not
# listed has options not searched yet; one listed with none is about one rule.
ONE_RULE = ("novikoff", "novikoff_bias", "novikoff_2r", "freund_schapire", "mohri_rostamizadeh",
            "kernel_novikoff", "pa", "romma")  # fmt: skip
DOMAIN: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(ONE_RULE, ()),
    "margin_perceptron": ("tau",),
    "cw": ("eta", "bias"),
    "scw1": ("eta", "C", "bias"),
    "scw2": ("eta", "C", "bias"),
    "alma": ("alpha",),
    "forgetron": ("budget",),
    "winnow1": ("alpha", "threshold"),
    "winnow2": ("alpha", "threshold"),
    "pa1": ("C",),
    "pa2": ("C",),
    "arow": ("r",),
    "second_order": ("a",),
    "projectron": ("eta",),
    "projectron_plus": ("eta",),
    "projectron_plus_paper": ("eta",),
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


def instance_labels(
    frame: pd.DataFrame, rows: list | None = None, learners: pd.Series | None = None
) -> pd.Series:
    """Each run as the frontier names it: learner, dataset and what sets its numbers; of the
    runs at index ``rows`` only (None: all), ``learners`` the frame's ``learner_labels`` if
    known (a label depends on the other runs: what varies among those of its rule)."""
    learners = labels_of(frame, learners)
    if rows is not None:  # a million runs' labels cost seconds; the frontier names a few
        frame, learners = frame.loc[rows], learners.loc[rows]
    dataset = column(frame, "params.dataset.name").fillna(column(frame, "tags.dataset"))
    labels = learners + " on " + dataset.fillna("?").astype(str)
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


def frontier_table(frame: pd.DataFrame, learners: pd.Series | None = None) -> pd.DataFrame:
    """One row per theorem the runs log (``bound.<theorem>``, the tightest of each family left
    out): runs that logged it, the largest ratio per kind of instance ("vacuous" where every
    such run found it vacuous, "—" where none logged it; a searched one names its search and
    run), the run that reached the largest, what is provably attainable, and the factor 1/ratio
    by which the theorem looks loose where searches ran and every run stalls below ``MET``
    (else NaN)."""
    kinds = instance_kinds(frame)
    learners = labels_of(frame, learners)
    settings = learner_settings(frame)  # once for the frame: each theorem counts its own
    of_kind = {kind: kinds == kind for kind in KINDS}  # once, not per theorem (1M texts each)
    rows = []
    for theorem in [b for b in bound_names(frame) if b not in TIGHTEST]:
        logged = column(frame, f"metrics.bound.{theorem}").notna()
        ratio = column(frame, f"metrics.bound_ratio.{theorem}").where(logged)
        row: dict[str, object] = {"theorem": theorem, "runs": int(logged.sum())}
        for kind in KINDS:
            here = logged & of_kind[kind]
            if not here.any():
                row[kind] = "—"
            elif ratio[here].notna().any():
                row[kind] = _fmt(float(ratio[here].max()))
                if kind == SEARCHED:
                    row[kind] += _searched_by(frame, ratio[here].idxmax())
            else:
                row[kind] = "vacuous"
        row["replay"] = ""
        if ratio.notna().any():
            top = ratio.idxmax()
            row["replay"] = replay_command(frame, top)
            row["largest"] = float(ratio[top])
            # the run's id: its config (every override) replays it
            label = instance_labels(frame, [top], learners)[top]
            row["reached on"] = f"{label} ({kinds[top]}, run {frame.loc[top, 'run_id']})"
        else:
            row["largest"], row["reached on"] = float("nan"), "vacuous on every run"
        if theorem in WINNOW:
            row["attainable"], row["attained on"] = _winnow_attainable(frame, theorem)
        elif row["largest"] == 1.0 and theorem not in ATTAINABLE:  # a run met the bound
            row["attainable"], row["attained on"] = "1", f"met by {row['reached on']}"
        else:
            row["attainable"], row["attained on"] = ATTAINABLE.get(theorem, ("unknown", UNKNOWN))
        row["searched over"], domain = searched_over(frame, logged, kinds, settings, theorem)
        largest = row["largest"]
        loose = domain and 0 < largest < MET and not _capped_by_a_game(row["attainable"])
        row["loose by"] = 1.0 / largest if loose else float("nan")
        tried = (logged & (of_kind[KINDS[2]] | of_kind[SEARCHED])).any()  # a game or search ran
        row["verdict"] = _verdict(row, domain, bool(tried))
        rows.append(row)
    columns = ["theorem", "runs", *KINDS, "largest", "reached on", "attainable", "attained on",
               "loose by", "searched over", "verdict", "replay"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def learner_settings(frame: pd.DataFrame) -> pd.Series:
    """Each run's learner setting as a number: equal for runs with equal learner options."""
    options = [c for c in frame.columns if c.startswith("params.learner.")]
    if not options:
        return pd.Series(0, index=frame.index)
    return frame.groupby(options, dropna=False, sort=False).ngroup()


def searched_over(
    frame: pd.DataFrame, logged: pd.Series, kinds: pd.Series, ids: pd.Series, theorem: str
) -> tuple[str, bool]:
    """What the runs that logged ``theorem`` tried (learner settings, ``ids`` from
    ``learner_settings``; games, searches, and the values of each option of its ``DOMAIN``), and
    whether that covers its domain: two values or more of each option, and a search or a
    constructive game."""
    here = frame.index[logged]
    settings = int(ids[here].nunique())
    games = int((kinds[here] == KINDS[2]).sum())
    searches = int((kinds[here] == SEARCHED).sum())
    parts = [f"{settings} learner setting{'s' if settings != 1 else ''}"]
    tried = {}
    for key in DOMAIN.get(theorem, ()):
        values = column(frame, f"params.learner.{key}")[here]
        values = values.astype(object).where(values.notna(), "null").astype(str).unique()
        tried[key] = len(values)
        parts.append(f"{key}: {', '.join(sorted(values, key=_numeric_first))}")
    parts += [f"{games} game run{'s' if games != 1 else ''}",
              f"{searches} search{'es' if searches != 1 else ''}"]  # fmt: skip
    domain = theorem in DOMAIN and all(n >= 2 for n in tried.values()) and games + searches > 0
    return "; ".join(parts), domain


def replay_command(frame: pd.DataFrame, index) -> str:
    """The ``lincls run`` command of the run at ``index``, from its logged config (its learner,
    dataset, passes, seed and order): the same config gives the same run."""
    words = ["lincls run"]
    for group in ("learner", "dataset"):
        name = column(frame, f"params.{group}.name")[index]
        if pd.isna(name):
            continue
        words.append(f"{group}={name}")
        for key in sorted(c for c in frame.columns if c.startswith(f"params.{group}.")):
            value = frame.at[index, key]
            if not key.endswith(".name") and not pd.isna(value):
                words.append(f"{key[len('params.') :]}={value}")
    for key in ("passes", "seed", "order"):
        value = column(frame, f"params.{key}")[index]
        if not pd.isna(value):
            words.append(f"{key}={value}")
    return " ".join(words)


def _numeric_first(value: str) -> tuple[int, float, str]:
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0.0, value)


def _capped_by_a_game(attainable: str) -> bool:
    """An attainable ratio below 1 that a game reaches and no more is known ("≥ ½"): a best ratio
    at that value is the game's, not a sign of a loose theorem."""
    return attainable.startswith("≥")


def _verdict(row: dict, domain: bool, searched: bool) -> str:
    """attained (a run's ratio is exactly 1); attained in the limit (a closed form → 1, and a run
    within ``MET`` of it); at most the game's value; looks loose (domain searched, below
    ``MET``); else the searched best, or the best of runs that searched nothing."""
    largest, attainable = row["largest"], str(row["attainable"])
    if pd.isna(largest):
        return "vacuous on every run"
    if attainable.startswith("→ 1") and largest >= MET:  # below 1 at every setting, → 1
        return f"attained in the limit (best run {_fmt(largest)})"
    if largest == 1.0:
        return "attained"
    if _capped_by_a_game(attainable):
        return f"the game gives {attainable[2:]}; best run {_fmt(largest)}"
    if not pd.isna(row["loose by"]):
        return f"looks loose by ×{row['loose by']:.3g} (domain searched)"
    if not searched:
        return f"best run {_fmt(largest)} (no search or game ran)"
    scope = "domain searched" if domain else "domain not searched"
    return f"searched best {_fmt(largest)} ({scope})"


def _searched_by(frame: pd.DataFrame, index) -> str:
    """A searched run's search and run: " by adaptive, run <id>"."""
    method = column(frame, "params.dataset.method")[index]
    shown = "search" if method is None or pd.isna(method) else str(method)
    return f" by {shown}, run {frame.loc[index, 'run_id']}"


def frontier_section(frame: pd.DataFrame, learners: pd.Series | None = None) -> str:
    """The report's section: the table as markdown, with what its columns mean ("" when the runs
    log no mistake bound)."""
    table = frontier_table(frame, learners)
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
        "below its attainable value is the one to study. The verdict: attained (a run met the "
        "bound exactly), attained in the limit (a closed form tends to 1 and a run came within "
        f"{MET:g} of it), the value a game gives where no more is known, looks loose (only where "
        "the theorem's domain was searched: two values or more of each of its options, and a "
        "search or a game), or the searched best; what was searched is listed below the table.",
        "",
        "| theorem | runs | fixed data | restricted game | constructive game | searched "
        "| reached on | provably attainable | attained on | verdict |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- | --- |",
    ]
    rows = table.to_dict("records")
    shown = ["theorem", "runs", *KINDS, "reached on", "attainable", "attained on", "verdict"]
    for row in rows:
        lines.append("| " + " | ".join(str(row[c]) for c in shown) + " |")
    lines += ["", "Searched, per theorem (the runs that logged it):", ""]
    for row in rows:
        best = f"; its best: `{row['replay']}`" if row["replay"] else ""
        lines.append(f"- {row['theorem']}: {row['searched over']}{best}")
    loose = [row for row in rows if not pd.isna(row["loose by"])]
    if loose:
        lines += ["", f"Searched over the domain, and every instance tried stalls below {MET:g} "
                  "(the searches did not find the worst case, or the theorem is loose there):",
                  ""]  # fmt: skip
        for row in loose:
            lines.append(f"- {row['theorem']} looks loose by ×{row['loose by']:.3g} (its best "
                         f"ratio {row['largest']:.4g}, on {row['reached on']})")  # fmt: skip
    return "\n".join(lines) + "\n"
