"""The kernel hard-margin comparator on a working set against the whole dual solved at once.

On random instances separable in feature space (labels from a random quadratic with a gap, under
RBF and polynomial kernels of degree ≥ 2), the working set's value equals
the dense solve's (``kernel_hard_margin_dense``) and an independent minimum (Lawson and Hanson's
least-distance program by non-negative least squares on a factor of Q) to 1e-6 relative. The set
is made small so that every instance goes through several rounds; the subproblems are solved by
block principal pivoting, and by Clarabel where pivoting fails (both happen here).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import nnls

from lincls.geometry import comparators
from lincls.learners.kernel import kernel_diagonal, kernel_matrix

INSTANCES = 60


def _instance(seed: int):
    """(Q, kind): Q_st = y_s y_t (K(x_s, x_t) + c²)/R'² of a random separable instance."""
    rng = np.random.default_rng(seed)
    kind = ("rbf", "poly")[seed % 2]
    n, d = int(rng.integers(30, 90)), int(rng.integers(2, 6))
    X = rng.uniform(-1.0, 1.0, (4 * n, d))
    c2 = float(rng.choice([0.0, 1.0]))
    degree, gamma = int(rng.integers(2, 4)), float(rng.uniform(0.5, 4.0))
    # the labels of a random quadratic, kept away from its zero (a polynomial kernel of degree
    # ≥ 2 separates them; RBF separates any labels of distinct points)
    A, b = rng.normal(size=(d, d)), rng.normal(size=d)
    score = np.einsum("ij,jk,ik->i", X, A, X) + X @ b + rng.normal()
    keep = np.flatnonzero(np.abs(score) > 0.1 * np.abs(score).std())[:n]
    X, y = X[keep], np.sign(score[keep])
    K = kernel_matrix(X, X, kind, degree, gamma) + c2
    radius_sq = kernel_diagonal(X, kind, degree).max() + c2
    return K * np.outer(y, y) / radius_sq, kind


def _least_distance(Q: np.ndarray) -> float:
    """min ‖x‖² s.t. Gx ≥ 1 with GGᵀ = Q, by NNLS (Lawson & Hanson, ch. 23): no interior point."""
    eigenvalues, vectors = np.linalg.eigh(Q)
    G = vectors * np.sqrt(np.maximum(eigenvalues, 0.0))
    n = G.shape[0]
    E = np.vstack([G.T, np.ones((1, n))])
    f = np.zeros(n + 1)
    f[-1] = 1.0
    weights, _ = nnls(E, f, maxiter=50 * n)
    r = E @ weights - f
    return float(r[:-1] @ r[:-1] / r[-1] ** 2)


@pytest.fixture
def small_set(monkeypatch):
    monkeypatch.setattr(comparators, "KERNEL_WORKING_SET", 10)


def test_working_set_equals_the_dense_solve(small_set, monkeypatch):
    kinds, several_rounds, pivoting_alone = set(), 0, 0
    interior: list[int] = []  # the subproblems pivoting left to Clarabel
    real_solve = comparators._solve

    def solve(*args, method=comparators.SOLVE_METHOD):
        interior.append(method == comparators.KERNEL_SOLVE_METHOD)
        return real_solve(*args, method=method)

    monkeypatch.setattr(comparators, "_solve", solve)
    for seed in range(INSTANCES):
        Q, kind = _instance(seed)
        asked: list[int] = []
        interior.clear()

        def columns(rows, Q=Q, asked=asked):
            asked.append(rows.shape[0])
            return Q[:, rows]

        found = comparators.kernel_hard_margin(columns, Q.shape[0])
        pivoting_alone += not any(interior)
        dense = comparators.kernel_hard_margin_dense(Q)
        assert found is not None and dense is not None, seed
        assert found.value == pytest.approx(dense.value, rel=1e-6), seed
        assert found.value == pytest.approx(_least_distance(Q), rel=1e-6), seed
        assert found.gap <= comparators.GAP_TOLERANCE
        margins = Q @ found.v  # the comparator meets every row, at least one at exactly 1
        assert margins.min() == pytest.approx(1.0, rel=1e-9)
        assert found.v @ margins == pytest.approx(found.value, rel=1e-9)
        assert np.count_nonzero(found.v) <= sum(asked)  # only the set's rows carry weight
        several_rounds += len(asked) > 1
        kinds.add(kind)
    assert kinds == {"rbf", "poly"}
    assert several_rounds == INSTANCES  # every instance grew its set at least once
    # pivoting solves every RBF instance (a positive definite Q) alone; the polynomial kernels'
    # singular Q send some of their subproblems to Clarabel
    assert INSTANCES // 2 <= pivoting_alone < INSTANCES


def test_a_dense_matrix_and_its_columns_give_the_same_solution(small_set):
    Q, _ = _instance(3)
    by_matrix = comparators.kernel_hard_margin(Q)
    by_columns = comparators.kernel_hard_margin(lambda rows: Q[:, rows], Q.shape[0])
    assert by_matrix.value == by_columns.value
    np.testing.assert_array_equal(by_matrix.v, by_columns.v)


def test_few_support_vectors_need_few_columns():
    # RBF on 2-d data with a wide kernel: a few support vectors among ~470 rows
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, (500, 2))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0.0, 1.0, -1.0)
    keep = np.abs(X[:, 0] + 0.3 * X[:, 1]) > 0.05
    X, y = X[keep], y[keep]
    asked: list[int] = []

    def columns(rows):
        asked.append(rows.shape[0])
        return (kernel_matrix(X, X[rows], "rbf", 1, 1.0) + 1.0) * np.outer(y, y[rows]) / 2.0

    found = comparators.kernel_hard_margin(columns, X.shape[0])
    Q = columns(np.arange(X.shape[0]))
    dense = comparators.kernel_hard_margin_dense(Q)
    assert found.value == pytest.approx(dense.value, rel=1e-6)
    assert sum(asked[:-1]) < X.shape[0] / 2  # the working set's columns, not the whole Gram


def test_no_separator_in_feature_space():
    # XOR under the linear kernel (no bias): no U meets every row; the set finds out too
    X = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]] * 60)
    y = np.array([1.0, 1.0, -1.0, -1.0] * 60)
    Q = (X @ X.T) * np.outer(y, y) / 2.0
    assert comparators.kernel_hard_margin(Q) is None
    assert comparators.kernel_hard_margin_dense(Q) is None
    assert comparators.kernel_hard_margin(np.zeros((0, 0))) is None
