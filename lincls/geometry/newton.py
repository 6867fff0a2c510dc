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
matrix).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

COLUMNS = 500  # the most columns p solved here (a dense p×p Cholesky factor a step)
STEPS = 50  # Newton steps of one squared-hinge minimum
ROOT_STEPS = 60  # steps of the deficit's root in log c
ROOT_TOLERANCE = 1e-13  # |log(c·r_c/‖v_c‖)| at which the root is taken (rounding is ~1e-15)
LARGEST_C = 1e8  # beyond it no root is sought (the deficit's minimum has r = 0: ``KINK``)
KINK = "kink"


def _shortfall(Z, v: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.asarray(Z @ v).ravel(), 0.0)


def _hessian(rows, weights: np.ndarray, c: float) -> np.ndarray:
    """I + c·Σ_t w_t z_t z_tᵀ over ``rows`` (half the squared hinge's Hessian)."""
    if sp.issparse(rows):
        H = c * np.asarray((rows.T @ sp.diags(weights) @ rows).toarray())
    else:
        H = c * ((rows.T * weights) @ rows)
    H[np.diag_indices(rows.shape[1])] += 1.0
    return H


def _line_minimum(slope: float, curvature: float, gap: np.ndarray, rate: np.ndarray,
                  weights: np.ndarray) -> float | None:  # fmt: skip
    """The t > 0 where ψ(t) = slope + t·curvature − Σ_t w_t e_t (g_t − t·e_t)₊ is 0 (ψ is half
    the derivative of the squared hinge along a step; g = 1 − margins, e the margins' rates).

    ψ increases and is linear between the breakpoints g_t/e_t, where a row joins or leaves the
    active set: the breakpoints sorted, each interval's line is a cumulative sum, and the root
    is on the first whose line crosses 0 inside it (None if none does: a flat ψ).
    """
    on = (gap > 0.0) | ((gap == 0.0) & (rate < 0.0))  # active just after t = 0
    low = slope - float(np.sum((weights * rate * gap)[on]))
    high = curvature + float(np.sum((weights * rate * rate)[on]))
    with np.errstate(divide="ignore", invalid="ignore"):
        breaks = np.where(rate != 0.0, gap / rate, np.inf)
    rows = np.flatnonzero((breaks > 0.0) & np.isfinite(breaks))
    rows = rows[np.argsort(breaks[rows], kind="stable")]
    sign = np.where(rate[rows] > 0.0, -1.0, 1.0)  # a rising margin leaves, a falling one joins
    lows = low - np.concatenate(([0.0], np.cumsum(sign * (weights * rate * gap)[rows])))
    highs = high + np.concatenate(([0.0], np.cumsum(sign * (weights * rate * rate)[rows])))
    ends = np.concatenate(([0.0], breaks[rows], [np.inf]))
    with np.errstate(divide="ignore", invalid="ignore"):
        roots = -lows / highs
    inside = np.flatnonzero((roots >= ends[:-1]) & (roots <= ends[1:]) & (highs > 0.0))
    return float(roots[inside[0]]) if inside.shape[0] and roots[inside[0]] > 0.0 else None


def squared_hinge(Z, counts: np.ndarray, c: float, v: np.ndarray | None = None):
    """min over v of ‖v‖² + c Σ_t k_t (1 − z_t·v)₊², from ``v`` (else 0).

    Each step goes to the minimum along Newton's direction (``_line_minimum``). Returns (v,
    shortfalls (1 − Zv)₊, active rows, Cholesky factor of the active set's I + c Z_AᵀK Z_A), or
    None when a step finds no decrease or the steps run out.
    """
    v = np.zeros(Z.shape[1]) if v is None else v
    gap = 1.0 - np.asarray(Z @ v).ravel()
    for _ in range(STEPS):
        active = gap > 0.0
        rows, weights = Z[active], counts[active]
        gradient = v - c * np.asarray(rows.T @ (weights * gap[active])).ravel()
        try:
            factor = scipy.linalg.cho_factor(_hessian(rows, weights, c), check_finite=False)
        except np.linalg.LinAlgError:
            return None
        step = -scipy.linalg.cho_solve(factor, gradient, check_finite=False)
        rate = np.asarray(Z @ step).ravel()
        if np.array_equal(gap - rate > 0.0, active):  # the full step keeps the set: the minimum
            trial = v + step
            shortfall = _shortfall(Z, trial)
            if np.array_equal(shortfall > 0.0, active):
                return trial, shortfall, active, factor
        t = _line_minimum(float(step @ v), float(step @ step), gap, rate, c * counts)
        if t is None:
            return None
        v = v + t * step
        gap = 1.0 - np.asarray(Z @ v).ravel()
    return None


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
    v = np.zeros(p)
    low, high, log_c, last = -np.inf, np.inf, 0.0, float(np.log(LARGEST_C))
    for _ in range(ROOT_STEPS):
        c = float(np.exp(log_c))
        found = squared_hinge(Z, counts, c, v)
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
