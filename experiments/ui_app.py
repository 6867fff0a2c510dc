"""The MLflow UI as lincls serves it: MLflow's own server, opening on model training.

MLflow's UI keeps a browser-side switch between its GenAI and model-training pages, stored in
the browser (``localStorage["mlflow.workflowType_v1"]``) and GenAI until someone flips it; it wins
over the experiment's kind tag, so a first visit clicking the ``lincls`` experiment lands on an
empty traces page. This app is MLflow's server (``mlflow.server``, every route unchanged) whose
UI page sets that switch to model training when the browser has no choice stored yet: a
researcher who flips it back keeps their choice.

Registered as the ``mlflow.app`` plugin ``lincls`` (pyproject.toml), so ``mlflow server
--app-name lincls`` serves it; ``lincls ui``, ``make ui`` and ``make server`` do.
"""

from __future__ import annotations

import json
from typing import Any

WORKFLOW_KEY = "mlflow.workflowType_v1"  # MLflow's useLocalStorage key: f"{key}_v{version}"
WORKFLOW_DEFAULT = "machine_learning"
SCRIPT = (
    f"<script>try{{if(window.localStorage.getItem({json.dumps(WORKFLOW_KEY)})===null)"
    f"window.localStorage.setItem({json.dumps(WORKFLOW_KEY)},"
    f"JSON.stringify({json.dumps(WORKFLOW_DEFAULT)}))}}catch(e){{}}</script>"
)


def with_default_workflow(html: bytes) -> bytes:
    """The UI page with the script that sets the default workflow, first thing in its head."""
    marker = b"<head>"
    at = html.find(marker)
    if at < 0 or SCRIPT.encode() in html:
        return html
    at += len(marker)
    return html[:at] + SCRIPT.encode() + html[at:]


def _inject(response: Any) -> Any:
    """Flask ``after_request``: put the script into the UI's HTML page (200, text/html)."""
    if response.status_code != 200 or response.mimetype != "text/html":
        return response
    response.direct_passthrough = False  # a file sent as is: read it to change it
    response.set_data(with_default_workflow(response.get_data()))
    return response


def create_app() -> Any:
    """The ASGI app ``mlflow server --app-name lincls`` runs (a factory: uvicorn --factory)."""
    from mlflow.server import app as flask_app
    from mlflow.server.fastapi_app import create_fastapi_app

    if _inject not in flask_app.after_request_funcs.get(None, []):
        flask_app.after_request(_inject)
    return create_fastapi_app(flask_app)
