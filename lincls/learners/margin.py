"""The margin perceptron: update when y·(w·x + b) ≤ τ, not only on a mistake (τ = 0: perceptron).

A correct example closer than τ to the boundary (in activation units) still moves the weights,
so the final hyperplane keeps a functional margin; mistakes (y·(w·x + b) ≤ 0) and updates are
counted separately. The update and bias rules are ``Perceptron``'s, and so is the kernel (it takes
the threshold). From w = 0 the number of updates obeys (R'² + 2τ/η)/γ'² on the augmented vectors
(``lincls.bounds.margin``).
"""

from __future__ import annotations

from lincls.errors import check_number
from lincls.learners.perceptron import Perceptron, run_linear_pass


class MarginPerceptron(Perceptron):
    """The perceptron with a margin threshold τ ≥ 0: update when y·(w·x + b) ≤ τ.

    Parameters
    ----------
    tau : float ≥ 0
        The threshold on y·(w·x + b); 0 gives the perceptron. It is in activation units, so it
        interacts with ``lr``: from w = 0 the run with (τ, η) is the run with (τ/η, 1) scaled.
    lr, bias, max_passes, stop_when_converged, shuffle, random_state, intercept_decay :
        as ``Perceptron``'s (``stop_when_converged`` stops after a pass without an *update*).

    Attributes are ``Perceptron``'s; ``updates_`` ≥ ``mistakes_``.
    """

    bound_family = "margin_perceptron"

    def __init__(
        self,
        tau: float = 1.0,
        lr: float = 1.0,
        bias: str = "feature",
        max_passes: int = 10,
        stop_when_converged: bool = True,
        shuffle: bool = False,
        random_state=None,
        intercept_decay: float = 1.0,
    ):
        self.tau = tau
        super().__init__(
            lr=lr,
            bias=bias,
            max_passes=max_passes,
            stop_when_converged=stop_when_converged,
            shuffle=shuffle,
            random_state=random_state,
            intercept_decay=intercept_decay,
        )

    def _check_params(self) -> None:
        super()._check_params()
        check_number("tau", self.tau, low=0)

    def _run_pass(self, X, y, order):
        return run_linear_pass(
            X,
            y,
            order,
            self.coef_[0],
            self.intercept_,
            float(self.lr),
            self._intercept_step,
            float(self.tau),
            self._mistake_buffers(order.shape[0]),
        )
