"""Certificates for any data: the generator's separator, a maximum-margin SVM, a soft-margin SVM.

A certificate is a unit u and offset b measured on the data (``lincls.geometry.certify``): its
margin γ = min y(u·x + b), the radius R = max ‖x‖, and every example's margin. The bounds try each
certificate a run has and report the smallest value.

- ``"generator"``: the (u, b) synthetic data were drawn with.
- ``"svm"`` / ``"svm_homogeneous"``: the maximum-margin separator, with an offset or through the
  origin (for a learner without a bias): the hard-margin program min ‖w‖² s.t. y(w·x + b) ≥ 1
  (b = 0, or b free and outside the norm), solved by ``lincls.geometry.comparators.hard_margin``,
  the same program and solver (Clarabel, an interior point, on a working set) as the best
  comparators. Its margin is re-measured on the data with the unit u = w/‖w‖, never taken from the
  solver, so a solver's tolerance can only make the certificate weaker, never wrong; the
  certificate's ``gap`` is the relative duality gap of ‖w‖², so no separator has a margin above
  γ/√(1 − gap). An interior point's cost hardly depends on how degenerate the data are: the
  perceptron game's ~1,250 nearly collinear points (d = 2, γ = 0.02) take ~10 ms, where
  scikit-learn's libsvm (SVC with a huge C) takes 85–190 s and stops ~2e-5 short of the
  maximum margin. Data that are not separable make the program infeasible (no separator
  is found: ``None``); a linear program that used to decide separability first cost more than it
  saved (on 5,000 examples in d = 10: ~0.1 s on every dataset, to save ~0.05 s on the
  non-separable ones).
- ``"soft_svm"``: on data that are not separable, a soft-margin linear SVM's u (C = 1): a
  comparator for Freund–Schapire's bound, which holds for every u. It stays on scikit-learn's
  liblinear (``LinearSVC``): the hinge program of ``lincls.geometry.comparators.hinge`` gives the
  same minimum (its objective on (x, 1) is liblinear's, whose intercept is a penalised constant
  feature) but costs 10–20× more (n = 20,000, d = 20: 2.8 s against 0.15 s), since nearly every
  row stays in its working set. liblinear's point is above that minimum by 1e-9 to 1e-5
  (relative; xor, noisy and iris data), which costs nothing but tightness: any u is valid.

SVMs cost far more than a perceptron fit, so ``CertificateCache`` (``lincls.geometry.cache``)
keeps each one on disk, keyed by the dataset fingerprint: every learner, order and seed of a
sweep sharing the data reuses it, across processes (one SQLite file, a lock around each
computation). ``certificates_of`` gathers
a run's certificates as its learner labels the data; ``certificate_of`` is the generator's alone.

No number here depends on a time limit or on the machine's load: Clarabel runs without a time
limit (``lincls.geometry.comparators``), and liblinear stops after a fixed number of iterations
(``SOFT_MAX_ITER``) or at its tolerance, both counted in iterations, never in seconds.
"""

from __future__ import annotations

import hashlib
import warnings

import numpy as np
import scipy.sparse as sp

from lincls.data import Dataset
from lincls.geometry import (
    Certificate,
    MulticlassCertificate,
    certify,
    certify_multiclass,
    comparators,
    max_norm,
)
from lincls.geometry.cache import CertificateCache
from lincls.learners._base import binary_classes
from lincls.learners._kinds import takes_multiclass

SOFT_C = 1.0
SOFT_MAX_ITER = 20_000  # liblinear's iterations; a count, so its point is the same at any load


def _signed_rows(X, y_signed: np.ndarray):
    """The rows z_t = y_t·x_t (y_signed may carry a scale), in float64 (sparse stays sparse)."""
    if sp.issparse(X):
        return sp.diags(y_signed) @ sp.csr_matrix(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64) * y_signed[:, None]


def max_margin_separator(
    X, y_signed: np.ndarray, homogeneous: bool
) -> tuple[np.ndarray, float, float]:
    """The hard-margin SVM's (w, b, gap), b = 0 when ``homogeneous``; ValueError if none is found.

    ``lincls.geometry.comparators.hard_margin`` on the rows y·x/R (R the largest ‖x‖, so the
    solver's tolerances mean the same at every scale of the data), with the offset b outside the
    norm unless ``homogeneous``: min ‖w‖² s.t. y(w·x + b) ≥ 1. (w, b) is rescaled so that
    min y(w·x + b) = 1 on the data (so the geometric margin is 1/‖w‖) and ``gap`` is the relative
    duality gap of ‖w‖²: no separator has a margin above 1/(‖w‖·√(1 − gap)). Not separable (the
    program is infeasible, or the solver's point does not separate the data): ValueError.
    """
    y_signed = np.asarray(y_signed, dtype=np.float64)
    radius = max_norm(X)
    if not radius > 0.0:
        raise ValueError("the data are not linearly separable")
    rows = _signed_rows(X, y_signed / radius)
    solution = comparators.hard_margin(rows, None if homogeneous else y_signed)
    if solution is None:
        raise ValueError("the data are not linearly separable")
    if homogeneous:
        return solution.v / radius, 0.0, solution.gap
    return solution.v[:-1] / radius, float(solution.v[-1]), solution.gap


def separating_direction(X, y_signed: np.ndarray, homogeneous: bool) -> np.ndarray | None:
    """A (w, b) with y(w·x + b) ≥ 1 for every example (the maximum-margin one); None if none.

    ``homogeneous`` fixes b = 0 (the returned vector then ends in a 0).
    """
    try:
        w, b, _ = max_margin_separator(X, y_signed, homogeneous)
    except ValueError:
        return None
    return np.append(w, b)


def soft_margin_separator(X, y_signed: np.ndarray, homogeneous: bool) -> tuple[np.ndarray, float]:
    """A soft-margin linear SVM's (w, b) (C = 1, hinge loss): a comparator for any data.

    scikit-learn's liblinear (``LinearSVC``), not ``lincls.geometry.comparators.hinge`` (the
    module's docstring says why); it stops at its tolerance or after ``SOFT_MAX_ITER`` iterations, a
    count, so the point is the same on any machine (any u is a valid comparator).
    """
    from sklearn.exceptions import ConvergenceWarning  # scikit-learn loads only when needed
    from sklearn.svm import LinearSVC

    svm = LinearSVC(C=SOFT_C, loss="hinge", fit_intercept=not homogeneous, max_iter=SOFT_MAX_ITER,
                    random_state=0)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(X, y_signed)
    w = np.asarray(svm.coef_, dtype=np.float64).ravel()
    if not w.any():
        w = np.ones_like(w)  # an all-zero SVM (degenerate data): any u is a valid comparator
    return w, 0.0 if homogeneous else float(svm.intercept_[0])


def _cached(cache: CertificateCache | None, key: str, compute):
    return compute() if cache is None else cache.get(key, compute)


def _cached_arrays(cache: CertificateCache | None, key: str, compute):
    return compute() if cache is None else cache.get_arrays(key, compute)


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
    ``fingerprint`` (of the data and of which label is +1) keys the cache. The hard-margin
    certificate carries the duality gap of its program (``max_margin_separator``).
    """
    kind = "svm_homogeneous" if homogeneous else "svm"

    def hard():
        try:
            w, b, gap = max_margin_separator(X, y_signed, homogeneous)
        except ValueError:
            return None
        return {"w": w, "b": np.float64(b), "gap": np.float64(gap)}

    found = _cached_arrays(cache, f"{fingerprint}-hard-{kind}", hard)
    if found is not None:
        cert = certify(X, y_signed, found["w"], float(found["b"]), source=kind,
                       gap=float(found["gap"]))  # fmt: skip
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
    multiclass = takes_multiclass(learner)
    if dataset.U is not None:
        if not multiclass:
            return None
        labels = np.unique(dataset.y)  # U has a row per class of the data, in this order
        U, classes = np.asarray(dataset.U, dtype=np.float64), getattr(learner, "classes_", None)
        if classes is not None and np.isin(labels, classes).all() and len(classes) > len(labels):
            # a learner told of classes the data never use (a game's): it may predict them, so
            # the margin is over every class it scores, those with a row of zeros (still sound)
            rows = np.zeros((len(classes), U.shape[1]))
            rows[np.searchsorted(classes, labels)] = U
            U, labels = rows, np.asarray(classes)
        y_index = np.searchsorted(labels, dataset.y)
        return certify_multiclass(dataset.X, y_index, U, None, source="generator")
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
        classes = dataset.shared("binary classes", lambda: binary_classes(dataset.y))
    homogeneous = getattr(learner, "bias", "feature") == "none"
    # what every run of these data and labelling finds the same, once for a sealed dataset
    key = ("certificates", repr(classes[1]), homogeneous, svm, cache_dir)
    certs, separable = dataset.shared(
        key, lambda: _certificates(dataset, classes, homogeneous, svm, cache_dir)
    )
    return list(certs), separable


def _certificates(
    dataset: Dataset, classes, homogeneous: bool, svm: bool, cache_dir: str | None
) -> tuple[list[Certificate], bool | None]:
    y_signed = np.where(dataset.y == classes[1], 1.0, -1.0)
    certs: list[Certificate] = []
    separable: bool | None = None
    if dataset.u is not None:
        certs.append(certify(dataset.X, y_signed, dataset.u, dataset.b, source="generator"))
        separable = True if certs[0].separates else None
    # a game's learner may have erred on one label only: no SVM separates a single class
    if svm and np.unique(y_signed).size == 2:
        cache = CertificateCache(cache_dir) if cache_dir else None
        key = f"{dataset.fingerprint}-{hashlib.sha256(repr(classes[1]).encode()).hexdigest()[:8]}"
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
