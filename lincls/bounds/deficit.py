"""Bounds for any data, separable or not: Freund and Schapire's deficit bound (1999) and the
voted perceptron's test-error bound built on it.

Freund & Schapire, "Large margin classification using the perceptron algorithm", Machine Learning
37(3), 1999, Theorem 2: for any sequence with ‖x_t‖ ≤ R, any unit u and any γ > 0, with
d_t = max(0, γ − y_t u·x_t) and D = √(Σ_t d_t²), the perceptron from w = 0 makes at most
((R + D)/γ)² mistakes. Over several passes the sequence is the concatenation of the passes, so
D² sums d_t² over every presentation. A learner with a bias feature c sees x' = (x, c), so the
theorem is applied there: R'² = R² + c² and the margins of the unit (u, b/c)/√(1 + b²/c²).
The paper's statements were not read (the reference's papers page says what of it was read, and
where): both bounds are their forms as quoted, checked numerically only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lincls.bounds import _best
from lincls.bounds._registry import (
    NOT_COVERED,
    NOT_READ,
    REGISTRY,
    TEST_ERROR,
    BoundSpec,
    BoundValue,
    RunFacts,
    Source,
)
from lincls.geometry import augmented_scale

GRID_POINTS = 32
# The grid runs from R'·GRID_SPAN to R': past R' every example falls short of γ, and as γ grows
# the bound only tends to the trivial count of presentations.
GRID_SPAN = 1e-4
_UNIT_GRID = np.geomspace(GRID_SPAN, 1.0, GRID_POINTS)


def freund_schapire(radius: float, margin: float, deficit: float) -> float:
    """Freund & Schapire (1999), Theorem 2: M ≤ ((R + D)/γ)² for any unit u and γ > 0.

    ``deficit`` is D = √(Σ_t max(0, γ − y_t u·x_t)²) over every presentation of the sequence.
    With D = 0 (u separates with margin γ) it is Novikoff's (R/γ)².
    """
    return ((radius + deficit) / margin) ** 2


@njit(cache=True, nogil=True)
def deficits_on_grid(margins, counts, gammas):
    """D(γ)² for every γ of ``gammas``: Σ_t counts_t·max(0, γ − margins_t)² (one pass over t)."""
    out = np.zeros(gammas.shape[0])
    for t in range(margins.shape[0]):
        m = margins[t]
        k = counts[t]
        for g in range(gammas.shape[0]):
            short = gammas[g] - m
            if short > 0.0:
                out[g] += k * short * short
    return out


def freund_schapire_grid(
    radius: float, margins: np.ndarray, counts: np.ndarray, extra_gammas=()
) -> tuple[float, float, float]:
    """min over a geometric grid of γ in (0, R] of ((R + D(γ))/γ)²: (bound, γ, D).

    ``margins`` are y_t u·x_t for a unit u; ``counts`` the presentations of each example.
    ``extra_gammas`` (e.g. the separating margin, where D = 0) join the grid.
    """
    gammas = radius * _UNIT_GRID
    extra = [g for g in extra_gammas if 0.0 < g <= radius]
    if extra:
        gammas = np.concatenate((gammas, np.asarray(extra, dtype=np.float64)))
    deficits = np.sqrt(
        deficits_on_grid(
            np.ascontiguousarray(margins, dtype=np.float64),
            np.ascontiguousarray(counts, dtype=np.float64),
            gammas,
        )
    )
    values = ((radius + deficits) / gammas) ** 2
    best = int(np.argmin(values))
    return float(values[best]), float(gammas[best]), float(deficits[best])


def augmented_geometry(facts: RunFacts) -> tuple[np.ndarray, float] | str:
    """(margins of the augmented unit separator, R') on the vectors (x, c), or why not."""
    learner, cert = facts.learner, facts.certificate
    if cert is None or cert.margins is None:
        return "no certificate (comparator u) with per-example margins"
    scale = augmented_scale(cert.b, learner.bias_feature_)
    if scale is None:
        return "the comparator has an offset b ≠ 0 and the learner has no bias"
    radius = float(np.sqrt(facts.radius**2 + learner.bias_feature_**2))
    return cert.margins / scale, radius


def _fs_learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "perceptron":
        return "not a perceptron-family learner"
    if not getattr(learner, "zero_init_", True):
        return "the learner did not start from w = 0"
    if facts.presentations is None:
        return "the presentations of each example are unknown"
    return None


def _fs_applies(facts: RunFacts) -> str | None:
    reason = _fs_learner(facts)
    if reason:
        return reason
    geometry = augmented_geometry(facts)
    return geometry if isinstance(geometry, str) else None


def _fs_value(facts: RunFacts) -> BoundValue:
    margins, radius = augmented_geometry(facts)
    separating = [float(margins.min())] if margins.shape[0] else []
    value, gamma, deficit = freund_schapire_grid(radius, margins, facts.presentations, separating)
    return BoundValue(value, {"gamma": gamma, "deficit": deficit})


def best_freund_schapire(facts: RunFacts) -> BoundValue | str:
    """Freund & Schapire (1999), Theorem 2, at its best (u, γ): the square of
    min_v R'‖v‖ + ‖(1 − y_t v·x'_t)₊‖₂ (v = u/γ, every presentation a term), a convex program
    (``lincls.geometry.comparators.deficit``). Its value is re-measured at the solver's v, so it is
    the theorem's ((R' + D)/γ)² at u = v/‖v‖, γ = 1/‖v‖ exactly. At v = 0 (γ → ∞) it is the count
    of presentations, a limit of the theorem's values.
    """
    reason = _fs_learner(facts)
    if reason:
        return reason
    found = _best.deficit(facts)
    if isinstance(found, str):
        return found
    solution = found.solution
    details = {"radius": found.radius, "gap": found.gap}
    norm = float(np.sqrt(solution.v @ solution.v))
    if norm > 0.0:
        gamma = found.radius / norm
        details["gamma"] = details["margin"] = gamma
        details["deficit"] = solution.value * gamma - found.radius
    return BoundValue(solution.value**2, details)


def voted_test_error(n_train: int, fs_value: float, prediction: str = "vote") -> float:
    """Freund & Schapire (1999), Theorem 3 / Corollary 1: the voted perceptron after one pass.

    Trained on m examples of an i.i.d. sequence of m + 1, the voted ("vote") prediction on the
    last one errs with probability ≤ (2/(m + 1))·E[((R + D)/γ)²]; the randomized ("random")
    prediction with probability ≤ (1/(m + 1))·E[((R + D)/γ)²]. Computed here with the training
    sample's ((R + D)/γ)² in place of its expectation: a plug-in estimate of the bound.
    """
    factor = 2.0 if prediction == "vote" else 1.0
    return factor * fs_value / (n_train + 1)


def _voted_check(facts: RunFacts, freund_schapire_check) -> str | None:
    """Why the voted bound does not apply, with ``freund_schapire_check`` for the FS part."""
    learner = facts.learner
    if getattr(learner, "prediction", None) not in ("vote", "random"):
        return "not a voted perceptron predicting by vote or random draw"
    reason = freund_schapire_check(facts)
    if reason:
        return reason
    if learner.n_passes_ != 1 or facts.presentations.max() > 1:
        return "the theorem covers one pass over the training data"
    if facts.n_train is None:
        return "the training size is unknown"
    return None


def _voted_applies_learner(facts: RunFacts) -> str | None:
    return _voted_check(facts, _fs_learner)


def _voted_applies(facts: RunFacts) -> str | None:
    return _voted_check(facts, _fs_applies)


def _voted_value(facts: RunFacts) -> BoundValue:
    fs = _fs_value(facts)
    value = voted_test_error(int(facts.n_train), fs.value, facts.learner.prediction)
    return BoundValue(value, fs.details)


def _voted_best(facts: RunFacts) -> BoundValue | str:
    reason = _voted_applies_learner(facts)
    if reason:
        return reason
    fs = best_freund_schapire(facts)
    if isinstance(fs, str):
        return fs
    value = voted_test_error(int(facts.n_train), fs.value, facts.learner.prediction)
    return BoundValue(value, fs.details)


REGISTRY.extend(
    [
        BoundSpec(
            "freund_schapire",
            _fs_applies,
            _fs_value,
            best=best_freund_schapire,
            sequence=True,
            source=Source(
                NOT_READ,
                "the form of Freund & Schapire 1999 (Machine Learning 37) Thm 2, not proved in "
                "lincls; not read (its public copies at hand"
                " show only the abstract and opening: reference, papers)",
            ),
        ),
        BoundSpec(
            "voted_fs99",
            _voted_applies,
            _voted_value,
            kind=TEST_ERROR,
            best=_voted_best,
            source=Source(
                NOT_COVERED,
                "Freund & Schapire 1999 Thm 3 bounds an expectation over samples; lincls logs a "
                "plug-in estimate from one sample (the statement was not read: reference, papers)",
            ),
        ),
    ]
)
