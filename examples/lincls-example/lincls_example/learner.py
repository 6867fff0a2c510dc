"""The normalized perceptron: on a mistake, w += lr·y·x/‖x‖."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from lincls.config import OnlineConfig
from lincls.errors import check_number
from lincls.learners import OnlineBinaryClassifier, initial_weights


class NormalizedPerceptron(OnlineBinaryClassifier):
    """The perceptron on x/‖x‖: on a mistake (y·(w·x + b) ≤ 0), w += lr·y·x/‖x‖.

    Homogeneous: b stays at ``intercept_init`` (0 by default). A zero row is a mistake that
    changes nothing (it has no direction). From w = 0 the mistakes do not depend on ``lr``.
    """

    def __init__(
        self,
        lr: float = 1.0,
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
    ):
        self.lr = lr
        self.max_passes = max_passes
        self.stop_when_converged = stop_when_converged
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> None:
        super()._check_params()
        check_number("lr", self.lr, low=0, low_open=True)

    def _init_weights(self, X, coef_init, intercept_init) -> None:
        self.coef_, self.intercept_ = initial_weights(X, coef_init, intercept_init)
        self.zero_init_ = not (self.coef_.any() or self.intercept_.any())

    def _run_pass(self, X, y, order):
        """One pass over ``X[order]``: (mistakes, updates, their rows, their steps)."""
        rows = X.toarray() if sp.issparse(X) else X
        w, b = self.coef_[0], self.intercept_[0]
        mistakes, steps, updates = [], [], 0
        for step, i in enumerate(order):
            x = rows[i]
            if y[i] * (w @ x + b) <= 0.0:  # the wrong sign, or no sign at all
                mistakes.append(i)
                steps.append(step)
                norm = np.linalg.norm(x)
                if norm > 0.0:
                    w += self.lr * y[i] * x / norm
                    updates += 1
        as_int = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
        return len(mistakes), updates, as_int(mistakes), as_int(steps)


@dataclass
class NormalizedPerceptronConfig(OnlineConfig):
    """The options of ``learner=normalized_perceptron``."""

    name: str = "normalized_perceptron"
    lr: float = 1.0
