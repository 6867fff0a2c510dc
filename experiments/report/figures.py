"""The report's pass over every run it covers: each run's picture and its colour in the UI.

- A run's figure (``lincls.figures``: an SVG of its cumulative mistakes under its tightest a
  priori bound and Novikoff's two lemmas) opens its description (the run page's Overview), so
  the run's page shows it on opening; the UI draws it from the run's record when it is asked
  for (``lincls.tracking.record``). Only runs whose description shows no figure get one here:
  a run made before runs kept records, its figure drawn from its logged curves (read in one
  query) as a file among its artifacts, and a run with a record, its description alone.
- Each run without a colour gets one (the tag ``mlflow.runColor``, which MLflow's UI draws the
  run in), distinct from the colours the report's other runs have: MLflow otherwise picks a
  run's colour by a hash of its id among 29, and two runs of ten often share one.

Which runs need either is read with the runs (``FIGURE_TAGS``: a fact of each description in
the reader's one pass over the tags), or in one query over the whole study (no call per run);
the tags are written in one transaction where lincls writes the store's rows (SQLite,
PostgreSQL); through MLflow's client, a call per run that needs a tag, elsewhere.
"""

from __future__ import annotations

import colorsys
import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from lincls import tracking
from lincls.figures import CURVES, FIGURE_FILE, draw_run_figure, shows_figure, with_figure
from lincls.tracking import reader
from lincls.tracking.postgres_runs import open_rows
from lincls.tracking.record import RECORD_TAG
from lincls.tracking.record_rows import histories
from lincls.tracking.tags import NOTE_TAG

COLOR_TAG = "mlflow.runColor"
# Kelly's colours of maximum contrast, without white and black: 20 that tell apart at a glance.
PALETTE = (
    "#f3c300", "#875692", "#f38400", "#a1caf1", "#be0032", "#c2b280", "#848482", "#008856",
    "#e68fac", "#0067a5", "#f99379", "#604e97", "#f6a600", "#b3446c", "#dcd300", "#882d17",
    "#8db600", "#654522", "#e25822", "#2b3d26",
)  # fmt: skip
# The head of a description where a figure stands (its markdown is ~160 characters).
NOTE_HEAD = 400
# SQL: whether a description's head shows a figure of the run (LIKE's "_" matches itself too).
SHOWS_FIGURE_SQL = (
    f"CASE WHEN substr(value, 1, {NOTE_HEAD}) LIKE "
    "'%](get-artifact?path=mistakes_and_bound.%&run_uuid=' || run_uuid || ')%' "
    "THEN '1' ELSE '0' END"
)
SEARCH_IDS = 100  # run ids in one search's filter, on a store read through MLflow's calls
# The tags the report reads with its runs (``collect.select_runs``' ``tag_sql``), in the reader's
# one pass over the tags: whether each description shows its figure, and each run's colour
FIGURE_TAGS = {NOTE_TAG: SHOWS_FIGURE_SQL, COLOR_TAG: "value"}


def color(index: int) -> str:
    """The ``index``-th colour: Kelly's 20, then hues a golden angle apart (distinct, if closer)."""
    if index < len(PALETTE):
        return PALETTE[index]
    hue = (index * 0.618033988749895) % 1.0
    lightness = (0.35, 0.5, 0.65)[index % 3]
    r, g, b = colorsys.hls_to_rgb(hue, lightness, 0.75)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def run_colors(runs: pd.DataFrame, colors: pd.Series) -> dict[str, str]:
    """A colour for each run of ``runs`` (in their order) that has none in ``colors`` (each
    run's, NaN: none): first the colours no run has, then ``color``'s again from the start.
    ``color`` gives a few thousand distinct colours (rounded to 8 bits a channel), so a study of
    more runs repeats them; a report of 697,792 runs, 101,952 coloured before, ran out of
    unused ones."""
    used = set(colors.dropna().unique())
    lacking = runs["run_id"].to_numpy()[colors.isna().to_numpy()]
    fresh = (c for c in (color(i) for i in range(len(lacking) + len(used) + 1)) if c not in used)
    colours = itertools.chain(fresh, (color(i) for i in itertools.count()))
    return {run_id: next(colours) for run_id in lacking}


def _chunks(ids: Sequence[str], size: int) -> list[list[str]]:
    return [list(ids[k : k + size]) for k in range(0, len(ids), size)]


def _sql_state(engine, run_ids: Sequence[str]) -> tuple[set[str], dict[str, str]]:
    """(the runs whose description shows their figure, each run's colour), in one query."""
    import sqlalchemy

    wanted = set(run_ids)
    # every run's two tags in one scan of the table ("+key": not a lookup of each row through
    # the key's index, 45 s against 14 s for a million runs' 25 million tags), kept if wanted
    scan = "+key" if engine.dialect.name == "sqlite" else "key"  # "+": SQLite's own syntax
    sql = (
        f"SELECT run_uuid, key, CASE WHEN key = :note THEN {SHOWS_FIGURE_SQL} ELSE value END "
        f"FROM tags WHERE {scan} IN (:note, :color)"
    )
    shown: set[str] = set()
    colors: dict[str, str] = {}
    with engine.connect() as db:
        result = db.execute(sqlalchemy.text(sql), {"note": NOTE_TAG, "color": COLOR_TAG})
        try:  # the driver's own tuples: SQLAlchemy's rows cost ~10 µs each
            found = result.cursor.fetchall()
        finally:
            result.close()
    for run_id, key, value in found:
        if run_id not in wanted:
            continue
        if key == NOTE_TAG and value == "1":
            shown.add(run_id)
        elif key == COLOR_TAG and value:
            colors[run_id] = value
    return shown, colors


State = tuple[np.ndarray, pd.Series]  # per run: whether it shows its figure; its colour (NaN)


def figure_state(runs: pd.DataFrame) -> State | None:
    """Each run's state from the columns of ``FIGURE_TAGS`` read with ``runs``, which are taken
    out of it (no other table shows them): whether its description shows its figure, and its
    colour (NaN: none). None where neither was read (runs searched through MLflow, or no run
    with either tag: ``picture_runs`` reads them)."""
    shown, colors = f"tags.{NOTE_TAG}", f"tags.{COLOR_TAG}"
    if shown not in runs.columns and colors not in runs.columns:
        return None
    found = np.zeros(len(runs), dtype=bool)
    if shown in runs.columns:
        found = (runs.pop(shown) == "1").to_numpy(dtype=bool, na_value=False)
    given = runs.pop(colors) if colors in runs.columns else pd.Series(np.nan, index=runs.index)
    return found, given.where(given.notna() & (given != ""), np.nan)


def _aligned(runs: pd.DataFrame, shown: set[str], colors: Mapping[str, str]) -> State:
    """``figure_state``'s form of a state read by run id."""
    ids = runs["run_id"]
    return ids.isin(shown).to_numpy(dtype=bool), ids.map(dict(colors))  # NaN: none


def _search_tags(client, experiment_id: str, run_ids: Sequence[str]) -> dict[str, dict]:
    """Each run's tags through MLflow's search, ``SEARCH_IDS`` runs a call."""
    found: dict[str, dict] = {}
    for chunk in _chunks(run_ids, SEARCH_IDS):
        ids = ", ".join(f"'{run_id}'" for run_id in chunk)
        for run in client.search_runs([experiment_id], f"attributes.run_id IN ({ids})"):
            found[run.info.run_id] = run.data.tags
    return found


def _notes(
    engine, client, experiment_id: str, run_ids: Sequence[str]
) -> tuple[dict[str, str], set[str]]:
    """The whole descriptions of ``run_ids``, and those of them that have a record."""
    if engine is None:
        tags = _search_tags(client, experiment_id, run_ids)
        notes = {run_id: found.get(NOTE_TAG) or "" for run_id, found in tags.items()}
        return notes, {run_id for run_id, found in tags.items() if RECORD_TAG in found}
    import sqlalchemy

    statement = sqlalchemy.text(
        "SELECT run_uuid, key, value FROM tags WHERE key IN :keys AND run_uuid IN :ids"
    ).bindparams(*(sqlalchemy.bindparam(name, expanding=True) for name in ("keys", "ids")))
    notes = dict.fromkeys(run_ids, "")
    recorded = set()
    with engine.connect() as db:
        for chunk in _chunks(run_ids, 500):
            bound = {"keys": [NOTE_TAG, RECORD_TAG], "ids": chunk}
            for run_id, key, value in db.execute(statement, bound):
                if key == NOTE_TAG:
                    notes[run_id] = value
                else:
                    recorded.add(run_id)
    return notes, recorded


def _curves(engine, client, run_ids: Sequence[str]) -> dict[str, dict[str, list]]:
    """``CURVES`` of ``run_ids``: {run_id: {name: points}}."""
    if engine is not None:
        by_key = reader.curves_of(engine, run_ids, CURVES)
    else:
        by_key = histories(client, run_ids, CURVES)
    return {run_id: {key: by_key[key][run_id] for key in CURVES} for run_id in run_ids}


def draw_missing(engine, client, experiment_id: str, runs: pd.DataFrame) -> dict[str, str]:
    """Show the figure of each run of ``runs`` (whose description shows none) at the head of
    its description, drawing it as a file for a run without a record (the UI draws a recorded
    run's from its record); the descriptions to set, by run id."""
    if runs.empty:
        return {}
    run_ids = list(runs["run_id"])
    notes, recorded = _notes(engine, client, experiment_id, run_ids)
    unrecorded = [run_id for run_id in run_ids if run_id not in recorded]
    curves = _curves(engine, client, unrecorded) if unrecorded else {}
    bound = dict(zip(run_ids, runs.get("tags.bound.tightest", [None] * len(runs)), strict=True))
    for run_id in unrecorded:
        name = bound[run_id] if isinstance(bound[run_id], str) else ""
        tracking.log_texts(client, run_id, {FIGURE_FILE: draw_run_figure(curves[run_id], name)})
    return {run_id: with_figure(notes[run_id], run_id) for run_id in run_ids}


def set_tags(client, uri: str, tags: Mapping[str, Mapping[str, str]]) -> None:
    """Set ``{run_id: {key: value}}``: one transaction where lincls writes the store's rows, else
    MLflow's calls, one a tag."""
    tags = {run_id: found for run_id, found in tags.items() if found}
    if not tags:
        return
    rows = open_rows(uri)
    if rows is not None:
        try:
            rows.set_tags(tags)
        finally:
            rows.close()
        return
    for run_id, found in tags.items():
        for key, value in found.items():
            client.set_tag(run_id, key, value)


def picture_runs(
    client, experiment_id: str, runs: pd.DataFrame, state: State | None = None
) -> tuple[int, int]:
    """The report's pass over its runs: figures drawn for the runs without one (and shown in
    their descriptions), colours set; (figures drawn, colours set). ``state``: their
    ``figure_state``, read with them where the store is read with SQL (None: read here)."""
    uri = str(getattr(client, "tracking_uri", "") or "")
    engine = reader.engine_for(uri)
    try:
        if state is None and engine is not None:
            state = _aligned(runs, *_sql_state(engine, list(runs["run_id"])))
        elif state is None:
            tags = _search_tags(client, experiment_id, list(runs["run_id"]))
            shown = {r for r, found in tags.items() if shows_figure(found.get(NOTE_TAG), r)}
            colors = {r: found[COLOR_TAG] for r, found in tags.items() if found.get(COLOR_TAG)}
            state = _aligned(runs, shown, colors)
        shown_runs, colors = state
        notes = draw_missing(engine, client, experiment_id, runs[~shown_runs])
    finally:
        if engine is not None:
            engine.dispose()
    chosen = run_colors(runs, colors)
    tags: dict[str, dict[str, str]] = {}
    for run_id, note in notes.items():
        tags.setdefault(run_id, {})[NOTE_TAG] = note
    for run_id, value in chosen.items():
        tags.setdefault(run_id, {})[COLOR_TAG] = value
    set_tags(client, uri, tags)
    return len(notes), len(chosen)
