"""The best comparators' fast solves against the programs they replace, and runs using them.

``lincls.geometry.newton`` (the deficit and the squared hinge by Newton's method) and the working
sets of ``lincls.geometry.programs`` must give the minimum Clarabel gives on every row at once — the
formulation runs used before them — to 1e-9 relative, on separable and noisy rows, with a bias
feature and without, an offset, few and many rows and columns, dense and sparse. A run's every bound
is the same to 1e-9 either way (what is read at a minimiser rather than its minimum, to the interior
point's own accuracy: ``_tolerance``), and a default run solves no cone program on every row.
"""

from __future__ import annotations

import tempfile
from contextlib import contextmanager

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import compose_config

from lincls import evaluation
from lincls.bounds import _best
from lincls.data import make_noisy, make_separable
from lincls.geometry import active_set, comparators, newton

INSTANCES = 40


@contextmanager
def every_row_by_clarabel(monkeypatch):
    """The formulation before the fast solves: no Newton's method, every row in one program."""
    with monkeypatch.context() as patched:
        patched.setattr(newton, "COLUMNS", 0)
        patched.setattr(active_set, "hard_margin_point", lambda rows, free=0: None)
        patched.setattr(comparators, "nearest", lambda *args, **kwargs: None)
        yield


def _instance(rng: np.random.Generator):
    """(Z, labels, counts, C, kind): rows y·x'/R' of separable or noisy data, sometimes sparse."""
    n = int(rng.choice([3, 12, 60, 400, 1500]))
    d = int(rng.choice([1, 3, 20, 60]))
    seed = int(rng.integers(1 << 30))
    noisy = rng.random() < 0.35
    if noisy:
        data = make_noisy(n, d, 0.05, 1.0, flip=float(rng.choice([0.02, 0.2])), seed=seed)
    else:
        margin, offset = float(rng.choice([0.001, 0.03, 0.1])), float(rng.choice([0.0, 0.4]))
        data = make_separable(n, d, margin, 1.0, offset=offset, seed=seed, n_test=0)
    X, y = np.asarray(data.X, dtype=np.float64), np.where(data.y > 0, 1.0, -1.0)
    bias = rng.random() < 0.6
    if bias:
        X = np.hstack([X, np.ones((n, 1))])
    Z = X * (y / np.sqrt(np.einsum("ij,ij->i", X, X).max()))[:, None]
    if rng.random() < 0.2:
        Z = sp.csr_matrix(Z)
    counts = rng.integers(1, 11, n).astype(np.float64)
    if rng.random() < 0.5:
        counts[:] = counts[0]  # fixed and shuffled orders present every row alike
    C = float(rng.choice([0.01, 0.5, 5.0]))
    return Z, y, counts, C, ("noisy" if noisy else "separable", "bias" if bias else "no bias")


def _programs(Z, y, counts, C):
    return {
        "hard margin": lambda: comparators.hard_margin(Z),
        "hard margin, offset": lambda: comparators.hard_margin(Z, y),
        "deficit": lambda: comparators.deficit(Z, counts),
        "PA-I": lambda: comparators.hinge(Z, counts, C, False),
        "PA-II": lambda: comparators.hinge(Z, counts, C, True),
    }


def test_fast_solves_equal_every_row_by_clarabel(monkeypatch):
    rng = np.random.default_rng(32)
    newton_deficits, cone_programs = [], []
    real_deficit, real_rows = newton.deficit, comparators.deficit_rows

    def counted(Z, counts):
        found = real_deficit(Z, counts)
        newton_deficits.append("kink" if found == newton.KINK else "point" if found else None)
        return found

    def cone(Z, *args):
        cone_programs.append(Z.shape[0])
        return real_rows(Z, *args)

    monkeypatch.setattr(newton, "deficit", counted)
    monkeypatch.setattr(comparators, "deficit_rows", cone)
    kinds, compared = set(), 0
    for _ in range(INSTANCES):
        Z, y, counts, C, kind = _instance(rng)
        kinds.add(kind)
        for name, solve in _programs(Z, y, counts, C).items():
            fast = solve()
            with every_row_by_clarabel(monkeypatch):
                before = solve()
            assert (fast is None) == (before is None), (name, kind, Z.shape)
            if fast is None:
                continue
            assert fast.value == pytest.approx(before.value, rel=1e-9), (name, kind, Z.shape)
            assert fast.gap <= comparators.GAP_TOLERANCE
            compared += 1
    assert kinds == {(a, b) for a in ("noisy", "separable") for b in ("bias", "no bias")}
    assert compared > 150
    # Newton's method found most deficits' minima, the rest at a deficit of 0 (the hard
    # margin's v); the cone program only ever ran for the formulation before
    assert newton_deficits.count("point") > 0.6 * len(newton_deficits)
    assert newton_deficits.count("kink") >= 3
    assert len(cone_programs) == len(newton_deficits)


def test_newton_points_are_exact_minima():
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(20):
        Z, _, counts, C, _ = _instance(rng)
        found = newton.squared_hinge(Z, counts, 2.0 * C)
        assert found is not None
        v, shortfall, active, _ = found
        gradient = v - 2.0 * C * np.asarray(Z.T @ (counts * shortfall)).ravel()
        scale = 1.0 + 2.0 * C * float(np.sum(counts * np.abs(shortfall)))
        assert np.abs(gradient).max() <= 1e-12 * scale
        assert np.array_equal(shortfall > 0.0, active)
        solution = comparators.hinge(Z, counts, C, True)
        assert solution.gap <= comparators.NEWTON_GAP
        # the deficit's minimiser: the gradient of ‖v‖ + ‖(1 − Zv)₊‖_k vanishes where smooth
        found = newton.deficit(Z, counts)
        if not isinstance(found, tuple) or not found[0].any():
            continue  # a minimum at a deficit of 0 (the hard margin's), or at v = 0
        v, alpha = found
        assert np.abs(v / np.sqrt(v @ v) - np.asarray(Z.T @ alpha).ravel()).max() <= 1e-12
        checked += 1
    assert checked >= 8


def test_the_squared_hinge_kernel_reads_dense_and_sparse_rows_alike():
    # one kernel on Z's CSR arrays; its Hessian gathers the active rows in blocks of BLOCK
    rng = np.random.default_rng(11)
    Z = rng.standard_normal((3 * newton.BLOCK + 17, 8)) * (
        rng.random((3 * newton.BLOCK + 17, 8)) < 0.5
    )
    counts = rng.integers(1, 4, Z.shape[0]).astype(float)
    dense, sparse = (
        newton.squared_hinge(Z, counts, 3.0),
        newton.squared_hinge(sp.csr_matrix(Z), counts, 3.0),
    )
    assert np.array_equal(dense[0], sparse[0]) and np.array_equal(dense[2], sparse[2])
    assert dense[2].sum() > newton.BLOCK  # more active rows than one block
    gradient = dense[0] - 3.0 * Z.T @ (counts * dense[1])
    assert np.abs(gradient).max() <= 1e-12 * (1.0 + 3.0 * np.sum(counts * dense[1]))
    assert newton.squared_hinge(Z, counts, 3.0, dense[0])[0] @ dense[0] == pytest.approx(
        dense[0] @ dense[0], rel=1e-14
    )


def _tolerance(key: str) -> float:
    """Minima to 1e-9. What is read at the minimiser, where the objective is flat, moves with
    the point: the interior point's deficit minimiser was up to 3e-8 from Newton's (its
    gradient up to 5e-7, Newton's 2e-14), so Mohri–Rostamizadeh's bound at it to 1e-8 (9.5e-9
    over 48 runs) and Freund–Schapire's (γ, D) to 1e-6 (D, small, 4.7e-7)."""
    if key.startswith("bound_param."):
        return 1e-6
    if "mohri_rostamizadeh" in key or "a_posteriori" in key:
        return 1e-7
    return 1e-9


def _measure(learner: str, cache: str, seed: int) -> dict[str, float]:
    _best._memory.clear()
    config = compose_config([f"learner={learner}", f"seed={seed}", "dataset.n=1000",
                             "dataset.d=20", "certificates.svm=false",
                             f"certificates.cache_dir={cache}"])  # fmt: skip
    return evaluation.measure(config).metrics


@pytest.mark.parametrize("learner", ["perceptron", "averaged_perceptron", "passive_aggressive"])
def test_a_default_run_uses_the_fast_solves_and_logs_the_same_bounds(learner, monkeypatch):
    rows_solved: list[tuple[str, int]] = []
    for name in ("hard_margin_rows", "deficit_rows", "hinge_rows"):
        real = getattr(comparators, name)

        def spy(Z, *args, real=real, name=name, **kwargs):
            rows_solved.append((name, Z.shape[0]))
            return real(Z, *args, **kwargs)

        monkeypatch.setattr(comparators, name, spy)
    with tempfile.TemporaryDirectory() as fast_cache, tempfile.TemporaryDirectory() as cache:
        fast = _measure(learner, fast_cache, 11)
        solved = list(rows_solved)
        with every_row_by_clarabel(monkeypatch):
            before = _measure(learner, cache, 11)
    assert sorted(fast) == sorted(before)
    for key, value in fast.items():
        if key.endswith(".gap") or key == "fit_seconds":
            continue  # Newton's gaps are ~1e-16 where Clarabel's were ~1e-11
        assert value == pytest.approx(before[key], rel=_tolerance(key), abs=1e-12), key
    assert any(key.startswith("bound.") and key != "bound.tightest" for key in fast)
    # the deficit by Newton's method, the separator (Novikoff, Mohri–Rostamizadeh) by the dual
    # active set; only PA-I's hinge is Clarabel's, on a set of 200 rows
    assert all(name == "hinge_rows" and rows <= 400 for name, rows in solved)
    assert len(solved) == (1 if learner == "passive_aggressive" else 0)
