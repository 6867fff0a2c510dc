"""The black-box search: CMA-ES (the ``cma`` package) over a fixed-length sequence's coordinates.

A point z of R^(n·d + n) is a sequence of n examples in d dimensions: row t is z's t-th block of
d numbers scaled to norm R (the radius is fixed, as a bound's R is), its label the sign of z's
t-th last number. Nothing of the learner is read: each point is scored as a run scores it
(``lincls.search.instance.score``), and CMA-ES minimises −ratio (a sequence whose bound is
missing or vacuous scores ``NO_RATIO``), the mistakes breaking ties. The budget is split over
the radii (``radii``, capped at the theorem's ``max_radius``), one CMA-ES run each. It is the
adaptive search's counterpart: no knowledge of the learner's state, every coordinate free.
"""

from __future__ import annotations

import time

import numpy as np

from lincls.search.instance import Found, Scored, Target, score

BOOLEAN_WIDTH = 16  # attributes of a boolean sequence
TIE = 1e-6  # the weight of the mistakes beside the ratio: a longer instance at the same ratio


def sequence(z: np.ndarray, n: int, d: int, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """The sequence (X, y) a point z stands for (module docstring)."""
    X = np.asarray(z[: n * d], dtype=np.float64).reshape(n, d)
    norms = np.linalg.norm(X, axis=1)
    norms[norms == 0] = 1.0
    X = X * (radius / norms)[:, np.newaxis]
    y = np.where(np.asarray(z[n * d :]) < 0, -1, 1).astype(np.int64)
    return X, y


def boolean_sequence(z: np.ndarray, n: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The boolean sequence (X, y) a point z stands for, labelled by attribute 0's disjunction."""
    X = (np.asarray(z[: n * d]).reshape(n, d) > 0).astype(np.float64)
    return X, np.where(X[:, 0] > 0, 1, -1).astype(np.int64)


def blackbox_search(
    target: Target,
    n: int = 8,
    d: int = 8,
    radii: tuple[float, ...] = (1.0, 100.0),
    sigma: float = 0.5,
    seconds: float = 30.0,
    seed: int = 0,
) -> Found:
    """CMA-ES against ``target`` on sequences of ``n`` examples in ``d`` dimensions at each
    radius of ``radii``, from a standard normal start with step ``sigma``, within about
    ``seconds``. Returns the best sequence seen."""
    import cma  # here: only this search needs it

    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    boolean = bool(target.learner.__sklearn_tags__().input_tags.positive_only)
    u, b = (np.eye(1, BOOLEAN_WIDTH)[0], -0.5) if boolean else (None, 0.0)
    d = BOOLEAN_WIDTH if boolean else d
    if boolean:
        radii = (1.0,)
    if target.max_radius is not None:
        radii = tuple(sorted({min(r, target.max_radius) for r in radii}))
    best: Found | None = None
    evaluations = 0
    for k, radius in enumerate(radii):
        deadline = started + seconds * (k + 1) / len(radii)
        options = {"seed": int(rng.integers(1, 2**31)), "verbose": -9, "tolfun": 0, "tolx": 0}
        strategy = cma.CMAEvolutionStrategy(rng.standard_normal(n * d + n), sigma, options)
        while time.perf_counter() < deadline and not strategy.stop():
            points = strategy.ask()
            losses = []
            for z in points:
                X, y = boolean_sequence(z, n, d) if boolean else sequence(z, n, d, radius)
                scored = score(target, X, y, u, b)
                evaluations += 1
                ratio, mistakes = scored.key
                losses.append(-(ratio + TIE * mistakes))
                if best is None or scored.key > best.scored.key:
                    best = Found(target, "blackbox", X, y, scored, 0.0, 0, u, b)
            strategy.tell(points, losses)
    if best is None:
        best = Found(target, "blackbox", np.zeros((0, d)), np.zeros(0, np.int64),
                     Scored(0.0, None, None), 0.0, 0)  # fmt: skip
    best.seconds = time.perf_counter() - started
    best.evaluations = evaluations
    return best
