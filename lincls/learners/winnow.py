"""Winnow (Littlestone 1988): multiplicative updates of positive weights.

Winnow keeps one weight per feature, all 1 at the start, and predicts the positive class
(``classes_[1]``) iff w·x ≥ θ (θ = ``threshold``, the number of features by default). On a
mistake only the weights of the active features (x_j > 0) change:

- a false negative promotes them: w_j ← w_j·α^{x_j} (×α for a boolean feature);
- a false positive demotes them: ``"winnow2"`` w_j ← w_j / α^{x_j};
  ``"winnow1"`` eliminates them, w_j ← 0.

For boolean features this is Littlestone's algorithm exactly; α^{x_j} extends it to non-negative
real features. The features must be non-negative (a negative x_j would turn a promotion into a
demotion of that weight), so ``fit`` rejects negative values. ``BalancedWinnow``
(``balanced_winnow``) takes either sign. The rest, shared with it, is in ``_winnow_base``:
updates = mistakes, ``coef_`` = w, ``intercept_`` = −θ, a tie predicts positive.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lincls.errors import LinclsInputError, check_choice, check_number
from lincls.learners._winnow_base import (
    WinnowBase,
    multiplicative_pass_csr,
    multiplicative_pass_dense,
    positive_weights,
)

WINNOW_VARIANTS = ("winnow2", "winnow1")

# Winnow's pass kernels: the multiplicative pass without w⁻.
winnow_pass_dense = multiplicative_pass_dense
winnow_pass_csr = multiplicative_pass_csr


class Winnow(WinnowBase):
    """Winnow1 / Winnow2 (Littlestone 1988): positive iff w·x ≥ θ; multiplicative updates.

    Parameters
    ----------
    alpha : float > 1
        The promotion (and Winnow2's demotion) factor α.
    threshold : float > 0 or None
        θ; None means the number of features n (Littlestone's choice θ = n). The mistake bounds
        need θ ≥ 1/α (Littlestone 1988, Theorem 8; ``lincls.bounds.winnow``).
    variant : {"winnow2", "winnow1"}
        Demote by ÷α (Winnow2) or eliminate, w_j ← 0 (Winnow1), on a false positive.
    max_passes, stop_when_converged, shuffle, random_state : as ``Perceptron``'s

    ``fit(X, y, coef_init=...)`` takes starting weights > 0 (default all 1); there is no
    ``intercept_init``: the threshold is the parameter ``threshold``.

    Attributes
    ----------
    coef_ : ndarray (1, n_features), float64, the weights w
    intercept_ : ndarray (1,), −θ
    threshold_ : θ used
    standard_init_ : whether the weights started at 1 (Littlestone's bounds assume it)
    boolean_input_ : whether every training value was 0 or 1 (the bounds need it)
    mistakes_, updates_, ... : the online record (``lincls.learners._base``)
    """

    bound_family = "winnow"

    def __init__(
        self,
        alpha: float = 2.0,
        threshold: float | None = None,
        variant: str = "winnow2",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.alpha = alpha
        self.threshold = threshold
        self.variant = variant
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _check_params(self) -> None:
        super()._check_params()
        if self.threshold is not None:
            check_number("threshold", self.threshold, low=0, low_open=True)
        check_choice("variant", self.variant, WINNOW_VARIANTS)

    def _threshold_for(self, n_features: int) -> float:
        return float(n_features if self.threshold is None else self.threshold)

    def _validate_X_y(self, X, y, reset: bool):
        X, y = super()._validate_X_y(X, y, reset)
        values = X.data if sp.issparse(X) else X
        if values.size and values.min() < 0.0:
            flat = int(np.argmin(values))
            if sp.issparse(X):
                row = int(np.searchsorted(X.indptr, flat, side="right") - 1)
            else:
                row = flat // X.shape[1]
            raise LinclsInputError(
                "X",
                f"Negative values in data: Winnow needs features ≥ 0, row {row} holds "
                f"{values.min():g} (BalancedWinnow takes either sign)",
            )
        return X, y

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self._start(X, intercept_init)
        n_features = X.shape[1]
        if coef_init is None:
            self.coef_ = np.ones((1, n_features))
        else:
            self.coef_ = positive_weights(coef_init, n_features, "coef_init")[np.newaxis, :]
        self.standard_init_ = bool(np.all(self.coef_ == 1.0))

    def _pass_weights(self) -> tuple[np.ndarray, None, bool]:
        """w (a view of ``coef_``), no w⁻; Winnow1 eliminates on a demotion."""
        return self.coef_[0], None, self.variant == "winnow1"


__all__ = ["WINNOW_VARIANTS", "Winnow", "winnow_pass_csr", "winnow_pass_dense"]
