"""Balanced Winnow: multiplicative updates of two positive weight vectors.

BalancedWinnow keeps two positive vectors w⁺, w⁻ (all 1 at the start) and predicts positive
iff (w⁺ − w⁻)·x ≥ θ (θ = 0 by default): on a mistake on label y = ±1, w⁺_j ← w⁺_j·α^{y·x_j} and
w⁻_j ← w⁻_j·α^{−y·x_j} for the active features. The pair represents weights of either sign, so
it takes features of either sign as well. The rest, shared with ``Winnow``, is in
``_winnow_base``: updates = mistakes, ``coef_`` = w⁺ − w⁻, ``intercept_`` = −θ, a tie predicts
positive.
"""

from __future__ import annotations

import numpy as np

from lincls.errors import check_number
from lincls.learners._winnow_base import WinnowBase, positive_weights


class BalancedWinnow(WinnowBase):
    """Balanced Winnow: w⁺, w⁻ > 0, positive iff (w⁺ − w⁻)·x ≥ θ; multiplicative updates.

    Parameters
    ----------
    alpha : float > 1
    threshold : float ≥ 0, default 0
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s

    ``fit(X, y, coef_init=...)`` takes 2·n_features starting weights > 0, w⁺ then w⁻ (default
    all 1); no ``intercept_init`` (the threshold is the parameter ``threshold``).

    Attributes
    ----------
    weights_positive_, weights_negative_ : ndarray (n_features,), w⁺ and w⁻
    coef_ : ndarray (1, n_features), w⁺ − w⁻
    intercept_ : ndarray (1,), −θ
    threshold_, standard_init_, boolean_input_ : as ``Winnow``'s
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "balanced_winnow"

    def __init__(
        self,
        alpha: float = 2.0,
        threshold: float = 0.0,
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.alpha = alpha
        self.threshold = threshold
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("threshold", self.threshold, low=0)

    def _threshold_for(self, n_features: int) -> float:
        return float(self.threshold)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self._start(X, intercept_init)
        n_features = X.shape[1]
        if coef_init is None:
            self.weights_positive_ = np.ones(n_features)
            self.weights_negative_ = np.ones(n_features)
        else:
            both = positive_weights(coef_init, 2 * n_features, "coef_init")
            self.weights_positive_ = both[:n_features].copy()
            self.weights_negative_ = both[n_features:].copy()
        self.standard_init_ = bool(
            np.all(self.weights_positive_ == 1.0) and np.all(self.weights_negative_ == 1.0)
        )
        self.coef_ = (self.weights_positive_ - self.weights_negative_)[np.newaxis, :]

    def _pass_weights(self) -> tuple[np.ndarray, np.ndarray, bool]:
        """w⁺ and w⁻ (no elimination)."""
        return self.weights_positive_, self.weights_negative_, False

    def _run_pass(self, X, y, order):
        record = super()._run_pass(X, y, order)
        self.coef_ = (self.weights_positive_ - self.weights_negative_)[np.newaxis, :]
        return record


__all__ = ["BalancedWinnow"]
