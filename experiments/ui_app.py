"""The MLflow UI as lincls serves it: MLflow's own server, opening on lincls's view of the runs.

MLflow's UI keeps a browser-side switch between its GenAI and model-training pages, stored in
the browser (``localStorage["mlflow.workflowType_v1"]``) and GenAI until someone flips it; it wins
over the experiment's kind tag, so a first visit clicking the ``lincls`` experiment lands on an
empty traces page. It also keeps each experiment's runs table (columns, widths, sort, filter,
charts) in the browser, under ``MLFLOW_TABLE_KEY``, and opens an experiment it has no state for
on its default columns (name, date, dataset, source: no metric). This app is MLflow's server
(``mlflow.server``, every route unchanged) whose UI page

- sets the switch to model training when the browser has no choice stored yet, and keeps
  MLflow's Assistant panel closed on a first visit (``ASSISTANT_OPENED_KEY``);
- gives every experiment that carries lincls's shared view (``tracking.VIEW_TAG``) that view as
  its table's state, when the browser has none stored for it yet: a click on the experiment then
  opens the view, and a researcher who changes the table keeps their changes;

and which answers the UI's runs search with pages of ``RUNS_PAGE`` runs (the UI asks for 100 and
shows "Load more" after them), a study's page found from the store's indexes where
``ui_search`` answers (MLflow sorts a whole study to give a page of it), and the UI's question
for the signed-in user (this server has no sign-in: an empty answer, where MLflow's server
answers 404 on every page load).

A run keeps its figure and margin histogram in its record, not as files
(``lincls.tracking.record``): asked for one of them (``get-artifact``), this server answers
with the text the record stands for, the figure drawn as the run drew it, with the headers
MLflow sends a file with; the run's artifact listing shows them beside its files.

Registered as the ``mlflow.app`` plugin ``lincls`` (pyproject.toml), so ``mlflow server
--app-name lincls`` serves it; ``lincls ui``, ``make ui`` and ``make server`` do.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lincls import tracking
from lincls.experiments import ui_search
from lincls.tracking import reader
from lincls.tracking.indexes import add_indexes
from lincls.tracking.record import recorded_artifacts

WORKFLOW_KEY = "mlflow.workflowType_v1"  # MLflow's useLocalStorage key: f"{key}_v{version}"
WORKFLOW_DEFAULT = "machine_learning"
# MLflow's UI opens its Assistant panel beside the page on a first visit to a server on
# localhost (the panel takes a quarter of a 1400 px window), then sets this flag; no server
# setting turns that off. Set first, the panel stays closed: its button (bottom right) opens it.
ASSISTANT_OPENED_KEY = "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1"
DEFAULTS = {WORKFLOW_KEY: json.dumps(WORKFLOW_DEFAULT), ASSISTANT_OPENED_KEY: json.dumps(True)}
SCRIPT = (
    f"<script>try{{var d={json.dumps(DEFAULTS)};for(var k in d)"
    "if(window.localStorage.getItem(k)===null)window.localStorage.setItem(k,d[k])}"
    "catch(e){}</script>"
)
# MLflow's LocalStorageUtils key of an experiment page's state: its scope is the page and the
# JSON list of the experiment ids shown (one here), its item the component state.
MLFLOW_TABLE_KEY = "MLflowLocalStorage-1.1-ExperimentPage-{ids}-ReactComponentState"
RUNS_SEARCH = "/ajax-api/2.0/mlflow/runs/search"  # the UI's runs search (clients use /api/)
RUNS_PAGE = 1000
CURRENT_USER = "/ajax-api/2.0/mlflow/users/current"
MAX_VIEWS = 1000  # experiments looked at for a view when the page is served


def table_key(experiment_id: str) -> str:
    """Where MLflow's UI keeps the runs table's state of one experiment in the browser."""
    return MLFLOW_TABLE_KEY.format(ids=json.dumps([str(experiment_id)]))


def views_of(experiments: Iterable[Any]) -> dict[str, str]:
    """The runs-table state (a JSON string) of each experiment carrying lincls's view, by id."""
    views = {}
    for experiment in experiments:
        tag = (experiment.tags or {}).get(tracking.VIEW_TAG)
        if not tag:
            continue
        try:
            envelope = json.loads(tag)
            state = envelope["state"] if isinstance(envelope, dict) and "state" in envelope else tag
            json.loads(state)
        except (ValueError, TypeError):
            continue  # not a view lincls wrote: leave the browser's default
        views[str(experiment.experiment_id)] = state
    return views


def seed_script(views: Mapping[str, str]) -> str:
    """A script storing each experiment's view as its table state where the browser has none."""
    if not views:
        return ""
    pairs = {table_key(experiment_id): state for experiment_id, state in views.items()}
    # "</" would end the script element early: JSON lets it be written "<\/"
    payload = json.dumps(pairs).replace("</", "<\\/")
    return (
        f"<script>try{{var v={payload};for(var k in v)"
        "if(window.localStorage.getItem(k)===null)window.localStorage.setItem(k,v[k])}"
        "catch(e){}</script>"
    )


def with_default_workflow(html: bytes, views: Mapping[str, str] | None = None) -> bytes:
    """The UI page with the script that sets the default workflow (and ``views``, by
    ``seed_script``), first thing in its head."""
    marker = b"<head>"
    at = html.find(marker)
    if at < 0 or SCRIPT.encode() in html:
        return html
    at += len(marker)
    inserted = (SCRIPT + seed_script(views or {})).encode()
    return html[:at] + inserted + html[at:]


def _stored_views() -> dict[str, str]:
    """The views of the experiments in the server's store (none if the store cannot say)."""
    try:
        from mlflow.entities import ViewType
        from mlflow.server.handlers import _get_tracking_store

        found = _get_tracking_store().search_experiments(
            view_type=ViewType.ACTIVE_ONLY, max_results=MAX_VIEWS
        )
    except Exception:  # the page must load whatever the store says: without the views
        return {}
    return views_of(found)


def _inject(response: Any) -> Any:
    """Flask ``after_request``: put the scripts into the UI's HTML page (200, text/html)."""
    if response.status_code != 200 or response.mimetype != "text/html":
        return response
    response.direct_passthrough = False  # a file sent as is: read it to change it
    response.set_data(with_default_workflow(response.get_data(), _stored_views()))
    return response


def larger_page(body: bytes, page: int = RUNS_PAGE) -> bytes:
    """A runs search's JSON body asking for at least ``page`` runs (the body as is if not JSON)."""
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return body
    if not isinstance(request, dict):
        return body
    asked = request.get("max_results")
    if isinstance(asked, int) and asked >= page:
        return body
    return json.dumps({**request, "max_results": page}).encode()


_ENGINES: dict[str, Any] = {}


def _store_engine() -> Any:
    """An engine on the server's store when ``ui_search`` reads it (a database of the schema
    ``tracking.reader`` reads), else None; made once, and the store's indexes with it."""
    from mlflow.server import BACKEND_STORE_URI_ENV_VAR

    uri = os.environ.get(BACKEND_STORE_URI_ENV_VAR, "")  # set by ``mlflow server``
    if uri not in _ENGINES:
        engine = reader.engine_for(uri) if uri else None
        if engine is not None:
            add_indexes(lambda sql: _execute(engine, sql))
        _ENGINES[uri] = engine
    return _ENGINES[uri]


def _execute(engine: Any, sql: str) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql(sql)


def larger_pages(app: Callable) -> Callable:
    """WSGI middleware: the UI's runs searches (``RUNS_SEARCH``, POST) ask ``RUNS_PAGE`` runs,
    and a study's page is found by ``ui_search`` where it answers."""

    def wrapped(environ: dict, start_response: Callable) -> Any:
        if environ.get("PATH_INFO") == RUNS_SEARCH and environ.get("REQUEST_METHOD") == "POST":
            length = environ.get("CONTENT_LENGTH") or ""
            if not length.isdigit() or int(length) == 0:  # a body of unknown length: as is
                return app(environ, start_response)
            body = larger_page(environ["wsgi.input"].read(int(length)))
            engine = _store_engine()
            answered = engine and ui_search.answer(app, environ, start_response, body, engine)
            if answered is not None:
                return answered
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return app(environ, start_response)

    wrapped.lincls_larger_pages = True
    return wrapped


GET_ARTIFACT = "/get-artifact"  # the route a description's image and the artifact view read
LIST_ARTIFACTS = "/mlflow/artifacts/list"  # under /api/2.0 and /ajax-api/2.0


def _recorded(run_id: str | None) -> dict[str, str]:
    """The artifacts the record of run ``run_id`` stands for (none: no such run, or no record)."""
    if not run_id:
        return {}
    try:
        from mlflow.server.handlers import _get_tracking_store

        tags = _get_tracking_store().get_run(run_id).data.tags
    except Exception:  # MLflow's own route answers for a run it cannot find
        return {}
    return recorded_artifacts(tags)


def _recorded_artifact() -> Any:
    """Flask ``before_request``: a ``get-artifact`` of an artifact a run's record stands for is
    answered with its text (as MLflow sends a file); anything else goes on to MLflow."""
    from flask import Response, request

    path = request.args.get("path")
    if not request.path.endswith(GET_ARTIFACT) or not path:
        return None
    text = _recorded(request.args.get("run_id") or request.args.get("run_uuid")).get(path)
    if text is None:
        return None
    from mlflow.server.handlers import _content_disposition_attachment
    from mlflow.utils.mime_type_utils import _guess_mime_type

    kind = _guess_mime_type(path)
    response = Response(text.encode("utf-8"), mimetype=kind)
    response.headers["Content-Disposition"] = _content_disposition_attachment(path.split("/")[-1])
    response.headers["X-Content-Type-Options"] = "nosniff"  # as MLflow sends an artifact
    response.headers["Content-Type"] = kind
    return response


def listed(files: list[dict], recorded: Mapping[str, str], folder: str) -> list[dict]:
    """An artifact listing of ``folder`` ("" the root: MLflow's entries, ``path``, ``is_dir``,
    ``file_size``) with the recorded artifacts in it, and their folders, that it lacks."""
    prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
    known = {entry.get("path") for entry in files}
    added = []
    for path, text in sorted(recorded.items()):
        if not path.startswith(prefix):
            continue
        head, slash, _ = path[len(prefix) :].partition("/")
        entry = (
            {"path": prefix + head, "is_dir": True}
            if slash
            else {"path": path, "is_dir": False, "file_size": len(text.encode("utf-8"))}
        )
        if entry["path"] not in known:
            known.add(entry["path"])
            added.append(entry)
    return [*files, *added]


def _with_recorded_listing(response: Any) -> Any:
    """Flask ``after_request``: a run's artifact listing shows what its record stands for."""
    from flask import request

    if not request.path.endswith(LIST_ARTIFACTS) or response.status_code != 200:
        return response
    recorded = _recorded(request.args.get("run_id") or request.args.get("run_uuid"))
    if not recorded:
        return response
    try:
        body = json.loads(response.get_data())
    except ValueError:
        return response
    body["files"] = listed(body.get("files", []), recorded, request.args.get("path") or "")
    response.direct_passthrough = False
    response.set_data(json.dumps(body))
    return response


def _current_user() -> Any:
    """No user signed in: the server has no authentication (the UI then shows no account)."""
    from flask import jsonify

    return jsonify({})


def create_app() -> Any:
    """The ASGI app ``mlflow server --app-name lincls`` runs (a factory: uvicorn --factory)."""
    from mlflow.server import app as flask_app
    from mlflow.server.fastapi_app import create_fastapi_app

    if _inject not in flask_app.after_request_funcs.get(None, []):
        flask_app.after_request(_inject)
        flask_app.after_request(_with_recorded_listing)
    if _recorded_artifact not in flask_app.before_request_funcs.get(None, []):
        flask_app.before_request(_recorded_artifact)
    if not getattr(flask_app.wsgi_app, "lincls_larger_pages", False):
        flask_app.wsgi_app = larger_pages(flask_app.wsgi_app)
    _store_engine()  # the store's indexes made now, not on the first page asked
    if "lincls_current_user" not in flask_app.view_functions:
        flask_app.add_url_rule(CURRENT_USER, "lincls_current_user", _current_user)
    return create_fastapi_app(flask_app)
