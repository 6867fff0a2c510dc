"""Mistake bounds of the Projectron and Projectron++ (``lincls/learners/projectron.py``).

Orabona, Keshet & Caputo, "Bounded Kernel-Based Online Learning", JMLR 10 (2009), 2643–2666,
prove relative mistake bounds for both rules (the Projectron's first at ICML 2008). The first two
bounds below are derived in this docstring by the paper's argument (the perceptron's potential
‖g − f_t‖², with the projection error bounded by the threshold), stated for the rules lincls
runs by default (η compared with the squared distance δ_t², as in Orabona's DOGMA code), and
checked numerically: 0 violations over 10,000 random runs (``tests/test_projectron_bounds.py``).
The Projectron's is the exact root of the inequality in the proof of the paper's Theorem 3
(tighter than its stated form); DOGMA's Projectron++ margin step (ℓ > δ²/η) is not the one the
paper's Theorem 4 covers, so its bound here is lincls's own. The third, ``projectron_plus_paper``,
is Theorem 4 as published, for the rule it covers (``margin_rule="paper"``; see the end).

Setting: the linear kernel with the learner's bias feature c, so K'(x, x') = x'·x'' on the
vectors x' = (x, c) the learner sees, ‖x'_t‖ ≤ R' = √(R² + c²); f_1 = 0; a comparator v, its
hinge losses ℓ_t(v) = max(0, 1 − y_t v·x'_t). Write τ_t for the step's direction (k_t = x'_t, or
its projection P k_t onto the span of S, at distance δ_t ≤ √η from k_t) and
Δ_t = ‖v − f_t‖² − ‖v − f_{t+1}‖². Since f_t lies in the span, y_t f_t·P k_t = y_t f_t(x_t), and
y_t v·P k_t ≥ y_t v·x'_t − ‖v‖δ_t.

**Projectron** (``projectron``, a priori). On a mistake (y_t f_t(x_t) ≤ 0, f_{t+1} = f_t + y_t τ_t,
‖τ_t‖ ≤ R'), Δ_t ≥ 2y_t v·τ_t − ‖τ_t‖² ≥ 2(1 − ℓ_t(v) − √η‖v‖) − R'². Summing over the M mistakes
with the comparator λv for any λ > 0 (the mistakes do not depend on it), with
a = 1 − √η‖v‖ > 0 and L = Σ_mistakes ℓ_t(v): λ²‖v‖² ≥ 2λ(M·a − L) − M·R'², and at
λ = R'√M/‖v‖, M·a ≤ L + R'‖v‖√M, so

    M ≤ ((R'‖v‖ + √(R'²‖v‖² + 4aL)) / (2a))²   (≤ R'²‖v‖²/a² + 2L/a),

L logged with each example's loss times its presentations (at least the sum over the mistakes:
the same bound, a weaker number, needing no record of the mistake rounds). At η = 0 it is the
perceptron's bound M ≤ L + R'‖v‖√M. On a separator (L = 0, ‖v‖ = 1/γ) it is (R'/(γ − √η))²,
increasing in ‖v‖: its minimum over the separators (a convex set) is at the hard-margin
separator of the presented vectors (``lincls.bounds._best.separator``), which is logged as the
best comparator when γ > √η. Over all v the bound is not convex (the factor 1/a multiplies the
hinge sum: a convex function over a concave one), so its infimum is not computed; the certificate
values scan v = s·u over 400 scales s with √η·s < 1 (u the certificate's unit augmented
separator), and s = 1/γ where it separates.

**Projectron++** (``projectron_plus``, a posteriori: it reads U, the number of margin steps). A
mistake step is as above, without the rescaling (the margin steps have a fixed scale). A margin
step (0 < y_t f_t(x_t) = 1 − ℓ_t < 1, taken only when ℓ_t > δ_t²/η, with
β_t ≤ 2(ℓ_t − δ_t²/η)/‖P k_t‖² and β_t ≤ 1) gives
Δ_t ≥ β_t(2y_t v·P k_t − 2(1 − ℓ_t) − β_t‖P k_t‖²) ≥ β_t(2(y_t v·x'_t − 1) − 2‖v‖δ_t + 2δ_t²/η)
≥ −2ℓ_t(v) − η‖v‖²/2 (the least of 2δ²/η − 2‖v‖δ is −η‖v‖²/2). Summing, for every v with
2 − 2√η‖v‖ − R'² > 0,

    M ≤ (‖v‖²(1 + ηU/2) + 2·Σ_{mistakes ∪ margin steps} ℓ_t(v)) / (2 − 2√η‖v‖ − R'²),

so it applies only where R'² < 2 (K'(x, x) ≤ 1 gives the perceptron's ‖v‖² + 2L at η = 0). The
loss sum is logged over every presentation; the comparator scans v = s·u as above (the bound is
not convex in v either). The rescaled form of the Projectron's bound does not carry over: the
margin steps are not invariant to the kernel's scale.

Only the linear kernel: a certificate is a comparator in its space (as for the Forgetron).

The learner projects a mistake whose δ_t² is at most max(η, ϵK'(x_t, x_t)), ϵ = 10⁻⁶
(``lincls.learners.projectron.SPAN_TOLERANCE``: a smaller computed δ_t² is rounding), so a
projected mistake's δ_t² is at most η' = max(η, ϵR'²) (``reach``), and the mistake steps'
√η above is √η' in both bounds (the margin steps keep η, which their rule compares with). η'
is η wherever R'² ≤ 10⁶η; at η = 0 it is ϵR'². Before that tolerance a vector already in the
span of S was added whenever rounding left its computed δ_t² above η: at η = 0 (53 mistakes
against 52.3 with 7 support vectors in 5 dimensions, on 2 of ~3,000 random runs) and at any η
on data of a large enough scale. K_S was then singular, its computed inverse meaningless, and
the run did not follow the rule the bound is about.

**Theorem 4** (``projectron_plus_paper``, a posteriori: it reads B), as recorded from the JMLR
text: for Projectron++ with η_p > 0 whose margin steps (0 < y_t f_t(x_t) < 1) are taken when
ℓ_t ≥ ‖δ_t‖/η_p with 0 < τ_t < min{2(ℓ_t − ‖δ_t‖/η_p)/‖P k_t‖², 1}, on any sequence with
k(x_t, x_t) ≤ 1, and any g with ‖g‖ < 1/η_p, writing a = 1 − η_p‖g‖ and
D₁ = Σ_t max(0, 1 − y_t g(x_t)),

    M ≤ ‖g‖²/a² + D₁/a + (‖g‖/a)·√(max(0, D₁/a − B)),
    B = Σ_{margin steps} τ_t(2ℓ_t − τ_t‖P k_t‖² − 2‖δ_t‖/η_p).

lincls's ``margin_rule="paper"`` is that rule with η_p = √η (its mistake steps project when
δ_t² ≤ η); the learner records B (``margin_gain_``). Applied as stated: the linear kernel with
the learner's bias feature (K' = x·x' + c², a kernel), only where R'² = R² + c² ≤ 1 (so
k(x_t, x_t) ≤ 1) and η ≥ ϵR'² (so the span tolerance never changes the mistake rule: it is the
paper's), D₁ summed over every presentation, g = s·u over the same scales (s < 1/√η).
"""

from __future__ import annotations

import math

import numpy as np

from lincls.bounds import _best
from lincls.bounds._registry import (
    A_POSTERIORI,
    DERIVED,
    PUBLISHED,
    REGISTRY,
    BoundSpec,
    BoundValue,
    RunFacts,
    Source,
)
from lincls.bounds.deficit import augmented_geometry

GRID = 400


def reach(eta: float, radius: float) -> float:
    """η' = max(η, ϵR'²): the most a projected mistake's δ_t² can be (module docstring)."""
    # here, not at the top: the learners bring scikit-learn and numba into every reader of the
    # bounds' names (the report)
    from lincls.learners.projectron import SPAN_TOLERANCE

    return max(eta, SPAN_TOLERANCE * radius * radius)


def projectron_bound(comparator_norm: float, radius: float, eta: float, hinge_sum: float) -> float:
    """The Projectron's bound (module docstring): M ≤ ((R'‖v‖ + √(R'²‖v‖² + 4aL))/(2a))² with
    a = 1 − √η‖v‖ (infinite where a ≤ 0); L the comparator's hinge losses summed over the
    mistakes (or, weaker, over every presentation), η the most a projected mistake's δ_t² can
    be (``reach``: the learner's η, or ϵR'² above it)."""
    a = 1.0 - math.sqrt(eta) * comparator_norm
    if a <= 0.0:
        return math.inf
    spread = radius * comparator_norm
    root = (spread + math.sqrt(spread * spread + 4.0 * a * hinge_sum)) / (2.0 * a)
    return root * root


def projectron_plus_bound(
    comparator_norm: float,
    radius: float,
    eta: float,
    hinge_sum: float,
    margin_steps: int,
    eta_projected: float | None = None,
) -> float:
    """The Projectron++ bound (module docstring):
    M ≤ (‖v‖²(1 + ηU/2) + 2L) / (2 − 2√η'‖v‖ − R'²), infinite where the denominator is ≤ 0;
    L summed over the mistakes and margin steps (or, weaker, every presentation), U the margin
    steps taken, η the learner's, η' (``eta_projected``, by default η; ``reach``) the most a
    projected mistake's δ_t² can be."""
    distance = eta if eta_projected is None else eta_projected
    room = 2.0 - 2.0 * math.sqrt(distance) * comparator_norm - radius * radius
    if room <= 0.0:
        return math.inf
    norm_sq = comparator_norm * comparator_norm
    return (norm_sq * (1.0 + eta * margin_steps / 2.0) + 2.0 * hinge_sum) / room


def projectron_paper_bound(
    comparator_norm: float, eta_paper: float, hinge_sum: float, gain: float
) -> float:
    """Orabona, Keshet & Caputo (2009), Theorem 4 (module docstring): with a = 1 − η_p‖g‖,
    M ≤ ‖g‖²/a² + D₁/a + (‖g‖/a)·√(max(0, D₁/a − B)), infinite where a ≤ 0; η_p the paper's
    threshold on ‖δ‖ (√η of lincls's η), D₁ the hinge losses of g over the sequence, B the run's
    ``margin_gain_``."""
    a = 1.0 - eta_paper * comparator_norm
    if a <= 0.0:
        return math.inf
    scaled = comparator_norm / a
    return scaled * scaled + hinge_sum / a + scaled * math.sqrt(max(0.0, hinge_sum / a - gain))


def _learner(facts: RunFacts, plus: bool, paper: bool = False) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "projectron":
        return "not a Projectron"
    if bool(learner.plus) != plus:
        return "Projectron++ (plus=true)" if learner.plus else "the Projectron (plus=false)"
    rule = getattr(learner, "margin_rule", "dogma")
    if plus and (rule == "paper") != paper:
        if paper:
            return "DOGMA's margin step (margin_rule=dogma): Theorem 4 does not cover it"
        return "Theorem 4's margin step (margin_rule=paper): its bound is projectron_plus_paper"
    if learner.kernel != "linear":
        return "a certificate gives a comparator in the linear kernel's space only"
    return None


def _geometry(facts: RunFacts, plus: bool, paper: bool = False):
    """Why no Projectron bound applies to the run (a string), else its augmented geometry."""
    reason = _learner(facts, plus, paper)
    if reason:
        return reason
    if facts.presentations is None:
        return "the presentations of each example are unknown"
    return augmented_geometry(facts)


def _applies(facts: RunFacts, plus: bool) -> str | None:
    geometry = _geometry(facts, plus)
    if isinstance(geometry, str):
        return geometry
    if plus and geometry[1] ** 2 >= 2.0:
        return "R'² = R² + c² ≥ 2: the bound needs the vectors' squared radius below 2"
    return None


def _paper_applies(facts: RunFacts) -> str | None:
    geometry = _geometry(facts, plus=True, paper=True)
    if isinstance(geometry, str):
        return geometry
    radius = geometry[1]
    if radius * radius > 1.0:
        return "R'² = R² + c² > 1: Theorem 4 needs k(x, x) ≤ 1"
    if reach(float(facts.learner.eta), radius) > float(facts.learner.eta):
        return "η < 10⁻⁶R'²: the span tolerance, not η, decided some mistakes' projection"
    return None


def _paper_value(facts: RunFacts) -> BoundValue:
    margins, _ = augmented_geometry(facts)
    root = math.sqrt(float(facts.learner.eta))
    gain = float(facts.learner.margin_gain_)
    scales = _scales(1.0 / root, margins)
    shown = np.asarray(facts.presentations, dtype=np.float64)
    losses = np.maximum(1.0 - scales[:, None] * margins[None, :], 0.0) @ shown
    values = [projectron_paper_bound(s, root, h, gain) for s, h in zip(scales, losses, strict=True)]
    best = int(np.argmin(values))
    details = {"comparator_norm": float(scales[best]), "hinge_sum": float(losses[best]),
               "gain": gain}  # fmt: skip
    return BoundValue(float(values[best]), details)


def _scales(cap: float, margins: np.ndarray) -> np.ndarray:
    """400 comparator scales s (v = s·u) in (0, cap), geometric from cap·10⁻⁶, and 1/γ where
    the certificate separates with 1/γ < cap."""
    scales = cap * np.geomspace(1e-6, 1.0, GRID, endpoint=False)
    if margins.shape[0] and margins.min() > 0.0 and 1.0 / margins.min() < cap:
        scales = np.r_[scales, 1.0 / margins.min()]
    return scales


def _value(facts: RunFacts, plus: bool) -> BoundValue:
    learner = facts.learner
    margins, radius = augmented_geometry(facts)
    eta = float(learner.eta)
    distance = reach(eta, radius)
    root = math.sqrt(distance)
    steps = int(learner.updates_) - int(learner.mistakes_)
    cap = (2.0 - radius * radius) / (2.0 * root) if plus else 1.0 / root
    scales = _scales(cap, margins)
    shown = np.asarray(facts.presentations, dtype=np.float64)
    losses = np.maximum(1.0 - scales[:, None] * margins[None, :], 0.0) @ shown
    if plus:
        values = [
            projectron_plus_bound(s, radius, eta, h, steps, distance)
            for s, h in zip(scales, losses, strict=True)
        ]
    else:
        values = [
            projectron_bound(s, radius, distance, h) for s, h in zip(scales, losses, strict=True)
        ]
    best = int(np.argmin(values))
    details = {"comparator_norm": float(scales[best]), "hinge_sum": float(losses[best])}
    if plus:
        details["margin_steps"] = float(steps)
    return BoundValue(float(values[best]), details)


def best_projectron(facts: RunFacts) -> BoundValue | str:
    """(R'/(γ' − √η'))² at the hard-margin separator of the presented vectors (margin γ'): the
    Projectron's bound at its best separator (module docstring)."""
    reason = _learner(facts, plus=False)
    if reason:
        return reason
    found = _best.separator(facts)
    if isinstance(found, str):
        return found
    distance = reach(float(facts.learner.eta), found.radius)
    root = math.sqrt(distance)
    if found.margin <= root:
        return f"the best separator's margin γ' = {found.margin:.4g} is at most √η' = {root:.4g}"
    value = projectron_bound(1.0 / found.margin, found.radius, distance, 0.0)
    return BoundValue(value, _best.details(found))


REGISTRY.append(
    BoundSpec(
        "projectron",
        lambda facts: _applies(facts, plus=False),
        lambda facts: _value(facts, plus=False),
        best=best_projectron,
        sequence=True,
        source=Source(
            DERIVED,
            "the exact root of the inequality in the proof of Orabona, Keshet & Caputo 2009 "
            "(JMLR 10) Thm 3, for η on δ² and R' in place of k(x, x) ≤ 1; proof in the docstring",
        ),
    )
)
REGISTRY.append(
    BoundSpec(
        "projectron_plus",
        lambda facts: _applies(facts, plus=True),
        lambda facts: _value(facts, plus=True),
        family=A_POSTERIORI,
        sequence=True,
        source=Source(
            DERIVED,
            "lincls's own, for DOGMA's margin step (ℓ > δ²/η), which Orabona, Keshet & Caputo "
            "2009 Thm 4 (ℓ ≥ ‖δ‖/η) does not cover; proof in the docstring",
        ),
    )
)
REGISTRY.append(
    BoundSpec(
        "projectron_plus_paper",
        _paper_applies,
        _paper_value,
        family=A_POSTERIORI,
        sequence=True,
        source=Source(
            PUBLISHED,
            "Orabona, Keshet & Caputo 2009, JMLR 10, Thm 4 (read in the JMLR text), for its "
            "margin step (margin_rule=paper, ℓ ≥ ‖δ‖/η)",
        ),
    )
)
