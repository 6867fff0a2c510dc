"""Mistakes / bound on the orthogonal game, in closed form: derived here, each checked against the
ratio runs log (``tests/test_game_ratios.py``).

The game (``lincls.games.orthogonal``), played against a learner without a bias feature: N rounds
(N = ⌊(R/γ)²⌋), round k presents x_k = R·σ_k·e_{j_k} on a coordinate j_k no earlier round used, and
every round is a mistake. A learner whose weights move only along the examples it has seen has
w·x_k = 0 on a fresh coordinate (margin m_k = 0), and a second-order learner's covariance, a sum of
rank-one terms x_s x_sᵀ on earlier coordinates, is still the identity there (x_kᵀΣ_k x_k = R²).
So every round takes the same step, and the round's numbers are those of a single step at
m = 0, V = R². The best separator (y_k w·x_k ≥ 1 on every round, least ‖w‖ in the bound's norm)
puts w_j = y_kσ_k/R on each used coordinate and 0 elsewhere: coordinates do not interact.

**SCW-I** (``scw1``; no step capped at C, i.e. C ≥ φ/(R√(1 + φ²))). Its step at m = 0 meets
m'' = φ√V' (``lincls.bounds.confidence_weighted``): α = φ/√(ζV), ζ = 1 + φ², so αV = φ√V/√ζ and
V' = V/ζ; with V' = V/(1 + kV), 1 + kR² = ζ. The bound at a separator, R'²K/√ζ, has
K = wᵀΣ_{T+1}⁻¹w = N(1 + kR²)/R² = Nζ/R², so it is N√ζ and the ratio is **1/√(1 + φ²)**: below 1 at
every η ∈ (½, 1), → 1 as η → ½ (φ → 0). Attained in the limit. A later pass takes no step (the
constraint holds with equality), so the ratio is the same over any number of passes; the bound,
N√ζ > N, is vacuous on one pass and not on two or more.

**CW** (``cw``). At m = 0 Dredze, Crammer & Pereira's root is α = 2φ/(1 + s), s = √(1 + 8x),
x = φ²R², and k = 2αφ, so kR² = 4x/(1 + s) = (s − 1)/2 and K = N(1 + s)/(2R²). The bound
K·R²(1 + 2x)(1 + s)/2 is N(1 + s)²(1 + 2x)/4 and the ratio **4/((1 + s)²(1 + 2x))**, → 1 as
φR → 0: attained in the limit (η → ½ at any R). Again no later step, and two passes or more.

**ALMA₂** (α ∈ (0, 1], B = 1/α, C = √2). The normalised rows are σ_k e_{j_k}, whose largest
margin is 1/√N (u = Σ y_kσ_k e_{j_k}/√N); the bound 2/γ²·(2/α − 1)² + 8/α − 4 is then
2N(2/α − 1)² + 8/α − 4 and the ratio **N/(2N(2/α − 1)² + 8/α − 4)**: at most N/(2N + 4) (α = 1),
below ½ for every N, → ½ as N → ∞. The game gives ½ in the limit, no more.

**The Forgetron** (linear kernel, R = 1, B ≥ max(N, 84)). With N ≤ B nothing is forgotten: after
the first pass f(x_k) = y_k, and no later round errs, so M = N. The bound 2‖g‖² + 4Σℓ*_t(g) is a
sum over coordinates, 2a_j² + 4P_j(1 − a_j)₊ with a_j = y_kσ_k g_j and P_j ≥ 1 the rounds of x_k
it counts, least at a_j = 1 (its slope there from the left, 4 − 4P_j, is ≤ 0): 2N at ‖g‖ = √N,
which the theorem allows when √N ≤ U = ¼√((B + 1)/ln(B + 1)). So the ratio is **½** wherever
(1/γ)² = N is an integer, N ≤ B and √N ≤ U, under either reading of which rounds the loss sums
over; where U < √N it is less. The game gives ½, no more.

**Projectron++** (linear kernel, R = 1, η > 0 small). Each x_k is orthogonal to every stored
vector, at distance 1 > η from their span, so it is stored, not projected; after the first pass
f(x_k) = y_k, and no later round is a mistake or a margin step (U = 0, B = 0). At the comparator
v = u/γ (‖v‖² = N, every loss 0; the logged scan includes it), lincls's bound for DOGMA's rule,
‖v‖²/(2 − 2√η‖v‖ − R'²), is N/(1 − 2√(ηN)), and Theorem 4's, ‖g‖²/a² with a = 1 − √η‖g‖ (its
η_p = √η), is N/(1 − √(ηN))². The ratios **1 − 2√(ηN)** and **(1 − √(ηN))²** tend to 1 as
η → 0: attained in the limit. (Where the scan finds a smaller value at another scale the logged
ratio is larger; for 3 passes and √(ηN) ≤ ¼ the value at u/γ is the least, its derivative in the
scale being negative below it and the losses 0 above.)
"""

from __future__ import annotations

import math
from statistics import NormalDist

from lincls.bounds.forgetron import forgetron_norm_cap


def phi_of(eta: float) -> float:
    """φ = Φ⁻¹(η), the confidence-weighted learners' margin factor."""
    return NormalDist().inv_cdf(eta)


def scw1_orthogonal(eta: float) -> float:
    """SCW-I's mistakes / bound on the orthogonal game without a bias, no step capped, two passes
    or more: 1/√(1 + φ²) (module docstring)."""
    phi = phi_of(eta)
    return 1.0 / math.sqrt(1.0 + phi * phi)


def cw_orthogonal(eta: float, radius: float) -> float:
    """CW's mistakes / bound on the orthogonal game of radius R without a bias, two passes or
    more: 4/((1 + √(1 + 8x))²(1 + 2x)), x = φ²R² (module docstring)."""
    x = phi_of(eta) ** 2 * radius * radius
    s = math.sqrt(1.0 + 8.0 * x)
    return 4.0 / ((1.0 + s) ** 2 * (1.0 + 2.0 * x))


def alma_orthogonal(alpha: float, rounds: int) -> float:
    """ALMA₂'s mistakes / bound on the orthogonal game of N rounds (B = 1/α, C = √2):
    N/(2N(2/α − 1)² + 8/α − 4) (module docstring)."""
    return rounds / (2.0 * rounds * (2.0 / alpha - 1.0) ** 2 + 8.0 / alpha - 4.0)


def forgetron_orthogonal(rounds: int, budget: int) -> float:
    """The Forgetron's mistakes / bound on the orthogonal game of radius 1 and N = (1/γ)² rounds,
    linear kernel, no bias: ½ when N ≤ B and √N ≤ U (module docstring); NaN outside that case."""
    cap = forgetron_norm_cap(budget)
    return 0.5 if rounds <= budget and math.sqrt(rounds) <= cap else float("nan")


def projectron_plus_orthogonal(eta: float, rounds: int, paper: bool = False) -> float:
    """Projectron++'s mistakes / bound on the orthogonal game of radius 1 and N rounds, linear
    kernel, no bias: 1 − 2√(ηN) for lincls's bound of DOGMA's rule, (1 − √(ηN))² for Theorem 4
    (``paper``) (module docstring)."""
    root = math.sqrt(eta * rounds)
    return (1.0 - root) ** 2 if paper else 1.0 - 2.0 * root
