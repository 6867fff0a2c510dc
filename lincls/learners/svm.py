"""A maximal-margin classifier to hold the kernel perceptrons against: scikit-learn's SVC.

SVC (libsvm) on the Gram matrix of the same kernel as ``KernelPerceptron``'s ((1 + x·z)^d for
``"poly"``), divided by its largest diagonal entry: the maximal-margin classifier does not change
when the kernel is scaled by a constant, while libsvm's stopping tolerance is absolute and would
stop early on kernel values of order 10^14. A large ``C`` makes the soft margin the hard one on
separable data; ``at_bound_`` says whether any dual coefficient reached C (then the margin was
soft somewhere). Several classes: libsvm's one against one, with its vote.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted, validate_data

from lincls.errors import check_choice, check_number
from lincls.learners._base import check_finite, sorted_classes
from lincls.learners.kernel import KERNELS, kernel_matrix


class MaxMarginSVC(ClassifierMixin, BaseEstimator):
    """SVC with a large C on a scaled precomputed kernel (module docstring).

    Parameters
    ----------
    kernel, degree, gamma : as ``KernelPerceptron``'s
    C : float > 0
        libsvm's box on the dual coefficients (large: the hard margin).

    Attributes
    ----------
    classes_, n_support_ (support vectors), kernel_scale_ (the divisor of K), at_bound_
    """

    no_bound_reason = "a batch maximal-margin classifier: no mistake bound"

    def __init__(self, kernel: str = "poly", degree: int = 1, gamma: float = 1.0, C: float = 1e6):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.C = C

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags

    def _check_params(self) -> None:
        check_choice("kernel", self.kernel, KERNELS)
        check_number("degree", self.degree, low=1, integer=True)
        check_number("gamma", self.gamma, low=0, low_open=True)
        check_number("C", self.C, low=0, low_open=True)

    def _gram(self, A, B) -> np.ndarray:
        return kernel_matrix(A, B, self.kernel, self.degree, self.gamma) / self.kernel_scale_

    def fit(self, X, y):
        """Fit libsvm on the scaled Gram matrix of X."""
        self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", ensure_all_finite=False)
        check_finite(X)
        sorted_classes(y, "at least two classes")  # libsvm's refusal is a traceback
        gram = kernel_matrix(X, X, self.kernel, self.degree, self.gamma)
        self.kernel_scale_ = float(max(np.max(np.diag(gram)), np.finfo(float).tiny))
        self._svc = SVC(kernel="precomputed", C=float(self.C)).fit(gram / self.kernel_scale_, y)
        self.classes_ = self._svc.classes_
        self._X = X
        self.n_support_ = int(self._svc.n_support_.sum())
        self.at_bound_ = bool(np.any(np.abs(self._svc.dual_coef_) >= float(self.C) * (1 - 1e-9)))
        return self

    def _test_gram(self, X) -> np.ndarray:
        check_is_fitted(self, "_svc")
        X = validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False)
        check_finite(X)
        return self._gram(X, self._X)

    def decision_function(self, X) -> np.ndarray:
        """libsvm's decision values (one against one)."""
        return self._svc.decision_function(self._test_gram(X))

    def predict(self, X) -> np.ndarray:
        """libsvm's prediction."""
        return self._svc.predict(self._test_gram(X))

    def test_measures(self, X, y) -> tuple[dict[str, float], dict[str, list[tuple[int, float]]]]:
        """What a run logs beside its accuracy: ``test_error.svm``, the support vectors and
        whether the margin was soft (``at_bound`` 1)."""
        error = float(np.mean(self.predict(X) != np.asarray(y)))
        metrics = {"test_error.svm": error, "support_vectors": float(self.n_support_)}
        metrics["at_bound"] = float(self.at_bound_)
        return metrics, {}
