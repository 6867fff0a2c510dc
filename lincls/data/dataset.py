"""The dataset record every generator and loader returns."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import scipy.sparse as sp

from lincls.geometry import max_norm

T = TypeVar("T")


def _feed(h, X) -> None:
    if sp.issparse(X):
        X = X.tocsr()
        for part in (X.data, X.indices, X.indptr):
            h.update(np.ascontiguousarray(part).tobytes())
        h.update(str(X.shape).encode())
    else:
        X = np.ascontiguousarray(X)
        h.update(str(X.dtype).encode() + str(X.shape).encode())
        h.update(X.tobytes())


def fingerprint(X, y) -> str:
    """A short content hash of (X, y): equal data give equal fingerprints."""
    h = hashlib.sha256()
    _feed(h, X)
    _feed(h, np.asarray(y).astype(str) if np.asarray(y).dtype.kind in "OUS" else np.asarray(y))
    return h.hexdigest()[:16]


@dataclass(frozen=True, eq=False)
class Dataset:
    """Training and test data, with the generating separator when there is one.

    ``u`` (unit) and ``b`` are the separator a generator used; ``margin`` = min y(u·x + b) and
    ``radius`` = max ‖x‖ are *measured* on the training data, never copied from arguments.
    ``relevant`` names the features a boolean target depends on (the attributes of a monotone
    disjunction), when the generator knows them.
    Multiclass generators set ``U`` instead (a row per class in sorted label order, ‖U‖_F = 1);
    ``margin`` is then the multiclass margin min_t [u_y·x_t − max_{r≠y} u_r·x_t].
    """

    name: str
    X: Any
    y: np.ndarray
    X_test: Any
    y_test: np.ndarray
    u: np.ndarray | None = None
    b: float | None = None
    margin: float | None = None
    radius: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)
    relevant: np.ndarray | None = None
    U: np.ndarray | None = None

    @classmethod
    def certified(cls, *, name, X, y, X_test, y_test, u, b, params, relevant=None) -> Dataset:
        """A dataset whose margin and radius are measured for the separator (u, b)."""
        u = np.asarray(u, dtype=np.float64)
        y = np.asarray(y)
        margin = float(np.min(y * (X @ u + b))) if X.shape[0] else None
        return cls(
            name, X, y, X_test, np.asarray(y_test), u, float(b), margin, max_norm(X), params,
            relevant=None if relevant is None else np.asarray(relevant, dtype=np.int64),
        )  # fmt: skip

    @classmethod
    def plain(cls, *, name, X, y, X_test, y_test, params) -> Dataset:
        """A dataset without a known separator (real data, files)."""
        return cls(
            name, X, np.asarray(y), X_test, np.asarray(y_test), radius=max_norm(X), params=params
        )

    @property
    def fingerprint(self) -> str:
        """Content hash of the training data (made once for a sealed dataset: ``seal``)."""
        return self.shared("fingerprint", lambda: fingerprint(self.X, self.y))

    def seal(self) -> Dataset:
        """Make this dataset's arrays read-only, so that what its runs share can be kept on it
        (``shared``): a sweep's process reuses the data it built for each run of one dataset,
        and a change in place would leave its fingerprint, and the certificates keyed by it,
        stale. Only for data lincls built itself: a caller's own arrays stay theirs."""
        for array in _arrays(self):
            array.flags.writeable = False
        self.__dict__.setdefault("_shared", {})
        return self

    def shared(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, once per ``key`` for a sealed dataset (what every run of these data
        finds the same: the fingerprint, the classes, the certificates), each time otherwise."""
        kept = self.__dict__.get("_shared")
        if kept is None:
            return compute()
        if key not in kept:
            kept[key] = compute()
        return kept[key]


def _arrays(dataset: Dataset) -> list[np.ndarray]:
    """Every array a dataset holds (a sparse matrix's three)."""
    found = []
    held = (dataset.X, dataset.y, dataset.X_test, dataset.y_test)
    for value in (*held, dataset.u, dataset.relevant, dataset.U):
        parts = [value.data, value.indices, value.indptr] if sp.issparse(value) else [value]
        found.extend(part for part in parts if isinstance(part, np.ndarray))
    return found
