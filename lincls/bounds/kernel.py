"""The kernel perceptron's mistake bound: Novikoff's theorem in feature space.

The kernel perceptron with kernel K and bias feature c is the perceptron, from w = 0, on the
vectors φ'(x) = (φ(x), c) with ⟨φ(x), φ(z)⟩ = K(x, z). Novikoff (1962) there: if
‖φ'(x_t)‖² ≤ R² and a comparator U has y_t⟨U, φ'(x_t)⟩ ≥ γ for every t, then M ≤ R²‖U‖²/γ².
Here R² = max K(x, x) + c², and U is the data's certificate (u, b) (‖u‖ = 1, margin γ) lifted
into feature space, where a lift exists:

- linear kernel, φ(x) = x: U = (u, b/c), ‖U‖² = 1 + b²/c² (b must be 0 when c = 0);
- polynomial kernel (1 + x·z)^p = Σ_k C(p, k)(x·z)^k, so φ(x) = (1, √p·x, √C(p,2)·x⊗x, ...)
  holds the constant 1 and the linear features scaled by √p. The offset can be split between that
  constant and the bias feature: U = (b₁, u/√p, 0, ..., b₂) with b₁ + c·b₂ = b; the smallest
  norm takes b₁ = b/(1 + c²), b₂ = cb/(1 + c²), so ‖U‖² = 1/p + b²/(1 + c²). Then
  ⟨U, φ'(x)⟩ = u·x + b exactly: the functional margin is the certificate's γ.
- RBF kernel: a linear separator does not lift (its feature space holds no non-zero linear
  function), so no certificate gives a comparator there.

The best comparator of any kernel (RBF included) is found in feature space from the kernel
matrix (``best_kernel_novikoff``): min ‖U‖ s.t. y_t⟨U, φ'(x_t)⟩ ≥ 1 over U = Σ β_t φ'(x_t), a
hard-margin SVM in dual form, solved on a working set of rows whose kernel columns alone are
computed; the bound is then R²‖U*‖², never above a lifted certificate's.
"""

from __future__ import annotations

from lincls.bounds import _best
from lincls.bounds._registry import DERIVED, REGISTRY, BoundSpec, BoundValue, RunFacts, Source


def kernel_novikoff(radius_sq: float, margin: float, comparator_norm_sq: float) -> float:
    """Novikoff (1962) in a kernel's feature space: M ≤ R²‖U‖²/γ².

    For the kernel perceptron from f = 0 (Aizerman, Braverman & Rozonoer 1964), any order and
    any number of passes: R² ≥ K(x_t, x_t) + c² for every presented x_t, and U a comparator in
    the feature space (bias feature included) with y_t⟨U, φ'(x_t)⟩ ≥ γ > 0 for every t.
    """
    return radius_sq * comparator_norm_sq / margin**2


def lifted_norm_sq(kernel: str, degree: int, offset: float, bias_sq: float) -> float | None:
    """‖U‖² of the certificate (unit u, offset b) lifted to the feature space (module
    docstring); None when there is no lift (RBF, or an offset without any constant feature)."""
    if kernel == "linear":
        if bias_sq == 0.0:
            return 1.0 if offset == 0.0 else None
        return 1.0 + offset**2 / bias_sq
    if kernel == "poly":
        return 1.0 / degree + offset**2 / (1.0 + bias_sq)
    return None


def feature_radius_sq(kernel: str, degree: int, radius: float, bias_sq: float) -> float:
    """max K(x, x) + c² over data of largest norm R (K(x, x) grows with ‖x‖, or is 1 for RBF)."""
    if kernel == "linear":
        diagonal = radius**2
    elif kernel == "poly":
        diagonal = (1.0 + radius**2) ** degree
    else:
        diagonal = 1.0
    return diagonal + bias_sq


def _kernel_learner(facts: RunFacts) -> str | None:
    learner = facts.learner
    if getattr(learner, "bound_family", None) != "kernel_perceptron":
        return "not a kernel perceptron"
    if not learner.zero_init_:
        return "the learner did not start from f = 0"
    return None


def best_kernel_novikoff(facts: RunFacts) -> BoundValue | str:
    """Novikoff (1962) in feature space at the best comparator: R²‖U*‖² with U* the
    minimum-norm U meeting y_t⟨U, φ'(x_t)⟩ ≥ 1 (``lincls.geometry.comparators.kernel_hard_margin``),
    its margins and norm re-measured through the kernel matrix."""
    reason = _kernel_learner(facts)
    if reason:
        return reason
    found = _best.kernel_separator(facts)
    if isinstance(found, str):
        return found
    return BoundValue(found.solution.value, _best.details(found))


def _applies(facts: RunFacts) -> str | None:
    reason = _kernel_learner(facts)
    if reason:
        return reason
    learner = facts.learner
    if learner.kernel == "rbf":
        return "no certificate in the RBF feature space (a linear separator does not lift to it)"
    if facts.certificate is None:
        return "no certificate (separator) for the data"
    if not facts.certificate.separates:
        return "the certificate does not separate the data"
    bias_sq = learner.bias_feature_**2
    if lifted_norm_sq(learner.kernel, learner.degree, facts.certificate.b, bias_sq) is None:
        return "the separator has an offset b ≠ 0 and the learner has no bias"
    return None


def _value(facts: RunFacts) -> float:
    learner = facts.learner
    bias_sq = learner.bias_feature_**2
    degree = int(learner.degree)
    return kernel_novikoff(
        feature_radius_sq(learner.kernel, degree, facts.radius, bias_sq),
        facts.certificate.margin,
        lifted_norm_sq(learner.kernel, degree, facts.certificate.b, bias_sq),
    )


REGISTRY.append(
    BoundSpec(
        "kernel_novikoff",
        _applies,
        _value,
        best=best_kernel_novikoff,
        source=Source(
            DERIVED,
            "Novikoff (seed 000, Thm 1) in the kernel's feature space; the lift of a certificate "
            "is derived in the module docstring",
        ),
    )
)
