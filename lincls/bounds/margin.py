"""The update bound of the margin perceptron (update when y·(w·x + b) ≤ τ)."""

from __future__ import annotations

from lincls.bounds import _best
from lincls.bounds._registry import DERIVED, REGISTRY, BoundSpec, BoundValue, RunFacts, Source


def margin_perceptron_bound(
    radius: float,
    margin: float,
    tau: float,
    lr: float,
    offset: float = 0.0,
    bias_feature: float = 0.0,
) -> float:
    """Updates (hence mistakes) of the margin perceptron from w = 0: (R² + c² + 2τ/η)(1 + b²/c²)/γ².

    Novikoff's argument with the update condition y·w·x ≤ τ in place of ≤ 0: on the vectors
    x' = (x, c) the learner sees (c the bias's constant feature, 0 without a bias), with
    ŵ = w/η, each update raises ŵ·u' by ≥ γ' and ‖ŵ‖² by ≤ R'² + 2τ/η, so k updates give
    k²γ'² ≤ k(R'² + 2τ/η). Here R'² = R² + c² and γ' = γ/√(1 + b²/c²) for a unit separator
    (u, b) of margin γ (b = 0 and c = 0 for the homogeneous case). τ = 0 gives Novikoff's bound.
    Li, Zaragoza, Herbrich, Shawe-Taylor and Kandola (ICML 2002, "The perceptron algorithm with
    uneven margins") make the same argument with separate thresholds for the two classes.
    """
    offset_term = 0.0 if bias_feature == 0.0 else offset**2 / bias_feature**2
    return (radius**2 + bias_feature**2 + 2.0 * tau / lr) * (1.0 + offset_term) / margin**2


def _learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "margin_perceptron":
        return "not a margin perceptron"
    if not learner.zero_init_:
        return "the learner did not start from w = 0"
    return None


def _best_value(facts: RunFacts) -> BoundValue | str:
    """(R'² + 2τ/η)‖v*‖² at Novikoff's best comparator v* on (x, c) (the same argument holds for
    every v with y_t v·x'_t ≥ 1, and the smallest ‖v‖ minimises it)."""
    reason = _learner(facts)
    if reason:
        return reason
    found = _best.separator(facts)
    if isinstance(found, str):
        return found
    learner = facts.learner
    extra = 2.0 * float(learner.tau) / float(learner.lr) / found.radius**2
    return BoundValue((1.0 + extra) * found.solution.value, _best.details(found))


def _applies(facts: RunFacts) -> str | None:
    reason = _learner(facts)
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


def _value(facts: RunFacts) -> float:
    learner, cert = facts.learner, facts.certificate
    return margin_perceptron_bound(
        facts.radius, cert.margin, float(learner.tau), float(learner.lr), cert.b,
        learner.bias_feature_,
    )  # fmt: skip


REGISTRY.append(
    BoundSpec(
        "margin_perceptron",
        _applies,
        _value,
        best=_best_value,
        source=Source(
            DERIVED,
            "Novikoff's argument with the threshold τ, proved in margin_perceptron_bound's "
            "docstring (Li et al. 2002, ICML, make the same argument)",
        ),
    )
)
