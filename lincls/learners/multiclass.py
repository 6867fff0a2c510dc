"""The multiclass perceptron (Kesler's construction; seed 001 §9.4.1, seed 003).

One weight row per class; the prediction is the class of the highest score w_c·x + b_c (the lowest
class index on ties). On a mistake (predicted ŷ ≠ y) the true row gains lr·x and the predicted row
loses it; the other rows stay. With two classes this is still the Kesler rule (both rows move), not
the binary perceptron: a tie predicts ``classes_[0]`` instead of counting as a mistake.

The bias is a constant feature 1 per row (``bias="feature"``: b_y += lr, b_ŷ −= lr) or absent.

The pass is the Kesler pass of ``_multiclass_base`` with τ = lr; MIRA runs the same pass with its
own step.
"""

from __future__ import annotations

from lincls.errors import check_number
from lincls.learners._multiclass_base import (
    OnlineMulticlassClassifier,
    kesler_pass_csr,
    kesler_pass_dense,
)

# The multiclass perceptron's pass kernels: the Kesler pass with τ = lr (``capped`` False).
multiclass_perceptron_pass_dense = kesler_pass_dense
multiclass_perceptron_pass_csr = kesler_pass_csr


class MulticlassPerceptron(OnlineMulticlassClassifier):
    """The multiclass perceptron: on a mistake, w_y += lr·x and w_ŷ −= lr·x.

    Parameters
    ----------
    lr : float > 0
        The step. From w = 0 it only scales the weights: the mistakes do not depend on it.
    bias : {"feature", "none"}
        A constant feature 1 per class row, or no bias.
    max_passes : int ≥ 1
    stop_when_converged : bool
        Stop after the first pass without a mistake.
    shuffle : bool
    random_state : int, RandomState or None

    Attributes
    ----------
    coef_ : ndarray (n_classes, n_features), float64
    intercept_ : ndarray (n_classes,), float64
    classes_ : the sorted labels; row c of ``coef_`` belongs to ``classes_[c]``
    radius_ : the largest norm of the first training data
    bias_feature_ : 1 for ``bias="feature"``, else 0
    zero_init_ : whether the run started from W = 0, b = 0 (the bounds assume it)
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "multiclass_perceptron"

    def __init__(
        self,
        lr: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.lr = lr
        self.bias = bias
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("lr", self.lr, low=0, low_open=True)

    def _kesler_step(self) -> tuple[float, bool]:
        """The step lr, taken as it is."""
        return float(self.lr), False
