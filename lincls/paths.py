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


HOME_VARIABLE = "LINCLS_HOME"


def home() -> Path:
    """Where the default store, reports and caches go: ``$LINCLS_HOME``, else (unset or empty)
    ``results/`` of the working directory (never the installed package's folder)."""
    return Path(os.environ.get(HOME_VARIABLE) or "results").absolute()


def check_home() -> Path:
    """The home (:func:`home`), once it is known to be a folder this user can write or make;
    else ``LinclsInputError`` naming ``LINCLS_HOME`` and the fix. Nothing is left behind.

    An empty ``LINCLS_HOME`` is taken out of the environment: it means unset here, and Hydra's
    ``${oc.env:LINCLS_HOME,results}`` (its run folders) and this process's children then read
    it so too, where Hydra would put its folders at the filesystem's root."""
    if os.environ.get(HOME_VARIABLE) == "":
        del os.environ[HOME_VARIABLE]
    from lincls.config.run import check_writable
    from lincls.errors import LinclsInputError

    where = home()
    try:
        check_writable(HOME_VARIABLE, str(where))
    except LinclsInputError as exc:
        unset = "" if HOME_VARIABLE in os.environ else " (unset: results/ of the working folder)"
        raise LinclsInputError(
            HOME_VARIABLE + unset,
            f"{exc.problem}; set LINCLS_HOME to a folder this user can write",
        ) from None
    return where


def default_tracking_uri() -> str:
    """``sqlite:///<home>/mlflow.db``, an absolute URI."""
    return f"sqlite:///{home() / 'mlflow.db'}"


def resolve_tracking_uri(uri: str | None = None) -> str:
    """The store to use: ``uri`` if given (``tracking.uri``), else ``MLFLOW_TRACKING_URI``, else
    the default; a path is read as :func:`store_uri` reads one (a ``.db`` file, else refused
    naming where it came from)."""
    return given_tracking_uri(uri) or default_tracking_uri()


def given_tracking_uri(uri: str | None = None) -> str | None:
    """The store ``uri`` or ``MLFLOW_TRACKING_URI`` names, read as :func:`resolve_tracking_uri`
    reads it (a bad one refused, naming where it came from); None when neither is given."""
    if uri:
        return store_uri(uri, "tracking.uri")
    given = os.environ.get("MLFLOW_TRACKING_URI")
    if given:
        return store_uri(given, "MLFLOW_TRACKING_URI")
    return None


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
