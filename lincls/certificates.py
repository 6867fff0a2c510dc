"""Certificates for any data: the generator's separator, a maximum-margin SVM, a soft-margin SVM.

A certificate is a unit u and offset b measured on the data (``lincls.geometry.certify``): its
margin γ = min y(u·x + b), the radius R = max ‖x‖, and every example's margin. The bounds try each
certificate a run has and report the smallest value.

- ``"generator"``: the (u, b) synthetic data were drawn with.
- ``"svm"`` / ``"svm_homogeneous"``: the maximum-margin separator, with an offset or through the
  origin (for a learner without a bias). A linear program first decides whether the data are
  separable at all (a hard-margin SVM on data that are not would not converge); its separator
  also bounds ‖w*‖², which sets the SVM's C so that no box constraint binds — the solution is the
  hard-margin one. The margin is then re-measured on the data, so a solver's tolerance can only
  make the certificate weaker, never wrong.
- ``"soft_svm"``: on data that are not separable, a soft-margin linear SVM's u (C = 1): a
  comparator for Freund–Schapire's bound, which holds for every u.

SVMs cost far more than a perceptron fit, so ``CertificateCache`` keeps each one on disk, keyed
by the dataset fingerprint: every learner, order and seed of a sweep sharing the data reuses it,
across processes (a file lock around each computation, atomic writes). ``certificates_of`` gathers
a run's certificates as its learner labels the data; ``certificate_of`` is the generator's alone.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, LinearSVC

from lincls.data import Dataset
from lincls.geometry import Certificate, MulticlassCertificate, certify, certify_multiclass
from lincls.learners._base import binary_classes

FIT_LOG = "fits.log"
SVM_TOLERANCE = 1e-5
WORKING_SET = 2000  # examples the SVM starts from, and the most added per round
SOFT_C = 1.0
LP_TIME_LIMIT = 300.0  # seconds; past it the data count as not separable (a soft SVM is used)


def _stack(X, columns: list) -> object:
    return sp.hstack([X, *columns], format="csr") if sp.issparse(X) else np.hstack([X, *columns])


def separating_direction(X, y_signed: np.ndarray, homogeneous: bool) -> np.ndarray | None:
    """A (w, b) with y(w·x + b) ≥ 1 for every example, from a linear program; None if none.

    ``homogeneous`` fixes b = 0 (the returned vector then ends in a 0). A solver that cannot
    decide (numerical trouble, time limit) also gives None: the data are then treated as not
    separable, and the soft-margin comparator, valid for any data, is used.
    """
    n = X.shape[0]
    columns = [] if homogeneous else [np.ones((n, 1))]
    A = _stack(X, columns)
    A = -(sp.diags(y_signed) @ A) if sp.issparse(A) else -(y_signed[:, None] * A)
    result = linprog(
        np.zeros(A.shape[1]),
        A_ub=A,
        b_ub=-np.ones(n),
        bounds=[(None, None)] * A.shape[1],
        # The interior-point solver: on nearly separable data the dual simplex stalled for
        # minutes and gave up numerically where this one decides in seconds.
        method="highs-ipm",
        options={"time_limit": LP_TIME_LIMIT},
    )
    if result.status != 0:  # infeasible, or undecided in time: treated as not separable
        return None
    w = np.asarray(result.x, dtype=np.float64)
    return np.append(w, 0.0) if homogeneous else w


def max_margin_separator(X, y_signed: np.ndarray, homogeneous: bool) -> tuple[np.ndarray, float]:
    """The hard-margin SVM's (w, b), or the homogeneous one; raises ValueError if not separable.

    The homogeneous maximum-margin separator of (x, y) is the offset one of the symmetric set
    {(x, y), (−x, −y)}: any (w, b) feasible there makes (w, 0) feasible with the same margin.
    """
    direction = separating_direction(X, y_signed, homogeneous)
    if direction is None:
        raise ValueError("the data are not linearly separable")
    # Σα = ‖w*‖² ≤ ‖w_LP‖²: with C above it no α reaches its box, so this is the hard margin.
    C = 2.0 * float(direction[:-1] @ direction[:-1]) + 1.0
    if homogeneous:
        X = sp.vstack([X, -X], format="csr") if sp.issparse(X) else np.vstack([X, -X])
        y_signed = np.concatenate([y_signed, -y_signed])
        direction = np.append(direction[:-1], 0.0)
    # Working set: the SVM of the examples nearest the LP's hyperplane, then of those plus every
    # example the solution violates, until none does. An example outside the set that meets its
    # constraint has α = 0, so the final solution is the SVM of all the data (KKT).
    n = X.shape[0]
    lp_margins = y_signed * (np.asarray(X @ direction[:-1]).ravel() + direction[-1])
    active = np.zeros(n, dtype=bool)
    active[np.argsort(lp_margins, kind="stable")[:WORKING_SET]] = True
    while True:
        svm = SVC(kernel="linear", C=C, tol=SVM_TOLERANCE, shrinking=True)
        svm.fit(X[active], y_signed[active])
        w = np.asarray(svm.coef_.toarray() if sp.issparse(svm.coef_) else svm.coef_).ravel()
        b = 0.0 if homogeneous else float(svm.intercept_[0])
        functional = y_signed * (np.asarray(X @ w).ravel() + b)
        violated = np.flatnonzero(~active & (functional < 1.0 - 10 * SVM_TOLERANCE))
        if violated.shape[0] == 0:
            return w.astype(np.float64), b
        active[violated[np.argsort(functional[violated], kind="stable")[:WORKING_SET]]] = True


def soft_margin_separator(X, y_signed: np.ndarray, homogeneous: bool) -> tuple[np.ndarray, float]:
    """A soft-margin linear SVM's (w, b) (C = 1, hinge loss): a comparator for any data."""
    svm = LinearSVC(C=SOFT_C, loss="hinge", fit_intercept=not homogeneous, max_iter=20_000,
                    random_state=0)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X, y_signed)
    w = np.asarray(svm.coef_, dtype=np.float64).ravel()
    if not w.any():
        w = np.ones_like(w)  # an all-zero SVM (degenerate data): any u is a valid comparator
    return w, 0.0 if homogeneous else float(svm.intercept_[0])


class CertificateCache:
    """Separators (and best comparators) on disk, one file per key, shared by processes.

    ``get`` computes a missing entry under an exclusive file lock, so concurrent workers wait
    for the first one instead of fitting the same SVM; files are written to a temporary name and
    renamed (atomic). Every computation appends a line to ``fits.log`` (for counting fits).
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}.npz"

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
        them once (``lincls.comparators`` keeps its solutions here too)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(key)
        found = self._read(path)
        if found is not None:
            return found[0]
        with open(self.directory / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                found = self._read(path)
                if found is not None:
                    return found[0]
                value = compute()
                self._write(path, value)
                with open(self.directory / FIT_LOG, "a") as log:
                    log.write(f"{key}\n")
                return value
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def fits(self) -> list[str]:
        """The keys computed (not read) so far, one per computation, in order."""
        log = self.directory / FIT_LOG
        return log.read_text().split() if log.is_file() else []

    @staticmethod
    def _read(path: Path) -> tuple[dict[str, np.ndarray] | None] | None:
        if not path.is_file():
            return None
        with np.load(path) as stored:
            if not bool(stored["exists"]):
                return (None,)
            return ({name: stored[name].copy() for name in stored.files if name != "exists"},)

    @staticmethod
    def _write(path: Path, value: dict[str, np.ndarray] | None) -> None:
        arrays = value if value is not None else {}
        handle, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, exists=np.bool_(value is not None), **arrays)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _cached(cache: CertificateCache | None, key: str, compute):
    return compute() if cache is None else cache.get(key, compute)


def svm_certificates(
    X,
    y_signed: np.ndarray,
    *,
    homogeneous: bool,
    fingerprint: str,
    cache: CertificateCache | None = None,
) -> tuple[list[Certificate], bool]:
    """The SVM certificates of (X, y): ([hard-margin] or [soft-margin], separable?).

    ``homogeneous`` asks for separators through the origin (for a learner without a bias).
    ``fingerprint`` (of the data and of which label is +1) keys the cache.
    """
    kind = "svm_homogeneous" if homogeneous else "svm"

    def hard():
        try:
            return max_margin_separator(X, y_signed, homogeneous)
        except ValueError:
            return None

    found = _cached(cache, f"{fingerprint}-{kind}", hard)
    if found is not None:
        cert = certify(X, y_signed, found[0], found[1], source=kind)
        if cert.separates:
            return [cert], True
    soft_kind = "soft_svm_homogeneous" if homogeneous else "soft_svm"
    soft = _cached(
        cache,
        f"{fingerprint}-{soft_kind}",
        lambda: soft_margin_separator(X, y_signed, homogeneous),
    )
    return [certify(X, y_signed, soft[0], soft[1], source="soft_svm")], found is not None


def certificate_of(dataset: Dataset, learner) -> Certificate | MulticlassCertificate | None:
    """The certificate of the data as the learner labels it: the generator's (u, b) or U if known.

    A multiclass learner on binary data gets the multiclass form of (u, b): rows (−u, u)/√2,
    offsets (−b, b)/√2, multiclass margin √2·γ.
    """
    multiclass = learner.__sklearn_tags__().classifier_tags.multi_class
    if dataset.U is not None:
        if not multiclass:
            return None
        y_index = np.searchsorted(np.unique(dataset.y), dataset.y)
        return certify_multiclass(dataset.X, y_index, dataset.U, None, source="generator")
    if dataset.u is None:
        return None
    if multiclass:
        y_index = np.searchsorted(learner.classes_, dataset.y)
        U, b = np.vstack([-dataset.u, dataset.u]), np.array([-dataset.b, dataset.b])
        return certify_multiclass(dataset.X, y_index, U, b, source="generator")
    y_signed = np.where(dataset.y == learner.classes_[1], 1.0, -1.0)
    return certify(dataset.X, y_signed, dataset.u, dataset.b, source="generator")


def certificates_of(
    dataset: Dataset, learner, svm: bool, cache_dir: str | None
) -> tuple[list[Certificate], bool | None]:
    """Every certificate of the data as the (fitted or not) binary learner labels it.

    The generator's (u, b) when known, then, with ``svm``, the SVMs' (cached in ``cache_dir``
    per dataset fingerprint and positive class): ([certificates], separable?), separable None
    when nothing decides it.
    """
    classes = getattr(learner, "classes_", None)
    if classes is None:
        classes = binary_classes(dataset.y)
    y_signed = np.where(dataset.y == classes[1], 1.0, -1.0)
    certs: list[Certificate] = []
    separable: bool | None = None
    if dataset.u is not None:
        certs.append(certify(dataset.X, y_signed, dataset.u, dataset.b, source="generator"))
        separable = True if certs[0].separates else None
    if svm and dataset.X.shape[0]:
        cache = CertificateCache(cache_dir) if cache_dir else None
        key = f"{dataset.fingerprint}-{hashlib.sha256(repr(classes[1]).encode()).hexdigest()[:8]}"
        homogeneous = getattr(learner, "bias", "feature") == "none"
        found, svm_separable = svm_certificates(
            dataset.X, y_signed, homogeneous=homogeneous, fingerprint=key, cache=cache
        )
        certs.extend(found)
        separable = svm_separable if separable is None or svm_separable else separable
    return certs, separable


def primary(certs: list[Certificate]) -> Certificate | None:
    """The separating certificate of largest margin, else the first one."""
    separating = [c for c in certs if c.separates]
    if separating:
        return max(separating, key=lambda c: c.margin)
    return certs[0] if certs else None
