"""MIRA as seed 003 states it (after Crammer & Singer 2003): the multiclass perceptron step scaled.

On a mistake (predicted ŷ ≠ y, ties to the lowest class index) the predicted row loses τ·x and the
true row gains it, with

    τ = min(((w_ŷ − w_y)·x + 1) / (2 x·x), M),

x the vector the learner sees ((x, 1) with ``bias="feature"``, so x·x includes the 1 and w·x the
bias). Nothing changes on a correct prediction. Seed 003's prose gives this τ; its pseudocode
writes the numerator as (w_y − w_ŷ)·x + 1, which is ≤ 1 on a mistake and can be negative (a step
the wrong way); we follow the prose, which makes the scores differ by exactly 1 after an uncapped
step: (w_y − w_ŷ)·x goes up by 2τ x·x. The pseudocode has no cap; M = ∞ is its rule.

Mistakes and updates are counted separately: a mistake on x = 0 (possible only with
``bias="none"``) has no defined τ and moves nothing, so it is a mistake without an update.

This step is the passive-aggressive PA-I step (Crammer et al. 2006) with C = M on Kesler's
difference vector z = Φ(x, y) − Φ(x, ŷ), ‖z‖² = 2 x·x, taken only on mistakes. The rest of the
rule is the multiclass perceptron's: both run the Kesler pass of ``_multiclass_base``, MIRA with
τ as the step.
"""

from __future__ import annotations

from numba import njit

from lincls.errors import check_number
from lincls.learners._multiclass_base import OnlineMulticlassClassifier, kesler_pass_dense


@njit(cache=True, nogil=True)
def mira_pass_dense(
    X, y, order, W, intercept, max_step, norm_extra, scores, mistake_rows, mistake_steps
):
    """One pass of MIRA over dense ``X[order]``, updating ``W`` in place: the Kesler pass with τ.

    ``y`` holds class indices; ``norm_extra`` is the squared bias feature (1, or 0 without a
    bias), added to x·x and scaling the bias step. Returns (mistakes, updates). ``MIRA`` itself
    runs the same pass through its base; this is the pass on its own, for a caller with arrays.
    """
    return kesler_pass_dense(
        X, y, order, W, intercept, max_step, norm_extra, scores, mistake_rows, mistake_steps, True
    )


class MIRA(OnlineMulticlassClassifier):
    """MIRA: on a mistake, w_y += τ·x and w_ŷ −= τ·x, τ = min(((w_ŷ − w_y)·x + 1)/(2x·x), M).

    Parameters
    ----------
    max_step : float > 0
        M, the cap on τ (``inf`` for seed 003's uncapped pseudocode).
    bias : {"feature", "none"}
        A constant feature 1 per class row (in x·x and the scores), or no bias.
    max_passes : int ≥ 1
    stop_when_converged : bool
        Stop after the first pass without an update.
    shuffle : bool
    random_state : int, RandomState or None

    Attributes are ``MulticlassPerceptron``'s: ``coef_`` (n_classes, n_features) and
    ``intercept_`` (n_classes,), float64, ``classes_``, ``radius_``, ``bias_feature_``,
    ``zero_init_`` and the online record (``lincls.learners._base``).
    """

    bound_family = "mira"

    def __init__(
        self,
        max_step: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.max_step = max_step
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        if self.max_step != float("inf"):
            check_number("max_step", self.max_step, low=0, low_open=True)

    def _kesler_step(self) -> tuple[float, bool]:
        """τ capped at M = ``max_step``."""
        return float(self.max_step), True
