"""Many small certified instances at once, fitted with the learners' own numba kernels.

``batch`` draws B instances of one shape (vectorized), ``run`` fits one of them by calling a
learner's one-pass kernel directly (no estimator overhead), and ``facts`` describes the result to
the bound registry through a stand-in for the fitted estimator. ``multiclass_batch`` and
``disjunction_batch`` draw multiclass and boolean instances; ``run_kernel``, ``run_multiclass``
and ``run_winnow`` fit the other families with their own kernels.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from lincls import bounds
from lincls.geometry import certify
from lincls.learners.kernel import _KERNEL_CODE as KERNEL_CODE
from lincls.learners.kernel import kernel_pass_dense
from lincls.learners.mira import mira_pass_dense
from lincls.learners.multiclass import multiclass_perceptron_pass_dense
from lincls.learners.passive_aggressive import pa_pass_dense
from lincls.learners.perceptron import perceptron_pass_dense
from lincls.learners.winnow import winnow_pass_dense

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
    total, seen, made = 0, [], 0
    c2 = bias_feature**2
    for _ in range(passes):
        order = (
            shuffle_rng.permutation(n).astype(np.int64)
            if shuffle_rng is not None
            else np.arange(n, dtype=np.int64)
        )
        if rule == "perceptron":
            m, updates = perceptron_pass_dense(X, y, order, w, b, lr, c2, tau, rows, steps)
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


# --- the other families: kernel perceptron, multiclass (perceptron, MIRA), Winnow, voted ------


def passes_of(n, passes, shuffle_rng):
    """The orders of ``passes`` passes over n rows: fixed, or a new permutation each pass."""
    for _ in range(passes):
        if shuffle_rng is None:
            yield np.arange(n, dtype=np.int64)
        else:
            yield shuffle_rng.permutation(n).astype(np.int64)


def run_kernel(X, y, kernel, degree, *, bias_sq, passes, shuffle_rng=None):
    """Fit the kernel perceptron (dual form, from f = 0) with its own one-pass kernel.

    Returns (mistakes, passes made, rows of the mistakes)."""
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    g = np.zeros(n)
    alpha = np.zeros(n, dtype=np.int64)
    intercept = np.zeros(1)
    cache, slot_of = np.empty((n, n)), np.full(n, -1, dtype=np.int64)
    used, row = np.zeros(1, dtype=np.int64), np.empty(n)
    rows, steps = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    total, seen, made = 0, [], 0
    for order in passes_of(n, passes, shuffle_rng):
        m = kernel_pass_dense(
            X, sq, y, order, g, alpha, intercept, bias_sq, KERNEL_CODE[kernel], degree, 1.0,
            cache, slot_of, used, row, rows, steps,
        )  # fmt: skip
        total += m
        seen.append(rows[:m].copy())
        made += 1
        if m == 0:
            break
    return total, made, np.concatenate(seen)


def multiclass_batch(rng, count, n, d, k, scale, offset_fraction, push):
    """``count`` multiclass instances (X, y, U, b): a random U (‖U‖_F = 1) and offsets b of
    size ``offset_fraction``·scale/√k label points uniform in a ball of radius ``scale`` by the
    argmax of U·x + b. Of 4n candidates the n kept are drawn among those whose gap
    (u_y·x + b_y) − max_{r≠y}(u_r·x + b_r) is ≥ ``push``·scale, then the largest gaps. The
    margins are measured later, never assumed."""
    U = rng.standard_normal((count, k, d))
    U /= np.linalg.norm(U, axis=(1, 2), keepdims=True)
    b = offset_fraction * scale * rng.uniform(-1, 1, (count, k)) / np.sqrt(k)
    m = 4 * n
    g = rng.standard_normal((count, m, d))
    g /= np.linalg.norm(g, axis=2, keepdims=True)
    X = g * (scale * rng.uniform(0, 1, (count, m, 1)) ** (1.0 / d))
    scores = np.einsum("bnd,bkd->bnk", X, U) + b[:, None, :]
    label = np.argmax(scores, axis=2)
    top = np.take_along_axis(scores, label[..., None], axis=2)[..., 0]
    np.put_along_axis(scores, label[..., None], -np.inf, axis=2)
    gap = top - scores.max(axis=2)
    wanted = push * scale
    priority = np.where(
        gap >= wanted, 1.0 + rng.uniform(0, 1, gap.shape), gap / max(wanted, 1e-300)
    )
    keep = np.argsort(-priority, axis=1)[:, :n]
    X = np.take_along_axis(X, keep[..., None], axis=1)
    return X, np.take_along_axis(label, keep, axis=1), U, b


def run_multiclass(X, y, rule, *, bias_feature, passes, shuffle_rng=None, max_step=1.0, k=2):
    """Fit the multiclass perceptron (lr = 1) or MIRA from W = 0 with its own kernel.

    Returns (mistakes, passes made, rows of the mistakes)."""
    n, d = X.shape
    W, intercept, scores = np.zeros((k, d)), np.zeros(k), np.empty(k)
    rows, steps = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    total, seen, made = 0, [], 0
    for order in passes_of(n, passes, shuffle_rng):
        if rule == "multiclass_perceptron":
            m, updates = multiclass_perceptron_pass_dense(
                X, y, order, W, intercept, 1.0, bias_feature, scores, rows, steps
            )
        else:
            m, updates = mira_pass_dense(
                X, y, order, W, intercept, max_step, bias_feature**2, scores, rows, steps
            )
        total += m
        seen.append(rows[:m].copy())
        made += 1
        if updates == 0:
            break
    return total, made, np.concatenate(seen)


def disjunction_batch(rng, count, n, n_features, k, density):
    """``count`` boolean instances (X, y, u, b) labelled by a monotone disjunction of k random
    attributes of ``n_features``, each attribute on with probability ``density``; (u, b) is the
    disjunction's separator u = 1_R/√k, b = −1/(2√k)."""
    X = (rng.uniform(0, 1, (count, n, n_features)) < density).astype(np.float64)
    relevant = np.argsort(rng.uniform(0, 1, (count, n_features)), axis=1)[:, :k]
    mask = np.zeros((count, n_features))
    np.put_along_axis(mask, relevant, 1.0, axis=1)
    y = np.where(np.einsum("bnf,bf->bn", X, mask) > 0, 1.0, -1.0)
    return X, y, mask / np.sqrt(k), np.full(count, -0.5 / np.sqrt(k))


def run_winnow(X, y, variant, *, alpha, theta, passes, shuffle_rng=None):
    """Fit Winnow1 / Winnow2 from w = 1 with its own kernel: (mistakes, passes, mistake rows)."""
    n = X.shape[0]
    w = np.ones(X.shape[1])
    rows, steps = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    total, seen, made = 0, [], 0
    for order in passes_of(n, passes, shuffle_rng):
        m = winnow_pass_dense(X, y, order, w, theta, alpha, variant == "winnow1", rows, steps)
        total += m
        seen.append(rows[:m].copy())
        made += 1
        if m == 0:
            break
    return total, made, np.concatenate(seen)


def voted_error(X, y, mistake_rows, bias_feature, x_test, y_test):
    """Whether the voted perceptron of a one-pass run (fixed order, lr = 1) errs on ``x_test``.

    v_0 = 0 and v_k the weights after the k-th mistake, with Freund & Schapire's counts
    c_0 = r_1, c_k = r_{k+1} − r_k, c_last = n − r_last (r_k the step of the k-th mistake, which
    is its row in a one-pass fixed order); the vote is Σ c_k sgn(v_k·x + b_k). A tie counts as
    an error."""
    signed = y[mistake_rows]
    V = np.vstack([np.zeros(X.shape[1]), np.cumsum(signed[:, None] * X[mistake_rows], axis=0)])
    B = np.concatenate(([0.0], np.cumsum(signed * bias_feature**2)))
    counts = np.diff(np.concatenate(([0], mistake_rows, [X.shape[0]])))
    vote = counts @ np.sign(V @ x_test + B)
    return bool(y_test * vote <= 0)
