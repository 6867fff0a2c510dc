"""A SQLite store that was moved (its results folder copied or renamed) finds its artifacts.

MLflow keeps where a run's files are as an absolute URI (``runs.artifact_uri``, and each
experiment's ``artifact_location``): lincls puts them in ``mlartifacts/`` beside the database
(``tracking.artifact_root``), so a copied folder held the files but its store still pointed at
the original folder (the UI read the original's, or nothing once it was gone). When lincls opens
a store whose locations name the ``mlartifacts/`` of another folder, it points them at the one
beside the database, in one transaction. Locations of any other form (an artifact root the user
chose, another scheme) are left as they are.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from lincls.paths import sqlite_path

ARTIFACTS = "mlartifacts"


def _moved_prefix(location: str, here: str) -> str | None:
    """The ``file://…/mlartifacts`` prefix of ``location`` when it is lincls's layout of another
    folder than ``here`` (the ``file://`` URI of this store's ``mlartifacts``), else None."""
    if not location.startswith("file://"):
        return None
    head, sep, _ = location.partition(f"/{ARTIFACTS}")
    if not sep:
        return None
    prefix = head + sep
    rest = location[len(prefix) :]
    if rest and not rest.startswith("/"):
        return None  # e.g. ``/mlartifacts2``: not lincls's folder
    return None if prefix == here else prefix


def relocate(uri: str) -> int:
    """Point the artifact locations of the SQLite store at ``uri`` that name another folder's
    ``mlartifacts/`` at the one beside it; the number of experiments and runs changed (0: none
    was moved, or not a SQLite store). One transaction: processes doing it at once agree."""
    db = sqlite_path(uri)
    if db is None or not db.is_file() or db.stat().st_size == 0:
        return 0
    here = (Path(db).parent / ARTIFACTS).resolve().as_uri()
    connection = sqlite3.connect(db, timeout=30.0)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        if not {"experiments", "runs"} <= tables:
            return 0
        locations = connection.execute("SELECT artifact_location FROM experiments").fetchall()
        prefixes = {p for (loc,) in locations if loc for p in [_moved_prefix(loc, here)] if p}
        changed = 0
        with connection:
            for prefix in sorted(prefixes):
                for table, column in (("experiments", "artifact_location"),
                                      ("runs", "artifact_uri")):  # fmt: skip
                    changed += connection.execute(
                        f"UPDATE {table} SET {column} = ? || substr({column}, ?) "
                        f"WHERE substr({column}, 1, ?) = ?",
                        (here, len(prefix) + 1, len(prefix), prefix),
                    ).rowcount
        return changed
    finally:
        connection.close()
