"""Mistake bounds of CW, SCW-I and SCW-II (``lincls.learners.confidence_weighted``), a posteriori.

No mistake bound is quoted. lincls's ``cw`` runs Dredze, Crammer & Pereira's variance rule
("Confidence-Weighted Linear Classification", ICML 2008: constraint m ≥ φV, Σ⁻¹ += 2αφ·xxᵀ).
Crammer, Dredze & Pereira's "Exact Convex Confidence-Weighted Learning" (NIPS 21, 2008), whose
abstract says it analyzes its update "in the mistake bound model", is about the other rule, the
standard deviation's (m ≥ φ√V), which is SCW-I's step when no step is capped at C: whatever it
proves is about ``scw1``'s rule, not ``cw``'s. Neither it nor Wang, Zhao & Hoi, "Exact Soft
Confidence-Weighted Learning", ICML 2012, could be read in any public copy at hand (only their
abstracts: proceedings.neurips.cc's metadata of the first, arXiv 1206.4612's abstract of the
second), so no formula here is attributed to them. The three bounds below are derived in this
docstring for the rules lincls runs and checked numerically: 0 violations over 10,000 random runs
(every variant and option; ``cw`` logged on 1,444 of them, ``scw1`` on 1,845, ``scw2`` on 2,628 of
the 3,096 full-covariance SCW-II runs; the largest ratio of mistakes to bound 0.9991, 0.9922 and
0.4845, each on a run with one mistake; the median 0.0005, 0.012 and 0.0012, CW's bound growing as
R'⁴ with the data's scale), and at their best comparator equal to an independent minimisation
(``tests/test_confidence_weighted_bounds.py``).

Setting: the full covariance from μ_1 = 0, Σ_1 = I, on the vectors x' = (x, c) the learner sees,
‖x'_t‖ ≤ R'. Write A_t = Σ_t⁻¹, m_t = y_t μ_t·x'_t, V_t = x'_tᵀΣ_t x'_t, V'_t = x'_tᵀΣ_{t+1}x'_t.
A step is μ_{t+1} = μ_t + α_t y_t Σ_t x'_t, A_{t+1} = A_t + k_t x'_t x'_tᵀ (α_t, k_t > 0), so
V'_t = V_t/(1 + k_tV_t) ≤ V_t ≤ R'² (A_t ⪰ I), and the new margin is m''_t = m_t + α_tV_t.

Identities (any such step). With v_t = A_tμ_t and Q_t = μ_tᵀA_tμ_t (both 0 at t = 1),
v_{t+1} = v_t + c_t y_t x'_t with c_t = α_t + k_t m''_t, and
Q_{t+1} = Q_t + 2α_t m_t + α_t²V_t + k_t m''_t² = Q_t + q_t, q_t = α_t(m_t + m''_t) + k_t m''_t².
For any comparator w and λ > 0, 0 ≤ ‖μ_{T+1} − λw‖²_{A_{T+1}} = Q_{T+1} − 2λ w·v_{T+1} +
λ²wᵀA_{T+1}w, so with g_t = y_t w·x'_t and K(w) = wᵀA_{T+1}w = wᵀΣ_{T+1}⁻¹w (the run's final
covariance),

    Σ_{updates} (2λ c_t g_t − q_t) ≤ λ² K(w).                                        (*)

**CW** (``cw``: Dredze, Crammer & Pereira's variance rule; every option but the diagonal). A step
meets its constraint exactly, m''_t = φV'_t, with k_t = 2α_tφ (numerically: to 2·10⁻¹⁶ of its
terms, in exact arithmetic on the computed α, over random (m, V, η) with ‖x‖ from 10⁻¹² to 10¹²,
``tests/test_step_scales.py``; the papers' form of the root, which an earlier check drew at
V ≥ 10⁻⁶ only, rounded α to 0 below V ≈ 10⁻¹⁴ at η = 0.51, and no step was taken).
So c_t = α_t(1 + 2φ²V'_t) ≥ α_t and q_t = α_t(m_t + φV'_t + 2φ³V'_t²). For a
separator with margins g_t ≥ 1 on the presented vectors, each term of (*) is at least
α_t(2λ − m_t − φV'_t − 2φ³V'_t²). A step is taken when m_t < φV_t: with λ ≥ φR'² + φ³R'⁴ every
term is ≥ 0. On a mistake (m_t ≤ 0; V_t > 0 since g_t ≥ 1 rules out x' = 0, so a step is taken)
the term is ≥ α_t(2λ − B), B = φR'² + 2φ³R'⁴, and α_t, decreasing in m_t, is at least its value
at m = 0: 2φ/(1 + √(1 + 8φ²V_t)) ≥ a = 2φ/(1 + √(1 + 8φ²R'²)). So M·a(2λ − B) ≤ λ²K(w); at
λ = B (the best λ, and ≥ φR'² + φ³R'⁴),

    M ≤ K(w)·B/a = K(w)·R'²(1 + 2φ²R'²)(1 + √(1 + 8φ²R'²))/2.

**SCW-I** (``scw1``: Wang, Zhao & Hoi's SCW-I, on runs where no step was capped at C,
``clipped_steps_`` = 0). An uncapped step is the exact convex CW step: m''_t = φs_t with
s_t = √V'_t, and k_t = α_tφ/s_t (numerically: both to 7·10⁻¹⁶ over the same draws). So, with
ζ = 1 + φ², c_t = ζα_t and q_t = α_t(m_t + ζφs_t). With hinge losses ℓ_t(w) = (1 − g_t)₊ and
α_t ≤ C, each term of (*) is ≥ α_t(2λζ − m_t − ζφs_t) − 2λζCℓ_t(w). A step is taken when
m_t < φ√V_t: with λ ≥ λ_0 = φR'(1 + ζ)/(2ζ) the first part is ≥ 0. On a mistake α_t, decreasing in
m_t, is ≥ φ/√(ζV_t), so the first part is ≥ φ√ζ(2λ/√V_t − φ) ≥ φ√ζ(2λ/R' − φ). A zero vector x'
(a mistake without a step) is excluded. Hence, for every w and λ ≥ λ_0,
M·φ√ζ(2λ/R' − φ) ≤ λ²K(w) + 2λζC·L(w), L(w) = Σ_{updates} ℓ_t(w) (logged as the sum over every
presentation, which is larger), so

    M ≤ min_{λ ≥ λ_0} (λ²K(w) + 2λζC·L(w)) / (φ√ζ(2λ/R' − φ)),

the minimum in closed form (λ = (φK + √(φ²K² + 4ζCLφK/R'))R'/(2K), raised to λ_0). On a separator
(L = 0) it is M ≤ R'²K(w)/√(1 + φ²), at λ = φR'.

**SCW-II** (``scw2``: Wang, Zhao & Hoi's SCW-II, on runs where every step had c_t ≥ 0,
``clipped_steps_`` = 0). Its closed-form α is the root of the quadratic obtained by squaring
m_t + α_t(V_t + 1/(2C)) = φs_t, so the step stops short of the constraint by ε_t = α_t/(2C),
m''_t = φs_t − ε_t, and k_t = α_tφ/s_t as for SCW-I (numerically: both to 7·10⁻¹⁶ over the same
draws; to 3·10⁻¹² and 4·10⁻¹⁶ in floating point over 20,000 random (m, V, η, C) more).
So c_t = α_t(ζ − φε_t/s_t), and where c_t ≥ 0, g_t ≥ 1 − ℓ_t gives
each term of (*) ≥ α_tE_t − 2λc_tℓ_t, E_t = 2λζ − (1 + ζ)φs_t + α_tV_t + 2ε_t(ζ − λφ/s_t) −
φε_t²/s_t: concave in ε_t on [0, ζs_t/φ] (where c_t ≥ 0), equal to 2λζ − (1 + ζ)φs_t + α_tV_t at 0
and to α_tV_t + s_t/φ at ζs_t/φ. Interpolating (weight c_t/(ζα_t) on the first),
α_tE_t ≥ c_t(2λ − (1 + ζ)φs_t/ζ) + α_t²N_t, N_t = V_t + 1/(2Cζ), the first part ≥ 0 for
λ ≥ λ_0 = φR'(1 + ζ)/(2ζ). As c_t ≤ ζα_t and N_t ≥ 1/(2Cζ), 2λc_tℓ_t ≤ α_t²N_t/2 + 4Cζ³λ²ℓ_t²,
so each term is ≥ α_t²N_t/2 − 4Cζ³λ²ℓ_t² (numerically on the same steps). On a mistake α_t,
decreasing in m_t (ditto), is at least its value at m = 0, α_t² ≥ φ²V_t/(n_t(n_t + φ²V_t))
with n_t = V_t + 1/(2C) ≤ ζN_t, so the term is ≥ φ²V_t/(2ζ(ζV_t + 1/(2C))) − 4Cζ³λ²ℓ_t²,
increasing in V_t ≥ V_min, the least x'ᵀΣ_{T+1}x' over the presented vectors (Σ_t ⪰ Σ_{T+1}).
With squared hinge losses L₂(w) = Σ_{updates} ℓ_t(w)² (logged over every presentation), at
λ = λ_0:

    M ≤ (1 + ζ)²R'²(ζV_min + 1/(2C))·(K(w) + 4Cζ³L₂(w))/(2ζV_min),

PA-II's shape (R² + 1/(2C))(‖u‖² + 2C·L₂) with V_min in the place of ‖x‖²: SCW-II's progress on a
mistake shrinks with V_t, since its loss φ√V_t − m_t does.

Not covered: a capped SCW-I step breaks m''_t = φs_t and on a large negative margin makes
c_t < 0; an SCW-II step can leave m''_t < −s_t/φ (a large negative margin, a small C or a small
V_t), where c_t < 0 too. Either way the comparator's margin enters (*) with the wrong sign, so no
run with such a step is covered (the learner counts them; 468 of the 3,096 full-covariance
SCW-II runs of the 10,000 above had one). Nor is the diagonal variant: its
update is not a rank-one update of Σ⁻¹ (it drops the off-diagonal terms of x'x'ᵀ), so
v_{t+1} = v_t + c_t y_t x'_t and with it (*) do not hold.

Comparators. K(w) reads the run's final covariance, so the bounds are a posteriori. On the
separators (y_t w·x'_t ≥ 1 on the presented vectors, a convex set) both bounds increase with
K(w), so their best comparator is min wᵀΣ_{T+1}⁻¹w over that set, a hard-margin SVM on the vectors
L_Σᵀx' (Σ_{T+1} = L_Σ L_Σᵀ, w = L_Σ z): logged as the best comparator. For SCW-I on data no
separator covers, the best over every w (a family of hinge problems, one per λ) is not searched:
the certificate's unit augmented separator u' is scanned as w = s·u' over 400 scales s. SCW-II's
bound increases with K(w) + 4Cζ³L₂(w), convex over every w: its best comparator is that
minimum, a squared-hinge SVM on the vectors L_Σᵀx' (``lincls.geometry.comparators.hinge``); at the
certificate it is scanned over the scales s as SCW-I's is.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from lincls.bounds import _best
from lincls.bounds._registry import (
    A_POSTERIORI,
    DERIVED,
    REGISTRY,
    BoundSpec,
    BoundValue,
    RunFacts,
    Source,
)
from lincls.bounds.deficit import augmented_geometry
from lincls.geometry import augmented_scale, comparators

GRID = 400  # comparator scales s (w = s·u') tried at a non-separating certificate


def cw_bound(K: float, radius: float, phi: float) -> float:
    """The derived CW bound (module docstring): M ≤ K·R'²(1 + 2φ²R'²)(1 + √(1 + 8φ²R'²))/2,
    K = wᵀΣ_{T+1}⁻¹w for a w with y_t w·x'_t ≥ 1 on every presented vector."""
    r2 = radius * radius
    return (
        K * r2 * (1.0 + 2.0 * phi * phi * r2) * (1.0 + math.sqrt(1.0 + 8.0 * phi * phi * r2)) / 2.0
    )


def scw1_bound(K: float, radius: float, phi: float, C: float, hinge_sum: float) -> float:
    """The derived SCW-I bound (module docstring), for a run without a capped step:
    M ≤ min_{λ ≥ λ_0} (λ²K + 2λζC·L)/(φ√ζ(2λ/R' − φ)), ζ = 1 + φ², λ_0 = φR'(1 + ζ)/(2ζ);
    K = wᵀΣ_{T+1}⁻¹w, L the hinge losses (1 − y_t w·x'_t)₊ summed over the updates (or more)."""
    zeta = 1.0 + phi * phi
    slope = 2.0 / radius
    linear = 2.0 * zeta * C * hinge_sum
    floor = phi * radius * (1.0 + zeta) / (2.0 * zeta)
    if K <= 0.0:
        lam = floor
    elif slope * K > 0.0:
        lam = (phi * K + math.sqrt((phi * K) ** 2 + slope * K * linear * phi)) / (slope * K)
        lam = max(lam, floor)
    else:  # slope·K underflowed (R' near the float range): the same λ with K divided out
        lam = max((phi + math.sqrt(phi * phi + slope * linear * phi / K)) / slope, floor)
    return (lam * lam * K + lam * linear) / (phi * math.sqrt(zeta) * (slope * lam - phi))


def scw2_bound(
    K: float, radius: float, phi: float, C: float, v_min: float, sq_hinge_sum: float = 0.0
) -> float:
    """The derived SCW-II bound (module docstring), for a run without a step of c_t < 0:
    M ≤ (1 + ζ)²R'²(ζV_min + 1/(2C))(K + 4Cζ³L₂)/(2ζV_min), ζ = 1 + φ²; K = wᵀΣ_{T+1}⁻¹w,
    L₂ the squared hinge losses (1 − y_t w·x'_t)₊² summed over the updates (or more), V_min the
    least x'ᵀΣ_{T+1}x' over the presented vectors."""
    zeta = 1.0 + phi * phi
    objective = K + 4.0 * C * zeta**3 * sq_hinge_sum
    factor = (1.0 + zeta) ** 2 * radius * radius * (zeta * v_min + 0.5 / C) / (2.0 * zeta * v_min)
    return factor * objective


def _learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "confidence_weighted":
        return "not a confidence-weighted learner"
    if learner.diagonal:
        return "the diagonal variant: the derivation needs the full covariance"
    if not learner.zero_init_:
        return "the learner did not start from μ = 0"
    if getattr(learner, "covariance_", None) is None:
        return "no final covariance"
    return None


def _cw_learner(facts: RunFacts) -> str | None:
    reason = _learner(facts)
    if reason:
        return reason
    if facts.learner.variant != "cw":
        return "not CW (variant=cw)"
    return None


def _scw1_learner(facts: RunFacts) -> str | None:
    reason = _learner(facts)
    if reason:
        return reason
    learner = facts.learner
    if learner.variant != "scw1":
        return "not SCW-I (variant=scw1)"
    if learner.clipped_steps_:
        return f"{learner.clipped_steps_} SCW-I steps were capped at C (the bound needs none)"
    return None


def _scw2_learner(facts: RunFacts) -> str | None:
    reason = _learner(facts)
    if reason:
        return reason
    learner = facts.learner
    if learner.variant != "scw2":
        return "not SCW-II (variant=scw2)"
    if learner.clipped_steps_:
        return f"{learner.clipped_steps_} SCW-II steps had α + k·y μ'·x < 0 (the bound needs none)"
    if facts.X is None:
        return "the training rows are not at hand (V_min needs them)"
    if not _least_variance(facts) > 0.0:
        return "a presented vector has x'ᵀΣx' = 0 at the final covariance"
    return None


def _root(learner) -> np.ndarray:
    """L with Σ = L Lᵀ at the run's final covariance: the learner's own square root G (Σ = GᵀG,
    L = Gᵀ), which holds Σ's small eigenvalues where Σ itself, formed, has lost them."""
    factor = getattr(learner, "factor_", None)
    if factor is not None:
        return factor.T
    return np.linalg.cholesky(learner.covariance_)


def _least_variance(facts: RunFacts) -> float:
    """V_min = min x'ᵀΣ_{T+1}x' = min ‖Lᵀx'‖² over the presented vectors x' (every row when not
    known)."""
    X, _ = _best.presented_vectors(facts, float(facts.learner.bias_feature_))
    if X.shape[0] == 0:
        return math.inf
    rows = np.asarray(X @ _root(facts.learner))
    return float(np.min(np.sum(rows * rows, axis=1)))


def _unit_comparator(facts: RunFacts) -> np.ndarray:
    """The certificate's unit augmented separator u' = (u, b/c)/√(1 + b²/c²) on (x, c)."""
    cert, c = facts.certificate, float(facts.learner.bias_feature_)
    scale = augmented_scale(cert.b, c)
    u = np.asarray(cert.u, dtype=np.float64)
    return (np.append(u, cert.b / c) if c != 0.0 else u) / scale


def _precision(facts: RunFacts, w: np.ndarray) -> float:
    """K(w) = wᵀΣ⁻¹w = ‖L⁻¹w‖² at the run's final covariance Σ = L Lᵀ."""
    z = np.linalg.solve(_root(facts.learner), w)
    return float(z @ z)


def _radius(facts: RunFacts) -> float:
    c = float(facts.learner.bias_feature_)
    return float(np.sqrt(facts.radius**2 + c**2))


def _applies(facts: RunFacts, learner_check, separable_only: bool) -> str | None:
    reason = learner_check(facts)
    if reason:
        return reason
    geometry = augmented_geometry(facts)
    if isinstance(geometry, str):
        return geometry
    margins = geometry[0]
    separates = margins.shape[0] == 0 or margins.min() > 0.0
    if not separates and (separable_only or facts.presentations is None):
        return "the certificate does not separate" + (
            "" if separable_only else " and the presentations are unknown"
        )
    if not separable_only and facts.learner.bias_feature_ == 0.0 and facts.sq_norms is None:
        return "the norms of the rows are unknown (a zero vector is a mistake without a step)"
    if not separable_only and _zero_presented(facts):
        return "a zero vector was presented (a mistake without a step)"
    return None


def _zero_presented(facts: RunFacts) -> bool:
    if facts.learner.bias_feature_ != 0.0:
        return False
    zero = np.asarray(facts.sq_norms) == 0.0
    if facts.presentations is not None:
        zero &= np.asarray(facts.presentations) > 0
    return bool(zero.any())


def _cw_value(facts: RunFacts) -> BoundValue:
    margins, _ = augmented_geometry(facts)
    gamma = float(margins.min()) if margins.shape[0] else 1.0
    K = _precision(facts, _unit_comparator(facts) / gamma)
    value = cw_bound(K, _radius(facts), float(facts.learner.phi_))
    return BoundValue(value, {"gamma": gamma, "precision": K, "radius": _radius(facts)})


def _scw1_value(facts: RunFacts) -> BoundValue:
    learner = facts.learner
    margins, _ = augmented_geometry(facts)
    radius, phi, C = _radius(facts), float(learner.phi_), float(learner.C)
    base = _precision(facts, _unit_comparator(facts))
    if margins.shape[0] == 0 or margins.min() > 0.0:
        gamma = float(margins.min()) if margins.shape[0] else 1.0
        K = base / gamma**2
        details = {"gamma": gamma, "precision": K, "radius": radius}
        return BoundValue(scw1_bound(K, radius, phi, C, 0.0), details)
    counts = np.asarray(facts.presentations, dtype=np.float64)
    best = (math.inf, 0.0, 0.0)
    for s in np.geomspace(1e-3, 1e4, GRID) / radius:
        hinge = float(counts @ np.maximum(1.0 - s * margins, 0.0))
        value = scw1_bound(s * s * base, radius, phi, C, hinge)
        if value < best[0]:
            best = (value, float(s), hinge)
    return BoundValue(
        best[0], {"scale": best[1], "hinge": best[2], "precision": best[1] ** 2 * base}
    )


def _scw2_value(facts: RunFacts) -> BoundValue:
    learner = facts.learner
    margins, _ = augmented_geometry(facts)
    radius, phi, C = _radius(facts), float(learner.phi_), float(learner.C)
    v_min = _least_variance(facts)
    base = _precision(facts, _unit_comparator(facts))
    if margins.shape[0] == 0 or margins.min() > 0.0:
        gamma = float(margins.min()) if margins.shape[0] else 1.0
        details = {"gamma": gamma, "precision": base / gamma**2, "radius": radius, "v_min": v_min}
        return BoundValue(scw2_bound(base / gamma**2, radius, phi, C, v_min), details)
    counts = np.asarray(facts.presentations, dtype=np.float64)
    best = (math.inf, 0.0, 0.0)
    for s in np.geomspace(1e-3, 1e4, GRID) / radius:
        sq_hinge = float(counts @ np.maximum(1.0 - s * margins, 0.0) ** 2)
        value = scw2_bound(s * s * base, radius, phi, C, v_min, sq_hinge)
        if value < best[0]:
            best = (value, float(s), sq_hinge)
    details = {"scale": best[1], "sq_hinge": best[2], "precision": best[1] ** 2 * base}
    return BoundValue(best[0], {**details, "v_min": v_min})


def best_precision(facts: RunFacts) -> tuple[float, float] | str:
    """(min wᵀΣ⁻¹w s.t. y_t w·x'_t ≥ 1 on the presented vectors, its relative duality gap): the
    hard-margin SVM on the vectors L_Σᵀx' (Σ = L_Σ L_Σᵀ, the run's final covariance)."""
    X, y = _best.presented_vectors(facts, float(facts.learner.bias_feature_))
    try:
        factor = _root(facts.learner)
    except np.linalg.LinAlgError:
        return "the final covariance is not positive definite in floating point"
    rows = np.asarray(X @ factor) * y[:, None]
    scale = float(np.sqrt(np.max(np.sum(rows**2, axis=1)))) if rows.shape[0] else 0.0
    if scale == 0.0:
        return "no presented vector"
    solution = comparators.hard_margin(rows / scale)
    if solution is None:
        return "the vectors the learner sees are not linearly separable"
    return solution.value / scale**2, float(solution.gap)


def _best_value(facts: RunFacts, learner_check, formula) -> BoundValue | str:
    reason = learner_check(facts) or _best._missing(facts)
    if reason:
        return reason
    found = best_precision(facts)
    if isinstance(found, str):
        return found
    K, gap = found
    radius = _best_radius(facts)
    return BoundValue(formula(K, radius), {"precision": K, "radius": radius, "gap": gap})


def _cw_best(facts: RunFacts) -> BoundValue | str:
    phi = float(getattr(facts.learner, "phi_", 1.0))
    return _best_value(facts, _cw_learner, lambda K, radius: cw_bound(K, radius, phi))


def _scw1_best(facts: RunFacts) -> BoundValue | str:
    phi, C = float(getattr(facts.learner, "phi_", 1.0)), float(getattr(facts.learner, "C", 1.0))
    return _best_value(facts, _scw1_learner, lambda K, radius: scw1_bound(K, radius, phi, C, 0.0))


def _scw2_best(facts: RunFacts) -> BoundValue | str:
    """At min over every w of wᵀΣ⁻¹w + 4Cζ³Σ_t n_t(1 − y_t w·x'_t)₊² (n_t the presentations):
    with w = L_Σz, ‖z‖² + 2C''Σ n_t ℓ_t², C'' = 2Cζ³, PA-II's problem on the rows L_Σᵀx'."""
    reason = _scw2_learner(facts) or _best._missing(facts)
    if reason:
        return reason
    if facts.presentations is None:  # L₂ unknown: the separators alone (L₂ = 0)
        phi, C, v_min = float(facts.learner.phi_), float(facts.learner.C), _least_variance(facts)
        return _best_value(
            facts, _scw2_learner, lambda K, radius: scw2_bound(K, radius, phi, C, v_min)
        )
    learner = facts.learner
    phi, C = float(learner.phi_), float(learner.C)
    zeta = 1.0 + phi * phi
    X, y = _best.presented_vectors(facts, float(learner.bias_feature_))
    shown = _best.presented_rows(facts)
    counts = np.asarray(facts.presentations, dtype=np.float64)
    counts = counts if shown is None else counts[shown]
    try:
        factor = _root(learner)
    except np.linalg.LinAlgError:
        return "the final covariance is not positive definite in floating point"
    rows = np.asarray(X @ factor) * y[:, None]
    scale = float(np.sqrt(np.max(np.sum(rows**2, axis=1))))
    # on rows scaled to norm ≤ 1 the objective is scale² times the original one
    solution = comparators.hinge(rows / scale, counts, 2.0 * C * zeta**3 * scale**2, squared=True)
    objective = solution.value / scale**2
    radius, v_min = _best_radius(facts), _least_variance(facts)
    details = {"objective": objective, "radius": radius, "v_min": v_min, "gap": solution.gap}
    return BoundValue(scw2_bound(objective, radius, phi, C, v_min), details)


def _best_radius(facts: RunFacts) -> float:
    """R' of the presented vectors (x, c): the radius the best comparator's bound is at."""
    X, _ = _best.presented_vectors(facts, float(facts.learner.bias_feature_))
    squares = X.multiply(X).sum(axis=1) if sp.issparse(X) else np.sum(X * X, axis=1)
    return float(np.sqrt(np.max(np.asarray(squares))))


def _register(name: str, learner_check, separable_only: bool, value, best, source) -> None:
    """One of this module's bounds in the registry: a posteriori, over the presented sequence."""
    REGISTRY.append(
        BoundSpec(
            name,
            lambda facts: _applies(facts, learner_check, separable_only),
            value,
            best=best,
            family=A_POSTERIORI,
            sequence=True,
            source=Source(DERIVED, source),
        )
    )


_register("cw", _cw_learner, True, _cw_value, _cw_best,
          "proved in the module docstring for Dredze, Crammer & Pereira 2008 (ICML)'s variance "
          "rule, which no theorem read covers")  # fmt: skip
_register("scw1", _scw1_learner, False, _scw1_value, _scw1_best,
          "proved in the module docstring for SCW-I's uncapped step (Crammer, Dredze & Pereira "
          "2008, NIPS, exact CW's rule); neither paper's statement was read")  # fmt: skip
_register("scw2", _scw2_learner, False, _scw2_value, _scw2_best,
          "proved in the module docstring for SCW-II (Wang, Zhao & Hoi 2012, ICML), whose "
          "statement was not read")  # fmt: skip
