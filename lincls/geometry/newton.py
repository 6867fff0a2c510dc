"""Exact minima of the best comparators' smooth programs by Newton's method, without a solver.

``lincls.geometry.comparators`` tries these first and keeps Clarabel (on a working set) for what
they decline (None); either way its point is re-measured on the data and bounded by a dual point
there, so a point found here is kept only when its own duality gap says it is the minimum.

- ``squared_hinge``: min ‖v‖² + c Σ_t k_t (1 − z_t·v)₊², PA-II's program. It is piecewise
  quadratic and strongly convex: each step minimises the quadratic of the rows whose margin is
  below 1 (the active set), going only as far as the program's own minimum along the step
  while that set changes, and the iteration ends when a full step keeps it. The point is then
  the minimum of the quadratic of its own active set, where the gradient is zero: the
  program's minimum, exact to rounding, after a few steps (the finite Newton method of Keerthi
  and DeCoste, 2005).
- ``deficit``: min ‖v‖ + ‖(1 − Zv)₊‖_k, Freund and Schapire's program. Since (a + b)² is the
  minimum over θ ∈ (0, 1) of a²/θ + b²/(1 − θ), its minimiser is the squared-hinge minimiser v_c
  at one c = θ/(1 − θ): the minimum over v of ‖v‖²/θ + r(v)²/(1 − θ) is convex in θ, with a
  derivative of the sign of c·r_c − ‖v_c‖ (r_c = ‖(1 − Zv_c)₊‖_k), so that c is the one root of
  log(c·r_c/‖v_c‖) in log c. Newton's method finds it (dv_c/dc from the step's own Cholesky
  factor), bisection guarding it; each v_c starts from the last. Newton's method on the program
  itself stalls near the kink where the deficit is 0 (2 of 20 sweep runs' programs, n = 1,000).

Both take Z dense or sparse, with at most ``COLUMNS`` columns (each step factorises a p×p
matrix). A squared-hinge minimum is one numba kernel on Z's rows in CSR form (a default run's
deficit, n = 100, d = 20: ~11 Newton steps over ~6 values of c, 0.3 ms where numpy's small
operations took 3 ms); the deficit's root in c, a few scalars a step, stays in Python.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from numba import njit

COLUMNS = 500  # the most columns p solved here (a dense p×p Cholesky factor a step)
STEPS = 50  # Newton steps of one squared-hinge minimum
ROOT_STEPS = 60  # steps of the deficit's root in log c
ROOT_TOLERANCE = 1e-13  # |log(c·r_c/‖v_c‖)| at which the root is taken (rounding is ~1e-15)
LARGEST_C = 1e8  # beyond it no root is sought (the deficit's minimum has r = 0: ``KINK``)
KINK = "kink"
BLOCK = 256  # active rows gathered dense for one product into the Hessian


Rows = tuple[np.ndarray, np.ndarray, np.ndarray, int]  # a CSR matrix's data, indices, indptr, p


def rows_of(Z) -> Rows:
    """Z (dense or sparse) as the kernels read it: its CSR arrays and column count (a dense Z's
    every entry, zeros too: its rows as they are, without scipy's conversion)."""
    if not sp.issparse(Z):
        n, p = Z.shape
        return (np.ascontiguousarray(Z, dtype=np.float64).ravel(),
                np.tile(np.arange(p, dtype=np.int64), n),
                np.arange(n + 1, dtype=np.int64) * p, int(p))  # fmt: skip
    csr = Z if sp.isspmatrix_csr(Z) or isinstance(Z, sp.csr_array) else sp.csr_matrix(Z)
    return (np.ascontiguousarray(csr.data, dtype=np.float64),
            np.ascontiguousarray(csr.indices, dtype=np.int64),
            np.ascontiguousarray(csr.indptr, dtype=np.int64), int(Z.shape[1]))  # fmt: skip


@njit(cache=True, nogil=True)
def _times(data, indices, indptr, v):
    """Z v."""
    n = indptr.shape[0] - 1
    out = np.zeros(n)
    for t in range(n):
        s = 0.0
        for j in range(indptr[t], indptr[t + 1]):
            s += data[j] * v[indices[j]]
        out[t] = s
    return out


@njit(cache=True, nogil=True)
def _line_minimum(slope, curvature, gap, rate, weights):
    """The t > 0 where ψ(t) = slope + t·curvature − Σ_t w_t e_t (g_t − t·e_t)₊ is 0 (ψ is half
    the derivative of the squared hinge along a step; g = 1 − margins, e the margins' rates);
    NaN if none.

    ψ increases and is linear between the breakpoints g_t/e_t, where a row joins or leaves the
    active set: the breakpoints sorted, each interval's line is the last one's plus the row
    that crosses, and the root is on the first whose line crosses 0 inside it.
    """
    n = gap.shape[0]
    low, high = slope, curvature
    breaks = np.empty(n)
    rows = np.empty(n, dtype=np.int64)
    count = 0
    for t in range(n):
        if gap[t] > 0.0 or (gap[t] == 0.0 and rate[t] < 0.0):  # active just after t = 0
            low -= weights[t] * rate[t] * gap[t]
            high += weights[t] * rate[t] * rate[t]
        if rate[t] != 0.0:
            at = gap[t] / rate[t]
            if at > 0.0 and np.isfinite(at):
                breaks[count], rows[count] = at, t
                count += 1
    order = np.argsort(breaks[:count], kind="mergesort")
    start = 0.0
    for k in range(count + 1):
        end = breaks[order[k]] if k < count else np.inf
        if high > 0.0:
            root = -low / high
            if start <= root <= end:
                return root if root > 0.0 else np.nan
        if k < count:
            t = rows[order[k]]
            sign = -1.0 if rate[t] > 0.0 else 1.0  # a rising margin leaves, a falling one joins
            low -= sign * weights[t] * rate[t] * gap[t]
            high += sign * weights[t] * rate[t] * rate[t]
            start = end
    return np.nan


@njit(cache=True, nogil=True)
def _cholesky(H):
    """The lower factor L of H = LLᵀ (in place), or False if H is not positive definite."""
    p = H.shape[0]
    for i in range(p):
        for j in range(i + 1):
            s = H[i, j]
            for m in range(j):
                s -= H[i, m] * H[j, m]
            if i == j:
                if not s > 0.0:
                    return False
                H[i, i] = np.sqrt(s)
            else:
                H[i, j] = s / H[j, j]
        for j in range(i + 1, p):
            H[i, j] = 0.0
    return True


@njit(cache=True, nogil=True)
def _solve(L, b):
    """x with LLᵀx = b."""
    p = b.shape[0]
    x = b.copy()
    for i in range(p):
        for m in range(i):
            x[i] -= L[i, m] * x[m]
        x[i] /= L[i, i]
    for i in range(p - 1, -1, -1):
        for m in range(i + 1, p):
            x[i] -= L[m, i] * x[m]
        x[i] /= L[i, i]
    return x


@njit(cache=True, nogil=True)
def _squared_hinge(data, indices, indptr, p, counts, c, v, steps):
    """``squared_hinge`` on Z's CSR arrays: (v, shortfalls, active, factor, found)."""
    n = indptr.shape[0] - 1
    v = v.copy()
    gap = 1.0 - _times(data, indices, indptr, v)
    H = np.zeros((p, p))
    block, weighted = np.zeros((BLOCK, p)), np.zeros((BLOCK, p))
    for _ in range(steps):
        active = gap > 0.0
        gradient = v.copy()
        H[:] = 0.0
        filled = 0
        for t in range(n + 1):
            if t < n and active[t]:  # the active rows, a block at a time, into Z_AᵀKZ_A
                pull, weight = c * counts[t] * gap[t], c * counts[t]
                for j in range(indptr[t], indptr[t + 1]):
                    gradient[indices[j]] -= pull * data[j]
                    block[filled, indices[j]] = data[j]
                    weighted[filled, indices[j]] = weight * data[j]
                filled += 1
            if filled == BLOCK or (t == n and filled > 0):
                H += np.dot(block[:filled].T, weighted[:filled])
                block[:filled] = 0.0
                weighted[:filled] = 0.0
                filled = 0
        for i in range(p):
            H[i, i] += 1.0
        if not _cholesky(H):
            return v, gap, active, H, False
        step = -_solve(H, gradient)
        rate = _times(data, indices, indptr, step)
        if np.array_equal(gap - rate > 0.0, active):  # the full step keeps the set: the minimum
            trial = v + step
            shortfall = np.maximum(1.0 - _times(data, indices, indptr, trial), 0.0)
            if np.array_equal(shortfall > 0.0, active):
                return trial, shortfall, active, H, True
        t = _line_minimum(step @ v, step @ step, gap, rate, c * counts)
        if not t > 0.0:
            return v, gap, active, H, False
        v = v + t * step
        gap = 1.0 - _times(data, indices, indptr, v)
    return v, gap, gap > 0.0, H, False


def squared_hinge(Z, counts: np.ndarray, c: float, v: np.ndarray | None = None):
    """min over v of ‖v‖² + c Σ_t k_t (1 − z_t·v)₊², from ``v`` (else 0); Z may be ``rows_of``'s.

    Each step goes to the minimum along Newton's direction (``_line_minimum``). Returns (v,
    shortfalls (1 − Zv)₊, active rows, (L, True): the Cholesky factor of the active set's I +
    c Z_AᵀK Z_A, as scipy's ``cho_solve`` takes it), or None when a step finds no decrease or
    the steps run out.
    """
    data, indices, indptr, p = Z if isinstance(Z, tuple) else rows_of(Z)
    v = np.zeros(p) if v is None else np.asarray(v, dtype=np.float64)
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    v, shortfall, active, factor, found = _squared_hinge(data, indices, indptr, p, counts,
                                                         float(c), v, STEPS)  # fmt: skip
    return (v, shortfall, active, (factor, True)) if found else None


def deficit(Z, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray] | str | None:
    """min over v of ‖v‖ + ‖(1 − Zv)₊‖_k: (v, multipliers α = k_t s_t/r), ``KINK``, or None.

    α (s the shortfalls at v, r = ‖s‖_k) is the dual point ``comparators.deficit`` bounds the
    minimum with. v = 0 is the minimum when ‖Zᵀk‖² ≤ Σk (the objective's slope from 0 along any
    direction is then ≥ 0), with α = k/√Σk. ``KINK`` when c·r_c < ‖v_c‖ still at c =
    ``LARGEST_C``: the minimum is then where the deficit is 0, the hard margin's v if any.
    """
    p = Z.shape[1]
    total = float(counts.sum())
    pull = np.asarray(Z.T @ counts).ravel()
    if pull @ pull <= total:
        return np.zeros(p), counts / np.sqrt(total)
    v, rows = np.zeros(p), rows_of(Z)
    low, high, log_c, last = -np.inf, np.inf, 0.0, float(np.log(LARGEST_C))
    for _ in range(ROOT_STEPS):
        c = float(np.exp(log_c))
        found = squared_hinge(rows, counts, c, v)
        if found is None:
            return None
        v, s, active, factor = found
        r, norm = float(np.sqrt(np.sum(counts * s * s))), float(np.sqrt(v @ v))
        if not (r > 0.0 and norm > 0.0):
            return None
        root = float(np.log(c * r / norm))
        if abs(root) <= ROOT_TOLERANCE:
            return v, counts * s / r
        # d/d(log c) of the root function, from dv/dc = (I + c Z_AᵀKZ_A)⁻¹ Zᵀ(k s)
        weighted = counts * s
        dv = scipy.linalg.cho_solve(factor, np.asarray(Z.T @ weighted).ravel(),
                                    check_finite=False)  # fmt: skip
        dr = -float(weighted[active] @ np.asarray(Z[active] @ dv).ravel()) / r
        slope = 1.0 + c * dr / r - c * float(v @ dv) / norm**2
        if root < 0.0 and log_c >= last:
            return KINK
        if root < 0.0:
            low = log_c
        else:
            high = log_c
        guess = log_c - root / slope if slope > 0.0 else np.nan
        if not low < guess < high:  # outside the bracket: c·e² (c/e²), or bisect
            guess = (log_c + 2.0 if high == np.inf else
                     log_c - 2.0 if low == -np.inf else 0.5 * (low + high))  # fmt: skip
        if guess == log_c:
            return v, counts * s / r
        log_c = min(guess, last)
    return None
