"""Where lincls reads and writes: its home (the store, reports, caches), the source tree.

Plain path arithmetic, no MLflow: the evaluation layer needs the certificate cache's place
(beside a SQLite store) without importing the tracking layer.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path | None:
    """The source tree lincls runs from (holding pyproject.toml), else None (installed)."""
    here = Path(__file__).resolve().parents[1]
    return here if (here / "pyproject.toml").is_file() else None


def home() -> Path:
    """Where the default store, reports and caches go: ``$LINCLS_HOME``, else ``results/`` of
    the working directory (never the installed package's folder)."""
    return Path(os.environ.get("LINCLS_HOME") or "results").absolute()


def default_tracking_uri() -> str:
    """``sqlite:///<home>/mlflow.db``, an absolute URI."""
    return f"sqlite:///{home() / 'mlflow.db'}"


def resolve_tracking_uri(uri: str | None = None) -> str:
    """The store to use: ``uri`` if given, else ``MLFLOW_TRACKING_URI``, else the default."""
    return uri or os.environ.get("MLFLOW_TRACKING_URI") or default_tracking_uri()


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI, else None."""
    return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None


def default_cache_dir(uri: str | None = None) -> str:
    """The certificate cache: ``certificates/`` beside a SQLite store, else in :func:`home`."""
    db = sqlite_path(resolve_tracking_uri(uri))
    root = db.parent if db is not None else home()
    return str(root / "certificates")
