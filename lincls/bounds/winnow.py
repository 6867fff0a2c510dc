"""Mistake bounds of Winnow1 and Winnow2 on monotone disjunctions: Littlestone (1988), Theorem 8
(Winnow1), and our derivation by the same counts for Winnow2 (Blum 1998 states its α = 2, θ = n
case).

Setting (Littlestone, "Learning quickly when irrelevant attributes abound", Machine Learning 2):
boolean examples x ∈ {0, 1}ⁿ labelled by a monotone disjunction of r of the n attributes, every
weight 1 at the start, positive iff w·x ≥ θ, promotion ×α on a false negative.

The data must *be* such a disjunction; the bound reads it from the certificate: a separator (u, b)
whose non-zero entries of u are equal and positive (the r relevant attributes) with −u_j < b < 0
labels a boolean x positive iff some relevant attribute is on, so a certificate of that shape that
separates the data says they are an r-literal monotone disjunction. ``make_disjunction`` gives
that certificate. The learner must report boolean input and the standard start (weights 1).

No best comparator is sought here (``lincls.geometry.comparators``): the bound's comparators are the
r-literal monotone disjunctions consistent with the data, a finite, non-convex set, and the bound
grows with r, so its minimum is the smallest consistent disjunction — a set-cover problem, not a
convex program. The certificate's disjunction is kept.

Both bounds follow from two counts, for any α > 1, θ ≥ 1/α, any order and any number of passes
(the counts of Littlestone's proof of Theorem 8):

- promotions P ≤ r(log_α θ + 1): a false negative has a relevant attribute on, and its weight is
  ≤ w·x < θ, so it is promoted; a relevant weight is never demoted (a false positive has no
  relevant attribute on) and starts at 1, so after j promotions it is α^j and it is promoted
  only while α^j < θ: at most max(0, ⌈log_α θ⌉) ≤ log_α θ + 1 times. The last step needs
  log_α θ + 1 ≥ 0, i.e. θ ≥ 1/α, Theorem 8's condition; below it the formula would count a
  negative number of promotions (for θ ≤ 1 no relevant weight is ever promoted, since a relevant
  attribute alone reaches θ);
- the total weight starts at n, grows by (α − 1)·(the active sum) < (α − 1)θ at a promotion and
  stays ≥ 0, while a false positive (active sum ≥ θ) removes at least θ (Winnow1) or (1 − 1/α)θ
  (Winnow2).
"""

from __future__ import annotations

import math

import numpy as np

from lincls.bounds._registry import DERIVED, REGISTRY, BoundSpec, RunFacts, Source
from lincls.geometry import Certificate


def winnow2_bound(relevant: int, n_features: int, alpha: float = 2.0, threshold=None) -> float:
    """Winnow2 (demotion ÷α): M ≤ (α + 1)·r·(log_α θ + 1) + αn/((α − 1)θ). Our derivation.

    On an r-literal monotone disjunction of n boolean attributes, weights starting at 1, α > 1,
    θ ≥ 1/α (``threshold`` None means n). Derived here with the two counts of Littlestone's proof
    of Theorem 8 (module docstring): the P promotions number at most r(log_α θ + 1); the D
    demotions each remove at least (1 − 1/α)θ of the total weight, which starts at n, gains less
    than (α − 1)θ per promotion and stays ≥ 0, so D(1 − 1/α)θ ≤ n + (α − 1)θP, i.e.
    D ≤ αn/((α − 1)θ) + αP, and M = P + D ≤ (α + 1)P + αn/((α − 1)θ).

    At α = 2, θ = n it is 3r(1 + log₂ n) + 2, the bound Blum's survey "On-line algorithms in
    machine learning" (1998) proves for Winnow with halving. It is not a theorem of Littlestone
    (1988), whose Winnow2 result (Theorem 9) is for a class with a margin δ, at α = 1 + δ/2.
    """
    theta = float(n_features if threshold is None else threshold)
    promotions = relevant * (math.log(theta) / math.log(alpha) + 1.0)
    return (alpha + 1.0) * promotions + alpha * n_features / ((alpha - 1.0) * theta)


def winnow1_bound(relevant: int, n_features: int, alpha: float = 2.0, threshold=None) -> float:
    """Winnow1 (elimination): M ≤ α·r·(log_α θ + 1) + n/θ. Littlestone (1988), Theorem 8.

    Littlestone, "Learning quickly when irrelevant attributes abound", Machine Learning 2,
    Theorem 8: Winnow1 on an r-literal monotone disjunction of n boolean attributes, weights
    starting at 1, α > 1 and θ ≥ 1/α (``threshold`` None means n). With α = 2, θ = n:
    2r(log₂ n + 1) + 1. The form without the factor α is wrong (an adversary exceeds it). The
    proof's counts: P ≤ r(log_α θ + 1) and Dθ ≤ n + (α − 1)θP.
    """
    theta = float(n_features if threshold is None else threshold)
    promotions = relevant * (math.log(theta) / math.log(alpha) + 1.0)
    return alpha * promotions + n_features / theta


def disjunction_size(certificate: Certificate | None) -> int | None:
    """r if the certificate is a monotone-disjunction separator of r attributes, else None.

    The shape: u has r equal positive entries, the rest 0, and −u_j < b < 0 (module docstring).
    """
    if certificate is None or not certificate.separates:
        return None
    u = np.asarray(certificate.u)
    support = u != 0.0
    if not support.any():
        return None
    weights = u[support]
    weight = float(weights[0])
    if weight <= 0.0 or not np.allclose(weights, weight, rtol=1e-12, atol=0.0):
        return None
    if not -weight < certificate.b < 0.0:
        return None
    return int(support.sum())


def _applies(variant: str):
    def check(facts: RunFacts) -> str | None:
        learner = facts.learner
        if getattr(learner, "bound_family", None) != "winnow":
            return "not a Winnow learner (one weight vector, Winnow1 or Winnow2)"
        if learner.variant != variant:
            return f"the learner's variant is {learner.variant!r}, not {variant!r}"
        if not learner.standard_init_:
            return "the weights did not start at 1"
        if not learner.boolean_input_:
            return "the training data are not boolean (0/1)"
        alpha = float(learner.alpha)
        if learner.threshold_ * alpha < 1.0 - 1e-12:  # θ = 1/α itself, to rounding, is in
            return (
                f"the threshold θ = {learner.threshold_:g} is below 1/α = {1.0 / alpha:g} "
                "(Littlestone's Theorem 8 needs θ ≥ 1/α)"
            )
        if facts.certificate is None:
            return "no certificate (separator) for the data"
        if disjunction_size(facts.certificate) is None:
            return "the certificate is not a monotone disjunction of some attributes"
        return None

    return check


def _value(bound):
    def value(facts: RunFacts) -> float:
        learner = facts.learner
        return bound(
            disjunction_size(facts.certificate),
            int(learner.n_features_in_),
            float(learner.alpha),
            learner.threshold_,
        )

    return value


REGISTRY.extend(
    [
        BoundSpec(
            "winnow2",
            _applies("winnow2"),
            _value(winnow2_bound),
            source=Source(
                DERIVED,
                "proved in the docstrings by the counts of Littlestone 1988's proof of Thm 8; "
                "Blum 1998 states the α = 2, θ = n case",
            ),
        ),
        BoundSpec(
            "winnow1",
            _applies("winnow1"),
            _value(winnow1_bound),
            source=Source(
                DERIVED,
                "Littlestone 1988 (Machine Learning 2) Thm 8's form, proved by its counts in the "
                "docstrings; the paper's statement is not recorded as read",
            ),
        ),
    ]
)
