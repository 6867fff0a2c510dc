"""Mistake bounds of the passive-aggressive family (Crammer, Dekel, Keshet, Shalev-Shwartz, Singer
2006, "Online Passive-Aggressive Algorithms", JMLR 7).

Notation: ℓ_t = max(0, 1 − y_t w_t·x_t) the learner's hinge loss, ℓ*_t the same for a comparator
u of any norm, ‖x_t‖ ≤ R, w_1 = 0. Every mistake has ℓ_t ≥ 1, so a bound on Σ ℓ_t² bounds the
mistakes. On a certified separable dataset (unit u, offset b, margin γ) the comparator
u' = (u, b/c)/γ on the vectors (x, c) the learner sees has every ℓ*_t = 0 and
‖u'‖² = (1 + b²/c²)/γ², the radius there being √(R² + c²).

Every right-hand side is convex in u, so each bound is also evaluated at its best comparator on
the vectors the learner sees (``lincls.geometry.comparators``): PA's at the minimum-norm u with
every ℓ*_t = 0 (a hard-margin SVM through the origin), PA-I's at the minimiser of ‖u‖² + 2C Σ_t ℓ*_t
and PA-II's of ‖u‖² + 2C Σ_t (ℓ*_t)² (soft-margin SVMs, the sums over every round, so each
presentation counts). These hold on any data, separable or not.
"""

from __future__ import annotations

from lincls.bounds import _best
from lincls.bounds._registry import PUBLISHED, REGISTRY, BoundSpec, BoundValue, RunFacts, Source


def pa_bound(radius: float, u_norm_sq: float) -> float:
    """PA, separable case: Σ ℓ_t² ≤ ‖u‖² R², hence M ≤ ‖u‖² R².

    Crammer et al. (2006), the separable-case bound of PA (τ = ℓ/‖x‖²): if some u has ℓ*_t = 0
    for every t and ‖x_t‖ ≤ R, then Σ ℓ_t² ≤ ‖u‖² R². With u = u_unit/γ it is (R/γ)².
    """
    return u_norm_sq * radius**2


def pa1_bound(radius: float, C: float, u_norm_sq: float, loss_sum: float = 0.0) -> float:
    """PA-I: M ≤ max(R², 1/C)·(‖u‖² + 2C Σ ℓ*_t), for any u (Crammer et al. 2006).

    τ = min(C, ℓ/‖x‖²); holds on any sequence, separable or not, from w = 0.
    """
    return max(radius**2, 1.0 / C) * (u_norm_sq + 2.0 * C * loss_sum)


def pa2_bound(radius: float, C: float, u_norm_sq: float, sq_loss_sum: float = 0.0) -> float:
    """PA-II: M ≤ Σ ℓ_t² ≤ (R² + 1/(2C))·(‖u‖² + 2C Σ (ℓ*_t)²), for any u (Crammer et al. 2006).

    τ = ℓ/(‖x‖² + 1/(2C)); holds on any sequence, separable or not, from w = 0.
    """
    return (radius**2 + 0.5 / C) * (u_norm_sq + 2.0 * C * sq_loss_sum)


def _augmented(facts: RunFacts) -> tuple[float, float]:
    """(R'², ‖u'‖²) on the vectors (x, c), for the zero-loss comparator of the certificate."""
    c = facts.learner.bias_feature_
    cert = facts.certificate
    offset_term = 0.0 if c == 0.0 else cert.b**2 / c**2
    return facts.radius**2 + c**2, (1.0 + offset_term) / cert.margin**2


def _pa_learner(facts: RunFacts, variant: str) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "passive_aggressive":
        return "not a passive-aggressive learner"
    if learner.variant != variant:
        return f"the learner's variant is {learner.variant!r}, not {variant!r}"
    if not learner.zero_init_:
        return "the learner did not start from w = 0"
    if learner.bias == "sklearn":
        return "bias rule 'sklearn' leaves the bias out of ‖x‖²: not PA on (x, c)"
    return None


def _best_value(variant: str):
    def value(facts: RunFacts) -> BoundValue | str:
        reason = _pa_learner(facts, variant)
        if reason:
            return reason
        C = float(getattr(facts.learner, "C", 1.0))
        if variant == "pa":
            found = _best.separator(facts)
        else:
            found = _best.hinge(facts, C, squared=variant == "pa2")
        if isinstance(found, str):
            return found
        r2 = found.radius**2
        if variant == "pa":  # R'²‖u‖²: the separator's value on rows scaled to radius 1
            return BoundValue(found.solution.value, _best.details(found))
        details = {"radius": found.radius, "gap": found.gap, "objective": found.solution.value}
        if variant == "pa1":
            return BoundValue(max(r2, 1.0 / C) * found.solution.value, details)
        return BoundValue((r2 + 0.5 / C) * found.solution.value, details)

    return value


def _applies(variant: str):
    def check(facts: RunFacts) -> str | None:
        reason = _pa_learner(facts, variant)
        if reason:
            return reason
        learner = facts.learner
        if facts.certificate is None:
            return "no certificate (separator) for the data"
        if not facts.certificate.separates:
            return "the certificate does not separate the data"
        if learner.bias_feature_ == 0.0 and not facts.certificate.homogeneous:
            return "the separator has an offset b ≠ 0 and the learner has no bias"
        return None

    return check


def _pa(facts: RunFacts) -> float:
    r2, u2 = _augmented(facts)
    return pa_bound(r2**0.5, u2)


def _pa1(facts: RunFacts) -> float:
    r2, u2 = _augmented(facts)
    return pa1_bound(r2**0.5, float(facts.learner.C), u2)


def _pa2(facts: RunFacts) -> float:
    r2, u2 = _augmented(facts)
    return pa2_bound(r2**0.5, float(facts.learner.C), u2)


def _read(theorem: int) -> Source:
    return Source(
        PUBLISHED,
        f"Crammer, Dekel, Keshet, Shalev-Shwartz & Singer 2006, JMLR 7, Thm {theorem} "
        "(read in the JMLR text)",
    )


REGISTRY.extend(
    [
        BoundSpec("pa", _applies("pa"), _pa, best=_best_value("pa"), source=_read(2)),
        BoundSpec("pa1", _applies("pa1"), _pa1, best=_best_value("pa1"), source=_read(4)),
        BoundSpec("pa2", _applies("pa2"), _pa2, best=_best_value("pa2"), source=_read(5)),
    ]
)
