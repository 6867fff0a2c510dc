"""The hard-margin program's minimum by a dual active-set method: exact, and without a solver.

min ½‖v‖² s.t. z_t·v ≥ 1 is a strictly convex quadratic program whose unconstrained minimum,
v = 0, is known, which is where Goldfarb and Idnani's dual method starts (Goldfarb and Idnani,
"A numerically stable dual method for solving strictly convex quadratic programs", Mathematical
Programming 27, 1983): it adds the most violated constraint, moves v within the constraints
already active until that one is met, and drops an active one whose multiplier would turn
negative on the way. Every iterate is the program's minimum on its active set, its multipliers
stay nonnegative, and it ends, in a finite number of steps, when no row is violated: the
minimum, exact to rounding. A row that enters is independent of the active ones (else the step
only drops), so at most p rows are active and each step costs O(np + kp) with k active rows:
the Cholesky factor of the active rows' Gram matrix grows by one row as a row enters and loses
one, by Givens rotations, as one leaves.

``lincls.geometry.comparators.hard_margin`` tries this first (n = 100, d = 20, with the KKT
polish and the re-measure: 0.3 ms against 2.3 ms for Clarabel's interior point) and keeps its
point only when its duality gap says it is the minimum; a program it declines (a step whose
factor is not positive definite, rows it finds not separable, too many steps) goes to Clarabel.
An offset outside the norm is kept in it at a small weight (``OFFSET_SCALE``): the point is then
a guess of the support vectors, which the polish solves exactly with the offset free.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

TOLERANCE = 1e-12  # a row whose margin is within this of 1 is met
COLUMNS = 500  # the most columns solved here (a p×p factor)
CELLS = 5_000_000  # the most entries of a sparse Z made dense for it
WHOLE_CELLS = 100_000  # the most entries of Z solved on every row at once (else a working set)
OFFSET_SCALE = 100.0  # an offset column is scaled by it: its weight in the norm is 1/100²
INDEPENDENT = 1e-13  # a row whose part outside the active rows' span is below this share is in it
MET, NOT_SEPARABLE, NOT_POSITIVE, TOO_MANY = 0, 1, 2, 3


@njit(cache=True, nogil=True)
def _drop(L, k, row):
    """L·Lᵀ, the active rows' Gram matrix, without row ``row`` (of k): the factor's row removed,
    the superdiagonal it leaves rotated away (Givens, on columns); False if not positive."""
    for i in range(row, k - 1):
        for c in range(k):
            L[i, c] = L[i + 1, c]
    for c in range(k):
        L[k - 1, c] = 0.0
    for j in range(row, k - 1):
        h = np.hypot(L[j, j], L[j, j + 1])
        if not h > 0.0:
            return False
        cos, sin = L[j, j] / h, L[j, j + 1] / h
        for i in range(j, k - 1):
            first, second = L[i, j], L[i, j + 1]
            L[i, j] = cos * first + sin * second
            L[i, j + 1] = cos * second - sin * first
        L[j, j + 1] = 0.0
    return True


@njit(cache=True, nogil=True)
def _dual_active_set(A, tolerance, max_steps):
    """Goldfarb–Idnani on min ½‖u‖² s.t. A u ≥ 1: (u, multipliers of every row, status)."""
    n, p = A.shape
    u = np.zeros(p)
    active = np.zeros(p, dtype=np.int64)
    lam = np.zeros(p + 1)  # the active rows' multipliers, then the entering row's
    L = np.zeros((p, p))
    b, y, r, z = np.zeros(p), np.zeros(p), np.zeros(p), np.zeros(p)
    k = 0
    steps = 0
    while True:
        q, low = -1, 1.0 - tolerance
        for t in range(n):
            m = 0.0
            for c in range(p):
                m += A[t, c] * u[c]
            if m < low:
                q, low = t, m
        if q < 0:
            alpha = np.zeros(n)
            for i in range(k):
                alpha[active[i]] = lam[i]
            return u, alpha, MET
        a = A[q]
        lam[k] = 0.0
        while True:
            steps += 1
            if steps > max_steps:
                return u, np.zeros(n), TOO_MANY
            # r = (NNᵀ)⁻¹Na and z = a − Nᵀr, the part of a outside the active rows N
            for i in range(k):
                s = 0.0
                for c in range(p):
                    s += A[active[i], c] * a[c]
                b[i] = s
            for i in range(k):
                s = b[i]
                for m in range(i):
                    s -= L[i, m] * y[m]
                y[i] = s / L[i, i]
            for i in range(k - 1, -1, -1):
                s = y[i]
                for m in range(i + 1, k):
                    s -= L[m, i] * r[m]
                r[i] = s / L[i, i]
            for c in range(p):
                z[c] = a[c]
            for i in range(k):
                for c in range(p):
                    z[c] -= r[i] * A[active[i], c]
            outside, length, short = 0.0, 0.0, 1.0
            for c in range(p):
                outside += z[c] * z[c]
                length += a[c] * a[c]
                short -= a[c] * u[c]
            full = np.inf
            if k < p and outside > INDEPENDENT * length:
                full = max(short, 0.0) / outside  # z·a = ‖z‖²: the step that meets a's constraint
            partial, drop = np.inf, -1
            for i in range(k):
                if r[i] > 0.0 and lam[i] / r[i] < partial:
                    partial, drop = lam[i] / r[i], i
            if full == np.inf and partial == np.inf:
                return u, np.zeros(n), NOT_SEPARABLE  # a violated row no step can meet
            step = min(full, partial)
            if full < np.inf:
                for c in range(p):
                    u[c] += step * z[c]
            for i in range(k):
                lam[i] -= step * r[i]
            lam[k] += step
            if full <= partial:  # a's constraint is met: it joins the active rows
                for i in range(k):
                    L[k, i] = y[i]
                L[k, k] = np.sqrt(outside)
                active[k] = q
                k += 1
                break
            if not _drop(L, k, drop):  # the row whose multiplier reached 0 leaves
                return u, np.zeros(n), NOT_POSITIVE
            for i in range(drop, k):
                active[i] = active[i + 1]
                lam[i] = lam[i + 1]
            k -= 1


def hard_margin_point(Z, free: int = 0) -> tuple[np.ndarray, np.ndarray] | None:
    """(v, multipliers of every row) at min ½‖v‖² s.t. Zv ≥ 1, or None where this declines.

    The last ``free`` entries of v (an offset) are scaled by ``OFFSET_SCALE`` rather than left
    out of the norm, so the point then only guesses the support vectors of the program with them
    free. None for more than ``COLUMNS`` columns, a sparse Z of more than ``CELLS`` entries, rows
    it finds not separable or a step it cannot take: Clarabel decides those.
    """
    n, p = Z.shape
    if p > COLUMNS or (sp.issparse(Z) and n * p > CELLS):
        return None
    A = np.ascontiguousarray(Z.toarray() if sp.issparse(Z) else Z, dtype=np.float64)
    if free:  # a copy only where a column is scaled (the kernel reads A, never writes it)
        A = A.copy()
        A[:, p - free :] *= OFFSET_SCALE
    u, alpha, status = _dual_active_set(A, TOLERANCE, 10 * (n + p))
    if status != MET:
        return None
    if free:
        u[p - free :] *= OFFSET_SCALE
    return u, alpha
