"""The UI's runs search of a big study, answered a page at a time.

MLflow's SQL for a page of runs joins every run of the experiment, removes duplicates and sorts
them all before it keeps the page: the UI's first page of a 697,792-run study by start time took
21.9 s, and sorted by a metric, as lincls's view is, SQLite reads the metric's rows once for
every run (a 100,000-run study did not answer in 11 minutes). For the searches the UI makes of a
study — runs of one experiment, filtered by tags (``=``, ``!=``), ordered by start time or by
one metric — this module finds the page's run ids with a query that reads the runs in the order
of an index (``lincls.tracking.indexes``) and stops at the page's end, then has MLflow answer
for those runs alone (``attributes.run_id IN (…)``, in no order: sorted by a metric, MLflow's
SQL reads the metric's rows once a run even for a page of ids), put in the page's order: MLflow's
own rows and JSON, and MLflow's page token, with the offset of this page.

The order is MLflow's (``_get_orderby_clauses`` of its SQLAlchemy store): by a metric, runs with
a value first, then those whose value is NaN, then those without the metric, each part by value,
then start time (newest first), then run id; by start time, runs with one first. Each part is
one query (``segments``); a page that crosses from one to the next reads on in the next. Any
other search (several experiments, another filter or order, deleted runs, a store these queries
are not written for) goes to MLflow as it came. ``tests/test_ui_paging.py`` pages through
stores with ties, NaN and missing metrics, missing tags and deleted runs, and compares every page
with MLflow's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

ACTIVE_ONLY = (None, 1, "ACTIVE_ONLY")  # the proto's default view type, as JSON may give it
TAG_COMPARATORS = ("=", "!=")
MAX_PAGE = 50_000  # a page larger than this is MLflow's to answer (the ids go into one filter)


@dataclass(frozen=True)
class Search:
    """A runs search this module answers: one experiment's active runs with every tag
    comparison of ``tags`` ((key, comparator, value)), ordered by ``metric`` (None: by start
    time; ``natural``: MLflow's default order, no order asked) ascending or not."""

    experiment_id: int
    tags: tuple[tuple[str, str, str], ...]
    metric: str | None
    ascending: bool
    natural: bool = False


def plan(request: Mapping[str, Any]) -> Search | None:
    """The ``Search`` a runs-search request asks, or None when this module does not answer it."""
    from mlflow.utils.search_utils import SearchUtils

    experiments = request.get("experiment_ids") or []
    if len(experiments) != 1 or not str(experiments[0]).isdigit():
        return None
    if request.get("run_view_type") not in ACTIVE_ONLY:
        return None
    try:
        parsed = SearchUtils.parse_search_filter(request.get("filter") or "")
    except Exception:  # MLflow answers a filter it cannot parse, with its own message
        return None
    tags = []
    for comparison in parsed:
        if comparison.get("type") != "tag" or comparison.get("comparator") not in TAG_COMPARATORS:
            return None
        if not isinstance(comparison.get("value"), str):
            return None
        tags.append((comparison["key"], comparison["comparator"], comparison["value"]))
    order = request.get("order_by") or []
    if len(order) > 1:
        return None
    metric, ascending, natural = None, False, not order
    if order:
        try:
            kind, key, ascending = SearchUtils.parse_order_by_for_search_runs(order[0])
            key = SearchUtils.translate_key_alias(key)
        except Exception:
            return None
        if kind == "metric":
            metric = key
        elif not (kind == "attribute" and key == "start_time"):
            return None
    return Search(int(experiments[0]), tuple(tags), metric, bool(ascending), natural)


def segments(search: Search) -> list[tuple[str, str, str, dict[str, Any]]]:
    """The parts of the search's order, each (FROM, WHERE, ORDER BY, bound values)."""
    where = ["r.experiment_id = :experiment_id", "r.lifecycle_stage = 'active'"]
    values: dict[str, Any] = {"experiment_id": search.experiment_id}
    for k, (key, comparator, value) in enumerate(search.tags):
        where.append(
            f"EXISTS (SELECT 1 FROM tags t WHERE t.run_uuid = r.run_uuid "
            f"AND t.key = :tag_key{k} AND t.value {comparator} :tag_value{k})"
        )
        values[f"tag_key{k}"], values[f"tag_value{k}"] = key, value
    runs = " AND ".join(where)
    direction = "ASC" if search.ascending else "DESC"
    if search.natural:
        return [("runs r", runs, "r.start_time DESC, r.run_uuid", values)]
    if search.metric is None:
        return [
            ("runs r", f"{runs} AND r.start_time IS NOT NULL",
             f"r.start_time {direction}, r.run_uuid", values),
            ("runs r", f"{runs} AND r.start_time IS NULL", "r.run_uuid", values),
        ]  # fmt: skip
    # CROSS JOIN: SQLite reads the metric's index first, in order, and stops at the page's end
    measured = "latest_metrics m CROSS JOIN runs r"
    joined = f"r.run_uuid = m.run_uuid AND m.key = :metric AND {runs}"
    by_value = f"m.value {direction}, r.start_time DESC, r.run_uuid"
    values = {**values, "metric": search.metric, "nan": True, "number": False}
    return [
        (measured, f"{joined} AND m.is_nan = :number", by_value, values),
        (measured, f"{joined} AND m.is_nan = :nan", by_value, values),
        ("runs r", f"{runs} AND NOT EXISTS (SELECT 1 FROM latest_metrics m WHERE "
         "m.run_uuid = r.run_uuid AND m.key = :metric)", "r.start_time DESC, r.run_uuid", values),
    ]  # fmt: skip


def page_ids(connection: Any, search: Search, offset: int, size: int) -> list[str]:
    """The run ids of the search's runs from ``offset`` on, at most ``size`` of them (ask one
    more than a page to know whether another follows), in MLflow's order; ``connection`` a
    SQLAlchemy connection to the store."""
    import sqlalchemy

    found: list[str] = []
    skip = offset
    for source, where, order, values in segments(search):
        rows = connection.execute(
            sqlalchemy.text(
                f"SELECT r.run_uuid FROM {source} WHERE {where} ORDER BY {order} "
                "LIMIT :limit OFFSET :offset"
            ),
            {**values, "limit": size - len(found), "offset": skip},
        ).fetchall()
        found.extend(row[0] for row in rows)
        if len(found) >= size:
            break
        if rows:
            skip = 0  # this part ended within the page: the next one is read from its start
        else:  # the offset is past this part: how far past
            count = connection.execute(
                sqlalchemy.text(f"SELECT COUNT(*) FROM {source} WHERE {where}"), values
            ).scalar()
            skip = max(0, skip - int(count))
    return found


def _respond(start_response: Callable, status: str, headers: list, body: bytes) -> list[bytes]:
    kept = [(name, value) for name, value in headers if name.lower() != "content-length"]
    start_response(status, [*kept, ("Content-Length", str(len(body)))])
    return [body]


def answer(
    app: Callable, environ: dict, start_response: Callable, body: bytes, engine: Any
) -> Iterable[bytes] | None:
    """The runs search of ``body`` (JSON) answered through ``app`` for the page's runs only, or
    None: this module does not answer it (the caller passes it to MLflow as it came)."""
    import io

    from mlflow.utils.search_utils import SearchUtils

    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return None
    search = plan(request) if isinstance(request, dict) else None
    size = request.get("max_results") if search is not None else None
    if search is None or not isinstance(size, int) or not 0 < size <= MAX_PAGE:
        return None
    try:
        offset = SearchUtils.parse_start_offset_from_page_token(request.get("page_token"))
        with engine.connect() as connection:
            ids = page_ids(connection, search, offset, size + 1)
    except Exception:  # a token or a store this module cannot read: MLflow's answer
        return None
    page = ids[:size]
    if not page:
        return _respond(start_response, "200 OK", [("Content-Type", "application/json")], b"{}")
    listed = ", ".join("'" + run_id.replace("'", "''") + "'" for run_id in page)
    # no order asked of MLflow: sorted by a metric, its SQL would still scan the metric's rows
    # once per run of the page; the runs are put in the page's order below
    asked = {key: value for key, value in request.items() if key not in ("page_token", "order_by")}
    asked.update(filter=f"attributes.run_id IN ({listed})", max_results=len(page))
    rewritten = json.dumps(asked).encode()
    environ["wsgi.input"] = io.BytesIO(rewritten)
    environ["CONTENT_LENGTH"] = str(len(rewritten))
    started: list = []
    chunks = app(environ, lambda status, headers, *rest: started.append((status, headers)))
    try:
        raw = b"".join(chunks)
    finally:
        getattr(chunks, "close", lambda: None)()
    status, headers = started[0]
    if not status.startswith("200"):
        return _respond(start_response, status, headers, raw)
    result = json.loads(raw or b"{}")
    position = {run_id: k for k, run_id in enumerate(page)}
    result["runs"] = sorted(result.get("runs", []), key=lambda run: position[run["info"]["run_id"]])
    result.pop("next_page_token", None)
    if len(ids) > size:
        token = SearchUtils.create_page_token(offset + size)
        result["next_page_token"] = token.decode() if isinstance(token, bytes) else token
    return _respond(start_response, status, headers, json.dumps(result).encode())
