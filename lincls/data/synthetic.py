"""Certified synthetic data: every example's margin and norm are known, and the extremes attained.

A certified dataset comes with the separator (u, b) that generated it, ‖u‖ = 1, and

    y_t (u·x_t + b) ≥ margin   and   ‖x_t‖ ≤ radius   for every training example,

with equality reached by at least one example each (to rounding), so the geometry a bound is
computed from is the geometry the learner sees.
"""

from __future__ import annotations

import numpy as np

from lincls.data.dataset import Dataset
from lincls.errors import LinclsInputError, check_number, check_radius


def _unit(rng: np.random.Generator, d: int) -> np.ndarray:
    u = rng.standard_normal(d)
    while not np.any(u):
        u = rng.standard_normal(d)
    return u / np.linalg.norm(u)


def _orthogonal(rng: np.random.Generator, u: np.ndarray, count: int) -> np.ndarray:
    """``count`` random unit vectors orthogonal to the unit vector ``u`` (zeros when d = 1)."""
    g = rng.standard_normal((count, u.shape[0]))
    # Project twice: when g is nearly parallel to u one projection leaves a rounding residue
    # along u that normalizing then magnifies (it moved a margin by 1e-11 relative).
    g -= np.outer(g @ u, u)
    g -= np.outer(g @ u, u)
    norms = np.linalg.norm(g, axis=1, keepdims=True)
    return np.divide(g, norms, out=np.zeros_like(g), where=norms > 1e-12)


def _balanced_labels(rng: np.random.Generator, n: int) -> np.ndarray:
    y = np.ones(n)
    y[: n // 2] = -1.0
    return rng.permutation(y)


def _sample(rng, n, u, margin, radius, offset):
    """Points with y(u·x + b) ≥ margin and ‖x‖ ≤ radius, many of them close to the margin.

    The component along u is moved from a uniform draw in the ball into the allowed slab; the
    orthogonal part keeps its direction and shrinks only if the norm would pass the radius.
    """
    d = u.shape[0]
    y = _balanced_labels(rng, n)
    along = np.abs(rng.uniform(-1.0, 1.0, n) if d == 1 else _ball_projection(rng, n, d))
    low = margin - y * offset  # the smallest |u·x| the label allows
    size = low + (radius - low) * along
    s = y * size
    room = np.sqrt(np.maximum(radius**2 - s**2, 0.0))
    ortho = (
        _orthogonal(rng, u, n) * (room * rng.uniform(0.0, 1.0, n) ** (1.0 / max(d - 1, 1)))[:, None]
    )
    return np.outer(s, u) + ortho, y


def _ball_projection(rng, n, d):
    """u·z for z uniform in the unit ball of R^d (u fixed): the coordinate of a uniform point."""
    g = rng.standard_normal((n, d))
    r = rng.uniform(0.0, 1.0, n) ** (1.0 / d)
    return g[:, 0] / np.linalg.norm(g, axis=1) * r


def make_separable(
    n: int,
    d: int,
    margin: float,
    radius: float,
    offset: float = 0.0,
    seed: int = 0,
    n_test: int | None = None,
) -> Dataset:
    """Linearly separable data with margin ``margin`` and radius ``radius``, certified.

    The training set holds one example exactly on the margin (y(u·x + b) = margin) and one of norm
    exactly ``radius``; labels are balanced (⌈n/2⌉ positive). ``offset`` is the b of the
    separator; it needs margin + |offset| ≤ radius. The test split (``n_test``, default ``n``)
    comes from the same distribution.
    """
    check_number("n", n, low=2, integer=True)  # balanced labels: both classes from n = 2
    check_number("d", d, low=1, integer=True)
    check_number("margin", margin, low=0, low_open=True)
    check_radius(radius)
    check_number("offset", offset)
    check_number("seed", seed, low=0, integer=True)
    if margin > radius:
        raise LinclsInputError("margin", f"must be ≤ radius = {radius:g}, got {margin:g}")
    if margin + abs(offset) > radius * (1 + 1e-12):  # rounding of radius − margin is allowed
        raise LinclsInputError(
            "offset",
            f"|offset| must be ≤ radius − margin = {radius - margin:g} "
            f"(the radius cannot hold it), got {offset:g}",
        )
    n_test = n if n_test is None else n_test
    check_number("n_test", n_test, low=0, integer=True)
    n, d, n_test = int(n), int(d), int(n_test)
    rng = np.random.default_rng(int(seed))
    u = _unit(rng, d)
    X, y = _sample(rng, n, u, margin, radius, offset)
    # Attain the margin with example 0 (placed at norm radius when d > 1) and the radius with
    # example 1 (when d = 1 the margin example cannot have both).
    s0 = y[0] * margin - offset
    X[0] = s0 * u + _orthogonal(rng, u, 1)[0] * np.sqrt(max(radius**2 - s0**2, 0.0))
    if n > 1 and d == 1:
        X[1] = y[1] * radius * u
    X_test, y_test = _sample(rng, n_test, u, margin, radius, offset)
    return Dataset.certified(
        name="separable",
        X=X,
        y=y,
        X_test=X_test,
        y_test=y_test,
        u=u,
        b=float(offset),
        params={"n": n, "d": d, "margin": margin, "radius": radius, "offset": offset, "seed": seed},
    )


def make_orthonormal(d: int, radius: float = 1.0, seed: int = 0) -> Dataset:
    """The tight instance of Novikoff's bound: x_t = radius·e_t, t = 1..d, labels balanced.

    From w = 0 a homogeneous perceptron errs on every example of the first pass: exactly d
    mistakes, and (R/γ)² = d for the separator u = y/√d (margin radius/√d).
    """
    check_number("d", d, low=1, integer=True)
    check_radius(radius)
    d = int(d)
    rng = np.random.default_rng(int(seed))
    y = _balanced_labels(rng, d)
    X = radius * np.eye(d)
    return Dataset.certified(
        name="orthonormal",
        X=X,
        y=y,
        X_test=X.copy(),
        y_test=y.copy(),
        u=y / np.sqrt(d),
        b=0.0,
        params={"d": d, "radius": radius, "seed": seed},
    )


def make_noisy(
    n: int,
    d: int,
    margin: float,
    radius: float,
    offset: float = 0.0,
    flip: float = 0.0,
    deficit: float = 0.0,
    overlap: int = 10,
    seed: int = 0,
    n_test: int | None = None,
) -> Dataset:
    """Data that are not separable, certified with respect to the generator's (u, b).

    Starts from ``make_separable`` (margin γ = ``margin``) and then

    - flips the labels of round(``flip``·n) random training examples (rate p = ``flip``);
    - moves ``overlap`` other examples to the margin γ − δ, δ = ``deficit``/√overlap, so that
      they alone have Freund–Schapire deficit √(Σ d_t²) = ``deficit`` at γ.

    The dataset's measured ``margin`` is then negative (or below γ); the total deficit at γ, with
    the flips, is what the runner logs for the generator's certificate. The test split is
    clean (the separable distribution). Example 1 keeps the norm ``radius``.
    """
    check_number("flip", flip, low=0, high=0.5)
    check_number("deficit", deficit, low=0)
    check_number("overlap", overlap, low=0, integer=True)
    data = make_separable(n, d, margin, radius, offset=offset, seed=seed, n_test=n_test)
    n, overlap = data.X.shape[0], int(overlap)
    movable = n - 2  # examples 0 and 1 attain the margin and the radius
    n_flip = round(flip * n)
    if deficit > 0 and overlap == 0:
        raise LinclsInputError("overlap", "must be ≥ 1 when deficit > 0, got 0")
    if deficit == 0:
        overlap = 0
    if n_flip + overlap > movable:
        raise LinclsInputError(
            "n", f"must be ≥ {n_flip + overlap + 2} to flip {n_flip} and overlap {overlap}, got {n}"
        )
    shortfall = deficit / np.sqrt(overlap) if overlap else 0.0
    if abs(margin - shortfall) + abs(offset) > radius:
        most = np.sqrt(overlap) * (radius - abs(offset) + margin)
        raise LinclsInputError(
            "deficit",
            f"must be ≤ √overlap·(radius − |offset| + margin) = {most:g} so the moved points "
            f"stay in the radius, got {deficit:g}",
        )
    rng = np.random.default_rng([int(seed), 1])
    chosen = 2 + rng.permutation(movable)[: n_flip + overlap]
    X, y = data.X.copy(), data.y.copy()
    y[chosen[:n_flip]] *= -1.0
    moved = chosen[n_flip:]
    if overlap:
        u, b = data.u, data.b
        s = y[moved] * (margin - shortfall) - b  # the component along u
        ortho = _orthogonal(rng, u, overlap)
        room = np.sqrt(np.maximum(radius**2 - s**2, 0.0))
        X[moved] = np.outer(s, u) + ortho * (room * rng.uniform(0.0, 1.0, overlap))[:, None]
    params = {**data.params, "flip": flip, "deficit": deficit, "overlap": overlap}
    return Dataset.certified(
        name="noisy", X=X, y=y, X_test=data.X_test, y_test=data.y_test, u=data.u, b=data.b,
        params=params,
    )  # fmt: skip


PLANE_KINDS = ("separable", "noisy", "xor")


def make_plane(
    kind: str = "separable",
    n: int = 200,
    margin: float = 0.1,
    radius: float = 1.0,
    offset: float = 0.0,
    flip: float = 0.1,
    seed: int = 0,
    n_test: int | None = None,
) -> Dataset:
    """2-D sets for pictures: ``"separable"`` and ``"noisy"`` (certified, d = 2) or ``"xor"``.

    ``"xor"``: points in the four quadrants of the disc of ``radius``, labelled by the sign of
    x₁·x₂, kept at distance ≥ ``margin`` from both axes — no line separates them (no certificate).
    """
    if kind not in PLANE_KINDS:
        raise LinclsInputError("kind", f"must be one of {', '.join(PLANE_KINDS)}, got {kind!r}")
    if kind == "separable":
        data = make_separable(n, 2, margin, radius, offset=offset, seed=seed, n_test=n_test)
    elif kind == "noisy":
        data = make_noisy(n, 2, margin, radius, offset=offset, flip=flip, seed=seed,
                          n_test=n_test)  # fmt: skip
    else:
        check_number("n", n, low=2, integer=True)
        check_number("margin", margin, low=0, low_open=True)
        check_radius(radius)
        if margin * np.sqrt(2) >= radius:
            raise LinclsInputError("margin", f"must be < radius/√2 = {radius / np.sqrt(2):g}")
        rng = np.random.default_rng(int(seed))

        def draw(count):
            points = np.empty((0, 2))
            while points.shape[0] < count:
                p = rng.uniform(-radius, radius, (4 * count + 8, 2))
                keep = (np.linalg.norm(p, axis=1) <= radius) & (np.abs(p).min(axis=1) >= margin)
                points = np.vstack([points, p[keep]])
            points = points[:count]
            return points, np.where(points[:, 0] * points[:, 1] > 0, 1.0, -1.0)

        X, y = draw(int(n))
        X_test, y_test = draw(int(n if n_test is None else n_test))
        data = Dataset.plain(name="plane", X=X, y=y, X_test=X_test, y_test=y_test, params={})
    params = {**data.params, "kind": kind}
    return Dataset(
        "plane", data.X, data.y, data.X_test, data.y_test, data.u, data.b, data.margin,
        data.radius, params,
    )  # fmt: skip
