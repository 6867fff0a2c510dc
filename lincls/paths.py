"""Where lincls reads and writes: the project root, the tracking store, the certificate cache.

Plain path arithmetic, no MLflow: the evaluation layer needs the certificate cache's place
(beside a SQLite store) without importing the tracking layer.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The source tree lincls runs from (holding pyproject.toml), else the working directory."""
    here = Path(__file__).resolve().parents[1]
    return here if (here / "pyproject.toml").is_file() else Path.cwd().resolve()


def default_tracking_uri() -> str:
    """``sqlite:///<project>/results/mlflow.db``, an absolute URI."""
    return f"sqlite:///{project_root() / 'results' / 'mlflow.db'}"


def resolve_tracking_uri(uri: str | None = None) -> str:
    """The store to use: ``uri`` if given, else ``MLFLOW_TRACKING_URI``, else the default."""
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or default_tracking_uri()


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI, else None."""
    return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None


def default_cache_dir(uri: str | None = None) -> str:
    """The certificate cache: ``certificates/`` beside a SQLite store, else in ``results/``."""
    db = sqlite_path(resolve_tracking_uri(uri))
    root = db.parent if db is not None else project_root() / "results"
    return str(root / "certificates")
