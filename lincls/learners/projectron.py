"""The Projectron and Projectron++ (Orabona, Keshet & Caputo 2009).

Orabona, Keshet & Caputo, "Bounded Kernel-Based Online Learning", JMLR 10 (2009), 2643–2666
(the Projectron first at ICML 2008). f(x) = Σ_{s∈S} α_s K'(x_s, x) over a support set S, K' the
kernel with its bias feature (``lincls.learners._budget``). On a mistake (y_t f(x_t) ≤ 0) the
perceptron's step y_t K'(x_t, ·) is replaced, when it lies close to the span of S, by its
projection P K'(x_t, ·) = Σ_s d_s K'(x_s, ·) onto that span, d = K_S⁻¹ k_t with
K_S = [K'(x_i, x_j)]_{i,j∈S} and k_t = [K'(x_s, x_t)]_{s∈S}:

- δ_t² = K'(x_t, x_t) − k_tᵀ d, the squared distance of K'(x_t, ·) from the span (0 where a
  rounding error makes it negative);
- δ_t² ≤ max(η, ϵ·K'(x_t, x_t)), ϵ = ``SPAN_TOLERANCE`` = 10⁻⁶: α += y_t d (S unchanged);
- otherwise x_t joins S with α = y_t, and K_S⁻¹ grows by the block inverse
  [[K_S⁻¹ + d dᵀ/δ_t², −d/δ_t²], [−dᵀ/δ_t², 1/δ_t²]].

Projectron++ also acts on a margin error (0 < y_t f(x_t) < 1), with ℓ_t = 1 − y_t f(x_t) and
‖P k_t‖² = K'(x_t, x_t) − δ_t²: where ℓ_t − δ_t²/η > 0 (and ‖P k_t‖² > 0) it steps along the
projection only, α += β_t y_t d with β_t = min(ℓ_t/‖P k_t‖², 1, 2(ℓ_t − δ_t²/η)/‖P k_t‖²); S
never grows there. Here η is compared with the squared distance δ_t² (the paper writes its rules
in terms of δ_t; the two conventions differ by the square root of η). That margin step is the
rule of Orabona's DOGMA code (``margin_rule="dogma"``, the default), which the paper's Theorem 4
does not cover.

``margin_rule="paper"`` takes Theorem 4's margin step instead (Orabona, Keshet & Caputo 2009, as
recorded in the statement read: a margin step on 0 < y f(x) < 1 when ℓ_t ≥ ‖δ_t‖/η_p, with
0 < τ_t < min{2(ℓ_t − ‖δ_t‖/η_p)/‖P k_t‖², 1}), the paper's η_p being √η here (its mistake
steps project when ‖δ_t‖ ≤ η_p, i.e. δ_t² ≤ η). At ℓ_t = ‖δ_t‖/η_p that interval is empty, so a
step is taken where ℓ_t − δ_t/√η > 0 (and ‖P k_t‖² > 0), of τ_t = min{(ℓ_t − δ_t/√η)/‖P k_t‖²,
½}: the midpoint of the interval's first bound (the τ that makes the step's term of the theorem's
B = Σ τ_t(2ℓ_t − τ_t‖P k_t‖² − 2‖δ_t‖/η_p) largest), capped at ½ to stay strictly below 1. The
statement read does not give the algorithm's own τ; any τ in the interval is covered. The run
records B (``margin_gain_``) for the theorem's bound (``lincls.bounds.projectron``).

The paper compares δ_t² with η alone. But δ_t² is computed as a difference, K'(x_t, x_t) − k_tᵀd,
with an error of about ε·K'(x_t, x_t)·cond(K_S): with η fixed and the data scaled up, a vector
in the span was added on that residue (7 support vectors of ℝ³ at ‖x‖ ≈ 10⁹, 15 of the
10-dimensional space of the degree-2 polynomial kernel at ‖x‖ ≈ 10³), K_S turned singular and
its computed inverse meaningless. A vector within ϵ·K'(x_t, x_t) of the span is in it up to
that rounding, and projected: then every vector added lies at squared distance
> ϵ·K'(x_t, x_t) from the span of the others, cond(K_S) stays near |S|/ϵ, and the computed δ_t²
errs far below ϵ·K'(x_t, x_t) (10⁻⁹ still let the polynomial kernel's S grow past its
dimension). The rule is the paper's wherever η ≥ ϵ·K'(x, x) (for the linear kernel:
‖x'‖² ≤ 10⁶η on every row). At η = 0 it is this tolerance alone.

Every vector added lies at distance > √max(η, ϵK'(x_t, x_t)) > 0 from the span of the others,
so S is linearly independent in feature space: |S| ≤ d (+1 with a bias) for the linear kernel,
≤ C(d + p, p) for the polynomial one; for RBF the paper bounds |S| through η. There is no fixed
B: the storage doubles as S grows. Each example presented costs O(|S|·d + |S|²).

Mistake bounds: ``lincls.bounds.projectron``: ``projectron`` (a priori) and ``projectron_plus``
(a posteriori, DOGMA's rule), derived there by the paper's argument for these rules, for the
linear kernel, with η in them replaced by max(η, ϵR'²), the most a projected mistake's δ_t² can
be; and ``projectron_plus_paper``, Theorem 4 as published, for ``margin_rule="paper"`` only.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._budget import (
    BudgetKernelClassifier,
    csr_arrays,
    csr_support_row,
    dense_support_row,
    self_kernel,
    store_csr,
    store_dense,
)

START_CAPACITY = 16  # support rows allocated at first; doubled whenever S outgrows them
# ϵ: a mistake's x_t within squared distance ϵ·K'(x_t, x_t) of the span of S is projected
# whatever η is (module docstring: a smaller δ² is rounding)
SPAN_TOLERANCE = 1e-6
# τ's cap under Theorem 4's rule, which needs τ < 1 strictly (module docstring)
PAPER_STEP_CAP = 0.5
MARGIN_RULES = ("dogma", "paper")


@njit(cache=True, nogil=True)
def _project(row, kinv, size, dvec):
    """d = K_S⁻¹ k_t into ``dvec``; returns k_tᵀ d."""
    kd = 0.0
    for i in range(size):
        acc = 0.0
        for j in range(size):
            acc += kinv[i, j] * row[j]
        dvec[i] = acc
        kd += row[i] * acc
    return kd


@njit(cache=True, nogil=True)
def _grow_inverse(kinv, dvec, size, delta2):
    """K_S⁻¹ of S ∪ {x_t} in place (the block inverse of the module docstring)."""
    for i in range(size):
        for j in range(size):
            kinv[i, j] += dvec[i] * dvec[j] / delta2
        kinv[i, size] = -dvec[i] / delta2
        kinv[size, i] = -dvec[i] / delta2
    kinv[size, size] = 1.0 / delta2


@njit(cache=True, nogil=True)
def _decide(label, f, kii, kd, eta, plus, paper):
    """(action, β): 0 nothing, 1 a projected mistake step, 2 add x_t, 3 a projected margin step
    of β (Projectron++, DOGMA's rule or, with ``paper``, Theorem 4's); ``kd`` = k_tᵀ d."""
    margin = label * f
    delta2 = kii - kd
    if delta2 < 0.0:
        delta2 = 0.0
    if margin <= 0.0:
        return (1, 1.0) if delta2 <= max(eta, SPAN_TOLERANCE * kii) else (2, 1.0)
    if not plus or margin >= 1.0:
        return 0, 0.0
    loss = 1.0 - margin
    projected = kii - delta2
    if paper:
        # ℓ − ‖δ‖/η_p with η_p = √η; at 0 Theorem 4 leaves no τ in (0, 0)
        room = loss - np.sqrt(delta2 / eta)
        if room <= 0.0 or projected <= 0.0:
            return 0, 0.0
        return 3, min(room / projected, PAPER_STEP_CAP)
    if loss - delta2 / eta <= 0.0 or projected <= 0.0:
        return 0, 0.0
    return 3, min(loss / projected, 1.0, 2.0 * (loss - delta2 / eta) / projected)


@njit(cache=True, nogil=True)
def _gain(label, f, kii, kd, eta, beta):
    """τ(2ℓ − τ‖P k‖² − 2‖δ‖/η_p) of a margin step of τ = β under Theorem 4's rule: its term
    of the theorem's B."""
    delta2 = max(kii - kd, 0.0)
    return beta * (2.0 * (1.0 - label * f) - beta * (kii - delta2) - 2.0 * np.sqrt(delta2 / eta))


@njit(cache=True, nogil=True)
def _apply(action, beta, label, coef, dvec, kinv, size, delta2):
    """The step of ``action`` on α (and K_S⁻¹ when x_t joins S: the caller stores x_t)."""
    if action == 1 or action == 3:
        for s in range(size[0]):
            coef[s] += beta * label * dvec[s]
    elif action == 2:
        _grow_inverse(kinv, dvec, size[0], delta2)
        coef[size[0]] = label
        size[0] += 1


@njit(cache=True, nogil=True)
def projectron_pass_dense(
    X, sq, y, order, sv, sv_sq, coef, size, kind, degree, gamma, bias_sq, kinv, eta, plus,
    paper, row, dvec, mistake_rows, mistake_steps, sizes, start, counts, gain,
):  # fmt: skip
    """Steps ``start``… of one (Projectron or ++) pass over dense ``X[order]``.

    ``counts`` = [mistakes, updates] so far; ``gain`` = [B], Theorem 4's sum over the margin
    steps of the paper's rule (``paper``), so far. Returns the step it stopped at:
    ``order.shape[0]`` when done, earlier when x_t must join a full store (nothing of that step
    done yet).
    """
    for k in range(start, order.shape[0]):
        t = order[k]
        m = size[0]
        dense_support_row(X, sq, t, sv, sv_sq, m, kind, degree, gamma, bias_sq, row)
        f = 0.0
        for s in range(m):
            f += coef[s] * row[s]
        kii = self_kernel(sq[t], kind, degree, gamma, bias_sq)
        kd = _project(row, kinv, m, dvec)
        action, beta = _decide(y[t], f, kii, kd, eta, plus, paper)
        if action == 2 and m == sv.shape[0]:
            return k
        if action == 1 or action == 2:
            mistake_rows[counts[0]] = t
            mistake_steps[counts[0]] = k
            counts[0] += 1
        if action == 3 and paper:
            gain[0] += _gain(y[t], f, kii, kd, eta, beta)
        if action != 0:
            counts[1] += 1
            _apply(action, beta, y[t], coef, dvec, kinv, size, max(kii - kd, 0.0))
        if action == 2:
            store_dense(X, sq, t, sv, sv_sq, m)
        sizes[k] = size[0]
    return order.shape[0]


@njit(cache=True, nogil=True)
def projectron_pass_csr(
    data, indices, indptr, sq, y, order, sv, sv_sq, coef, size, kind, degree, gamma, bias_sq,
    kinv, eta, plus, paper, row, dvec, mistake_rows, mistake_steps, sizes, start, counts, gain,
):  # fmt: skip
    """``projectron_pass_dense`` for CSR rows (sorted indices): the same numbers bit for bit."""
    for k in range(start, order.shape[0]):
        t = order[k]
        m = size[0]
        csr_support_row(data, indices, indptr, sq, t, sv, sv_sq, m, kind, degree, gamma,
                        bias_sq, row)  # fmt: skip
        f = 0.0
        for s in range(m):
            f += coef[s] * row[s]
        kii = self_kernel(sq[t], kind, degree, gamma, bias_sq)
        kd = _project(row, kinv, m, dvec)
        action, beta = _decide(y[t], f, kii, kd, eta, plus, paper)
        if action == 2 and m == sv.shape[0]:
            return k
        if action == 1 or action == 2:
            mistake_rows[counts[0]] = t
            mistake_steps[counts[0]] = k
            counts[0] += 1
        if action == 3 and paper:
            gain[0] += _gain(y[t], f, kii, kd, eta, beta)
        if action != 0:
            counts[1] += 1
            _apply(action, beta, y[t], coef, dvec, kinv, size, max(kii - kd, 0.0))
        if action == 2:
            store_csr(data, indices, indptr, sq, t, sv, sv_sq, m)
        sizes[k] = size[0]
    return order.shape[0]


class Projectron(BudgetKernelClassifier):
    """The Projectron (``plus=False``) or Projectron++ (``plus=True``).

    Parameters
    ----------
    eta : float ≥ 0
        η: a mistake's step is projected onto the span of S when its squared distance from it is
        at most max(η, ϵK'(x, x)) (0: only steps in the span up to rounding, module docstring);
        Projectron++ also weighs its margin steps with it, so there η > 0.
    plus : bool
        Projectron++: also a projected step on a margin error (0 < y f(x) < 1).
    margin_rule : "dogma" or "paper"
        Projectron++'s margin step: "dogma" where ℓ > δ²/η (Orabona's DOGMA code), "paper" where
        ℓ > δ/√η, Orabona, Keshet & Caputo's Theorem 4 (module docstring). No effect without plus.
    kernel, degree, gamma, bias : as ``KernelPerceptron``'s (the bias a feature of each vector)
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s

    Attributes
    ----------
    support_vectors_, dual_coef_, intercept_, n_support_, support_size_ : as
        ``BudgetPerceptron``'s (α real here)
    kernel_radius_, bias_feature_, zero_init_ : as ``KernelPerceptron``'s
    mistakes_, updates_, ... : the online record; updates count every mistake and every
        Projectron++ margin step taken
    margin_gain_ : float
        B = Σ τ(2ℓ − τ‖P k‖² − 2δ/√η) over the margin steps of ``margin_rule="paper"`` (0
        otherwise), Theorem 4's B
    """

    bound_family = "projectron"

    def __init__(
        self,
        eta: float = 0.1,
        plus: bool = False,
        margin_rule: str = "dogma",
        kernel: str = "linear",
        degree: int = 2,
        gamma: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.eta = eta
        self.plus = plus
        self.margin_rule = margin_rule
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        if not isinstance(self.plus, bool | np.bool_):
            raise LinclsInputError("plus", f"must be true or false, got {self.plus!r}")
        check_number("eta", self.eta, low=0, low_open=bool(self.plus))
        check_choice("margin_rule", self.margin_rule, MARGIN_RULES)

    def _reset_record(self) -> None:
        super()._reset_record()
        self.margin_gain_ = 0.0

    def _capacity(self, X) -> int:
        self._kinv = np.zeros((START_CAPACITY, START_CAPACITY))
        return START_CAPACITY

    def _grow(self) -> None:
        """Double the support storage (S needs one more row than it holds)."""
        old = self._sv.shape[0]
        new = 2 * old
        for name in ("_sv", "_sv_sq", "_coef"):
            array = getattr(self, name)
            grown = np.zeros((new, *array.shape[1:]))
            grown[:old] = array
            setattr(self, name, grown)
        kinv = np.zeros((new, new))
        kinv[:old, :old] = self._kinv
        self._kinv = kinv

    def _run_pass(self, X, y, order):
        sq = self._prepare_pass(X)
        n = order.shape[0]
        rows, steps = self._mistake_buffers(n)
        sizes = np.empty(n, dtype=np.int64)
        counts = np.zeros(2, dtype=np.int64)
        gain = np.zeros(1)
        options = (float(self.eta), bool(self.plus), self.margin_rule == "paper")
        start = 0
        while True:
            capacity = self._sv.shape[0]
            work = (np.empty(capacity), np.empty(capacity), rows, steps, sizes, start, counts,
                    gain)  # fmt: skip
            state = (self._sv, self._sv_sq, self._coef, self._size, *self._codes(),
                     self._bias_sq, self._kinv, *options)  # fmt: skip
            if sp.issparse(X):
                start = projectron_pass_csr(*csr_arrays(X), sq, y, order, *state, *work)
            else:
                start = projectron_pass_dense(X, sq, y, order, *state, *work)
            if start == n:
                break
            self._grow()
        self._size_parts.append(sizes)
        self.margin_gain_ += float(gain[0])
        mistakes = int(counts[0])
        return mistakes, int(counts[1]), rows[:mistakes], steps[:mistakes]


__all__ = [
    "MARGIN_RULES",
    "PAPER_STEP_CAP",
    "SPAN_TOLERANCE",
    "START_CAPACITY",
    "Projectron",
    "projectron_pass_csr",
    "projectron_pass_dense",
]
