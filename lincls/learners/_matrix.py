"""What the learners that keep a matrix over the features share: SOP, AROW, CW/SCW.

Each keeps a (d + 1)² matrix (d without a bias) or its diagonal, and a weight vector; this base
checks the two options that shape them (``diagonal``, ``bias``), makes the starting weights and
refuses a full matrix too large to hold, and hands a pass its rows as dense or sorted CSR arrays.
The update rules stay in each learner's own kernels.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lincls.errors import LinclsInputError, check_choice
from lincls.learners._base import OnlineBinaryClassifier, initial_weights
from lincls.learners._kernel_tools import unsigned_indices
from lincls.learners.romma import sorted_csr

MAX_FULL_FEATURES = 10_000  # a full matrix of 10,001² float64 is 800 MB
MATRIX_BIAS_MODES = ("feature", "none")


class MatrixClassifier(OnlineBinaryClassifier):
    """An online binary learner with a matrix over the features, full or ``diagonal``."""

    def _check_matrix_options(self) -> None:
        """Check ``diagonal`` and ``bias`` (one line naming the option)."""
        if not isinstance(self.diagonal, bool | np.bool_):
            raise LinclsInputError("diagonal", f"must be true or false, got {self.diagonal!r}")
        check_choice("bias", self.bias, MATRIX_BIAS_MODES)

    def _init_linear(self, X, coef_init, intercept_init) -> int:
        """Set ``coef_``, ``intercept_``, ``zero_init_`` and ``bias_feature_``; return the
        matrix's side, after refusing a full matrix of more than ``MAX_FULL_FEATURES``."""
        coef, intercept = initial_weights(X, coef_init, intercept_init)
        if self.bias == "none" and intercept.any():
            raise LinclsInputError("intercept_init", "must be 0 with bias='none'")
        self.coef_ = coef.astype(np.float64)
        self.intercept_ = intercept
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())
        self.bias_feature_ = 1.0 if self.bias == "feature" else 0.0
        side = X.shape[1] + (self.bias == "feature")
        if not self.diagonal and X.shape[1] > MAX_FULL_FEATURES:
            raise LinclsInputError(
                "diagonal",
                f"must be true above {MAX_FULL_FEATURES} features (the full matrix of "
                f"{X.shape[1]} would need {side * side * 8 / 1e9:.1f} GB), got false",
            )
        return side


def pass_layout(X) -> tuple[object, tuple | None]:
    """(X, None) for dense rows; (sorted CSR X, its (data, indices, indptr) as the kernels take
    them) for sparse ones."""
    if not sp.issparse(X):
        return X, None
    X = sorted_csr(X)
    return X, (X.data, unsigned_indices(X.indices), unsigned_indices(X.indptr))
