"""The hard margin's dual active-set method: its points meet the KKT conditions, its factor
stays the active rows' Gram factor, and the comparators it serves log what Clarabel's path logs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from lincls.data.synthetic import make_separable
from lincls.geometry import active_set, comparators, max_norm
from lincls.geometry.certificates import _signed_rows


def _rows(n: int, d: int, margin: float, seed: int, offset: bool):
    """(rows y·x/R, labels) of certified separable data; with a bias feature unless ``offset``."""
    data = make_separable(n, d, margin, 1.0, seed=seed)
    y = np.where(data.y > 0, 1.0, -1.0)
    X = data.X if offset else np.hstack([data.X, np.ones((n, 1))])
    return _signed_rows(X, y / max_norm(X)), y


@pytest.mark.parametrize(("n", "d"), [(100, 20), (40, 3), (30, 60)])
def test_its_point_meets_the_kkt_conditions(n, d):
    for seed in range(10):
        Z, _ = _rows(n, d, 0.1, seed, offset=False)
        v, alpha = active_set.hard_margin_point(Z)
        margins = Z @ v
        assert margins.min() >= 1.0 - 1e-10  # feasible
        assert alpha.min() >= 0.0 and np.count_nonzero(alpha) <= Z.shape[1]
        np.testing.assert_allclose(Z.T @ alpha, v, atol=1e-10)  # stationary: v = Zᵀα
        support = alpha > 0.0
        np.testing.assert_allclose(margins[support], 1.0, atol=1e-10)  # complementary
        # the objective is Clarabel's interior point's, to its tolerance
        clarabel = comparators.hard_margin_rows(Z)
        assert v @ v == pytest.approx(clarabel[0] @ clarabel[0], rel=1e-8)


def test_it_declines_rows_that_no_vector_separates():
    # z and −z: no v has both margins ≥ 1
    assert active_set.hard_margin_point(np.array([[1.0, 2.0], [-1.0, -2.0], [0.5, 0.0]])) is None
    rng = np.random.default_rng(3)
    noise = rng.standard_normal((200, 5)) * np.where(rng.random(200) < 0.5, 1.0, -1.0)[:, None]
    assert active_set.hard_margin_point(noise) is None
    assert comparators.hard_margin(noise) is None  # Clarabel then finds none either


def test_dropping_a_row_keeps_the_factor_of_the_rest():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((6, 9))
    active = np.arange(6, dtype=np.int64)
    L = np.linalg.cholesky(A @ A.T)
    for row, k in ((2, 6), (0, 5), (3, 4)):
        assert active_set._drop(L, k, row)
        active = np.delete(active, row)
        kept = A[active]
        np.testing.assert_allclose(L[: k - 1, : k - 1] @ L[: k - 1, : k - 1].T, kept @ kept.T,
                                   atol=1e-12)  # fmt: skip
        assert np.all(np.diag(L)[: k - 1] > 0.0) and not L[k - 1].any()
        assert np.allclose(np.triu(L[: k - 1, : k - 1], 1), 0.0)


def _clarabel_only(monkeypatch, Z, y):
    with monkeypatch.context() as patch:
        patch.setattr(active_set, "hard_margin_point", lambda rows, free=0: None)
        return comparators.hard_margin(Z, y)


@pytest.mark.parametrize("offset", [False, True])
@pytest.mark.parametrize(("n", "d", "margin"), [(100, 20, 0.1), (300, 5, 0.3), (50, 200, 0.1)])
def test_the_comparator_is_clarabels_bit_for_bit(monkeypatch, n, d, margin, offset):
    # the active set only guesses the support vectors the polish solves on, as Clarabel's point
    # did: the logged comparator, value and gap are the same numbers
    for seed in range(8):
        Z, y = _rows(n, d, margin, seed, offset)
        labels = y if offset else None
        fast, slow = comparators.hard_margin(Z, labels), _clarabel_only(monkeypatch, Z, labels)
        assert fast.value == slow.value and np.array_equal(fast.v, slow.v)
        assert fast.gap <= comparators.NEWTON_GAP and fast.gap == pytest.approx(slow.gap, abs=1e-13)


def test_many_rows_are_solved_on_a_working_set(monkeypatch):
    # 30,000 rows × 21 columns: past WHOLE_CELLS, so the active set runs on a growing set of rows
    Z, _ = _rows(30_000, 20, 0.05, 1, offset=False)
    assert Z.size > active_set.WHOLE_CELLS
    seen = []
    solve = active_set.hard_margin_point

    def counted(rows, free=0):
        seen.append(rows.shape[0])
        return solve(rows, free)

    monkeypatch.setattr(active_set, "hard_margin_point", counted)
    fast = comparators.hard_margin(Z)
    assert seen and max(seen) < Z.shape[0] // 10
    slow = _clarabel_only(monkeypatch, Z, None)
    assert fast.value == pytest.approx(slow.value, rel=1e-12) and fast.gap <= 1e-12


def test_sparse_rows_are_solved_as_clarabels_path_solves_them(monkeypatch):
    Z, _ = _rows(80, 10, 0.1, 4, offset=False)
    Z[np.abs(Z) < 0.05] = 0.0
    rows = sp.csr_matrix(Z)
    fast, slow = comparators.hard_margin(rows), _clarabel_only(monkeypatch, rows, None)
    assert fast.value == slow.value and np.array_equal(fast.v, slow.v)
    assert fast.value == pytest.approx(comparators.hard_margin(Z).value, rel=1e-14)
