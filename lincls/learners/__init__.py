"""The learners: scikit-learn estimators, each in its own module with its numba kernel."""

from lincls.learners.perceptron import Perceptron

__all__ = ["Perceptron"]
