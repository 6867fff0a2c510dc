"""How far a kernel learner's decision is from its tie, for the tests that compare it with an
independent loop only away from ties (the loop's exp and BLAS differ across processors)."""

from __future__ import annotations

import math


def distance_from_zero(terms):
    """|f| over Σ|terms| for f = Σ terms (summed in order): how far a decision y f ≤ 0 is from
    its tie in units of what rounding moves; ∞ where f is exactly 0 because its terms cancel in
    pairs of equal and opposite values (a row stored twice with opposite labels, or rows meeting
    x in a zero dot product beside the bias), which every processor computes alike."""
    spread = sum(abs(t) for t in terms)
    if spread == 0.0:  # f = 0 in any arithmetic
        return math.inf
    f = sum(terms)
    if f == 0.0 and sorted(terms) == sorted(-t for t in terms):
        return math.inf
    return abs(f) / spread
