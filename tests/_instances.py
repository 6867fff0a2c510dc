"""Many small certified instances at once, fitted with the learners' own numba kernels.

``batch`` draws B instances of one shape (vectorized), ``run`` fits one of them by calling a
learner's one-pass kernel directly (no estimator overhead), and ``facts`` describes the result to
the bound registry through a stand-in for the fitted estimator.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from lincls import bounds
from lincls.geometry import certify
from lincls.learners.passive_aggressive import pa_pass_dense
from lincls.learners.perceptron import perceptron_pass_dense

PA_CODE = {"pa": 0, "pa1": 1, "pa2": 2}


def batch(rng, count, n, d, scale, offset_fraction, push, flip=0.0):
    """``count`` instances (X, y, u, b): uniform points in a ball of radius ``scale``, labelled
    by a random (u, b) and pushed ``push``·scale away from it (a margin), then a fraction
    ``flip`` of labels flipped. Margins and radii are measured later, never assumed."""
    u = rng.standard_normal((count, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    g = rng.standard_normal((count, n, d))
    g /= np.linalg.norm(g, axis=2, keepdims=True)
    X = g * (scale * rng.uniform(0, 1, (count, n, 1)) ** (1.0 / d))
    b = offset_fraction * scale * rng.uniform(-1, 1, count)
    s = np.einsum("bnd,bd->bn", X, u) + b[:, None]
    y = np.where(s >= 0, 1.0, -1.0)
    X += (push * scale * y)[:, :, None] * u[:, None, :]
    if flip:
        y = np.where(rng.uniform(0, 1, y.shape) < flip, -y, y)
    return X, y, u, b


def run(X, y, rule, *, bias_feature, passes, shuffle_rng=None, lr=1.0, tau=0.0, C=1.0):
    """Fit one instance from w = 0: (mistakes, passes made, rows of the mistakes)."""
    n = X.shape[0]
    w = np.zeros(X.shape[1])
    b = np.zeros(1)
    rows = np.empty(n, dtype=np.int64)
    steps = np.empty(n, dtype=np.int64)
    cast = np.zeros(1)
    total, seen, made = 0, [], 0
    c2 = bias_feature**2
    for _ in range(passes):
        order = (
            shuffle_rng.permutation(n).astype(np.int64)
            if shuffle_rng is not None
            else np.arange(n, dtype=np.int64)
        )
        if rule == "perceptron":
            m, updates = perceptron_pass_dense(X, y, order, w, b, lr, c2, tau, rows, steps, cast)
        else:
            m, updates = pa_pass_dense(X, y, order, w, b, PA_CODE[rule], C, c2, c2, rows, steps)
        total += m
        seen.append(rows[:m].copy())
        made += 1
        if updates == 0:
            break
    return total, made, np.concatenate(seen)


def facts(X, y, u, b, learner, passes_made, mistake_rows):
    """The registry's view of one fitted instance (generator certificate, every presentation)."""
    cert = certify(X, y, u, b, "generator")
    learner.mistake_indices_ = mistake_rows
    learner.n_passes_ = passes_made
    norms = np.einsum("ij,ij->i", X, X)
    return bounds.RunFacts(
        learner=learner,
        radius=float(np.sqrt(norms.max())),
        certificate=cert,
        certificates=(cert,),
        sq_norms=norms,
        presentations=np.full(X.shape[0], passes_made),
        n_train=X.shape[0],
    )


def stand_in(family, bias_feature, **more):
    """A stand-in for a fitted estimator: what the bounds read."""
    return SimpleNamespace(bound_family=family, bias_feature_=bias_feature, zero_init_=True, **more)
