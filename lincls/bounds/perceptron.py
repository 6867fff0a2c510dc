"""Perceptron mistake bounds: Novikoff and its forms for a perceptron with a bias."""

from __future__ import annotations

from lincls.bounds import _best
from lincls.bounds._registry import DERIVED, REGISTRY, BoundSpec, BoundValue, RunFacts, Source


def novikoff(radius: float, margin: float) -> float:
    """Novikoff (1962): the perceptron from w = 0 makes at most (R/γ)² mistakes.

    Holds for any order and any number of passes when ‖x_t‖ ≤ R and a unit u has
    y_t u·x_t ≥ γ > 0 for every t (homogeneous separator, no bias). Seed 000 Theorem 1 states it
    as k < R/γ² with R bounding ‖x‖².
    """
    return (radius / margin) ** 2


def novikoff_bias(radius: float, margin: float, offset: float, bias_feature: float) -> float:
    """Novikoff's bound on the augmented vectors (x, c) of a perceptron with a bias.

    A bias updated by b += η·y·c² is a constant feature c. If a unit u and offset b have
    y_t(u·x_t + b) ≥ γ and ‖x_t‖ ≤ R, then the augmented data have radius √(R² + c²) and the
    unit separator (u, b/c)/√(1 + b²/c²) has margin γ/√(1 + b²/c²), so Novikoff gives
    M ≤ (R² + c²)(1 + b²/c²)/γ². With c = 1 this is (R² + 1)(1 + b²)/γ²; with c = R (seed 004's
    rule, R the rule's radius) and the presented radius R_p it is the sharper form of
    Cristianini & Shawe-Taylor (2000), Thm 2.3: (R_p² + R²)(1 + b²/R²)/γ².
    """
    c2 = bias_feature**2
    return (radius**2 + c2) * (1.0 + offset**2 / c2) / margin**2


def novikoff_2r(radius: float, margin: float) -> float:
    """Cristianini & Shawe-Taylor (2000), Thm 2.3 (seed 004): (2R/γ)² for the rule b += η·y·R².

    R is the radius the rule uses; it must bound every presented ‖x_t‖ and the separator's |b|.
    The rule is exactly b += η·y·R², the constant feature c = R: ``novikoff_bias`` at c = R gives
    (R_p² + R²)(1 + b²/R²)/γ² ≤ 2R²·2/γ² when R_p ≤ R and |b| ≤ R. A bias step scaled by a decay
    (b += η·y·R²·decay) is the constant feature c = R√decay, a different rule: there
    (R² + c²)(1 + b²/c²)/γ² grows like b²/(decay·γ²) as the decay falls, far past (2R/γ)², and
    only ``novikoff_bias`` (at that c) covers it.
    """
    return (2.0 * radius / margin) ** 2


def _perceptron_learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "perceptron":
        return "not a perceptron-family learner"
    if not getattr(learner, "zero_init_", True):
        return "the learner did not start from w = 0"
    return None


def _perceptron_kind(facts: RunFacts) -> str | None:
    reason = _perceptron_learner(facts)
    if reason:
        return reason
    if facts.certificate is None:
        return "no certificate (separator) for the data"
    if not facts.certificate.separates:
        return "the certificate does not separate the data"
    return None


def _homogeneous(facts: RunFacts) -> str | None:
    reason = _perceptron_kind(facts)
    if reason:
        return reason
    if facts.learner.bias_feature_ != 0.0:
        return "the learner has a bias"
    if not facts.certificate.homogeneous:
        return "the separator has an offset b ≠ 0 and the learner has no bias"
    return None


def _with_bias(facts: RunFacts) -> str | None:
    reason = _perceptron_kind(facts)
    if reason:
        return reason
    return None if facts.learner.bias_feature_ > 0.0 else "the learner has no bias"


def _r2_rule(facts: RunFacts) -> str | None:
    reason = _with_bias(facts)
    if reason:
        return reason
    rule_radius = facts.learner.radius_
    if getattr(facts.learner, "bias", None) != "r2":
        return "the learner's bias rule is not b += η·y·R²"
    if getattr(facts.learner, "intercept_decay", 1.0) != 1.0:
        # b += η·y·R²·decay is the constant feature R√decay: novikoff_bias covers it
        return "the bias step is R²·intercept_decay with intercept_decay ≠ 1, not b += η·y·R²"
    if abs(facts.certificate.b) > rule_radius or facts.radius > rule_radius * (1 + 1e-12):
        return "|b| or a presented norm exceeds the rule's R"
    return None


def best_novikoff(facts: RunFacts, with_bias: bool) -> BoundValue | str:
    """Novikoff's bound at its best comparator: (R'‖v*‖)², v* = argmin ‖v‖ s.t. y_t v·x'_t ≥ 1.

    On the vectors x' the learner sees ((x, c) with a bias feature c > 0, x without one) this is
    the hard-margin SVM through the origin of x' (``lincls.geometry.comparators.hard_margin``): the
    max margin γ' of (x, c) itself, which may be far larger than that of the input-space
    maximum-margin (u, b) carried over to (x, c). The value is (R'/γ')² with γ' re-measured on the
    data.
    """
    reason = _perceptron_learner(facts)
    if reason:
        return reason
    if (facts.learner.bias_feature_ > 0.0) != with_bias:
        return "the learner has no bias" if with_bias else "the learner has a bias"
    found = _best.separator(facts)
    if isinstance(found, str):
        return found
    return BoundValue(novikoff(found.radius, found.margin), _best.details(found))


REGISTRY.extend(
    [
        BoundSpec(
            "novikoff",
            _homogeneous,
            lambda f: novikoff(f.radius, f.certificate.margin),
            best=lambda f: best_novikoff(f, with_bias=False),
            source=Source(
                DERIVED,
                "Novikoff 1962's theorem as stated and proved in seed 000 (Cohen 2008, Thm 1); "
                "the 1962 paper was not read",
            ),
        ),
        BoundSpec(
            "novikoff_bias",
            _with_bias,
            lambda f: novikoff_bias(
                f.radius, f.certificate.margin, f.certificate.b, f.learner.bias_feature_
            ),
            best=lambda f: best_novikoff(f, with_bias=True),
            source=Source(
                DERIVED,
                "Novikoff (seed 000, Thm 1) on the vectors (x, c); the reduction is in "
                "novikoff_bias's docstring",
            ),
        ),
        BoundSpec(
            "novikoff_2r",
            _r2_rule,
            lambda f: novikoff_2r(f.learner.radius_, f.certificate.margin),
            source=Source(
                DERIVED,
                "proved in seed 004 (Sarkar, after Cristianini & Shawe-Taylor 2000, Thm 2.3, "
                "not read); novikoff_2r's docstring reduces it to novikoff_bias at c = R",
            ),
        ),
    ]
)
