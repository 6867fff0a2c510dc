"""Mistake bounds of the multiclass perceptron and of MIRA (seed 003's step), separable case.

Normalization (Crammer & Singer 2003, Theorem 1): a separating matrix U* with ‖U*‖_F = 1 (all
entries as one vector) and multiclass margin γ = min_t [u*_{y_t}·x_t − max_{r≠y_t} u*_r·x_t] > 0;
R ≥ max ‖x_t‖; the learner starts from W = 0.

With a bias feature the learner sees (x, 1) and the separator is (U*, b*), b* the class offsets:
on those vectors R'² = R² + 1 and, rescaling (U*, b*) to unit Frobenius norm, γ' = γ/√(1 + ‖b*‖²).

Both bounds are ‖V‖_F² times a constant for any V with every (v_y − v_r)·x'_t ≥ 1, so each is
also evaluated at the V of least norm: a multiclass hard-margin SVM (Crammer & Singer's, on
Kesler's rows; ``lincls.geometry.comparators.hard_margin``) on the vectors the learner sees.
"""

from __future__ import annotations

from lincls.bounds import _best
from lincls.bounds._registry import DERIVED, REGISTRY, BoundSpec, BoundValue, RunFacts, Source
from lincls.geometry import MulticlassCertificate


def multiclass_perceptron_bound(radius: float, margin: float) -> float:
    """M ≤ 2R²/γ² for the multiclass perceptron (Crammer & Singer 2003, JMLR 3, Theorem 1).

    The theorem covers the additive ultraconservative family, of which the perceptron step
    (w_y += x, w_ŷ −= x on a mistake) is a member, for any order and any number of passes, with
    ‖U*‖_F = 1 as above. Kesler's construction gives it directly: each mistake adds z with
    ‖z‖² = 2‖x‖² ≤ 2R² and ⟨U*, z⟩ ≥ γ, while ⟨W, z⟩ ≤ 0; so after M mistakes
    Mγ ≤ ‖W‖_F ≤ √(2MR²). The step size does not matter from W = 0 (the weights only scale).
    """
    return 2.0 * radius**2 / margin**2


def mira_bound(radius: float, max_step: float, u_norm_sq: float) -> float:
    """M ≤ max(2R², 1/M_cap)·‖U‖_F² for seed 003's MIRA step, U any matrix with every
    (u_y − u_r)·x_t ≥ 1 (r ≠ y); with U = U*/γ it is max(2R², 1/M_cap)/γ².

    Seed 003's step, τ = min(((w_ŷ − w_y)·x + 1)/(2x·x), M_cap) on a mistake, is PA-I (Crammer,
    Dekel, Keshet, Shalev-Shwartz & Singer 2006, JMLR 7, Theorem 4: M ≤ max(R_z², 1/C)(‖u‖² +
    2C Σ ℓ*_t)) with C = M_cap on the sequence of Kesler difference vectors z_t = Φ(x_t, y_t) −
    Φ(x_t, ŷ_t), label +1, taken on the mistake rounds: there ⟨W, z⟩ ≤ 0, the loss is
    1 + (w_ŷ − w_y)·x ≥ 1, ‖z‖² = 2x·x ≤ 2R² = R_z², and ℓ*_t = 0 for U. Every round of that
    sequence is a mistake, so its mistake count is MIRA's. When M_cap ≥ 1/(2R²) this is the
    perceptron's 2R²/γ². (Crammer & Singer's own MIRA theorem is for their quadratic-program
    update over all rows, not this two-row step, and is not used here.)
    """
    return max(2.0 * radius**2, 1.0 / max_step) * u_norm_sq


def _augmented(facts: RunFacts) -> tuple[float, float]:
    """(R'², γ'²) on the vectors (x, c) the learner sees, for the certificate's (U*, b*)."""
    cert = facts.certificate
    c = facts.learner.bias_feature_
    offsets = 0.0 if c == 0.0 else float((cert.b**2).sum()) / c**2
    return facts.radius**2 + c**2, cert.margin**2 / (1.0 + offsets)


def _learner(facts: RunFacts, family: str) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != family:
        return f"not a {family} learner"
    if not learner.zero_init_:
        return "the learner did not start from W = 0"
    return None


def _best_value(family: str):
    def value(facts: RunFacts) -> BoundValue | str:
        reason = _learner(facts, family)
        if reason:
            return reason
        found = _best.multiclass_separator(facts)
        if isinstance(found, str):
            return found
        # value = R'²‖V‖² (rows scaled to radius 1): 2R'²/γ² and max(2R'², 1/M_cap)·‖V‖²
        factor = 2.0
        if family == "mira":
            factor = max(2.0, 1.0 / (float(facts.learner.max_step) * found.radius**2))
        return BoundValue(factor * found.solution.value, _best.details(found))

    return value


def _applies(family: str):
    def check(facts: RunFacts) -> str | None:
        reason = _learner(facts, family)
        if reason:
            return reason
        if not isinstance(facts.certificate, MulticlassCertificate):
            return "no multiclass certificate (separating matrix) for the data"
        if not facts.certificate.separates:
            return "the certificate does not separate the data"
        if facts.learner.bias_feature_ == 0.0 and not facts.certificate.homogeneous:
            return "the separator has class offsets b ≠ 0 and the learner has no bias"
        return None

    return check


def _multiclass_perceptron(facts: RunFacts) -> float:
    r2, g2 = _augmented(facts)
    return multiclass_perceptron_bound(r2**0.5, g2**0.5)


def _mira(facts: RunFacts) -> float:
    r2, g2 = _augmented(facts)
    return mira_bound(r2**0.5, float(facts.learner.max_step), 1.0 / g2)


REGISTRY.extend(
    [
        BoundSpec(
            "multiclass_perceptron",
            _applies("multiclass_perceptron"),
            _multiclass_perceptron,
            best=_best_value("multiclass_perceptron"),
            source=Source(
                DERIVED,
                "Kesler's construction, proved in its docstring, in the form of Crammer & Singer "
                "2003 (JMLR 3) Thm 1, whose statement was not read",
            ),
        ),
        BoundSpec(
            "mira_pa1_kesler",
            _applies("mira"),
            _mira,
            best=_best_value("mira"),
            source=Source(
                DERIVED,
                "PA-I (Crammer et al. 2006, JMLR 7, Thm 4, read) on Kesler's difference vectors; "
                "the reduction is in mira_bound's docstring",
            ),
        ),
    ]
)
