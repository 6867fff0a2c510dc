"""The best comparators' conic programs as Clarabel solves them, on a working set of rows.

``lincls.geometry.comparators`` builds its Solutions from these: each ``*_rows`` function solves one
program on the rows of Z given (dense or sparse) and returns (comparator, multipliers of those
rows) or None; ``working_set`` solves a program on every row through a growing set of them.
A program's cost grows with its rows (n = 1,000, d = 20: the hard margin 19 ms on every row, 4
ms on a set of 200), and a row whose margin the comparator meets has a zero multiplier.

This module imports nothing of lincls, so data and learners use it; the package's heavier modules,
imported by name and never from here, measure the data's separators (``certificates``) and solve the
best comparators' programs (``comparators`` on ``programs``, ``newton`` and ``kkt``).
"""

from __future__ import annotations

from collections.abc import Callable

import clarabel
import numpy as np
import scipy.sparse as sp

from lincls.geometry import newton

SOLVE_METHOD = "qdldl"
WORKING_SET = 200  # rows a problem starts from (4 per column if more), the fewest added a round
GUESS_C = 10.0  # the squared hinge's weight whose minimum ranks the rows (``nearest``)
GUESS_ROWS = 2000  # the most rows that minimum is found on

Found = tuple[np.ndarray, np.ndarray] | None  # (comparator, multipliers), or None


class Infeasible(tuple):
    """The (x, multipliers) of rows Clarabel found infeasible (``hard_margin_rows``): a working
    set then takes every row at once, as a set of rows that separates nothing would grow for
    round after round (noisy rows, n = 1,000: five rounds, 3× a solve on every row)."""


def solve(P, q: np.ndarray, A, b: np.ndarray, cones: list, method: str = SOLVE_METHOD
          ) -> clarabel.DefaultSolution:  # fmt: skip
    """Clarabel on min ½xᵀPx + qᵀx s.t. b − Ax in ``cones``: its result, whatever its status.

    No number may depend on the machine's load, so there is no time limit (``time_limit`` = ∞,
    set here rather than trusted to the default) and one thread: the iterates, and where they
    stop (the tolerances, or ``max_iter`` = 200 iterations, a count), are the same on any
    machine at any load. Callers never trust the point: they re-measure it on the data and
    bound it by a dual point, so a status short of optimal can only widen the logged gap.
    """
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.max_threads = 1
    settings.time_limit = float("inf")
    settings.direct_solve_method = method
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-10
    settings.tol_feas = 1e-10
    return clarabel.DefaultSolver(sp.csc_matrix(P), q, sp.csc_matrix(A), b, cones, settings).solve()


def start_size(Z) -> int:
    """The fewest rows a working set on Z starts from."""
    return max(WORKING_SET, 4 * Z.shape[1])


def nearest(Z, counts: np.ndarray | None = None, c: float = GUESS_C) -> np.ndarray | None:
    """The rows a working set on Z starts from: the ``start_size`` of smallest margin at the
    minimum v of ‖v‖² + c Σ_t k_t (1 − z_t·v)₊² over at most ``GUESS_ROWS`` evenly spaced rows
    (``lincls.geometry.newton.squared_hinge``, a few steps); None for every row. With ``counts`` (a
    program that pays for every row below margin 1, whose weight c is then the program's own),
    at least twice the share of rows v leaves below margin 1.

    A proxy of the program's solution that knows each class: along the least-squares direction
    (ZᵀZ)⁺Zᵀ1, 5,000 separable rows with an offset started from a set of one class's rows and
    took three rounds, along this v one. The hard margin of 100,000 such rows (d = 20) took 42 s
    from the 2,000 rows nearest along Σ_t z_t (what a Z too wide for Newton's method,
    ``newton.COLUMNS``, is still ranked along), 1.6 s from these.
    """
    n, p = Z.shape
    size = start_size(Z)
    if size >= n:  # the set is every row, however the rows rank (a size only grows below)
        return None
    ranking = np.asarray(Z.sum(axis=0)).ravel()
    if p <= newton.COLUMNS:
        rows = np.unique(np.linspace(0, n - 1, min(n, GUESS_ROWS)).round().astype(np.int64))
        weights = np.ones(rows.shape[0]) if counts is None else counts[rows]
        guess = newton.squared_hinge(subset(Z, rows), weights, c)
        if guess is not None:
            ranking = guess[0]
        if guess is not None and counts is not None:
            size = max(size, int(np.ceil(2.0 * n * np.count_nonzero(guess[2]) / rows.shape[0])))
    if size >= n:
        return None
    return np.argsort(np.asarray(Z @ ranking).ravel(), kind="stable")[:size]


def working_set(Z, solve_rows: Callable[[np.ndarray], Found],
                violated: Callable[[np.ndarray], np.ndarray],
                first: np.ndarray | None = None) -> Found:  # fmt: skip
    """``solve_rows`` on every row of Z, through a working set when Z has many rows.

    ``solve_rows(rows)`` returns (comparator, multipliers of those rows) for the problem on the
    rows ``rows`` (an index array), or None; ``violated(margins)`` marks the rows whose
    constraint the comparator misses. Returns (comparator, multipliers of every row, 0 outside
    the set) or None; an ``Infeasible`` set is followed by every row. The set starts from the
    rows ``first`` (every row when None); each round adds the violated rows of smallest margin,
    at most max(``WORKING_SET``, half the set) of them.
    """
    n = Z.shape[0]
    active = np.ones(n, dtype=bool)
    if first is not None:
        active[:] = False
        active[first] = True
    while True:
        rows = np.flatnonzero(active)
        found = solve_rows(rows)
        if found is None:
            return None
        if isinstance(found, Infeasible) and not active.all():
            active[:] = True
            continue
        v, dual = found
        margins = np.asarray(Z @ v).ravel()
        missed = np.flatnonzero(~active & violated(margins))
        if missed.shape[0] == 0:
            alpha = np.zeros(n)
            alpha[rows] = np.maximum(dual, 0.0)
            return v, alpha
        most = max(WORKING_SET, rows.shape[0] // 2)
        active[missed[np.argsort(margins[missed], kind="stable")[:most]]] = True


def subset(Z, rows: np.ndarray):
    """The rows ``rows`` of Z (Z itself when they are all of them)."""
    return Z if rows.shape[0] == Z.shape[0] else Z[rows]


def finite(result: clarabel.DefaultSolution, count: int) -> Found:
    """(x, the first ``count`` multipliers z) of a Clarabel result, or None if not finite."""
    x = np.asarray(result.x, dtype=np.float64)
    z = np.asarray(result.z, dtype=np.float64)[:count]
    return (x, z) if np.all(np.isfinite(x)) and np.all(np.isfinite(z)) else None


def hard_margin_rows(Z, free: int = 0) -> Found:
    """min ½‖v‖² s.t. Zv ≥ 1, the last ``free`` entries of v left out of the norm (an offset);
    ``Infeasible`` when Clarabel finds no such v."""
    n, p = Z.shape
    P = sp.diags(np.concatenate((np.ones(p - free), np.zeros(free))), format="csc")
    result = solve(P, np.zeros(p), -sp.csc_matrix(Z), -np.ones(n), [clarabel.NonnegativeConeT(n)])
    found = finite(result, n)
    infeasible = result.status == clarabel.SolverStatus.PrimalInfeasible
    return Infeasible(found) if found is not None and infeasible else found


def deficit_rows(Z, root_counts: np.ndarray) -> Found:
    """min s + t s.t. ‖v‖ ≤ s, ‖√k ξ‖ ≤ t, ξ ≥ 1 − Zv, ξ ≥ 0; variables (v, s, t, ξ)."""
    n, p = Z.shape
    eye = sp.identity(n, format="csc")
    zeros_np, zeros_n1 = sp.csc_matrix((n, p)), sp.csc_matrix((n, 1))
    A = sp.bmat(
        [
            [-sp.csc_matrix(Z), zeros_n1, zeros_n1, -eye],  # Zv + ξ ≥ 1
            [zeros_np, zeros_n1, zeros_n1, -eye],  # ξ ≥ 0
            [sp.csc_matrix((1, p)), -np.ones((1, 1)), None, sp.csc_matrix((1, n))],  # (s, v)
            [-sp.identity(p), sp.csc_matrix((p, 1)), None, sp.csc_matrix((p, n))],
            [sp.csc_matrix((1, p)), None, -np.ones((1, 1)), sp.csc_matrix((1, n))],  # (t, √k ξ)
            [zeros_np, None, zeros_n1, -sp.diags(root_counts)],
        ],
        format="csc",
    )
    b = np.concatenate((-np.ones(n), np.zeros(2 * n + p + 2)))
    q = np.concatenate((np.zeros(p), [1.0, 1.0], np.zeros(n)))
    cones = [clarabel.NonnegativeConeT(2 * n), clarabel.SecondOrderConeT(p + 1),
             clarabel.SecondOrderConeT(n + 1)]  # fmt: skip
    result = solve(sp.csc_matrix((p + 2 + n, p + 2 + n)), q, A, b, cones)
    found = finite(result, n)
    return None if found is None else (found[0][:p], found[1])


def hinge_rows(Z, counts: np.ndarray, C: float, squared: bool) -> Found:
    """min ‖v‖² + 2C Σ k ξ (or 2C Σ k ξ²) s.t. ξ ≥ 1 − Zv (and ξ ≥ 0); variables (v, ξ)."""
    n, p = Z.shape
    eye = sp.identity(n, format="csc")
    if squared:
        P = sp.diags(np.concatenate((np.full(p, 2.0), 4.0 * C * counts)), format="csc")
        q = np.zeros(p + n)
        A = sp.hstack([-sp.csc_matrix(Z), -eye], format="csc")
        b, cones = -np.ones(n), [clarabel.NonnegativeConeT(n)]
    else:
        P = sp.diags(np.concatenate((np.full(p, 2.0), np.zeros(n))), format="csc")
        q = np.concatenate((np.zeros(p), 2.0 * C * counts))
        A = sp.bmat([[-sp.csc_matrix(Z), -eye], [sp.csc_matrix((n, p)), -eye]], format="csc")
        b, cones = np.concatenate((-np.ones(n), np.zeros(n))), [clarabel.NonnegativeConeT(2 * n)]
    found = finite(solve(P, q, A, b, cones), n)
    return None if found is None else (found[0][:p], found[1])
