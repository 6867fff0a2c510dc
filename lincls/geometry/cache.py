"""The certificate cache: separators and best comparators kept by key in one SQLite file.

A sweep's runs of one dataset share its SVMs and best comparators; a million runs of a million
datasets must not cost a million files. Every entry is a row of ``certificates.db`` in the cache
folder (its arrays as an ``.npz`` blob), each counting its computations; the file
is in write-ahead-log mode, so any number of processes read and write it at once. The folder
held one ``.npz`` and one ``.lock`` file a key before (~12.5 KB and 8 files for each dataset of
a default run; ``test_certificates`` counts the files now).

A key is computed once across processes: its computation holds a lock on one byte of
``certificates.lock`` (the byte a hash of the key names; POSIX record locks, so no file a key),
and looks the key up again under it. An entry that cannot be read back (a damaged blob) is
computed again and replaced; a file SQLite calls no database is set aside and made anew.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import itertools
import os
import sqlite3
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

DATABASE = "certificates.db"
LOCKS = "certificates.lock"
LOCK_BYTES = 1 << 20  # bytes of the lock file a key's hash may name: two keys rarely share one
TIMEOUT = 300.0  # seconds a write waits for another process's
# an entry's rowid says when it was first computed, ``computed`` how many times
_SCHEMA = "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB, computed INTEGER)"
# This process's connections and lock files, by folder (neither may cross a fork); a POSIX
# record lock is the process's, so its threads take ``_THREADS`` around a computation as well.
_OPEN: dict[tuple[int, str], tuple[sqlite3.Connection, int, int, int]] = {}
_OPENINGS = itertools.count()  # each opening of a file its own number (an inode is reused)
_THREADS = threading.RLock()
# The entries this process read or computed last, by (process, folder, file, key): a sweep's runs
# of one dataset ask for the same few keys run after run, and reading one back from its blob
# costs ~1 ms. Their arrays are read-only; an entry larger than REMEMBERED_ENTRY is not kept.
_REMEMBERED: OrderedDict[tuple, dict[str, np.ndarray] | None] = OrderedDict()
REMEMBERED_BYTES = 64 << 20
REMEMBERED_ENTRY = 4 << 20
_REMEMBERED_SIZE = [0]


class CertificateCache:
    """Named arrays by key in ``<directory>/certificates.db``, shared by processes (module
    docstring). ``get_arrays`` computes a missing entry once; ``fits`` lists the computations."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def get(
        self, key: str, compute: Callable[[], tuple[np.ndarray, float] | None]
    ) -> tuple[np.ndarray, float] | None:
        """The (w, b) stored under ``key`` (None: computed as "none exists"), computing it once."""

        def arrays():
            value = compute()
            return None if value is None else {"w": value[0], "b": np.float64(value[1])}

        found = self.get_arrays(key, arrays)
        return None if found is None else (found["w"], float(found["b"]))

    def get_arrays(
        self, key: str, compute: Callable[[], dict[str, np.ndarray] | None]
    ) -> dict[str, np.ndarray] | None:
        """The named arrays stored under ``key`` (None: computed as "none exists"), computing
        them once (``lincls.geometry.comparators`` keeps its solutions here too)."""
        where = (*self._where(), key)
        with _THREADS:
            if where in _REMEMBERED:
                _REMEMBERED.move_to_end(where)
                kept = _REMEMBERED[where]
                return None if kept is None else dict(kept)
        found = self._read(key)
        if found is None:
            with self._computing(key):
                found = self._read(key)
                if found is None:
                    found = (compute(),)
                    self._write(key, found[0])
        return _remember(where, found[0])

    def _where(self) -> tuple[int, str, int]:
        """(process, folder, this opening of its file): a file made anew is another cache."""
        self._opened()
        where = (os.getpid(), str(self.directory.resolve()))
        return (*where, _OPEN[where][3])

    def fits(self) -> list[str]:
        """The keys computed (not read) so far, one per computation, in order."""
        if not (self.directory / DATABASE).is_file():
            return []
        query = "SELECT key, computed FROM entries ORDER BY rowid"
        return [key for key, times in self._connection().execute(query) for _ in range(times)]

    def _connection(self) -> sqlite3.Connection:
        return self._opened()[0]

    def _opened(self) -> tuple[sqlite3.Connection, int]:
        where = (os.getpid(), str(self.directory.resolve()))
        opened = _OPEN.get(where)
        if opened is not None and _same_file(self.directory / DATABASE, opened[2]):
            return opened[0], opened[1]
        if opened is not None:  # the folder was emptied or replaced since: open it anew
            opened[0].close()
            os.close(opened[1])
        self.directory.mkdir(parents=True, exist_ok=True)
        locks = os.open(self.directory / LOCKS, os.O_RDWR | os.O_CREAT, 0o666)
        connection = self._connect(locks)
        inode = os.stat(self.directory / DATABASE).st_ino
        _OPEN[where] = (connection, locks, inode, next(_OPENINGS))
        return connection, locks

    def _connect(self, locks: int) -> sqlite3.Connection:
        """A connection to the cache's database; a file that is no database is set aside (under
        the lock's byte 0, so one process does it) and a new one made."""
        path = self.directory / DATABASE
        try:
            return _connected(path)
        except sqlite3.DatabaseError:
            with _byte_lock(locks, 0):
                try:
                    return _connected(path)
                except sqlite3.DatabaseError:
                    os.replace(path, path.with_name(f"{DATABASE}.damaged"))
                    for end in ("-wal", "-shm"):
                        path.with_name(DATABASE + end).unlink(missing_ok=True)
                    return _connected(path)

    @contextmanager
    def _computing(self, key: str) -> Iterator[None]:
        _, locks = self._opened()
        digest = hashlib.sha256(key.encode()).digest()
        with _THREADS, _byte_lock(locks, 1 + int.from_bytes(digest[:8], "big") % LOCK_BYTES):
            yield

    def _read(self, key: str) -> tuple[dict[str, np.ndarray] | None] | None:
        """(the arrays, or None for "none exists") stored under ``key``; None when nothing is,
        or what is cannot be read back (it is computed again and replaced)."""
        row = self._connection().execute("SELECT value FROM entries WHERE key = ?", (key,))
        found = row.fetchone()
        if found is None:
            return None
        try:
            with np.load(io.BytesIO(found[0])) as stored:
                if not bool(stored["exists"]):
                    return (None,)
                return ({name: stored[name].copy() for name in stored.files if name != "exists"},)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None

    def _write(self, key: str, value: dict[str, np.ndarray] | None) -> None:
        buffer = io.BytesIO()
        np.savez(buffer, exists=np.bool_(value is not None), **(value or {}))
        self._connection().execute(
            "INSERT INTO entries (key, value, computed) VALUES (?, ?, 1) ON CONFLICT(key) "
            "DO UPDATE SET value = excluded.value, computed = computed + 1",
            (key, buffer.getvalue()),
        )  # one statement: its own transaction


def forget() -> None:
    """Drop the entries this process remembers (its next reads go to the file)."""
    with _THREADS:
        _REMEMBERED.clear()
        _REMEMBERED_SIZE[0] = 0


def _remember(where: tuple, value: dict[str, np.ndarray] | None) -> dict[str, np.ndarray] | None:
    """Keep ``value`` (its arrays made read-only) as the entry at ``where``; a copy of the dict."""
    size = 0 if value is None else sum(np.asarray(a).nbytes for a in value.values())
    if size > REMEMBERED_ENTRY:
        return value
    if value is not None:
        value = {name: np.asarray(a) for name, a in value.items()}
        for array in value.values():
            array.flags.writeable = False
    with _THREADS:
        if where not in _REMEMBERED:
            _REMEMBERED[where] = value
            _REMEMBERED_SIZE[0] += size
        while _REMEMBERED_SIZE[0] > REMEMBERED_BYTES:
            _, dropped = _REMEMBERED.popitem(last=False)
            _REMEMBERED_SIZE[0] -= sum(a.nbytes for a in (dropped or {}).values())
    return None if value is None else dict(value)


def _same_file(path: Path, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _connected(path: Path) -> sqlite3.Connection:
    """A connection to the cache database at ``path`` (made if missing), its tables there."""
    connection = sqlite3.connect(path, timeout=TIMEOUT, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")  # kept in the file
        connection.execute("PRAGMA synchronous=NORMAL")  # a commit does not wait for the disk
        connection.execute(_SCHEMA)
    except BaseException:
        connection.close()
        raise
    return connection


@contextmanager
def _byte_lock(handle: int, offset: int) -> Iterator[None]:
    """An exclusive POSIX record lock on byte ``offset`` of the file open as ``handle``."""
    fcntl.lockf(handle, fcntl.LOCK_EX, 1, offset)
    try:
        yield
    finally:
        fcntl.lockf(handle, fcntl.LOCK_UN, 1, offset)
