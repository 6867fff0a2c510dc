"""Seed 002's Figure 2b: separable data on which least squares misclassifies and the perceptron
does not.

Two classes sit close to a separator (u, b = 0), as in ``make_separable``; a further cluster of
positive examples lies far out on the positive side, near distance ``radius`` along u. Those far
points are classified right by every separator of the near points, yet least squares asks them
to score +1 like the near ones: to fit their large u·x it tilts and lowers its line, and its
decision boundary moves into the near positive class. The perceptron only reacts to mistakes
and separates the data (the set is certified, so its bounds apply).
"""

from __future__ import annotations

import numpy as np

from lincls.data.dataset import Dataset
from lincls.data.synthetic import _orthogonal, _sample, _unit
from lincls.errors import LinclsInputError, check_number, check_radius

# The far cluster spans [1 − FAR_SPREAD, 1]·radius along u.
FAR_SPREAD = 0.1


def _far_cluster(rng: np.random.Generator, count: int, u: np.ndarray, radius: float):
    """``count`` positive points with u·x in [0.9, 1]·radius and ‖x‖ ≤ radius."""
    along = radius * (1.0 - FAR_SPREAD * rng.uniform(0.0, 1.0, count))
    room = np.sqrt(np.maximum(radius**2 - along**2, 0.0))
    ortho = _orthogonal(rng, u, count) * (room * rng.uniform(0.0, 1.0, count))[:, None]
    return np.outer(along, u) + ortho, np.ones(count)


def _draw(rng, n, n_far, u, margin, near, radius):
    X_near, y_near = _sample(rng, n - n_far, u, margin, near, 0.0)
    X_far, y_far = _far_cluster(rng, n_far, u, radius)
    return np.vstack([X_near, X_far]), np.concatenate([y_near, y_far])


def make_far_points(
    n: int = 100,
    d: int = 2,
    margin: float = 0.1,
    near: float = 1.0,
    radius: float = 10.0,
    far: float = 0.2,
    seed: int = 0,
    n_test: int | None = None,
) -> Dataset:
    """Separable data whose far-away positives drag least squares into errors (seed 002 Fig. 2b).

    round(``far``·n) positives lie along u at distance in [0.9, 1]·``radius`` (norm ≤ radius);
    the other examples are ``make_separable``'s, balanced, within norm ``near`` and with
    y·u·x ≥ ``margin``. Certified with the generator's (u, b = 0): example 0 attains the margin,
    one far point (x = radius·u) the radius. Rows are shuffled; the test split (``n_test``,
    default ``n``) comes from the same distribution.
    """
    check_number("n", n, low=4, integer=True)
    check_number("d", d, low=1, integer=True)
    check_number("margin", margin, low=0, low_open=True)
    check_number("near", near, low=0, low_open=True)
    check_radius(radius)
    check_number("far", far, low=0, high=0.5, low_open=True)
    check_number("seed", seed, low=0, integer=True)
    if margin >= near:
        raise LinclsInputError("margin", f"must be < near = {near:g}, got {margin:g}")
    if radius < 2 * near:
        raise LinclsInputError(
            "radius", f"must be ≥ 2·near = {2 * near:g} so the far points are far, got {radius:g}"
        )
    n_test = n if n_test is None else n_test
    check_number("n_test", n_test, low=0, integer=True)
    n, d, n_test = int(n), int(d), int(n_test)
    n_far = round(far * n)
    if not 1 <= n_far <= n - 2:
        raise LinclsInputError(
            "far", f"must leave 1 to n − 2 far points, got round({far:g}·{n}) = {n_far}"
        )
    rng = np.random.default_rng(int(seed))
    u = _unit(rng, d)
    X, y = _draw(rng, n, n_far, u, margin, near, radius)
    # Attain the margin with example 0 and the radius with the last far point.
    X[0] = y[0] * margin * u + _orthogonal(rng, u, 1)[0] * np.sqrt(near**2 - margin**2)
    X[-1] = radius * u
    order = rng.permutation(n)
    X, y = X[order], y[order]
    X_test, y_test = _draw(rng, n_test, round(far * n_test), u, margin, near, radius)
    if n_test:
        shuffled = rng.permutation(n_test)
        X_test, y_test = X_test[shuffled], y_test[shuffled]
    return Dataset.certified(
        name="far_points",
        X=X,
        y=y,
        X_test=X_test,
        y_test=y_test,
        u=u,
        b=0.0,
        params={"n": n, "d": d, "margin": margin, "near": near, "radius": radius, "far": far,
                "seed": seed},
    )  # fmt: skip


__all__ = ["FAR_SPREAD", "make_far_points"]
