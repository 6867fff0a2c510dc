"""The certificate cache: separators and best comparators kept by key in one SQLite file.

A sweep's runs of one dataset share its SVMs and best comparators; a million runs of a million
datasets must not cost a million files. Every entry is a row of ``certificates.db`` in the cache
folder (its arrays after a short header: ``_encoded``), each counting its computations; the file
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
import json
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
_RESOLVED: dict[tuple[str, str], str] = {}
_WRITE = (  # one statement: its own transaction
    "INSERT INTO entries (key, value, computed) VALUES (?, ?, 1) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value, computed = computed + 1"
)
MAGIC = b"lincls-arrays\x00"  # an entry's first bytes (an older cache's entries are .npz files)
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
        connection, locks, folder, opening = self._opened()
        where = (os.getpid(), folder, opening, key)
        with _THREADS:
            if where in _REMEMBERED:
                _REMEMBERED.move_to_end(where)
                kept = _REMEMBERED[where]
                return None if kept is None else dict(kept)
        found = _read(connection, key)
        if found is None:
            digest = hashlib.sha256(key.encode()).digest()
            with _THREADS, _byte_lock(locks, 1 + int.from_bytes(digest[:8], "big") % LOCK_BYTES):
                found = _read(connection, key)
                if found is None:
                    found = (compute(),)
                    connection.execute(_WRITE, (key, _encoded(found[0])))
        return _remember(where, found[0])

    def fits(self) -> list[str]:
        """The keys computed (not read) so far, one per computation, in order."""
        if not (self.directory / DATABASE).is_file():
            return []
        query = "SELECT key, computed FROM entries ORDER BY rowid"
        return [key for key, times in self._opened()[0].execute(query) for _ in range(times)]

    def _opened(self) -> tuple[sqlite3.Connection, int, str, int]:
        """(connection, lock file, the folder resolved, this opening of its file): a file made
        anew since it was opened is opened again, and is another cache."""
        folder = _resolved(self.directory)
        where = (os.getpid(), folder)
        opened = _OPEN.get(where)
        if opened is not None and _same_file(os.path.join(folder, DATABASE), opened[2]):
            return opened[0], opened[1], folder, opened[3]
        if opened is not None:  # the folder was emptied or replaced since: open it anew
            opened[0].close()
            os.close(opened[1])
        self.directory.mkdir(parents=True, exist_ok=True)
        locks = os.open(self.directory / LOCKS, os.O_RDWR | os.O_CREAT, 0o666)
        connection = self._connect(locks)
        inode = os.stat(self.directory / DATABASE).st_ino
        _OPEN[where] = (connection, locks, inode, next(_OPENINGS))
        return connection, locks, folder, _OPEN[where][3]

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


def _resolved(directory: Path) -> str:
    """The folder's absolute path, symbolic links resolved: the name its cache is known by
    (kept per working directory: resolving walks every part of the path)."""
    key = (str(directory), "" if directory.is_absolute() else os.getcwd())
    found = _RESOLVED.get(key)
    if found is None:
        found = _RESOLVED[key] = str(directory.resolve())
    return found


def _read(connection: sqlite3.Connection, key: str) -> tuple[dict[str, np.ndarray] | None] | None:
    """(the arrays, or None for "none exists") stored under ``key``; None when nothing is,
    or what is cannot be read back (it is computed again and replaced)."""
    found = connection.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
    if found is None:
        return None
    try:
        return (_decoded(found[0]),)
    except (OSError, ValueError, KeyError, EOFError, TypeError, zipfile.BadZipFile):
        return None


def _encoded(value: dict[str, np.ndarray] | None) -> bytes:
    """``MAGIC``, a JSON header of (name, dtype, shape) per array (null for "none exists") and
    their bytes: ~10 µs for a run's entry, where an ``.npz`` took ~250 µs."""
    arrays = None if value is None else {k: np.asarray(a, order="C") for k, a in value.items()}
    header = None if arrays is None else [[k, a.dtype.str, a.shape] for k, a in arrays.items()]
    text = json.dumps(header).encode()
    body = b"".join(a.tobytes() for a in (arrays or {}).values())
    return MAGIC + len(text).to_bytes(4, "little") + text + body


def _decoded(blob: bytes) -> dict[str, np.ndarray] | None:
    """The arrays of an ``_encoded`` entry, or of an ``.npz`` one (an older cache's); raises
    ValueError (or an error of the zip file) when it cannot be read back."""
    blob = bytes(blob)
    if not blob.startswith(MAGIC):
        with np.load(io.BytesIO(blob)) as stored:
            if not bool(stored["exists"]):
                return None
            return {name: stored[name].copy() for name in stored.files if name != "exists"}
    start = len(MAGIC) + 4
    end = start + int.from_bytes(blob[len(MAGIC) : start], "little")
    header = json.loads(blob[start:end])
    if header is None:
        return None
    arrays = {}
    for name, dtype, shape in header:
        kind = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        arrays[name] = np.frombuffer(blob, kind, count, end).reshape(shape).copy()
        end += count * kind.itemsize
    if end != len(blob):
        raise ValueError("the entry's arrays do not fill it")
    return arrays


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
