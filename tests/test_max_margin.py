"""The hard-margin certificates against an independent maximum margin, on 240 separable instances.

The independent value shares no code with ``lincls.geometry.comparators``: Lawson and Hanson's
least-distance program solved by scipy's non-negative least squares (an active-set method, no
interior point). Through the origin the maximum margin is the least distance of the rows y·x;
with an offset, half that of the differences x⁺ − x⁻ of opposite labels, taken on a subset of
the rows grown until it holds the support vectors. Each gives a bracket, an upper bound from the
NNLS weights and a lower one from a direction measured on every row, both valid whatever NNLS
did; the test asks it to be closed to 1e-9 before it trusts it. A certificate must then
re-measure to its own margin, lie within 1e-6 (relative) of the bracket and never above it.

Instances (with and without an offset, n from 3 to 5,000): points in a ball, nearly collinear
points (a segment thickened by 1e-7 to 1e-3), points near a plane in d = 10, many points exactly
on both margin hyperplanes, margins from 1e-6 to 1e-1 of the spread, data scaled by 1e±3, more
features than points, repeated rows, sparse input; and the perceptron game's points.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import nnls

from lincls.games.perceptron import make_perceptron_game, play
from lincls.geometry import Certificate, certify, comparators
from lincls.geometry.certificates import max_margin_separator, svm_certificates
from lincls.learners import Perceptron

INSTANCES = 240
ROUND_ROWS = 40  # rows of each class the independent offset margin adds a round
BIG = (2_000, 5_000)  # every twentieth instance is this large
CLOUDS = ("ball", "collinear", "flat", "on_margin", "scaled", "wide", "repeated")


def least_distance(G: np.ndarray) -> tuple[float, float, np.ndarray]:
    """(lower, upper, x): bounds on max_{‖v‖=1} min_t g_t·v, each valid whatever NNLS did, and
    the direction x of the lower one.

    Lawson and Hanson's least-distance program (ch. 23): min ‖x‖ s.t. Gx ≥ 1 from the NNLS of
    [Gᵀ; 1ᵀ] against (0, 1). Its weights u ≥ 0 bound the margin above by ‖Gᵀu‖/Σu; its x, and
    the least-norm solution of G_S x = 1 on the rows S with u > 0, bound it below by their
    margins measured on every row.
    """
    m, p = G.shape
    E = np.vstack([G.T, np.ones((1, m))])
    target = np.zeros(p + 1)
    target[-1] = 1.0
    u, _ = nnls(E, target, maxiter=50 * m)
    residual = E @ u - target
    assert residual[-1] != 0.0  # the rows are separable
    upper = float(np.linalg.norm(G.T @ u)) / float(u.sum())
    on_support = np.linalg.lstsq(G[u > 0], np.ones(int(np.sum(u > 0))), rcond=None)[0]
    x = max((-residual[:-1] / residual[-1], on_support),
            key=lambda x: float((G @ x).min()) / float(np.linalg.norm(x)))  # fmt: skip
    return float((G @ x).min()) / float(np.linalg.norm(x)), upper, x


def scaled_least_distance(G: np.ndarray) -> tuple[float, float, np.ndarray]:
    """``least_distance`` again on G scaled so that its margin is ~1: the program's last
    residual is ~γ², lost in rounding for tiny margins unless the rows are scaled up."""
    _, first, _ = least_distance(G)
    lower, upper, x = least_distance(G / first)
    return lower * first, upper * first, x


def independent_margin(X, y: np.ndarray, homogeneous: bool) -> tuple[float, float]:
    """(lower, upper) bounds on the maximum margin of (X, y) with an offset or through 0.

    Through the origin: the least distance of the rows y·x. With an offset: half that of the
    differences x⁺ − x⁻ of pairs of opposite labels (max_u min u·(x⁺ − x⁻) is twice the
    margin), on a subset of each class's distinct rows: the subset's margin bounds the data's
    above, and its direction, measured on every row with its best offset, below. The subset
    starts with the rows nearest the class means' difference and takes, each round, the rows
    furthest below the subset's margin, until the bracket closes.
    """
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    scale = float(np.linalg.norm(X, axis=1).max())
    X = X / scale
    if homogeneous:
        lower, upper, _ = scaled_least_distance(X * y[:, None])
        return lower * scale, upper * scale
    positive, negative = np.unique(X[y > 0], axis=0), np.unique(X[y < 0], axis=0)
    w = positive.mean(axis=0) - negative.mean(axis=0)
    chosen = [np.argsort(positive @ w, kind="stable")[:ROUND_ROWS],
              np.argsort(-(negative @ w), kind="stable")[:ROUND_ROWS]]  # fmt: skip
    while True:
        near_positive, near_negative = positive[chosen[0]], negative[chosen[1]]
        pairs = (near_positive[:, None, :] - near_negative[None, :, :]).reshape(-1, X.shape[1])
        _, upper, w = scaled_least_distance(pairs)
        scores = positive @ w, negative @ w
        width = float(np.linalg.norm(w))
        lower = float(scores[0].min() - scores[1].max()) / width
        if upper - lower <= 1e-10 * upper:
            return 0.5 * lower * scale, 0.5 * upper * scale
        # each class's rows nearest the subset's hyperplane (midway), beyond those chosen
        middle = 0.5 * float(near_positive.dot(w).min() + near_negative.dot(w).max())
        for side, (rows, sign) in enumerate(((scores[0], 1.0), (scores[1], -1.0))):
            order = np.argsort(sign * (rows - middle), kind="stable")
            fresh = order[~np.isin(order, chosen[side])][:ROUND_ROWS]
            chosen[side] = np.concatenate((chosen[side], fresh))


def assert_is_the_maximum_margin(cert: Certificate, X, y: np.ndarray, homogeneous: bool) -> None:
    """The certificate's margin is its own (u, b)'s on the data, equal to the independent maximum
    to 1e-6 (relative) and never above it."""
    assert abs(float(np.linalg.norm(cert.u)) - 1.0) <= 1e-12
    assert cert.b == 0.0 or not homogeneous
    measured = float((y * (np.asarray(X @ cert.u).ravel() + cert.b)).min())
    # margins are differences of numbers of size R: each is rounded by ~R·2⁻⁵² either way
    rounding = 1e-15 * float(np.max(np.abs(X.data if sp.issparse(X) else X))) * X.shape[1]
    assert cert.margin <= measured + rounding  # what the data have, not a claim
    lower, upper = independent_margin(X, y, homogeneous)
    assert 0.0 < lower and upper - lower <= 1e-9 * upper  # the reference is solved
    assert cert.margin <= upper + rounding  # never more than the data's maximum margin
    assert cert.margin >= lower * (1.0 - 1e-6)
    assert 0.0 <= cert.gap <= comparators.GAP_TOLERANCE


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _cloud(rng: np.random.Generator, kind: str, n: int, d: int) -> np.ndarray:
    if kind == "collinear":  # a segment thickened by ε
        start, direction = rng.normal(size=d), _unit(rng.normal(size=d))
        eps = 10.0 ** rng.uniform(-7, -3)
        return start + rng.uniform(-1, 1, (n, 1)) * direction + eps * rng.normal(size=(n, d))
    if kind == "flat":  # near a plane in d dimensions
        basis = np.linalg.qr(rng.normal(size=(d, 2)))[0]
        return rng.normal(size=(n, 2)) @ basis.T + 1e-6 * rng.normal(size=(n, d))
    X = rng.normal(size=(n, d))
    X *= (rng.uniform(size=(n, 1)) ** (1.0 / d)) / np.linalg.norm(X, axis=1, keepdims=True)
    if kind == "scaled":
        X *= 10.0 ** rng.choice([-3.0, 3.0])
    if kind == "repeated":
        X[n // 2 :] = X[rng.integers(0, n // 2, n - n // 2)]
    return X


def instance(rng: np.random.Generator, kind: str, n: int, d: int, homogeneous: bool):
    """(X, y) separable by a hyperplane through a point of the cloud (the origin when
    ``homogeneous``), the points within a margin of it removed (relative 1e-6 to 1e-1)."""
    X = _cloud(rng, kind, n, d)
    anchor = X[rng.integers(0, X.shape[0])]
    u = rng.normal(size=d)
    if homogeneous:
        u -= (u @ anchor) / (anchor @ anchor) * anchor  # the hyperplane through 0 and the anchor
        u, b = _unit(u), 0.0
    else:
        u = _unit(u)
        b = -float(u @ anchor)
    m = X @ u + b
    spread = float(np.abs(m).max())
    gamma = spread * 10.0 ** rng.uniform(-6, -1)
    if kind == "on_margin":  # half the points moved onto the margin hyperplanes exactly
        moved = rng.uniform(size=n) < 0.5
        sign = np.where(m >= 0, 1.0, -1.0)
        X[moved] += ((sign * gamma - m)[moved])[:, None] * u
        m = X @ u + b
    keep = np.abs(m) >= gamma * (1 - 1e-12)
    return X[keep], np.where(m[keep] > 0, 1.0, -1.0)


def _cases():
    """(homogeneous, cloud, n, d, rng) for every instance, deterministically."""
    rng = np.random.default_rng(2023)
    for i in range(INSTANCES):
        kind = CLOUDS[(i // 2) % len(CLOUDS)]
        n = BIG[(i // 20) % 2] if i % 20 in (0, 1) else int(rng.integers(3, 400))
        if kind == "wide":  # more features than points
            n = int(rng.integers(3, 60))
            d = int(rng.integers(n + 1, 2 * n + 2))
        else:
            d = 10 if kind == "flat" else int(rng.integers(1, 12))
        homogeneous = bool(i % 2)
        yield i, homogeneous, kind, n, max(d, 2 if homogeneous or kind == "collinear" else 1), rng


def test_the_certificate_is_the_maximum_margin_on_240_separable_instances():
    done = {True: 0, False: 0}
    for i, homogeneous, kind, n, d, rng in _cases():
        X, y = instance(rng, kind, n, d, homogeneous)
        if y.shape[0] < 2 or y.min() == y.max():
            continue  # one class: not a binary problem
        if i % 7 == 3:
            X = sp.csr_matrix(X)
        (cert,), separable = svm_certificates(X, y, homogeneous=homogeneous, fingerprint="t")
        assert separable and cert.source == ("svm_homogeneous" if homogeneous else "svm")
        assert_is_the_maximum_margin(cert, X, y, homogeneous)
        done[homogeneous] += 1
    assert min(done.values()) >= 100


@pytest.mark.parametrize("bias", ["none", "feature"])
def test_the_games_points_get_their_maximum_margin(bias):
    # ~1,250 nearly collinear points at γ = 0.02 in the plane (every one with y·u·x ≥ γ)
    learner = Perceptron(bias=bias, max_passes=20)
    game = make_perceptron_game(d=2, margin=0.02, radius=1.0, strategy="auto", seed=0)
    dataset, _ = play(game, learner, 20)
    y = np.where(dataset.y == learner.classes_[1], 1.0, -1.0)
    homogeneous = bias == "none"
    (cert,), separable = svm_certificates(dataset.X, y, homogeneous=homogeneous, fingerprint="g")
    assert dataset.X.shape[0] > 1_000 and separable
    assert cert.margin >= 0.02 * (1 - 1e-9)
    assert_is_the_maximum_margin(cert, dataset.X, y, homogeneous)


def _one_instance(homogeneous: bool):
    rng = np.random.default_rng(7)
    X, y = instance(rng, "collinear", 300, 3, homogeneous)
    return X, y


@pytest.mark.parametrize("homogeneous", [False, True])
def test_the_check_fails_a_certificate_that_claims_more_than_the_data_have(homogeneous):
    X, y = _one_instance(homogeneous)
    (cert,), _ = svm_certificates(X, y, homogeneous=homogeneous, fingerprint="c")
    assert_is_the_maximum_margin(cert, X, y, homogeneous)
    for claimed in (cert.margin * (1 + 1e-9), cert.margin * 1.01):  # a margin no (u, b) has
        with pytest.raises(AssertionError):
            assert_is_the_maximum_margin(replace(cert, margin=claimed), X, y, homogeneous)
    # a separator that is not the maximum one, honestly measured: more than 1e-6 short
    tilted = cert.u + 1e-3 * np.roll(cert.u, 1)
    if homogeneous:
        worse = certify(X, y, tilted, 0.0, source="svm_homogeneous", gap=0.0)
    else:
        worse = certify(X, y, tilted, cert.b * np.linalg.norm(tilted), source="svm", gap=0.0)
    assert 0.0 < worse.margin < cert.margin * (1 - 1e-6)
    with pytest.raises(AssertionError):
        assert_is_the_maximum_margin(worse, X, y, homogeneous)


def test_max_margin_separator_meets_every_constraint_with_the_margin_it_states():
    X, y = _one_instance(False)
    w, b, gap = max_margin_separator(X, y, homogeneous=False)
    functional = y * (X @ w + b)
    assert functional.min() == pytest.approx(1.0, rel=1e-12)
    _, upper = independent_margin(X, y, homogeneous=False)
    assert 1.0 / np.linalg.norm(w) == pytest.approx(upper, rel=1e-9)
    assert 0.0 <= gap <= 1e-9


def test_a_run_logs_the_solved_certificates_duality_gap(tmp_path):
    from lincls.evaluation import measure

    config = {
        "learner": {"name": "perceptron", "bias": "none"},
        "dataset": {"name": "separable", "n": 200, "d": 5, "margin": 0.1, "radius": 1.0,
                    "offset": 0.0, "n_test": 10, "seed": 0},
        "passes": 5, "seed": 0, "order": "fixed", "orders": 1,
        "certificates": {"svm": True, "cache_dir": str(tmp_path)}, "tracking": {},
    }  # fmt: skip
    metrics = measure(config).metrics
    assert 0.0 <= metrics["certificate.svm_homogeneous.gap"] <= 1e-6
    assert "certificate.generator.gap" not in metrics  # the generator's (u, b) is not solved
    assert metrics["certificate.svm_homogeneous.margin"] >= metrics["certificate.generator.margin"]
