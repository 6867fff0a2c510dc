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


SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def store_uri(store: str | Path | None, field: str = "store") -> str:
    """The tracking URI of a store option (``--store`` of every command, ``store=`` of the
    Python API): a URI as it is, a path to a ``.db`` file as ``sqlite:///<absolute path>``,
    None as the default store (:func:`resolve_tracking_uri`). Anything else is refused naming
    ``field``."""
    if store is None:
        return resolve_tracking_uri(None)
    text = str(store)
    if "://" in text:
        return text
    if isinstance(store, str | Path) and Path(text).suffix.lower() in SQLITE_SUFFIXES:
        return f"sqlite:///{Path(text).expanduser().absolute()}"
    from lincls.errors import LinclsInputError

    raise LinclsInputError(
        field,
        "must be a tracking URI (sqlite:///…, postgresql://…, http://…) or a path to a .db file, "
        f"got {store!r}",
    )


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI, else None."""
    return Path(uri[len("sqlite:///") :]) if uri.startswith("sqlite:///") else None


def default_cache_dir(uri: str | None = None) -> str:
    """The certificate cache: ``certificates/`` beside a SQLite store, else in :func:`home`."""
    db = sqlite_path(resolve_tracking_uri(uri))
    root = db.parent if db is not None else home()
    return str(root / "certificates")
