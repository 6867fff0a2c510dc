"""Each bound's best comparator on a run's data: the rows the learner sees, solved and cached.

The theorems hold for every comparator, so a bound's best value is a convex program on the
vectors x' the learner sees (with a bias feature c, x' = (x, c)) — ``lincls.geometry.comparators``
solves them. This module builds those vectors from ``RunFacts`` and keeps the solutions: in memory
for the run's orderings and bounds, and on disk per (dataset fingerprint, problem, c, presentations,
...) beside the certificates (``lincls.geometry.certificates.CertificateCache``), so every learner,
order and worker of a sweep on the same data solves each problem once.

The theorems are about the sequence the learner was shown: its comparator need only meet the
rows presented at least once (``RunFacts.presentations`` > 0), and its radius is the largest
‖x'‖ among them. An order that presents every row (fixed, shuffled, or presentations unknown)
solves on every row with the data's radius; the adversarial order, which may never present
some rows, solves on the presented ones, and the cache key names them.

Each function returns a ``Comparator`` (the solution, where its margins are measured and the
radius of the vectors) or a string saying why there is none.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from lincls.bounds._registry import RunFacts
from lincls.geometry import comparators, row_norms

MEMORY = 64  # solutions kept in memory (the orderings and bounds of recent runs)
_memory: OrderedDict[tuple, comparators.Solution | None] = OrderedDict()


@dataclass(frozen=True)
class Comparator:
    """A best comparator: ``solution`` (on the rows scaled to radius 1: for the separators,
    ``value`` = ‖v‖² at functional margin 1, so the geometric margin on the vectors x' is
    R'/√value), the radius R' of those vectors, and ``margins`` z_t·v of every row where a bound
    reads them."""

    solution: comparators.Solution
    radius: float
    measure: Callable[[], np.ndarray] | None = field(default=None, repr=False)

    @property
    def margins(self) -> np.ndarray:
        """z_t·v of every row, measured when a bound asks (a cached run needs no rows)."""
        return self.measure()

    @property
    def margin(self) -> float:
        """The separators' geometric margin γ' = R'/‖v‖ on the vectors the learner sees."""
        return self.radius / float(np.sqrt(self.solution.value))

    @property
    def gap(self) -> float:
        return self.solution.gap


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, np.ndarray):
            h.update(np.ascontiguousarray(part).tobytes())
        elif sp.issparse(part):
            csr = part.tocsr()
            for arr in (csr.data, csr.indices, csr.indptr):
                h.update(np.ascontiguousarray(arr).tobytes())
        else:
            h.update(repr(part).encode())
        h.update(b"|")
    return h.hexdigest()[:16]


def presented_rows(facts: RunFacts) -> np.ndarray | None:
    """The rows presented at least once (increasing indices), or None when that is every row
    (presentations unknown: fixed and shuffled orders present every row each pass)."""
    if facts.presentations is None:
        return None
    counts = np.asarray(facts.presentations)
    shown = np.flatnonzero(counts > 0)
    return None if shown.shape[0] == counts.shape[0] else shown


def _solved(facts: RunFacts, kind: str, params: tuple, compute):
    """``compute()`` once per (data, labels, kind, params, rows presented): memory, then disk,
    then solve. ``compute`` must solve on the presented rows (``presented_rows``) alone."""
    data = facts.data_key or _digest(facts.X)
    shown = presented_rows(facts)
    if shown is not None:  # every row presented keeps the key it always had
        params = (*params, "presented", shown)
    key = f"{data}-best-{kind}-{_digest(facts.y, *params)}"
    memo = (facts.cache_dir, key)
    if memo in _memory:
        _memory.move_to_end(memo)
        return _memory[memo]
    if facts.cache_dir and facts.data_key:

        def arrays():  # one array (value, gap, v...): a cached run reads a single one
            found = compute()
            if found is None:
                return None
            return {"solution": np.concatenate(([found.value, found.gap], found.v))}

        # here, not at the top: the certificates bring the data loaders (scikit-learn, ~1.3 s)
        # into every reader of the bounds' names, such as the report
        from lincls.geometry.certificates import CertificateCache

        stored = CertificateCache(facts.cache_dir).get_arrays(key, arrays)
        solution = None
        if stored is not None and "solution" not in stored:  # a file of an older layout
            stored = arrays()
        if stored is not None:
            packed = stored["solution"]
            solution = comparators.Solution(packed[2:], float(packed[0]), float(packed[1]))
    else:
        solution = compute()
    _memory[memo] = solution
    while len(_memory) > MEMORY:
        _memory.popitem(last=False)
    return solution


def signed_labels(facts: RunFacts) -> np.ndarray:
    """y as ±1 for a binary learner (+1 for ``classes_[1]``), or as the given ±1 labels."""
    classes = getattr(facts.learner, "classes_", None)
    y = np.asarray(facts.y)
    if classes is None:
        return y.astype(np.float64)
    return np.where(y == classes[1], 1.0, -1.0)


def augmented(facts: RunFacts, c: float):
    """(rows x' = (x, c) of X, or X itself when c = 0; R' = √(R² + c²))."""
    X = facts.X
    if c != 0.0:
        column = np.full((X.shape[0], 1), c)
        X = sp.hstack([X, column], format="csr") if sp.issparse(X) else np.hstack([X, column])
    elif not sp.issparse(X):
        X = np.asarray(X, dtype=np.float64)
    return X, float(np.sqrt(facts.radius**2 + c**2))


def _radius(facts: RunFacts, c: float) -> float:
    """R' = √(R² + c²), R the largest norm among the presented rows."""
    shown = presented_rows(facts)
    radius = facts.radius
    if shown is not None:
        radius = float(row_norms(facts.X[shown]).max()) if shown.shape[0] else 0.0
    return float(np.sqrt(radius**2 + c**2))


def _rows(facts: RunFacts, radius: float):
    """Z = y·x'/R' for every row: the signed vectors the learner sees, the presented ones
    scaled to norm ≤ 1 by the radius R' of the presented rows (``_radius``)."""
    c = float(facts.learner.bias_feature_)
    X, _ = augmented(facts, c)
    y = signed_labels(facts)
    return sp.diags(y / radius) @ X if sp.issparse(X) else X * (y / radius)[:, None]


def _only(rows, shown: np.ndarray | None):
    """``rows`` restricted to the presented ones (all of them when ``shown`` is None)."""
    return rows if shown is None else rows[shown]


def presented_vectors(facts: RunFacts, c: float):
    """(x' = (x, c) of the presented rows, their ±1 labels): the sequence's distinct vectors."""
    X, _ = augmented(facts, c)
    shown = presented_rows(facts)
    return _only(X, shown), _only(signed_labels(facts), shown)


def _missing(facts: RunFacts) -> str | None:
    if facts.X is None or facts.y is None:
        return "the training data are not at hand (no best comparator)"
    if facts.X.shape[0] == 0:
        return "no training rows"
    shown = presented_rows(facts)
    if shown is not None and shown.shape[0] == 0:
        return "no example was presented"
    return None


def separator(facts: RunFacts) -> Comparator | str:
    """min ‖v‖ s.t. y_t v·x'_t ≥ 1 over the presented rows t: Novikoff's best comparator on the
    sequence the learner was shown (``margins`` are measured on every row)."""
    reason = _missing(facts)
    if reason:
        return reason
    c = float(facts.learner.bias_feature_)
    radius = _radius(facts, c)
    shown = presented_rows(facts)

    def solve():
        return comparators.hard_margin(_only(_rows(facts, radius), shown))

    solution = _solved(facts, "hard", (c,), solve)
    if solution is None:
        return "the vectors the learner sees are not linearly separable"
    return Comparator(
        solution, radius, lambda: np.asarray(_rows(facts, radius) @ solution.v).ravel()
    )


def _presented(facts: RunFacts):
    """(rows presented at least once, presentations of every row, c, R'), or why not."""
    reason = _missing(facts)
    if reason:
        return reason
    if facts.presentations is None:
        return "the presentations of each example are unknown"
    counts = np.asarray(facts.presentations, dtype=np.float64)
    c = float(facts.learner.bias_feature_)
    return np.flatnonzero(counts > 0), counts, c, _radius(facts, c)


def deficit(facts: RunFacts) -> Comparator | str:
    """min ‖v‖ + ‖(1 − Zv)₊‖_k: Freund and Schapire's best (u, γ), every presentation counted."""
    presented = _presented(facts)
    if isinstance(presented, str):
        return presented
    shown, counts, c, radius = presented

    def solve():
        return comparators.deficit(_rows(facts, radius)[shown], counts[shown])

    solution = _solved(facts, "deficit", (c, counts), solve)
    return Comparator(
        solution, radius, lambda: np.asarray(_rows(facts, radius) @ solution.v).ravel()
    )


def hinge(facts: RunFacts, C: float, squared: bool) -> Comparator | str:
    """min ‖u‖² + 2C Σ_t ℓ*_t (or ℓ*_t²) over every round: PA-I's (PA-II's) best comparator.

    Solved on the rows scaled to radius 1 with C·R'², whose objective is R'² times the original
    one; ``solution.value`` is converted back (‖u‖² + 2C Σ ℓ* on the vectors the learner sees).
    """
    presented = _presented(facts)
    if isinstance(presented, str):
        return presented
    shown, counts, c, radius = presented
    scaled_C = C * radius**2

    def solve():
        return comparators.hinge(_rows(facts, radius)[shown], counts[shown], scaled_C, squared)

    solution = _solved(facts, "hinge2" if squared else "hinge1", (c, counts, C), solve)
    original = comparators.Solution(solution.v, solution.value / radius**2, solution.gap)
    return Comparator(
        original, radius, lambda: np.asarray(_rows(facts, radius) @ solution.v).ravel()
    )


def multiclass_separator(facts: RunFacts) -> Comparator | str:
    """min ‖V‖_F s.t. (v_y − v_r)·x'_t ≥ 1 for every presented t and r ≠ y_t: a multiclass
    hard-margin SVM on Kesler's rows (the multiclass perceptron's and MIRA's best comparator)."""
    reason = _missing(facts)
    if reason:
        return reason
    classes = getattr(facts.learner, "classes_", None)
    y = np.asarray(facts.y)
    index = np.searchsorted(classes, y) if classes is not None else y.astype(np.int64)
    k = len(classes) if classes is not None else int(index.max()) + 1
    c = float(facts.learner.bias_feature_)
    X, _ = augmented(facts, c)
    radius = _radius(facts, c)
    shown = presented_rows(facts)
    if k < 2:
        return "fewer than two classes"

    def solve():
        rows = np.asarray(X.toarray() if sp.issparse(X) else X) / radius
        return comparators.hard_margin(kesler_rows(_only(rows, shown), _only(index, shown), k))

    solution = _solved(facts, "multiclass", (c, k), solve)
    if solution is None:
        return "the vectors the learner sees are not separable by any matrix"
    return Comparator(solution, radius)


def kesler_rows(X: np.ndarray, index: np.ndarray, k: int) -> np.ndarray:
    """Kesler's rows: for every example t and class r ≠ y_t, e_{y_t}⊗x_t − e_r⊗x_t (k·p long)."""
    n, p = X.shape
    rows = np.zeros((n, k - 1, k, p))
    for t in range(n):
        others = [r for r in range(k) if r != index[t]]
        rows[t, np.arange(k - 1), index[t]] = X[t]
        rows[t, np.arange(k - 1), others] = -X[t]
    return rows.reshape(n * (k - 1), k * p)


def kernel_separator(facts: RunFacts) -> Comparator | str:
    """The hard-margin comparator in the kernel's feature space (bias feature c: K + c²), over
    the presented rows.

    ``radius`` is R' = √(max_t K(x_t, x_t) + c²) over the presented t; the problem is solved
    with K'/R'² (feature vectors scaled to radius 1), so the solution's value is Novikoff's
    R'²‖U‖²/γ² itself.
    """
    from lincls.learners.kernel import kernel_diagonal, kernel_matrix  # numba: when asked

    reason = _missing(facts)
    if reason:
        return reason
    learner = facts.learner
    kind, degree = learner.kernel, int(getattr(learner, "degree", 1))
    gamma = float(getattr(learner, "gamma", 1.0))
    c2 = float(learner.bias_feature_) ** 2
    X = _only(facts.X, presented_rows(facts))
    radius = float(np.sqrt(kernel_diagonal(X, kind, degree).max() + c2))

    def solve():
        y = _only(signed_labels(facts), presented_rows(facts))

        def columns(rows):  # Q[:, rows]: only the working set's kernel columns are computed
            K = kernel_matrix(X, X[rows], kind, degree, gamma) + c2
            return K * (np.outer(y, y[rows]) / radius**2)

        return comparators.kernel_hard_margin(columns, X.shape[0])

    params = (kind, degree, gamma if kind == "rbf" else 0.0, c2)
    solution = _solved(facts, "kernel", params, solve)
    if solution is None:
        return "no separator in the kernel's feature space"
    return Comparator(solution, radius)


def details(found: Comparator) -> dict[str, float]:
    """What a bound logs of its best comparator: margin, radius and the relative duality gap."""
    return {"margin": found.margin, "radius": found.radius, "gap": found.gap}
